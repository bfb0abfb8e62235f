//! The outcome of a solve, from our point of view.

use std::fmt;

use serde::{Deserialize, Serialize};

/// Outcome of a solve, from our point of view (never "optimal" on "almost").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    /// Solved to the solver's full tolerances, and our own checks agree.
    Optimal,
    /// A solution of reduced accuracy (the solver said "almost", or our checks found a gap or
    /// violation larger than the stated tolerances).
    NearOptimal,
    /// The LP is infeasible (cannot happen for a valid UBaPP model; reported, not hidden).
    Infeasible,
    /// The LP is unbounded (likewise).
    Unbounded,
    /// A time limit stopped the solver.
    TimeLimit,
    /// The anytime route stopped with a certified mechanism and a proven lower bound whose
    /// relative gap is above the optimal tolerance (the gap is in the checks).
    CertifiedGap,
    /// An iteration limit stopped the solver.
    IterationLimit,
    /// The solver gave up on numerical grounds.
    NumericalError,
    /// Any other failure.
    Failed,
}

impl Status {
    /// True when a usable solution came back.
    pub fn has_solution(self) -> bool {
        matches!(self, Status::Optimal | Status::NearOptimal | Status::CertifiedGap)
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = match self {
            Status::Optimal => "optimal",
            Status::NearOptimal => "near-optimal",
            Status::Infeasible => "infeasible",
            Status::Unbounded => "unbounded",
            Status::TimeLimit => "time-limit",
            Status::CertifiedGap => "certified-gap",
            Status::IterationLimit => "iteration-limit",
            Status::NumericalError => "numerical-error",
            Status::Failed => "failed",
        };
        f.write_str(s)
    }
}
