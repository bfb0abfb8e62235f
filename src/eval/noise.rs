//! Additive noise distributions W (all symmetric about 0) and the exact expected loss of
//! `clamp(c + W, lo, hi)` (or of `c + W`): closed forms where they exist, otherwise numerical
//! integration of the density with the clamped tails taken as point masses at lo and hi.

use rand::{Rng, RngExt};
use statrs::function::erf::erfc;
use statrs::function::gamma::{gamma_lr, ln_gamma};

use crate::eval::ScalarLoss;
use crate::model::quad::adaptive_peaked;

/// Absolute tolerance of the numerical integrals (risks here are ≥ 1e-8 in practice).
const TOL: f64 = 1e-14;

/// A symmetric noise distribution.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Noise {
    /// Laplace with scale b: density e^{−|w|/b}/(2b), variance 2b².
    Laplace {
        /// Scale b > 0.
        b: f64,
    },
    /// The sum of m i.i.d. Laplace(b) variables (e.g. m parties' noises; a mean of m Laplace(b)
    /// is the sum with scale b/m). Density e^{−u} Σ_j c_j u^j / b at u = |w|/b (a Bessel-K form).
    LaplaceSum {
        /// Number of summands m ≥ 1.
        m: u64,
        /// Scale b of each summand.
        b: f64,
    },
    /// Gaussian N(0, σ²).
    Gaussian {
        /// Standard deviation σ > 0.
        sigma: f64,
    },
}

/// Standard normal cdf Φ(x) = ½ erfc(−x/√2).
pub(crate) fn normal_cdf(x: f64) -> f64 {
    0.5 * erfc(-x / std::f64::consts::SQRT_2)
}

/// Standard normal density φ(x).
pub(crate) fn normal_pdf(x: f64) -> f64 {
    (-0.5 * x * x).exp() / (2.0 * std::f64::consts::PI).sqrt()
}

/// ln c_j of the sum of m Laplace(1): c_j = 2^j (2m−2−j)! / (j! (m−1−j)! 2^{2m−1} (m−1)!),
/// cached per thread (the density is evaluated many times per integral).
fn laplace_sum_log_coefficients(m: u64) -> std::rc::Rc<Vec<f64>> {
    thread_local! {
        static CACHE: std::cell::RefCell<std::collections::HashMap<u64, std::rc::Rc<Vec<f64>>>> =
            std::cell::RefCell::new(std::collections::HashMap::new());
    }
    CACHE.with(|c| {
        c.borrow_mut()
            .entry(m)
            .or_insert_with(|| {
                let mf = m as f64;
                std::rc::Rc::new(
                    (0..m)
                        .map(|j| {
                            let jf = j as f64;
                            jf * 2f64.ln() + ln_gamma(2.0 * mf - 1.0 - jf)
                                - ln_gamma(jf + 1.0)
                                - ln_gamma(mf - jf)
                                - (2.0 * mf - 1.0) * 2f64.ln()
                                - ln_gamma(mf)
                        })
                        .collect(),
                )
            })
            .clone()
    })
}

impl Noise {
    /// Variance of W.
    pub(crate) fn variance(&self) -> f64 {
        match *self {
            Noise::Laplace { b } => 2.0 * b * b,
            Noise::LaplaceSum { m, b } => 2.0 * m as f64 * b * b,
            Noise::Gaussian { sigma } => sigma * sigma,
        }
    }

    /// A length on which the density varies (for placing quadrature cuts).
    fn scale(&self) -> f64 {
        match *self {
            Noise::Laplace { b } | Noise::LaplaceSum { b, .. } => b,
            Noise::Gaussian { sigma } => sigma,
        }
    }

    /// Density at w.
    pub(crate) fn pdf(&self, w: f64) -> f64 {
        match *self {
            Noise::Laplace { b } => (-w.abs() / b).exp() / (2.0 * b),
            Noise::LaplaceSum { m, b } => {
                let u = w.abs() / b;
                let lu = if u > 0.0 { u.ln() } else { f64::NEG_INFINITY };
                laplace_sum_log_coefficients(m)
                    .iter()
                    .enumerate()
                    .map(|(j, lc)| if j == 0 { (lc - u).exp() } else { (lc + j as f64 * lu - u).exp() })
                    .sum::<f64>()
                    / b
            }
            Noise::Gaussian { sigma } => normal_pdf(w / sigma) / sigma,
        }
    }

    /// P(W ≤ w).
    pub(crate) fn cdf(&self, w: f64) -> f64 {
        if w > 0.0 {
            return 1.0 - self.cdf(-w);
        }
        match *self {
            Noise::Laplace { b } => 0.5 * (w / b).exp(),
            Noise::LaplaceSum { m, b } => {
                // P(W ≤ −x) = ½ − P(0 ≤ W ≤ x) = ½ − Σ_j c_j j! P(j+1, x/b) (regularised gamma).
                let u = -w / b;
                if u <= 0.0 {
                    return 0.5;
                }
                if u == f64::INFINITY {
                    return 0.0;
                }
                let inner: f64 = laplace_sum_log_coefficients(m)
                    .iter()
                    .enumerate()
                    .map(|(j, lc)| (lc + ln_gamma(j as f64 + 1.0)).exp() * gamma_lr(j as f64 + 1.0, u))
                    .sum();
                (0.5 - inner).max(0.0)
            }
            Noise::Gaussian { sigma } => normal_cdf(w / sigma),
        }
    }

