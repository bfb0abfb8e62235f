//! The exact posterior of θ on the model's parameter grid given releases of a certified mechanism.
//!
//! For independent releases θ̃_{k_1}, …, θ̃_{k_R} of the same mechanism (each from its own
//! observation of the same θ), Pr(θ_j | releases) ∝ π_j Π_r Σ_i q_{θ_j}(y_i) w\[k_r, i\]/T, with
//! w the artifact's integer weights — the distribution that is actually sampled, not the solver's
//! float P. Products are taken in logs, so many releases do not underflow.
//!
//! Besides the mean it gives the coordinate-wise median, the mode and the Bayes estimate for the
//! model's loss; per coordinate the *marginal* equal-tailed interval, the joint mass of the box
//! those intervals span, and a *joint* credible region: the highest-posterior set of grid points.

use serde::Serialize;

use super::error::Result;
use super::Mechanism;
use super::MechanismError;
use crate::guard::Parameter;
use crate::model::Loss;

/// The posterior of θ over the parameter grid given one or more releases.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Posterior {
    /// The parameter grid points θ_j (coordinates).
    pub theta: Vec<Vec<f64>>,
    /// Pr(θ_j | releases), summing to 1.
    pub probabilities: Vec<f64>,
    /// E\[θ | releases\] (one entry per coordinate).
    pub posterior_mean: Vec<f64>,
    /// Per coordinate, the lower median of the marginal posterior (a grid value).
    pub posterior_median: Vec<f64>,
    /// The grid point of highest posterior probability (the first among ties).
    pub posterior_mode: Vec<f64>,
    /// The estimate that minimises the posterior expected loss of the model's loss.
    pub bayes_estimate: BayesEstimate,
    /// The credibility level of `interval` and `region`.
    pub level: f64,
    /// What `interval` is: always `"marginal equal-tailed"`.
    pub interval_kind: &'static str,
    /// Per coordinate, the marginal equal-tailed credible interval \[lower, upper\]: grid values
    /// with Pr(θ_d < lower) ≤ (1 − level)/2 and Pr(θ_d > upper) ≤ (1 − level)/2, so each holds at
    /// least `level` of its coordinate's marginal mass (their box may hold less, see `box_mass`).
    pub interval: Vec<[f64; 2]>,
    /// Per coordinate, the marginal posterior mass inside its interval (≥ level).
    pub interval_mass: Vec<f64>,
    /// The joint posterior mass of the box the marginal intervals span (for one coordinate, the
    /// interval's mass; for several it can fall below `level`).
    pub box_mass: f64,
    /// The joint credible region: the highest-posterior set of grid points.
    pub region: CredibleRegion,
}

/// A joint credible region on the parameter grid.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CredibleRegion {
    /// What it is: always `"joint highest-posterior set"`.
    pub kind: &'static str,
    /// Indices into `theta` of its grid points, most probable first: the fewest points whose mass
    /// reaches the level, with every point tied with the last one added (so it does not depend on
    /// the grid's order).
    pub points: Vec<usize>,
    /// Its joint posterior mass (≥ level).
    pub mass: f64,
}

/// The Bayes estimate of θ under a loss, given the posterior.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BayesEstimate {
    /// The model's loss (`squared`, `absolute`, `zero-one`, `matrix`).
    pub loss: &'static str,
    /// Which estimate it is, in words (`posterior mean`, `posterior median`, …).
    pub rule: &'static str,
    /// Its value (one entry per coordinate).
    pub value: Vec<f64>,
}

