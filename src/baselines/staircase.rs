//! The staircase mechanism on the count (Geng & Viswanath, "The Optimal Noise-Adding Mechanism in
//! Differential Privacy", IEEE Trans. Inf. Theory 62(2), 2016), scaled to a proportion and clamped
//! to [lower, upper]: `clamp((y + X)/K)`, X staircase-distributed with sensitivity Δ = 1.
//!
//! The staircase density with b = e^{−ε} and a(γ) = (1 − b)/(2γΔ + 2bΔ(1 − γ)) is
//!
//! ```text
//! f_γ(x) = a(γ) b^j       for |x| ∈ [jΔ, (j + γ)Δ)
//!          a(γ) b^{j+1}   for |x| ∈ [(j + γ)Δ, (j + 1)Δ),     j = 0, 1, 2, …
//! ```
//!
//! and the paper's optimal γ for the cost |x| (ℓ1) and x² (ℓ2) is
//!
//! ```text
//! ℓ1:  γ* = 1/(1 + e^{ε/2})
//! ℓ2:  γ* = −b/(1 − b) + (b − 2b² + 2b⁴ − b⁵)^{1/3} / (2^{1/3} (1 − b)²)
//! ```
//!
//! so `staircase` uses the ℓ2 γ* under squared loss and the ℓ1 γ* under absolute loss: the
//! additive noise of least second moment (or magnitude) among all ε-DP noises for a query of
//! sensitivity 1, the natural rival of `laplace-count-clamped`. (For integer queries the paper's
//! *discrete* staircase with Δ = 1 has a single step per period and is the two-sided geometric
//! distribution: that is the `geometric` baseline.)
//!
//! **Privacy (pure ε).** Replacing one record moves y by at most Δ = 1. The density is
//! f_γ(x) = a b^{⌊|x|/Δ + 1 − γ⌋} (the step index counts the period and whether γ is passed), and
//! for |d| ≤ Δ the reals |x|/Δ + 1 − γ and |x + d|/Δ + 1 − γ differ by at most 1, so their floors
//! differ by at most 1 and f_γ(x) ≤ e^ε f_γ(x + d): y + X is ε-DP (the paper's ε-DP condition
//! on the noise density); dividing by K and clamping are post-processing.
//!
//! **Risk.** The density is constant on pieces, so the clamped release's moments and E|X − θ| are
//! sums over pieces of polynomials of degree ≤ 2, integrated exactly by three Gauss–Legendre
//! points per piece, with the clamped tails as point masses from the closed-form cdf.

use super::count::CountRelease;
use crate::eval::noise::Noise;
use crate::eval::{Method, Privacy, ScalarLoss, Setting};

/// γ* for the cost |x|: 1/(1 + e^{ε/2}).
pub(crate) fn gamma_l1(eps: f64) -> f64 {
    1.0 / (1.0 + (eps / 2.0).exp())
}

/// γ* for the cost x²: −b/(1 − b) + (b − 2b² + 2b⁴ − b⁵)^{1/3}/(2^{1/3}(1 − b)²), b = e^{−ε}. The
/// two terms cancel as ε → 0 (γ* → ½), so the result is kept inside (0, 1): any γ there is ε-DP,
/// and a γ a little off γ* only costs accuracy.
pub(crate) fn gamma_l2(eps: f64) -> f64 {
    let b = (-eps).exp();
    let q = 1.0 - b;
    let g = -b / q + (b - 2.0 * b * b + 2.0 * b.powi(4) - b.powi(5)).cbrt() / (2f64.cbrt() * q * q);
    if g.is_finite() {
        g.clamp(1e-9, 1.0 - 1e-9)
    } else {
        0.5
    }
}

/// The staircase mechanism on the count, clamped to [lower, upper] ([`Method::Staircase`]), with the γ*
/// of the model's loss.
pub(crate) fn staircase(setting: Setting, eps: f64) -> CountRelease {
    let k = setting.trials as f64;
    let centres = (0..=setting.trials).map(|y| y as f64 / k).collect();
    let gamma = match setting.loss {
        ScalarLoss::Squared => gamma_l2(eps),
        ScalarLoss::Absolute => gamma_l1(eps),
    };
    let noise = Noise::Staircase { eps, gamma, width: 1.0 / k };
    CountRelease::new(
        Method::Staircase,
        Privacy::Pure { eps },
        setting,
        centres,
        noise,
        Some((setting.lower, setting.upper)),
    )
}

