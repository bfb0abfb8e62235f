//! Evaluating estimators: one [`Estimator`] trait implemented by the solved UBaPP mechanism and by
//! every baseline, the exact risk at θ, the Bayes risk under the model's discretised prior (what the
//! LP optimises), the risk under the continuous prior by quadrature, MSE(θ) curves and the
//! Monte-Carlo route that cross-checks every exact formula through `release`.

pub(crate) mod method;
pub(crate) mod noise;
mod release;

use std::fmt;

use rand::{Rng, RngExt};
use serde::{Deserialize, Serialize};

use crate::model::quad::Rule;
use crate::model::{Family, Loss, Model};

pub use crate::certify::{Privacy, PrivacyKind};
pub use method::Method;

/// How a risk number was obtained (reported in the `risk_method` column).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RiskMethod {
    /// A closed form summed exactly over Y (and over the joint law of block statistics).
    Exact,
    /// Exact sums over Y with numerical integration of the noise density (tolerance ~1e-12).
    #[serde(rename = "numerical-integration")]
    Numerical,
    /// Monte Carlo: the standard error is reported beside the value.
    MonteCarlo,
}

impl RiskMethod {
    /// The label used in tables and files: `exact`, `numerical-integration` or `monte-carlo`.
    pub fn label(self) -> &'static str {
        match self {
            RiskMethod::Exact => "exact",
            RiskMethod::Numerical => "numerical-integration",
            RiskMethod::MonteCarlo => "monte-carlo",
        }
    }
}

impl fmt::Display for RiskMethod {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.label())
    }
}

/// A risk value with its standard error (0 unless Monte Carlo) and how it was computed.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Risk {
    /// The expected loss.
    pub value: f64,
    /// Standard error (0 for exact and numerical values).
    pub se: f64,
    /// How it was computed.
    pub method: RiskMethod,
}

impl Risk {
    /// An exact value.
    pub fn exact(value: f64) -> Risk {
        Risk { value, se: 0.0, method: RiskMethod::Exact }
    }

    /// A value from numerical integration.
    pub fn numerical(value: f64) -> Risk {
        Risk { value, se: 0.0, method: RiskMethod::Numerical }
    }

    /// Σ w_i r_i with standard errors combined as independent, and the least exact method.
    pub fn weighted_sum(parts: impl IntoIterator<Item = (f64, Risk)>) -> Risk {
        let (mut value, mut var, mut method) = (0.0, 0.0, RiskMethod::Exact);
        for (w, r) in parts {
            value += w * r.value;
            var += (w * r.se) * (w * r.se);
            method = method.max(r.method);
        }
        Risk { value, se: var.sqrt(), method }
    }
}

/// What every baseline needs to know about the model: the data are K Bernoulli(θ) records, θ ∈
/// [lower, upper], losses are measured by `loss`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Setting {
    /// K, the number of records.
    pub trials: u64,
    /// Lower end of Θ.
    pub lower: f64,
    /// Upper end of Θ.
    pub upper: f64,
    /// The loss.
    pub loss: ScalarLoss,
}

/// The losses the baselines evaluate exactly: scalar squared and absolute error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScalarLoss {
    /// (θ − x)².
    Squared,
    /// |θ − x|.
    Absolute,
}

impl ScalarLoss {
    /// The scalar loss of a model's loss, if it is one the baselines cover.
    pub fn of(loss: &Loss) -> Option<ScalarLoss> {
        match loss {
            Loss::Squared => Some(ScalarLoss::Squared),
            Loss::Absolute => Some(ScalarLoss::Absolute),
            Loss::ZeroOne { .. } | Loss::Matrix { .. } => None,
        }
    }
}

impl Setting {
    /// The setting of a model whose data are K Bernoulli records (the binomial family) under
    /// squared or absolute loss; `None` for families and losses the baselines do not cover.
    #[allow(unreachable_patterns)] // other families may be added
    pub fn of(model: &Model) -> Option<Setting> {
        match model.family {
            Family::Binomial { trials } => Some(Setting {
                trials,
                lower: model.interval().0,
                upper: model.interval().1,
                loss: ScalarLoss::of(&model.loss)?,
            }),
            _ => None,
        }
    }

    /// L(θ, x) for scalars.
    pub fn loss(&self, theta: f64, x: f64) -> f64 {
        match self.loss {
            ScalarLoss::Squared => (theta - x) * (theta - x),
            ScalarLoss::Absolute => (theta - x).abs(),
        }
    }
}

