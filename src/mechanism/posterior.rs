//! The exact posterior of θ on the model's parameter grid given releases of a certified mechanism.
//!
//! For independent releases θ̃_{k_1}, …, θ̃_{k_R} of the same mechanism (each from its own
//! observation of the same θ), Pr(θ_j | releases) ∝ π_j Π_r Σ_i q_{θ_j}(y_i) w\[k_r, i\]/T, with
//! w the artifact's integer weights — the distribution that is actually sampled, not the solver's
//! float P. Products are taken in logs, so many releases do not underflow.

use serde::Serialize;

use super::error::Result;
use super::Mechanism;
use super::MechanismError;

/// The posterior of θ over the parameter grid given one or more releases.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Posterior {
    /// The parameter grid points θ_j (coordinates).
    pub theta: Vec<Vec<f64>>,
    /// Pr(θ_j | releases), summing to 1.
    pub probabilities: Vec<f64>,
    /// E\[θ | releases\] (one entry per coordinate).
    pub posterior_mean: Vec<f64>,
    /// The credibility level of `interval`.
    pub level: f64,
    /// Per coordinate, the equal-tailed credible interval \[lower, upper\]: grid points with
    /// Pr(θ < lower) ≤ (1 − level)/2 and Pr(θ > upper) ≤ (1 − level)/2, so it holds at least
    /// `level` of the posterior mass.
    pub interval: Vec<[f64; 2]>,
    /// Posterior mass inside `interval` (the first coordinate's; ≥ level).
    pub interval_mass: f64,
}

impl Posterior {
    /// The posterior given releases `outputs` (indices into Θ̃) at credibility `level` ∈ (0, 1).
    pub fn of(m: &Mechanism, outputs: &[usize], level: f64) -> Result<Posterior> {
        if !(level > 0.0 && level < 1.0) {
            return Err(MechanismError::argument(
                "--level",
                format!("must lie strictly between 0 and 1 (got {level})"),
            ));
        }
        if outputs.is_empty() {
            return Err(MechanismError::argument("--release", "give at least one released value"));
        }
        if let Some(&k) = outputs.iter().find(|&&k| k >= m.n_outputs()) {
            return Err(MechanismError::argument(
                "--release",
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
                "--release",
                "these releases have probability 0 under every θ of the model's prior: they cannot come from this mechanism",
            ));
        }
        log_post.iter_mut().for_each(|l| *l = (*l - top).exp());
        let total: f64 = log_post.iter().sum();
        let probabilities: Vec<f64> = log_post.into_iter().map(|x| x / total).collect();
        let theta: Vec<Vec<f64>> = (0..grid.len()).map(|j| grid.point(j).to_vec()).collect();
        let dim = grid.dim();
        let posterior_mean = (0..dim).map(|d| theta.iter().zip(&probabilities).map(|(p, w)| p[d] * w).sum()).collect();
        let mut interval = Vec::new();
        let mut interval_mass = f64::NAN;
        for d in 0..dim {
            let (iv, mass) = equal_tailed(theta.iter().map(|p| p[d]).zip(probabilities.iter().copied()), level);
            if d == 0 {
                interval_mass = mass;
            }
            interval.push(iv);
        }
        Ok(Posterior { theta, probabilities, posterior_mean, level, interval, interval_mass })
    }
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
