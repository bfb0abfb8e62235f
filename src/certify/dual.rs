//! The Lagrangian lower bound of the UBaPP LP (`lp::Problem::lagrangian_bound`, its float form) computed so that it is a theorem
//! about the LP as stored, not a floating-point estimate.
//!
//! Weak duality: for any multipliers μ ≥ 0 of the non-equality rows and every feasible P,
//!
//! ```text
//! Σ_{k,i} c[k,i] P[k,i]  ≥  g(μ) = Σ_i min_k ( c[k,i] + Σ_r μ_r A[r, (k,i)] )
//! ```
//!
//! (relaxing the DP rows leaves one simplex per column; see the LP's docs for the (ε, δ) and
//! minimax forms). Here the costs c, the risk matrix W, δ and μ are taken as the exact rationals
//! that their floats are, and e^ε is replaced by a rigorous upper bound E ≥ e^ε ([`exp_upper`]):
//! every P with P\[k,a\] ≤ e^ε P\[k,b\] also has P\[k,a\] ≤ E·P\[k,b\], so the LP with E relaxes the
//! true one and its g bounds the true optimum too — for any released mechanism, in particular the
//! certified artifact (whose ratios are checked exactly against a *lower* bound of e^ε).
//!
//! Interval arithmetic with directed rounding: every reduced cost is accumulated with each
//! operation stepped one float towards −∞ ([`next_down`]; a correctly rounded result is within half
//! an ulp of the exact one), products that are subtracted are stepped up, so each computed value
//! is ≤ its exact counterpart; the minimum of lower bounds bounds the minimum, and the final sum is
//! rounded down again. The cost is one pass over the constraint matrix, like the float bound.

use crate::certify::exact::{exp_upper, next_down, next_up};
use ndarray::Array2;

use crate::lp::{Incidence, Problem, Support};

