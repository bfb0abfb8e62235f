//! Lei's perturbed histogram M-estimator (Lei, "Differentially Private M-Estimators", NIPS 2011,
//! Algorithm 1), for K Bernoulli records: the histogram has 2 cells (x = 0 and x = 1, no binning
//! bias) with counts n_0 = K − y and n_1 = y.
//!
//! Release n̂_r = n_r + Lap(2/ε); the M-estimator for the mean (m(a, θ) = (a − θ)²) minimises
//! Σ_r ñ_r (a_r − θ)², i.e. θ̂ = ñ_1/(ñ_0 + ñ_1), clamped to [lower, upper]. Two variants:
//! - **non-negative** (Algorithm 1′, id `lei-ph`): ñ_r = max(n̂_r, 0);
//! - **thresholding** (THLD, id `lei-thld`): ñ_r = n̂_r if n̂_r ≥ A ln(n)/ε (A = ½, the paper's
//!   experiment), else 0.
//!
//! When both counts are dropped the estimate is undefined; we release the midpoint of Θ.
//!
//! **Privacy (pure ε).** Replacing one record moves one unit between the two cells: the count vector
//! has L1 sensitivity 2, so Lap(2/ε) per cell is ε-DP; the rest is post-processing.
//!
//! **Risk.** Given y the estimate is a function of two independent Laplace variables; the expectation
//! is computed by a tensor Gauss–Legendre rule in probability space (u = F⁻¹(s), v = F⁻¹(t)) with cuts
//! at the thresholds and at the Laplace kink, then summed exactly over Y ("numerical-integration").

use rand::Rng;

use crate::eval::noise::sample_laplace;
use crate::eval::{count, Estimator, Method, Privacy, Risk, Setting};
use crate::model::family::binomial_pmf_all;
use crate::model::quad::Rule;

/// Gauss–Legendre nodes per piece and dimension.
const NODES: usize = 20;

/// Lei's perturbed histogram on two cells.
#[derive(Debug, Clone)]
pub(crate) struct LeiHistogram {
    method: Method,
    eps: f64,
    setting: Setting,
    threshold: f64,
    /// Per y: (estimate, weight) quadrature nodes of the release distribution.
    nodes: Vec<Vec<(f64, f64)>>,
}

impl LeiHistogram {
    /// The non-negative variant (`thresholding = false`) or THLD.
    pub(crate) fn new(setting: Setting, eps: f64, thresholding: bool) -> LeiHistogram {
        let n = setting.trials as f64;
        let threshold = if thresholding { 0.5 * n.ln().max(0.0) / eps } else { 0.0 };
        let method = if thresholding { Method::LeiThld } else { Method::LeiPh };
        let mut est = LeiHistogram { method, eps, setting, threshold, nodes: Vec::new() };
        est.nodes = (0..=setting.trials).map(|y| est.quadrature_given_count(y)).collect();
        est
    }

    fn b(&self) -> f64 {
        2.0 / self.eps
    }

    /// θ̂ from the two noisy counts.
    fn estimate(&self, n0: f64, n1: f64) -> f64 {
        let keep = |x: f64| if x >= self.threshold && x > 0.0 { x } else { 0.0 };
        let (a, b) = (keep(n0), keep(n1));
        let (lo, hi) = (self.setting.lower, self.setting.upper);
        if a + b > 0.0 {
            (b / (a + b)).clamp(lo, hi)
        } else {
            0.5 * (lo + hi)
        }
    }

    /// Laplace(b) quantile.
    fn quantile(&self, s: f64) -> f64 {
        if s < 0.5 {
            self.b() * (2.0 * s).ln()
        } else {
            -self.b() * (2.0 * (1.0 - s)).ln()
        }
    }

    fn cdf(&self, w: f64) -> f64 {
        if w < 0.0 {
            0.5 * (w / self.b()).exp()
        } else {
            1.0 - 0.5 * (-w / self.b()).exp()
        }
    }

    fn quadrature_given_count(&self, y: u64) -> Vec<(f64, f64)> {
        let (n0, n1) = ((self.setting.trials - y) as f64, y as f64);
        let rule = Rule::new(NODES);
        let pieces = |n: f64| -> Vec<(f64, f64)> {
            let mut cuts = vec![0.0, 0.5, 1.0, self.cdf(self.threshold - n)];
            cuts.sort_by(f64::total_cmp);
            cuts.dedup();
            cuts.windows(2).filter(|w| w[1] > w[0]).flat_map(|w| rule.on(w[0], w[1]).collect::<Vec<_>>()).collect()
        };
        let (p0, p1) = (pieces(n0), pieces(n1));
        let mut out = Vec::with_capacity(p0.len() * p1.len());
        for &(s, ws) in &p0 {
            let u = self.quantile(s);
            for &(t, wt) in &p1 {
                out.push((self.estimate(n0 + u, n1 + self.quantile(t)), ws * wt));
            }
        }
        out
    }
}

impl Estimator for LeiHistogram {
    fn method(&self) -> Method {
        self.method
    }
    fn privacy(&self) -> Privacy {
        Privacy::Pure { eps: self.eps }
    }
    fn release(&self, records: &[bool], rng: &mut dyn Rng) -> f64 {
        let y = count(records) as f64;
        let n0 = records.len() as f64 - y + sample_laplace(self.b(), rng);
        let n1 = y + sample_laplace(self.b(), rng);
        self.estimate(n0, n1)
    }
    fn risk_at(&self, theta: f64) -> Risk {
        let q = binomial_pmf_all(self.setting.trials, theta);
        let v = q
            .iter()
            .zip(&self.nodes)
            .filter(|(&qy, _)| qy > 0.0)
            .map(|(&qy, nodes)| qy * nodes.iter().map(|&(x, w)| w * self.setting.loss(theta, x)).sum::<f64>())
            .sum();
        Risk::numerical(v)
    }
}
