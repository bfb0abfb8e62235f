//! HiGHS backend (direct, through the `highs` crate): dual simplex or interior point.

use highs::{ColProblem, HighsModelStatus, Sense};

use super::backend::{Limits, LpSolver, RawSolution};
use super::progress::{Event, Progress};
use super::{Library, SolveError, SolverChoice, Status};
use crate::lp::Problem;

/// Which HiGHS algorithm to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum HighsAlgorithm {
    /// HiGHS decides (dual simplex for LPs of this kind).
    Choose,
    /// Dual simplex.
    Simplex,
    /// Interior point, followed by crossover to a vertex.
    Ipm,
}

impl HighsAlgorithm {
    fn option(self) -> &'static str {
        match self {
            HighsAlgorithm::Choose => "choose",
            HighsAlgorithm::Simplex => "simplex",
            HighsAlgorithm::Ipm => "ipm",
        }
    }
}

/// The HiGHS backend.
#[derive(Debug, Clone)]
pub(crate) struct HighsSolver {
    /// Algorithm.
    pub method: HighsAlgorithm,
    /// Iteration and time limits.
    pub limits: Limits,
    /// Where simplex and interior-point iterations are reported (HiGHS's interrupt callbacks,
    /// which never interrupt).
    pub progress: Progress,
}

/// Feasibility and optimality tolerances (HiGHS's tightest accepted values; our objective is
/// scaled so that the optimum is ≥ 1).
const TOLERANCE: f64 = 1e-10;

impl LpSolver for HighsSolver {
    fn name(&self) -> SolverChoice {
        match self.method {
            HighsAlgorithm::Choose => SolverChoice::Highs,
            HighsAlgorithm::Simplex => SolverChoice::HighsSimplex,
            HighsAlgorithm::Ipm => SolverChoice::HighsIpm,
        }
    }

    fn solve(&self, problem: &Problem) -> Result<RawSolution, SolveError> {
        if let Some(symmetry) = problem.symmetry.as_deref().filter(|_| problem.program.is_plain()) {
            // The orbit LP (crate::lp::Symmetry): |G| times smaller, lifted back exactly.
            let orbit = symmetry.orbit_lp(&problem.cost, &problem.neighbours, problem.eps, problem.scale);
            let n_rows = orbit.a.rows();
            let bounds = |r: usize| if r < orbit.n_eq { (1.0, 1.0) } else { (f64::NEG_INFINITY, 0.0) };
            let solved = self.run(problem.eps, &orbit.a, &orbit.costs, n_rows, bounds, |_| (0.0, f64::INFINITY))?;
            let mu_hat: Vec<f64> = solved.row_duals[orbit.n_eq..].iter().map(|d| -d).collect();
            let (vars, rows) = symmetry.reduced_size();
            return Ok(RawSolution {
                x: symmetry.lift_primal(&solved.columns),
                dp_multipliers: Some(symmetry.lift_multipliers(&mu_hat)),
                status: solved.status,
                detail: format!(
                    "{}; on the orbit LP of {} symmetries ({vars} variables × {rows} rows)",
                    solved.detail, symmetry.group_order
                ),
            });
        }
        let costs = problem.scaled_costs();
        let solved = self.run(
            problem.eps,
            &problem.a,
            &costs,
            problem.n_rows(),
            |r| problem.row_bounds(r),
            |j| problem.col_bounds(j),
        )?;
        let n_eq = problem.n_eq();
        let mu = solved.row_duals[n_eq..].iter().map(|d| -d).collect();
        Ok(RawSolution { x: solved.columns, dp_multipliers: Some(mu), status: solved.status, detail: solved.detail })
    }
}

/// What one HiGHS run returns.
struct HighsRun {
    columns: Vec<f64>,
    /// HiGHS row duals: ∂objective/∂rhs, ≤ 0 on binding ≤ rows of a minimisation.
    row_duals: Vec<f64>,
    status: Status,
    detail: String,
}

