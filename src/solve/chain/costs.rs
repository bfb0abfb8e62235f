//! Where the chain solver reads its costs c\[k, i\] (UBaPP: c\[k,i\] = Σ_j π_j q_{θ_j}(y_i) L(θ_j, θ̃_k)).
//!
//! [`DenseCosts`] wraps the |Y| × |Θ̃| matrix of [`crate::lp::cost_matrix`] (the LP's own costs,
//! so that the chain and LP optima are comparable number for number). [`SquaredMoments`] never
//! forms that matrix: for squared loss
//!
//! ```text
//! c[k,i] = Σ_j π_j q_j(y_i) (θ_j − θ̃_k)² = m0_i (θ̃_k − r_i)² − 2 (θ̃_k − r_i) m1_i + m2_i,
//! m0_i = Σ_j π_j q_j(y_i),  m1_i = Σ_j π_j q_j(y_i) (θ_j − r_i),  m2_i = Σ_j π_j q_j(y_i) (θ_j − r_i)²
//! ```
//!
//! with a per-observation reference point r_i (the MLE i/K for the binomial), which keeps the
//! subtraction well conditioned. Memory is O(|Y|).

use ndarray::Array2;
use statrs::function::gamma::ln_gamma;

/// Costs c\[k, i\] of releasing output k at observation i, readable row by row.
pub(crate) trait ChainCosts: Sync {
    /// |Y|.
    fn n_obs(&self) -> usize;
    /// |Θ̃|.
    fn n_outputs(&self) -> usize;
    /// c\[k, i\].
    fn at(&self, k: usize, i: usize) -> f64;
    /// Fill `out` (length |Y|) with c\[k, ·\].
    fn row(&self, k: usize, out: &mut [f64]) {
        self.row_range(k, 0, out);
    }
    /// Fill `out` with c\[k, start..start + out.len()\].
    fn row_range(&self, k: usize, start: usize, out: &mut [f64]) {
        for (i, o) in out.iter_mut().enumerate() {
            *o = self.at(k, start + i);
        }
    }
    /// For squared loss on a 1-D grid: the smoothed-moment data that makes the remap a
    /// nearest-point lookup (see [`SquaredMoments`]).
    fn squared(&self) -> Option<&SquaredMoments> {
        None
    }
}

/// The LP's dense cost matrix, stored transposed (row k = c\[k, ·\] contiguous).
#[derive(Debug, Clone)]
pub(crate) struct DenseCosts {
    ct: Array2<f64>,
}

impl DenseCosts {
    /// From C\[i, k\] = c\[k, i\] (|Y| × |Θ̃|), as returned by [`crate::lp::cost_matrix`].
    pub(crate) fn new(cost: &Array2<f64>) -> DenseCosts {
        DenseCosts { ct: cost.t().as_standard_layout().into_owned() }
    }

    /// The matrix c\[k, i\] (|Θ̃| × |Y|).
    pub(crate) fn rows(&self) -> &Array2<f64> {
        &self.ct
    }
}

impl ChainCosts for DenseCosts {
    fn n_obs(&self) -> usize {
        self.ct.ncols()
    }
    fn n_outputs(&self) -> usize {
        self.ct.nrows()
    }
    fn at(&self, k: usize, i: usize) -> f64 {
        self.ct[[k, i]]
    }
    fn row_range(&self, k: usize, start: usize, out: &mut [f64]) {
        let row = self.ct.row(k);
        let row = row.as_slice().expect("standard layout");
        out.copy_from_slice(&row[start..start + out.len()]);
    }
}

/// Squared-loss costs from three moments per observation (O(|Y|) memory).
#[derive(Debug, Clone)]
pub(crate) struct SquaredMoments {
    /// m0_i = Σ_j π_j q_j(y_i): the marginal probability of y_i.
    pub m0: Vec<f64>,
    /// m1_i = Σ_j π_j q_j(y_i) (θ_j − r_i).
    pub m1: Vec<f64>,
    /// m2_i = Σ_j π_j q_j(y_i) (θ_j − r_i)².
    pub m2: Vec<f64>,
    /// Reference points r_i.
    pub reference: Vec<f64>,
    /// Output values θ̃_k.
    pub outputs: Vec<f64>,
}

/// Mass we allow the truncated binomial pmf to drop per grid point.
pub(crate) const TAIL_MASS: f64 = 1e-18;

