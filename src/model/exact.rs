//! Exact costs for the conjugate Beta–binomial model: no parameter grid, only the output set is
//! discretised.
//!
//! With prior Beta(a, b) on θ ∈ [0, 1] and y ~ Binomial(K, θ), the UBaPP cost (the integral form of
//! tr(Q diag(π) L P), UBaPP slides) is
//!
//! ```text
//! c[k, i] = ∫ π(θ) q_θ(y_i) L(θ, θ̃_k) dθ = m(y_i) · E[L(θ, θ̃_k) | y_i],
//! m(y) = C(K, y) B(a + y, b + K − y) / B(a, b),        θ | y ~ Beta(a' = a + y, b' = b + K − y)
//! ```
//!
//! and the posterior expected loss is closed-form:
//! - squared: Var + (mean − t)², mean = a'/(a'+b'), Var = a'b'/((a'+b')²(a'+b'+1));
//! - absolute: E|θ − t| = mean − t + 2t I_t(a', b') − 2 mean I_t(a'+1, b')
//!   (from E|θ − t| = E(θ − t) + 2E(t − θ)⁺ and E[θ 1{θ ≤ t}] = mean · I_t(a'+1, b'));
//! - zero-one with tolerance τ: 1 − (I_{min(1, t+τ)}(a', b') − I_{max(0, t−τ)}(a', b')).
//!
//! I_x is the regularised incomplete beta function.

use ndarray::Array2;
use statrs::function::beta::{beta_reg, ln_beta};
use statrs::function::gamma::ln_gamma;

use super::{Grid, Loss};

/// The conjugate prior whose integrals are taken in closed form.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ExactBetaBinomial {
    /// Beta shape a (1 for the uniform prior).
    pub a: f64,
    /// Beta shape b.
    pub b: f64,
    /// K, the number of trials.
    pub trials: u64,
}

impl ExactBetaBinomial {
    /// Marginal probability m(y) of each y = 0..K (beta-binomial pmf).
    pub fn marginal(&self) -> Vec<f64> {
        let (a, b, k) = (self.a, self.b, self.trials as f64);
        (0..=self.trials)
            .map(|y| {
                let y = y as f64;
                (ln_gamma(k + 1.0) - ln_gamma(y + 1.0) - ln_gamma(k - y + 1.0) + ln_beta(a + y, b + k - y)
                    - ln_beta(a, b))
                .exp()
            })
            .collect()
    }

    /// E[L(θ, t) | y] under the posterior Beta(a + y, b + K − y).
    ///
    /// # Panics
    /// For a `Matrix` loss (it has no closed form; validation rejects it).
    pub fn posterior_expected_loss(&self, y: u64, t: f64, loss: &Loss) -> f64 {
        let a1 = self.a + y as f64;
        let b1 = self.b + (self.trials - y) as f64;
        let mean = a1 / (a1 + b1);
        let ireg = |a: f64, b: f64, x: f64| beta_reg(a, b, x.clamp(0.0, 1.0));
        match loss {
            Loss::Squared => a1 * b1 / ((a1 + b1).powi(2) * (a1 + b1 + 1.0)) + (mean - t).powi(2),
            Loss::Absolute => mean - t + 2.0 * t * ireg(a1, b1, t) - 2.0 * mean * ireg(a1 + 1.0, b1, t),
            Loss::ZeroOne { tolerance } => 1.0 - (ireg(a1, b1, t + tolerance) - ireg(a1, b1, t - tolerance)),
            Loss::Matrix { .. } => panic!("a matrix loss has no closed-form posterior expectation"),
        }
    }

    /// C[i, k] = c[k, i] = m(y_i) E[L(θ, θ̃_k) | y_i], |Y| × |Θ̃| (one-dimensional outputs).
    pub fn cost_matrix(&self, outputs: &Grid, loss: &Loss) -> Array2<f64> {
        let m = self.marginal();
        let t = outputs.values();
        Array2::from_shape_fn((m.len(), t.len()), |(i, k)| m[i] * self.posterior_expected_loss(i as u64, t[k], loss))
    }
}