#[cfg(test)]
mod tests {
    use rand::{rngs::StdRng, SeedableRng};

    use super::*;
    use crate::eval::Estimator;

    /// Golden-section minimum of a unimodal f on (0, 1).
    fn argmin(f: impl Fn(f64) -> f64) -> f64 {
        let r = (5f64.sqrt() - 1.0) / 2.0;
        let (mut a, mut b) = (1e-9, 1.0 - 1e-9);
        for _ in 0..200 {
            let (c, d) = (b - r * (b - a), a + r * (b - a));
            if f(c) < f(d) {
                b = d;
            } else {
                a = c;
            }
        }
        0.5 * (a + b)
    }

    /// The paper's γ* minimise the closed-form second moment and magnitude over γ (found here by
    /// a golden-section search, independently of the formulas), and beat the Laplace noise.
    #[test]
    fn optimal_gammas_minimise_the_noise_cost() {
        for eps in [0.1, 0.5, 1.0, 2.0, 5.0] {
            let noise = |g: f64| Noise::Staircase { eps, gamma: g, width: 1.0 };
            let g2 = argmin(|g| noise(g).variance());
            let g1 = argmin(|g| noise(g).mean_abs());
            assert!((g2 - gamma_l2(eps)).abs() < 1e-6, "ε = {eps}: ℓ2 γ* {} vs search {g2}", gamma_l2(eps));
            assert!((g1 - gamma_l1(eps)).abs() < 1e-6, "ε = {eps}: ℓ1 γ* {} vs search {g1}", gamma_l1(eps));
            let laplace = Noise::Laplace { b: 1.0 / eps };
            assert!(noise(g2).variance() < laplace.variance() && noise(g1).mean_abs() < laplace.mean_abs());
        }
        // Low privacy: the second moment falls like e^{−2ε/3} against Laplace's 2/ε² (the paper's
        // asymptotics); at ε = 5 already 0.0297 against 0.08.
        let v = Noise::Staircase { eps: 5.0, gamma: gamma_l2(5.0), width: 1.0 }.variance();
        assert!((v - 0.029_711).abs() < 1e-5, "{v}");
    }

    /// The density integrates to 1, its cdf is its integral, its moments are the closed forms,
    /// and every ratio f(x)/f(x + d), |d| ≤ Δ, is ≤ e^ε — by brute force on a fine grid.
    #[test]
    fn density_is_a_distribution_with_the_closed_form_moments_and_is_eps_dp() {
        for (eps, gamma, width) in [(0.5, gamma_l2(0.5), 1.0), (2.0, gamma_l1(2.0), 0.1), (1.0, 0.3, 0.02)] {
            let n = Noise::Staircase { eps, gamma, width };
            let r = width * (1.0 + 60.0 / eps);
            let steps = 2_000_000;
            let h = 2.0 * r / steps as f64;
            let (mut total, mut m2, mut m1) = (0.0, 0.0, 0.0);
            for i in 0..steps {
                let w = -r + (i as f64 + 0.5) * h;
                let f = n.pdf(w) * h;
                total += f;
                m2 += w * w * f;
                m1 += w.abs() * f;
            }
            assert!((total - 1.0).abs() < 1e-4, "{n:?}: mass {total}");
            assert!((m2 - n.variance()).abs() < 1e-4 * n.variance(), "{n:?}: {m2} vs {}", n.variance());
            assert!((m1 - n.mean_abs()).abs() < 1e-4 * n.mean_abs(), "{n:?}: {m1} vs {}", n.mean_abs());
            for x in [-1.3, -0.2, 0.0, 0.04, 0.5, 2.7] {
                let x = x * width * 3.0;
                let below = (0..200_000)
                    .map(|i| n.pdf(x - 30.0 * width + (i as f64 + 0.5) * 30.0 * width / 200_000.0))
                    .sum::<f64>()
                    * 30.0
                    * width
                    / 200_000.0;
                assert!((n.cdf(x) - n.cdf(x - 30.0 * width) - below).abs() < 1e-4, "{n:?}: cdf at {x}");
            }
            // (A density is defined up to its values on the step boundaries: points within
            // rounding of a boundary are skipped.)
            let off_steps = |x: f64| {
                let u = x.abs() / width;
                let t = u - u.floor();
                [0.0, gamma, 1.0].iter().all(|s| (t - s).abs() > 1e-9)
            };
            let bound = eps.exp() * (1.0 + 1e-12);
            for i in 0..20_000 {
                let x = -5.0 * width + i as f64 * 10.0 * width / 20_000.0;
                for d in [-1.0, -0.999, -0.5, -gamma, 0.37, 0.999, 1.0] {
                    if !off_steps(x) || !off_steps(x + d * width) {
                        continue;
                    }
                    let (a, b) = (n.pdf(x), n.pdf(x + d * width));
                    assert!(a <= bound * b && b <= bound * a, "{n:?}: f({x}) = {a}, f({}) = {b}", x + d * width);
                }
            }
        }
    }