impl Posterior {
    /// The posterior given releases `outputs` (indices into Θ̃) at credibility `level` ∈ (0, 1).
    pub fn of(m: &Mechanism, outputs: &[usize], level: f64) -> Result<Posterior> {
        if !(level > 0.0 && level < 1.0) {
            return Err(MechanismError::argument(
                Parameter::Level,
                format!("must lie strictly between 0 and 1 (got {level})"),
            ));
        }
        if outputs.is_empty() {
            return Err(MechanismError::argument(Parameter::Releases, "give at least one released value"));
        }
        if let Some(&k) = outputs.iter().find(|&&k| k >= m.n_outputs()) {
            return Err(MechanismError::argument(
                Parameter::Releases,
                format!("output index {k} is not below |Θ̃| = {}", m.n_outputs()),
            ));
        }
        let model = m.model();
        let grid = model.theta();
        let t = m.total() as f64;
        let mut log_post: Vec<f64> = (0..grid.len())
            .map(|j| {
                let q = model.family().likelihood(grid.point(j));
                let mut l = model.prior()[j].ln();
                for &k in outputs {
                    let lik: f64 = q.iter().enumerate().map(|(i, &qi)| qi * m.column(i)[k] as f64).sum::<f64>() / t;
                    l += lik.ln();
                }
                l
            })
            .collect();
        let top = log_post.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        if !top.is_finite() {
            return Err(MechanismError::argument(
                Parameter::Releases,
                "these releases have probability 0 under every θ of the model's prior: they cannot come from this mechanism",
            ));
        }
        log_post.iter_mut().for_each(|l| *l = (*l - top).exp());
        let total: f64 = log_post.iter().sum();
        let probabilities: Vec<f64> = log_post.into_iter().map(|x| x / total).collect();
        // Grid values as people write them (`0.475`, not `0.47500000000000003`): within round-off.
        let tidy =
            |p: ndarray::ArrayView1<'_, f64>| p.iter().map(|&v| crate::guard::text::tidy(v)).collect::<Vec<f64>>();
        let theta: Vec<Vec<f64>> = (0..grid.len()).map(|j| tidy(grid.point(j))).collect();
        let outputs_grid: Vec<Vec<f64>> = (0..model.outputs().len()).map(|k| tidy(model.outputs().point(k))).collect();
        Ok(Posterior::from_weights(theta, probabilities, level, model.loss(), &outputs_grid))
    }

    /// Every summary of a posterior `probabilities` over the grid `theta` (level in (0, 1)); the
    /// Bayes estimate under `loss`, whose output grid (for a matrix loss) is `outputs`.
    pub(crate) fn from_weights(
        theta: Vec<Vec<f64>>,
        probabilities: Vec<f64>,
        level: f64,
        loss: &Loss,
        outputs: &[Vec<f64>],
    ) -> Posterior {
        let dim = theta.first().map_or(0, Vec::len);
        let posterior_mean: Vec<f64> =
            (0..dim).map(|d| theta.iter().zip(&probabilities).map(|(p, w)| p[d] * w).sum()).collect();
        let posterior_median: Vec<f64> =
            (0..dim).map(|d| lower_median(theta.iter().map(|p| p[d]).zip(probabilities.iter().copied()))).collect();
        let mode_index =
            (0..probabilities.len()).fold(0, |b, j| if probabilities[j] > probabilities[b] { j } else { b });
        let posterior_mode = theta[mode_index].clone();
        let mut interval = Vec::new();
        let mut interval_mass = Vec::new();
        for d in 0..dim {
            let (iv, mass) = equal_tailed(theta.iter().map(|p| p[d]).zip(probabilities.iter().copied()), level);
            interval.push(iv);
            interval_mass.push(mass);
        }
        let box_mass = theta
            .iter()
            .zip(&probabilities)
            .filter(|(p, _)| p.iter().zip(&interval).all(|(x, [lo, hi])| lo <= x && x <= hi))
            .map(|(_, w)| w)
            .sum();
        let region = highest_posterior_set(&probabilities, level);
        let bayes_estimate = match loss {
            Loss::Squared => BayesEstimate { loss: loss.name(), rule: "posterior mean", value: posterior_mean.clone() },
            Loss::Absolute => BayesEstimate {
                loss: loss.name(),
                rule: "posterior median (coordinate-wise)",
                value: posterior_median.clone(),
            },
            Loss::ZeroOne { tolerance } if *tolerance == 0.0 => {
                BayesEstimate { loss: loss.name(), rule: "posterior mode", value: posterior_mode.clone() }
            }
            Loss::ZeroOne { tolerance } => BayesEstimate {
                loss: loss.name(),
                rule: "grid point with the most posterior mass within the tolerance",
                value: most_mass_within(&theta, &probabilities, *tolerance),
            },
            Loss::Matrix { .. } => {
                let expected = |k: usize| -> f64 {
                    let out = ndarray::ArrayView1::from(&outputs[k][..]);
                    theta
                        .iter()
                        .zip(&probabilities)
                        .map(
                            |(p, w)| if *w > 0.0 { w * loss.eval(ndarray::ArrayView1::from(&p[..]), out) } else { 0.0 },
                        )
                        .sum()
                };
                let k = (0..outputs.len())
                    .map(|k| (k, expected(k)))
                    .fold((0, f64::INFINITY), |b, c| if c.1 < b.1 { c } else { b })
                    .0;
                BayesEstimate {
                    loss: loss.name(),
                    rule: "output of least posterior expected loss",
                    value: outputs.get(k).cloned().unwrap_or_default(),
                }
            }
        };
        Posterior {
            theta,
            probabilities,
            posterior_mean,
            posterior_median,
            posterior_mode,
            bayes_estimate,
            level,
            interval_kind: "marginal equal-tailed",
            interval,
            interval_mass,
            box_mass,
            region,
        }
    }
}

