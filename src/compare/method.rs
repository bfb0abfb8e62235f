//! The method registry: every estimator `compare` can put in a table, by id, and how to build it.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::baselines::{
    gaussian, geometric, laplace_count, lbapp, lei, staircase, subsample, sufficient, BaselineOptions,
};
use crate::eval::{Estimator, GridMechanism, Privacy, Setting};
use crate::model::Model;
use crate::solve::Solution;
use crate::Result;

/// A method id as used by `compare --methods` (kebab case, e.g. `lbapp-clamped`); serialises to its id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
#[value(rename_all = "kebab-case")]
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
    /// The staircase mechanism on the count, clamped (Geng & Viswanath 2016).
    Staircase,
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
    /// Each party releases through the single-party UBaPP optimum; exact Bayes aggregate.
    UbappLocal,
    /// Each party releases a likelihood-preserving geometric count; exact Bayes aggregate.
    GeometricLocal,
    /// Noise shares summing to the central two-sided geometric, by secure aggregation.
    GeometricShares,
    /// Each party releases a geometric count; the clamped average of the plug-in estimates.
    GeometricCount,
}

impl Method {
    /// Every method, in table order.
    pub const ALL: [Method; 20] = [
        Method::Ubapp,
        Method::Lbapp,
        Method::LbappClamped,
        Method::LaplaceCount,
        Method::LaplaceCountClamped,
        Method::Geometric,
        Method::Staircase,
        Method::SmithSa,
        Method::Cssa,
        Method::Dssa,
        Method::Dsaa,
        Method::LeiPh,
        Method::LeiThld,
        Method::Gaussian,
        Method::GaussianConventional,
        Method::Cape,
        Method::UbappLocal,
        Method::GeometricLocal,
        Method::GeometricShares,
        Method::GeometricCount,
    ];

    /// The id (also its serialised form and its `--methods` spelling).
    pub fn id(self) -> &'static str {
        match self {
            Method::Ubapp => "ubapp",
            Method::Lbapp => "lbapp",
            Method::LbappClamped => "lbapp-clamped",
            Method::LaplaceCount => "laplace-count",
            Method::LaplaceCountClamped => "laplace-count-clamped",
            Method::Geometric => "geometric",
            Method::Staircase => "staircase",
            Method::SmithSa => "smith-sa",
            Method::Cssa => "cssa",
            Method::Dssa => "dssa",
            Method::Dsaa => "dsaa",
            Method::LeiPh => "lei-ph",
            Method::LeiThld => "lei-thld",
            Method::Gaussian => "gaussian",
            Method::GaussianConventional => "gaussian-conventional",
            Method::Cape => "cape",
            Method::UbappLocal => "ubapp-local",
            Method::GeometricLocal => "geometric-local",
            Method::GeometricShares => "geometric-shares",
            Method::GeometricCount => "geometric-count",
        }
    }

    /// True when the method splits the records into parties or sites.
    pub fn uses_parties(self) -> bool {
        matches!(
            self,
            Method::Dssa
                | Method::Dsaa
                | Method::GaussianConventional
                | Method::Cape
                | Method::UbappLocal
                | Method::GeometricLocal
                | Method::GeometricShares
                | Method::GeometricCount
        )
    }

    /// True for the methods only the party comparison evaluates (`compare --parties`).
    pub fn party_only(self) -> bool {
        matches!(self, Method::UbappLocal | Method::GeometricLocal | Method::GeometricShares | Method::GeometricCount)
    }
}

impl fmt::Display for Method {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.id())
    }
}

/// Build baseline `method` for `model` at ε; `Ok(None)` when it does not apply (UBaPP, which is
/// solved rather than built; a party count that does not divide K; a model outside the binomial
/// family with squared or absolute loss). Its privacy is [`Estimator::privacy`].
pub fn build(method: Method, model: &Model, eps: f64, opts: &BaselineOptions) -> Result<Option<Box<dyn Estimator>>> {
    let Some(setting) = Setting::of(model) else { return Ok(None) };
    let k = setting.trials;
    let parties = opts.parties_for(k);
    if method.uses_parties() && (parties == 0 || k % parties != 0) {
        return Ok(None);
    }
    let seed = opts.seed ^ (eps.to_bits().rotate_left(17)) ^ k;
    Ok(Some(match method {
        Method::Ubapp
        | Method::UbappLocal
        | Method::GeometricLocal
        | Method::GeometricShares
        | Method::GeometricCount => return Ok(None),
        Method::Lbapp => Box::new(lbapp::lbapp(setting, eps, false)),
        Method::LbappClamped => Box::new(lbapp::lbapp(setting, eps, true)),
        Method::LaplaceCount => Box::new(laplace_count::laplace_count(setting, eps, false)),
        Method::LaplaceCountClamped => Box::new(laplace_count::laplace_count(setting, eps, true)),
        Method::Geometric => Box::new(geometric::geometric(model, setting, eps)?),
        Method::Staircase => Box::new(staircase::staircase(setting, eps)),
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

/// The solved UBaPP mechanism (Lakshminarayanan & Rojas 2023): the LP's float P of `solution` with
/// `model`'s output grid. Its privacy is the model's: ε, or (ε, δ) when the model has δ > 0 — up to
/// the solver's feasibility tolerance (`max_dp_violation`); the certified integer mechanism is
/// built by `mechanism`.
pub(crate) fn ubapp(model: &Model, solution: &Solution, setting: Setting) -> GridMechanism {
    let eps = solution.eps;
    let privacy = if model.delta > 0.0 { Privacy::Approx { eps, delta: model.delta } } else { Privacy::Pure { eps } };
    GridMechanism::new("ubapp", privacy, solution.p.clone(), model.outputs.values(), setting)
}