impl SquaredMoments {
    /// Moments of the binomial(K, θ_j) family on grid `theta` with weights `prior`. Each pmf is
    /// walked outwards from its mode by the ratio recursion q(y+1)/q(y) = (K−y)/(y+1) · θ/(1−θ)
    /// and cut once the geometric bound on the remaining tail, q(y)·ρ/(1−ρ) with ρ the current
    /// (decreasing) ratio, is below [`TAIL_MASS`]: the neglected mass per θ_j is < 1e-18 on each side.
    pub(crate) fn binomial(trials: u64, theta: &[f64], prior: &[f64], outputs: Vec<f64>) -> SquaredMoments {
        let n = trials as usize + 1;
        let kf = trials as f64;
        let reference: Vec<f64> = (0..n).map(|i| i as f64 / kf).collect();
        let (mut m0, mut m1, mut m2) = (vec![0.0; n], vec![0.0; n], vec![0.0; n]);
        let mut add = |i: usize, w: f64, t: f64| {
            let d = t - reference[i];
            m0[i] += w;
            m1[i] += w * d;
            m2[i] += w * d * d;
        };
        let lk = ln_gamma(kf + 1.0);
        for (&t, &w) in theta.iter().zip(prior) {
            if w == 0.0 {
                continue;
            }
            if t <= 0.0 || t >= 1.0 {
                add(if t <= 0.0 { 0 } else { n - 1 }, w, t);
                continue;
            }
            let odds = t / (1.0 - t);
            let mode = (((kf + 1.0) * t).floor() as usize).min(n - 1);
            let mf = mode as f64;
            let q_mode =
                (lk - ln_gamma(mf + 1.0) - ln_gamma(kf - mf + 1.0) + mf * t.ln() + (kf - mf) * (-t).ln_1p()).exp();
            add(mode, w * q_mode, t);
            // Upwards: ratio (K−y)/(y+1)·odds decreases in y and is < 1 past the mode.
            let mut q = q_mode;
            for y in mode..n - 1 {
                let rho = (kf - y as f64) / (y as f64 + 1.0) * odds;
                q *= rho;
                add(y + 1, w * q, t);
                if rho < 1.0 && q * rho / (1.0 - rho) < TAIL_MASS {
                    break;
                }
            }
            // Downwards: ratio y/(K−y+1)/odds decreases as y falls.
            let mut q = q_mode;
            for y in (1..=mode).rev() {
                let rho = y as f64 / (kf - y as f64 + 1.0) / odds;
                q *= rho;
                add(y - 1, w * q, t);
                if rho < 1.0 && q * rho / (1.0 - rho) < TAIL_MASS {
                    break;
                }
            }
        }
        SquaredMoments { m0, m1, m2, reference, outputs }
    }

    /// The best constant risk min_k Σ_i c\[k,i\] (ε → 0) and the non-private risk Σ_i min_k c\[k,i\]
    /// (ε → ∞) in O(|Y| log |Θ̃| + |Θ̃|), without the cost matrix. Σ_i c\[k,i\] is the quadratic
    /// A t_k² − 2B t_k + C in the output value t_k; c\[k,i\] is smallest at the output nearest the
    /// posterior mean r_i + m1_i/m0_i, one of the two sorted outputs around it.
    pub(crate) fn reference_risks(&self) -> (f64, f64) {
        let (mut a, mut b, mut c) = (0.0, 0.0, 0.0);
        for i in 0..self.m0.len() {
            let (m0, m1, m2, r) = (self.m0[i], self.m1[i], self.m2[i], self.reference[i]);
            a += m0;
            b += m0 * r + m1;
            c += m0 * r * r + 2.0 * r * m1 + m2;
        }
        let best_constant = self.outputs.iter().map(|&t| a * t * t - 2.0 * b * t + c).fold(f64::INFINITY, f64::min);
        let mut order: Vec<usize> = (0..self.outputs.len()).collect();
        order.sort_by(|&x, &y| self.outputs[x].total_cmp(&self.outputs[y]));
        let sorted: Vec<f64> = order.iter().map(|&k| self.outputs[k]).collect();
        let mut non_private = 0.0;
        for i in 0..self.m0.len() {
            if self.m0[i] <= 0.0 {
                continue; // no mass: every cost is 0
            }
            let mean = self.reference[i] + self.m1[i] / self.m0[i];
            let above = sorted.partition_point(|&t| t < mean);
            let nearest = [above.checked_sub(1), (above < sorted.len()).then_some(above)];
            non_private += nearest.into_iter().flatten().map(|j| self.at(order[j], i)).fold(f64::INFINITY, f64::min);
        }
        (best_constant, non_private)
    }

    /// Smoothed posterior-mean numerator/denominator data: raw first moment Σ_j π_j q_j(y_i) θ_j.
    pub(crate) fn raw_first(&self, i: usize) -> f64 {
        self.m0[i] * self.reference[i] + self.m1[i]
    }
}

impl ChainCosts for SquaredMoments {
    fn n_obs(&self) -> usize {
        self.m0.len()
    }
    fn n_outputs(&self) -> usize {
        self.outputs.len()
    }
    fn at(&self, k: usize, i: usize) -> f64 {
        let d = self.outputs[k] - self.reference[i];
        self.m0[i] * d * d - 2.0 * d * self.m1[i] + self.m2[i]
    }
    fn row_range(&self, k: usize, start: usize, out: &mut [f64]) {
        let t = self.outputs[k];
        let end = start + out.len();
        let it = self.m0[start..end]
            .iter()
            .zip(&self.m1[start..end])
            .zip(&self.m2[start..end])
            .zip(&self.reference[start..end]);
        for (o, (((&m0, &m1), &m2), &r)) in out.iter_mut().zip(it) {
            let d = t - r;
            *o = m0 * d * d - 2.0 * d * m1 + m2;
        }
    }
    fn squared(&self) -> Option<&SquaredMoments> {
        Some(self)
    }
}