    /// P(W > w) = P(W < −w) by symmetry (no cancellation in the upper tail).
    pub(crate) fn sf(&self, w: f64) -> f64 {
        self.cdf(-w)
    }

    /// One draw of W.
    pub(crate) fn sample(&self, rng: &mut dyn Rng) -> f64 {
        match *self {
            Noise::Laplace { b } => sample_laplace(b, rng),
            Noise::LaplaceSum { m, b } => (0..m).map(|_| sample_laplace(b, rng)).sum(),
            Noise::Gaussian { sigma } => sigma * sample_std_normal(rng),
        }
    }

    /// ∫_a^b h(w) f(w) dw for a bounded h smooth between the points `kinks`.
    fn integrate(&self, a: f64, b: f64, kinks: &[f64], h: impl Fn(f64) -> f64) -> f64 {
        let mut peaks = vec![0.0];
        peaks.extend_from_slice(kinks);
        adaptive_peaked(a, b, &peaks, self.scale(), TOL, &mut |w| h(w) * self.pdf(w))
    }

    /// Far enough that the mass beyond ±R is below 1e-17.
    fn effective_radius(&self) -> f64 {
        match *self {
            Noise::Laplace { b } => 40.0 * b,
            Noise::LaplaceSum { m, b } => b * (45.0 + 4.0 * m as f64),
            Noise::Gaussian { sigma } => 9.0 * sigma,
        }
    }

    /// (E X, E X²) for X = clamp(c + W, lo, hi) (`clamp = None`: X = c + W).
    pub(crate) fn moments(&self, c: f64, clamp: Option<(f64, f64)>) -> (f64, f64) {
        match (self, clamp) {
            (_, None) => (c, c * c + self.variance()),
            (_, Some((lo, hi))) => {
                let (pl, ph) = (self.cdf(lo - c), self.sf(hi - c));
                let (a, b) = (lo - c, hi - c);
                let m1 = lo * pl + hi * ph + self.integrate(a, b, &[], |w| c + w);
                let m2 = lo * lo * pl + hi * hi * ph + self.integrate(a, b, &[], |w| (c + w) * (c + w));
                (m1, m2)
            }
        }
    }

    /// E L(θ, X) for X = clamp(c + W, lo, hi) (`clamp = None`: X = c + W).
    pub(crate) fn expected_loss(&self, c: f64, clamp: Option<(f64, f64)>, theta: f64, loss: ScalarLoss) -> f64 {
        match loss {
            ScalarLoss::Squared => {
                let (m1, m2) = self.moments(c, clamp);
                (m2 - 2.0 * theta * m1 + theta * theta).max(0.0)
            }
            ScalarLoss::Absolute => self.expected_abs(c, clamp, theta),
        }
    }

    /// E |X − θ|.
    fn expected_abs(&self, c: f64, clamp: Option<(f64, f64)>, theta: f64) -> f64 {
        let d = c - theta;
        match (self, clamp) {
            // E|d + W|, W ~ Lap(b): |d| + b e^{−|d|/b}.
            (Noise::Laplace { b }, None) => d.abs() + b * (-d.abs() / b).exp(),
            // E|d + σZ| = d(1 − 2Φ(−d/σ)) + 2σφ(d/σ).
            (Noise::Gaussian { sigma }, None) => {
                let s = *sigma;
                d * (1.0 - 2.0 * normal_cdf(-d / s)) + 2.0 * s * normal_pdf(d / s)
            }
            (_, None) => {
                let r = self.effective_radius() + d.abs();
                self.integrate(-r, r, &[-d], |w| (d + w).abs())
            }
            (_, Some((lo, hi))) => {
                let (pl, ph) = (self.cdf(lo - c), self.sf(hi - c));
                (lo - theta).abs() * pl
                    + (hi - theta).abs() * ph
                    + self.integrate(lo - c, hi - c, &[-d], |w| (d + w).abs())
            }
        }
    }
}

/// One Laplace(b) draw by inversion.
pub(crate) fn sample_laplace(b: f64, rng: &mut dyn Rng) -> f64 {
    let u: f64 = rng.random::<f64>() - 0.5;
    -b * u.signum() * (1.0 - 2.0 * u.abs()).ln()
}