/// A float ≤ the exact Lagrangian bound g(μ) of `problem` with e^ε replaced by an upper bound:
/// a proven lower bound on the LP's optimum (unscaled units; `mu` as for
/// `Problem::lagrangian_bound`, negative or NaN entries read as 0). −∞ when nothing can be
/// proven (an overflow).
pub(crate) fn exact_lagrangian_bound(problem: &Problem, mu: &[f64]) -> f64 {
    let (n_obs, n_out) = (problem.n_obs(), problem.n_outputs());
    assert_eq!(mu.len(), problem.n_rows() - n_obs, "one multiplier per non-equality row");
    let e_up = exp_upper(problem.eps);
    if !e_up.is_finite() {
        return f64::NEG_INFINITY;
    }
    let clip = |m: f64| if m > 0.0 { m } else { 0.0 }; // NaN → 0
                                                       // Minimax: the Bayes costs under the normalised least-favourable weights w (floats, summing to
                                                       // s ≈ 1): Σ_j w_j R_j(P) ≤ s·max_j R_j(P), so the minimax value is ≥ g_w / s.
    let weights: Option<Vec<f64>> = problem.program.risk_rows.as_ref().map(|w| {
        let off = problem.constraint_row0() - n_obs - w.nrows();
        let mut wts: Vec<f64> = mu[off..].iter().map(|&m| clip(m)).collect();
        let total: f64 = wts.iter().sum();
        if total > 0.0 && total.is_finite() {
            wts.iter_mut().for_each(|x| *x /= total);
        } else {
            wts.fill(1.0 / w.nrows() as f64);
        }
        wts
    });
    let edges: Vec<(usize, usize)> = problem.neighbours.edges().collect();
    // incidence[i] = the DP-row blocks (own, other) of each edge at i: `own` bounds P[k,i] above.
    let mut incidence: Vec<Vec<(usize, usize)>> = vec![Vec::new(); n_obs];
    for (e, &(a, b)) in edges.iter().enumerate() {
        incidence[a].push((2 * e, 2 * e + 1));
        incidence[b].push((2 * e + 1, 2 * e));
    }
    // `[constraints]` rows Σ a·P ≤ b: their terms μ_r·a join the reduced costs (lower bounds,
    // summed downwards), and −Σ_r μ_r b_r (each product rounded up before it is subtracted) the bound.
    let mut bound = 0.0f64;
    let mut extra: Vec<f64> = Vec::new();
    if let Some(rows) = &problem.program.constraints {
        extra = vec![0.0; problem.n_p()];
        let off = problem.constraint_row0() - n_obs;
        for (row, &m) in rows.rows.iter().zip(&mu[off..]) {
            let m = clip(m);
            if m == 0.0 {
                continue;
            }
            for &(v, a) in &row.terms {
                extra[v] = next_down(extra[v] + next_down(m * a));
            }
            bound = next_down(bound - next_up(m * row.rhs));
        }
    }
    let mut reduced = vec![0.0f64; n_out];
    for i in 0..n_obs {
        // Lower bounds of the costs of column i.
        match (&problem.program.risk_rows, &weights) {
            (Some(w), Some(wts)) => {
                reduced.fill(0.0);
                for (j, &wj) in wts.iter().enumerate() {
                    if wj == 0.0 {
                        continue;
                    }
                    for (k, r) in reduced.iter_mut().enumerate() {
                        *r = next_down(*r + next_down(wj * w[[j, i * n_out + k]]));
                    }
                }
            }
            _ => {
                for (k, r) in reduced.iter_mut().enumerate() {
                    *r = problem.cost[[i, k]];
                }
            }
        }
        if !extra.is_empty() {
            for (k, r) in reduced.iter_mut().enumerate() {
                *r = next_down(*r + extra[i * n_out + k]);
            }
        }
        let multiplier = |r: usize| clip(mu[r]);
        bound = next_down(bound + column_minimum(&mut reduced, incidence[i].iter().copied(), &multiplier, n_out, e_up));
    }
    if let Some(delta) = problem.program.delta {
        // − δ Σ_p max(ν_p, max_k μ_(p,k)), each product rounded up before it is subtracted.
        let n_dp = problem.n_dp_rows();
        for p in 0..2 * edges.len() {
            let top = (0..n_out).map(|k| clip(mu[p * n_out + k])).fold(clip(mu[n_dp + p]), f64::max);
            bound = next_down(bound - next_up(delta * top));
        }
    }
    if let Some(wts) = &weights {
        let (mut s_lo, mut s_hi) = (0.0f64, 0.0f64);
        for &w in wts {
            s_lo = next_down(s_lo + w);
            s_hi = next_up(s_hi + w);
        }
        bound = next_down(bound / if bound >= 0.0 { s_hi } else { s_lo });
    }
    if bound.is_nan() {
        f64::NEG_INFINITY
    } else {
        bound
    }
}

/// A float ≥ the exact objective of integer weights `columns[i][k]` (each column summing to
/// `total`) under the stored costs: Σ_{k,i} c\[k,i\] w\[k,i\] / T for the Bayes program, or
/// max_j Σ W\[j, (k,i)\] w\[k,i\] / T for minimax, every product and sum rounded up. With
/// [`exact_lagrangian_bound`] below it, the released mechanism's distance from the optimum is
/// bounded by a theorem, not by two float estimates.
pub(crate) fn objective_upper(problem: &Problem, columns: &[Vec<u64>], total: u64) -> f64 {
    let n_out = problem.n_outputs();
    let weighted = |coef: &dyn Fn(usize, usize) -> f64| {
        let mut sum = 0.0f64;
        for (i, col) in columns.iter().enumerate() {
            for (k, &w) in col.iter().enumerate() {
                if w != 0 {
                    sum = next_up(sum + next_up(coef(k, i) * w as f64));
                }
            }
        }
        // w as f64 is exact for w ≤ 2^53; dividing by T rounds once more.
        next_up(sum / total as f64)
    };
    match &problem.program.risk_rows {
        None => weighted(&|k, i| problem.cost[[i, k]]),
        Some(w) => (0..w.nrows()).map(|j| weighted(&|k, i| w[[j, i * n_out + k]])).fold(f64::NEG_INFINITY, f64::max),
    }
}

