//! The Gaussian mechanism and CAPE, Imtiaz, Mohammadi & Sarwate, "Distributed Differentially Private
//! Computation of Functions with Correlated Noise" — **(ε, δ)-DP methods**, not comparable with
//! pure ε without saying so.
//!
//! All three release the proportion y/K (the mean of the S site means, sites of N_s = K/S records)
//! plus Gaussian noise, unclamped:
//! - **pooled** (id `gaussian`): a trusted curator, sensitivity Δ = 1/K, noise σ = Δ/d*;
//! - **conventional distributed** (id `gaussian-conventional`): each site adds N(0, σ_s²) with
//!   σ_s = (1/N_s)/d*, the aggregator averages: variance σ_s²/S = S·σ_pool²;
//! - **CAPE** (id `cape`): sites draw ê_s ~ N(0, τ²), form zero-sum e_s = ê_s − (1/S)Σ ê, send
//!   mean_s + e_s + g_s with g_s ~ N(0, τ²/S); the average has variance τ²/S².
//!
//! **Privacy.** A Gaussian shift of Mahalanobis length D is (ε, δ)-DP exactly when
//! δ ≥ Φ(D/2 − ε/D) − e^ε Φ(−D/2 − ε/D) (Balle & Wang 2018, Thm 8); d* solves this with equality
//! (bisection). For the pooled and conventional mechanisms D = Δ/σ. We use this exact calibration
//! rather than the classical σ = Δ√(2 ln(1.25/δ))/ε, which holds only for ε < 1 and is looser.
//! For CAPE the adversary (the aggregator with up to S_C = ⌈S/3⌉ − 1 colluding sites) sees
//! y = \[â_1..â_{S_H}, ê\], Gaussian with covariance τ²Σ₁: Var â_s = 1, Cov(â_s, â_s') = −1/S,
//! Cov(â_s, ê) = 1 − S_H/S, Var ê = S_H (Theorem 1's setting); the privacy loss of changing site
//! 1's mean by 1/N_s is Gaussian with μ = D²/2, σ² = D², D² = vᵀ(τ²Σ₁)⁻¹v, v = (1/N_s)e₁ — computed
//! from the covariance directly (PAPERS.md §5 \[fix\]) and calibrated with the same exact δ(D), which
//! is tighter than the paper's 2Q((ε − μ_z)/σ_z) bound.

use rand::Rng;

use super::count::CountRelease;
use crate::eval::noise::{normal_cdf, sample_std_normal, Noise};
use crate::eval::{count, Estimator, Method, Privacy, Risk, Setting};

/// δ(D) = Φ(D/2 − ε/D) − e^ε Φ(−D/2 − ε/D): the exact δ of a Gaussian shift of length D.
pub(crate) fn gaussian_delta(d: f64, eps: f64) -> f64 {
    if d <= 0.0 {
        return 0.0;
    }
    let a = normal_cdf(d / 2.0 - eps / d);
    // e^ε Φ(−D/2 − ε/D) in logs to avoid overflow at large ε.
    let t = -d / 2.0 - eps / d;
    let b = if eps > 700.0 { 0.0 } else { eps.exp() * normal_cdf(t) };
    (a - b).max(0.0)
}

/// The largest shift length D* with δ(D*) ≤ δ (bisection; δ(D) increases in D).
pub(crate) fn max_shift(eps: f64, delta: f64) -> f64 {
    let (mut lo, mut hi) = (0.0f64, 1.0f64);
    while gaussian_delta(hi, eps) < delta {
        hi *= 2.0;
        if hi > 1e12 {
            return hi;
        }
    }
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if gaussian_delta(mid, eps) <= delta {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    lo
}

/// (Σ₁⁻¹)₁₁ for CAPE's adversary covariance at τ = 1 with S sites.
pub(crate) fn cape_inverse_11(sites: u64) -> f64 {
    let s = sites as f64;
    let colluding = sites.div_ceil(3).saturating_sub(1);
    let h = (sites - colluding) as usize;
    let n = h + 1;
    // Σ₁ = [[(1 + 1/S)I − 11ᵀ/S, (1 − S_H/S)1], [(1 − S_H/S)1ᵀ, S_H]] (h = S_H honest sites).
    let edge = 1.0 - h as f64 / s;
    let mut a = vec![vec![0.0; n]; n];
    for (i, row) in a.iter_mut().enumerate().take(h) {
        for (j, v) in row.iter_mut().enumerate().take(h) {
            *v = if i == j { 1.0 } else { -1.0 / s };
        }
        row[h] = edge;
    }
    a[h].fill(edge);
    a[h][h] = h as f64;
    // Solve Σ₁ x = e₁ by Gaussian elimination with partial pivoting.
    let mut rhs = vec![0.0; n];
    rhs[0] = 1.0;
    for col in 0..n {
        let piv = (col..n).max_by(|&i, &j| a[i][col].abs().total_cmp(&a[j][col].abs())).expect("non-empty");
        a.swap(col, piv);
        rhs.swap(col, piv);
        let (done, rest) = a.split_at_mut(col + 1);
        let pivot = &done[col];
        for (row, r) in rest.iter_mut().enumerate() {
            let f = r[col] / pivot[col];
            for (v, p) in r[col..].iter_mut().zip(&pivot[col..]) {
                *v -= f * p;
            }
            rhs[col + 1 + row] -= f * rhs[col];
        }
    }
    let mut x = vec![0.0; n];
    for row in (0..n).rev() {
        let s: f64 = (row + 1..n).map(|c| a[row][c] * x[c]).sum();
        x[row] = (rhs[row] - s) / a[row][row];
    }
    x[0]
}

/// Which Gaussian scheme.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scheme {
    /// One trusted curator.
    Pooled,
    /// Each site adds its own noise.
    Conventional,
    /// CAPE's correlated noise.
    Cape,
}

