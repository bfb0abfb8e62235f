//! Laplace and staircase noise on a clipped Poisson sum S = Σ_r min(x_r, c) (the model's
//! sufficient statistic; replacing one record moves it by at most c), with and without the Bayes
//! remap:
//!
//! - **plug-in** (`laplace-sum`, `staircase-sum`): `clamp((S + W)/N, lower, upper)`;
//! - **remap** (`laplace-sum-remap`, `staircase-sum-remap`): the posterior mean (squared loss)
//!   or median (absolute loss) of θ on the parameter grid given the release z = S + W.
//!
//! W is Laplace with scale c/ε (Dwork et al. 2006) or the staircase of sensitivity Δ = c with the
//! loss's γ* (Geng & Viswanath 2016). **Privacy (pure ε):** |S − S'| ≤ c between neighbours and
//! either noise is ε-DP for a query of sensitivity c; the estimate is post-processing.
//!
//! **Risk (numerical integration).** The plug-in risk sums over S the noise's clamped expected
//! loss ([`Noise::expected_loss`]). The remap's risk integrates over z: between consecutive breaks
//! of the noise densities f(z − S) (integers for the Laplace; integers and integers ± γc for the
//! staircase) every density is smooth, and six Gauss–Legendre points per piece integrate
//! Σ_j π_j Σ_S q_j(S) f(z − S) ℓ(θ_j, a*(z)), a*(z) the posterior summary at z.

use super::staircase::{gamma_l1, gamma_l2};
use crate::eval::noise::Noise;
use crate::eval::ScalarLoss;
use crate::mechanism::lower_median;
use crate::model::{Family, Model};

/// Which noise.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SumNoise {
    /// Laplace of scale c/ε.
    Laplace,
    /// The staircase of sensitivity c with the loss's γ*.
    Staircase,
}

/// True where [`bayes_risks`] applies to `model`: a clipped Poisson sum with one data holder under
/// squared or absolute loss.
pub(crate) fn applies(model: &Model) -> bool {
    matches!(model.family(), Family::Poisson { .. }) && ScalarLoss::of(model.loss()).is_some() && model.parties() <= 1
}

/// The Bayes risks on the grid prior of the plug-in estimate and of the remap, or `None` where
/// the model is not a clipped Poisson sum under squared or absolute loss.
pub(crate) fn bayes_risks(model: &Model, eps: f64, kind: SumNoise) -> Option<(f64, f64)> {
    let Family::Poisson { records, cap } = *model.family() else { return None };
    let loss = ScalarLoss::of(model.loss())?;
    let (n, c) = (records as f64, cap as f64);
    let noise = |scale: f64| match kind {
        SumNoise::Laplace => Noise::Laplace { b: scale * c / eps },
        SumNoise::Staircase => {
            let gamma = match loss {
                ScalarLoss::Squared => gamma_l2(eps),
                ScalarLoss::Absolute => gamma_l1(eps),
            };
            Noise::Staircase { eps, gamma, width: scale * c }
        }
    };
    let q = model.family().likelihood_matrix(model.theta()); // |Y| × M
    let thetas: Vec<f64> = (0..model.theta().len()).map(|j| model.theta().point(j)[0]).collect();
    let prior = model.prior();
    let ell = |t: f64, x: f64| match loss {
        ScalarLoss::Squared => (t - x) * (t - x),
        ScalarLoss::Absolute => (t - x).abs(),
    };

    // Plug-in: the noise in release units (c/N per unit of S), centred at S/N, clamped.
    let scaled = noise(1.0 / n);
    let clamp = Some(model.interval());
    let mut plug_in = 0.0;
    for (s, row) in q.outer_iter().enumerate() {
        let centre = s as f64 / n;
        for (j, &qj) in row.iter().enumerate() {
            if qj * prior[j] > 1e-300 {
                plug_in += prior[j] * qj * scaled.expected_loss(centre, clamp, thetas[j], loss);
            }
        }
    }

    // Remap: quadrature over z in units of S.
    let w = noise(1.0);
    let reach = w.effective_radius();
    let y_max = (q.nrows() - 1) as f64;
    let mut offsets = vec![0.0];
    if let Noise::Staircase { gamma, .. } = w {
        for f in [(gamma * c).fract(), (1.0 - (gamma * c).fract()).fract()] {
            if f > 1e-12 && f < 1.0 - 1e-12 {
                offsets.push(f);
            }
        }
    }
    offsets.sort_by(f64::total_cmp);
    offsets.dedup();
    let (nodes, weights) = gauss_legendre_6();
    let (lo, hi) = ((-reach).floor() as i64, (y_max + reach).ceil() as i64);
    let mut remap = 0.0;
    let mut h = vec![0.0; thetas.len()];
    for unit in lo..hi {
        let mut cuts: Vec<f64> = offsets.iter().map(|o| unit as f64 + o).collect();
        cuts.push(unit as f64 + 1.0);
        for piece in cuts.windows(2) {
            let (a, b) = (piece[0], piece[1]);
            for (x, wt) in nodes.iter().zip(&weights) {
                let z = 0.5 * (a + b) + 0.5 * (b - a) * x;
                // h_j(z) = Σ_S q_j(S) f(z − S) over the S within reach of z.
                h.iter_mut().for_each(|v| *v = 0.0);
                let (s0, s1) = (((z - reach).floor().max(0.0)) as usize, ((z + reach).ceil().min(y_max)) as usize);
                for s in s0..=s1.min(q.nrows() - 1) {
                    let f = w.pdf(z - s as f64);
                    if f > 0.0 {
                        for (j, hj) in h.iter_mut().enumerate() {
                            *hj += q[[s, j]] * f;
                        }
                    }
                }
                let joint: Vec<f64> = h.iter().zip(prior).map(|(hj, pj)| hj * pj).collect();
                let mass: f64 = joint.iter().sum();
                if mass <= 0.0 {
                    continue;
                }
                let action = match loss {
                    ScalarLoss::Squared => joint.iter().zip(&thetas).map(|(p, t)| p * t).sum::<f64>() / mass,
                    ScalarLoss::Absolute => lower_median(thetas.iter().zip(&joint).map(|(&t, &p)| (t, p / mass))),
                };
                let integrand: f64 = joint.iter().zip(&thetas).map(|(p, &t)| p * ell(t, action)).sum();
                remap += 0.5 * (b - a) * wt * integrand;
            }
        }
    }
    Some((plug_in, remap))
}