/// min_k of lower bounds of the reduced costs c\[k,i\] + Σ_r μ_r A\[r, (k,i)\] of column i, given
/// lower bounds of c\[·,i\] in `reduced` (overwritten), the DP-row blocks of the edges at i and
/// the multiplier of each DP row (≥ 0). For the edge (a, b) and output k the DP rows add
/// μ₀ − E·μ₁ at a and μ₁ − E·μ₀ at b (μ₀: P\[k,a\] ≤ e^ε P\[k,b\], μ₁: the reverse).
fn column_minimum(
    reduced: &mut [f64],
    blocks: impl Iterator<Item = (usize, usize)>,
    mu: &impl Fn(usize) -> f64,
    n_out: usize,
    e_up: f64,
) -> f64 {
    for (own, other) in blocks {
        for (k, r) in reduced.iter_mut().enumerate() {
            add_dp_rows(r, mu(own * n_out + k), mu(other * n_out + k), e_up);
        }
    }
    reduced.iter().copied().fold(f64::INFINITY, f64::min)
}

/// A lower bound of `r` + μ_own − E·μ_other (the two DP rows of one edge and output at one end),
/// from a lower bound `r`, each rounding downwards.
fn add_dp_rows(r: &mut f64, m_own: f64, m_other: f64, e_up: f64) {
    if m_own != 0.0 {
        *r = next_down(*r + m_own);
    }
    if m_other != 0.0 {
        *r = next_down(*r - next_up(e_up * m_other));
    }
}

/// Multipliers (unscaled, ≥ 0) of DP rows beyond a [`Support`], each row listed at both of its
/// entries: at column i, (k, μ_own, μ_other) adds μ_own (a row P\[k,i\] ≤ e^ε P\[k,j\]) and
/// subtracts e^ε μ_other (a row P\[k,j\] ≤ e^ε P\[k,i\]) to the reduced cost of (k, i). A row's two
/// listings carry the same float, so the bound is g of one vector μ ≥ 0.
#[derive(Debug, Clone, Default)]
pub(crate) struct TailRows {
    /// Start of column i's entries (|Y| + 1 offsets; empty: no rows at all).
    start: Vec<usize>,
    entries: Vec<(u32, f64, f64)>,
}

impl TailRows {
    /// The rows `rows` (i, j, k, μ): P\[k,i\] ≤ e^ε P\[k,j\] with multiplier μ, over `n_obs` columns.
    pub(crate) fn new(n_obs: usize, rows: &[(u32, u32, u32, f64)]) -> TailRows {
        let mut start = vec![0usize; n_obs + 1];
        for &(i, j, _, _) in rows {
            start[i as usize + 1] += 1;
            start[j as usize + 1] += 1;
        }
        for c in 0..n_obs {
            start[c + 1] += start[c];
        }
        let mut fill = start.clone();
        let mut entries = vec![(0u32, 0.0, 0.0); start[n_obs]];
        for &(i, j, k, mu) in rows {
            entries[fill[i as usize]] = (k, mu, 0.0);
            fill[i as usize] += 1;
            entries[fill[j as usize]] = (k, 0.0, mu);
            fill[j as usize] += 1;
        }
        TailRows { start, entries }
    }

    /// Column i's entries.
    fn at(&self, i: usize) -> &[(u32, f64, f64)] {
        match self.start.len() {
            0 => &[],
            _ => &self.entries[self.start[i]..self.start[i + 1]],
        }
    }
}

/// [`exact_plain_bound`] with multipliers on the rows of a [`Support`] and on `tails` only
/// (every other DP row's multiplier 0): μ_r = `scale`·λ_r for the support's row r (negative or
/// NaN read as 0). Every output is priced in each column's minimum, kept or not.
pub(crate) fn exact_support_bound(
    cost: &Array2<f64>,
    incidence: &Incidence,
    support: &Support,
    eps: f64,
    lam: &[f32],
    scale: f64,
    tails: Option<&TailRows>,
) -> f64 {
    assert_eq!(lam.len(), support.rows(), "one multiplier per kept DP row");
    let outputs = support.outputs();
    proven_column_sum(cost, incidence, eps, lam, scale, |i, reduced, multiplier, e_up| {
        for &(k, own, other) in tails.map_or(&[][..], |t| t.at(i)) {
            add_dp_rows(&mut reduced[k as usize], own.max(0.0), other.max(0.0), e_up);
        }
        for (slot, row_own, row_other) in support.rows_at(incidence, i) {
            let k = outputs[slot as usize] as usize;
            add_dp_rows(&mut reduced[k], multiplier(row_own), multiplier(row_other), e_up);
        }
    })
}

