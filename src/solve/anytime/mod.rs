//! The anytime route: a certified mechanism and a proven lower bound at any size, and a gap that
//! closes as it runs. The LP is never built: its operator — the DP map D on every output row, the
//! column sums — is applied by passes over the observations and the neighbour edges.
//!
//! - **Iterations:** restarted reflected Halpern PDHG ([`pdhg`]) with the column simplices in the
//!   primal and one multiplier per DP row in the dual.
//! - **Lower bound:** any multipliers λ ≥ 0 give the Lagrangian bound
//!   g(λ) = Σ_i min_k (c\[k,i\] + (Dᵀλ)\[k,i\]) (each column a simplex; UBaPP's LP, relaxed), here
//!   proven in directed rounding with e^ε bounded above (`certify::dual::exact_plain_bound`),
//!   at the best multiple of the iteration's multipliers and again after exact coordinate ascent
//!   from there ([`ascent`]), with multipliers on the rows beyond the support that price the
//!   outputs it leaves out ([`tails`]).
//! - **Upper bound:** the mean of the primal points since the last mechanism, and the current
//!   point, each made exactly ε-DP by the lift of every row, mixing and quantisation
//!   (`certify::repair::repair_far`), checked exactly on the integer weights and priced with every
//!   rounding upwards; the better is the mechanism `--out` writes.
//! - **Support:** the iteration keeps output k only within ln(10⁶)/ε to ln(10¹²)/ε hops (by the
//!   width of the rule's regions: [`support_reach`]; ln(2·10⁴)/ε where the time affords few
//!   iterations a hop: [`scarce_reach`]) of where k is the
//!   non-private choice (`lp::Support`; 40 % of the pairs on the poll of 100, 11 % on the poll
//!   of 300, 3.6 % on the poll of 1000); the bound and the repair still range over every output.
//! - **Decomposition** ([`pieces`]): where the time left affords fewer than
//!   [`DECOMPOSE_BELOW_ITERATIONS_PER_HOP`] iterations per hop across the graph (the first ten,
//!   or a second's worth, timed), the bound is raised first by exact LPs on pieces of the
//!   observations near the non-private rule's boundaries, the rows crossing the pieces fixed
//!   (only where at most [`DECOMPOSE_BELOW_CUT_SHARE`] of the pieces' edges cross them).
//! - **Restarts from the polish:** at every checkpoint the iteration goes on from the
//!   multipliers the ascent polished ([`pdhg::Pdhg::restart_with_dual`]).
//! - **Start:** the non-private Bayes rule and zero multipliers (whose bound is the non-private
//!   risk). A coarse-to-fine start on multinomial lattices (K/2 records at 2ε, lifted) was
//!   measured and not kept (docs/design/anytime.md).
//!
//! Both bounds are kept at their best: the gap reported is (U − L)/U of the best certified
//! mechanism and the best proven bound, so it never widens.

pub(crate) mod ascent;
mod pdhg;
pub(crate) mod pieces;
pub(crate) mod tails;

use std::sync::Arc;
use std::time::{Duration, Instant};

use ndarray::Array2;

use super::assess::Residuals;
use super::{Checks, Event, LpSize, Phase, Solution, SolveError, SolveOptions, Status};
use crate::certify::{self, PrivacyCertificate, Repaired, DEFAULT_TOTAL};
use crate::lp::{Incidence, Support};
use crate::model::Model;

/// The certified gap the anytime route stops at when the caller sets none.
pub(crate) const DEFAULT_GAP: f64 = 1e-3;

/// A gap below this is reported as optimal (the exact routes' tolerance for "optimal").
const OPTIMAL_GAP: f64 = 1e-7;

/// Certification may take at most this share of the time (the checkpoints are spaced so). How
/// often the checkpoints come does not change the iteration (on the poll of 100 at 5,000
/// iterations, shares 0.1 and 0.4 gave the same gaps), so the share is the time the iterations
/// lose: 0.15 and 0.08 gave the same gaps in 30 s, 0.25 a fifth wider. On the 4-way poll of 100
/// (the tail rows priced at every checkpoint), at the same speed of the machine, 0.15 ran
/// 4,542 iterations in the default 10 minutes and certified 1.41 %, 0.08 4,943 and 1.25 %; the
/// poll of 300 met its 0.1 % after 217 s with 0.08, 264 s with 0.15.
const CERTIFICATION_SHARE: f64 = 0.08;

/// Iterations between checkpoints at the least.
const MIN_CHECK_EVERY: u64 = 20;

/// Sweeps of [`ascent::polish`] over the multipliers at every checkpoint (measured on the poll
/// of 100: the second sweep adds little, the thirtieth nothing a fourth sweep had not).
const ASCENT_SWEEPS: usize = 2;

/// The iterations timed on the support before the route decides whether to decompose (fewer,
/// but at least 2, once the probe has taken [`PROBE_SECONDS`]).
const PROBE_ITERATIONS: u64 = 10;

