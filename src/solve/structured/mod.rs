//! The block interior point: a solver for the UBaPP LP's own block-angular structure.
//!
//! Every output row P\[k, ·\] lives in the same DP cone and the rows are coupled only by the |Y|
//! column sums, so a primal-dual interior point needs, per iteration, one sparse factorisation per
//! output (all on the neighbour graph's pattern) and one dense |Y| × |Y| Schur complement on the
//! column sums ([`ipm`]). The whole LP's constraint matrix is never built. The interior point's
//! point and DP multipliers go to the same repricing, active-set polish and assessment as every
//! other backend's ([`super::strategy`]): nothing of the certificate trusts this module.
//!
//! Plain (Bayes, pure ε) programs only; the whole LP (a symmetric model's orbit LP is HiGHS's).

pub(crate) mod ipm;
mod quotient;

use std::time::{Duration, Instant};

use super::backend::{Limits, LpSolver, RawSolution};
use super::progress::{Event, Progress};
use super::{SolveError, SolverChoice, Status, CHECK_TOLERANCE};
use crate::lp::Problem;
use crate::numeric::sparse_cholesky;

/// Bytes the block interior point needs on an LP of `n_obs` observations and `n_out` outputs: the
/// dense Schur complement (one |Y| × |Y| matrix, formed and factorised in place), each worker
/// thread's block of right-hand sides and summing strip (|Y| × 32 each; every thread of the pool
/// may take a column block of the Schur complement), the iterates (x, z, s, λ and their
/// directions), the per-output factors and what the stiff rows may take near the end (more on a
/// band: `band`, its width). Only the strips grow with the threads.
pub(crate) fn memory_bytes(n_obs: usize, n_out: usize, n_dp_rows_per_output: usize, band: Option<f64>) -> u128 {
    let threads = rayon::current_num_threads() as u128;
    let dense = (n_obs as u128).pow(2) * 8 + threads * 2 * (n_obs as u128) * sparse_cholesky::WIDTH as u128 * 8;
    let iterates = 24 * (n_out as u128) * (n_obs as u128 + n_dp_rows_per_output as u128) * 8;
    // A factor of the neighbour graph's pattern: measured 15 nonzeros per observation on the
    // multinomial's lattice at |Y| = 861; 64 leaves room for larger lattices.
    let factors = (n_out as u128) * (n_obs as u128) * 64 * 16;
    dense + iterates + factors + ipm::stiff_allowance(n_obs, n_out, band)
}

/// The order `backends` run in on an LP with or without symmetries: where HiGHS solves a
/// symmetric model's orbit LP (|G| times smaller, measured faster than the block interior point
/// on the whole LP), HiGHS goes first and the block interior point becomes its fallback.
pub(crate) fn order_for(symmetric: bool, backends: &[SolverChoice]) -> Vec<SolverChoice> {
    let mut order = backends.to_vec();
    let highs_first = symmetric && order.iter().any(|c| c.is_highs());
    if let (true, Some(at)) = (highs_first, order.iter().position(|&c| c == SolverChoice::BlockIpm)) {
        order.remove(at);
        let after = order.iter().position(|c| c.is_highs()).map_or(order.len(), |p| p + 1);
        order.insert(after, SolverChoice::BlockIpm);
    }
    order
}

/// Seconds one iteration of the block interior point takes (the estimate's `block_ipm_seconds`):
/// what it expects of its first iteration under a time limit. `band`: the half-width w of a band
/// (1 on a chain), `None` on a graph.
///
/// - On a graph, fitted to the phases `solve --json` reports on 2 cores (block factorisations and
///   Schur forming; its dense factorisation; the rest of an iteration), per iteration, of the
///   multinomial K = 40 (861 observations, 47 outputs: 0.070 s, 0.009 s, 0.053 s) and K = 60
///   (1891, 55: 0.353 s, 0.056 s, 0.168 s).
/// - On a band the factor holds |Y|·(w + 1) nonzeros, so forming the Schur complement takes
///   about |Θ̃|·|Y|²·(w + 1) multiply-adds, and the vector work grows with the |Y|·w rows: fitted
///   to the whole solves of the clipped Poisson sums of 60 and 200 records, caps 3 and 5, and
///   150 records, cap 8 (0.013, 0.064, 0.19 and 0.32 s an iteration on 2 cores, each within
///   0.97–1.11×; the lattice's formula was 0.75–1.6×).
pub(crate) fn block_ipm_iteration_seconds(n_obs: f64, n_out: f64, band: Option<f64>) -> f64 {
    let dense = 1.0e-11 * n_obs.powi(3);
    match band {
        None => {
            let factor_nonzeros = 15.0 * n_obs * (n_obs / 861.0).sqrt();
            let forming = 5.7e-11 * n_out * n_obs * factor_nonzeros + 1.0e-6 * n_out * n_obs;
            let solving = 1.5e-6 * n_out * n_obs;
            forming + dense + solving
        }
        Some(width) => {
            let forming = 2.8e-11 * n_out * n_obs * n_obs * (width + 1.0);
            let solving = 6.0e-7 * n_out * n_obs * width;
            forming + dense + solving
        }
    }
}

