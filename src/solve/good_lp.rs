//! `good_lp` backend: the LP expressed through the good_lp modelling layer, so that any solver it
//! wraps can be used. Slower to build than the direct backends (it goes through expressions),
//! which is why it is not the default; it is the independent route in the agreement tests.

use good_lp::solvers::{Solution as _, SolutionStatus, SolverModel};
use good_lp::{variable, Expression, ProblemVariables, Variable};

use super::{LpSolver, RawSolution, Status};
use crate::lp::Problem;
use crate::{Error, Result};

/// Which solver good_lp drives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
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
    pub fn preferred() -> Backend {
        #[cfg(feature = "highs")]
        return Backend::Highs;
        #[cfg(all(not(feature = "highs"), feature = "clarabel"))]
        return Backend::Clarabel;
        #[cfg(not(any(feature = "highs", feature = "clarabel")))]
        return Backend::Microlp;
    }

    fn name(self) -> &'static str {
        match self {
            #[cfg(feature = "highs")]
            Backend::Highs => "good-lp/highs",
            #[cfg(feature = "clarabel")]
            Backend::Clarabel => "good-lp/clarabel",
            Backend::Microlp => "good-lp/microlp",
        }
    }
}

/// The good_lp backend.
#[derive(Debug, Clone, Copy)]
pub struct GoodLpSolver {
    /// The solver good_lp drives.
    pub backend: Backend,
}

impl LpSolver for GoodLpSolver {
    fn name(&self) -> String {
        self.backend.name().into()
    }

    fn solve(&self, problem: &Problem) -> Result<RawSolution> {
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
                let sol = m.with_all(constraints).solve().map_err(resolution_error)?;
                let st = map_solution_status(sol.status());
                (x.iter().map(|&v| sol.value(v)).collect::<Vec<_>>(), st, format!("{:?}", sol.status()))
            }
            #[cfg(feature = "clarabel")]
            Backend::Clarabel => {
                let mut m = unsolved.using(good_lp::solvers::clarabel::clarabel);
                m.settings().tol_gap_abs(1e-10).tol_gap_rel(1e-10).tol_feas(1e-10).max_iter(400);
                let sol = m.with_all(constraints).solve().map_err(resolution_error)?;
                // good_lp reports Clarabel's AlmostSolved as Optimal: look at the inner status.
                let inner = sol.inner().status;
                let st = super::clarabel::map_status(inner);
                (x.iter().map(|&v| sol.value(v)).collect::<Vec<_>>(), st, format!("{inner:?}"))
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

fn map_solution_status(s: SolutionStatus) -> Status {
    match s {
        SolutionStatus::Optimal => Status::Optimal,
        SolutionStatus::TimeLimit => Status::TimeLimit,
        SolutionStatus::GapLimit => Status::NearOptimal,
    }
}

fn resolution_error(e: good_lp::ResolutionError) -> Error {
    Error::Solver(format!("good_lp: {e}"))
}
