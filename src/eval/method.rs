//! The method registry: every estimator a comparison can put in a table, keyed by [`Method`] (its
//! kebab-case id is what the `methods` parameter takes, the CSV's and the JSON's).

use std::fmt;

use serde::{Deserialize, Serialize};

/// A method id as the `methods` parameter takes it (kebab case, e.g. `lbapp-clamped`); serialises to its id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Method {
    /// The solved UBaPP LP.
    Ubapp,
    /// The UBaPP optimum of the same model without its `[constraints]` (only for a model with
    /// constraints): the UBaPP row's risk over this one's is the constraints' price.
    UbappUnconstrained,
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
    /// Two-sided geometric noise on each category's count (sensitivity 2) and the clamped
    /// plug-in estimate (a multinomial with one data holder).
    GeometricEachCount,
    /// Laplace noise of scale 2/ε on each category's count and the clamped plug-in estimate.
    LaplaceEachCount,
    /// The staircase at ε/2 on each category's count and the clamped plug-in estimate.
    StaircaseEachCount,
    /// Geometric noise on each count and the Bayes remap (Monte Carlo).
    GeometricEachCountRemap,
    /// Laplace noise on each count and the Bayes remap (Monte Carlo).
    LaplaceEachCountRemap,
    /// The staircase on each count and the Bayes remap (Monte Carlo).
    StaircaseEachCountRemap,
    /// Laplace noise on a clipped Poisson sum (sensitivity c), the clamped plug-in estimate.
    LaplaceSum,
    /// Laplace noise on a clipped Poisson sum and the Bayes remap.
    LaplaceSumRemap,
    /// Staircase noise on a clipped Poisson sum (Geng & Viswanath 2016), the clamped plug-in.
    StaircaseSum,
    /// Staircase noise on a clipped Poisson sum and the Bayes remap.
    StaircaseSumRemap,
}

impl Method {
    /// Every method, in table order.
    pub const ALL: [Method; 31] = [
        Method::Ubapp,
        Method::UbappUnconstrained,
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
        Method::GeometricEachCount,
        Method::LaplaceEachCount,
        Method::StaircaseEachCount,
        Method::GeometricEachCountRemap,
        Method::LaplaceEachCountRemap,
        Method::StaircaseEachCountRemap,
        Method::LaplaceSum,
        Method::LaplaceSumRemap,
        Method::StaircaseSum,
        Method::StaircaseSumRemap,
    ];

    /// The id (also its serialised form and what the `methods` parameter takes).
    pub fn id(self) -> &'static str {
        match self {
            Method::Ubapp => "ubapp",
            Method::UbappUnconstrained => "ubapp-unconstrained",
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
            Method::GeometricEachCount => "geometric-each-count",
            Method::LaplaceEachCount => "laplace-each-count",
            Method::StaircaseEachCount => "staircase-each-count",
            Method::GeometricEachCountRemap => "geometric-each-count-remap",
            Method::LaplaceEachCountRemap => "laplace-each-count-remap",
            Method::StaircaseEachCountRemap => "staircase-each-count-remap",
            Method::LaplaceSum => "laplace-sum",
            Method::LaplaceSumRemap => "laplace-sum-remap",
            Method::StaircaseSum => "staircase-sum",
            Method::StaircaseSumRemap => "staircase-sum-remap",
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

    /// True for a baseline whose release has mean y/K given the count y, at every y: y/K plus
    /// zero-mean noise, unclamped (`laplace-count`, and the (ε, δ) `gaussian`,
    /// `gaussian-conventional` and `cape`). It meets `[constraints] unbiased` with the default
    /// estimate; clamping, a prior's shrinkage ((y + 1)/(K + 2)) or a remap breaks it.
    pub fn unbiased(self) -> bool {
        matches!(self, Method::LaplaceCount | Method::Gaussian | Method::GaussianConventional | Method::Cape)
    }

    /// True for the methods only the party comparison evaluates (`compare --parties`).
    pub fn party_only(self) -> bool {
        matches!(
            self,
            Method::UbappLocal
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
                | Method::StaircaseSumRemap
        )
    }
}

impl fmt::Display for Method {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.id())
    }
}
