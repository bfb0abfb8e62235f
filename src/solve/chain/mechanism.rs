//! The chain mechanism in its compact form: truncated geometric(ε) on Y, then a remap table
//! z → output index. No |Θ̃| × |Y| matrix is needed to store or sample it.
//!
//! **Exact sampling.** Z = clamp(y + D, 0, n−1) with D two-sided geometric,
//! Pr(D = d) = κ α^{|d|}; clamping folds exactly the tails of [`super::kernel`]'s G. D is drawn by
//! Canonne, Kamath & Steinke (2020, "The discrete Gaussian for differential privacy", Alg. 1–2)
//! with integers only: ε is replaced by the dyadic rational ε' = s/t = ⌊ε·2^p⌋/2^p ≤ ε (p chosen
//! so that s ≥ 2^31, relative error < 2^-31). The sampled mechanism is therefore exactly
//! geometric(ε') + remap, which is ε'-DP and so ε-DP; its P is [`GeometricRemap::to_dense_at`]
//! at ε' (its risk differs from the optimum at ε by a relative O(2^-31 · ε·|Y|) at most).
//! The only floating-point step is computing ⌊ε·2^p⌋, which is exact (scaling by a power of two).

// `!(x >= 0.0)` is meant: it is true for NaN, which must count as a failure.
#![allow(clippy::neg_cmp_op_on_partial_ord)]

use ndarray::Array2;
use rand::{Rng, RngExt};

use super::kernel::Kernel;

/// Geometric(ε) on Y = {0..n−1} followed by a deterministic remap to output indices.
#[derive(Debug, Clone, PartialEq)]
pub struct GeometricRemap {
    /// The privacy level the geometric kernel was solved for.
    pub eps: f64,
    /// remap\[z\] = index of the output released when the geometric mechanism gives z.
    pub remap: Vec<u32>,
    /// |Θ̃| (outputs may be unused by the remap).
    pub n_outputs: usize,
}

/// ε' = s/t, the dyadic rational ≤ ε the sampler realises exactly.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DyadicEps {
    /// Numerator s ≥ 1.
    pub s: u128,
    /// Denominator t = 2^p.
    pub t: u128,
}

impl DyadicEps {
    /// The largest s/2^p ≤ ε with s ≥ 2^31 (0 ≤ p ≤ 100); ε ≥ 2^100 gives 2^100 (nothing is
    /// distinguishable from ∞ there). `None` if ε is not > 0, or so small (< 2^-100) that
    /// no such s ≥ 1 exists.
    pub fn below(eps: f64) -> Option<DyadicEps> {
        if !(eps > 0.0) {
            return None;
        }
        if eps >= 2f64.powi(100) {
            return Some(DyadicEps { s: 1u128 << 100, t: 1 });
        }
        let p = (31 - eps.log2().floor() as i64).clamp(0, 100) as i32;
        let scaled = (eps * 2f64.powi(p)).floor(); // exact: power-of-two scaling, then floor
        if !(scaled >= 1.0 && scaled < 2f64.powi(100)) {
            return None;
        }
        Some(DyadicEps { s: scaled as u128, t: 1u128 << p })
    }

    /// ε' as a float (for display and for [`GeometricRemap::to_dense_at`]).
    pub fn value(self) -> f64 {
        self.s as f64 / self.t as f64
    }
}

impl GeometricRemap {
    /// |Y|.
    pub fn n_obs(&self) -> usize {
        self.remap.len()
    }

    /// The dense P\[k, y\] = Σ_{z: remap z = k} G\[z|y\] at the solved ε (moderate sizes only).
    pub fn to_dense(&self) -> Array2<f64> {
        self.to_dense_at(self.eps)
    }

    /// The dense P of geometric(`eps`) + this remap (e.g. at the sampler's ε').
    pub fn to_dense_at(&self, eps: f64) -> Array2<f64> {
        let n = self.n_obs();
        let kernel = Kernel::new(n, eps);
        let pw: Vec<f64> = (0..n).map(|d| (-eps * d as f64).exp()).collect();
        let mut p = Array2::zeros((self.n_outputs, n));
        for (z, &k) in self.remap.iter().enumerate() {
            let scale = kernel.entry(z, z);
            let mut row = p.row_mut(k as usize);
            for (y, v) in row.iter_mut().enumerate() {
                *v += scale * pw[z.abs_diff(y)];
            }
        }
        p
    }

