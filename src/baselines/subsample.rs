//! Subsample-and-aggregate: Smith, "Efficient, Differentially Private Point Estimators" (2008), and
//! its distributed form DSAA (Chen & Sung, "Differentially Private Parameter Estimation from
//! Distributed Sources").
//!
//! One party with n records (Smith's S&A, id `smith-sa`, = Chen–Sung's CSAA): split the records
//! into k disjoint blocks (sizes ⌊n/k⌋ or ⌈n/k⌉, in record order), compute the bias-corrected MLE on
//! each block — for Bernoulli data the block mean, which is unbiased (b_1 = 0) — clamp it to
//! Θ = [lower, upper], average the k clamped values and add Lap(Λ/(kε)) with Λ = upper − lower.
//! Block count `k = round(n^{3/5} ε^{−2/5})`, kept in 1 ≤ k ≤ n (Smith's choice).
//! DSAA (id `dsaa`): each of M parties runs that on its N records with ε; the aggregator outputs
//! the mean of the M releases. The output is not clamped (as in the papers).
//!
//! **Privacy (pure ε).** One record lies in one block, whose clamped value moves by at most Λ, so
//! the average moves by at most Λ/k: the Laplace mechanism with scale Λ/(kε) is ε-DP. In DSAA each
//! record belongs to one party, whose release is ε-DP; the others do not depend on it (parallel
//! composition), and averaging is post-processing.
//!
//! **Risk.** With Θ = [0, 1] clamping never binds and Σ_blocks z_j = S_a/(t+1) + S_b/t with S_a, S_b
//! independent binomials (all blocks of size t+1, resp. t, across parties): squared loss has the
//! closed form θ(1−θ)/(M k²)·(r/(t+1) + (k−r)/t) + Var(noise); absolute loss (one party) is an exact
//! double sum of Laplace closed forms. Otherwise (a clamp that binds, or absolute loss with several
//! parties) the risk is a Monte-Carlo estimate through `release` with its standard error.

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use crate::eval::noise::Noise;
use crate::eval::ScalarLoss;
use crate::eval::{monte_carlo_risk, Estimator, Method, Privacy, Risk, RiskMethod, Setting};
use crate::model::family::binomial_pmf_all;

/// Draws per θ when the risk falls back to Monte Carlo.
pub(crate) const MC_DRAWS: usize = 4000;

/// Smith's block count k = round(n^{3/5} ε^{−2/5}), clamped to 1 ≤ k ≤ n.
pub(crate) fn smith_blocks(n: u64, eps: f64) -> u64 {
    let k = ((n as f64).powf(0.6) * eps.powf(-0.4)).round();
    if k.is_nan() {
        return 1;
    }
    (k as u64).clamp(1, n.max(1))
}

/// Subsample-and-aggregate over M parties of N records each (M = 1: Smith's S&A).
#[derive(Debug, Clone)]
pub(crate) struct SubsampleAggregate {
    method: Method,
    eps: f64,
    setting: Setting,
    /// Parties M.
    pub parties: u64,
    /// Records per party N.
    pub per_party: u64,
    /// Blocks per party k.
    pub blocks: u64,
    seed: u64,
}

impl SubsampleAggregate {
    /// Smith's S&A on all K records (id `smith-sa`).
    pub(crate) fn smith(setting: Setting, eps: f64, seed: u64) -> Self {
        let k = smith_blocks(setting.trials, eps);
        SubsampleAggregate {
            method: Method::SmithSa,
            eps,
            setting,
            parties: 1,
            per_party: setting.trials,
            blocks: k,
            seed,
        }
    }

    /// DSAA with M parties of N = K/M records (M must divide K; checked by the caller).
    pub(crate) fn dsaa(setting: Setting, eps: f64, parties: u64, seed: u64) -> Self {
        let n = setting.trials / parties;
        let k = smith_blocks(n, eps);
        SubsampleAggregate { method: Method::Dsaa, eps, setting, parties, per_party: n, blocks: k, seed }
    }

    fn lambda(&self) -> f64 {
        self.setting.upper - self.setting.lower
    }

