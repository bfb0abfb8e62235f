//! How a backend is run on one whole LP: its attempts (Clarabel's regularisation ladder, the
//! active-set polish of an unconfirmed answer within a time budget), each candidate judged once by
//! [`Assessment::of`], the best-ranked kept. Output generation ([`super::outputs`]) runs this on
//! its restricted LPs; [`super::attempt`] decides between the two.

use std::time::{Duration, Instant};

use super::assess::{Assessment, Judged, CHECK_TOLERANCE};
use super::backend::{Limits, LpSolver, Producer, RawSolution};
use super::progress::Progress;
use super::{polish, reprice, SolveError, SolverChoice, Status};
use crate::lp::Problem;

/// Clarabel's static regularisation ladder: tried in order until an attempt is confirmed.
#[cfg(feature = "clarabel")]
pub(crate) const CLARABEL_REGULARISATION: [f64; 3] = [1e-13, 1e-10, 1e-8];

/// The ladder on neighbour relations other than the chain, strongest first: on the clipped-Poisson
/// band the weak settings end in numerical trouble (1e-13: NumericalError after 18 iterations;
/// 1e-10: AlmostSolved after 41, gap 2.8e-6) before 1e-8 solves it (60 iterations, certified gap
/// 6.5e-9), so starting there saves two interior points.
#[cfg(feature = "clarabel")]
pub(crate) const CLARABEL_REGULARISATION_GRAPH: [f64; 3] = [1e-8, 1e-10, 1e-13];

/// The backend of an LP choice (not `Auto`), reporting its iterations to `progress` where the
/// solver offers a callback.
pub(crate) fn lp_solver(
    choice: SolverChoice,
    limits: Limits,
    progress: &Progress,
) -> Result<Box<dyn LpSolver>, SolveError> {
    SolveError::check_available(choice)?;
    #[allow(unreachable_code, unused_variables)]
    let backend: Box<dyn LpSolver> = match choice {
        SolverChoice::Auto => {
            return Err(SolveError::NotApplicable {
                choice,
                requirement: "is a route, not a backend (Route::for_model resolves it)",
                model: "this LP".into(),
            })
        }
        SolverChoice::Chain => Box::new(super::chain::ChainSolver),
        SolverChoice::Anytime => {
            return Err(SolveError::NotApplicable {
                choice,
                requirement: "is a route of its own, not an LP backend",
                model: "this LP".into(),
            })
        }
        SolverChoice::BlockIpm => Box::new(super::structured::BlockIpmSolver { limits, progress: progress.clone() }),
        #[cfg(feature = "highs")]
        SolverChoice::Highs => Box::new(super::highs::HighsSolver {
            method: super::highs::HighsAlgorithm::Choose,
            limits,
            progress: progress.clone(),
        }),
        #[cfg(feature = "highs")]
        SolverChoice::HighsSimplex => Box::new(super::highs::HighsSolver {
            method: super::highs::HighsAlgorithm::Simplex,
            limits,
            progress: progress.clone(),
        }),
        #[cfg(feature = "highs")]
        SolverChoice::HighsIpm => Box::new(super::highs::HighsSolver {
            method: super::highs::HighsAlgorithm::Ipm,
            limits,
            progress: progress.clone(),
        }),
        #[cfg(feature = "clarabel")]
        SolverChoice::Clarabel => Box::new(super::clarabel::ClarabelSolver {
            progress: progress.clone(),
            ..super::clarabel::ClarabelSolver::with_limits(limits)
        }),
        #[cfg(feature = "good_lp")]
        SolverChoice::GoodLp => {
            Box::new(super::good_lp::GoodLpSolver { backend: super::good_lp::Backend::preferred(), limits })
        }
        #[cfg(all(feature = "good_lp", feature = "highs"))]
        SolverChoice::GoodLpHighs => {
            Box::new(super::good_lp::GoodLpSolver { backend: super::good_lp::Backend::Highs, limits })
        }
        #[cfg(all(feature = "good_lp", feature = "clarabel"))]
        SolverChoice::GoodLpClarabel => {
            Box::new(super::good_lp::GoodLpSolver { backend: super::good_lp::Backend::Clarabel, limits })
        }
        #[cfg(feature = "good_lp")]
        SolverChoice::GoodLpMicrolp => {
            Box::new(super::good_lp::GoodLpSolver { backend: super::good_lp::Backend::Microlp, limits })
        }
        #[allow(unreachable_patterns)]
        other => return Err(SolveError::NotCompiled { choice: other, feature: "?" }),
    };
    Ok(backend)
}