    /// The remap as runs `(first z, output index)`, in increasing z, each run the longest stretch
    /// of equal outputs (a squared-loss remap is monotone: about |Θ̃| runs whatever |Y| is).
    pub fn runs(&self) -> Vec<(usize, u32)> {
        let mut runs: Vec<(usize, u32)> = Vec::new();
        for (z, &k) in self.remap.iter().enumerate() {
            if runs.last().is_none_or(|&(_, last)| last != k) {
                runs.push((z, k));
            }
        }
        runs
    }

    /// The dense P at `eps` in O(runs · |Y|) (not O(|Y|²) as [`GeometricRemap::to_dense_at`]):
    /// each run [a, b] of the remap adds Pr(a ≤ clamp(y + D) ≤ b) to its output's row, from the
    /// closed-form tails of the two-sided geometric D (no cancellation: the mass outside the
    /// run is subtracted only when y lies inside it).
    pub fn to_dense_by_runs(&self, eps: f64) -> Array2<f64> {
        let n = self.n_obs();
        let mut p = Array2::zeros((self.n_outputs, n));
        if n == 0 {
            return p;
        }
        let alpha = (-eps).exp();
        // Pr(D ≥ d) = Pr(D ≤ −d) for d ≥ 1, tabulated once (the same values as computed inline).
        let tails: Vec<f64> = (0..=n).map(|d| (-eps * d as f64).exp() / (1.0 + alpha)).collect();
        let tail = |d: usize| tails[d];
        let runs = self.runs();
        for (r, &(a, k)) in runs.iter().enumerate() {
            let b = runs.get(r + 1).map_or(n - 1, |&(next, _)| next - 1);
            let mut row = p.row_mut(k as usize);
            for (y, v) in row.iter_mut().enumerate() {
                // Pr(Z < a) = Pr(D ≤ a − 1 − y), Pr(Z > b) = Pr(D ≥ b + 1 − y) (0 at the ends).
                let mass = if b < y {
                    tail(y - b) - if a == 0 { 0.0 } else { tail(y - a + 1) }
                } else if a > y {
                    tail(a - y) - if b == n - 1 { 0.0 } else { tail(b + 1 - y) }
                } else {
                    let below = if a == 0 { 0.0 } else { tail(y - a + 1) };
                    let above = if b == n - 1 { 0.0 } else { tail(b + 1 - y) };
                    1.0 - below - above
                };
                *v += mass;
            }
        }
        p
    }

    /// The ε' the sampler realises (≤ ε).
    pub fn sampling_eps(&self) -> Option<DyadicEps> {
        DyadicEps::below(self.eps)
    }

    /// Draw the index of the released output for observation `y` (exact; integer arithmetic).
    /// For ε < 2^-100 it samples the ε' = 0 limit of G (z = 0 or n−1 with probability ½ each,
    /// whatever y: 0-DP, hence ε-DP).
    pub fn sample(&self, y: usize, rng: &mut impl Rng) -> usize {
        assert!(y < self.n_obs(), "observation {y} outside Y = 0..{}", self.n_obs());
        let n = self.n_obs();
        let z = match self.sampling_eps() {
            Some(e) => (y as i128 + discrete_laplace(e.s, e.t, rng)).clamp(0, n as i128 - 1) as usize,
            None if n == 1 => 0,
            None => {
                if rng.random_bool(0.5) {
                    0
                } else {
                    n - 1
                }
            }
        };
        self.remap[z] as usize
    }
}

/// Bernoulli(exp(−num/den)) for 0 ≤ num ≤ den (Canonne–Kamath–Steinke, Alg. 1, first case).
fn bernoulli_exp_le1(num: u128, den: u128, rng: &mut impl Rng) -> bool {
    let mut k: u128 = 1;
    // A ~ Bernoulli(γ/k); stop at the first 0; return whether k is odd.
    while rng.random_range(0..den * k) < num {
        k += 1;
    }
    k % 2 == 1
}

