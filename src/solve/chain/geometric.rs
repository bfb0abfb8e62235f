//! Geometric mechanism + Bayes-optimal deterministic remap, and the duals complementary slackness
//! gives it (Ghosh, Roughgarden & Sundararajan 2009: optimal for count queries and a broad class
//! of losses; here every instance is certified, see [`super::certificate`]).
//!
//! **Remap.** Release θ̃_{k(z)} with k(z) = argmin_k Σ_i c\[k,i\] G\[z|i\] = argmin_k (G c_k)_z:
//! for each output, one O(|Y|) smoothing ([`Kernel::smooth`]). For squared loss the objective is
//! the quadratic A_z θ̃² − 2 B_z θ̃ + C_z with A = G m0, B = G m1 (smoothed raw moments), so
//! k(z) is the output point nearest to the smoothed posterior mean B_z / A_z.
//!
//! **Duals.** Row k of P = Σ_{z: k(z)=k} G\[z|·\] is a positive combination of the rays G\[z|·\],
//! so complementary slackness asks ⟨c_{k(z)} − λ, G\[z|·\]⟩ = 0 for all z, i.e. G λ = b with
//! b_z = (G c_{k(z)})_z; Σ λ = Σ b = the primal value since G's columns sum to 1. As G⁻¹ is
//! tridiagonal, λ_z = c\[k(z), z\] + Σ_{z' = z±1, k(z') ≠ k(z)} (G⁻¹)_{z z'} (G(c_{k(z')} − c_{k(z)}))_{z'}:
//! only run boundaries of the remap cost anything, and no large numbers cancel.

use super::costs::{ChainCosts, SquaredMoments};
use crate::solve::compact::Kernel;

/// The remap z → k(z) and the value b_z = (G c_{k(z)})_z of each z.
#[derive(Debug, Clone)]
pub(crate) struct Remap {
    /// Output index released for each geometric outcome z.
    pub remap: Vec<u32>,
    /// b_z = Σ_i c\[k(z), i\] G\[z|i\]; Σ_z b_z is the Bayes risk.
    pub values: Vec<f64>,
}

/// The Bayes-optimal remap of the truncated geometric mechanism, in O(|Θ̃|·|Y|)
/// (O(|Y| log |Θ̃| + runs × reach) for squared-loss moments).
pub(crate) fn optimal_remap(costs: &dyn ChainCosts, kernel: &Kernel) -> Remap {
    if let Some(sq) = costs.squared() {
        return squared_remap(sq, kernel);
    }
    let n = costs.n_obs();
    let mut best = vec![f64::INFINITY; n];
    let mut remap = vec![0u32; n];
    let (mut row, mut u, mut work) = (vec![0.0; n], vec![0.0; n], vec![0.0; n]);
    for k in 0..costs.n_outputs() {
        costs.row(k, &mut row);
        kernel.smooth(&row, &mut u, &mut work);
        for z in 0..n {
            if u[z] < best[z] {
                best[z] = u[z];
                remap[z] = k as u32;
            }
        }
    }
    Remap { remap, values: best }
}

fn squared_remap(sq: &SquaredMoments, kernel: &Kernel) -> Remap {
    let n = sq.m0.len();
    let raw1: Vec<f64> = (0..n).map(|i| sq.raw_first(i)).collect();
    let (mut a, mut b, mut work) = (vec![0.0; n], vec![0.0; n], vec![0.0; n]);
    kernel.smooth(&sq.m0, &mut a, &mut work);
    kernel.smooth(&raw1, &mut b, &mut work);
    let mut order: Vec<u32> = (0..sq.outputs.len() as u32).collect();
    order.sort_by(|&x, &y| sq.outputs[x as usize].total_cmp(&sq.outputs[y as usize]));
    let sorted: Vec<f64> = order.iter().map(|&k| sq.outputs[k as usize]).collect();
    let remap: Vec<u32> = (0..n)
        .map(|z| {
            let t = if a[z] > 0.0 { b[z] / a[z] } else { sq.reference[z] };
            let p = sorted.partition_point(|&v| v < t);
            let pick = if p == 0 {
                0
            } else if p == sorted.len() || t - sorted[p - 1] <= sorted[p] - t {
                p - 1
            } else {
                p
            };
            order[pick]
        })
        .collect();
    let values = run_values(sq, kernel, &remap);
    Remap { remap, values }
}

