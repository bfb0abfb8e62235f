//! What is read off finished solves, above the solve itself: the smallest ε or K that meets a
//! target risk and the risk-vs-ε curve ([`plan_eps`], [`plan_trials`], [`risk_vs_eps`]), a
//! design's risk at every θ and its worst case ([`risk_profile`], [`robustness`]), and what
//! `solve` reports beside each solution, the one builder of the `solve --json` rows
//! ([`SolveSummary`]). Its failures are the solves' own ([`crate::solve::SolveError`]).

mod plan;
mod robust;
mod summary;

pub use plan::{
    log_spaced, plan_eps, plan_trials, risk_vs_eps, CurvePoint, Plan, TrialsPlan, PLAN_MAX_EPS, PLAN_MAX_TRIALS,
    PLAN_TARGET,
};
pub use robust::{
    risk_profile, robustness, robustness_warning, Robustness, MAX_PROFILE_WORK, WORST_CASE_FACTOR, WORST_CASE_TIE,
};
pub use summary::{RowSummary, SolveSummary};
