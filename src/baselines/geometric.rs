//! The truncated geometric mechanism on the count followed by the Bayes-optimal remap to the output
//! grid (Ghosh, Roughgarden & Sundararajan, "Universally Utility-Maximizing Privacy Mechanisms",
//! STOC 2009).
//!
//! z = clamp(y + G, 0, K) with G two-sided geometric, Pr(G = g) ∝ α^{|g|}, α = e^{−ε}; so
//! `G[z, y] = (1−α)/(1+α) α^{|z−y|}` for 0 < z < K and `α^{y}/(1+α)`, `α^{K−y}/(1+α)` at the ends.
//! The consumer then releases θ̃_{r(z)} with `r(z) = argmin_k Σ_y c[k, y] G[z, y]`, the posterior
//! expected loss given z under the model's prior (c from [`crate::lp::cost_matrix`]).
//!
//! **Privacy (pure ε).** Moving y by one multiplies each G[z, y] by at most e^ε (for the interior
//! rows α^{|z−y|} changes by a factor α^{±1}; the end rows likewise), and the remap is
//! post-processing. The mechanism is a point of the UBaPP LP's feasible set, so UBaPP's optimum is
//! never worse; GRS's universal optimality is for losses of the count itself, not of θ.
//!
//! A plain O(|Y|² |Θ̃|) evaluator (a fast chain solver lives elsewhere).

use ndarray::Array2;

use crate::eval::{GridMechanism, Privacy, Setting};
use crate::lp::cost_matrix;
use crate::model::Model;
use crate::Result;

/// G[z, y] = Pr(z | y) of the truncated geometric mechanism on {0..K}.
pub(crate) fn truncated_geometric(k: usize, eps: f64) -> Array2<f64> {
    let alpha = (-eps).exp();
    let n = k + 1;
    Array2::from_shape_fn((n, n), |(z, y)| {
        let d = (z as i64 - y as i64).unsigned_abs() as f64;
        if k == 0 {
            1.0
        } else if z == 0 || z == k {
            alpha.powf(d) / (1.0 + alpha)
        } else {
            (1.0 - alpha) / (1.0 + alpha) * alpha.powf(d)
        }
    })
}

/// The geometric mechanism with the Bayes-optimal remap, as a grid mechanism (id `geometric`).
pub(crate) fn geometric(model: &Model, setting: Setting, eps: f64) -> Result<GridMechanism> {
    let c = cost_matrix(model, crate::lp::MemoryBudget::from_env())?; // |Y| × |Θ̃|
    let k = setting.trials as usize;
    let g = truncated_geometric(k, eps);
    let n_out = c.ncols();
    // Remap: for each z the output minimising Σ_y c[y, out] G[z, y].
    let scores = g.dot(&c); // |Y(z)| × |Θ̃|
    let remap: Vec<usize> = scores
        .rows()
        .into_iter()
        .map(|r| (0..n_out).min_by(|&a, &b| r[a].total_cmp(&r[b])).expect("a non-empty output grid"))
        .collect();
    let mut p = Array2::zeros((n_out, k + 1));
    for z in 0..=k {
        for y in 0..=k {
            p[[remap[z], y]] += g[[z, y]];
        }
    }
    Ok(GridMechanism::new("geometric", Privacy::Pure { eps }, p, model.outputs.values(), setting))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truncated_geometric_columns_are_distributions_and_eps_dp() {
        for (k, eps) in [(1usize, 0.3), (5, 1.0), (30, 0.01), (12, 5.0)] {
            let g = truncated_geometric(k, eps);
            for col in g.columns() {
                assert!((col.sum() - 1.0).abs() < 1e-12);
            }
            for y in 1..=k {
                for z in 0..=k {
                    let r = g[[z, y]] / g[[z, y - 1]];
                    assert!(r <= eps.exp() * (1.0 + 1e-12) && r >= (-eps).exp() * (1.0 - 1e-12), "k {k} eps {eps}");
                }
            }
        }
    }
}