/// The six-point Gauss–Legendre rule on [−1, 1].
fn gauss_legendre_6() -> ([f64; 6], [f64; 6]) {
    let x = [0.238_619_186_083_196_9, 0.661_209_386_466_264_5, 0.932_469_514_203_152];
    let w = [0.467_913_934_572_691, 0.360_761_573_048_138_6, 0.171_324_492_379_170_3];
    ([-x[2], -x[1], -x[0], x[0], x[1], x[2]], [w[2], w[1], w[0], w[0], w[1], w[2]])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::noise::{sample_laplace, sample_staircase};
    use rand::{RngExt, SeedableRng};

    fn poisson(loss: &str) -> Model {
        let text = format!(
            "name = \"p\"\nepsilon = [1.0]\n[parameter]\nlower = 0.0\nupper = 4.0\ngrid = {{ kind = \"midpoint\", points = 12 }}\n\
             prior = {{ kind = \"beta\", a = 2.0, b = 5.0 }}\n[observation]\nfamily = \"poisson\"\nrecords = 6\ncap = 2\n\
             [loss]\nkind = \"{loss}\"\n"
        );
        Model::from_spec(crate::model::spec::ModelSpec::from_toml(&text, "p").unwrap()).unwrap()
    }

    /// Both risks, for both noises and both losses, agree with a simulation of the release (θ from
    /// the grid prior, S from its likelihood, the noise drawn, the estimate computed as released:
    /// the remap from the posterior on the grid), to four standard errors.
    #[test]
    fn the_integrated_risks_match_a_simulation_of_the_release() {
        for loss in ["squared", "absolute"] {
            let model = poisson(loss);
            let scalar = ScalarLoss::of(model.loss()).unwrap();
            let q = model.family().likelihood_matrix(model.theta());
            let thetas: Vec<f64> = (0..model.theta().len()).map(|j| model.theta().point(j)[0]).collect();
            let prior = model.prior().to_vec();
            for kind in [SumNoise::Laplace, SumNoise::Staircase] {
                let eps = 0.7;
                let (plug_in, remap) = bayes_risks(&model, eps, kind).unwrap();
                let gamma = if loss == "squared" { gamma_l2(eps) } else { gamma_l1(eps) };
                let mut rng = rand::rngs::StdRng::seed_from_u64(11);
                let draws = 100_000;
                let (mut sums, mut squares) = ([0.0; 2], [0.0; 2]);
                let pick = |rng: &mut rand::rngs::StdRng, weights: &[f64]| {
                    let mut u = rng.random::<f64>() * weights.iter().sum::<f64>();
                    weights
                        .iter()
                        .position(|&w| {
                            u -= w;
                            u <= 0.0
                        })
                        .unwrap_or(weights.len() - 1)
                };
                for _ in 0..draws {
                    let j = pick(&mut rng, &prior);
                    let column: Vec<f64> = q.column(j).to_vec();
                    let s = pick(&mut rng, &column) as f64;
                    let noise = match kind {
                        SumNoise::Laplace => sample_laplace(2.0 / eps, &mut rng),
                        SumNoise::Staircase => sample_staircase(eps, gamma, 2.0, &mut rng),
                    };
                    let z = s + noise;
                    let f = |d: f64| match kind {
                        SumNoise::Laplace => Noise::Laplace { b: 2.0 / eps }.pdf(d),
                        SumNoise::Staircase => Noise::Staircase { eps, gamma, width: 2.0 }.pdf(d),
                    };
                    let joint: Vec<f64> = (0..thetas.len())
                        .map(|k| prior[k] * (0..q.nrows()).map(|y| q[[y, k]] * f(z - y as f64)).sum::<f64>())
                        .collect();
                    let mass: f64 = joint.iter().sum();
                    let remapped = match scalar {
                        ScalarLoss::Squared => joint.iter().zip(&thetas).map(|(p, t)| p * t).sum::<f64>() / mass,
                        ScalarLoss::Absolute => lower_median(thetas.iter().zip(&joint).map(|(&t, &p)| (t, p / mass))),
                    };
                    let plug = (z / 6.0).clamp(0.0, 4.0);
                    for (i, x) in [plug, remapped].into_iter().enumerate() {
                        let l = if loss == "squared" { (thetas[j] - x).powi(2) } else { (thetas[j] - x).abs() };
                        sums[i] += l;
                        squares[i] += l * l;
                    }
                }
                for (i, exact) in [plug_in, remap].into_iter().enumerate() {
                    let mean = sums[i] / draws as f64;
                    let se = ((squares[i] / draws as f64 - mean * mean) / draws as f64).sqrt();
                    assert!(
                        (mean - exact).abs() <= 4.0 * se,
                        "{loss}, {kind:?}, {}: integrated {exact}, simulated {mean} ± {se}",
                        ["plug-in", "remap"][i]
                    );
                }
            }
        }
    }
}
