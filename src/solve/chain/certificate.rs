//! A dual certificate for the chain LP, checked without trusting whoever produced it.
//!
//! For the chain Y = {0..n−1}, each row p = P\[k, ·\] of a feasible mechanism lies in the cone
//! K = {p ≥ 0 : p_i ≤ e^ε p_{i±1}}. Its extreme rays are the zig-zag vectors with
//! r_{i+1}/r_i ∈ {a, 1/a}, a = e^ε (n − 1 independent active constraints, one per edge).
//! For any column duals λ ∈ ℝ^n and feasible P (Σ_k P\[k,·\] = 1),
//!
//! ```text
//! Σ_{k,i} c[k,i] P[k,i] = Σ_i λ_i + Σ_k ⟨c_k − λ, P[k,·]⟩ ≥ Σ_i λ_i     if ⟨c_k − λ, r⟩ ≥ 0 ∀ k, rays r.
//! ```
//!
//! **Pricing DP.** Normalise rays by r_{n−1} = 1. With d = c_k − λ,
//! f_i = min over ray prefixes with r_i = 1 of Σ_{j≤i} d_j r_j satisfies
//! f_0 = d_0, f_{i+1} = d_{i+1} + g(f_i), g(x) = min(x/a, a·x) (r_i = r_{i+1}/a or a·r_{i+1}),
//! so min over all 2^{n−1} rays is f_{n−1}, in O(n) per output.
//!
//! **Repair.** If some f_{n−1} < 0, shift λ' = λ − δ·1: ⟨d + δ1, r⟩ = ⟨d, r⟩ + δ Σ_i r_i, so the
//! DP value is increasing in δ, and the least δ_k making output k's minimum ≥ 0 is
//! max_r −⟨d, r⟩/Σ_i r_i (the violation relative to the ray's mass, not to the tiny end entry
//! r_{n−1} = 1). A candidate from the minimising ray's mass is escalated ×4 until the rigorous DP
//! *verifies* it for every output (see [`certify`]); the δ kept is always a verified one. With δ = max_k δ_k, λ' is dual feasible and the optimum is
//! ≥ Σ_i λ_i − n δ. (An end-normalised value can reach −∞ by overflow at large ε·n even for a
//! tiny relative violation; a trial that overflows simply fails.)
//!
//! **Rounding.** The recursion runs on lower bounds: every operation is rounded one ulp
//! downwards (a correctly rounded result is within half an ulp), a is replaced by an upper bound
//! a⁺ ≥ e^ε (a Taylor sum rounded up, [`exp_upper`]), and g is monotone, so each computed value is ≤ the exact f_i
//! for the exact e^ε. Σ λ_i uses compensated summation minus a bound on its error. The costs
//! c\[k, i\] and the λ_i are taken as the exact numbers stored (the certificate is for the LP with
//! those float costs). It does not cover an overflow: if a value reaches −∞ the bound is −∞.

// `!(x >= 0.0)` is meant: it is true for NaN, which must count as a failure.
#![allow(clippy::neg_cmp_op_on_partial_ord)]

use super::costs::ChainCosts;

/// What the certificate proves.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DualCertificate {
    /// A lower bound on Σ_i λ_i.
    pub dual_sum: f64,
    /// The shift δ ≥ 0 that makes λ − δ·1 dual feasible.
    pub shift: f64,
    /// A lower bound on the LP optimum: dual_sum − n·δ (rounded down).
    pub bound: f64,
    /// The output with the most negative reduced cost at δ = 0 (or the last to need escalation).
    pub worst_output: usize,
    /// min_k of the lower bound on the most negative reduced cost at δ = 0 (rays normalised
    /// r_{n−1} = 1; may be −∞ by overflow, which the shift handles).
    pub min_reduced_cost: f64,
}

/// One ulp towards −∞ (finite inputs; ±0 goes to the smallest negative subnormal).
pub(crate) fn down(x: f64) -> f64 {
    if x.is_nan() || x == f64::NEG_INFINITY {
        return x;
    }
    if x == 0.0 {
        return -f64::from_bits(1);
    }
    let b = x.to_bits();
    f64::from_bits(if x > 0.0 { b - 1 } else { b + 1 })
}

/// One ulp towards +∞.
pub(crate) fn up(x: f64) -> f64 {
    -down(-x)
}

/// An upper bound on e^ε that does not trust libm: [`crate::certify::exact::exp_upper`] (a Taylor
/// sum rounded up), at least two ulps above `exp`.
pub(crate) fn exp_upper(eps: f64) -> f64 {
    crate::certify::exact::exp_upper(eps).max(up(up(eps.exp())))
}

/// A float ≤ x (at least one ulp below; branch-free): x − (|x|·2^-52 + 2^-1074), since
/// |x|·2^-52 ≥ ulp(x) and rounding is monotone.
#[inline(always)]
fn down_fast(x: f64) -> f64 {
    x - (x.abs() * f64::EPSILON + f64::from_bits(1))
}