/// Seconds after which a probe stops at its next iteration (from the second on).
const PROBE_SECONDS: f64 = 1.0;

/// The route starts with the decomposition ([`pieces`]) where the time left affords fewer
/// iterations than this per hop of the graph's diameter: a first-order iteration moves
/// information one hop, so with few iterations per hop the multipliers far from where they
/// started have not settled. Measured (docs/design/anytime.md): the poll of 1000 (diameter
/// 1000) affords about 7 a hop in 10 minutes, and 1,207 iterations proved no more than the
/// non-private risk 2.993e-5 where two rounds of the decomposition proved 3.499e-5; the poll of
/// 100 in 30 s (75 a hop) and the poll of 300 in 150 s (about 40) prove more by the iterations.
const DECOMPOSE_BELOW_ITERATIONS_PER_HOP: f64 = 20.0;

/// The decomposition runs only where at most this share of the edges touching its pieces cross
/// between them: the crossing rows' multipliers stay fixed in a round, and where there are many
/// the pieces prove little. Measured in the default 10 minutes (docs/design/anytime.md): the
/// poll of 1000 (12.8 % cut) certified a gap of 1.47 % with it and 6.45 % without; the 4-way
/// poll of 100 (three dimensions, 28.6 % cut) 7.46 % with it and 5.19 % without.
const DECOMPOSE_BELOW_CUT_SHARE: f64 = 0.2;

/// The share of the time limit the decomposition's rounds may use; the iterations (which find
/// the mechanism) have the rest. The mechanism settles sooner than the bound: on the poll of 1000
/// it was 3.7053e-5 after 2,980 iterations and 3.7040e-5 after 3,816, while every round of the
/// decomposition still raised the bound by 0.2–0.5 % (docs/design/anytime.md). Since the dual
/// pass accumulates Dᵀλ, 0.8 left 4,471 iterations after 11 rounds (certified gap 0.747 %) where
/// 0.75 left 4,759 after 9 at a slower hour (1.03 %).
const DECOMPOSITION_SHARE: f64 = 0.8;

/// Rounds of the decomposition at most (each cuts across the last, its crossing rows'
/// multipliers fixed at the last round's values); the time share ends them first at size.
const MAX_ROUNDS: usize = 16;

/// The name the route's solutions carry.
pub(crate) const SOLVER_NAME: &str = "anytime";

/// What the anytime route needs in memory for a model of `n_obs` observations, `n_out` outputs,
/// `n_theta` parameter points and `edges` undirected neighbour pairs (bytes): the cost matrix and
/// the likelihood it is built from (f64), the iterate in single precision on its support, priced
/// as if every output were kept (cost, x, its anchor, x̂, 2x̂ − x, Dᵀλ and the mean of the x̂; λ and its anchor per DP row;
/// the support's indices), the incidence, x̂ spread over every output, the certificate's copies
/// (P in f64, the integer weights, the released probabilities), the decomposition's copies of λ
/// and x or the coordinate ascent's (whichever is larger: they are never held together), and the
/// packed artifact.
pub(crate) fn memory_bytes(n_obs: u128, n_out: u128, n_theta: u128, edges: u128) -> u128 {
    let n_vars = n_obs * n_out;
    let n_dp = 2 * edges * n_out;
    let cost = 8 * n_vars + 8 * n_obs * n_theta;
    let iterate = 7 * 4 * n_vars + 2 * 4 * n_dp;
    let support = Support::bytes(n_obs, edges, n_vars, n_dp / 2);
    let incidence = Incidence::bytes(n_obs as usize, edges as usize);
    let spread = 4 * n_vars;
    let certificate = 3 * 8 * n_vars + 48 * n_obs;
    // The decomposition's multipliers and stitched point (f32), beside the iterate.
    let decomposition = 4 * n_vars + 4 * n_dp;
    // The coordinate ascent's copies at each checkpoint (after the decomposition, never beside
    // it): the polished multipliers (f32), their f64 working copy, the slots' reduced costs and
    // each column's least two.
    let ascent = 12 * n_dp + 8 * n_vars + 24 * n_obs;
    // The artifact `--out` writes, packed: at most 10 varint bytes a weight in base64 (4/3).
    let artifact = 14 * n_vars;
    cost + iterate + support + incidence + spread + certificate + decomposition.max(ascent) + artifact
}

