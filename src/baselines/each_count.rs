//! Noise on each count of a multinomial's count vector (the histogram release: Dwork et al.
//! 2006), with its plug-in estimate. The two-sided geometric noise of Ghosh et al. 2009 per count
//! is below; [`CountNoise::Laplace`] (scale 2/ε) and [`CountNoise::Staircase`] (Geng & Viswanath
//! 2016, sensitivity 1 at ε/2 per count) are their continuous rivals, ε-DP by the same argument,
//! their risks by the numerical integration of [`Noise::expected_loss`].
//!
//!
//! `θ̂_j = clamp((n_j + Z_j)/K, 0, 1)` for each coordinate j of the parameter grid, the Z_j
//! independent with Pr(Z = z) = (1 − α)/(1 + α)·α^{|z|}, α = e^{−ε/2}.
//!
//! **Privacy (pure ε).** Replacing one record moves it from one category to another: two counts
//! change by 1 each (the count vector's L1 sensitivity is 2), and each count's noise ratio is at
//! most α^{−1} = e^{ε/2}, so the vector of noisy counts is ε-DP; the estimate is post-processing.
//!
//! **Risk (exact).** Under squared or absolute loss, both sums over coordinates, the risk at θ is
//! Σ_j Σ_n Bin(n; K, θ_j)·E_Z\[ℓ(θ_j, clamp((n + Z)/K))\] (each count is binomial on its own), a
//! finite sum: the clamped tails are the geometric's closed-form tail masses, and the terms in
//! between are summed until α^{|z|} falls below 1e-18 of the largest.

use super::staircase::{gamma_l1, gamma_l2};
use crate::eval::noise::Noise;
use crate::eval::ScalarLoss;
use crate::mechanism::lower_median;
use crate::model::family::binomial_pmf_all;
use crate::model::{Family, Loss, Model};

/// The noise's odds α = e^{−ε/2} at ε.
fn alpha(eps: f64) -> f64 {
    (-eps / 2.0).exp()
}

/// True where [`bayes_risk`] applies to `model`: a multinomial with one data holder under
/// squared or absolute loss.
pub(crate) fn applies(model: &Model) -> bool {
    matches!((model.family(), model.loss()), (Family::Multinomial { .. }, Loss::Squared | Loss::Absolute))
        && model.parties() <= 1
}

/// Which noise each count gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CountNoise {
    /// Two-sided geometric, α = e^{−ε/2} (exact sums).
    Geometric,
    /// Laplace of scale 2/ε (numerical integration, [`Noise::expected_loss`]).
    Laplace,
    /// The staircase of sensitivity 1 at ε/2 per count, with the loss's γ* (numerical).
    Staircase,
}

/// The Bayes risk on the model's grid prior of the noisy counts' plug-in estimate at ε, or `None`
/// where it does not apply (a family other than the multinomial, or a loss other than squared or
/// absolute).
pub(crate) fn bayes_risk(model: &Model, eps: f64, noise: CountNoise) -> Option<f64> {
    let Family::Multinomial { records, .. } = model.family() else { return None };
    let scalar = ScalarLoss::of(model.loss())?;
    let loss = move |t: f64, x: f64| match scalar {
        ScalarLoss::Squared => (t - x) * (t - x),
        ScalarLoss::Absolute => (t - x).abs(),
    };
    let k = *records;
    let a = alpha(eps);
    let norm = (1.0 - a) / (1.0 + a);
    // |z| beyond `reach` carries less than 1e-18 of the mass at 0.
    let reach = ((18.0 * std::f64::consts::LN_10) / -a.ln()).ceil().min(1e7) as i64;
    // The continuous noises in proportion units (each count's sensitivity 1 at ε/2, over K).
    let continuous = match noise {
        CountNoise::Geometric => None,
        CountNoise::Laplace => Some(Noise::Laplace { b: 2.0 / (eps * k as f64) }),
        CountNoise::Staircase => {
            let gamma = match scalar {
                ScalarLoss::Squared => gamma_l2(eps / 2.0),
                ScalarLoss::Absolute => gamma_l1(eps / 2.0),
            };
            Some(Noise::Staircase { eps: eps / 2.0, gamma, width: 1.0 / k as f64 })
        }
    };
    // E_W[ℓ(t, clamp((n + W)/K, 0, 1))] for the count n.
    let expected = |n: i64, t: f64| -> f64 {
        if let Some(w) = &continuous {
            return w.expected_loss(n as f64 / k as f64, Some((0.0, 1.0)), t, scalar);
        }
        let kk = k as i64;
        // The release is 0 for Z ≤ −n and 1 for Z ≥ K − n: the tails' closed-form masses.
        let below = if n == 0 { 1.0 / (1.0 + a) } else { a.powi(n as i32) / (1.0 + a) };
        let above = if n == kk { 1.0 / (1.0 + a) } else { a.powi((kk - n) as i32) / (1.0 + a) };
        let mut e = below * loss(t, 0.0) + above * loss(t, 1.0);
        let (lo, hi) = ((-n + 1).max(-reach), (kk - n - 1).min(reach));
        for z in lo..=hi {
            e += norm * a.powi(z.unsigned_abs() as i32) * loss(t, (n + z) as f64 / k as f64);
        }
        e
    };
    // The risk of one coordinate at θ_j = t, once per distinct t (a grid has few).
    let mut by_coordinate: std::collections::HashMap<u64, f64> = std::collections::HashMap::new();
    let theta = model.theta();
    let mut total = 0.0;
    for (i, &weight) in model.prior().iter().enumerate() {
        if weight == 0.0 {
            continue;
        }
        let mut risk = 0.0;
        for &t in theta.point(i).iter() {
            risk += *by_coordinate.entry(t.to_bits()).or_insert_with(|| {
                let pmf = binomial_pmf_all(k, t);
                pmf.iter().enumerate().filter(|(_, &q)| q > 0.0).map(|(n, &q)| q * expected(n as i64, t)).sum::<f64>()
            });
        }
        total += weight * risk;
    }
    Some(total)
}