    /// (t, r): block sizes are t + 1 (the first r blocks) and t.
    fn block_sizes(&self) -> (u64, u64) {
        (self.per_party / self.blocks, self.per_party % self.blocks)
    }

    /// Noise of the final output: the mean of M Laplace(Λ/(kε)).
    fn output_noise(&self) -> Noise {
        let b = self.lambda() / (self.blocks as f64 * self.eps);
        if self.parties == 1 {
            Noise::Laplace { b }
        } else {
            Noise::LaplaceSum { m: self.parties, b: b / self.parties as f64 }
        }
    }

    fn clamp_binds(&self) -> bool {
        self.setting.lower > 0.0 || self.setting.upper < 1.0
    }
}

impl Estimator for SubsampleAggregate {
    fn method(&self) -> Method {
        self.method
    }
    fn privacy(&self) -> Privacy {
        Privacy::Pure { eps: self.eps }
    }
    fn release(&self, records: &[bool], rng: &mut dyn Rng) -> f64 {
        let (t, r) = self.block_sizes();
        let (lo, hi) = (self.setting.lower, self.setting.upper);
        let b = self.lambda() / (self.blocks as f64 * self.eps);
        let mut total = 0.0;
        for party in records.chunks(self.per_party as usize).take(self.parties as usize) {
            let mut start = 0usize;
            let mut zsum = 0.0;
            for j in 0..self.blocks {
                let size = (t + u64::from(j < r)) as usize;
                let block = &party[start..start + size];
                start += size;
                let mean = block.iter().filter(|&&x| x).count() as f64 / size as f64;
                zsum += mean.clamp(lo, hi);
            }
            total += zsum / self.blocks as f64 + crate::eval::noise::sample_laplace(b, rng);
        }
        total / self.parties as f64
    }
    fn risk_at(&self, theta: f64) -> Risk {
        let (t, r) = self.block_sizes();
        let (m, k) = (self.parties as f64, self.blocks as f64);
        let noise = self.output_noise();
        let exact_abs = self.parties == 1;
        if !self.clamp_binds() {
            match self.setting.loss {
                ScalarLoss::Squared => {
                    let (tf, rf) = (t as f64, r as f64);
                    let block_var = rf / (tf + 1.0) + if t > 0 { (k - rf) / tf } else { 0.0 };
                    return Risk::exact(theta * (1.0 - theta) / (m * k * k) * block_var + noise.variance());
                }
                ScalarLoss::Absolute if exact_abs => {
                    let na = self.parties * r * (t + 1);
                    let nb = self.parties * (self.blocks - r) * t;
                    let (qa, qb) = (binomial_pmf_all(na, theta), binomial_pmf_all(nb, theta));
                    let mut v = 0.0;
                    for (sa, &pa) in qa.iter().enumerate().filter(|(_, &p)| p > 0.0) {
                        for (sb, &pb) in qb.iter().enumerate().filter(|(_, &p)| p > 0.0) {
                            let centre =
                                (sa as f64 / (t + 1) as f64 + if t > 0 { sb as f64 / t as f64 } else { 0.0 }) / (m * k);
                            v += pa * pb * noise.expected_loss(centre, None, theta, ScalarLoss::Absolute);
                        }
                    }
                    return Risk::exact(v);
                }
                ScalarLoss::Absolute => {}
            }
        }
        let mut rng = StdRng::seed_from_u64(self.seed ^ theta.to_bits());
        let (mean, se) = monte_carlo_risk(self, &self.setting, theta, MC_DRAWS, &mut rng);
        Risk { value: mean, se, method: RiskMethod::MonteCarlo }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn smith_block_count_follows_n_to_the_three_fifths() {
        assert_eq!(smith_blocks(100, 1.0), 16); // 100^0.6 = 15.85
        assert_eq!(smith_blocks(100, 0.1), 40); // × 0.1^−0.4 = 2.512
        assert_eq!(smith_blocks(100, 1e-4), 100); // 631 capped at n
        assert_eq!(smith_blocks(100, 1e6), 1); // 0.063 raised to 1
        assert_eq!(smith_blocks(1, 0.5), 1);
    }
}