impl HighsSolver {
    /// Solve min cᵀx over the CSC matrix `a` with the given row and column bounds.
    fn run(
        &self,
        eps: f64,
        a: &sprs::CsMat<f64>,
        costs: &[f64],
        n_rows: usize,
        row_bounds: impl Fn(usize) -> (f64, f64),
        col_bounds: impl Fn(usize) -> (f64, f64),
    ) -> Result<HighsRun, SolveError> {
        // HiGHS's time limit starts after its setup (the model passed in, presolve's structures,
        // the simplex's first basis), which it never interrupts: a run whose setup alone would
        // outlast the time left is not started, and the limit HiGHS gets is what its setup leaves.
        let setup = setup_seconds(a.nnz(), self.method);
        let time_limit = match self.limits.seconds {
            Some(left) if setup > left => {
                return Err(SolveError::NoSolution {
                    solver: self.name(),
                    eps,
                    status: Status::TimeLimit,
                    detail: format!(
                        "not started: its setup alone (the LP passed in and presolved) would take about {setup:.1} s of the {left:.1} s left"
                    ),
                });
            }
            Some(left) => Some((left - setup).max(0.05)),
            None => None,
        };
        let mut pb = ColProblem::new();
        let rows: Vec<_> = (0..n_rows)
            .map(|r| {
                let (lo, hi) = row_bounds(r);
                pb.add_row(lo..=hi)
            })
            .collect();
        for (j, col) in a.outer_iterator().enumerate() {
            let (lo, hi) = col_bounds(j);
            let entries = col.iter().map(|(r, &v)| (rows[r], v));
            match (lo.is_finite(), hi.is_finite()) {
                (true, true) => pb.add_column(costs[j], lo..=hi, entries),
                (true, false) => pb.add_column(costs[j], lo.., entries),
                (false, true) => pb.add_column(costs[j], ..=hi, entries),
                (false, false) => pb.add_column(costs[j], f64::NEG_INFINITY..f64::INFINITY, entries),
            }
        }
        let mut model = pb
            .try_optimise(Sense::Minimise)
            .map_err(|e| SolveError::backend(Library::Highs, format!("rejected the LP: {e:?}")))?;
        let set = |m: &mut highs::Model, k: &str, v: &str| {
            m.try_set_option(k, v).map_err(|e| SolveError::backend(Library::Highs, format!("option {k} = {v}: {e:?}")))
        };
        set(&mut model, "solver", self.method.option())?;
        for key in ["primal_feasibility_tolerance", "dual_feasibility_tolerance", "ipm_optimality_tolerance"] {
            model
                .try_set_option(key, TOLERANCE)
                .map_err(|e| SolveError::backend(Library::Highs, format!("option {key}: {e:?}")))?;
        }
        if let Some(n) = self.limits.iterations {
            let n = n as i32;
            for key in ["simplex_iteration_limit", "ipm_iteration_limit"] {
                model
                    .try_set_option(key, n)
                    .map_err(|e| SolveError::backend(Library::Highs, format!("option {key}: {e:?}")))?;
            }
        }
        if let Some(t) = time_limit {
            model
                .try_set_option("time_limit", t)
                .map_err(|e| SolveError::backend(Library::Highs, format!("option time_limit: {e:?}")))?;
        }
        if self.progress.is_listening() {
            let progress: *const Progress = &self.progress;
            // SAFETY: `model` is a live HiGHS instance; the callback data points at
            // `self.progress`, which outlives the solve below (the callback is only called from
            // inside `try_solve`, on this thread), and `on_iteration` only reads through it.
            unsafe {
                let highs = model.as_mut_ptr();
                highs_sys::Highs_setCallback(highs, Some(on_iteration), progress as *mut std::ffi::c_void);
                highs_sys::Highs_startCallback(highs, highs_sys::kHighsCallbackSimplexInterrupt);
                highs_sys::Highs_startCallback(highs, highs_sys::kHighsCallbackIpmInterrupt);
            }
        }
        let solved = model.try_solve().map_err(|e| SolveError::backend(Library::Highs, format!("failed: {e:?}")))?;
        let hs = solved.status();
        let solution = solved.get_solution();
        Ok(HighsRun {
            columns: solution.columns().to_vec(),
            row_duals: solution.dual_rows().to_vec(),
            status: map_status(hs),
            detail: format!("{hs:?}"),
        })
    }
}

/// Seconds HiGHS's setup takes on an LP of `nnz` nonzeros before its time limit applies: the
/// model passed in, presolve's structures and (for the simplex) its first basis. Measured on the
/// multinomial d = 3, K = 100 whole LP (4.3 million nonzeros, load 3–4 on 2 cores): 10.7 s with
/// `choose` (dual simplex), 6.2 s with the interior point, past limits of 0.5–10 s; its orbit LP
/// (0.7 million) 0.7 s (docs/benchmarks.md).
pub(crate) fn setup_seconds(nnz: usize, method: HighsAlgorithm) -> f64 {
    let per_nonzero = if method == HighsAlgorithm::Ipm { 1.5e-6 } else { 2.5e-6 };
    per_nonzero * nnz as f64
}

/// HiGHS's interrupt callback: report the iteration count, never interrupt.
///
/// # Safety
/// Called by HiGHS with `data_out` valid for the call and `user` the `*const Progress` passed to
/// `Highs_setCallback` (see [`HighsSolver::run`]).
unsafe extern "C" fn on_iteration(
    kind: std::ffi::c_int,
    _message: *const std::ffi::c_char,
    data_out: *const highs_sys::HighsCallbackDataOut,
    _data_in: *mut highs_sys::HighsCallbackDataIn,
    user: *mut std::ffi::c_void,
) {
    if data_out.is_null() || user.is_null() {
        return;
    }
    // SAFETY: as documented above.
    let (progress, out) = unsafe { (&*(user as *const Progress), &*data_out) };
    let iteration = if kind == highs_sys::kHighsCallbackIpmInterrupt as std::ffi::c_int {
        out.ipm_iteration_count
    } else {
        out.simplex_iteration_count
    };
    // Checks inside an iteration (the interior point's linear solves, crossover) pass −1.
    if let Ok(iteration) = u64::try_from(iteration) {
        progress.report(Event::Iteration { solver: "highs", iteration });
    }
}

fn map_status(s: HighsModelStatus) -> Status {
    match s {
        HighsModelStatus::Optimal => Status::Optimal,
        HighsModelStatus::Infeasible => Status::Infeasible,
        HighsModelStatus::Unbounded | HighsModelStatus::UnboundedOrInfeasible => Status::Unbounded,
        HighsModelStatus::ReachedTimeLimit => Status::TimeLimit,
        HighsModelStatus::ReachedIterationLimit => Status::IterationLimit,
        HighsModelStatus::SolveError | HighsModelStatus::PresolveError | HighsModelStatus::PostsolveError => {
            Status::NumericalError
        }
        HighsModelStatus::NotSet
        | HighsModelStatus::LoadError
        | HighsModelStatus::ModelError
        | HighsModelStatus::ModelEmpty
        | HighsModelStatus::ObjectiveBound
        | HighsModelStatus::ObjectiveTarget
        | HighsModelStatus::Unknown
        | HighsModelStatus::ReachedSolutionLimit
        | HighsModelStatus::ReachedInterrupt
        | HighsModelStatus::ReachedMemoryLimit => Status::Failed,
        // The enum is #[non_exhaustive]: a status added by a future HiGHS is a failure until mapped.
        _ => Status::Failed,
    }
}
