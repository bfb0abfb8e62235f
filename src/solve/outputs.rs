//! Output generation: solve the LP on the outputs the optimum uses, and prove the rest unused.
//!
//! The UBaPP LP couples its |Θ̃| output rows only through the |Y| column sums, and each row lives
//! in the same DP cone. At moderate ε the optimum releases only some of a fine grid's outputs
//! (18 of 66 on the multinomial d = 3, K = 20, simplex resolution 10, Dirichlet(1, 2, 3) prior at
//! ε = 0.5; 42 of 66 at K = 40), so the LP restricted to a set S of outputs — |Θ̃|/|S| times
//! smaller, and an interior point's work grows faster than linearly in the size — usually has the
//! LP's optimum.
//!
//! This is Dantzig–Wolfe column generation with whole output rows as the columns. The
//! restricted LP's multipliers μ give the column prices
//!
//! ```text
//! ν_i = min_{k∈S} ( c[k,i]/scale + Σ_r μ_r A[r, (k,i)] )
//! ```
//!
//! and an output k ∉ S can improve the objective only if some ray p of the DP cone has
//! (c_k/scale − ν)·p < 0. Its pricing LP ([`row_certificate`]) either finds multipliers μ_k ≥ 0
//! of row k's DP rows with c_k/scale − ν + Aᵀμ_k ≥ 0 (the row is proved unused, and μ_k
//! completes the certificate) or a shortfall, and then k joins S. When no output is short the
//! restricted optimum is the LP's: the lifted point, with the multipliers of every DP row, goes to
//! [`super::assess`], whose Lagrangian bound over the *full* LP certifies it without trusting this
//! module.
//!
//! The first S holds the outputs of a feasible mechanism that is good at every ε — the geometric
//! mechanism on the neighbour graph's distance followed by the Bayes remap — and the best
//! constant output (see [`initial_outputs`]).

use super::assess::Judged;
use super::backend::Producer;
use super::polish::{row_certificate, DpRows, PolishError};
use super::progress::{Phase, Progress};
use super::strategy;
use super::{Limits, RawSolution, SolveError, SolverChoice, Status};
use crate::lp::Problem;
use rayon::prelude::*;

/// Output grids smaller than this are solved whole: the rounds would cost more than they save.
const MIN_OUTPUTS: usize = 24;

/// Rounds of "solve the restricted LP, price the other outputs" before giving up.
const MAX_ROUNDS: usize = 12;

/// A pricing shortfall (scaled objective units, the optimum is ≥ 1) above which an output joins
/// the restricted LP. Below it the row's multipliers still lower the certified bound by at most
/// the shortfall, which the assessment measures.
const SHORTFALL_TOLERANCE: f64 = 1e-10;

/// The first set's noisy observation is drawn from at most this many nearest observations (the
/// heuristic's work is |Y| · this · |Θ̃|; the rounds correct what it misses).
const MAX_BALL: usize = 4096;