/// A band's half-width w as the estimate's fits take it ([`block_ipm_iteration_seconds`] and the
/// estimate's iteration count): |E|/|Y| neighbour pairs an observation (a clipped Poisson sum's
/// cap, less its ends; 1 on a chain), at least 1.
pub(crate) fn band_width(n_obs: f64, edges: f64) -> f64 {
    (edges / n_obs.max(1.0)).max(1.0)
}

/// [`band_width`] of `neighbours` on `n_obs` observations, `None` on a graph.
fn band_of(neighbours: &crate::model::Neighbours, n_obs: usize) -> Option<f64> {
    match neighbours {
        crate::model::Neighbours::Graph { .. } => None,
        _ => Some(band_width(n_obs as f64, neighbours.edge_count() as f64)),
    }
}

/// `problem` (plain) in the interior point's terms, its costs divided by their largest magnitude
/// (returned beside it to scale the multipliers back).
pub(crate) fn block_lp(problem: &Problem) -> (ipm::BlockLp, f64) {
    let (n, m) = (problem.n_obs(), problem.n_outputs());
    let scaled = problem.scaled_costs();
    let c_max = scaled.iter().fold(0.0f64, |a, v| a.max(v.abs())).max(f64::MIN_POSITIVE);
    let mut c = vec![0.0; m * n];
    for i in 0..n {
        for k in 0..m {
            c[k * n + i] = scaled[problem.var(k, i)] / c_max;
        }
    }
    // DP row order of the LP: per edge (a, b), "P[a] ≤ e^ε P[b]" then the reverse.
    let rows: Vec<(usize, usize)> = problem.neighbours.edges().flat_map(|(a, b)| [(a, b), (b, a)]).collect();
    (ipm::BlockLp { m, n, c, rows, rho: problem.eps.exp() }, c_max)
}

/// The block interior point with its limits.
pub(crate) struct BlockIpmSolver {
    pub limits: Limits,
    pub progress: Progress,
}

/// Relative duality gap at which the interior point stops (the certificate is ours).
const GAP_TOLERANCE: f64 = 1e-10;
/// Largest primal and dual residual at which it stops.
const FEASIBILITY_TOLERANCE: f64 = 1e-10;
/// Largest residual of an iterate the interior point stopped at (numerical limit) that is still
/// offered as optimal.
const STALLED_FEASIBILITY: f64 = 1e-9;
/// The gap at which the interior point stops once it has split stiff rows off (with residuals
/// within [`FEASIBILITY_TOLERANCE`]: a sum of 150 records, cap 10, ε = 0.3 stopped at 2.8e-8
/// with a primal residual of 6.7e-10, within the 1e-9 once allowed, and its certified gap came
/// out at 2.3e-7; four more iterations took the residual to 9.4e-11 and the certificate to
/// 3.8e-8): a third of what the certificate checks. There an iteration
/// costs 3–30 plain ones (the poll of 100: 43–250 s against 7 s; a clipped Poisson sum of 80
/// records, cap 6: 0.08 s of stiff rows against 0.1 s) and gives the gap 1.1–2.5×; the poll's
/// certified gap came out at its interior point's (2.58e-8 from 2.59e-8). On a sum of 40 records,
/// cap 8, ε = 1, going on to the plain tolerance took 103 iterations and 10.6 s against 61 and 4.3
/// s, for a certified 3.3e-10 against 2.4e-8.
const END_GAME_GAP: f64 = 3e-8;
/// Iteration cap without a caller's limit.
const MAX_ITERATIONS: u32 = 200;