/// Solve `model` for each ε by the anytime route; `each` sees every solution as it is finished.
pub(crate) fn solve_model(
    model: &Model,
    eps_list: &[f64],
    reason: &str,
    options: &SolveOptions,
    cost: Arc<Array2<f64>>,
    each: &mut dyn FnMut(&Solution),
) -> Result<Vec<Solution>, SolveError> {
    let started = Instant::now();
    options.progress.phase(Phase::Assembling);
    if cost.iter().any(|c| !c.is_finite()) {
        return Err(SolveError::NonFiniteCosts { fields: "parameter.grid, output.grid".to_string() });
    }
    let neighbours = model.family.neighbours();
    let incidence = Incidence::new(&neighbours).ok_or(SolveError::NoBackend)?;
    let assembly = started.elapsed().as_secs_f64();
    let mut solutions = Vec::with_capacity(eps_list.len());
    for (index, &eps) in eps_list.iter().enumerate() {
        // The whole solve's time (the caller's limit, else the default budget), shared equally
        // among the ε left.
        let limit = options.limits.seconds.unwrap_or(super::DEFAULT_TIME_BUDGET_SECONDS);
        let left = (limit - started.elapsed().as_secs_f64()).max(0.0);
        let share = Some(left / (eps_list.len() - index) as f64);
        let s = solve_eps(&cost, &incidence, eps, reason, options, share, assembly)?;
        each(&s);
        solutions.push(s);
    }
    Ok(solutions)
}

/// The best certified pair so far.
struct Best {
    /// The proven lower bound (unscaled).
    lower: f64,
    /// The certified mechanism with the least proven risk, and that risk.
    release: Option<(Repaired, f64)>,
}

impl Best {
    fn upper(&self) -> f64 {
        self.release.as_ref().map_or(f64::INFINITY, |(_, u)| *u)
    }

    fn gap(&self) -> f64 {
        let u = self.upper();
        if u.is_finite() && u > 0.0 {
            ((u - self.lower) / u).max(0.0)
        } else {
            f64::INFINITY
        }
    }
}