/// [`exact_lagrangian_bound`] of the plain program (Bayes risk, pure ε) without the LP: costs
/// `cost` (C\[i, k\], unscaled), the DP rows of `incidence`, and multipliers μ_r = `scale`·λ_r
/// (λ in single precision, as the anytime route keeps them; negative or NaN read as 0). The same
/// theorem and the same directed rounding, column by column on every core (each partial sum is
/// rounded down, and so is their sum). −∞ when nothing can be proven.
pub(crate) fn exact_plain_bound(cost: &Array2<f64>, incidence: &Incidence, eps: f64, lam: &[f32], scale: f64) -> f64 {
    let n_out = cost.ncols();
    assert_eq!(lam.len(), 2 * incidence.n_edges() * n_out, "one multiplier per DP row");
    proven_column_sum(cost, incidence, eps, lam, scale, |i, reduced, multiplier, e_up| {
        for &(own, other) in incidence.at(i) {
            let (own, other) = (own as usize * n_out, other as usize * n_out);
            for (k, r) in reduced.iter_mut().enumerate() {
                add_dp_rows(r, multiplier(own + k), multiplier(other + k), e_up);
            }
        }
    })
}

/// Σ_i min_k of lower bounds of column i's reduced costs, every partial sum rounded down, on every
/// core: `adjust(i, reduced, multiplier, e_up)` lowers column i's costs (given in `reduced`) by
/// its DP rows, `multiplier(r)` being μ_r = `scale`·λ_r clipped at 0 and `e_up` ≥ e^ε. −∞ when
/// nothing can be proven.
fn proven_column_sum(
    cost: &Array2<f64>,
    incidence: &Incidence,
    eps: f64,
    lam: &[f32],
    scale: f64,
    adjust: impl Fn(usize, &mut [f64], &dyn Fn(usize) -> f64, f64) + Sync,
) -> f64 {
    use rayon::prelude::*;
    let e_up = exp_upper(eps);
    if !e_up.is_finite() {
        return f64::NEG_INFINITY;
    }
    let multiplier = |r: usize| {
        let m = lam[r] as f64 * scale;
        if m > 0.0 {
            m
        } else {
            0.0
        }
    };
    let bound = (0..incidence.n_obs())
        .into_par_iter()
        .fold(
            || (0.0f64, vec![0.0f64; cost.ncols()]),
            |(sum, mut reduced), i| {
                reduced.copy_from_slice(cost.row(i).as_slice().expect("a standard-layout cost matrix"));
                adjust(i, &mut reduced, &multiplier, e_up);
                let column = reduced.iter().copied().fold(f64::INFINITY, f64::min);
                (next_down(sum + column), reduced)
            },
        )
        .map(|(sum, _)| sum)
        .reduce(|| 0.0, |a, b| next_down(a + b));
    if bound.is_nan() {
        f64::NEG_INFINITY
    } else {
        bound
    }
}

/// A float ≤ the non-private Bayes risk Σ_i min_k c\[i,k\] of costs `cost` (C\[i, k\]): the
/// Lagrangian bound at zero multipliers, every partial sum rounded down. No ε-DP mechanism on
/// these grids does better than the non-private Bayes rule.
pub(crate) fn non_private_bound(cost: &Array2<f64>) -> f64 {
    let bound = cost
        .rows()
        .into_iter()
        .map(|row| row.iter().copied().fold(f64::INFINITY, f64::min))
        .fold(0.0, |sum, column| next_down(sum + column));
    if bound.is_nan() {
        f64::NEG_INFINITY
    } else {
        bound
    }
}