/// Lower bound on min over rays (r_{n−1} = 1) of Σ_i (c\[k,i\] − λ_i + δ) r_i for one output's
/// costs, with the (approximate) mass Σ_i r_i of the minimising ray.
#[cfg(test)]
pub(crate) fn min_reduced_cost_lower(costs_k: &[f64], lambda: &[f64], shift: f64, a_up: f64) -> f64 {
    min_reduced_cost_with_mass(costs_k, lambda, shift, a_up, down(down(1.0 / a_up))).0
}

/// [`min_reduced_cost_lower`] with `a_inv_down` ≤ 1/a, also returning the argmin ray's mass.
#[cfg(test)]
pub(crate) fn min_reduced_cost_with_mass(
    costs_k: &[f64],
    lambda: &[f64],
    shift: f64,
    a_up: f64,
    a_inv_down: f64,
) -> (f64, f64) {
    let (mut lo, mut mass) = (0.0, 0.0);
    for (i, (&c, &l)) in costs_k.iter().zip(lambda).enumerate() {
        let mut d = down_fast(c - l);
        if shift > 0.0 {
            d = down_fast(d + shift);
        }
        if i == 0 {
            lo = d;
            mass = 1.0;
        } else if lo >= 0.0 {
            // r_i = r_{i+1}/a: lo/a ≥ lo·a_inv_down for lo ≥ 0.
            lo = down_fast(d + down_fast(lo * a_inv_down));
            mass = 1.0 + mass * a_inv_down;
        } else {
            // r_i = a·r_{i+1}: a·lo ≥ a_up·lo for lo < 0.
            lo = down_fast(d + down_fast(lo * a_up));
            mass = 1.0 + mass * a_up;
        }
    }
    (lo, mass)
}

/// Outputs evaluated together (independent dependency chains keep the CPU busy).
const LANES: usize = 8;

/// Observations per tile: the lanes' cost rows for one tile stay in the L1/L2 cache.
const TILE: usize = 512;

/// [`min_reduced_cost_with_mass`] for the outputs `ks` (at most [`LANES`]) at once, reading costs
/// tile by tile into `buf` (length ≥ LANES·TILE).
fn lanes_min(
    costs: &dyn ChainCosts,
    ks: &[usize],
    lambda: &[f64],
    shift: f64,
    a_up: f64,
    a_inv_down: f64,
    buf: &mut [f64],
) -> ([f64; LANES], [f64; LANES]) {
    let n = lambda.len();
    let lanes = ks.len();
    let mut lo = [0.0f64; LANES];
    let mut mass = [1.0f64; LANES];
    let mut start = 0;
    while start < n {
        let len = TILE.min(n - start);
        for (j, &k) in ks.iter().enumerate() {
            costs.row_range(k, start, &mut buf[j * TILE..j * TILE + len]);
        }
        let mut t0 = 0;
        if start == 0 {
            for (j, l) in lo.iter_mut().enumerate().take(lanes) {
                *l = down_fast(down_fast(buf[j * TILE] - lambda[0]) + shift);
            }
            t0 = 1;
        }
        for t in t0..len {
            let l = lambda[start + t];
            for j in 0..lanes {
                let d = down_fast(down_fast(buf[j * TILE + t] - l) + shift);
                let m = if lo[j] >= 0.0 { a_inv_down } else { a_up };
                lo[j] = down_fast(d + down_fast(lo[j] * m));
                mass[j] = 1.0 + mass[j] * m;
            }
        }
        start += len;
    }
    (lo, mass)
}

/// Check duals λ (one per observation) against every output's rays and return the bound they prove.
///
/// Outputs whose minimum is negative at δ = 0 get a candidate shift 2·(violation / mass of the
/// minimising ray); the largest candidate is then verified on each of them by the same rigorous DP
/// and multiplied by 4 (after three rounds by 64) until every one passes (the DP value is
/// increasing in δ).
pub(crate) fn certify(costs: &dyn ChainCosts, eps: f64, lambda: &[f64]) -> DualCertificate {
    certify_rounds(costs, eps, lambda, 600)
}