/// The anytime solve of one ε on costs `cost` (C\[i, k\], unscaled) and the DP rows of
/// `incidence`, within `seconds`.
pub(crate) fn solve_eps(
    cost: &Arc<Array2<f64>>,
    incidence: &Incidence,
    eps: f64,
    reason: &str,
    options: &SolveOptions,
    seconds: Option<f64>,
    assembly: f64,
) -> Result<Solution, SolveError> {
    let start = Instant::now();
    let (n_obs, m) = cost.dim();
    let target = options.gap.unwrap_or(DEFAULT_GAP);
    let (scale, every) = scaling(cost);
    let progress = &options.progress;
    let limit_at = seconds.map(|s| start + Duration::from_secs_f64(s.max(0.0)));
    // The iteration keeps the outputs near where each is the non-private choice (`lp::Support`):
    // the least reach for the probe (and for the mechanism alone, after the decomposition), a
    // wider one where the rule's regions are wide and the iterations prove the bound.
    let narrow = support_reach(eps, n_obs, 0);
    let support = Support::near_rule(cost, incidence, narrow).ok_or(SolveError::NoBackend)?;
    // The bound at zero multipliers, the non-private risk, holds from the start; the best
    // constant release (0-DP: every column the output of least prior risk) is the first mechanism.
    let mut best = Best { lower: certify::non_private_bound(cost), release: None };
    let constant = crate::lp::best_constant_output(cost);
    let constant_x: Vec<f32> = (0..n_obs * m).map(|v| if v % m == constant { 1.0 } else { 0.0 }).collect();
    certify_primal(cost, incidence, eps, &constant_x, None, &mut best);
    drop(constant_x);
    progress.phase(Phase::FirstOrder);
    let (cost_scaled, x) = start_point(cost, &support, scale);
    let lam = vec![0f32; support.rows()];
    let mut state = pdhg::Pdhg::new(incidence, &support, eps, cost_scaled, every, x, lam);
    // The slots spread over every output, for the certification.
    let mut spread = vec![0f32; n_obs * m];
    // Where the time left affords few iterations (a large graph), the decomposition proves the
    // bound first, if its first round is expected to fit its share of the time.
    let probe = Instant::now();
    let mut probed = 0;
    while probed < PROBE_ITERATIONS && !(probed >= 2 && probe.elapsed().as_secs_f64() > PROBE_SECONDS) {
        state.step();
        probed += 1;
    }
    let per_iteration = probe.elapsed().as_secs_f64() / probed as f64;
    // The iterations the time left affords per hop across the graph (on the least reach).
    let per_hop = limit_at.map(|end| {
        let left = end.saturating_duration_since(Instant::now()).as_secs_f64();
        left / per_iteration.max(1e-12) / pieces::hops_across(incidence).max(1) as f64
    });
    let mut decomposition = String::new();
    if let (Some(end), Some(per_hop)) = (limit_at, per_hop) {
        let left = end.saturating_duration_since(Instant::now()).as_secs_f64();
        if per_hop < DECOMPOSE_BELOW_ITERATIONS_PER_HOP {
            let share = left * DECOMPOSITION_SHARE;
            let partition = pieces::Partition::new(cost, incidence, eps, 0, pieces::PIECE_SIZE);
            let estimate = partition.round_seconds(cost);
            if partition.cut_share(incidence) <= DECOMPOSE_BELOW_CUT_SHARE && estimate <= share {
                let deadline = Instant::now() + Duration::from_secs_f64(share);
                decomposition = decompose(cost, incidence, eps, (partition, estimate), deadline, progress, &mut best);
                progress.phase(Phase::FirstOrder);
            }
        }
    }
    // After the decomposition the iterations find the mechanism only, whose rows decay by ρ a
    // hop: the least reach serves (measured on the poll of 1000: 1.23 % at 28 hops, 2.03 % at
    // 56). Where the time affords few iterations a hop, every one counts for the mechanism: the
    // scarce reach, with the tail rows ([`tails`]) pricing what it leaves out in the bound.
    // Otherwise they prove the bound too, on the wider support where the rule asks for it.
    let reach = if !decomposition.is_empty() {
        narrow
    } else if per_hop.is_some_and(|p| p < SCARCE_BELOW_ITERATIONS_PER_HOP) {
        scarce_reach(eps, n_obs)
    } else {
        support_reach(eps, n_obs, Support::rule_depth(cost, incidence))
    };
    let other_support = match reach != narrow {
        true => Some(Support::near_rule(cost, incidence, reach).ok_or(SolveError::NoBackend)?),
        false => None,
    };
    let (support, mut state) = match &other_support {
        Some(other) => {
            drop(state);
            let (cost_scaled, x) = start_point(cost, other, scale);
            let lam = vec![0f32; other.rows()];
            (other, pdhg::Pdhg::new(incidence, other, eps, cost_scaled, every, x, lam))
        }
        None => (&support, state),
    };
    // The tail rows price the left-out outputs where the iterations prove the bound.
    let price_tails = decomposition.is_empty() && support.slots() < n_obs * m;
    let mut clock = Checkpoints::new();
    // The last checkpoint that certified a mechanism took this long: the iterations stop early
    // enough for the final one to end within the time limit.
    let mut final_checkpoint: f64 = 0.0;
    let mut polished = vec![0f32; support.rows()];
    let mut last_multiple = f64::NAN;
    // The mean of the points since the last mechanism was certified: the mechanism's first
    // candidate.
    let mut average = Average::new(support.slots());
    let stop_reason = loop {
        state.step();
        average.add(state.primal());
        // The iterations leave the final certification the longest a certification took so far,
        // and a quarter more (a shorter one would cut the repair's rounds, and the next
        // estimate with them).
        let out_of_time = seconds.is_some_and(|s| start.elapsed().as_secs_f64() + 1.25 * final_checkpoint >= s);
        let iteration_cap = options.limits.iterations.is_some_and(|l| state.iterations >= l as u64 * 100);
        let last = out_of_time || iteration_cap;
        if !(last || clock.due(state.iterations)) {
            continue;
        }
        // The bound at every checkpoint (one pass); the mechanism (the lift, the quantisation,
        // the exact check) at every other one, when the bound says the target may be met, and
        // at the end.
        let t = Instant::now();
        // The search over multiples pays early (the iterate's multipliers overshoot); once the
        // iteration restarts from polished multipliers it finds t = 1, and is then rerun only at
        // every [`SEARCH_MULTIPLE_EVERY`]th checkpoint.
        let search = last_multiple != 1.0 || clock.count % SEARCH_MULTIPLE_EVERY == 0;
        let bound_at =
            |t: f64| certify::exact_support_bound(cost, incidence, support, eps, state.dual(), scale * t, None);
        let (lower, multiple) = if search { best_multiple_bound(bound_at) } else { (bound_at(1.0), 1.0) };
        last_multiple = multiple;
        let multiple_f32 = multiple as f32;
        polished.iter_mut().zip(state.dual()).for_each(|(p, &l)| *p = l * multiple_f32);
        ascent::polish(cost, incidence, support, eps.exp(), &mut polished, scale, ASCENT_SWEEPS);
        let tails = price_tails.then(|| tails::tail_rows(cost, incidence, support, eps, &polished, scale));
        let lower =
            lower.max(certify::exact_support_bound(cost, incidence, support, eps, &polished, scale, tails.as_ref()));
        best.lower = best.lower.max(lower);
        // The iteration goes on from the polished multipliers (measured on the poll of 100 in
        // 30 s, three runs each: median gap 1.52e-3 without, 1.17e-3 with).
        state.restart_with_dual(&polished);
        let hopeful = best.upper().is_finite() && (best.upper() - best.lower) / best.upper() <= 2.0 * target;
        if last || hopeful || clock.upper_due() {
            // The repair's rounds may take the certification share of what is left of the
            // limit, or all of it at the last checkpoint.
            let deadline = limit_at.map(|end| {
                let now = Instant::now();
                if last {
                    end
                } else {
                    now + end.saturating_duration_since(now).mul_f64(CERTIFICATION_SHARE)
                }
            });
            // The mean of the points first, then the last point: the mean is the better
            // mechanism wherever measured (its DP violations average out; the repair pays
            // for them), and the last gets what time the mean's repair leaves.
            if let Some(mean) = average.mean() {
                support.spread(mean, &mut spread);
                certify_primal(cost, incidence, eps, &spread, deadline, &mut best);
            }
            support.spread(state.primal(), &mut spread);
            certify_primal(cost, incidence, eps, &spread, deadline, &mut best);
            average.clear();
            final_checkpoint = final_checkpoint.max(t.elapsed().as_secs_f64());
        }
        clock.certified(state.iterations, t.elapsed().as_secs_f64());
        progress.report(Event::Bounds { upper: best.upper(), lower: best.lower, iteration: state.iterations });
        progress.report(Event::Gap(best.gap()));
        if best.gap() <= target {
            break format!("certified gap {:.2e} ≤ the target {target:.0e}", best.gap());
        }
        if out_of_time {
            break format!("the time limit was reached at a certified gap of {:.2e}", best.gap());
        }
        if iteration_cap {
            break format!("the iteration limit was reached at a certified gap of {:.2e}", best.gap());
        }
    };
    let gap = best.gap();
    let Some((release, upper)) = best.release else {
        return Err(SolveError::NoBackend);
    };
    let p = release.probabilities();
    let residuals = Residuals::of(&p, &incidence_neighbours(incidence), eps);
    let status = if gap <= OPTIMAL_GAP { Status::Optimal } else { Status::CertifiedGap };
    let affordable =
        per_hop.map_or(String::new(), |p| format!(", about {p:.0} iterations a hop affordable at the start"));
    let detail = format!(
        "{reason}; {decomposition}restarted PDHG on the outputs within {reach} hops of their regions ({:.1} % of the DP rows{affordable}), {} iterations, {} restarts; {stop_reason} (certifying took {:.1} s)",
        100.0 * support.rows() as f64 / (2 * incidence.n_edges() * m).max(1) as f64,
        state.iterations, state.restarts, clock.spent
    );
    let checks = Checks {
        max_dp_violation: residuals.max_dp_violation,
        max_column_error: residuals.max_column_error,
        min_entry: residuals.min_entry,
        dual_bound: Some(best.lower),
        dual_bound_exact: true,
        relative_gap: Some(gap),
        objective: release.objective,
        certified_objective: Some(upper),
        worst_case_risk: None,
        delta: 0.0,
        delta_spent: 0.0,
    };
    let n_edges = incidence.n_edges();
    Ok(Solution {
        eps,
        bayes_risk: release.objective,
        solver: SOLVER_NAME.to_string(),
        status,
        solver_detail: detail,
        seconds: start.elapsed().as_secs_f64(),
        assembly_seconds: assembly,
        size: LpSize { outputs: m, observations: n_obs, variables: n_obs * m, rows: n_obs + 2 * n_edges * m },
        checks,
        p,
        release: Some(release),
        compact: None,
    })
}

