//! The released mechanism as an [`Estimator`]: what a comparison evaluates for UBaPP is what
//! `solve --out` deploys (the certified integer weights, or the compact geometric(ε') + remap),
//! not the solver's float P. The two risks differ by the certified repair cost.

use ndarray::{arr1, Array2};
use rand::Rng;

use super::{count, Estimator, Method, Privacy, Risk};
use crate::mechanism::Release;

impl Estimator for Release {
    fn method(&self) -> Method {
        Method::Ubapp
    }

    /// The target guarantee, which the certificate proves (its certified values are at most it).
    fn privacy(&self) -> Privacy {
        self.certificate().guarantee()
    }

    /// The exact sampler on y = Σ x_r (the observation index of a binomial model).
    fn release(&self, records: &[bool], rng: &mut dyn Rng) -> f64 {
        let k = self.sample(count(records), rng);
        self.output(k)[0]
    }

    /// Σ_i q_θ(y_i) Σ_k Pr(θ̃_k | y_i) L(θ, θ̃_k) over the probabilities of what is sampled: exact.
    fn risk_at(&self, theta: f64) -> Risk {
        let model = self.model();
        let q = model.family.likelihood(arr1(&[theta]).view());
        let t = arr1(&[theta]);
        let losses: Vec<f64> = (0..self.n_outputs()).map(|k| model.loss.eval(t.view(), self.output(k))).collect();
        let value = match self {
            // The integer weights directly: no |Θ̃| × |Y| matrix per θ.
            Release::Dense(m) => {
                let total = m.total() as f64;
                q.iter()
                    .enumerate()
                    .filter(|(_, &qi)| qi > 0.0)
                    .map(|(i, &qi)| {
                        let col = m.column(i);
                        qi * col.iter().zip(&losses).map(|(&w, l)| w as f64 / total * l).sum::<f64>()
                    })
                    .sum()
            }
            Release::Compact(c) => {
                let p = c.probabilities();
                q.iter()
                    .enumerate()
                    .filter(|(_, &qi)| qi > 0.0)
                    .map(|(i, &qi)| qi * p.column(i).iter().zip(&losses).map(|(p, l)| p * l).sum::<f64>())
                    .sum()
            }
        };
        Risk::exact(value)
    }

    fn rounded_mechanism(&self, outputs: &[f64]) -> Option<Array2<f64>> {
        (outputs == self.model().outputs.values().as_slice()).then(|| self.probabilities())
    }
}
