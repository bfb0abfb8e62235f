//! Solving a model's LP: one route per model ([`Route::for_model`]), backends behind one trait,
//! and checks that never take a solver's word.
//!
//! Data flows one way: a backend (`highs`, `clarabel`, `good_lp`, or the exact `chain`
//! solver) returns its answer; `strategy` runs a backend's attempts (by `outputs` generation
//! where it applies, Clarabel's regularisation ladder, the active-set `polish`); `assess` judges each candidate once — residuals, δ spent,
//! the Lagrangian bound and the mechanism that would be released (`crate::certify`) — and
//! a solver's "optimal" becomes [`Status::NearOptimal`] when those checks do not confirm it.

pub(crate) mod anytime;
mod assess;
mod attempt;
mod backend;
pub(crate) mod chain;
mod choice;
#[cfg(feature = "clarabel")]
pub(crate) mod clarabel;
pub(crate) mod compact;
mod error;
pub(crate) mod estimate;
#[cfg(feature = "good_lp")]
mod good_lp;
#[cfg(feature = "highs")]
pub(crate) mod highs;
mod lp_route;
mod options;
pub(crate) mod outputs;
mod plan;
pub(crate) mod polish;
mod progress;
mod reference;
pub(crate) mod reprice;
mod route;
mod shared;
mod solution;
mod status;
pub(crate) mod strategy;
pub(crate) mod structured;
mod timing;

pub use assess::{Checks, CHECK_TOLERANCE};
pub use backend::Limits;
pub(crate) use backend::{LpSolver, RawSolution};
pub use chain::{solve_model_compact, ChainSolution, ChainTimings, DualCertificate};
pub use choice::SolverChoice;
pub use compact::GeometricRemap;
pub use error::{Library, SolveError};
pub use estimate::Estimate;
#[cfg(test)]
pub(crate) use lp_route::solve_lp;
pub use options::{SolveOptions, DEFAULT_TIME_BUDGET_SECONDS};
#[cfg(test)]
pub(crate) use plan::take_solves;
pub use plan::{estimate, SolvePlan};
pub use progress::{Event, Phase, Progress, ProgressSink};
pub use reference::{reference_risks, ReferenceRisks};
#[cfg(test)]
pub(crate) use route::lp_order;
pub use route::{Reason, Route};
pub use solution::{LpSize, Solution};
pub use status::Status;
pub use timing::{seconds_in_words, PhaseTime, PhaseTimes, Timings};

use crate::model::Model;
use error::Result;
use plan::{check_epsilons, check_gap, check_route_eps};

/// Solve a model for each ε in `epsilons` (the model's own list when `None`) along the route
/// its [`SolvePlan`] takes for `options.solver`.
pub fn solve_model(model: &Model, epsilons: Option<&[f64]>, options: impl Into<SolveOptions>) -> Result<Vec<Solution>> {
    solve_model_each(model, epsilons, options, &mut |_| {})
}

/// [`solve_model`], passing each ε's [`Solution`] to `each` as soon as it is solved (so a caller
/// can print rows or show progress while later ε are still being solved): the plan
/// ([`SolvePlan::checked`]), then its solve ([`SolvePlan::solve_each`]).
pub fn solve_model_each(
    model: &Model,
    epsilons: Option<&[f64]>,
    options: impl Into<SolveOptions>,
    each: &mut dyn FnMut(&Solution),
) -> Result<Vec<Solution>> {
    // Answer before working: the route and its price from the sizes alone, before any allocation.
    SolvePlan::checked(model, epsilons, options.into())?.solve_each(each)
}

/// The checks [`solve_model`] makes of its input before any work — the ε list, the route for
/// `options.solver`, every ε within what that route takes — for a caller that answers bad input
/// before printing anything.
pub fn check_solve(model: &Model, epsilons: &[f64], options: &SolveOptions) -> Result<()> {
    check_epsilons(epsilons)?;
    check_gap(options.gap)?;
    check_route_eps(&Route::for_model(model, options.solver)?, epsilons)
}