/// Judge a backend's answer with no polish.
pub(crate) fn assess(problem: &Problem, raw: RawSolution, solver: Producer) -> Judged {
    judge(problem, raw, solver, Repair::None, CHECK_TOLERANCE, &Progress::none())
}

/// Run `choice`'s backend on the whole of `problem` with its attempts and the polish (`polish`
/// off: the backend's answers only), the backend reporting its iterations to `progress`.
pub(crate) fn run_whole(
    problem: &Problem,
    choice: SolverChoice,
    limits: Limits,
    polish: bool,
    progress: &Progress,
) -> Result<Judged, SolveError> {
    match choice {
        #[cfg(feature = "clarabel")]
        SolverChoice::Clarabel => {
            let needed = super::clarabel::first_iteration_seconds(problem);
            if let Some(left) = limits.seconds.filter(|&left| needed > left) {
                // Clarabel checks its time limit between iterations only, and one factorisation of
                // a graph's KKT system can outlast the limit many times over.
                return Err(SolveError::NoSolution {
                    solver: SolverChoice::Clarabel,
                    eps: problem.eps,
                    status: Status::TimeLimit,
                    detail: format!(
                        "not started: its first iteration alone would take about {needed:.0} s of the {left:.1} s left"
                    ),
                });
            }
            let mut best: Option<Judged> = None;
            let mut attempts = Vec::new();
            let ladder =
                if problem.neighbours.is_chain() { CLARABEL_REGULARISATION } else { CLARABEL_REGULARISATION_GRAPH };
            // On the chain the polish reaches an exact vertex and is worth it on any answer above
            // GOOD_ENOUGH_GAP; off the chain it often cannot finish (module docs of `polish`), so
            // it is spent only on answers our checks do not confirm.
            let polish_above = if problem.neighbours.is_chain() { polish::GOOD_ENOUGH_GAP } else { CHECK_TOLERANCE };
            let ladder_started = Instant::now();
            for reg in ladder {
                // A time limit covers the whole ladder.
                let limits = Limits { seconds: limits.remaining_after(ladder_started.elapsed()), ..limits };
                if best.is_some() && limits.seconds == Some(0.0) {
                    break;
                }
                let backend = super::clarabel::ClarabelSolver {
                    static_regularization: reg,
                    progress: progress.clone(),
                    ..super::clarabel::ClarabelSolver::with_limits(limits)
                };
                let started = Instant::now();
                let raw = {
                    let _iterations = progress.time("iterations");
                    LpSolver::solve(&backend, problem)?
                };
                let budget = polish_budget(SolverChoice::Clarabel, started.elapsed(), limits);
                let repair = if polish { Repair::RepriceAndPolish(budget) } else { Repair::None };
                let judged =
                    judge(problem, raw, Producer::Solver(SolverChoice::Clarabel), repair, polish_above, progress);
                let gap = judged.assessment.checks.relative_gap.unwrap_or(f64::INFINITY);
                attempts.push(format!("regularisation {reg:e}: {}, gap {gap:.1e}", judged.raw.detail));
                let done = (judged.assessment.confirmed && judged.raw.status == Status::Optimal)
                    || judged.raw.status == Status::TimeLimit;
                if best.as_ref().is_none_or(|b| judged.assessment.rank() < b.assessment.rank()) {
                    best = Some(judged);
                }
                if done {
                    break;
                }
            }
            let mut best = best.expect("the ladder has at least one step");
            if attempts.len() > 1 {
                best.raw.detail = format!("{} (attempts: {})", best.raw.detail, attempts.join("; "));
            }
            Ok(best)
        }
        SolverChoice::HighsIpm if polish => {
            let backend = lp_solver(choice, limits, progress)?;
            let started = Instant::now();
            let raw = {
                let _iterations = progress.time("iterations");
                backend.solve(problem)?
            };
            let budget = polish_budget(choice, started.elapsed(), limits);
            let repairs = Instant::now();
            let first = judge(
                problem,
                raw,
                Producer::Solver(backend.name()),
                Repair::Reprice(budget),
                CHECK_TOLERANCE,
                progress,
            );
            if first.assessment.confirmed || !first.raw.status.has_solution() {
                return Ok(first);
            }
            second_vertex(problem, first, budget.saturating_sub(repairs.elapsed()), progress)
        }
        other => {
            let backend = lp_solver(other, limits, progress)?;
            let started = Instant::now();
            let raw = {
                let _iterations = progress.time("iterations");
                backend.solve(problem)?
            };
            let block = other == SolverChoice::BlockIpm;
            let budget = polish_budget(other, started.elapsed(), limits);
            // HiGHS: a vertex that passes our checks stands; the polish is for the occasional
            // inconsistent duals (6.5e-7 of gap at ε = 1 on models/bernoulli-k100.toml) and costs
            // more than it gains on a vertex already certified (vote-share-3way at ε = 2: 10 s).
            // The block interior point: an unconfirmed point is repriced, then polished.
            let polishes = polish && (other.is_highs() || block);
            let repair = if polishes { Repair::RepriceAndPolish(budget) } else { Repair::None };
            let mut judged = judge(problem, raw, Producer::Solver(backend.name()), repair, CHECK_TOLERANCE, progress);
            // Stopped at its numerical limit, the block interior point's own gap is not the
            // measure: where our certificate of the released point meets the tolerance, it is
            // optimal.
            if block && judged.raw.status == Status::NearOptimal && judged.assessment.confirmed {
                judged.raw.status = Status::Optimal;
            }
            Ok(judged)
        }
    }
}

