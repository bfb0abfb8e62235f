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
pub(crate) mod outputs;
mod plan;
pub(crate) mod polish;
mod progress;
pub(crate) mod reprice;
mod route;
mod solution;
mod status;
pub(crate) mod strategy;
pub(crate) mod structured;
mod timing;

use std::sync::Arc;
use std::time::Instant;

pub use assess::{Checks, CHECK_TOLERANCE};
pub use backend::Limits;
pub(crate) use backend::{LpSolver, Producer, RawSolution};
pub use chain::{solve_model_compact, ChainSolution, ChainTimings, DualCertificate};
pub use choice::SolverChoice;
pub use compact::GeometricRemap;
pub use error::{Library, SolveError};
pub use estimate::{estimate, Estimate};
pub use plan::SolvePlan;
pub use progress::{Event, Phase, Progress, ProgressSink};
#[cfg(test)]
pub(crate) use route::lp_order;
pub use route::{Reason, Route};
pub use solution::{LpSize, Solution};
pub use status::Status;
pub use timing::{PhaseTime, PhaseTimes, Timings};

use crate::lp::{cost_matrix, MemoryBudget, Problem, SizeError};
use crate::model::{Model, Neighbours};
use error::Result;

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
    /// [`Status::TimeLimit`] and its gap).
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

