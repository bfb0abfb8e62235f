//! Baselines from the literature, one module per method, each citing its paper with its privacy
//! argument. All are estimators of θ from K Bernoulli(θ) records and implement
//! [`crate::eval::Estimator`], like the solved UBaPP mechanism; `compare` builds them by method id.
//!
//! How a model describes parties: the records are split, in order, into M equal parties (DSSA,
//! DSAA) or S equal sites (CAPE and the conventional distributed Gaussian); `compare --parties M`
//! sets M = S (default: the largest divisor of K that is ≤ √K). Methods whose partition does not
//! divide K are skipped for that K.

pub(crate) mod count;
pub(crate) mod each_count;
pub(crate) mod gaussian;
pub(crate) mod geometric;
pub(crate) mod laplace_count;
pub(crate) mod lbapp;
pub(crate) mod lei;
pub(crate) mod staircase;
pub(crate) mod subsample;
pub(crate) mod sufficient;
pub(crate) mod sum_noise;

/// Settings of the baselines that the model file does not carry.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BaselineOptions {
    /// δ of the (ε, δ) methods.
    pub delta: f64,
    /// Parties / sites M; `None`: the largest divisor of K that is ≤ √K.
    pub parties: Option<u64>,
    /// Seed of the Monte-Carlo risk fallbacks.
    pub seed: u64,
}

impl Default for BaselineOptions {
    fn default() -> Self {
        BaselineOptions { delta: 1e-5, parties: None, seed: 0 }
    }
}

impl BaselineOptions {
    /// The parties M for K records: `parties` if set, else the largest divisor of K that is ≤ √K.
    pub fn parties_for(&self, k: u64) -> u64 {
        self.parties.unwrap_or_else(|| default_parties(k))
    }
}

/// The default number of parties for K records: the largest divisor of K that is ≤ √K.
pub(crate) fn default_parties(k: u64) -> u64 {
    (1..=k).take_while(|d| d * d <= k).filter(|d| k % d == 0).last().unwrap_or(1)
}