/// HiGHS's interior point with crossover ends at *a* vertex of an LP that has many optimal
/// bases; where repricing its multipliers does not certify it, the dual simplex's own vertex on
/// the same (orbit) LP often has multipliers that do (3-option poll of 60 at simplex resolution
/// 10: the interior point's 4.7e-6 repriced to 1.7e-7 only, the dual simplex's 4.5e-7 to 4.8e-8),
/// and costs about as much as the interior point did (docs/benchmarks.md). Within `budget`, the
/// dual simplex's vertex is repriced and, if still unconfirmed, polished with what is left; the
/// better-ranked of the two answers is kept. When the dual simplex ends without an optimal
/// vertex, the first answer stands as it is.
fn second_vertex(
    problem: &Problem,
    first: Judged,
    budget: Duration,
    progress: &Progress,
) -> Result<Judged, SolveError> {
    let started = Instant::now();
    let _second = progress.time("second vertex (dual simplex)");
    let limits = Limits { seconds: Some(budget.as_secs_f64()), ..Limits::default() };
    let simplex = lp_solver(SolverChoice::HighsSimplex, limits, progress)?;
    let gap = |j: &Judged| j.assessment.checks.relative_gap.unwrap_or(f64::INFINITY);
    let solved = {
        let _iterations = progress.time("iterations");
        simplex.solve(problem)
    };
    let raw = match solved {
        Ok(raw) if raw.status == Status::Optimal => raw,
        ended => {
            let why = ended.map_or_else(|e| e.to_string(), |raw| raw.status.to_string());
            let detail = format!("{}; dual simplex for a second vertex: {why}", first.raw.detail);
            return Ok(Judged { raw: RawSolution { detail, ..first.raw }, ..first });
        }
    };
    let left = budget.saturating_sub(started.elapsed());
    let second = judge(
        problem,
        raw,
        Producer::Solver(SolverChoice::HighsSimplex),
        Repair::RepriceAndPolish(left),
        CHECK_TOLERANCE,
        progress,
    );
    let what = format!(
        "dual simplex for a second vertex in {:.1} s: gap {:.1e} ({})",
        started.elapsed().as_secs_f64(),
        gap(&second),
        second.raw.detail
    );
    if second.assessment.rank() < first.assessment.rank() {
        let raw = RawSolution { detail: format!("{}; {what}", first.raw.detail), ..second.raw };
        Ok(Judged { raw, assessment: second.assessment, solver: first.solver })
    } else {
        let raw = RawSolution { detail: format!("{}; not kept: {what}", first.raw.detail), ..first.raw };
        Ok(Judged { raw, ..first })
    }
}

