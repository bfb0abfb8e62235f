//! What every LP backend implements: translate the canonical [`Problem`] for one solver and map
//! its status. A backend returns the solver's answer and nothing more; judging it is
//! [`super::assess`]'s job.

use std::fmt;

use super::{SolveError, SolverChoice, Status};
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

/// Who produced a candidate answer: a backend, named by the choice that runs it alone (what
/// `--solver` accepts), or one of the two releases a time limit falls back on, which need no
/// solver.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Producer {
    /// An LP backend or the chain solver.
    Solver(SolverChoice),
    /// The best constant release.
    Constant,
    /// Geometric noise at ε/2 followed by the Bayes remap.
    GeometricRemap,
}

impl fmt::Display for Producer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Producer::Solver(choice) => choice.fmt(f),
            Producer::Constant => f.write_str("constant"),
            Producer::GeometricRemap => f.write_str("geometric-remap"),
        }
    }
}

/// A solver of the canonical UBaPP LP.
pub(crate) trait LpSolver {
    /// The choice that runs exactly this backend, e.g. [`SolverChoice::HighsSimplex`] (its name is
    /// what reports show).
    fn name(&self) -> SolverChoice;
    /// Solve (scaled objective c / scale).
    fn solve(&self, problem: &Problem) -> Result<RawSolution, SolveError>;
}