/// [`certify`] with at most `rounds` escalations of the shift; if they do not suffice the shift is
/// +∞ and the bound −∞ (nothing is claimed).
pub(crate) fn certify_rounds(costs: &dyn ChainCosts, eps: f64, lambda: &[f64], rounds: usize) -> DualCertificate {
    let n = costs.n_obs();
    assert_eq!(lambda.len(), n, "one dual per observation");
    let a_up = exp_upper(eps);
    // ≤ 1/a⁺ ≤ e^−ε (libm's value stepped down is only used when it is smaller still).
    let a_inv_down = down(1.0 / a_up).min(down(down((-eps).exp())));
    let mut buf = vec![0.0; LANES * TILE];
    let (mut worst, mut worst_k, mut shift) = (f64::INFINITY, 0, 0.0f64);
    let mut failing = Vec::new();
    let n_out = costs.n_outputs();
    for k0 in (0..n_out).step_by(LANES) {
        let ks: Vec<usize> = (k0..(k0 + LANES).min(n_out)).collect();
        let lanes = ks.len();
        let (lo, mass) = lanes_min(costs, &ks, lambda, 0.0, a_up, a_inv_down, &mut buf);
        for j in 0..lanes {
            let (v, k) = (lo[j], k0 + j);
            if v < worst || v.is_nan() {
                worst = v;
                worst_k = k;
            }
            if !(v >= 0.0) {
                failing.push(k);
                let cand =
                    if v.is_finite() && mass[j].is_finite() && mass[j] > 0.0 { up(2.0 * -v / mass[j]) } else { 0.0 };
                shift = shift.max(cand);
            }
        }
    }
    if !failing.is_empty() {
        // Floor: a shift at the scale of the duals' rounding, so escalation starts somewhere sane.
        let floor = up(f64::EPSILON * lambda.iter().fold(0.0f64, |m, l| m.max(l.abs())) / n as f64);
        shift = shift.max(floor).max(f64::MIN_POSITIVE);
        let mut pending = failing;
        for round in 0..=rounds {
            let mut still = Vec::new();
            for chunk in pending.chunks(LANES) {
                let (lo, _) = lanes_min(costs, chunk, lambda, shift, a_up, a_inv_down, &mut buf);
                still.extend(chunk.iter().zip(lo).filter(|(_, v)| !(*v >= 0.0)).map(|(&k, _)| k));
            }
            pending = still;
            if pending.is_empty() || !shift.is_finite() || round == rounds {
                break;
            }
            worst_k = pending[0];
            shift = up(shift * if round < 3 { 4.0 } else { 64.0 });
        }
        if !pending.is_empty() {
            shift = f64::INFINITY;
        }
    }
    let dual_sum = sum_lower(lambda);
    let bound = if shift == 0.0 {
        dual_sum
    } else if shift.is_finite() {
        down(dual_sum - up(n as f64 * shift))
    } else {
        f64::NEG_INFINITY
    };
    DualCertificate { dual_sum, shift, bound, worst_output: worst_k, min_reduced_cost: worst }
}

/// A lower bound on Σ x_i: Neumaier's compensated sum minus its error bound
/// (2u|s| + 2n²u²Σ|x_i|, Higham, Accuracy and Stability, §4.3).
pub(crate) fn sum_lower(x: &[f64]) -> f64 {
    let (mut s, mut comp, mut abs) = (0.0f64, 0.0f64, 0.0f64);
    for &v in x {
        let t = s + v;
        comp += if s.abs() >= v.abs() { (s - t) + v } else { (v - t) + s };
        s = t;
        abs += v.abs();
    }
    let total = s + comp;
    let u = f64::EPSILON / 2.0;
    let nf = x.len() as f64;
    down(total - (2.0 * u * total.abs() + 2.0 * nf * nf * u * u * abs) * (1.0 + 4.0 * u))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// All zig-zag rays of length n (r_0 = 1 before normalisation).
    fn rays(n: usize, a: f64) -> Vec<Vec<f64>> {
        (0..1u32 << (n - 1))
            .map(|mask| {
                let mut r = vec![1.0];
                for i in 0..n - 1 {
                    let last = r[i];
                    r.push(if mask >> i & 1 == 1 { last * a } else { last / a });
                }
                let end = r[n - 1];
                r.iter().map(|v| v / end).collect()
            })
            .collect()
    }

    #[test]
    fn dp_equals_brute_force_minimum_over_rays() {
        let mut seed = 12345u64;
        let mut next = || {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (seed >> 11) as f64 / (1u64 << 53) as f64 - 0.5
        };
        for &(n, eps) in &[(1usize, 0.5f64), (2, 0.3), (5, 1.0), (8, 0.2), (10, 2.0)] {
            let a = eps.exp();
            for _ in 0..20 {
                let d: Vec<f64> = (0..n).map(|_| next()).collect();
                let zero = vec![0.0; n];
                let dp = min_reduced_cost_lower(&d, &zero, 0.0, exp_upper(eps));
                let brute = rays(n, a)
                    .iter()
                    .map(|r| r.iter().zip(&d).map(|(x, y)| x * y).sum::<f64>())
                    .fold(f64::INFINITY, f64::min);
                assert!(dp <= brute + 1e-12 * brute.abs().max(1.0), "DP {dp} above brute force {brute}");
                assert!(dp >= brute - 1e-9 * brute.abs().max(1.0), "DP {dp} far below brute force {brute}");
            }
        }
    }

    #[test]
    fn directed_rounding_helpers() {
        assert!(down(1.0) < 1.0 && up(1.0) > 1.0);
        assert!(down(0.0) < 0.0 && up(0.0) > 0.0);
        assert!(down(-2.0) < -2.0);
        assert!(exp_upper(0.1) > 0.1f64.exp());
        let x = vec![0.1; 1000];
        let s = sum_lower(&x);
        assert!(s <= 100.0 && s > 100.0 - 1e-10, "{s}");
    }
}