/// The lower median of a discrete distribution (value, mass; the masses summing to 1): the first
/// value at which the mass up to and including it reaches 1/2.
pub(crate) fn lower_median(points: impl Iterator<Item = (f64, f64)>) -> f64 {
    let mut v: Vec<(f64, f64)> = points.collect();
    v.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut cum = 0.0;
    for &(x, w) in &v {
        cum += w;
        if cum >= 0.5 - 1e-12 {
            return x;
        }
    }
    v.last().map_or(f64::NAN, |p| p.0)
}

/// The grid point c maximising Pr(‖θ − c‖₂ ≤ tolerance) (the first among ties).
fn most_mass_within(theta: &[Vec<f64>], probabilities: &[f64], tolerance: f64) -> Vec<f64> {
    let within = |c: &[f64]| -> f64 {
        theta
            .iter()
            .zip(probabilities)
            .filter(|(p, _)| p.iter().zip(c).map(|(a, b)| (a - b) * (a - b)).sum::<f64>().sqrt() <= tolerance)
            .map(|(_, w)| w)
            .sum()
    };
    let (mut best, mut best_mass) = (0, f64::NEG_INFINITY);
    for (j, c) in theta.iter().enumerate() {
        let m = within(c);
        if m > best_mass {
            (best, best_mass) = (j, m);
        }
    }
    theta.get(best).cloned().unwrap_or_default()
}

/// The highest-posterior set: grid points by decreasing probability until their mass reaches
/// `level`, then every point tied with the last one.
fn highest_posterior_set(probabilities: &[f64], level: f64) -> CredibleRegion {
    let mut order: Vec<usize> = (0..probabilities.len()).collect();
    order.sort_by(|&a, &b| probabilities[b].total_cmp(&probabilities[a]).then(a.cmp(&b)));
    // The same relative slack as the interval's: rounding never shrinks the set below the level by more.
    let slack = 1e-12;
    let (mut points, mut mass) = (Vec::new(), 0.0);
    let mut last = f64::NAN;
    for &j in &order {
        let p = probabilities[j];
        if mass >= level - slack && p != last {
            break;
        }
        points.push(j);
        mass += p;
        last = p;
    }
    CredibleRegion { kind: "joint highest-posterior set", points, mass }
}

/// The equal-tailed interval of a discrete distribution (value, mass): lower is the first value at
/// which the mass up to and including it exceeds α/2 (so Pr(< lower) ≤ α/2), upper the first at
/// which it reaches 1 − α/2 (so Pr(> upper) ≤ α/2); and the mass inside.
pub(crate) fn equal_tailed(points: impl Iterator<Item = (f64, f64)>, level: f64) -> ([f64; 2], f64) {
    let mut v: Vec<(f64, f64)> = points.collect();
    v.sort_by(|a, b| a.0.total_cmp(&b.0));
    // Merge equal values (a marginal of a vector grid).
    let mut merged: Vec<(f64, f64)> = Vec::with_capacity(v.len());
    for (x, w) in v {
        match merged.last_mut() {
            Some(last) if last.0 == x => last.1 += w,
            _ => merged.push((x, w)),
        }
    }
    let alpha = 1.0 - level;
    // A relative slack absorbs the rounding of the sums, never the tails' bound by more than it.
    let slack = 1e-12;
    let mut cum = 0.0;
    let mut lower = None;
    let mut upper = merged.last().map_or(f64::NAN, |p| p.0);
    let (mut below, mut through) = (0.0, 1.0);
    for &(x, w) in &merged {
        let before = cum;
        cum += w;
        if lower.is_none() && cum > alpha / 2.0 + slack {
            lower = Some(x);
            below = before;
        }
        if cum >= 1.0 - alpha / 2.0 - slack {
            upper = x;
            through = cum;
            break;
        }
    }
    let lower = lower.unwrap_or(upper);
    ([lower, upper], through - below)
}
