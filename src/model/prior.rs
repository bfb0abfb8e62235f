//! Priors on Θ and the weights π_j they put on a grid.

use rand::{rngs::StdRng, SeedableRng};
use rand::distr::Distribution;
use statrs::distribution::{Beta, Continuous};

/// A prior on the interval [lower, upper].
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Prior {
    /// Uniform.
    Uniform,
    /// Beta(a, b), rescaled from [0, 1] to [lower, upper].
    Beta {
        /// First shape parameter.
        a: f64,
        /// Second shape parameter.
        b: f64,
    },
}

impl Prior {
    /// Density at u ∈ [0, 1] on the unit scale (unnormalised constants are fine: weights are
    /// normalised afterwards).
    fn unit_density(self, u: f64) -> f64 {
        match self {
            Prior::Uniform => 1.0,
            Prior::Beta { a, b } => Beta::new(a, b).expect("validated shape parameters").pdf(u),
        }
    }

    /// Weights ∝ prior density at the (1-D) points, normalised to sum to 1.
    /// Returns `None` if the density vanishes (or is infinite) on the whole grid.
    pub fn grid_weights(self, values: &[f64], lower: f64, upper: f64) -> Option<Vec<f64>> {
        let w: Vec<f64> =
            values.iter().map(|&v| self.unit_density((v - lower) / (upper - lower))).collect();
        let total: f64 = w.iter().sum();
        if !(total.is_finite() && total > 0.0) || w.iter().any(|x| !x.is_finite()) {
            return None;
        }
        Some(w.into_iter().map(|x| x / total).collect())
    }

    /// `points` i.i.d. draws from the prior on [lower, upper], sorted (the UBaPP paper's grid).
    pub fn samples(self, points: usize, seed: u64, lower: f64, upper: f64) -> Vec<f64> {
        let mut rng = StdRng::seed_from_u64(seed);
        let mut draws: Vec<f64> = match self {
            Prior::Uniform => (0..points).map(|_| rand::RngExt::random::<f64>(&mut rng)).collect(),
            Prior::Beta { a, b } => {
                let d = Beta::new(a, b).expect("validated shape parameters");
                (0..points).map(|_| d.sample(&mut rng)).collect()
            }
        };
        draws.sort_by(f64::total_cmp);
        draws.into_iter().map(|u| lower + u * (upper - lower)).collect()
    }
}