/// A float ≥ Σ_{k,i} c\[k,i\] w\[k,i\] / T for integer weights `columns[i][k]` (each column
/// summing to `total`) under costs C\[i, k\], every product and sum rounded up (the Bayes
/// program's [`objective_upper`], without the LP; on every core).
pub(crate) fn bayes_risk_upper(cost: &Array2<f64>, columns: &[Vec<u64>], total: u64) -> f64 {
    use rayon::prelude::*;
    let sum = columns
        .par_iter()
        .enumerate()
        .map(|(i, col)| {
            let mut s = 0.0f64;
            for (k, &w) in col.iter().enumerate() {
                if w != 0 {
                    s = next_up(s + next_up(cost[[i, k]] * w as f64));
                }
            }
            s
        })
        .reduce(|| 0.0, |a, b| next_up(a + b));
    next_up(sum / total as f64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    use ndarray::array;
    use num_bigint::BigInt;
    use num_rational::BigRational;

    use crate::model::Neighbours;

    fn rational(x: f64) -> BigRational {
        BigRational::from_float(x).expect("finite")
    }

    /// g(μ) in exact rationals for the plain program, with E = the rational value of `e_up`.
    fn g_rational(problem: &Problem, mu: &[f64], e_up: f64) -> BigRational {
        let (n_obs, n_out) = (problem.n_obs(), problem.n_outputs());
        let e = rational(e_up);
        let edges: Vec<(usize, usize)> = problem.neighbours.edges().collect();
        let m = |r: usize| rational(mu[r].max(0.0));
        let mut total = BigRational::from_integer(BigInt::from(0));
        for i in 0..n_obs {
            let mut best: Option<BigRational> = None;
            for k in 0..n_out {
                let mut r = rational(problem.cost[[i, k]]);
                for (ed, &(a, b)) in edges.iter().enumerate() {
                    let (m0, m1) = (m(2 * ed * n_out + k), m((2 * ed + 1) * n_out + k));
                    if a == i {
                        r += m0.clone() - e.clone() * m1.clone();
                    }
                    if b == i {
                        r += m1 - e.clone() * m0;
                    }
                }
                best = Some(match best {
                    Some(b) if b <= r => b,
                    _ => r,
                });
            }
            total += best.expect("an output");
        }
        total
    }

    #[test]
    fn directed_bound_is_below_the_rational_one_and_close() {
        use rand::{rngs::StdRng, RngExt, SeedableRng};
        let mut rng = StdRng::seed_from_u64(11);
        for trial in 0..20 {
            let (n_obs, n_out) = (5 + trial % 3, 4 + trial % 4);
            let cost = ndarray::Array2::from_shape_fn((n_obs, n_out), |_| rng.random::<f64>() * 1e-2);
            let neighbours = Neighbours::Chain { len: n_obs };
            let problem = Problem::new(Arc::new(cost), neighbours, 0.3 + trial as f64 * 0.2);
            let mu: Vec<f64> = (0..problem.n_dp_rows())
                .map(|_| if rng.random::<bool>() { 0.0 } else { rng.random::<f64>() * 1e-3 })
                .collect();
            let proven = exact_lagrangian_bound(&problem, &mu);
            let exact = g_rational(&problem, &mu, exp_upper(problem.eps));
            assert!(rational(proven) <= exact, "trial {trial}: directed bound above the rational value");
            let float = problem.lagrangian_bound(&mu);
            assert!((float - proven).abs() <= 1e-12 * float.abs().max(1e-3), "trial {trial}: {float} vs {proven}");
        }
    }

    #[test]
    fn hand_solved_two_by_two() {
        // c = [[0, 1], [1, 0]] (C[i, k]), one edge, e^ε multipliers μ chosen by hand: the optimum at
        // ε = ln 2 is 2/3 (P = [[2/3, 1/3], [1/3, 2/3]]) and μ = 1/3 on P[0,0] ≤ e^ε P[0,1] and on
        // P[1,1] ≤ e^ε P[1,0] certifies it: reduced costs equal 1/3 on both columns' best outputs.
        let cost = array![[0.0, 1.0], [1.0, 0.0]];
        let problem = Problem::new(Arc::new(cost), Neighbours::Chain { len: 2 }, 2f64.ln());
        // DP rows: block (e = 0, d = 0) is P[k,0] ≤ e^ε P[k,1] for k = 0, 1; block d = 1 the reverse.
        let third = 1.0 / 3.0;
        let mu = vec![third, 0.0, 0.0, third];
        let proven = exact_lagrangian_bound(&problem, &mu);
        assert!(proven <= 2.0 / 3.0 && proven > 2.0 / 3.0 - 1e-14, "{proven}");
    }
}
