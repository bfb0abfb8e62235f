//! `good_lp` backend: the LP expressed through the good_lp modelling layer, so that any solver it
//! wraps can be used. Slower to build than the direct backends (it goes through expressions),
//! which is why it is not the default; it is the independent route in the agreement tests.

use good_lp::solvers::{Solution as _, SolutionStatus, SolverModel};
use good_lp::{variable, Expression, ProblemVariables, Variable};

use super::backend::{Limits, LpSolver, RawSolution};
use super::{Library, SolveError, SolverChoice, Status};
use crate::lp::Problem;

/// Which solver good_lp drives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Backend {
    /// HiGHS through good_lp.
    #[cfg(feature = "highs")]
    Highs,
    /// Clarabel through good_lp.
    #[cfg(feature = "clarabel")]
    Clarabel,
    /// microlp (pure-Rust simplex, always available with this feature).
    Microlp,
}

impl Backend {
    /// HiGHS if compiled in, else Clarabel, else microlp.
    pub(super) fn preferred() -> Backend {
        #[cfg(feature = "highs")]
        return Backend::Highs;
        #[cfg(all(not(feature = "highs"), feature = "clarabel"))]
        return Backend::Clarabel;
        #[cfg(not(any(feature = "highs", feature = "clarabel")))]
        return Backend::Microlp;
    }

    /// The choice that runs good_lp with exactly this backend.
    fn choice(self) -> SolverChoice {
        match self {
            #[cfg(feature = "highs")]
            Backend::Highs => SolverChoice::GoodLpHighs,
            #[cfg(feature = "clarabel")]
            Backend::Clarabel => SolverChoice::GoodLpClarabel,
            Backend::Microlp => SolverChoice::GoodLpMicrolp,
        }
    }
}

/// The good_lp backend.
#[derive(Debug, Clone, Copy)]
pub(crate) struct GoodLpSolver {
    /// The solver good_lp drives.
    pub backend: Backend,
    /// Iteration and time limits (HiGHS and Clarabel; microlp has none).
    pub limits: Limits,
}

impl LpSolver for GoodLpSolver {
    fn name(&self) -> SolverChoice {
        self.backend.choice()
    }

