//! Solving a model's LP: one route per model ([`Route::for_model`]), backends behind one trait,
//! and checks that never take a solver's word.
//!
//! Data flows one way: a backend (`highs`, `clarabel`, `good_lp`, or the exact `chain`
//! solver) returns its answer; `strategy` runs a backend's attempts (by `outputs` generation
//! where it applies, Clarabel's regularisation ladder, the active-set `polish`); `assess` judges each candidate once — residuals, δ spent,
//! the Lagrangian bound and the mechanism that would be released (`crate::certify`) — and
//! a solver's "optimal" becomes [`Status::NearOptimal`] when those checks do not confirm it.

mod assess;
mod backend;
pub(crate) mod chain;
mod choice;
#[cfg(feature = "clarabel")]
pub(crate) mod clarabel;
mod error;
mod estimate;
#[cfg(feature = "good_lp")]
mod good_lp;
#[cfg(feature = "highs")]
mod highs;
pub(crate) mod outputs;
mod plan;
pub(crate) mod polish;
pub(crate) mod reprice;
mod robust;
mod solution;
mod status;
mod strategy;
mod summary;

use std::sync::Arc;
use std::time::Instant;

pub use assess::{Checks, CHECK_TOLERANCE, FEASIBILITY_TOLERANCE};
pub use backend::Limits;
pub(crate) use backend::{LpSolver, RawSolution};
pub use chain::{solve_model_compact, ChainSolution, ChainTimings, DualCertificate, GeometricRemap};
#[cfg(test)]
pub(crate) use choice::lp_order;
pub use choice::{Route, SolverChoice};
pub use error::SolveError;
pub use estimate::{estimate, Estimate};
pub use plan::{
    log_spaced, plan_eps, plan_trials, risk_vs_eps, CurvePoint, Plan, TrialsPlan, PLAN_MAX_EPS, PLAN_MAX_TRIALS,
};
pub use robust::{risk_profile, robustness, robustness_warning, Robustness, MAX_PROFILE_WORK, WORST_CASE_FACTOR};
pub use solution::{LpSize, Solution};
pub use status::Status;
pub use summary::{RowSummary, SolveSummary};

use crate::lp::{cost_matrix, MemoryBudget, Problem, Program, Symmetry};
use crate::model::{Model, Objective};
use crate::{Error, Result};

/// How to solve: the solver, the memory budget and limits.
#[derive(Debug, Clone, Copy)]
pub struct SolveOptions {
    /// Which solver (`auto` decides per model).
    pub solver: SolverChoice,
    /// Memory the solve may use; larger problems are refused before any allocation.
    pub memory: MemoryBudget,
    /// Iteration and time limits passed to each LP backend.
    pub limits: Limits,
    /// Polish unconfirmed interior-point and simplex answers on their active set.
    pub polish: bool,
    /// Solve the LP on the outputs the optimum uses and prove the others unused (output
    /// generation) where it applies; off: every LP whole.
    pub output_generation: bool,
}

impl Default for SolveOptions {
    fn default() -> Self {
        SolveOptions {
            solver: SolverChoice::Auto,
            memory: MemoryBudget::available(),
            limits: Limits::default(),
            polish: true,
            output_generation: true,
        }
    }
}

impl From<SolverChoice> for SolveOptions {
    fn from(solver: SolverChoice) -> Self {
        SolveOptions { solver, ..SolveOptions::default() }
    }
}

/// Solve a model for each ε in `epsilons` (the model's own list when `None`) along the route
/// [`Route::for_model`] picks for `options.solver`.
pub fn solve_model(model: &Model, epsilons: Option<&[f64]>, options: impl Into<SolveOptions>) -> Result<Vec<Solution>> {
    solve_model_each(model, epsilons, options, &mut |_| {})
}

/// [`solve_model`], passing each ε's [`Solution`] to `each` as soon as it is solved (so a caller
/// can print rows or show progress while later ε are still being solved).
pub fn solve_model_each(
    model: &Model,
    epsilons: Option<&[f64]>,
    options: impl Into<SolveOptions>,
    each: &mut dyn FnMut(&Solution),
) -> Result<Vec<Solution>> {
    let options = options.into();
    let eps_list = epsilons.unwrap_or(&model.epsilons);
    crate::model::validate_epsilons(eps_list, "--eps").map_err(|e| match e.kind {
        crate::model::ModelErrorKind::Invalid { field, problem } => Error::argument(field, problem),
        _ => Error::Model(e),
    })?;
    let route = Route::for_model(model, options.solver)?;
    // Answer before working: priced from the sizes alone, before any allocation.
    let planned = estimate::estimate_route(model, &route, &options);
    if !planned.fits {
        return Err(Error::TooLarge(planned.size_error()));
    }

    let fields = || crate::lp::size_fields(model);
    let mut run = || -> Result<Vec<Solution>> {
        match &route {
            Route::Chain { fallback, reason } => chain::solve_model(model, eps_list, fallback, reason, &options, each),
            Route::Lp { backends, reason } => {
                let start = Instant::now();
                let cost = Arc::new(cost_matrix(model, options.memory)?);
                if cost.iter().any(|c| !c.is_finite()) {
                    let fields = match model.spec.parameter.grid {
                        crate::model::spec::GridSpec::Explicit { .. } => "parameter.grid, output.grid",
                        _ => "parameter.lower, parameter.upper",
                    };
                    return Err(SolveError::NonFiniteCosts { fields: fields.to_string() }.into());
                }
                if model.objective == Objective::Minimax {
                    let (n_obs, n_out) = cost.dim();
                    options.memory.check_dense(&[(model.theta.len(), n_obs * n_out)], 0)?;
                }
                let program = Program::for_model(model);
                let neighbours = model.family.neighbours();
                // Symmetry pays only on the plain program (the δ and minimax rows are not reduced), and
                // only HiGHS solves the orbit LP: no search on a route without it.
                let highs = backends
                    .iter()
                    .any(|c| matches!(c, SolverChoice::Highs | SolverChoice::HighsSimplex | SolverChoice::HighsIpm));
                let symmetry = (highs && program.is_plain()).then(|| {
                    Symmetry::find(&cost, &model.family.observations(), &model.outputs, &neighbours).map(Arc::new)
                });
                let cost_seconds = start.elapsed().as_secs_f64();
                eps_list
                    .iter()
                    .map(|&eps| {
                        let t = Instant::now();
                        let mut problem = Problem::try_with_program(
                            cost.clone(),
                            neighbours.clone(),
                            eps,
                            program.clone(),
                            options.memory,
                        )?;
                        problem.symmetry = symmetry.clone().flatten();
                        let assembly = cost_seconds + t.elapsed().as_secs_f64();
                        let s = solve_lp(&problem, backends, reason, &options, assembly)?;
                        each(&s);
                        Ok(s)
                    })
                    .collect()
            }
        }
    };
    run().map_err(|e| match e {
        Error::TooLarge(size) => Error::TooLarge(size.with_fields(fields())),
        other => other,
    })
}