/// A Gaussian-noise estimator of the proportion over S sites.
#[derive(Debug, Clone)]
pub(crate) struct GaussianScheme {
    scheme: Scheme,
    sites: u64,
    eps: f64,
    delta: f64,
    /// Site-level noise scale: σ_s (conventional) or τ (CAPE); σ for pooled.
    site_sigma: f64,
    law: CountRelease,
}

impl GaussianScheme {
    /// Build (S must divide K; checked by the caller).
    pub(crate) fn new(setting: Setting, eps: f64, delta: f64, sites: u64, scheme: Scheme) -> GaussianScheme {
        let sites = if scheme == Scheme::Pooled { 1 } else { sites };
        let k = setting.trials as f64;
        let ns = (setting.trials / sites) as f64;
        let d_star = max_shift(eps, delta);
        let (site_sigma, out_sigma, method) = match scheme {
            Scheme::Pooled => {
                let s = (1.0 / k) / d_star;
                (s, s, Method::Gaussian)
            }
            Scheme::Conventional => {
                let s = (1.0 / ns) / d_star;
                (s, s / (sites as f64).sqrt(), Method::GaussianConventional)
            }
            Scheme::Cape => {
                let tau = (1.0 / ns) * cape_inverse_11(sites).sqrt() / d_star;
                (tau, tau / sites as f64, Method::Cape)
            }
        };
        let centres = (0..=setting.trials).map(|y| y as f64 / k).collect();
        let law = CountRelease::new(
            method,
            Privacy::Approx { eps, delta },
            setting,
            centres,
            Noise::Gaussian { sigma: out_sigma },
            None,
        );
        GaussianScheme { scheme, sites, eps, delta, site_sigma, law }
    }
}

impl Estimator for GaussianScheme {
    fn method(&self) -> Method {
        self.law.method
    }
    fn privacy(&self) -> Privacy {
        Privacy::Approx { eps: self.eps, delta: self.delta }
    }
    /// The protocol itself (sites, zero-sum noise, aggregation).
    fn release(&self, records: &[bool], rng: &mut dyn Rng) -> f64 {
        let s = self.sites as usize;
        let ns = records.len() / s;
        let means: Vec<f64> = records.chunks(ns).map(|c| c.iter().filter(|&&x| x).count() as f64 / ns as f64).collect();
        match self.scheme {
            Scheme::Pooled => count(records) as f64 / records.len() as f64 + self.site_sigma * sample_std_normal(rng),
            Scheme::Conventional => {
                means.iter().map(|m| m + self.site_sigma * sample_std_normal(rng)).sum::<f64>() / s as f64
            }
            Scheme::Cape => {
                let tau = self.site_sigma;
                let e_hat: Vec<f64> = (0..s).map(|_| tau * sample_std_normal(rng)).collect();
                let mean_e = e_hat.iter().sum::<f64>() / s as f64;
                let g_sd = tau / (s as f64).sqrt();
                means.iter().zip(&e_hat).map(|(m, e)| m + (e - mean_e) + g_sd * sample_std_normal(rng)).sum::<f64>()
                    / s as f64
            }
        }
    }
    fn risk_at(&self, theta: f64) -> Risk {
        self.law.risk_at(theta)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_gaussian_calibration_is_below_the_classical_one_for_eps_below_one() {
        for (eps, delta) in [(0.1, 1e-5), (0.5, 1e-6), (0.9, 1e-3)] {
            let classical_sigma = (2.0f64 * (1.25f64 / delta).ln()).sqrt() / eps; // Δ = 1
            let exact_sigma = 1.0 / max_shift(eps, delta);
            assert!(exact_sigma < classical_sigma, "ε {eps}: {exact_sigma} vs {classical_sigma}");
            assert!((gaussian_delta(1.0 / exact_sigma, eps) - delta).abs() < 1e-9 * delta.max(1e-3));
        }
    }

    #[test]
    fn cape_covariance_without_collusion_has_the_closed_form() {
        // S ≤ 3: no colluders; the â block is (1 + 1/S)I − 11ᵀ/S and ê is independent:
        // (Σ⁻¹)₁₁ = 2S/(S + 1).
        for s in [1u64, 2, 3] {
            let want = 2.0 * s as f64 / (s as f64 + 1.0);
            assert!((cape_inverse_11(s) - want).abs() < 1e-12, "S = {s}: {}", cape_inverse_11(s));
        }
    }
}
