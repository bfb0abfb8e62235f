//! Mechanisms given as a matrix P\[k, i\] = Pr(release θ̃_k | y_i) on a finite output grid: the solved
//! UBaPP LP (built from a solution by `compare`), the geometric mechanism with its remap, and
//! baselines rounded to the grid.

use ndarray::Array2;
use rand::{Rng, RngExt};

use super::noise::Noise;
use super::{count, Estimator, Privacy, Risk, Setting};
use crate::model::family::binomial_pmf_all;

/// A mechanism on an output grid, for K Bernoulli records (Y = {0..K}).
#[derive(Debug, Clone)]
pub(crate) struct GridMechanism {
    /// Method id.
    id: &'static str,
    /// Its privacy guarantee.
    privacy: Privacy,
    /// P, |Θ̃| × |Y|.
    pub(crate) p: Array2<f64>,
    /// The output grid θ̃_k.
    pub(crate) outputs: Vec<f64>,
    /// The model's setting.
    setting: Setting,
}

impl GridMechanism {
    /// The mechanism `p` (|Θ̃| × |Y|) on the output grid `outputs`, released under `privacy`.
    pub(crate) fn new(
        id: &'static str,
        privacy: Privacy,
        p: Array2<f64>,
        outputs: Vec<f64>,
        setting: Setting,
    ) -> GridMechanism {
        debug_assert_eq!(p.nrows(), outputs.len(), "one row of P per output");
        debug_assert_eq!(p.ncols() as u64, setting.trials + 1, "one column of P per y = 0..K");
        GridMechanism { id, privacy, p, outputs, setting }
    }

    /// Σ_i q_θ(y_i) Σ_k P\[k,i\] L(θ, θ̃_k): exact.
    pub(crate) fn exact_risk(&self, theta: f64) -> f64 {
        let q = binomial_pmf_all(self.setting.trials, theta);
        let losses: Vec<f64> = self.outputs.iter().map(|&o| self.setting.loss(theta, o)).collect();
        q.iter()
            .enumerate()
            .filter(|(_, &qi)| qi > 0.0)
            .map(|(i, &qi)| qi * self.p.column(i).iter().zip(&losses).map(|(p, l)| p * l).sum::<f64>())
            .sum()
    }

    /// Draw an output index from column i (negative round-off entries count as 0).
    pub(crate) fn sample_index(&self, i: usize, rng: &mut dyn Rng) -> usize {
        let col = self.p.column(i);
        let total: f64 = col.iter().map(|p| p.max(0.0)).sum();
        let mut u = rng.random::<f64>() * total;
        let mut last = 0;
        for (k, &p) in col.iter().enumerate() {
            if p > 0.0 {
                last = k;
                if u < p {
                    return k;
                }
                u -= p;
            }
        }
        last
    }
}

impl Estimator for GridMechanism {
    fn id(&self) -> &'static str {
        self.id
    }
    fn privacy(&self) -> Privacy {
        self.privacy
    }
    fn release(&self, records: &[bool], rng: &mut dyn Rng) -> f64 {
        self.outputs[self.sample_index(count(records), rng)]
    }
    fn risk_at(&self, theta: f64) -> Risk {
        Risk::exact(self.exact_risk(theta))
    }
    fn rounded_mechanism(&self, outputs: &[f64]) -> Option<Array2<f64>> {
        (outputs == self.outputs.as_slice()).then(|| self.p.clone())
    }
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