/// What [`judge`] may do to an answer our checks do not confirm.
#[derive(Debug, Clone, Copy)]
enum Repair {
    /// Nothing: the backend's answer as it is.
    None,
    /// Rebuild its multipliers ([`reprice`]) within the budget.
    Reprice(Duration),
    /// Reprice, then the active-set polish, both within the budget.
    RepriceAndPolish(Duration),
}

/// What [`repriced`] ends with.
enum Repricing {
    /// The rebuilt multipliers confirm the point.
    Confirmed(RawSolution, Assessment),
    /// They do not: the better-ranked of the two, with what happened in its detail.
    Kept(RawSolution, Assessment),
}

/// Rounds of repricing at most: each reads the column prices afresh from the last round's
/// multipliers, and runs only while the previous one at least halved the gap.
const REPRICING_ROUNDS: usize = 3;

/// The point `raw` with multipliers rebuilt by [`reprice`], in up to [`REPRICING_ROUNDS`] rounds.
fn repriced(problem: &Problem, raw: RawSolution, before: Assessment, budget: Duration) -> Repricing {
    let gap_before = before.checks.relative_gap.unwrap_or(f64::INFINITY);
    let started = Instant::now();
    // One round: multipliers rebuilt from `mu`, assessed on the full LP.
    let round = |mu: &[f64]| -> Result<(reprice::Repriced, Assessment), polish::PolishError> {
        let repriced = reprice::reprice(problem, &raw.x, mu, budget.saturating_sub(started.elapsed()))?;
        let candidate = RawSolution { dp_multipliers: Some(repriced.dp_multipliers.clone()), ..raw.clone() };
        let assessed = Assessment::of(problem, &candidate);
        Ok((repriced, assessed))
    };
    let first_mu = raw.dp_multipliers.as_deref().expect("the caller checks for multipliers");
    let (first, assessed) = match round(first_mu) {
        Ok(r) => r,
        Err(why) => {
            let raw = RawSolution { detail: format!("{}; repricing failed: {why}", raw.detail), ..raw };
            return Repricing::Kept(raw, before);
        }
    };
    let (mut rows_priced, mut rows_failed, mut rows_unpriced) =
        (first.rows_priced, first.rows_failed, first.rows_unpriced);
    let mut rounds = 1;
    let (mut mu, mut after) = (first.dp_multipliers, assessed);
    // Further rounds while the last one at least halved the gap and time is left.
    let mut gap = gap_before;
    while rounds < REPRICING_ROUNDS && !after.confirmed && budget > started.elapsed() {
        let gap_round = after.checks.relative_gap.unwrap_or(f64::INFINITY);
        if gap_round > gap / 2.0 {
            break;
        }
        gap = gap_round;
        let Ok((next, assessed)) = round(&mu) else { break };
        rounds += 1;
        rows_priced += next.rows_priced;
        rows_failed += next.rows_failed;
        rows_unpriced = next.rows_unpriced;
        if assessed.rank() >= after.rank() {
            break;
        }
        (mu, after) = (next.dp_multipliers, assessed);
    }
    let candidate = RawSolution { dp_multipliers: Some(mu), detail: String::new(), ..raw.clone() };
    let gap_after = after.checks.relative_gap.unwrap_or(f64::INFINITY);
    let what = format!(
        "multipliers repriced in {rounds} round(s), {rows_priced} output-row prices of {} rows kept ({rows_failed} pricing LPs failed, {rows_unpriced} left at the time budget) in {:.2} s: gap {gap_before:.1e} → {gap_after:.1e}",
        problem.n_outputs(),
        started.elapsed().as_secs_f64()
    );
    let raw_after = RawSolution { detail: format!("{}; {what}", raw.detail), ..candidate };
    if after.confirmed {
        return Repricing::Confirmed(raw_after, after);
    }
    if after.rank() < before.rank() {
        Repricing::Kept(raw_after, after)
    } else {
        Repricing::Kept(RawSolution { detail: format!("{}; not kept: {what}", raw.detail), ..raw }, before)
    }
}

