//! Sufficient-statistic averaging: Chen & Sung, "Differentially Private Parameter Estimation from
//! Distributed Sources" — CSSA (one curator) and DSSA (M parties).
//!
//! Bernoulli data form an exponential family with T(x) = x, range Λ_T = 1, and mean map ∇α(θ) = θ,
//! so the MLE from a (noisy) mean of T is that mean clamped to Θ = [lower, upper].
//! - **CSSA** (id `cssa`): T̄ + Lap(Λ_T/(nε)), clamped. The paper writes the scale Λ_T/(kε) with k
//!   blocks; the tight scale is Λ_T/(nε) (k = n), used here. For Bernoulli data CSSA therefore
//!   coincides with `laplace-count-clamped`.
//! - **DSSA** (id `dssa`): party j releases T̄_j + Lap(Λ_T/(Nε)); the aggregator averages the M
//!   releases, clamps to Θ and inverts the mean map (identity). Its risk ≈ (1/(MN I))(1 + 2Λ_T²/(Nε² I))
//!   (the corrected rate, see PAPERS.md §3): efficient iff Nε² → ∞.
//!
//! **Privacy (pure ε).** Replacing one record changes T̄ (resp. T̄_j) by at most Λ_T/n (Λ_T/N): the
//! Laplace mechanism. In DSSA each record affects one party's release only (parallel composition);
//! averaging, clamping and inverting are post-processing.
//!
//! **Risk.** DSSA's output is clamp(y/K + W) with W the mean of M Laplace(1/(Nε)), i.e. the sum of M
//! Laplace(1/(NMε)): exact sums over Y with the density of that sum integrated numerically.

use ndarray::Array2;
use rand::Rng;

use super::count::CountRelease;
use crate::eval::noise::{sample_laplace, Noise};
use crate::eval::{Estimator, Method, Privacy, Risk, Setting};

/// CSSA with the tight scale (id `cssa`).
pub(crate) fn cssa(setting: Setting, eps: f64) -> CountRelease {
    let k = setting.trials as f64;
    let centres = (0..=setting.trials).map(|y| y as f64 / k).collect();
    CountRelease::new(
        Method::Cssa,
        Privacy::Pure { eps },
        setting,
        centres,
        Noise::Laplace { b: 1.0 / (k * eps) },
        Some((setting.lower, setting.upper)),
    )
}

/// DSSA over M parties of N = K/M records.
#[derive(Debug, Clone)]
pub(crate) struct Dssa {
    law: CountRelease,
    parties: u64,
    eps: f64,
}

impl Dssa {
    /// Build (M must divide K; checked by the caller).
    pub(crate) fn new(setting: Setting, eps: f64, parties: u64) -> Dssa {
        let k = setting.trials as f64;
        let n = (setting.trials / parties) as f64;
        let centres = (0..=setting.trials).map(|y| y as f64 / k).collect();
        let noise = if parties == 1 {
            Noise::Laplace { b: 1.0 / (n * eps) }
        } else {
            Noise::LaplaceSum { m: parties, b: 1.0 / (n * eps * parties as f64) }
        };
        let law = CountRelease::new(
            Method::Dssa,
            Privacy::Pure { eps },
            setting,
            centres,
            noise,
            Some((setting.lower, setting.upper)),
        );
        Dssa { law, parties, eps }
    }
}

impl Estimator for Dssa {
    fn method(&self) -> Method {
        Method::Dssa
    }
    fn privacy(&self) -> Privacy {
        Privacy::Pure { eps: self.eps }
    }
    /// The protocol itself: each party's noisy mean, averaged, clamped.
    fn release(&self, records: &[bool], rng: &mut dyn Rng) -> f64 {
        let n = records.len() / self.parties as usize;
        let b = 1.0 / (n as f64 * self.eps);
        let avg: f64 = records
            .chunks(n)
            .map(|p| p.iter().filter(|&&x| x).count() as f64 / n as f64 + sample_laplace(b, rng))
            .sum::<f64>()
            / self.parties as f64;
        avg.clamp(self.law.setting.lower, self.law.setting.upper)
    }
    fn risk_at(&self, theta: f64) -> Risk {
        self.law.risk_at(theta)
    }
    fn rounded_mechanism(&self, outputs: &[f64]) -> Option<Array2<f64>> {
        self.law.rounded_mechanism(outputs)
    }
}
