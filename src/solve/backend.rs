//! What every LP backend implements: translate the canonical [`Problem`] for one solver and map
//! its status. A backend returns the solver's answer and nothing more; judging it is
//! [`super::assess`]'s job.

use super::{SolveError, Status};
use crate::lp::Problem;

/// Limits a backend passes to its solver.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Limits {
    /// Iterations (interior-point iterations, or simplex iterations).
    pub iterations: Option<u32>,
    /// Wall-clock seconds.
    pub seconds: Option<f64>,
}

impl Limits {
    /// The time limit left after `spent` (0 when used up; `None` without a limit).
    pub(crate) fn remaining_after(&self, spent: std::time::Duration) -> Option<f64> {
        self.seconds.map(|s| (s - spent.as_secs_f64()).max(0.0))
    }
}

/// What a backend returns, in the canonical variable order and the scaled objective's units.
#[derive(Debug, Clone)]
pub(crate) struct RawSolution {
    /// The primal point (P in variable order).
    pub x: Vec<f64>,
    /// Multipliers μ ≥ 0 of the DP rows for the scaled objective, when the backend gives them.
    pub dp_multipliers: Option<Vec<f64>>,
    /// The backend's status, mapped.
    pub status: Status,
    /// The backend's own words about the outcome (e.g. `AlmostSolved`), for reports.
    pub detail: String,
}

/// A solver of the canonical UBaPP LP.
pub(crate) trait LpSolver {
    /// Name for reports, e.g. `highs-simplex`.
    fn name(&self) -> String;
    /// Solve (scaled objective c / scale).
    fn solve(&self, problem: &Problem) -> Result<RawSolution, SolveError>;
}
