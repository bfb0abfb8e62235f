//! How to build each method `compare` can put in a table (the [`Method`] enum itself lives in
//! `eval`, where every [`Estimator`] names its method).

use super::error::Result;
use crate::baselines::{
    gaussian, geometric, laplace_count, lbapp, lei, staircase, subsample, sufficient, BaselineOptions,
};
pub use crate::eval::Method;
use crate::eval::{Estimator, Setting};
use crate::model::Model;

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
        | Method::UbappUnconstrained
        | Method::UbappLocal
        | Method::GeometricLocal
        | Method::GeometricShares
        | Method::GeometricCount
        | Method::GeometricEachCount
        | Method::LaplaceEachCount
        | Method::StaircaseEachCount
        | Method::GeometricEachCountRemap
        | Method::LaplaceEachCountRemap
        | Method::StaircaseEachCountRemap
        | Method::LaplaceSum
        | Method::LaplaceSumRemap
        | Method::StaircaseSum
        | Method::StaircaseSumRemap => return Ok(None),
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