/// The two limits every optimum lies between, on the model's output grid: ε → 0 (the best
/// constant estimator, the prior alone) and ε → ∞ (the non-private Bayes estimator).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct ReferenceRisks {
    /// Bayes risk of the best constant release: what any ε-DP mechanism approaches as ε → 0.
    pub prior_risk: f64,
    /// Bayes risk of the best non-private estimator on the output grid: the ε → ∞ limit.
    pub non_private_risk: f64,
}

/// [`ReferenceRisks`] of a model: from the squared-loss moments where the chain solver has them
/// (O(|Y| + |Θ̃|)), else from one dense cost matrix (refused beyond `memory`).
pub fn reference_risks(model: &Model, memory: MemoryBudget) -> Result<ReferenceRisks> {
    if let Some(moments) = chain::squared_moments(model) {
        let (prior_risk, non_private_risk) = moments.reference_risks();
        return Ok(ReferenceRisks { prior_risk, non_private_risk });
    }
    let cost = cost_matrix(model, memory)?;
    Ok(ReferenceRisks {
        prior_risk: crate::lp::best_constant_risk(&cost),
        non_private_risk: crate::lp::non_private_risk(&cost),
    })
}

/// Solve one LP with `backends` in order until one is confirmed optimal; otherwise keep the
/// usable answer with the smallest measured gap. `reason` (the route's) heads `solver_detail`.
/// The least time a fallback backend gets after a near-optimal answer ([`solve_lp`]).
const FALLBACK_MIN_SECONDS: f64 = 60.0;

pub(crate) fn solve_lp(
    problem: &Problem,
    backends: &[SolverChoice],
    reason: &str,
    options: &SolveOptions,
    assembly_seconds: f64,
) -> Result<Solution> {
    let start = Instant::now();
    let mut best: Option<strategy::Judged> = None;
    let mut tried = Vec::new();
    let mut last_err: Option<Error> = None;
    for &choice in backends {
        // A later backend is a fallback for an answer that is certified, only not to our
        // tolerance: it may take twice the time spent so far (at least a minute), not unbounded
        // time — Clarabel has no orbit LP, and on a symmetric poll's whole LP it runs for hours
        // where HiGHS's orbit LP answered near-optimal in seconds.
        let fallback_limits = best.as_ref().map(|_| {
            let cap = (2.0 * start.elapsed().as_secs_f64()).max(FALLBACK_MIN_SECONDS);
            Limits {
                seconds: Some(options.limits.remaining_after(start.elapsed()).map_or(cap, |r| r.min(cap))),
                ..options.limits
            }
        });
        let bounded;
        let options = match fallback_limits {
            Some(limits) => {
                bounded = SolveOptions { limits, ..options.clone() };
                &bounded
            }
            None => options,
        };
        match strategy::run(problem, choice, options) {
            Ok(j) if !j.raw.status.has_solution() => {
                tried.push(format!("{}: {} ({})", j.solver, j.raw.status, j.raw.detail));
                last_err = Some(
                    SolveError::NoSolution {
                        solver: j.solver,
                        eps: problem.eps,
                        status: j.raw.status,
                        detail: j.raw.detail,
                    }
                    .into(),
                );
            }
            Ok(j) if j.status() == Status::Optimal => {
                best = Some(j);
                break;
            }
            Ok(j) => {
                tried.push(format!("{}: {}", j.solver, j.status()));
                let gap = |x: &strategy::Judged| x.assessment.checks.relative_gap.unwrap_or(f64::INFINITY);
                if best.as_ref().is_none_or(|b| gap(&j) < gap(b)) {
                    best = Some(j);
                }
            }
            Err(e) => {
                tried.push(e.to_string());
                last_err = Some(e.into());
            }
        }
    }
    let Some(judged) = best else {
        return Err(last_err.unwrap_or(Error::Solve(SolveError::NoBackend)));
    };
    let mut detail = format!("{reason}; {}", judged.raw.detail);
    let kept = judged.solver.clone();
    let others: Vec<&String> = tried.iter().filter(|t| !t.starts_with(&format!("{kept}: "))).collect();
    if !others.is_empty() {
        detail = format!("{detail} (attempts: {})", others.iter().map(|s| s.as_str()).collect::<Vec<_>>().join("; "));
    }
    Ok(Solution::from_judged(problem, judged, detail, start.elapsed().as_secs_f64(), assembly_seconds))
}
