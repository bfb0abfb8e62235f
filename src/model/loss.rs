//! Loss functions L(θ, θ̃).

use std::sync::Arc;

use ndarray::{Array2, ArrayView1};

use super::grid::Grid;

/// A loss between a parameter point and a released point.
#[derive(Debug, Clone, PartialEq)]
pub enum Loss {
    /// Squared (Euclidean) error Σ_d (θ_d − θ̃_d)².
    Squared,
    /// Absolute (L1) error Σ_d |θ_d − θ̃_d|.
    Absolute,
    /// Zero-one with a tolerance: 1 when ‖θ − θ̃‖₂ > tolerance, else 0.
    ZeroOne {
        /// Tolerance ≥ 0.
        tolerance: f64,
    },
    /// A user-supplied matrix L[j, k] on fixed parameter and output grids.
    Matrix {
        /// L[j, k], M × |Θ̃|.
        values: Arc<Array2<f64>>,
        /// The parameter grid its rows belong to.
        theta: Grid,
        /// The output grid its columns belong to.
        outputs: Grid,
    },
}

impl Loss {
    /// L(θ, θ̃).
    ///
    /// # Panics
    /// For a `Matrix` loss when θ or θ̃ is not a point of its grids (the matrix defines nothing else).
    pub fn eval(&self, theta: ArrayView1<'_, f64>, released: ArrayView1<'_, f64>) -> f64 {
        let diffs = theta.iter().zip(released.iter()).map(|(a, b)| a - b);
        match self {
            Loss::Squared => diffs.map(|d| d * d).sum(),
            Loss::Absolute => diffs.map(f64::abs).sum(),
            Loss::ZeroOne { tolerance } => {
                let d2: f64 = diffs.map(|d| d * d).sum();
                if d2.sqrt() > *tolerance {
                    1.0
                } else {
                    0.0
                }
            }
            Loss::Matrix { values, theta: tg, outputs: og } => {
                let j = (0..tg.len()).find(|&j| tg.point(j) == theta);
                let k = (0..og.len()).find(|&k| og.point(k) == released);
                match (j, k) {
                    (Some(j), Some(k)) => values[[j, k]],
                    _ => panic!("a matrix loss is defined only on its own parameter and output grids"),
                }
            }
        }
    }

    /// The matrix L[j, k] = L(θ_j, θ̃_k).
    pub fn matrix(&self, theta: &Grid, outputs: &Grid) -> Array2<f64> {
        if let Loss::Matrix { values, theta: tg, outputs: og } = self {
            if tg == theta && og == outputs {
                return values.as_ref().clone();
            }
        }
        Array2::from_shape_fn((theta.len(), outputs.len()), |(j, k)| self.eval(theta.point(j), outputs.point(k)))
    }

    /// Its name in model files.
    pub fn name(&self) -> &'static str {
        match self {
            Loss::Squared => "squared",
            Loss::Absolute => "absolute",
            Loss::ZeroOne { .. } => "zero-one",
            Loss::Matrix { .. } => "matrix",
        }
    }
}