    /// The sampler draws the density: its empirical moments (fixed seed, 4·10⁵ draws) within five
    /// standard errors of the closed forms.
    #[test]
    fn sampler_draws_the_staircase() {
        use crate::eval::noise::sample_staircase;
        let (eps, width) = (1.0, 0.5);
        let gamma = gamma_l2(eps);
        let n = Noise::Staircase { eps, gamma, width };
        let mut rng = StdRng::seed_from_u64(5);
        let draws: Vec<f64> = (0..400_000).map(|_| sample_staircase(eps, gamma, width, &mut rng)).collect();
        let m2 = draws.iter().map(|w| w * w).sum::<f64>() / draws.len() as f64;
        let sd = (draws.iter().map(|w| (w * w - m2).powi(2)).sum::<f64>() / draws.len() as f64).sqrt();
        assert!((m2 - n.variance()).abs() < 5.0 * sd / (draws.len() as f64).sqrt(), "{m2} vs {}", n.variance());
        let in_first_step = draws.iter().filter(|w| w.abs() < gamma * width).count() as f64 / draws.len() as f64;
        let want = 1.0 - 2.0 * n.cdf(-gamma * width);
        assert!((in_first_step - want).abs() < 5e-3, "{in_first_step} vs {want}");
    }

    /// The clamped release's risk at θ (Gauss–Legendre per piece) against a brute-force midpoint
    /// sum over the noise, for both losses (`compare`'s tests also hold it to Monte Carlo through
    /// the sampler); the released mechanism rounded to a grid is ε-DP.
    #[test]
    fn risk_matches_brute_force_and_rounded_mechanism_is_eps_dp() {
        for loss in [ScalarLoss::Squared, ScalarLoss::Absolute] {
            let setting = Setting { trials: 12, lower: 0.0, upper: 1.0, loss };
            let eps = 1.5;
            let m = staircase(setting, eps);
            for theta in [0.05, 0.4, 0.9] {
                let exact = m.risk_at(theta).value;
                let q = crate::model::family::binomial_pmf_all(12, theta);
                let steps = 400_000;
                let (a, b) = (-2.0, 2.0);
                let h = (b - a) / steps as f64;
                let mut brute = 0.0;
                for (y, &qy) in q.iter().enumerate() {
                    let mut e = 0.0;
                    for i in 0..steps {
                        let w = a + (i as f64 + 0.5) * h;
                        let x = (y as f64 / 12.0 + w).clamp(0.0, 1.0);
                        let l = match loss {
                            ScalarLoss::Squared => (x - theta) * (x - theta),
                            ScalarLoss::Absolute => (x - theta).abs(),
                        };
                        e += l * m.noise.pdf(w) * h;
                    }
                    brute += qy * e;
                }
                // The midpoint sum's error is O(h) at each of the density's ~100 jumps in [−2, 2].
                assert!((exact - brute).abs() < 1e-4 * brute.max(1e-3), "{loss:?} θ = {theta}: {exact} vs {brute}");
            }
            let outputs: Vec<f64> = (0..=20).map(|k| k as f64 / 20.0).collect();
            let p = m.rounded_mechanism(&outputs).expect("grid inside [0, 1]");
            for k in 0..outputs.len() {
                for y in 0..12 {
                    let (a, b) = (p[[k, y]], p[[k, y + 1]]);
                    assert!(a <= eps.exp() * b * (1.0 + 1e-9) + 1e-300 && b <= eps.exp() * a * (1.0 + 1e-9) + 1e-300);
                }
            }
        }
    }
}
