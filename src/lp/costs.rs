//! The cost matrix c[k,i] = Σ_j π_j q_{θ_j}(y_i) L(θ_j, θ̃_k) (UBaPP: tr(Q diag(π) L P)), or its
//! exact integral form for conjugate models without a parameter grid ([`crate::model::exact`]).

use ndarray::Array2;

use crate::model::Model;
use crate::{bail_input, Result};

/// C[i, k] = c[k, i], |Y| × |Θ̃|, computed as the matrix product (Q diag(π)) L.
pub fn cost_matrix(model: &Model) -> Result<Array2<f64>> {
    let (n_obs, m, n_out) = (model.family.observation_count(), model.theta.len(), model.outputs.len());
    if let Some(exact) = &model.exact {
        // No parameter grid: closed-form integrals against the conjugate prior (see model::exact).
        check_dense_size(&[(n_obs, n_out)], 0)?;
        return Ok(exact.cost_matrix(&model.outputs, &model.loss));
    }
    check_dense_size(&[(n_obs, m), (m, n_out), (n_obs, n_out)], 0)?;
    let mut q = model.family.likelihood_matrix(&model.theta);
    for (mut col, &w) in q.columns_mut().into_iter().zip(&model.prior) {
        col *= w;
    }
    let l = model.loss.matrix(&model.theta, &model.outputs);
    Ok(q.dot(&l))
}

/// Refuse, with a sentence naming the fields to change, to allocate dense matrices of the given
/// shapes plus `extra_bytes` when that would not fit in the memory available.
pub fn check_dense_size(shapes: &[(usize, usize)], extra_bytes: u128) -> Result<()> {
    let need: u128 = shapes.iter().map(|&(r, c)| r as u128 * c as u128 * 8).sum::<u128>() + extra_bytes;
    let have = available_memory_bytes();
    if need > have as u128 {
        bail_input!(
            "the problem needs about {:.1} GiB, more than the {:.1} GiB of memory available; \
             reduce observation.trials, parameter.grid.points or output.grid.points",
            need as f64 / 2f64.powi(30),
            have as f64 / 2f64.powi(30)
        );
    }
    Ok(())
}

/// Memory we allow ourselves: `UBAPP_MEMORY_LIMIT` (bytes) if set, else MemAvailable from
/// /proc/meminfo, else 8 GiB.
pub fn available_memory_bytes() -> u64 {
    if let Some(v) = std::env::var("UBAPP_MEMORY_LIMIT").ok().and_then(|s| s.trim().parse().ok()) {
        return v;
    }
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("MemAvailable:"))
                .and_then(|l| l.split_whitespace().nth(1).and_then(|kb| kb.parse::<u64>().ok()).map(|kb| kb * 1024))
        })
        .unwrap_or(8 << 30)
}