/// The iteration's start on `support`: the slots' costs scaled by `scale` (single precision)
/// and the non-private Bayes rule (whose bound, at zero multipliers, is the non-private risk).
fn start_point(cost: &Array2<f64>, support: &Support, scale: f64) -> (Vec<f32>, Vec<f32>) {
    let outputs = support.outputs();
    let mut cost_scaled = vec![0f32; support.slots()];
    let mut x = vec![0f32; support.slots()];
    let rule = crate::lp::non_private_rule(cost);
    for (i, (row, &best)) in cost.outer_iter().zip(&rule).enumerate() {
        for s in support.column(i) {
            let k = outputs[s];
            cost_scaled[s] = (row[k as usize] / scale) as f32;
            x[s] = if k == best { 1.0 } else { 0.0 };
        }
    }
    (cost_scaled, x)
}

/// The iteration's unit of cost, the non-private risk (costs and multipliers are divided by it),
/// and the mean and Euclidean norm of every scaled cost (`pdhg::Pdhg::new`'s `every`).
fn scaling(cost: &Array2<f64>) -> (f64, (f64, f64)) {
    let scale = crate::lp::non_private_risk(cost).max(f64::MIN_POSITIVE);
    let (sum, squares) = cost.iter().fold((0.0, 0.0), |(s, q), &c| (s + c / scale, q + (c / scale).powi(2)));
    (scale, (sum / cost.len().max(1) as f64, squares.sqrt()))
}

/// The multipliers after `iterations` of the iteration on `support` from the route's start, as
/// the checkpoints prove them (unscaled: μ = `scale`·λ with the returned scale).
#[cfg(test)]
pub(crate) fn iterated_multipliers(
    cost: &Array2<f64>,
    incidence: &Incidence,
    support: &Support,
    eps: f64,
    iterations: usize,
) -> (Vec<f32>, f64) {
    let (scale, every) = scaling(cost);
    let (cost_scaled, x) = start_point(cost, support, scale);
    let mut state = pdhg::Pdhg::new(incidence, support, eps, cost_scaled, every, x, vec![0f32; support.rows()]);
    for _ in 0..iterations {
        state.step();
    }
    (state.dual().to_vec(), scale)
}