/// The most observations for which the remap's risk is estimated (each draw's posterior sums
/// over Y), as for the exponential mechanism.
pub(crate) const MAX_REMAP_OBSERVATIONS: usize = 4096;

/// The draws [`remap_risk`] takes for `model`: 20,000, fewer (down to 2,000) where each draw's
/// posterior over Y would make them exceed about 10⁹ operations.
pub(crate) fn remap_draws(model: &Model) -> usize {
    let per_draw = (model.family().observation_count() * model.theta().len()).max(1);
    (1_000_000_000 / per_draw).clamp(2_000, 20_000)
}

/// The Bayes risk of the noisy counts followed by the Bayes remap (the posterior mean, or each
/// coordinate's posterior median, of θ on the grid given the d noisy counts), by Monte Carlo:
/// (estimate, standard error). Each draw takes θ from the grid prior, the counts from its
/// likelihood and the noise, and scores the conditional risk Σ_j π(θ_j | z) ℓ(θ_j, a(z)) (the
/// Rao–Blackwellised estimator: unbiased, with the spread of z only). `None` where
/// [`bayes_risk`] does not apply or |Y| is above [`MAX_REMAP_OBSERVATIONS`].
pub(crate) fn remap_risk(model: &Model, eps: f64, noise: CountNoise, draws: usize, seed: u64) -> Option<(f64, f64)> {
    use rand::{RngExt, SeedableRng};
    let Family::Multinomial { records, .. } = model.family() else { return None };
    let scalar = ScalarLoss::of(model.loss())?;
    if model.family().observation_count() > MAX_REMAP_OBSERVATIONS {
        return None;
    }
    let observations = model.family().observations();
    let q = model.family().likelihood_matrix(model.theta()); // |Y| × M
    let (n_obs, m) = q.dim();
    let theta = model.theta();
    let dim = theta.dim();
    let prior = model.prior();
    let a = alpha(eps);
    // Each count's noise: its density (or mass) and a draw, in count units.
    let continuous = match noise {
        CountNoise::Geometric => None,
        CountNoise::Laplace => Some(Noise::Laplace { b: 2.0 / eps }),
        CountNoise::Staircase => {
            let gamma = match scalar {
                ScalarLoss::Squared => gamma_l2(eps / 2.0),
                ScalarLoss::Absolute => gamma_l1(eps / 2.0),
            };
            Some(Noise::Staircase { eps: eps / 2.0, gamma, width: 1.0 })
        }
    };
    let density = |w: f64| match &continuous {
        Some(n) => n.pdf(w),
        None => (1.0 - a) / (1.0 + a) * a.powf(w.abs()),
    };
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed ^ eps.to_bits().rotate_left(23) ^ *records);
    let draw_noise = |rng: &mut rand::rngs::StdRng| match &continuous {
        Some(n) => n.sample(rng),
        None => {
            let mut one = || (rng.random::<f64>().ln() / a.ln()).floor();
            one() - one()
        }
    };
    let pick = |u: f64, weights: &mut dyn Iterator<Item = f64>| -> usize {
        let mut u = u;
        let mut last = 0;
        for (i, w) in weights.enumerate() {
            last = i;
            u -= w;
            if u <= 0.0 {
                return i;
            }
        }
        last
    };
    let loss = |t: f64, x: f64| match scalar {
        ScalarLoss::Squared => (t - x) * (t - x),
        ScalarLoss::Absolute => (t - x).abs(),
    };
    let (mut sum, mut sum2) = (0.0, 0.0);
    let mut weights = vec![0.0; m];
    let mut z = vec![0.0; dim];
    for _ in 0..draws {
        let j = pick(rng.random::<f64>(), &mut prior.iter().copied());
        let y = pick(rng.random::<f64>(), &mut q.column(j).iter().copied());
        let counts = observations.point(y);
        for c in 0..dim {
            z[c] = counts[c] + draw_noise(&mut rng);
        }
        // π(θ_i | z) ∝ π_i Σ_y q[y, i] Π_c f(z_c − y_c).
        weights.iter_mut().for_each(|w| *w = 0.0);
        for yy in 0..n_obs {
            let point = observations.point(yy);
            let f: f64 = (0..dim).map(|c| density(z[c] - point[c])).product();
            if f > 0.0 {
                for (i, w) in weights.iter_mut().enumerate() {
                    *w += q[[yy, i]] * f;
                }
            }
        }
        weights.iter_mut().zip(prior).for_each(|(w, p)| *w *= p);
        let mass: f64 = weights.iter().sum();
        if mass <= 0.0 {
            continue;
        }
        let action: Vec<f64> = (0..dim)
            .map(|c| match scalar {
                ScalarLoss::Squared => (0..m).map(|i| weights[i] * theta.point(i)[c]).sum::<f64>() / mass,
                ScalarLoss::Absolute => lower_median((0..m).map(|i| (theta.point(i)[c], weights[i] / mass))),
            })
            .collect();
        let conditional: f64 =
            (0..m).map(|i| weights[i] * (0..dim).map(|c| loss(theta.point(i)[c], action[c])).sum::<f64>()).sum::<f64>()
                / mass;
        sum += conditional;
        sum2 += conditional * conditional;
    }
    let n = draws as f64;
    let mean = sum / n;
    Some((mean, ((sum2 / n - mean * mean).max(0.0) / n).sqrt()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{RngExt, SeedableRng};

    fn poll(records: u64, loss: &str) -> Model {
        let text = format!(
            "name = \"poll\"\nepsilon = [1.0]\n[parameter]\ngrid = {{ kind = \"simplex\", resolution = 4 }}\n\
             prior = {{ kind = \"dirichlet\", alpha = [1.0, 2.0, 3.0] }}\n[observation]\nfamily = \"multinomial\"\n\
             categories = 3\nrecords = {records}\n[output]\ngrid = \"parameter\"\n[loss]\n{loss}\n"
        );
        Model::from_spec(crate::model::spec::ModelSpec::from_toml(&text, "poll").unwrap()).unwrap()
    }

    /// Each noise's risk agrees with a direct simulation of the release (θ from the grid prior,
    /// the counts from the multinomial, each count's noise drawn), to four standard errors.
    #[test]
    fn the_risks_match_a_simulation_of_the_release() {
        use crate::eval::noise::{sample_laplace, sample_staircase};
        for loss in ["squared-euclidean", "absolute"] {
            let model = poll(12, &format!("kind = \"{loss}\""));
            let eps = 0.8;
            for noise in [CountNoise::Geometric, CountNoise::Laplace, CountNoise::Staircase] {
                let exact = bayes_risk(&model, eps, noise).unwrap();
                let mut rng = rand::rngs::StdRng::seed_from_u64(7);
                let a = alpha(eps);
                let gamma = if loss == "absolute" { gamma_l1(eps / 2.0) } else { gamma_l2(eps / 2.0) };
                let draw = |rng: &mut rand::rngs::StdRng| -> f64 {
                    match noise {
                        // Two-sided geometric: the difference of two one-sided geometrics of odds α.
                        CountNoise::Geometric => {
                            let mut one = || (rng.random::<f64>().ln() / a.ln()).floor();
                            one() - one()
                        }
                        CountNoise::Laplace => sample_laplace(2.0 / eps, rng),
                        CountNoise::Staircase => sample_staircase(eps / 2.0, gamma, 1.0, rng),
                    }
                };
                let prior = model.prior().to_vec();
                let draws = 100_000;
                let (mut sum, mut sum2) = (0.0, 0.0);
                for _ in 0..draws {
                    let mut u = rng.random::<f64>();
                    let i = prior.iter().position(|&w| {
                        u -= w;
                        u <= 0.0
                    });
                    let theta = model.theta().point(i.unwrap_or(prior.len() - 1)).to_vec();
                    let mut counts = vec![0.0f64; theta.len()];
                    for _ in 0..12 {
                        let mut v = rng.random::<f64>();
                        let c = theta.iter().position(|&t| {
                            v -= t;
                            v <= 0.0
                        });
                        counts[c.unwrap_or(theta.len() - 1)] += 1.0;
                    }
                    let mut l = 0.0;
                    for (&t, &n) in theta.iter().zip(&counts) {
                        let x = ((n + draw(&mut rng)) / 12.0).clamp(0.0, 1.0);
                        l += if loss == "absolute" { (t - x).abs() } else { (t - x) * (t - x) };
                    }
                    sum += l;
                    sum2 += l * l;
                }
                let mean = sum / draws as f64;
                let se = ((sum2 / draws as f64 - mean * mean) / draws as f64).sqrt();
                assert!(
                    (mean - exact).abs() <= 4.0 * se,
                    "{loss}, {noise:?}: computed {exact}, simulated {mean} ± {se}"
                );
            }
        }
    }

    /// At a large ε the noise vanishes and the remap is the non-private Bayes rule: its risk is
    /// the posterior risk Σ_y min_a E[ℓ(θ, a) | y] (computed here from the likelihood directly,
    /// squared loss: the posterior variance); at a moderate ε it lies between that and the
    /// plug-in's.
    #[test]
    fn the_remap_tends_to_the_non_private_bayes_risk_and_beats_the_plug_in() {
        let model = poll(10, "kind = \"squared-euclidean\"");
        let q = model.family().likelihood_matrix(model.theta());
        let prior = model.prior();
        let mut posterior_risk = 0.0;
        for y in 0..q.nrows() {
            let w: Vec<f64> = (0..q.ncols()).map(|i| prior[i] * q[[y, i]]).collect();
            let mass: f64 = w.iter().sum();
            for c in 0..model.theta().dim() {
                let mean: f64 = (0..w.len()).map(|i| w[i] * model.theta().point(i)[c]).sum::<f64>() / mass;
                posterior_risk += (0..w.len()).map(|i| w[i] * (model.theta().point(i)[c] - mean).powi(2)).sum::<f64>();
            }
        }
        let (sharp, se) = remap_risk(&model, 200.0, CountNoise::Geometric, 20_000, 1).unwrap();
        assert!((sharp - posterior_risk).abs() <= 4.0 * se + 1e-12, "{sharp} ± {se} vs {posterior_risk}");
        for noise in [CountNoise::Geometric, CountNoise::Laplace, CountNoise::Staircase] {
            let (remap, se) = remap_risk(&model, 1.0, noise, 20_000, 1).unwrap();
            let plug_in = bayes_risk(&model, 1.0, noise).unwrap();
            assert!(
                remap - 4.0 * se > posterior_risk && remap + 4.0 * se < plug_in,
                "{noise:?}: {remap} ± {se}, {posterior_risk}, {plug_in}"
            );
        }
    }

    #[test]
    fn applies_to_the_multinomial_under_squared_or_absolute_loss_only() {
        assert!(bayes_risk(&poll(5, "kind = \"zero-one\"\ntolerance = 0.1"), 1.0, CountNoise::Geometric).is_none());
        let binomial = Model::from_spec(
            crate::model::spec::ModelSpec::from_toml(
                "name = \"b\"\nepsilon = [1.0]\n[parameter]\ngrid = { kind = \"midpoint\", points = 5 }\n\
                 prior = { kind = \"uniform\" }\n[observation]\nfamily = \"binomial\"\ntrials = 4\n[loss]\nkind = \"squared\"\n",
                "b",
            )
            .unwrap(),
        )
        .unwrap();
        assert!(bayes_risk(&binomial, 1.0, CountNoise::Laplace).is_none());
    }
}
