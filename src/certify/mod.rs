//! From a solver's float P to what may be released: exact privacy checks on integer weights
//! ([`exact`]), the repair and quantisation of a float P into such weights ([`repair`]),
//! [`best_repair`], the one place that prices every repair method and keeps the cheapest, and the
//! LP's Lagrangian bound proven in directed rounding ([`exact_lagrangian_bound`]).
//!
//! This layer knows the neighbour relation and ε/δ only; what "cheapest" means (Bayes or
//! worst-case risk) is the caller's pricing function.

mod constrained;
mod dual;
pub(crate) mod exact;
mod privacy;
mod refine;
pub(crate) mod repair;

use ndarray::Array2;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

pub(crate) use constrained::float_violation;
pub(crate) use constrained::{check_constraints, MAX_EQUALITY_ERROR};
pub use constrained::{ConstraintBreach, ConstraintCertificate};
pub(crate) use dual::{
    bayes_risk_upper, exact_lagrangian_bound, exact_plain_bound, exact_support_bound, non_private_bound,
    objective_upper, TailRows,
};
pub(crate) use exact::PrivacyViolation;
pub use privacy::{Privacy, PrivacyKind};
pub use refine::RefineFailure;
pub(crate) use repair::repair_far;
pub use repair::{RepairMethod, RepairReport};

use crate::model::Neighbours;

/// Column total of the integer weights a solved mechanism is quantised to (2^52: every weight is
/// exactly representable as a double).
pub const DEFAULT_TOTAL: u64 = 1 << 52;

/// Largest column total a mechanism file may use.
pub const MAX_TOTAL: u64 = 1 << 52;

/// What integer weights certify, re-derived from them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PrivacyCertificate {
    /// Target ε.
    pub eps: f64,
    /// Target δ (0: pure ε).
    pub delta: f64,
    /// Pure ε: the largest log-ratio, rounded up (≤ eps). δ > 0: eps.
    pub certified_eps: f64,
    /// Largest δ spent at eps over ordered neighbour pairs, rounded up (≤ delta; 0 for pure ε).
    pub certified_delta: f64,
}

/// One repair method's outcome, as recorded in an artifact's provenance.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RepairCandidate {
    /// The method.
    pub method: RepairMethod,
    /// The objective (Bayes risk for the Bayes program) of its certified mechanism, or `None` if
    /// it failed.
    pub bayes_risk: Option<f64>,
}

/// A float mechanism repaired, quantised and certified exactly: what would be released.
#[derive(Debug, Clone)]
pub struct Repaired {
    /// Integer weights `columns[i][k]`, each column summing to [`Repaired::total`].
    pub columns: Vec<Vec<u64>>,
    /// The column total.
    pub total: u64,
    /// What the weights certify.
    pub certificate: PrivacyCertificate,
    /// What the kept repair did.
    pub report: RepairReport,
    /// The pricing function's value at the released probabilities.
    pub objective: f64,
    /// Every method tried, with its objective.
    pub candidates: Vec<RepairCandidate>,
    /// What the weights were checked to carry of the model's `[constraints]` (`None`: none).
    pub constraints: Option<ConstraintCertificate>,
}

impl Repaired {
    /// Weights with column total [`DEFAULT_TOTAL`] from one repair, priced with `price` on the
    /// released probabilities (`candidates` left for the caller).
    fn priced(
        (columns, certificate, report): (Vec<Vec<u64>>, PrivacyCertificate, RepairReport),
        constraints: Option<ConstraintCertificate>,
        price: &dyn Fn(&Array2<f64>) -> f64,
    ) -> Repaired {
        let mut release = Repaired {
            columns,
            total: DEFAULT_TOTAL,
            certificate,
            report,
            objective: 0.0,
            candidates: vec![],
            constraints,
        };
        release.objective = price(&release.probabilities());
        release
    }

    /// The released probabilities `w[k,i] / total` as a |Θ̃| × |Y| matrix.
    pub fn probabilities(&self) -> Array2<f64> {
        let n_out = self.columns.first().map_or(0, Vec::len);
        let t = self.total as f64;
        Array2::from_shape_fn((n_out, self.columns.len()), |(k, i)| self.columns[i][k] as f64 / t)
    }
}