/// The decomposition's rounds ([`pieces`]) until `deadline`, the first on partition `first`
/// (expected to take `estimate` seconds): each proves a bound into `best`. A later round is
/// started only if the last one's time fits before the deadline. Returns the words for the
/// solution's detail.
fn decompose(
    cost: &Array2<f64>,
    incidence: &Incidence,
    eps: f64,
    (first, estimate): (pieces::Partition, f64),
    deadline: Instant,
    progress: &super::Progress,
    best: &mut Best,
) -> String {
    let (n_obs, m) = cost.dim();
    let mut lam = vec![0f32; 2 * incidence.n_edges() * m];
    // The pieces' stitched point is not certified: it is ε-DP within the pieces only, and its
    // repair across the cuts cost more than the iterations' point's (measured: 3.06e-3 against
    // 2.03e-3 on the poll of 300, 1.04e-4 against 3.8e-5 on the poll of 1000).
    let mut x = vec![0f32; n_obs * m];
    let mut round_seconds: Option<f64> = None;
    let mut first_seconds = 0.0;
    let mut rounds = 0;
    let mut proven = f64::NEG_INFINITY;
    let mut active = 0;
    let mut partition = first;
    for round in 0..MAX_ROUNDS {
        // A later round only where the last round's time, and half again, is left.
        let left = deadline.saturating_duration_since(Instant::now()).as_secs_f64();
        if round_seconds.is_some_and(|s| 1.5 * s > left) {
            break;
        }
        let t = Instant::now();
        // Later rounds cut across the last one (poll of 1000: the bound after eight rounds 0.47 %
        // higher than with seeds in a shifted order).
        if round > 0 {
            partition = partition.across(incidence, round, pieces::PIECE_SIZE);
        }
        progress.phase(Phase::Decomposition { round: round + 1, pieces: partition.len() });
        active = partition.active();
        pieces::solve_pieces(cost, incidence, eps, &partition, &mut lam, &mut x, Some(deadline));
        let lower = certify::exact_plain_bound(cost, incidence, eps, &lam, 1.0);
        proven = proven.max(lower);
        best.lower = best.lower.max(lower);
        rounds += 1;
        round_seconds = Some(t.elapsed().as_secs_f64());
        if round == 0 {
            first_seconds = t.elapsed().as_secs_f64();
        }
        progress.report(Event::Bounds { upper: best.upper(), lower: best.lower, iteration: 0 });
        progress.report(Event::Gap(best.gap()));
    }
    if rounds == 0 {
        return String::new();
    }
    format!(
        "decomposition: {rounds} round(s) of exact LPs on pieces of ≤ {} of the {active} observations near the non-private rule's boundaries, bound {proven:.6e} (the first round estimated at {estimate:.0} s, took {first_seconds:.0} s); ",
        pieces::PIECE_SIZE
    )
}

/// An output is kept where it is within this factor of its own region in the DP decay
/// ρ^(−distance) (`lp::Support`), at the least.
const SUPPORT_DECAY: f64 = 1e-6;

/// The reach grows with the non-private rule's regions up to this decay.
const SUPPORT_DECAY_WIDEST: f64 = 1e-12;

/// Times the rule's depth (`Support::rule_depth`) the reach covers, between the two decays.
const REACH_PER_DEPTH: f64 = 2.5;

/// The support's reach in hops at ε: [`REACH_PER_DEPTH`] times the non-private rule's depth
/// `depth`, but at least ln(1/[`SUPPORT_DECAY`])/ε and at most ln(1/[`SUPPORT_DECAY_WIDEST`])/ε,
/// and at most the number of observations.
///
/// The primal needs little: an optimal row decays by ρ a hop away from its region. The bound
/// needs more where the regions are wide: outputs left out keep zero multipliers, and their
/// plain costs then cap the columns' minima. On the poll of 300 (depth 24) in 150 s the certified
/// gap was 1.31 % at reach 28 (10⁻⁶), 0.49 % at 42, 0.165 % at 56 (10⁻¹²) and 0.21 % at 84
/// (fewer iterations); on the poll of 100 (depth 7) in 30 s, 6.4e-4 at 28 and 8.5e-4–1.0e-3 at
/// 56. After the decomposition (whose pieces prove the bound) the least reach serves the
/// mechanism (poll of 1000: 1.23 % at 28 hops, 2.03 % at 56). A narrower support than 10⁻⁶ runs more iterations but, in three dimensions, releases
/// worse mechanisms (the 4-way poll of 100: reach 12 ran 1,877 iterations to a mechanism of
/// 1.357e-2, reach 28 412 to 1.247e-2).
fn support_reach(eps: f64, n_obs: usize, depth: usize) -> usize {
    let eps = eps.max(1e-9);
    let (least, most) = ((1.0 / SUPPORT_DECAY).ln() / eps, (1.0 / SUPPORT_DECAY_WIDEST).ln() / eps);
    (REACH_PER_DEPTH * depth as f64).clamp(least, most).ceil().min(n_obs as f64) as usize
}

