//! The LP route: one LP solved with its backends in order until one is confirmed optimal
//! ([`solve_lp`]), a fallback backend only where it fits the time and memory left, the time
//! limit's fallbacks that need no solver, and an infeasible constrained LP read as the model's
//! input to fix ([`infeasible_constraints`]).

use std::time::Instant;

use super::backend::{Limits, Producer, RawSolution};
use super::choice::SolverChoice;
use super::error::{Result, SolveError};
use super::estimate::{backend_bytes, fallback_seconds, priced_out, whole_lp_seconds, LpShape};
use super::options::SolveOptions;
use super::progress::Phase;
use super::solution::Solution;
use super::status::Status;
use super::{assess, attempt, outputs, seconds_in_words, strategy, structured};
use crate::lp::Problem;
use crate::model::{Model, Neighbours};

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

/// The peak bytes of `choice` on the whole of `problem` (its orbit LP where HiGHS has one), by
/// the estimate's own formula ([`super::estimate::lp_bytes`]).
fn whole_lp_bytes(problem: &Problem, choice: SolverChoice) -> u128 {
    let group = problem.symmetry.as_ref().map_or(1, |s| s.group_order as u128);
    let on_graph = matches!(problem.neighbours, Neighbours::Graph { .. });
    backend_bytes(choice, &LpShape::of(problem), on_graph, group, problem.neighbours.edge_count() as u128)
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
        let remaining = options.limits.remaining_after(start.elapsed());
        // A later backend is a fallback for an answer that is certified, only not to our
        // tolerance: it may take twice the time spent so far (at least a minute), not unbounded
        // time — Clarabel has no orbit LP, and on a symmetric poll's whole LP it runs for hours
        // where HiGHS's orbit LP answered near-optimal in seconds.
        let cap = best.as_ref().map(|_| fallback_seconds(start.elapsed().as_secs_f64()));
        match not_started(problem, choice, index, remaining, cap, options) {
            Some(NotStarted::Stop(why)) => {
                tried.push((Producer::Solver(choice), why));
                break;
            }
            Some(NotStarted::Skip(why, e)) => {
                if let Some(e) = e {
                    last_err.get_or_insert(e);
                }
                tried.push((Producer::Solver(choice), why));
                continue;
            }
            None => {}
        }
        let remaining = match cap {
            Some(cap) => Some(remaining.map_or(cap, |r| r.min(cap))),
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
        // Anytime: the time limit stopped the solve.
        best = time_limit_fallbacks(problem, options, start, stopped, &mut tried);
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

/// Why a backend of the route is not started.
enum NotStarted {
    /// The time limit was reached, or too little of it is left for a later backend's setup: no
    /// backend after it starts either.
    Stop(String),
    /// A fallback whose LP would not fit the memory budget (with the refusal), or that is
    /// expected to take far longer than it may: the next may do better.
    Skip(String, Option<SolveError>),
}

/// Whether `choice`, the route's `index`-th backend, is not started with `remaining` seconds of
/// the time limit left (`None`: no limit) and `cap` seconds for a fallback after a near-optimal
/// answer (`None`: no answer yet), and why.
fn not_started(
    problem: &Problem,
    choice: SolverChoice,
    index: usize,
    remaining: Option<f64>,
    cap: Option<f64>,
    options: &SolveOptions,
) -> Option<NotStarted> {
    if remaining == Some(0.0) {
        return Some(NotStarted::Stop(format!("{choice}: not started, the time limit was reached")));
    }
    // A later backend is not started with less than a quarter of the time limit's share left
    // (or a second, where that is less): its setup alone (HiGHS's presolve, a first
    // factorisation) would outlast the time.
    let share = options.limits.seconds.unwrap_or(f64::INFINITY);
    if let Some(left) = remaining.filter(|&left| index > 0 && left < (0.25 * share).min(1.0)) {
        return Some(NotStarted::Stop(format!("{choice}: not started, only {left:.1} s of the time limit left")));
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
            let why = format!(
                "{choice}: not started, its LP needs about {:.1} GiB, more than the {:.1} GiB memory budget",
                needed as f64 / 2f64.powi(30),
                options.memory.in_bytes() as f64 / 2f64.powi(30)
            );
            return Some(NotStarted::Skip(why, Some(SolveError::from(size))));
        }
    }
    if let Some(cap) = cap.filter(|_| index > 0) {
        let expected = whole_lp_seconds(problem, choice);
        if priced_out(expected, cap) {
            let why = format!(
                "{choice}: not started, estimated at {} on this LP, far beyond the {} a fallback may take",
                seconds_in_words(expected),
                seconds_in_words(cap)
            );
            return Some(NotStarted::Skip(why, None));
        }
    }
    None
}

/// The time limit stopped every backend before a usable answer: the fallbacks that need no solver
/// are always there — the constant release (cheap), and geometric noise with the Bayes remap where
/// it is expected to finish within the time left — each certified by our checks; the best
/// certified of them and of `stopped` (the stopped backends' points) is kept, its bound raised to
/// the constant's. Each fallback not built is said in `tried`.
fn time_limit_fallbacks(
    problem: &Problem,
    options: &SolveOptions,
    start: Instant,
    mut stopped: Option<assess::Judged>,
    tried: &mut Vec<(Producer, String)>,
) -> Option<assess::Judged> {
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
    stopped
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

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::lp::{cost_matrix, MemoryBudget};
    use crate::solve::estimate::FALLBACK_ESTIMATE_MARGIN;
    use crate::tests::common::parse_model;

    /// A fallback after a near-optimal answer is skipped, with a sentence, only where its
    /// estimate is more than [`FALLBACK_ESTIMATE_MARGIN`] times the time it may take; the first
    /// backend and a route with no answer yet are never priced this way.
    #[test]
    fn a_fallback_estimated_far_beyond_its_time_is_not_started() {
        let model = parse_model(
            "name = \"m\"\nepsilon = [0.5]\n[parameter]\ngrid = { kind = \"simplex\", resolution = 4 }\nprior = { kind = \"dirichlet\", alpha = [1.0, 2.0, 3.0] }\n[observation]\nfamily = \"multinomial\"\ncategories = 3\nrecords = 6\n[output]\ngrid = \"parameter\"\n[loss]\nkind = \"squared-euclidean\"\n",
        );
        let cost = Arc::new(cost_matrix(&model, MemoryBudget::available()).unwrap());
        let problem = Problem::new(cost, model.family.neighbours(), 0.5);
        let options = SolveOptions::default();
        let choice = SolverChoice::HighsIpm;
        let expected = whole_lp_seconds(&problem, choice);
        assert!(expected > 0.0 && expected.is_finite(), "{expected}");
        let short = expected / (2.0 * FALLBACK_ESTIMATE_MARGIN);
        match not_started(&problem, choice, 1, None, Some(short), &options) {
            Some(NotStarted::Skip(why, None)) => {
                assert!(why.starts_with("highs-ipm: not started, estimated at"), "{why}");
            }
            _ => panic!("a fallback estimated at {expected} s with {short} s to take was started"),
        }
        let enough = expected / (0.5 * FALLBACK_ESTIMATE_MARGIN);
        assert!(not_started(&problem, choice, 1, None, Some(enough), &options).is_none());
        assert!(not_started(&problem, choice, 0, None, Some(short), &options).is_none());
        assert!(not_started(&problem, choice, 1, None, None, &options).is_none());
    }
}