/// Bernoulli(exp(−1)).
fn bernoulli_exp_minus_one(rng: &mut impl Rng) -> bool {
    bernoulli_exp_le1(1, 1, rng)
}

/// Two-sided geometric with Pr(d) ∝ exp(−|d|·s/t) (Canonne–Kamath–Steinke, Alg. 2).
pub(crate) fn discrete_laplace(s: u128, t: u128, rng: &mut impl Rng) -> i128 {
    loop {
        let u = rng.random_range(0..t);
        if !bernoulli_exp_le1(u, t, rng) {
            continue;
        }
        let mut v: u128 = 0;
        while bernoulli_exp_minus_one(rng) {
            v += 1;
        }
        let x = u + t * v;
        let y = (x / s) as i128;
        let negative = rng.random_bool(0.5);
        if negative && y == 0 {
            continue;
        }
        return if negative { -y } else { y };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{rngs::StdRng, SeedableRng};

    #[test]
    fn dyadic_eps_is_below_and_close() {
        for &e in &[1e-6, 1e-4, 0.1, 1.0, 5.0, 40.0] {
            let d = DyadicEps::below(e).unwrap();
            assert!(d.value() <= e && d.value() > e * (1.0 - 1e-9), "{e}: {}", d.value());
        }
        assert!(DyadicEps::below(0.0).is_none() && DyadicEps::below(f64::NAN).is_none());
        assert!(DyadicEps::below(1e-40).is_none());
        assert_eq!(DyadicEps::below(1e300).unwrap().value(), 2f64.powi(100));
        // Extreme ε still sample without panicking: the huge one is the identity remapped.
        let mut rng = StdRng::seed_from_u64(1);
        let mech = |eps| GeometricRemap { eps, remap: vec![0, 1, 2, 3], n_outputs: 4 };
        for y in 0..4 {
            assert_eq!(mech(1e300).sample(y, &mut rng), y);
            assert!([0, 3].contains(&mech(1e-40).sample(y, &mut rng)));
        }
    }

    #[test]
    fn dense_by_runs_matches_dense() {
        let mech = GeometricRemap { eps: 0.7, remap: vec![0, 1, 1, 2, 3, 4, 5, 6, 8, 8, 8], n_outputs: 9 };
        let a = mech.to_dense();
        let b = mech.to_dense_by_runs(0.7);
        let worst = a.iter().zip(b.iter()).map(|(x, y)| (x - y).abs() / x.max(1e-300)).fold(0.0, f64::max);
        assert!(worst < 1e-12, "{worst}");
        assert_eq!(mech.runs(), vec![(0, 0), (1, 1), (3, 2), (4, 3), (5, 4), (6, 5), (7, 6), (8, 8)]);
    }

    /// Chi-square goodness of fit of the sampler against to_dense_at(ε') on a small mechanism.
    /// 8 cells of positive probability, 7 degrees of freedom: the 1e-4 upper quantile is ≈ 29.9
    /// (false-failure rate 1e-4 per observation).
    #[test]
    fn sampler_matches_dense_distribution() {
        let mech = GeometricRemap { eps: 0.7, remap: vec![0, 1, 1, 2, 3, 4, 5, 6, 8], n_outputs: 9 };
        let eps_s = mech.sampling_eps().unwrap().value();
        let p = mech.to_dense_at(eps_s);
        let mut rng = StdRng::seed_from_u64(20261121);
        let draws = 40_000;
        for y in [0usize, 4, 8] {
            let mut counts = [0usize; 9];
            for _ in 0..draws {
                counts[mech.sample(y, &mut rng)] += 1;
            }
            let chi2: f64 = (0..9)
                .filter(|&k| p[[k, y]] > 0.0)
                .map(|k| {
                    let e = p[[k, y]] * draws as f64;
                    (counts[k] as f64 - e).powi(2) / e
                })
                .sum();
            assert!(chi2 < 29.9, "y = {y}: χ² = {chi2}");
            assert_eq!(counts[7], 0, "output 7 is never in the remap");
        }
    }
}