/// The iterations stay on the [`scarce_reach`] where the time affords fewer than this many a hop
/// across the graph (and more than [`DECOMPOSE_BELOW_ITERATIONS_PER_HOP`]). Measured in the
/// default 10 minutes on the 4-way poll of 100 (about 35 a hop at 28 hops): 28 hops certified a
/// gap of 1.62–1.80 % (three runs), 20 hops with the tail rows 1.02 %; the polls of 100 in 30 s
/// (about 145 a hop) and of 300 (about 250) meet their targets on the rule's reach.
const SCARCE_BELOW_ITERATIONS_PER_HOP: f64 = 60.0;

/// An output is kept within this factor of its own region where iterations are scarce.
const SUPPORT_DECAY_SCARCE: f64 = 5e-5;

/// The support's reach in hops at ε where iterations are scarce: ln(1/[`SUPPORT_DECAY_SCARCE`])/ε
/// (20 at ε = 0.5), at most the number of observations. The mechanism loses nothing by it (the
/// lift fills the tails: on the 4-way poll of 100, 1.16483e-2 at 20 hops against 1.1696e-2 at
/// best at 28) and the iterations are about 1.9 times as many.
fn scarce_reach(eps: f64, n_obs: usize) -> usize {
    ((1.0 / SUPPORT_DECAY_SCARCE).ln() / eps.max(1e-9)).ceil().min(n_obs as f64) as usize
}

/// Checkpoints at which [`best_multiple_bound`] searches the multiples while the last search
/// found the iterate's own (t = 1): one in this many. On the poll of 100 every search after the
/// first few found t = 1 and took 0.04 s of a 0.06 s checkpoint.
const SEARCH_MULTIPLE_EVERY: u64 = 8;

/// Golden-section steps of [`best_multiple_bound`].
const BOUND_STEPS: usize = 6;

/// The best proven bound over multiples tλ of the iterate's multipliers (`bound(t)`: the proven
/// bound at tλ), t = 1 and a golden-section search on [0, 1.5], and the t that proves it. Any multipliers λ ≥ 0 give a
/// bound, and g(tλ) is concave in t with g(0) the non-private risk, so where the iterate's
/// multipliers overshoot (early on, or where their errors cost more than they prove) a shorter
/// multiple proves more; each value is a theorem of its own, so the search needs no accuracy.
fn best_multiple_bound(bound: impl Fn(f64) -> f64) -> (f64, f64) {
    let ratio = (5f64.sqrt() - 1.0) / 2.0;
    let (mut lo, mut hi) = (0.0, 1.5);
    let mut best = (bound(1.0), 1.0);
    let keep = |best: &mut (f64, f64), g: f64, t: f64| {
        if g > best.0 {
            *best = (g, t);
        }
    };
    let (mut a, mut b) = (hi - ratio * (hi - lo), lo + ratio * (hi - lo));
    let (mut ga, mut gb) = (bound(a), bound(b));
    for _ in 0..BOUND_STEPS {
        keep(&mut best, ga, a);
        keep(&mut best, gb, b);
        if ga < gb {
            lo = a;
            (a, ga) = (b, gb);
            b = lo + ratio * (hi - lo);
            gb = bound(b);
        } else {
            hi = b;
            (b, gb) = (a, ga);
            a = hi - ratio * (hi - lo);
            ga = bound(a);
        }
    }
    keep(&mut best, ga, a);
    keep(&mut best, gb, b);
    best
}

/// The running mean of the iteration's points x̂ (on the support's slots) since it was last
/// cleared. Each point is column-stochastic, so the mean is too; its DP violations are at most
/// the points' mean violation (each row's violation is convex), and the repair pays for what is
/// left. Measured on the 4-way poll of 100: the mean of 471 points released 1.17703e-2 where
/// the last point released 1.22986e-2, and the means of 3,739 and 2,144 points 1.16325e-2 and
/// 1.16223e-2 where the last points released 1.16889e-2 and more.
struct Average {
    mean: Vec<f32>,
    count: u32,
}

impl Average {
    fn new(slots: usize) -> Self {
        Average { mean: vec![0.0; slots], count: 0 }
    }

    fn add(&mut self, x: &[f32]) {
        use rayon::prelude::*;
        self.count += 1;
        let w = 1.0 / self.count as f32;
        self.mean.par_iter_mut().zip(x.par_iter()).for_each(|(m, &v)| *m += w * (v - *m));
    }

    /// The mean, where it is of more than one point (of one, it is the last point itself).
    fn mean(&self) -> Option<&[f32]> {
        (self.count > 1).then_some(&self.mean[..])
    }

    fn clear(&mut self) {
        self.count = 0;
    }
}

/// When to certify: checkpoints spaced so that certifying takes at most
/// [`CERTIFICATION_SHARE`] of the time, and the mechanism at every other one.
struct Checkpoints {
    /// The iteration of the next checkpoint.
    next: u64,
    /// Checkpoints so far.
    count: u64,
    /// Seconds spent certifying.
    spent: f64,
    /// When the iterations since the last checkpoint began, and at which iteration.
    since: Instant,
    since_iteration: u64,
}