/// Why output generation reached no answer (the caller then solves the whole LP, and says why).
#[derive(Debug, thiserror::Error)]
pub(crate) enum GenerationStopped {
    /// The time limit ran out before a round finished.
    #[error("the time limit was reached")]
    TimeLimit,
    /// Under a time limit, the first restricted set would take more than half the time left.
    #[error("the first restricted set would take about {needed:.1} s of the {left:.1} s left")]
    NoTime {
        /// Seconds it is expected to take.
        needed: f64,
        /// Seconds left.
        left: f64,
    },
    /// The backend failed on a restricted LP.
    #[error(transparent)]
    Backend(#[from] SolveError),
    /// A restricted LP ended without a solution.
    #[error("the restricted LP of {outputs} outputs ended {status}")]
    NoSolution {
        /// Outputs in the restricted LP.
        outputs: usize,
        /// How it ended.
        status: Status,
    },
    /// The restricted LP's backend gave no multipliers to price the other outputs with.
    #[error("the restricted LP's solver gave no multipliers")]
    NoMultipliers,
    /// An output's pricing LP failed.
    #[error(transparent)]
    Pricing(#[from] PolishError),
}

/// How the restricted solves went, for `solver_detail`.
pub(crate) struct Generated {
    /// The assessed answer on the full LP.
    pub judged: Judged,
    /// Outputs in the last restricted LP.
    pub outputs_used: usize,
    /// Restricted LPs solved.
    pub rounds: usize,
}

/// True when output generation is tried on `problem` ([`applies_to`]).
pub(crate) fn applies(problem: &Problem) -> bool {
    applies_to(problem.program.is_plain(), problem.n_outputs())
}

/// True when output generation is tried on an LP of the `plain` program (the δ and minimax rows
/// couple the outputs) with `n_outputs` outputs: at least [`MIN_OUTPUTS`] of them, and HiGHS for
/// the pricing LPs. Also what `solve --dry-run` reports, before any LP exists.
pub(crate) fn applies_to(plain: bool, n_outputs: usize) -> bool {
    cfg!(feature = "highs") && plain && n_outputs >= MIN_OUTPUTS
}

/// Solve `problem` by output generation with `choice`'s backend on each restricted LP (module
/// docs). An error means the restricted route did not reach an answer and the caller solves the
/// whole LP. When the time limit stops a round, the last finished round's lifted answer is
/// returned, assessed on the full LP, with status [`Status::TimeLimit`] (an error when no round
/// finished).
pub(crate) fn run(
    problem: &Problem,
    choice: SolverChoice,
    limits: Limits,
    polish: bool,
    progress: &Progress,
) -> Result<Generated, GenerationStopped> {
    let started = std::time::Instant::now();
    let n_out = problem.n_outputs();
    let needed = initial_seconds(problem.n_obs(), n_out);
    if let Some(left) = limits.seconds.filter(|&left| needed > left / 2.0) {
        return Err(GenerationStopped::NoTime { needed, left });
    }
    let first_set = progress.time("first output set");
    let dp = DpRows::new(problem);
    let mut in_set = vec![false; n_out];
    for k in initial_outputs(problem, &dp) {
        in_set[k] = true;
    }
    // On a model with symmetries the restricted set is a union of orbits, so that the restricted
    // LP keeps them and HiGHS solves its orbit LP.
    let symmetry = problem.symmetry.as_deref();
    if let Some(group) = symmetry {
        group.close_outputs(&mut in_set);
    }
    drop(first_set);
    // The last finished round's lifted answer (point and multipliers), what a time limit returns.
    let mut finished: Option<(RawSolution, Producer, usize, usize)> = None;
    let stopped = |finished: Option<(RawSolution, Producer, usize, usize)>| match finished {
        Some((raw, solver, outputs_used, rounds)) => {
            let raw = RawSolution {
                status: Status::TimeLimit,
                detail: format!("{}; the time limit stopped output generation after round {rounds}", raw.detail),
                ..raw
            };
            let _certifying = progress.time("certify");
            Ok(Generated { judged: strategy::assess(problem, raw, solver), outputs_used, rounds })
        }
        None => Err(GenerationStopped::TimeLimit),
    };
    for round in 1..=MAX_ROUNDS {
        let keep: Vec<usize> = (0..n_out).filter(|&k| in_set[k]).collect();
        progress.phase(Phase::OutputRound { round, outputs: keep.len(), total: n_out });
        let (mut sub, restriction) = problem.restricted(&keep);
        sub.symmetry = symmetry.and_then(|group| group.restricted(&keep)).map(std::sync::Arc::new);
        // A time limit covers all rounds together.
        let limits = Limits { seconds: limits.remaining_after(started.elapsed()), ..limits };
        if limits.seconds == Some(0.0) {
            return stopped(finished);
        }
        let judged = strategy::run_whole(&sub, choice, limits, polish, progress)?;
        if judged.raw.status == Status::TimeLimit {
            return stopped(finished);
        }
        if !judged.raw.status.has_solution() {
            return Err(GenerationStopped::NoSolution { outputs: keep.len(), status: judged.raw.status });
        }
        let Some(mu_sub) = judged.raw.dp_multipliers.as_deref() else {
            return Err(GenerationStopped::NoMultipliers);
        };
        let pricing = progress.time("pricing the other outputs");
        let mut mu = vec![0.0; problem.n_dp_rows()];
        restriction.lift_multipliers(mu_sub, &mut mu);
        let nu = problem.column_prices(&mu, &keep);
        // Each output's pricing LP on its own (they share nothing), on every core; their
        // multipliers are then taken in the outputs' order.
        let left_out: Vec<usize> = (0..n_out).filter(|&k| !in_set[k]).collect();
        let priced: Vec<_> = left_out
            .par_iter()
            .map(|&k| {
                let d: Vec<f64> = (0..problem.n_obs()).map(|i| problem.cost[[i, k]] / problem.scale - nu[i]).collect();
                // A row whose reduced costs are ≥ 0 with no DP multiplier at all needs no LP.
                (!d.iter().all(|&x| x >= 0.0)).then(|| row_certificate(problem, &dp, k, &d)).transpose()
            })
            .collect();
        let mut short: Vec<(f64, usize)> = Vec::new();
        for (&k, certificate) in left_out.iter().zip(priced) {
            let Some((row_mu, shortfall, _)) = certificate? else { continue };
            for (r, m) in row_mu {
                mu[r] = m;
            }
            if shortfall > SHORTFALL_TOLERANCE {
                short.push((shortfall, k));
            }
        }
        let raw = RawSolution {
            x: restriction.lift_primal(&judged.raw.x),
            dp_multipliers: Some(mu),
            status: judged.raw.status,
            detail: judged.raw.detail.clone(),
        };
        drop(pricing);
        if short.is_empty() || round == MAX_ROUNDS {
            let _certifying = progress.time("certify");
            let judged = strategy::assess(problem, raw, judged.solver);
            progress.gap(judged.assessment.checks.relative_gap);
            return Ok(Generated { judged, outputs_used: keep.len(), rounds: round });
        }
        if progress.is_listening() {
            // The round's certified gap on the full LP (the lifted point is feasible; the
            // multipliers so far bound the optimum), for whoever watches.
            let objective = problem.objective_value(&problem.mechanism_matrix(&raw.x));
            let mu: Vec<f64> =
                raw.dp_multipliers.as_deref().unwrap_or_default().iter().map(|m| m * problem.scale).collect();
            let bound = crate::certify::exact_lagrangian_bound(problem, &mu);
            progress.gap(Some(super::assess::relative_gap(objective, bound)));
        }
        finished = Some((raw, judged.solver, keep.len(), round));
        // The shortest rows first, at most as many as S holds: a round adds what the prices can
        // tell, and the next prices tell the rest.
        short.sort_by(|a, b| b.0.total_cmp(&a.0));
        for &(_, k) in short.iter().take(keep.len().max(4)) {
            in_set[k] = true;
        }
        if let Some(group) = symmetry {
            group.close_outputs(&mut in_set);
        }
    }
    unreachable!("the last round returns")
}

/// The first restricted set: the outputs of the geometric mechanism on the neighbour graph
/// followed by the Bayes remap ([`GeometricRemap::at`] at the LP's ε, a good guess of the outputs
/// the optimum uses) and the best constant output (the optimum as ε → 0).
/// How many outputs the first restricted LP of `problem` holds (closed under its symmetries):
/// what the time estimate scales the LP by.
pub(crate) fn initial_count(problem: &Problem) -> usize {
    let mut in_set = vec![false; problem.n_outputs()];
    for k in initial_outputs(problem, &DpRows::new(problem)) {
        in_set[k] = true;
    }
    if let Some(group) = problem.symmetry.as_deref() {
        group.close_outputs(&mut in_set);
    }
    in_set.iter().filter(|&&b| b).count()
}

/// Work of [`initial_outputs`] (multiply-adds, about |Y|·min(|Y|, MAX_BALL)·|Θ̃|).
pub(crate) fn initial_work(n_obs: usize, n_out: usize) -> f64 {
    n_obs as f64 * n_obs.min(MAX_BALL) as f64 * n_out as f64
}

fn initial_outputs(problem: &Problem, dp: &DpRows) -> Vec<usize> {
    let n_out = problem.n_outputs();
    let mut chosen = vec![false; n_out];
    chosen[crate::lp::best_constant_output(&problem.cost)] = true;
    for &k in &GeometricRemap::at(problem, dp, problem.eps).remap {
        chosen[k] = true;
    }
    (0..n_out).filter(|&k| chosen[k]).collect()
}

/// The geometric mechanism on the neighbour graph followed by the Bayes remap: a noisy
/// observation j drawn with Pr(j | i) = e^{−ε'·dist(i, j)} / Z_i (graph distance), then the
/// output minimising the expected cost Σ_i c\[k,i\] Pr(j | i). Distances beyond the point where
/// e^{−ε'·dist} falls under 1e-9, or past [`MAX_BALL`] nearest observations, are not followed.
/// Balls are walked rather than stored (|Y|² pairs on a small-diameter graph).
struct GeometricRemap<'a> {
    dp: &'a DpRows,
    eps: f64,
    radius: usize,
    /// Z_i.
    z: Vec<f64>,
    /// The output released for each noisy observation j.
    remap: Vec<usize>,
}

impl<'a> GeometricRemap<'a> {
    fn at(problem: &Problem, dp: &'a DpRows, eps: f64) -> GeometricRemap<'a> {
        let (n_obs, n_out) = (problem.n_obs(), problem.n_outputs());
        let radius = (-(1e-9f64).ln() / eps).ceil().min(n_obs as f64) as usize;
        let mut g = GeometricRemap { dp, eps, radius, z: vec![0.0; n_obs], remap: Vec::with_capacity(n_obs) };
        // The graph is undirected, so the ball of j is the set of i reaching it. The balls are
        // walked on every core, a chunk at a time, and summed in j's order (the sums a serial
        // pass makes).
        for_balls(
            n_obs,
            |j| dp.ball(j, radius, MAX_BALL),
            |_, ball| {
                for (i, d) in ball {
                    g.z[i] += (-eps * d as f64).exp();
                }
            },
        );
        let g_ref = &g;
        g.remap = (0..n_obs)
            .into_par_iter()
            .map(|j| {
                let mut blurred = vec![0.0; n_out];
                for (i, w) in g_ref.weights(j) {
                    for (b, c) in blurred.iter_mut().zip(problem.cost.row(i)) {
                        *b += w * c;
                    }
                }
                blurred.iter().enumerate().min_by(|a, b| a.1.total_cmp(b.1)).map_or(0, |(k, _)| k)
            })
            .collect();
        g
    }

    fn ball(&self, j: usize) -> Vec<(usize, usize)> {
        self.dp.ball(j, self.radius, MAX_BALL)
    }

    /// Pr(j | i) for the i in the ball of j.
    fn weights(&self, j: usize) -> impl Iterator<Item = (usize, f64)> + '_ {
        self.ball(j).into_iter().map(move |(i, d)| (i, (-self.eps * d as f64).exp() / self.z[i]))
    }
}

/// The point (P in variable order) of the geometric + remap mechanism at ε/2 — ε-DP up to the
/// truncation of its balls: a neighbour moves every distance by at most one (a factor e^{ε/2})
/// and Z_i by at most the same factor — with zero multipliers: a feasible mechanism for the
/// repair to certify whenever no solver's answer is available.
pub(crate) fn geometric_remap_point(problem: &Problem) -> Vec<f64> {
    let dp = DpRows::new(problem);
    let g = GeometricRemap::at(problem, &dp, problem.eps / 2.0);
    let n_out = problem.n_outputs();
    let mut x = vec![0.0; problem.n_vars()];
    for_balls(
        problem.n_obs(),
        |j| g.weights(j).collect::<Vec<_>>(),
        |j, weights| {
            let k = g.remap[j];
            for (i, w) in weights {
                x[i * n_out + k] += w;
            }
        },
    );
    x
}

/// `walk(j)` for every observation j on every core, a chunk of observations at a time, each
/// result handed to `take(j, result)` in j's order on the calling thread.
fn for_balls<T: Send>(n_obs: usize, walk: impl Fn(usize) -> T + Sync, mut take: impl FnMut(usize, T)) {
    const CHUNK: usize = 256;
    for start in (0..n_obs).step_by(CHUNK) {
        let end = (start + CHUNK).min(n_obs);
        let walked: Vec<T> = (start..end).into_par_iter().map(&walk).collect();
        for (j, t) in (start..end).zip(walked) {
            take(j, t);
        }
    }
}

/// Seconds [`initial_outputs`] (or the geometric + remap fallback) is expected to take: its
/// work at a conservative rate, shared by the cores (multinomial d = 3, K = 100: 1.4e9
/// multiply-adds, the ball walks included, took 7.5–14.8 s on one core of a busy 2-core machine
/// and 11.7 s on both).
pub(crate) fn initial_seconds(n_obs: usize, n_out: usize) -> f64 {
    1e-8 * initial_work(n_obs, n_out) / rayon::current_num_threads() as f64
}
