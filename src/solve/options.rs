//! How to solve: the caller's options (the solver, the memory budget, limits, where progress goes,
//! the target gap) and the time a solve may take when the caller sets none. Data that every route
//! reads, below them all.

use super::backend::Limits;
use super::choice::SolverChoice;
use super::progress::Progress;
use crate::lp::MemoryBudget;

/// The time a solve may take when the caller sets no limit (seconds): `auto` takes the anytime
/// route where the exact route's estimate exceeds it, the anytime route stops by it, and the
/// command line refuses an exact solve estimated above it.
pub const DEFAULT_TIME_BUDGET_SECONDS: f64 = 600.0;

/// How to solve: the solver, the memory budget, limits and where progress goes.
#[derive(Debug, Clone)]
pub struct SolveOptions {
    /// Which solver (`auto` decides per model).
    pub solver: SolverChoice,
    /// Memory the solve may use; larger problems are refused before any allocation.
    pub memory: MemoryBudget,
    /// Iteration limit of each LP backend, and the wall-clock seconds of the whole solve (shared
    /// among the ε; when it runs out, each ε keeps its best certified mechanism so far, with status
    /// [`Status::TimeLimit`](super::Status::TimeLimit) and its gap).
    pub limits: Limits,
    /// Polish unconfirmed interior-point and simplex answers on their active set.
    pub polish: bool,
    /// Solve the LP on the outputs the optimum uses and prove the others unused (output
    /// generation) where it applies; off: every LP whole.
    pub output_generation: bool,
    /// Where the route and the backends report progress (nowhere by default).
    pub progress: Progress,
    /// The certified relative gap (U − L)/U at which the anytime route stops (in (0, 1);
    /// `None`: 1e-3). The exact routes solve to their own tolerances.
    pub gap: Option<f64>,
}

impl Default for SolveOptions {
    fn default() -> Self {
        SolveOptions {
            solver: SolverChoice::Auto,
            memory: MemoryBudget::for_solve(),
            limits: Limits::default(),
            polish: true,
            output_generation: true,
            progress: Progress::none(),
            gap: None,
        }
    }
}

impl From<SolverChoice> for SolveOptions {
    fn from(solver: SolverChoice) -> Self {
        SolveOptions { solver, ..SolveOptions::default() }
    }
}