#[cfg(test)]
thread_local! {
    /// The ε of every solve this thread began, in order (tests count solves by it).
    static SOLVES: std::cell::RefCell<Vec<f64>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// The ε of the solves this thread began since the last call, in order.
#[cfg(test)]
pub(crate) fn take_solves() -> Vec<f64> {
    SOLVES.with(|s| std::mem::take(&mut *s.borrow_mut()))
}

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

/// Every backend found a constrained model's LP infeasible: the model's input to fix (its
/// `[constraints]` at this ε and output grid), not a solver failure.
pub(super) fn infeasible_constraints(e: SolveError, model: &Model, eps: f64) -> SolveError {
    match e {
        SolveError::NoSolution { status: Status::Infeasible, .. } if !model.constraints().is_empty() => {
            crate::model::ModelError::invalid(
                "constraints",
                format!(
                    "{} cannot be met at ε = {eps} on this output grid (the LP is infeasible): widen output.grid, raise ε or drop a constraint",
                    model.constraints().names.label()
                ),
            )
            .into()
        }
        other => other,
    }
}

/// The check of a list of privacy levels given for a solve (finite, > 0, at least one), as an
/// argument error naming `--eps`; [`solve_model`] makes it first, a caller may make it earlier.
pub(crate) fn check_epsilons(eps: &[f64]) -> Result<()> {
    crate::model::validate_epsilons(eps, crate::guard::Parameter::Eps.spelled()).map_err(|e| match e.kind {
        crate::model::ModelErrorKind::Invalid { field, problem } => SolveError::argument(field, problem),
        _ => e.into(),
    })
}

/// The checks [`solve_model`] makes of its input before any work — the ε list, the route for
/// `options.solver`, every ε within what that route takes — for a caller that answers bad input
/// before printing anything.
pub fn check_solve(model: &Model, epsilons: &[f64], options: &SolveOptions) -> Result<()> {
    check_epsilons(epsilons)?;
    check_gap(options.gap)?;
    check_route_eps(&Route::for_model(model, options.solver)?, epsilons)
}

/// A target gap, when given, in (0, 1) (an argument error naming `gap`).
pub(crate) fn check_gap(gap: Option<f64>) -> Result<()> {
    match gap {
        Some(g) if !(g > 0.0 && g < 1.0) => {
            Err(SolveError::argument("gap", format!("must lie in (0, 1), a relative gap such as 1e-3 (got {g})")))
        }
        _ => Ok(()),
    }
}

/// On the LP and anytime routes, every ε within what the LP's coefficients represent faithfully.
pub(super) fn check_route_eps(route: &Route, epsilons: &[f64]) -> Result<()> {
    if let Route::Lp { .. } | Route::Anytime { .. } = route {
        epsilons.iter().try_for_each(|&e| crate::lp::check_lp_eps(e))?;
    }
    Ok(())
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
/// (O(|Y| + |Θ̃|)), else from one dense cost matrix (refused beyond `memory`);
/// [`SolvePlan::reference_risks`] reads its plan's matrix instead.
pub fn reference_risks(model: &Model, memory: MemoryBudget) -> Result<ReferenceRisks> {
    reference_risks_with(model, || cost_matrix(model, memory).map(Arc::new))
}

/// [`reference_risks`] on the cost matrix `cost` gives, asked for only where the moments do not
/// answer.
pub(super) fn reference_risks_with(
    model: &Model,
    cost: impl FnOnce() -> std::result::Result<Arc<ndarray::Array2<f64>>, SizeError>,
) -> Result<ReferenceRisks> {
    if let Some(moments) = chain::squared_moments(model) {
        let (prior_risk, non_private_risk) = moments.reference_risks();
        return Ok(ReferenceRisks { prior_risk, non_private_risk });
    }
    let cost = cost()?;
    Ok(ReferenceRisks {
        prior_risk: crate::lp::best_constant_risk(&cost),
        non_private_risk: crate::lp::non_private_risk(&cost),
    })
}

/// The least time a fallback backend gets after a near-optimal answer ([`solve_lp`]).
const FALLBACK_MIN_SECONDS: f64 = 60.0;

/// The peak bytes of `choice` on the whole of `problem` (its orbit LP where HiGHS has one), by
/// the estimate's own formula ([`estimate::lp_bytes`]).
fn whole_lp_bytes(problem: &Problem, choice: SolverChoice) -> u128 {
    let group = problem.symmetry.as_ref().map_or(1, |s| s.group_order as u128);
    let (n_obs, n_vars) = (problem.n_obs() as u128, problem.n_p() as u128);
    let n_dp = problem.n_rows() as u128 - n_obs;
    let on_graph = matches!(problem.neighbours, Neighbours::Graph { .. });
    let size =
        estimate::LpShape { n_obs, n_out: problem.n_outputs() as u128, n_vars, n_dp, nnz: problem.a.nnz() as u128 };
    estimate::backend_bytes(choice, &size, on_graph, group, problem.neighbours.edge_count() as u128)
}

/// Solve one LP with `backends` in order until one is confirmed optimal; otherwise keep the
/// usable answer with the smallest measured gap. `reason` (the route's) heads `solver_detail`.
///
/// Under a time limit (`options.limits.seconds`) the solve is anytime: when the limit stops every
/// backend before a usable answer, the best certified mechanism seen so far — a stopped
/// backend's point or an output-generation round, repaired and certified by our checks, else the
/// best constant release — is returned with status [`Status::TimeLimit`] and its measured gap.
pub(crate) fn solve_lp(
    problem: &Problem,
    backends: &[SolverChoice],
    reason: &str,
    options: &SolveOptions,
    assembly_seconds: f64,
) -> Result<Solution> {
    let start = Instant::now();
    let backends = &structured::order_for(problem.symmetry.is_some(), backends);
    let mut best: Option<assess::Judged> = None;
    let mut stopped: Option<assess::Judged> = None;
    // Each attempt with who made it, so the kept producer's own is left out of the detail.
    let mut tried: Vec<(Producer, String)> = Vec::new();
    let mut last_err: Option<SolveError> = None;
    for (index, &choice) in backends.iter().enumerate() {
        // A later backend is a fallback for an answer that is certified, only not to our
        // tolerance: it may take twice the time spent so far (at least a minute), not unbounded
        // time — Clarabel has no orbit LP, and on a symmetric poll's whole LP it runs for hours
        // where HiGHS's orbit LP answered near-optimal in seconds.
        let remaining = options.limits.remaining_after(start.elapsed());
        if remaining == Some(0.0) {
            tried.push((Producer::Solver(choice), format!("{choice}: not started, the time limit was reached")));
            break;
        }
        // A later backend is not started with less than a quarter of the time limit's share left
        // (or a second, where that is less): its setup alone (HiGHS's presolve, a first
        // factorisation) would outlast the time.
        let share = options.limits.seconds.unwrap_or(f64::INFINITY);
        if let Some(left) = remaining.filter(|&left| index > 0 && left < (0.25 * share).min(1.0)) {
            tried.push((
                Producer::Solver(choice),
                format!("{choice}: not started, only {left:.1} s of the time limit left"),
            ));
            break;
        }
        if index > 0 {
            // A fallback that would not fit the memory budget is not started: the answer in hand
            // stands, with its measured gap, or the next backend is tried (the route's price is
            // its first backend's).
            let needed = whole_lp_bytes(problem, choice);
            if needed > options.memory.in_bytes() as u128 {
                let size = crate::lp::SizeError {
                    origin: None,
                    needed_bytes: needed,
                    available_bytes: options.memory.in_bytes(),
                    fields: String::new().into(),
                    route: Some(choice.to_string().into()),
                };
                last_err.get_or_insert(SolveError::from(size));
                tried.push((
                    Producer::Solver(choice),
                    format!(
                        "{choice}: not started, its LP needs about {:.1} GiB, more than the {:.1} GiB memory budget",
                        needed as f64 / 2f64.powi(30),
                        options.memory.in_bytes() as f64 / 2f64.powi(30)
                    ),
                ));
                continue;
            }
        }
        let remaining = match &best {
            Some(_) => {
                let cap = (2.0 * start.elapsed().as_secs_f64()).max(FALLBACK_MIN_SECONDS);
                Some(remaining.map_or(cap, |r| r.min(cap)))
            }
            None => remaining,
        };
        let options = SolveOptions { limits: Limits { seconds: remaining, ..options.limits }, ..options.clone() };
        let attempt = options.progress.time(&choice.to_string());
        let attempted = attempt::run(problem, choice, &options);
        drop(attempt);
        match attempted {
            Ok(j) if j.raw.status == Status::TimeLimit => {
                tried.push((j.solver, format!("{}: {} ({})", j.solver, j.raw.status, j.raw.detail)));
                keep_certified(&mut stopped, j);
            }
            Ok(j) if !j.raw.status.has_solution() => {
                tried.push((j.solver, format!("{}: {} ({})", j.solver, j.raw.status, j.raw.detail)));
                last_err = Some(SolveError::NoSolution {
                    solver: choice,
                    eps: problem.eps,
                    status: j.raw.status,
                    detail: j.raw.detail,
                });
            }
            Ok(j) if j.status() == Status::Optimal => {
                best = Some(j);
                break;
            }
            Ok(j) => {
                tried.push((j.solver, format!("{}: {}", j.solver, j.status())));
                let gap = |x: &assess::Judged| x.assessment.checks.relative_gap.unwrap_or(f64::INFINITY);
                if best.as_ref().is_none_or(|b| gap(&j) < gap(b)) {
                    best = Some(j);
                }
            }
            Err(e) => {
                tried.push((Producer::Solver(choice), e.to_string()));
                last_err = Some(e);
            }
        }
    }
    if best.is_none() && options.limits.seconds.is_some() {
        // Anytime: the time limit stopped the solve; the fallbacks that need no solver are
        // always there: the constant release (cheap), and geometric noise with the Bayes remap
        // where it is expected to finish within the time left.
        options.progress.phase(Phase::Certifying);
        let mut floor = None;
        let left = options.limits.remaining_after(start.elapsed()).unwrap_or(0.0);
        let geometric_fits = 2.0 * outputs::initial_seconds(problem.n_obs(), problem.n_outputs()) <= left;
        for producer in [Producer::Constant, Producer::GeometricRemap] {
            if producer == Producer::GeometricRemap && !geometric_fits {
                tried.push((producer, format!("{producer}: not built, too slow for the time left ({left:.1} s)")));
                continue;
            }
            let _fallback = options.progress.time(&format!("time-limit fallback ({producer})"));
            let judged = strategy::assess(problem, fallback_release(problem, producer), producer);
            if producer == Producer::Constant {
                // The constant's bound (μ = 0: the non-private risk) holds for every candidate.
                floor = judged.assessment.checks.dual_bound;
            }
            keep_certified(&mut stopped, judged);
        }
        if let Some(kept) = stopped.as_mut() {
            // The constant's bound (μ = 0: the non-private risk) holds for every candidate.
            kept.assessment.raise_bound(floor);
        }
        best = stopped;
    }
    let Some(judged) = best else {
        return Err(last_err.unwrap_or(SolveError::NoBackend));
    };
    let mut detail = format!("{reason}; {}", judged.raw.detail);
    let others: Vec<&str> = tried.iter().filter(|(by, _)| *by != judged.solver).map(|(_, t)| t.as_str()).collect();
    if !others.is_empty() {
        detail = format!("{detail} (attempts: {})", others.join("; "));
    }
    Ok(Solution::from_judged(problem, judged, detail, start.elapsed().as_secs_f64(), assembly_seconds))
}

/// Keep in `kept` the candidate whose certified mechanism has the smaller objective (a candidate
/// without one is kept only in place of nothing certified).
fn keep_certified(kept: &mut Option<assess::Judged>, candidate: assess::Judged) {
    let certified = |j: &assess::Judged| j.assessment.checks.certified_objective.unwrap_or(f64::INFINITY);
    if kept.as_ref().is_none_or(|k| certified(&candidate) < certified(k)) {
        *kept = Some(candidate);
    }
}

/// An anytime fallback, needing no solver: the best constant release ([`Producer::Constant`]:
/// P\[k*, i\] = 1 for the output of least prior risk, 0-DP) or the geometric + remap mechanism
/// ([`Producer::GeometricRemap`], [`outputs::geometric_remap_point`]), with zero multipliers,
/// whose Lagrangian bound is the non-private risk: a mechanism for the repair to certify, stated
/// as [`Status::TimeLimit`].
fn fallback_release(problem: &Problem, producer: Producer) -> RawSolution {
    let (n_obs, n_out) = (problem.n_obs(), problem.n_outputs());
    let raw = |x: Vec<f64>, what: &str| RawSolution {
        x,
        dp_multipliers: Some(vec![0.0; problem.n_rows() - n_obs]),
        status: Status::TimeLimit,
        detail: format!("the time limit was reached before any solver's answer: {what}"),
    };
    if producer == Producer::GeometricRemap {
        return raw(outputs::geometric_remap_point(problem), "geometric noise at ε/2 and the Bayes remap");
    }
    let best = crate::lp::best_constant_output(&problem.cost);
    let mut constant = vec![0.0; problem.n_vars()];
    for i in 0..n_obs {
        constant[i * n_out + best] = 1.0;
    }
    raw(constant, "the best constant release")
}