/// A private point estimator of θ from K Bernoulli records: a solved mechanism or a baseline.
pub trait Estimator {
    /// Which method it is (its id is the `--methods` spelling, e.g. `lbapp-clamped`).
    fn method(&self) -> Method;
    /// Its privacy guarantee.
    fn privacy(&self) -> Privacy;
    /// One private release from the records (x_r ∈ {0, 1}).
    fn release(&self, records: &[bool], rng: &mut dyn Rng) -> f64;
    /// The expected loss E L(θ, release) when the K records are i.i.d. Bernoulli(θ).
    fn risk_at(&self, theta: f64) -> Risk;
    /// When the release depends on the data only through y = Σ x_r: the |Θ̃| × |Y| matrix of
    /// Pr(release rounded to the nearest point of `outputs` = θ̃_k | y) (rounding is
    /// post-processing, so this grid mechanism has the same privacy). `None` otherwise.
    fn rounded_mechanism(&self, _outputs: &[f64]) -> Option<ndarray::Array2<f64>> {
        None
    }
}

/// Σ_j π_j risk(θ_j) under the model's discretised prior: like-for-like with the LP objective.
/// With exact conjugate costs (`parameter.grid.kind = "exact"`) the LP integrates against the
/// continuous prior, and so does this (it then equals [`true_risk`]).
pub fn bayes_risk(est: &dyn Estimator, model: &Model) -> Risk {
    if model.exact.is_some() {
        return true_risk(est, model);
    }
    let thetas = model.theta.values();
    Risk::weighted_sum(model.prior.iter().zip(&thetas).map(|(&w, &t)| (w, est.risk_at(t))))
}

/// Quadrature nodes and weights for ∫ g(θ) π(θ) dθ under the model's continuous prior:
/// Gauss–Legendre with `n` nodes on each of 4 equal pieces of [lower, upper] (for a discrete prior of
/// explicit weights: the grid and its weights), weights ∝ node weight
/// × prior density, normalised (so the density's constant and the rule's error on it cancel).
pub(crate) fn prior_quadrature(model: &Model, n: usize) -> Vec<(f64, f64)> {
    let Some(density) = model.prior_density() else {
        // A discrete prior: the grid with its weights is the prior itself.
        return model.theta.values().into_iter().zip(model.prior.iter().copied()).collect();
    };
    let (lo, hi) = density.interval();
    let rule = Rule::new(n);
    let pieces = 4;
    let h = (hi - lo) / pieces as f64;
    let mut nodes: Vec<(f64, f64)> = (0..pieces)
        .flat_map(|p| {
            let a = lo + p as f64 * h;
            rule.on(a, a + h).collect::<Vec<_>>()
        })
        .map(|(x, w)| (x, w * density.at_unit((x - lo) / (hi - lo))))
        .collect();
    let total: f64 = nodes.iter().map(|n| n.1).sum();
    for n in &mut nodes {
        n.1 /= total;
    }
    nodes
}

/// The prior's shape over Θ for plots: (θ, density up to a constant) at 201 points for a
/// continuous scalar prior, else the parameter grid with its weights.
pub fn prior_shape(model: &Model) -> Vec<(f64, f64)> {
    if model.theta.dim() != 1 {
        return Vec::new();
    }
    let Some(density) = model.prior_density() else {
        return model.theta.values().into_iter().zip(model.prior.iter().copied()).collect();
    };
    let (lo, hi) = density.interval();
    (0..=200)
        .map(|i| {
            let u = i as f64 / 200.0;
            let d = density.at_unit(u);
            (lo + u * (hi - lo), if d.is_finite() { d } else { 0.0 })
        })
        .collect()
}

/// ∫ risk(θ) π(θ) dθ under the continuous prior (Gauss–Legendre, 4 × 24 nodes): charges the
/// discretisation of Θ and Θ̃ to whichever method has it.
pub fn true_risk(est: &dyn Estimator, model: &Model) -> Risk {
    Risk::weighted_sum(prior_quadrature(model, 24).into_iter().map(|(t, w)| (w, est.risk_at(t))))
}

/// risk(θ) at each θ (MSE(θ) for squared loss).
pub(crate) fn risk_curve(est: &dyn Estimator, thetas: &[f64]) -> Vec<Risk> {
    thetas.iter().map(|&t| est.risk_at(t)).collect()
}

/// Monte-Carlo estimate of risk(θ) through `release`: `draws` datasets of K i.i.d. Bernoulli(θ)
/// records, one release each. Returns (mean loss, standard error).
pub(crate) fn monte_carlo_risk(
    est: &dyn Estimator,
    setting: &Setting,
    theta: f64,
    draws: usize,
    rng: &mut dyn Rng,
) -> (f64, f64) {
    let k = setting.trials as usize;
    let mut records = vec![false; k];
    let (mut sum, mut sum2) = (0.0, 0.0);
    for _ in 0..draws {
        for r in records.iter_mut() {
            *r = rng.random::<f64>() < theta;
        }
        let l = setting.loss(theta, est.release(&records, rng));
        sum += l;
        sum2 += l * l;
    }
    let n = draws as f64;
    let mean = sum / n;
    let var = (sum2 / n - mean * mean).max(0.0) * n / (n - 1.0).max(1.0);
    (mean, (var / n).sqrt())
}

/// y = Σ x_r.
pub(crate) fn count(records: &[bool]) -> usize {
    records.iter().filter(|&&x| x).count()
}
