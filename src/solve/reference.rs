//! The two limits every optimum lies between ([`ReferenceRisks`]): from the squared-loss moments
//! where the chain solver has them, else from a cost matrix.

use std::sync::Arc;

use super::chain;
use super::error::Result;
use crate::lp::{cost_matrix, MemoryBudget, SizeError};
use crate::model::Model;

/// The two limits every optimum lies between, on the model's output grid: ε → 0 (the best
/// constant estimator, the prior alone) and ε → ∞ (the non-private Bayes estimator).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct ReferenceRisks {
    /// Bayes risk of the best constant release: what any ε-DP mechanism approaches as ε → 0.
    pub prior_risk: f64,
    /// Bayes risk of the best non-private estimator on the output grid: the ε → ∞ limit.
    pub non_private_risk: f64,
}

/// [`ReferenceRisks`] of a model: from the squared-loss moments where the chain solver has them
/// (O(|Y| + |Θ̃|)), else from one dense cost matrix (refused beyond `memory`);
/// [`SolvePlan::reference_risks`](super::SolvePlan::reference_risks) reads its plan's matrix instead.
pub fn reference_risks(model: &Model, memory: MemoryBudget) -> Result<ReferenceRisks> {
    reference_risks_with(model, || cost_matrix(model, memory).map(Arc::new))
}

/// [`reference_risks`] on the cost matrix `cost` gives, asked for only where the moments do not
/// answer.
pub(super) fn reference_risks_with(
    model: &Model,
    cost: impl FnOnce() -> std::result::Result<Arc<ndarray::Array2<f64>>, SizeError>,
) -> Result<ReferenceRisks> {
    if let Some(moments) = chain::squared_moments(model) {
        let (prior_risk, non_private_risk) = moments.reference_risks();
        return Ok(ReferenceRisks { prior_risk, non_private_risk });
    }
    let cost = cost()?;
    Ok(ReferenceRisks {
        prior_risk: crate::lp::best_constant_risk(&cost),
        non_private_risk: crate::lp::non_private_risk(&cost),
    })
}
