//! Loss functions L(θ, θ̃).

use ndarray::{Array2, ArrayView1};

use super::grid::Grid;

/// A loss between a parameter point and a released point.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Loss {
    /// Squared (Euclidean) error Σ_d (θ_d − θ̃_d)².
    Squared,
    /// Absolute (L1) error Σ_d |θ_d − θ̃_d|.
    Absolute,
}

impl Loss {
    /// L(θ, θ̃).
    pub fn eval(self, theta: ArrayView1<'_, f64>, released: ArrayView1<'_, f64>) -> f64 {
        let diffs = theta.iter().zip(released.iter()).map(|(a, b)| a - b);
        match self {
            Loss::Squared => diffs.map(|d| d * d).sum(),
            Loss::Absolute => diffs.map(f64::abs).sum(),
        }
    }

    /// The matrix L[j, k] = L(θ_j, θ̃_k).
    pub fn matrix(self, theta: &Grid, outputs: &Grid) -> Array2<f64> {
        Array2::from_shape_fn((theta.len(), outputs.len()), |(j, k)| {
            self.eval(theta.point(j), outputs.point(k))
        })
    }

    /// Its name in model files.
    pub fn name(self) -> &'static str {
        match self {
            Loss::Squared => "squared",
            Loss::Absolute => "absolute",
        }
    }
}