/// The polish may take twice the backend's time, and at least a second: where it cannot finish
/// (the active set read from the point admits no vertex, and HiGHS labours on the retry: 13 s
/// after a 1.7 s interior point on the clipped-Poisson band) the backend's answer stands. After
/// the block interior point it gets a quarter of that: on its points stopped short of the
/// tolerance the polish has not yet finished (asymmetric multinomial K = 60: stopped at its
/// budget after 143 s; K = 100: after 927 s, a gap of 6.4e-6 left as it was).
/// Under a time limit, the polish gets at most what the backend left of it.
fn polish_budget(choice: SolverChoice, backend: Duration, limits: Limits) -> Duration {
    let share = if choice == SolverChoice::BlockIpm { backend / 2 } else { 2 * backend };
    let budget = share.max(Duration::from_secs(1));
    match limits.remaining_after(backend) {
        Some(left) => budget.min(Duration::from_secs_f64(left)),
        None => budget,
    }
}

/// Assess a backend's answer and, when `polish` gives a time budget, the program is plain, the
/// answer unconfirmed (gap above `polish_above`) and multipliers present, its polished vertex;
/// keep the better-ranked (feasible first, then the smaller measured gap) and say what happened
/// in the detail.
fn judge(
    problem: &Problem,
    raw: RawSolution,
    solver: Producer,
    repair: Repair,
    polish_above: f64,
    progress: &Progress,
) -> Judged {
    let certifying = progress.time("certify");
    let before = Assessment::of(problem, &raw);
    drop(certifying);
    let gap_before = before.checks.relative_gap.unwrap_or(f64::INFINITY);
    let (budget, polishes) = match repair {
        Repair::None => (None, false),
        Repair::Reprice(b) => (Some(b), false),
        Repair::RepriceAndPolish(b) => (Some(b), true),
    };
    let wanted = budget.is_some()
        && raw.status.has_solution()
        && problem.program.is_plain()
        && !(before.feasible && gap_before <= polish_above);
    if !wanted || raw.dp_multipliers.is_none() {
        return Judged { raw, assessment: before, solver };
    }
    // One budget covers the repricing and the polish together.
    let budget = budget.unwrap_or_default();
    let started = Instant::now();
    // First the cheap repair of the certificate alone: multipliers rebuilt row by row from the
    // point's own column prices (`reprice`); the point stays, so only the bound can change.
    let (raw, before) = if before.confirmed {
        (raw, before)
    } else {
        let _repricing = progress.time("repricing");
        match repriced(problem, raw, before, budget) {
            Repricing::Confirmed(raw, assessment) => return Judged { raw, assessment, solver },
            Repricing::Kept(raw, before) => (raw, before),
        }
    };
    let gap_before = before.checks.relative_gap.unwrap_or(f64::INFINITY);
    let mu = raw.dp_multipliers.as_deref().expect("checked above");
    let left = budget.saturating_sub(started.elapsed());
    if !polishes {
        return Judged { raw, assessment: before, solver };
    }
    if left.is_zero() {
        let raw = RawSolution { detail: format!("{}; no time left to polish", raw.detail), ..raw };
        return Judged { raw, assessment: before, solver };
    }
    let polishing = progress.time("polish");
    let polished = match polish::polish(problem, &raw.x, mu, left) {
        Ok(p) => p,
        Err(why) => {
            let raw = RawSolution { detail: format!("{}; polish failed: {why}", raw.detail), ..raw };
            return Judged { raw, assessment: before, solver };
        }
    };
    let candidate = RawSolution {
        x: polished.x,
        dp_multipliers: Some(polished.dp_multipliers),
        status: Status::Optimal,
        detail: String::new(),
    };
    let after = Assessment::of(problem, &candidate);
    drop(polishing);
    let gap_after = after.checks.relative_gap.unwrap_or(f64::INFINITY);
    let (cols, rows) = polished.reduced_size;
    let what = format!(
        "polished on a reduced LP of {cols} columns × {rows} rows in {} round(s): gap {gap_before:.1e} → {gap_after:.1e}",
        polished.rounds
    );
    if after.rank() < before.rank() {
        // An exact vertex of the reduced LP is offered as optimal; our checks (feasibility,
        // gap ≤ CHECK_TOLERANCE) still decide what is reported.
        let raw = RawSolution { detail: format!("{}; {what}", raw.detail), status: Status::Optimal, ..candidate };
        Judged { raw, assessment: after, solver }
    } else {
        let raw = RawSolution { detail: format!("{}; not kept: {what}", raw.detail), ..raw };
        Judged { raw, assessment: before, solver }
    }
}