impl Checkpoints {
    fn new() -> Self {
        Checkpoints { next: MIN_CHECK_EVERY, count: 0, spent: 0.0, since: Instant::now(), since_iteration: 0 }
    }

    fn due(&self, iteration: u64) -> bool {
        iteration >= self.next
    }

    /// The mechanism is certified at the first checkpoint and every other one after it.
    fn upper_due(&self) -> bool {
        self.count % 2 == 0
    }

    /// A checkpoint at `iteration` took `took` seconds: space the next one.
    fn certified(&mut self, iteration: u64, took: f64) {
        let iterating = (self.since.elapsed().as_secs_f64() - took).max(1e-9);
        let per_iteration = iterating / (iteration - self.since_iteration).max(1) as f64;
        let wait = took * (1.0 - CERTIFICATION_SHARE) / CERTIFICATION_SHARE;
        self.next = iteration + ((wait / per_iteration) as u64).max(MIN_CHECK_EVERY);
        self.count += 1;
        self.spent += took;
        self.since = Instant::now();
        self.since_iteration = iteration;
    }
}

/// The neighbour relation of `incidence` as an explicit graph (for the residual checks).
fn incidence_neighbours(incidence: &Incidence) -> crate::model::Neighbours {
    crate::model::Neighbours::Graph {
        len: incidence.n_obs(),
        edges: incidence.edges().iter().map(|&(a, b)| (a as usize, b as usize)).collect(),
    }
}

/// The certified mechanism of the primal point `x` (x's layout: column i contiguous), kept in
/// `best` where its proven risk is lower; the repair's rounds end by `deadline`.
fn certify_primal(
    cost: &Array2<f64>,
    incidence: &Incidence,
    eps: f64,
    x: &[f32],
    deadline: Option<Instant>,
    best: &mut Best,
) {
    let (n_obs, m) = cost.dim();
    let p = Array2::from_shape_fn((m, n_obs), |(k, i)| (x[i * m + k] as f64).max(0.0));
    let Ok((columns, certified_eps, report)) = certify::repair_far(incidence, eps, p, cost, DEFAULT_TOTAL, deadline)
    else {
        return;
    };
    let upper = certify::bayes_risk_upper(cost, &columns, DEFAULT_TOTAL);
    if upper >= best.upper() {
        return;
    }
    let t = DEFAULT_TOTAL as f64;
    let objective: f64 = columns
        .iter()
        .enumerate()
        .map(|(i, col)| col.iter().enumerate().map(|(k, &w)| cost[[i, k]] * w as f64 / t).sum::<f64>())
        .sum();
    let release = Repaired {
        columns,
        total: DEFAULT_TOTAL,
        certificate: PrivacyCertificate { eps, delta: 0.0, certified_eps, certified_delta: 0.0 },
        report,
        objective,
        candidates: vec![],
        constraints: None,
    };
    best.release = Some((release, upper));
}

#[cfg(test)]
mod tests {
    use super::{best_multiple_bound, Average, BOUND_STEPS};

    #[test]
    fn the_mean_is_of_the_points_since_it_was_cleared_and_only_of_more_than_one() {
        let mut average = Average::new(3);
        assert!(average.mean().is_none());
        average.add(&[1.0, 0.0, 0.0]);
        assert!(average.mean().is_none(), "the mean of one point is the point itself");
        average.add(&[0.0, 1.0, 0.0]);
        average.add(&[0.0, 0.5, 0.5]);
        let mean = average.mean().expect("three points");
        for (m, want) in mean.iter().zip([1.0 / 3.0, 0.5, 1.0 / 6.0]) {
            assert!((m - want).abs() < 1e-6, "{mean:?}");
        }
        average.clear();
        average.add(&[0.0, 0.0, 1.0]);
        average.add(&[0.0, 0.0, 1.0]);
        assert_eq!(average.mean(), Some(&[0.0, 0.0, 1.0][..]), "the points before the clearing are gone");
    }

    #[test]
    fn the_multiple_search_finds_the_peak_of_a_concave_bound_and_never_loses_the_iterate() {
        for peak in [0.0, 0.3, 0.9, 1.0, 1.4] {
            let g = |t: f64| 1.0 - (t - peak) * (t - peak);
            let (found, t) = best_multiple_bound(g);
            assert!(found >= g(1.0) && found <= 1.0, "peak {peak}: {found}");
            assert_eq!(found, g(t), "peak {peak}: the multiple returned proves the bound returned");
            // The search brackets the peak within 1.5·φ^(steps + 1), φ = 0.618…
            let bracket = 1.5 * ((5f64.sqrt() - 1.0) / 2.0).powi(BOUND_STEPS as i32 + 1);
            assert!(found >= 1.0 - bracket * bracket, "peak {peak}: {found}");
        }
        // Nothing proven anywhere but at the iterate itself.
        let only_one = |t: f64| if t == 1.0 { 2.0 } else { f64::NEG_INFINITY };
        assert_eq!(best_multiple_bound(only_one), (2.0, 1.0));
    }
}
