//! Multipliers rebuilt row by row: a certificate for a primal point whose solver's multipliers are
//! too loose to certify it.
//!
//! The Lagrangian bound Σ_i min_k (c\[k,i\]/scale + (Aᵀμ)\[k,i\]) takes, in every column, the
//! *least* reduced cost over all outputs, so small dual infeasibilities in a solver's μ (HiGHS
//! after crossover, a lifted orbit LP's multipliers) all pull it down: 1.3e-6 of relative gap on
//! a 3-category poll of 60 records at simplex resolution 8, ε = 1, where the primal vertex itself
//! is optimal to 1e-12.
//!
//! The column-sum multipliers ν are read from the primal point instead, by complementary
//! slackness: a variable P\[k,i\] > 0 of an optimal point has reduced cost 0, so
//! ν_i = Σ_k P\[k,i\] · (c\[k,i\]/scale + (Aᵀμ)\[k,i\]) (the column sums to 1, so this is a
//! P-weighted mean over the outputs that release after y_i). Each output row whose reduced costs
//! c_k/scale − ν + Aᵀμ_k are not all ≥ 0 then gets new multipliers μ_k from its own pricing LP
//! ([`row_certificate`]: the least total shortfall σ_k with c_k/scale − ν + Aᵀμ_k ≥ −σ_k), so the
//! bound is at least Σν − Σ_i max_k σ\[k,i\]. Nothing here is trusted: the new μ goes to
//! [`super::assess`], whose Lagrangian bound over the full LP decides.

use std::time::{Duration, Instant};

use super::polish::{row_certificate, DpRows, PolishError};
use crate::lp::Problem;

/// One output row's new multipliers: (DP row, μ).
type RowMultipliers = Vec<(usize, f64)>;

/// What the repricing built.
pub(crate) struct Repriced {
    /// Multipliers of every DP row (scaled units).
    pub dp_multipliers: Vec<f64>,
    /// Output rows whose multipliers came from their pricing LP (the others kept the solver's,
    /// which certified the row as well or better).
    pub rows_priced: usize,
    /// Output rows whose pricing LP failed (they kept the solver's multipliers).
    pub rows_failed: usize,
    /// Output rows left unpriced when the time budget ran out (they kept the solver's multipliers).
    pub rows_unpriced: usize,
}

/// Rebuild the DP multipliers of the plain program's point `x` from `mu` (module docs), within
/// `budget`.
pub(crate) fn reprice(problem: &Problem, x: &[f64], mu: &[f64], budget: Duration) -> Result<Repriced, PolishError> {
    if !problem.program.is_plain() {
        return Err(PolishError::NotPlain);
    }
    let started = Instant::now();
    let (n_obs, n_out) = (problem.n_obs(), problem.n_outputs());
    // ν_i: the P-weighted mean of column i's reduced costs under the solver's μ.
    let mut nu = vec![0.0; n_obs];
    let mut weight = vec![0.0; n_obs];
    let reduced = problem.reduced_costs(mu, &(0..n_out).collect::<Vec<_>>());
    for (k, row) in reduced.iter().enumerate() {
        for i in 0..n_obs {
            let p = x[problem.var(k, i)].max(0.0);
            nu[i] += p * row[i];
            weight[i] += p;
        }
    }
    for (n, w) in nu.iter_mut().zip(&weight) {
        if *w > 0.0 {
            *n /= w;
        }
    }
    let dp = DpRows::new(problem);
    let mut out = mu.iter().map(|m| m.max(0.0)).collect::<Vec<f64>>();
    let short: Vec<usize> = (0..n_out).filter(|&k| reduced[k].iter().zip(&nu).any(|(r, n)| r - n < 0.0)).collect();
    // The rows' pricing LPs are independent: split over the machine's cores. Past the budget the
    // remaining rows keep the solver's multipliers (valid, only looser).
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(short.len().max(1));
    let priced: Vec<(usize, Option<RowMultipliers>)> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|t| {
                let (dp, nu, short) = (&dp, &nu, &short);
                scope.spawn(move || {
                    let mut done = Vec::new();
                    for &k in short.iter().skip(t).step_by(threads) {
                        if started.elapsed() > budget {
                            break;
                        }
                        let d: Vec<f64> = (0..n_obs).map(|i| problem.cost[[i, k]] / problem.scale - nu[i]).collect();
                        done.push((k, row_certificate(problem, dp, k, &d).ok().map(|(row_mu, _, _)| row_mu)));
                    }
                    done
                })
            })
            .collect();
        workers.into_iter().flat_map(|w| w.join().unwrap_or_default()).collect()
    });
    // A row's new multipliers replace the solver's only where they pull the columns less far
    // below ν: the bound is at least Σν − Σ_i Σ_k max(0, ν_i − reduced\[k,i\]), and each row's
    // share of that sum is its own.
    let (mut rows_priced, mut rows_failed) = (0, 0);
    let e_eps = problem.eps.exp();
    let deficit = |reduced: &[f64]| -> f64 { reduced.iter().zip(&nu).map(|(r, n)| (n - r).max(0.0)).sum() };
    for (k, row_mu) in &priced {
        let Some(row_mu) = row_mu else {
            rows_failed += 1;
            continue;
        };
        let mut reduced_new: Vec<f64> = (0..n_obs).map(|i| problem.cost[[i, *k]] / problem.scale).collect();
        for &(r, m) in row_mu {
            let (e, reverse) = ((r / n_out) / 2, (r / n_out) % 2 == 1);
            let (a, b) = dp.edges[e];
            let (lhs, rhs) = if reverse { (b, a) } else { (a, b) };
            reduced_new[lhs] += m;
            reduced_new[rhs] -= e_eps * m;
        }
        if deficit(&reduced_new) < deficit(&reduced[*k]) {
            for &(r, m) in row_mu {
                out[r] = m;
            }
            rows_priced += 1;
        }
    }
    let rows_unpriced = short.len() - priced.len();
    Ok(Repriced { dp_multipliers: out, rows_priced, rows_failed, rows_unpriced })
}
