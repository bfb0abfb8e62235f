//! The shape shared by most baselines: a release `clamp(centre(y) + W)` whose centre depends on
//! the data only through the count y, with additive noise W. Its risk is an exact sum over Y of
//! closed forms (unclamped squared loss; Laplace and Gaussian absolute loss) or of numerical
//! integrals of the noise density with the clamped tails as point masses.

use ndarray::Array2;
use rand::Rng;

use crate::eval::noise::{rounded_column, Noise};
use crate::eval::ScalarLoss;
use crate::eval::{count, Estimator, Method, Privacy, Risk, Setting};
use crate::model::family::binomial_pmf_all;

/// `clamp(centre[y] + W, lo, hi)` (or unclamped).
#[derive(Debug, Clone)]
pub(crate) struct CountRelease {
    /// The method.
    pub method: Method,
    /// Privacy guarantee.
    pub privacy: Privacy,
    /// The model's setting.
    pub setting: Setting,
    /// centre\[y\], y = 0..K.
    pub centres: Vec<f64>,
    /// The noise W.
    pub noise: Noise,
    /// Clamp interval, if any.
    pub clamp: Option<(f64, f64)>,
    /// (E X, E X²) given y, for squared loss.
    moments: Vec<(f64, f64)>,
}

impl CountRelease {
    /// Build, precomputing the per-y moments used by squared loss.
    pub(crate) fn new(
        method: Method,
        privacy: Privacy,
        setting: Setting,
        centres: Vec<f64>,
        noise: Noise,
        clamp: Option<(f64, f64)>,
    ) -> Self {
        assert_eq!(centres.len() as u64, setting.trials + 1, "one centre per y");
        let moments = match setting.loss {
            ScalarLoss::Squared => centres.iter().map(|&c| noise.moments(c, clamp)).collect(),
            ScalarLoss::Absolute => Vec::new(),
        };
        CountRelease { method, privacy, setting, centres, noise, clamp, moments }
    }

    /// The release given y (the data enter only through y).
    pub(crate) fn release_given_count(&self, y: usize, rng: &mut dyn Rng) -> f64 {
        let x = self.centres[y] + self.noise.sample(rng);
        match self.clamp {
            Some((lo, hi)) => x.clamp(lo, hi),
            None => x,
        }
    }

    /// E\[L(θ, release) | y\].
    pub(crate) fn loss_given_count(&self, y: usize, theta: f64) -> f64 {
        match self.setting.loss {
            ScalarLoss::Squared => {
                let (m1, m2) = self.moments[y];
                (m2 - 2.0 * theta * m1 + theta * theta).max(0.0)
            }
            ScalarLoss::Absolute => self.noise.expected_loss(self.centres[y], self.clamp, theta, ScalarLoss::Absolute),
        }
    }

    /// How the per-y expectations are computed.
    fn is_closed_form(&self) -> bool {
        matches!(
            (&self.noise, self.clamp, self.setting.loss),
            (_, None, ScalarLoss::Squared)
                | (Noise::Laplace { .. } | Noise::Gaussian { .. }, None, ScalarLoss::Absolute)
                // Piecewise-constant density: three Gauss–Legendre points per piece are exact.
                | (Noise::Staircase { .. }, _, _)
        )
    }
}

impl Estimator for CountRelease {
    fn method(&self) -> Method {
        self.method
    }
    fn privacy(&self) -> Privacy {
        self.privacy
    }
    fn release(&self, records: &[bool], rng: &mut dyn Rng) -> f64 {
        self.release_given_count(count(records), rng)
    }
    fn risk_at(&self, theta: f64) -> Risk {
        let q = binomial_pmf_all(self.setting.trials, theta);
        let v =
            q.iter().enumerate().filter(|(_, &qi)| qi > 0.0).map(|(y, &qi)| qi * self.loss_given_count(y, theta)).sum();
        if self.is_closed_form() {
            Risk::exact(v)
        } else {
            Risk::numerical(v)
        }
    }
    fn rounded_mechanism(&self, outputs: &[f64]) -> Option<Array2<f64>> {
        if let Some((lo, hi)) = self.clamp {
            // Rounding after clamping equals rounding the raw release only if the grid lies in [lo, hi].
            if outputs.iter().any(|&o| o < lo || o > hi) {
                return None;
            }
        }
        let mut p = Array2::zeros((outputs.len(), self.centres.len()));
        for (i, &c) in self.centres.iter().enumerate() {
            for (k, v) in rounded_column(c, &self.noise, outputs).into_iter().enumerate() {
                p[[k, i]] = v;
            }
        }
        Some(p)
    }
}
