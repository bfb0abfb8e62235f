//! Observation families: the statistic y ∈ Y, its likelihood q_θ(y) and the neighbour relation
//! on Y that "replace one record" induces.

use ndarray::{Array2, ArrayView1};
use statrs::function::gamma::ln_gamma;

use super::grid::Grid;
use super::neighbours::Neighbours;

/// A family of distributions of the (sufficient) statistic y.
#[derive(Debug, Clone, PartialEq)]
pub enum Family {
    /// y = Σ x_r for K Bernoulli(θ) records x_r; Y = {0..K}. Replacing one record changes y by at
    /// most 1, so neighbours are |y − y'| = 1 (UBaPP paper, worked example).
    Binomial {
        /// K.
        trials: u64,
    },
}

impl Family {
    /// |Y|.
    pub fn observation_count(&self) -> usize {
        match self {
            Family::Binomial { trials } => *trials as usize + 1,
        }
    }

    /// The observations y_i, one per row.
    pub fn observations(&self) -> Grid {
        match self {
            Family::Binomial { trials } => Grid::from_values((0..=*trials).map(|y| y as f64).collect()),
        }
    }

    /// Parameter dimension the family expects.
    pub fn parameter_dim(&self) -> usize {
        match self {
            Family::Binomial { .. } => 1,
        }
    }

    /// The neighbour relation on Y.
    pub fn neighbours(&self) -> Neighbours {
        match self {
            Family::Binomial { .. } => Neighbours::Chain { len: self.observation_count() },
        }
    }

    /// q_θ(y_i) for every i.
    pub fn likelihood(&self, theta: ArrayView1<'_, f64>) -> Vec<f64> {
        match self {
            Family::Binomial { trials } => binomial_pmf_all(*trials, theta[0]),
        }
    }

    /// Q[i, j] = q_{θ_j}(y_i), |Y| × M.
    pub fn likelihood_matrix(&self, theta: &Grid) -> Array2<f64> {
        let mut q = Array2::zeros((self.observation_count(), theta.len()));
        for j in 0..theta.len() {
            for (i, p) in self.likelihood(theta.point(j)).into_iter().enumerate() {
                q[[i, j]] = p;
            }
        }
        q
    }

    /// Its name in model files.
    pub fn name(&self) -> &'static str {
        match self {
            Family::Binomial { .. } => "binomial",
        }
    }
}

/// Binomial(K, θ) pmf at y = 0..K, via log-gamma (stable for large K; exact at θ ∈ {0, 1}).
pub fn binomial_pmf_all(k: u64, theta: f64) -> Vec<f64> {
    let n = k as usize + 1;
    if theta <= 0.0 || theta >= 1.0 {
        let mut p = vec![0.0; n];
        p[if theta <= 0.0 { 0 } else { n - 1 }] = 1.0;
        return p;
    }
    let kf = k as f64;
    let (lt, l1t) = (theta.ln(), (-theta).ln_1p());
    let lk = ln_gamma(kf + 1.0);
    (0..n)
        .map(|y| {
            let y = y as f64;
            (lk - ln_gamma(y + 1.0) - ln_gamma(kf - y + 1.0) + y * lt + (kf - y) * l1t).exp()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binomial_pmf_sums_to_one_and_matches_small_case() {
        let p = binomial_pmf_all(3, 0.25);
        let want = [27.0 / 64.0, 27.0 / 64.0, 9.0 / 64.0, 1.0 / 64.0];
        for (a, b) in p.iter().zip(want) {
            assert!((a - b).abs() < 1e-14, "{a} vs {b}");
        }
        for &t in &[1e-6, 0.3, 0.5, 0.999] {
            let s: f64 = binomial_pmf_all(1000, t).iter().sum();
            assert!((s - 1.0).abs() < 1e-11, "sum {s} at θ = {t}");
        }
        assert_eq!(binomial_pmf_all(4, 0.0), vec![1.0, 0.0, 0.0, 0.0, 0.0]);
        assert_eq!(binomial_pmf_all(4, 1.0), vec![0.0, 0.0, 0.0, 0.0, 1.0]);
    }
}
