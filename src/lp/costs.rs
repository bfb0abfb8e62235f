//! The cost matrix c[k,i] = Σ_j π_j q_{θ_j}(y_i) L(θ_j, θ̃_k) (UBaPP: tr(Q diag(π) L P)), or its
//! exact integral form for conjugate models without a parameter grid ([`crate::model::exact`]).

use ndarray::Array2;

use super::{MemoryBudget, SizeError};
use crate::model::Model;

/// C[i, k] = c[k, i], |Y| × |Θ̃|, computed as the matrix product (Q diag(π)) L.
pub(crate) fn cost_matrix(model: &Model, budget: MemoryBudget) -> Result<Array2<f64>, SizeError> {
    let (n_obs, m, n_out) = (model.family.observation_count(), model.theta.len(), model.outputs.len());
    if let Some(exact) = &model.exact {
        // No parameter grid: closed-form integrals against the conjugate prior (see model::exact).
        budget.check_dense(&[(n_obs, n_out)], 0)?;
        return Ok(exact.cost_matrix(&model.outputs, &model.loss));
    }
    budget.check_dense(&[(n_obs, m), (m, n_out), (n_obs, n_out)], 0)?;
    let mut q = model.family.likelihood_matrix(&model.theta);
    for (mut col, &w) in q.columns_mut().into_iter().zip(&model.prior) {
        col *= w;
    }
    let l = model.loss.matrix(&model.theta, &model.outputs);
    Ok(q.dot(&l))
}