/// Why a float P could not be turned into certified weights.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum CertifyError {
    /// P's shape does not match |Θ̃| × |Y|.
    #[error("P is {found:?} but the model needs |Θ̃| × |Y| = {expected:?}")]
    Shape {
        /// P's shape.
        found: (usize, usize),
        /// The model's.
        expected: (usize, usize),
    },
    /// An argument out of range.
    #[error("{name}: {problem}")]
    InvalidArgument {
        /// The argument.
        name: &'static str,
        /// What is wrong.
        problem: String,
    },
    /// P holds NaN or ±∞.
    #[error("P contains a non-finite entry ({value})")]
    NonFinite {
        /// The entry.
        value: f64,
    },
    /// P is further from a mechanism than repair may bridge.
    #[error("P is not a near-feasible mechanism: its {measure} is {value:.3e} (repair accepts up to {limit:e})")]
    TooFarFromFeasible {
        /// What was measured.
        measure: &'static str,
        /// Its value.
        value: f64,
        /// The largest accepted.
        limit: f64,
    },
    /// A repair method used for the wrong kind of program.
    #[error("repair method {method:?} does not apply at δ = {delta}")]
    MethodMismatch {
        /// The method.
        method: RepairMethod,
        /// The program's δ.
        delta: f64,
    },
    /// Trimming negligible rows left a column with no mass.
    #[error("trimming tiny rows emptied a column")]
    TrimEmptiedColumn,
    /// The block refinement did not apply (the other repair methods still do).
    #[error("the block refinement did not apply: {failure}")]
    RefineFailed {
        /// Why.
        failure: RefineFailure,
    },
    /// Quantisation never passed the exact check.
    #[error(
        "could not quantise P into weights certified at ε = {eps}, δ = {delta} with total {total} (margins up to {margin:.1e})"
    )]
    QuantisationFailed {
        /// Target ε.
        eps: f64,
        /// Target δ.
        delta: f64,
        /// Column total.
        total: u64,
        /// The last margin tried.
        margin: f64,
    },
    /// The column-independent mechanism failed the δ check (cannot happen with exact arithmetic).
    #[error("the constant mechanism failed the δ check: {violation:?}")]
    ConstantMechanismFailed {
        /// What the exact check found.
        violation: PrivacyViolation,
    },
    /// Every repair method failed; the last error is kept.
    #[error("no repair method certified P: {last}")]
    NoRepair {
        /// The last method's error.
        last: Box<CertifyError>,
    },
}

/// Copies of P (floats, or weights of the same size) a repair method holds at once.
const COPIES_A_REPAIR: usize = 3;
/// Bytes the repair methods' copies of P may take together for [`best_repair`] to run them side
/// by side (else one after another).
const SIDE_BY_SIDE_BYTES: usize = 64 << 20;

/// Repair and quantise `p` (|Θ̃| × |Y|) with every method for `delta`
/// ([`RepairMethod::for_delta`]) into weights with column total [`DEFAULT_TOTAL`], price each
/// with `price` (on the released probabilities) and keep the cheapest.
pub(crate) fn best_repair(
    neighbours: &Neighbours,
    eps: f64,
    delta: f64,
    p: &Array2<f64>,
    price: &(dyn Fn(&Array2<f64>) -> f64 + Sync),
) -> Result<Repaired, CertifyError> {
    // The methods side by side where their copies of P are small (each makes a few), then
    // weighed in their order.
    let methods = RepairMethod::for_delta(delta);
    let side_by_side = methods.len() * p.len() * 8 * COPIES_A_REPAIR <= SIDE_BY_SIDE_BYTES;
    let attempts: Vec<_> = methods
        .par_iter()
        .with_min_len(if side_by_side { 1 } else { methods.len() })
        .map(|&method| {
            let repaired = repair::repair_and_quantise_for(neighbours, eps, delta, p, DEFAULT_TOTAL, method);
            (method, repaired.map(|repaired| Repaired::priced(repaired, None, price)))
        })
        .collect();
    let mut best: Option<Repaired> = None;
    let mut last_err = None;
    let mut candidates = Vec::new();
    for (method, attempt) in attempts {
        match attempt {
            Ok(release) => {
                candidates.push(RepairCandidate { method, bayes_risk: Some(release.objective) });
                if best.as_ref().is_none_or(|b| release.objective < b.objective) {
                    best = Some(release);
                }
            }
            Err(e) => {
                candidates.push(RepairCandidate { method, bayes_risk: None });
                last_err = Some(e);
            }
        }
    }
    match best {
        Some(mut release) => {
            release.candidates = candidates;
            Ok(release)
        }
        None => Err(CertifyError::NoRepair {
            last: Box::new(last_err.unwrap_or(CertifyError::InvalidArgument {
                name: "delta",
                problem: format!("no repair method applies at δ = {delta}"),
            })),
        }),
    }
}

/// [`best_repair`] for a model with `[constraints]` (pure ε): the one repair that keeps them
/// (`constrained::repair_constrained`), priced with `price`.
pub(crate) fn best_repair_constrained(
    neighbours: &Neighbours,
    eps: f64,
    constraints: &crate::model::Constraints,
    p: &Array2<f64>,
    price: &dyn Fn(&Array2<f64>) -> f64,
) -> Result<Repaired, CertifyError> {
    let (columns, certificate, report, carried) =
        constrained::repair_constrained(neighbours, eps, constraints, p, DEFAULT_TOTAL)?;
    let mut release = Repaired::priced((columns, certificate, report), Some(carried), price);
    release.candidates = vec![RepairCandidate { method: release.report.method, bayes_risk: Some(release.objective) }];
    Ok(release)
}