/// b_z = (G c_{k(z)})_z for every z, one run of constant k(z) at a time: the two recursions
/// start from truncated sums (|z − y| ≤ reach) at the run's ends.
pub(crate) fn run_values(costs: &dyn ChainCosts, kernel: &Kernel, remap: &[u32]) -> Vec<f64> {
    let n = remap.len();
    let mut out = vec![0.0; n];
    if n == 1 {
        out[0] = costs.at(remap[0] as usize, 0);
        return out;
    }
    let (a, reach) = (kernel.alpha, kernel.reach());
    let mut start = 0;
    let mut left = vec![0.0; 0];
    while start < n {
        let k = remap[start] as usize;
        let mut end = start;
        while end + 1 < n && remap[end + 1] as usize == k {
            end += 1;
        }
        let c = |y: usize| costs.at(k, y);
        // L_z for z in [start, end], seeded with the truncated sum below `start`.
        left.clear();
        let mut acc = 0.0;
        for y in start.saturating_sub(reach)..start {
            acc = c(y) + a * acc;
        }
        for z in start..=end {
            acc = c(z) + a * acc;
            left.push(acc);
        }
        let mut r = 0.0;
        for y in ((end + 1)..(end + 1 + reach).min(n)).rev() {
            r = c(y) + a * r;
        }
        for z in (start..=end).rev() {
            let cz = c(z);
            r = cz + a * r;
            let s = left[z - start] + r - cz;
            out[z] = s * if z == 0 || z == n - 1 { 1.0 / (1.0 + a) } else { kernel.kappa() };
        }
        start = end + 1;
    }
    out
}

/// Column duals λ from complementary slackness with the geometric rows (module docs), each with
/// the magnitude of the terms it was computed from (the scale of its rounding error: λ_z is
/// accurate to a small multiple of u·magnitude_z, amplified at run boundaries by |(G⁻¹)_{zz'}|).
pub(crate) fn slackness_duals(
    costs: &dyn ChainCosts,
    kernel: &Kernel,
    remap: &[u32],
    values: &[f64],
) -> (Vec<f64>, Vec<f64>) {
    let n = remap.len();
    if let Some(sq) = costs.squared() {
        return squared_duals(sq, kernel, remap);
    }
    let reach = kernel.reach();
    (0..n)
        .map(|z| {
            let k = remap[z] as usize;
            let mut lam = costs.at(k, z);
            let mut mag = lam.abs();
            for zp in [z.wrapping_sub(1), z + 1] {
                if zp >= n {
                    continue;
                }
                let kp = remap[zp] as usize;
                if kp != k {
                    let e = kernel.smooth_at(|y| costs.at(kp, y) - costs.at(k, y), zp, reach);
                    let off = kernel.inverse_offdiag(zp);
                    lam += off * e;
                    // |G(c_k' − c_k)| ≤ G|c_k'| + G|c_k| ≈ 2 b_z' + |e| for the near-tied outputs here.
                    mag += off.abs() * (e.abs() + 2.0 * values[zp].abs());
                }
            }
            (lam, mag)
        })
        .unzip()
}

/// Squared loss: c_{k'} − c_k = (θ̃_{k'} − θ̃_k)·((θ̃_{k'} + θ̃_k)·m0 − 2·m1_raw), so the smoothed
/// difference at z' is (t' − t)((t' + t)A_{z'} − 2B_{z'}) with A = G m0, B = G m1_raw: O(|Y|) in all.
fn squared_duals(sq: &SquaredMoments, kernel: &Kernel, remap: &[u32]) -> (Vec<f64>, Vec<f64>) {
    let n = remap.len();
    let raw1: Vec<f64> = (0..n).map(|i| sq.raw_first(i)).collect();
    let (mut a, mut b, mut work) = (vec![0.0; n], vec![0.0; n], vec![0.0; n]);
    kernel.smooth(&sq.m0, &mut a, &mut work);
    kernel.smooth(&raw1, &mut b, &mut work);
    (0..n)
        .map(|z| {
            let k = remap[z] as usize;
            let t = sq.outputs[k];
            let mut lam = sq.at(k, z);
            let d = t - sq.reference[z];
            let mut mag = sq.m0[z] * d * d + (2.0 * d * sq.m1[z]).abs() + sq.m2[z];
            for zp in [z.wrapping_sub(1), z + 1] {
                if zp >= n || remap[zp] as usize == k {
                    continue;
                }
                let tp = sq.outputs[remap[zp] as usize];
                let off = kernel.inverse_offdiag(zp);
                lam += off * (tp - t) * ((tp + t) * a[zp] - 2.0 * b[zp]);
                mag += (off * (tp - t)).abs() * ((tp + t).abs() * a[zp] + 2.0 * b[zp].abs());
            }
            (lam, mag)
        })
        .unzip()
}
