//! Exact coordinate ascent on the Lagrangian bound, one DP row at a time: a polish of the
//! iteration's multipliers before the bound is proven.
//!
//! The bound of multipliers μ ≥ 0 is g(μ) = Σ_i min_k a\[k,i\] with a = C + Dᵀμ (the reduced
//! costs). Row r of edge (a, b) in direction a → b adds μ_r at (k, a) and −ρ μ_r at (k, b), so
//! with every other multiplier fixed, g along μ_r + δ is
//!
//! ```text
//! min(A + δ, M_a) + min(B − ρ δ, M_b) + constant      (δ ≥ −μ_r)
//! ```
//!
//! where A, B are row k's reduced costs at a and b and M_a, M_b the least reduced costs of the
//! other outputs there: concave and piecewise linear, with slope 1 below δ₁ = M_a − A (from
//! column a) and −ρ above δ₂ = (B − M_b)/ρ (from column b). Its maximum is at δ₂ where δ₁ > δ₂,
//! else anywhere in [δ₁, δ₂], taken nearest 0 (no move where none gains). Every step raises g or
//! keeps it, so a sweep never loses what the iteration proved; the steps stop where reduced costs
//! tie (a non-smooth dual), which is why this polishes the iteration's multipliers and does not
//! replace the iteration.
//!
//! The sweep runs in f64 on unscaled multipliers; what it returns is proven afterwards by
//! `certify::exact_support_bound` like any multipliers, so nothing here needs to be exact.

use ndarray::Array2;

use crate::lp::{Incidence, Support};

/// Reduced costs of the support's slots and, per column, the least reduced cost of the outputs
/// the support does not keep there (their costs: no kept row touches them).
struct Reduced {
    /// Reduced cost of each slot.
    slot: Vec<f64>,
    /// Least cost of the outputs not kept at each column (+∞ where every output is kept).
    outside: Vec<f64>,
    /// Least and second-least reduced cost of each column over every output, and the slot of the
    /// least (`u32::MAX` where the least is outside the support).
    least: Vec<(f64, f64, u32)>,
}

impl Reduced {
    fn column_least(&self, support: &Support, i: usize) -> (f64, f64, u32) {
        let (mut first, mut second, mut at) = (self.outside[i], f64::INFINITY, u32::MAX);
        for s in support.column(i) {
            let v = self.slot[s];
            if v < first {
                (second, first, at) = (first, v, s as u32);
            } else if v < second {
                second = v;
            }
        }
        (first, second, at)
    }

    /// The least reduced cost of column i over the outputs other than slot s's.
    fn others(&self, i: usize, s: u32) -> f64 {
        let (first, second, at) = self.least[i];
        if at == s {
            second
        } else {
            first
        }
    }
}

/// The reduced cost c\[k,i\] + (Dᵀμ)\[k,i\] of every slot of `support` (`cost` C\[i, k\], ρ = e^ε)
/// under the kept rows' multipliers μ_r = `multiplier(r)`, in floats (unproven): column by
/// column on every core, each slot's rows added in edge order.
pub(crate) fn slot_reduced_costs(
    cost: &Array2<f64>,
    incidence: &Incidence,
    support: &Support,
    rho: f64,
    multiplier: impl Fn(usize) -> f64 + Sync,
) -> Vec<f64> {
    use rayon::prelude::*;
    let outputs = support.outputs();
    (0..incidence.n_obs())
        .into_par_iter()
        .flat_map_iter(|i| {
            let slots = support.column(i);
            let mut column: Vec<f64> = slots.clone().map(|s| cost[[i, outputs[s] as usize]]).collect();
            for (slot, row_own, row_other) in support.rows_at(incidence, i) {
                column[slot as usize - slots.start] += multiplier(row_own) - rho * multiplier(row_other);
            }
            column
        })
        .collect()
}

/// `sweeps` passes of exact coordinate ascent over every kept DP row, in place on `lam`
/// (single-precision multipliers of the kept rows in units of `scale`, as the iteration keeps
/// them; negative entries read as 0). `cost` is C\[i, k\] unscaled and ρ = e^ε. Returns the
/// float bound after the sweeps (for the caller's progress; it is proven separately).
pub(crate) fn polish(
    cost: &Array2<f64>,
    incidence: &Incidence,
    support: &Support,
    rho: f64,
    lam: &mut [f32],
    scale: f64,
    sweeps: usize,
) -> f64 {
    let n = incidence.n_obs();
    let (edges, outputs) = (incidence.edges(), support.outputs());
    let mut mu: Vec<f64> = lam.iter().map(|&l| (l as f64).max(0.0) * scale).collect();
    let mut outside = vec![f64::INFINITY; n];
    for (i, (row, least_outside)) in cost.outer_iter().zip(outside.iter_mut()).enumerate() {
        let mut kept = support.column(i).map(|s| outputs[s] as usize).peekable();
        for (k, &c) in row.iter().enumerate() {
            if kept.peek() == Some(&k) {
                kept.next();
            } else {
                *least_outside = least_outside.min(c);
            }
        }
    }
    let slot = slot_reduced_costs(cost, incidence, support, rho, |r| mu[r]);
    let mut reduced = Reduced { slot, outside, least: Vec::new() };
    reduced.least = (0..n).map(|i| reduced.column_least(support, i)).collect();

    for _ in 0..sweeps {
        for (e, &(a, b)) in edges.iter().enumerate() {
            let (a, b) = (a as usize, b as usize);
            let (first, kept) = support.pairs_of(e);
            for (p, &(sa, sb)) in (first..).zip(kept) {
                // Row 2p: +μ at (k, a), −ρμ at (k, b); row 2p + 1 the reverse.
                for (r, (s_plus, i_plus), (s_minus, i_minus)) in
                    [(2 * p, (sa, a), (sb, b)), (2 * p + 1, (sb, b), (sa, a))]
                {
                    let (up, down) = (reduced.slot[s_plus as usize], reduced.slot[s_minus as usize]);
                    let (m_up, m_down) = (reduced.others(i_plus, s_plus), reduced.others(i_minus, s_minus));
                    let rises_until = m_up - up;
                    let falls_from = (down - m_down) / rho;
                    let best = if rises_until > falls_from {
                        falls_from
                    } else if rises_until > 0.0 {
                        rises_until
                    } else if falls_from < 0.0 {
                        falls_from
                    } else {
                        0.0
                    };
                    let delta = best.max(-mu[r]);
                    if delta == 0.0 || !delta.is_finite() {
                        continue;
                    }
                    mu[r] += delta;
                    reduced.slot[s_plus as usize] += delta;
                    reduced.slot[s_minus as usize] -= rho * delta;
                    reduced.least[i_plus] = reduced.column_least(support, i_plus);
                    reduced.least[i_minus] = reduced.column_least(support, i_minus);
                }
            }
        }
    }
    for (l, &m) in lam.iter_mut().zip(&mu) {
        *l = (m / scale) as f32;
    }
    reduced.least.iter().map(|&(first, _, _)| first).sum()
}
