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
    /// The staircase distribution of Geng & Viswanath (2016) for sensitivity Δ = `width`: with
    /// b = e^{−ε} and a = (1 − b)/(2γ + 2b(1 − γ)), the density is a·b^j/Δ on |w|/Δ ∈ [j, j + γ)
    /// and a·b^{j+1}/Δ on |w|/Δ ∈ [j + γ, j + 1), j = 0, 1, … (a geometric mixture of uniforms).
    Staircase {
        /// ε of the staircase (its density ratio across one step).
        eps: f64,
        /// γ ∈ (0, 1): where in each period the density steps down.
        gamma: f64,
        /// The period Δ > 0 (the query's sensitivity, in release units).
        width: f64,
    },
}

/// Three-point Gauss–Legendre nodes and weights on [−1, 1]: exact for polynomials of degree ≤ 5.
const GAUSS3: [(f64, f64); 3] =
    [(-0.774_596_669_241_483_4, 5.0 / 9.0), (0.0, 8.0 / 9.0), (0.774_596_669_241_483_4, 5.0 / 9.0)];

/// Σ_{j≥0} j^p b^j for p = 0, 1, 2 (|b| < 1).
fn geometric_power_sums(b: f64) -> (f64, f64, f64) {
    let q = 1.0 - b;
    (1.0 / q, b / (q * q), b * (1.0 + b) / (q * q * q))
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
            // E W² = 2 Σ_j [a b^j ((j+γ)³ − j³) + a b^{j+1} ((j+1)³ − (j+γ)³)] Δ²/3, summed in
            // closed form with Σ j^p b^j.
            Noise::Staircase { eps, gamma: g, width } => {
                let (b, a) = staircase_b_a(eps, g);
                let (s0, s1, s2) = geometric_power_sums(b);
                let inner = 3.0 * g * s2
                    + 3.0 * g * g * s1
                    + g.powi(3) * s0
                    + b * (3.0 * (1.0 - g) * s2 + 3.0 * (1.0 - g * g) * s1 + (1.0 - g.powi(3)) * s0);
                2.0 * a / 3.0 * inner * width * width
            }
        }
    }

    /// E |W| (closed form for the staircase; the others by their variance-free formulas).
    #[cfg(test)]
    pub(crate) fn mean_abs(&self) -> f64 {
        match *self {
            Noise::Laplace { b } => b,
            Noise::Gaussian { sigma } => sigma * (2.0 / std::f64::consts::PI).sqrt(),
            Noise::LaplaceSum { .. } => self.expected_abs(0.0, None, 0.0),
            // E |W| = 2 Σ_j [a b^j ((j+γ)² − j²) + a b^{j+1} ((j+1)² − (j+γ)²)] Δ/2.
            Noise::Staircase { eps, gamma: g, width } => {
                let (b, a) = staircase_b_a(eps, g);
                let (s0, s1, _) = geometric_power_sums(b);
                a * (2.0 * g * s1 + g * g * s0 + b * (2.0 * (1.0 - g) * s1 + (1.0 - g * g) * s0)) * width
            }
        }
    }

    /// A length on which the density varies (for placing quadrature cuts).
    fn scale(&self) -> f64 {
        match *self {
            Noise::Laplace { b } | Noise::LaplaceSum { b, .. } => b,
            Noise::Gaussian { sigma } => sigma,
            Noise::Staircase { width, .. } => width,
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
            Noise::Staircase { eps, gamma, width } => {
                let (b, a) = staircase_b_a(eps, gamma);
                // Step index ⌊|w|/Δ + 1 − γ⌋: j on [j, j + γ), j + 1 on [j + γ, j + 1).
                a * b.powf((w.abs() / width + 1.0 - gamma).floor()) / width
            }
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
            // P(W ≤ −x) = P(W ≥ x): each period [j, j+1) holds mass (1 − b) b^j / 2, so
            // P(|W|/Δ ≥ j) / 2 = b^j / 2, less what of period j lies below u = x/Δ.
            Noise::Staircase { eps, gamma, width } => {
                let (b, a) = staircase_b_a(eps, gamma);
                let u = -w / width;
                if u == f64::INFINITY {
                    return 0.0;
                }
                let j = u.floor();
                let t = u - j;
                let bj = b.powf(j);
                (0.5 * bj - a * bj * t.min(gamma) - a * bj * b * (t - gamma).max(0.0)).max(0.0)
            }
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
            Noise::Staircase { eps, gamma, width } => sample_staircase(eps, gamma, width, rng),
        }
    }

    /// ∫_a^b h(w) f(w) dw for a bounded h smooth between the points `kinks`.
    fn integrate(&self, a: f64, b: f64, kinks: &[f64], h: impl Fn(f64) -> f64) -> f64 {
        if let Noise::Staircase { width, .. } = *self {
            return self.integrate_steps(a, b, width, kinks, h);
        }
        let mut peaks = vec![0.0];
        peaks.extend_from_slice(kinks);
        adaptive_peaked(a, b, &peaks, self.scale(), TOL, &mut |w| h(w) * self.pdf(w))
    }

    /// The staircase's ∫_a^b h f over its pieces of constant density (cut at every multiple of Δ,
    /// at ±(j + γ)Δ and at the kinks), three Gauss–Legendre points per piece: exact, up to
    /// rounding, for h a polynomial of degree ≤ 5 on each piece (here c + w, (c + w)², |d + w|).
    fn integrate_steps(&self, a: f64, b: f64, width: f64, kinks: &[f64], h: impl Fn(f64) -> f64) -> f64 {
        let Noise::Staircase { gamma, .. } = *self else { unreachable!("the staircase's integral") };
        if b.partial_cmp(&a) != Some(std::cmp::Ordering::Greater) {
            return 0.0;
        }
        let mut cuts: Vec<f64> = vec![a, b];
        cuts.extend(kinks.iter().copied().filter(|&x| x > a && x < b));
        // Steps at ±jΔ and ±(j + γ)Δ, j = 0, 1, … up to the far end of [a, b].
        let far = (a.abs().max(b.abs()) / width).ceil() as u64;
        for j in 0..=far {
            let j = j as f64;
            for x in [j * width, -j * width, (j + gamma) * width, -(j + gamma) * width] {
                if x > a && x < b {
                    cuts.push(x);
                }
            }
        }
        cuts.sort_by(f64::total_cmp);
        cuts.dedup();
        cuts.windows(2)
            .map(|p| {
                let (mid, half) = (0.5 * (p[0] + p[1]), 0.5 * (p[1] - p[0]));
                let density = self.pdf(mid);
                GAUSS3.iter().map(|&(x, wt)| wt * h(mid + half * x)).sum::<f64>() * half * density
            })
            .sum()
    }

    /// Far enough that the mass beyond ±R is below 1e-17.
    pub(crate) fn effective_radius(&self) -> f64 {
        match *self {
            Noise::Laplace { b } => 40.0 * b,
            Noise::LaplaceSum { m, b } => b * (45.0 + 4.0 * m as f64),
            Noise::Gaussian { sigma } => 9.0 * sigma,
            // P(|W| ≥ jΔ) = b^j.
            Noise::Staircase { eps, width, .. } => width * (1.0 + 40.0 / eps),
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

/// b = e^{−ε} and the staircase's height a = (1 − b)/(2γ + 2b(1 − γ)) (Geng & Viswanath 2016).
fn staircase_b_a(eps: f64, gamma: f64) -> (f64, f64) {
    let b = (-eps).exp();
    (b, (1.0 - b) / (2.0 * gamma + 2.0 * b * (1.0 - gamma)))
}

/// One staircase draw, the paper's geometric mixture of uniforms: a sign S, G ~ Geometric with
/// Pr(G = j) = (1 − b) b^j, U ~ Uniform\[0, 1), and B = 1 with probability (1 − γ)b/(γ + (1 − γ)b);
/// W = S·Δ·(G + γU) if B = 0, else S·Δ·(G + γ + (1 − γ)U).
pub(crate) fn sample_staircase(eps: f64, gamma: f64, width: f64, rng: &mut dyn Rng) -> f64 {
    let b = (-eps).exp();
    let sign = if rng.random::<bool>() { 1.0 } else { -1.0 };
    // Geometric by inversion: ⌊ln(1 − V)/ln b⌋.
    let v: f64 = rng.random::<f64>();
    let g = ((1.0 - v).ln() / b.ln()).floor();
    let u: f64 = rng.random::<f64>();
    let upper = rng.random::<f64>() < (1.0 - gamma) * b / (gamma + (1.0 - gamma) * b);
    let x = if upper { g + gamma + (1.0 - gamma) * u } else { g + gamma * u };
    sign * width * x
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