/// One N(0, 1) draw (Box–Muller).
pub(crate) fn sample_std_normal(rng: &mut dyn Rng) -> f64 {
    let u1: f64 = 1.0 - rng.random::<f64>(); // (0, 1]
    let u2: f64 = rng.random::<f64>();
    (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
}

/// Pr(nearest point of `outputs` to c + W is θ̃_k) for each k: the cells are cut at the midpoints
/// between sorted outputs. Clamping to \[lower, upper\] ⊇ outputs moves mass only within the first and
/// last cells, so the same matrix serves the clamped release.
pub(crate) fn rounded_column(c: f64, noise: &Noise, outputs: &[f64]) -> Vec<f64> {
    let mut order: Vec<usize> = (0..outputs.len()).collect();
    order.sort_by(|&a, &b| outputs[a].total_cmp(&outputs[b]));
    let n = order.len();
    let cut = |r: usize| -> f64 {
        // Cut r lies between the r-th and (r+1)-th smallest outputs (r = 0..n−2), shifted by −c.
        0.5 * (outputs[order[r]] + outputs[order[r + 1]]) - c
    };
    let mut col = vec![0.0; n];
    for (r, &k) in order.iter().enumerate() {
        let lo = if r == 0 { f64::NEG_INFINITY } else { cut(r - 1) };
        let hi = if r + 1 == n { f64::INFINITY } else { cut(r) };
        // P(lo < W ≤ hi), computed from the tail on the far side of 0 to avoid cancellation.
        let below = |w: f64| {
            if w == f64::NEG_INFINITY {
                0.0
            } else if w == f64::INFINITY {
                1.0
            } else {
                noise.cdf(w)
            }
        };
        let above = |w: f64| {
            if w == f64::NEG_INFINITY {
                1.0
            } else if w == f64::INFINITY {
                0.0
            } else {
                noise.sf(w)
            }
        };
        col[k] = if lo >= 0.0 {
            above(lo) - above(hi)
        } else if hi <= 0.0 {
            below(hi) - below(lo)
        } else {
            1.0 - below(lo) - above(hi)
        }
        .max(0.0);
    }
    col
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::quad::adaptive_peaked;

    #[test]
    fn laplace_sum_density_integrates_to_one_and_matches_known_cases() {
        for m in [1u64, 2, 3, 10, 40] {
            let n = Noise::LaplaceSum { m, b: 0.3 };
            let r = n.effective_radius();
            let total = adaptive_peaked(-r, r, &[0.0], 0.3, 1e-14, &mut |w| n.pdf(w));
            assert!((total - 1.0).abs() < 1e-10, "m = {m}: total {total}");
            let var = adaptive_peaked(-r, r, &[0.0], 0.3, 1e-14, &mut |w| w * w * n.pdf(w));
            assert!((var - n.variance()).abs() < 1e-9 * n.variance().max(1.0), "m = {m}: {var}");
            // The cdf is the integral of the density.
            for x in [-2.0, -0.5, -0.01, 0.0, 0.7] {
                let want = adaptive_peaked(-r, x, &[0.0], 0.3, 1e-14, &mut |w| n.pdf(w));
                assert!((n.cdf(x) - want).abs() < 1e-10, "m = {m}, x = {x}: {} vs {want}", n.cdf(x));
            }
        }
        // m = 2: (1 + |x|/b) e^{−|x|/b} / (4b).
        let n = Noise::LaplaceSum { m: 2, b: 0.5 };
        let x: f64 = 0.8;
        assert!((n.pdf(x) - (1.0 + x / 0.5) * (-x / 0.5).exp() / 2.0).abs() < 1e-14);
    }

    #[test]
    fn clamped_moments_agree_with_brute_force_quadrature() {
        let (c, lo, hi) = (0.2, 0.0, 1.0);
        for n in [Noise::Laplace { b: 0.05 }, Noise::Gaussian { sigma: 0.3 }, Noise::LaplaceSum { m: 3, b: 0.1 }] {
            let (m1, m2) = n.moments(c, Some((lo, hi)));
            // Brute force: a fine midpoint sum over a wide range of w.
            let (mut s1, mut s2) = (0.0, 0.0);
            let steps = 400_000;
            let (a, b) = (-6.0, 6.0);
            let h = (b - a) / steps as f64;
            for i in 0..steps {
                let w = a + (i as f64 + 0.5) * h;
                let x = (c + w).clamp(lo, hi);
                s1 += x * n.pdf(w) * h;
                s2 += x * x * n.pdf(w) * h;
            }
            assert!((m1 - s1).abs() < 2e-6 && (m2 - s2).abs() < 2e-6, "{n:?}: ({m1}, {m2}) vs ({s1}, {s2})");
            let ea = n.expected_loss(c, Some((lo, hi)), 0.35, ScalarLoss::Absolute);
            let mut sa = 0.0;
            for i in 0..steps {
                let w = a + (i as f64 + 0.5) * h;
                sa += ((c + w).clamp(lo, hi) - 0.35).abs() * n.pdf(w) * h;
            }
            assert!((ea - sa).abs() < 2e-6, "{n:?}: {ea} vs {sa}");
        }
    }
}
