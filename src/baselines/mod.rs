//! Baselines from the literature, one module per method, each citing its paper with its privacy
//! argument. All are estimators of θ from K Bernoulli(θ) records and implement
//! [`crate::eval::Estimator`], like the solved UBaPP mechanism.
//!
//! How a model describes parties: the records are split, in order, into M equal parties (DSSA,
//! DSAA) or S equal sites (CAPE and the conventional distributed Gaussian); `compare --parties M`
//! sets M = S (default: the largest divisor of K that is ≤ √K). Methods whose partition does not
//! divide K are skipped for that K.

pub mod count;
pub mod gaussian;
pub mod geometric;
pub mod laplace_count;
pub mod lbapp;
pub mod lei;
pub mod subsample;
pub mod sufficient;

use std::fmt;
use std::str::FromStr;

use crate::eval::{Estimator, Setting};
use crate::model::Model;
use crate::{Error, Result};

/// A method id as used by `compare --methods`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Method {
    /// The solved UBaPP LP.
    Ubapp,
    /// LBaPP, raw.
    Lbapp,
    /// LBaPP clamped to [lower, upper].
    LbappClamped,
    /// Laplace on the count, raw.
    LaplaceCount,
    /// Laplace on the count, clamped.
    LaplaceCountClamped,
    /// Truncated geometric + Bayes remap.
    Geometric,
    /// Smith's subsample-and-aggregate.
    SmithSa,
    /// Chen–Sung CSSA.
    Cssa,
    /// Chen–Sung DSSA.
    Dssa,
    /// Chen–Sung DSAA.
    Dsaa,
    /// Lei's perturbed histogram, non-negative variant.
    LeiPh,
    /// Lei's perturbed histogram, thresholding.
    LeiThld,
    /// Gaussian mechanism, pooled ((ε, δ)).
    Gaussian,
    /// Gaussian mechanism, conventional distributed ((ε, δ)).
    GaussianConventional,
    /// CAPE ((ε, δ)).
    Cape,
}

impl Method {
    /// Every method, in table order.
    pub const ALL: [Method; 15] = [
        Method::Ubapp,
        Method::Lbapp,
        Method::LbappClamped,
        Method::LaplaceCount,
        Method::LaplaceCountClamped,
        Method::Geometric,
        Method::SmithSa,
        Method::Cssa,
        Method::Dssa,
        Method::Dsaa,
        Method::LeiPh,
        Method::LeiThld,
        Method::Gaussian,
        Method::GaussianConventional,
        Method::Cape,
    ];

    /// The id.
    pub fn id(self) -> &'static str {
        match self {
            Method::Ubapp => "ubapp",
            Method::Lbapp => "lbapp",
            Method::LbappClamped => "lbapp-clamped",
            Method::LaplaceCount => "laplace-count",
            Method::LaplaceCountClamped => "laplace-count-clamped",
            Method::Geometric => "geometric",
            Method::SmithSa => "smith-sa",
            Method::Cssa => "cssa",
            Method::Dssa => "dssa",
            Method::Dsaa => "dsaa",
            Method::LeiPh => "lei-ph",
            Method::LeiThld => "lei-thld",
            Method::Gaussian => "gaussian",
            Method::GaussianConventional => "gaussian-conventional",
            Method::Cape => "cape",
        }
    }

    /// True for the (ε, δ) methods.
    pub fn is_approximate(self) -> bool {
        matches!(self, Method::Gaussian | Method::GaussianConventional | Method::Cape)
    }

    /// True when the method splits the records into parties or sites.
    pub fn uses_parties(self) -> bool {
        matches!(self, Method::Dssa | Method::Dsaa | Method::GaussianConventional | Method::Cape)
    }

    /// Parse a comma-separated list (an input error naming `--methods` on an unknown id or an empty list).
    pub fn parse_list(items: &[String]) -> Result<Vec<Method>> {
        let mut out: Vec<Method> = Vec::new();
        for s in items {
            let m: Method = s.trim().parse()?;
            if !out.contains(&m) {
                out.push(m);
            }
        }
        if out.is_empty() {
            return Err(Error::argument("--methods", "must name at least one method"));
        }
        Ok(out)
    }
}

impl fmt::Display for Method {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.id())
    }
}

impl FromStr for Method {
    type Err = Error;
    fn from_str(s: &str) -> Result<Method> {
        Method::ALL.iter().copied().find(|m| m.id() == s).ok_or_else(|| {
            let ids: Vec<&str> = Method::ALL.iter().map(|m| m.id()).collect();
            Error::argument(
                "--methods",
                format!("names an unknown method \"{s}\" (expected one of {})", ids.join(", ")),
            )
        })
    }
}

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

/// The default number of parties for K records: the largest divisor of K that is ≤ √K.
pub fn default_parties(k: u64) -> u64 {
    (1..=k).take_while(|d| d * d <= k).filter(|d| k % d == 0).last().unwrap_or(1)
}

/// Build baseline `method` for `model` at ε; `Ok(None)` when it does not apply (UBaPP, which is
/// solved rather than built; a party count that does not divide K; a non-binomial model).
pub fn build(method: Method, model: &Model, eps: f64, opts: &BaselineOptions) -> Result<Option<Box<dyn Estimator>>> {
    let Some(setting) = Setting::of(model) else { return Ok(None) };
    let k = setting.trials;
    let parties = opts.parties.unwrap_or_else(|| default_parties(k));
    if method.uses_parties() && (parties == 0 || k % parties != 0) {
        return Ok(None);
    }
    let seed = opts.seed ^ (eps.to_bits().rotate_left(17)) ^ k;
    Ok(Some(match method {
        Method::Ubapp => return Ok(None),
        Method::Lbapp => Box::new(lbapp::lbapp(setting, eps, false)),
        Method::LbappClamped => Box::new(lbapp::lbapp(setting, eps, true)),
        Method::LaplaceCount => Box::new(laplace_count::laplace_count(setting, eps, false)),
        Method::LaplaceCountClamped => Box::new(laplace_count::laplace_count(setting, eps, true)),
        Method::Geometric => Box::new(geometric::geometric(model, setting, eps)?),
        Method::SmithSa => Box::new(subsample::SubsampleAggregate::smith(setting, eps, seed)),
        Method::Cssa => Box::new(sufficient::cssa(setting, eps)),
        Method::Dssa => Box::new(sufficient::Dssa::new(setting, eps, parties)),
        Method::Dsaa => Box::new(subsample::SubsampleAggregate::dsaa(setting, eps, parties, seed)),
        Method::LeiPh => Box::new(lei::LeiHistogram::new(setting, eps, false)),
        Method::LeiThld => Box::new(lei::LeiHistogram::new(setting, eps, true)),
        Method::Gaussian => {
            Box::new(gaussian::GaussianScheme::new(setting, eps, opts.delta, parties, gaussian::Scheme::Pooled))
        }
        Method::GaussianConventional => {
            Box::new(gaussian::GaussianScheme::new(setting, eps, opts.delta, parties, gaussian::Scheme::Conventional))
        }
        Method::Cape => {
            Box::new(gaussian::GaussianScheme::new(setting, eps, opts.delta, parties, gaussian::Scheme::Cape))
        }
    }))
}