    fn solve(&self, problem: &Problem) -> Result<RawSolution, SolveError> {
        // The modelling layer's expressions and the solver's setup come before its time limit
        // applies: a run whose setup alone would outlast the time left is not started, and the
        // solver gets what the setup leaves.
        let setup = self.setup_seconds(problem);
        let seconds = match self.limits.seconds {
            Some(left) if setup > left => {
                return Err(SolveError::NoSolution {
                    solver: self.name(),
                    eps: problem.eps,
                    status: Status::TimeLimit,
                    detail: format!(
                        "not started: building the model and the solver's first factorisation would take about {setup:.1} s of the {left:.1} s left"
                    ),
                });
            }
            Some(left) => Some((left - setup).max(0.05)),
            None => None,
        };
        let limits = Limits { seconds, ..self.limits };
        let mut vars = ProblemVariables::new();
        let x: Vec<Variable> = (0..problem.n_vars())
            .map(|j| {
                let (lo, hi) = problem.col_bounds(j);
                let mut v = variable();
                if lo.is_finite() {
                    v = v.min(lo);
                }
                if hi.is_finite() {
                    v = v.max(hi);
                }
                vars.add(v)
            })
            .collect();
        let costs = problem.scaled_costs();
        let mut objective = Expression::with_capacity(x.len());
        for (&v, &c) in x.iter().zip(&costs) {
            objective.add_mul(c, v);
        }
        let csr = problem.a.to_csr();
        let constraints: Vec<_> = csr
            .outer_iterator()
            .enumerate()
            .map(|(r, row)| {
                let mut e = Expression::with_capacity(row.nnz());
                for (j, &v) in row.iter() {
                    e.add_mul(v, x[j]);
                }
                let (lo, hi) = problem.row_bounds(r);
                if lo == hi {
                    e.eq(hi)
                } else {
                    debug_assert!(lo == f64::NEG_INFINITY, "rows are equalities or ≤ rows");
                    e.leq(hi)
                }
            })
            .collect();
        let unsolved = vars.minimise(objective);
        let (values, status, detail) = match self.backend {
            #[cfg(feature = "highs")]
            Backend::Highs => {
                let mut m = unsolved.using(good_lp::solvers::highs::highs);
                for key in ["primal_feasibility_tolerance", "dual_feasibility_tolerance"] {
                    m = m.set_option(key, 1e-10);
                }
                if let Some(n) = limits.iterations {
                    m = m.set_option("simplex_iteration_limit", n as i32).set_option("ipm_iteration_limit", n as i32);
                }
                if let Some(t) = limits.seconds {
                    m = m.set_option("time_limit", t);
                }
                let sol = m.with_all(constraints).solve().map_err(resolution_error)?;
                let st = map_solution_status(sol.status());
                (x.iter().map(|&v| sol.value(v)).collect::<Vec<_>>(), st, format!("{:?}", sol.status()))
            }
            #[cfg(feature = "clarabel")]
            Backend::Clarabel => {
                let mut m = unsolved.using(good_lp::solvers::clarabel::clarabel);
                m.settings()
                    .tol_gap_abs(1e-10)
                    .tol_gap_rel(1e-10)
                    .tol_feas(1e-10)
                    .max_iter(limits.iterations.unwrap_or(400))
                    .time_limit(limits.seconds.unwrap_or(f64::INFINITY));
                let sol = m.with_all(constraints).solve().map_err(resolution_error)?;
                // good_lp reports Clarabel's AlmostSolved as Optimal: look at the inner status.
                let inner = sol.inner().status;
                let st = super::clarabel::map_status(inner);
                (x.iter().map(|&v| sol.value(v)).collect::<Vec<_>>(), st, format!("{inner:?}"))
            }
            // (What the memory budget has to spare is no limit microlp needs to honour.)
            Backend::Microlp if self.limits.seconds.is_some() || self.limits.iterations.is_some() => {
                return Err(SolveError::LimitUnsupported { solver: self.name().to_string() });
            }
            Backend::Microlp => {
                let sol = unsolved
                    .using(good_lp::solvers::microlp::microlp)
                    .with_all(constraints)
                    .solve()
                    .map_err(resolution_error)?;
                let st = map_solution_status(sol.status());
                (x.iter().map(|&v| sol.value(v)).collect::<Vec<_>>(), st, format!("{:?}", sol.status()))
            }
        };
        Ok(RawSolution { x: values, dp_multipliers: None, status, detail })
    }
}

impl GoodLpSolver {
    /// Seconds before the solver's own time limit applies: the expressions built (about a
    /// microsecond a nonzero, twice HiGHS's own setup rate), then HiGHS's setup
    /// ([`super::highs::setup_seconds`]) or Clarabel's first iteration
    /// (`clarabel::first_iteration_seconds`). Measured: good-lp-clarabel on the
    /// multinomial d = 3, K = 40 ran 204 s past a 5 s limit; good-lp-highs on K = 100, 8.7 s.
    fn setup_seconds(&self, problem: &Problem) -> f64 {
        let nnz = problem.a.nnz();
        let building = 1e-6 * nnz as f64;
        building
            + match self.backend {
                #[cfg(feature = "highs")]
                Backend::Highs => super::highs::setup_seconds(nnz, super::highs::HighsAlgorithm::Choose),
                #[cfg(feature = "clarabel")]
                Backend::Clarabel => super::clarabel::first_iteration_seconds(problem),
                Backend::Microlp => 0.0,
            }
    }
}

fn map_solution_status(s: SolutionStatus) -> Status {
    match s {
        SolutionStatus::Optimal => Status::Optimal,
        SolutionStatus::TimeLimit => Status::TimeLimit,
        SolutionStatus::GapLimit => Status::NearOptimal,
    }
}

fn resolution_error(e: good_lp::ResolutionError) -> SolveError {
    SolveError::backend(Library::GoodLp, e)
}
