//! The cost matrix c[k,i] = Σ_j π_j q_{θ_j}(y_i) L(θ_j, θ̃_k) (UBaPP: tr(Q diag(π) L P)), or its
//! exact integral form for conjugate models without a parameter grid ([`crate::model::exact`]).

use ndarray::Array2;

use super::{MemoryBudget, SizeError};
use crate::model::{Grid, Loss, Model};

#[cfg(test)]
thread_local! {
    /// How many cost matrices this thread began to build (tests count them per solve).
    static BUILDS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// The cost matrices this thread began to build since the last call.
#[cfg(test)]
pub(crate) fn take_builds() -> usize {
    BUILDS.with(|b| b.replace(0))
}

/// C[i, k] = c[k, i], |Y| × |Θ̃|, computed as the matrix product (Q diag(π)) L.
pub(crate) fn cost_matrix(model: &Model, budget: MemoryBudget) -> Result<Array2<f64>, SizeError> {
    #[cfg(test)]
    BUILDS.with(|b| b.set(b.get() + 1));
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
    if model.loss == Loss::Squared {
        return Ok(squared_costs(&q, &model.theta, &model.outputs));
    }
    let l = model.loss.matrix(&model.theta, &model.outputs);
    Ok(q.dot(&l))
}

/// Squared loss by moments: with w\[i, j\] = π_j q_{θ_j}(y_i), m_i = Σ_j w\[i, j\], the weighted mean
/// μ_i = Σ_j w\[i, j\] θ_j / m_i and spread V_i = Σ_j w\[i, j\] ‖θ_j − μ_i‖²,
///
/// `c[k, i] = Σ_j w[i, j] ‖θ_j − θ̃_k‖² = m_i ‖θ̃_k − μ_i‖² + V_i`,
///
/// O(|Y|·(M + |Θ̃|)·d) instead of the product's O(|Y|·M·|Θ̃|), and every term is non-negative (no
/// cancellation).
fn squared_costs(w: &Array2<f64>, theta: &Grid, outputs: &Grid) -> Array2<f64> {
    let (n_obs, dim) = (w.nrows(), theta.dim());
    let (tp, op) = (theta.points(), outputs.points());
    let mut cost = Array2::zeros((n_obs, outputs.len()));
    let mut mean = vec![0.0; dim];
    for (i, row) in w.rows().into_iter().enumerate() {
        let mass: f64 = row.sum();
        if mass <= 0.0 {
            continue;
        }
        mean.iter_mut().enumerate().for_each(|(d, m)| *m = row.dot(&tp.column(d)) / mass);
        let spread: f64 = row
            .iter()
            .zip(tp.rows())
            .map(|(&wij, t)| wij * t.iter().zip(&mean).map(|(a, b)| (a - b) * (a - b)).sum::<f64>())
            .sum();
        for (k, out) in op.rows().into_iter().enumerate() {
            let d2: f64 = out.iter().zip(&mean).map(|(a, b)| (a - b) * (a - b)).sum();
            cost[[i, k]] = mass * d2 + spread;
        }
    }
    cost
}