impl LpSolver for BlockIpmSolver {
    fn name(&self) -> SolverChoice {
        SolverChoice::BlockIpm
    }

    fn solve(&self, problem: &Problem) -> Result<RawSolution, SolveError> {
        if !problem.program.is_plain() {
            return Err(SolveError::NotApplicable {
                choice: SolverChoice::BlockIpm,
                requirement: "solves the plain Bayes program only (no delta, objective = \"bayes\", no [constraints])",
                model: "this LP".into(),
            });
        }
        let (n, m) = (problem.n_obs(), problem.n_outputs());
        let (lp, c_max) = block_lp(problem);
        let band = band_of(&problem.neighbours, n);
        let progress = self.progress.clone();
        let settings = ipm::Settings {
            gap_tolerance: GAP_TOLERANCE,
            feasibility_tolerance: FEASIBILITY_TOLERANCE,
            end_game_gap: END_GAME_GAP,
            end_game_feasibility: FEASIBILITY_TOLERANCE,
            max_iterations: self.limits.iterations.unwrap_or(MAX_ITERATIONS),
            deadline: self.limits.seconds.map(|s| Instant::now() + Duration::from_secs_f64(s)),
            // The estimate is a 2-core machine's at rest; twice it covers a busy one.
            first_iteration_seconds: 2.0 * block_ipm_iteration_seconds(n as f64, m as f64, band),
            on_iteration: Box::new(move |iteration| {
                progress.report(Event::Iteration { solver: "block-ipm", iteration: u64::from(iteration) })
            }),
            threads: ipm::worker_threads(m),
            stiff_allowance: ipm::stiff_allowance(n, m, band),
            end_game_above: 0,
        };
        let result = ipm::solve(&lp, &settings);
        let times = result.times;
        self.progress.add_time("block factorisations", times.block_factorisations);
        self.progress.add_time("Schur complement forming", times.schur_forming);
        if times.stiff_rows > 0.0 {
            // Only where rows were split off (near the end, on the few graphs that need it).
            self.progress.add_time("stiff rows", times.stiff_rows);
        }
        self.progress.add_time("Schur complement factorisation", times.schur_factorisation);

        let mut x = vec![0.0; problem.n_vars()];
        for k in 0..m {
            for i in 0..n {
                x[problem.var(k, i)] = result.x[k * n + i];
            }
        }
        let ne = lp.rows.len();
        let mut mu = vec![0.0; problem.n_dp_rows()];
        for k in 0..m {
            for (e, &l) in result.lambda[k * ne..(k + 1) * ne].iter().enumerate() {
                mu[e * m + k] = l * c_max;
            }
        }
        // Near the end the interior point's linear algebra reaches its limit (μ ~ 1e-12): an
        // iterate it stops at within the gap that `optimal` asks of our checks is offered as
        // optimal, and those checks decide (Judged::status never says optimal without them).
        let within = result.gap <= CHECK_TOLERANCE
            && result.primal_residual <= STALLED_FEASIBILITY
            && result.dual_residual <= STALLED_FEASIBILITY;
        let status = match result.ending {
            ipm::Ending::Converged => Status::Optimal,
            ipm::Ending::Stalled | ipm::Ending::EndGame if within => Status::Optimal,
            ipm::Ending::Stalled | ipm::Ending::EndGame => Status::NearOptimal,
            ipm::Ending::IterationLimit => Status::IterationLimit,
            ipm::Ending::TimeLimit => Status::TimeLimit,
        };
        let detail = format!(
            "block interior point: {} after {} iterations (gap {:.1e}, residuals {:.1e} / {:.1e})",
            match result.ending {
                ipm::Ending::Converged => "converged",
                ipm::Ending::Stalled => "stopped at its numerical limit",
                ipm::Ending::EndGame => "stopped in its end game (stiff rows split off)",
                ipm::Ending::IterationLimit => "iteration limit",
                ipm::Ending::TimeLimit => "time limit",
            },
            result.iterations,
            result.gap,
            result.primal_residual,
            result.dual_residual
        );
        Ok(RawSolution { x, dp_multipliers: Some(mu), status, detail })
    }
}
