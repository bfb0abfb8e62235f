//! The UBaPP linear program in one canonical form that every backend translates.
//!
//! Variables: x[i·|Θ̃| + k] = P[k, i] = Pr(release θ̃_k | y_i) (column i of P is contiguous).
//!
//! ```text
//! min  Σ_{k,i} c[k,i] P[k,i],   c[k,i] = Σ_j π_j q_{θ_j}(y_i) L(θ_j, θ̃_k)     (UBaPP, tr(Q diag(π) L P))
//! s.t. Σ_k P[k,i] = 1                      rows 0..|Y|            (each column a distribution)
//!      P[k,a] − e^ε P[k,b] ≤ 0             one row per ordered neighbour pair (a, b) per output k
//!      P ≥ 0
//! ```
//!
//! The constraint matrix is assembled directly in compressed sparse column form. The objective
//! handed to solvers is scaled by 1/`scale`, where `scale` is the non-private Bayes risk on the
//! output grid (the optimum as ε → ∞), so the scaled optimum is ≥ 1 and solver tolerances, which
//! are absolute, act relative to the risk rather than to raw costs of order 1e-5.

mod costs;

pub use costs::{cost_matrix, check_dense_size};

use std::sync::Arc;

use ndarray::Array2;
use sprs::CsMat;

use crate::model::Neighbours;

/// One UBaPP LP: costs, constraints and the ε they encode.
#[derive(Debug, Clone)]
pub struct Problem {
    /// The privacy level ε.
    pub eps: f64,
    /// Cost matrix C[i, k] = c[k, i] (|Y| × |Θ̃|), unscaled: Bayes risk contributions.
    pub cost: Arc<Array2<f64>>,
    /// Objective scale: solvers see c / scale.
    pub scale: f64,
    /// The neighbour relation on Y.
    pub neighbours: Neighbours,
    /// Constraint matrix (CSC): |Y| equality rows, then the DP rows.
    pub a: CsMat<f64>,
}

/// Largest ε the LP path accepts: e^30 ≈ 1.1e13 keeps the DP coefficients within the range
/// (1e15) that HiGHS accepts and leaves room for its tolerances.
pub const MAX_LP_EPSILON: f64 = 30.0;

/// Which ordered neighbour pair and output a DP row constrains: `P[k, lhs] ≤ e^ε P[k, rhs]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DpRow {
    /// Output index k.
    pub k: usize,
    /// Observation whose probability is bounded.
    pub lhs: usize,
    /// Observation it is bounded by.
    pub rhs: usize,
}

impl Problem {
    /// Assemble the LP, first refusing (an input error naming the fields) if it and a solver's
    /// working copies would not fit in memory.
    pub fn try_new(cost: Arc<Array2<f64>>, neighbours: Neighbours, eps: f64) -> crate::Result<Problem> {
        if !(eps.is_finite() && eps > 0.0) {
            return Err(crate::Error::input(format!("ε must be a finite number > 0 (got {eps})")));
        }
        if eps > MAX_LP_EPSILON {
            return Err(crate::Error::input(format!(
                "ε = {eps} is too large for the LP path: the DP rows would carry e^ε ≈ {:.1e}, beyond the \
                 {MAX_LP_EPSILON}-nat limit (e^ε ≤ 1e13) that LP solvers represent faithfully",
                eps.exp()
            )));
        }
        let (n_obs, n_out) = cost.dim();
        let n_vars = n_obs as u128 * n_out as u128;
        let n_dp = 2 * neighbours.edge_count() as u128 * n_out as u128;
        let nnz = n_vars + 2 * n_dp;
        // CSC (value + index) plus a factor 3 for the solver's own copies and factorisation.
        check_dense_size(&[], 3 * (nnz * 16 + (n_vars + n_dp + n_obs as u128) * 8 * 4))?;
        Ok(Problem::new(cost, neighbours, eps))
    }

    /// Assemble the LP for `cost` (from [`cost_matrix`]), neighbour relation and ε.
    pub fn new(cost: Arc<Array2<f64>>, neighbours: Neighbours, eps: f64) -> Problem {
        let (n_obs, n_out) = cost.dim();
        assert_eq!(n_obs, neighbours.len(), "cost rows must match |Y|");
        let e_eps = eps.exp();
        let edges: Vec<(usize, usize)> = neighbours.edges().collect();
        // incidence[i] = (edge index, i is the edge's first end), in increasing edge order.
        let mut incidence: Vec<Vec<(usize, bool)>> = vec![Vec::new(); n_obs];
        for (e, &(a, b)) in edges.iter().enumerate() {
            incidence[a].push((e, true));
            incidence[b].push((e, false));
        }
        let n_rows = n_obs + 2 * edges.len() * n_out;
        let n_vars = n_obs * n_out;
        let nnz = n_vars + 4 * edges.len() * n_out;
        let mut indptr = Vec::with_capacity(n_vars + 1);
        let mut indices = Vec::with_capacity(nnz);
        let mut data = Vec::with_capacity(nnz);
        indptr.push(0);
        for (i, inc) in incidence.iter().enumerate() {
            for k in 0..n_out {
                indices.push(i);
                data.push(1.0);
                for &(e, first) in inc {
                    // Row (e, d, k) = n_obs + (2e + d)·|Θ̃| + k; d = 0: P[k,a] ≤ e^ε P[k,b], d = 1: reverse.
                    let r0 = n_obs + 2 * e * n_out + k;
                    let r1 = r0 + n_out;
                    let (c0, c1) = if first { (1.0, -e_eps) } else { (-e_eps, 1.0) };
                    indices.extend([r0, r1]);
                    data.extend([c0, c1]);
                }
                indptr.push(indices.len());
            }
        }
        let a = CsMat::new_csc((n_rows, n_vars), indptr, indices, data);
        let scale = objective_scale(&cost);
        Problem { eps, cost, scale, neighbours, a }
    }

    /// |Y|.
    pub fn n_obs(&self) -> usize {
        self.cost.nrows()
    }

    /// |Θ̃|.
    pub fn n_outputs(&self) -> usize {
        self.cost.ncols()
    }

    /// Number of variables |Θ̃|·|Y|.
    pub fn n_vars(&self) -> usize {
        self.a.cols()
    }

    /// Number of constraint rows.
    pub fn n_rows(&self) -> usize {
        self.a.rows()
    }

    /// Number of equality rows (= |Y|); they come first.
    pub fn n_eq(&self) -> usize {
        self.n_obs()
    }

    /// Variable index of P[k, i].
    pub fn var(&self, k: usize, i: usize) -> usize {
        i * self.n_outputs() + k
    }

    /// The scaled objective vector (c / scale) in variable order.
    pub fn scaled_costs(&self) -> Vec<f64> {
        let s = self.scale;
        let n_out = self.n_outputs();
        let mut c = Vec::with_capacity(self.n_vars());
        for i in 0..self.n_obs() {
            c.extend((0..n_out).map(|k| self.cost[[i, k]] / s));
        }
        c
    }

    /// Row bounds (lower, upper): equality rows are [1, 1], DP rows (−∞, 0].
    pub fn row_bounds(&self, r: usize) -> (f64, f64) {
        if r < self.n_eq() {
            (1.0, 1.0)
        } else {
            (f64::NEG_INFINITY, 0.0)
        }
    }

    /// What DP row `r` (counted from 0 among DP rows) constrains.
    pub fn dp_row(&self, r: usize) -> DpRow {
        let n_out = self.n_outputs();
        let (block, k) = (r / n_out, r % n_out);
        let (e, d) = (block / 2, block % 2);
        let (a, b) = self.neighbours.edges().nth(e).expect("DP row index within range");
        if d == 0 {
            DpRow { k, lhs: a, rhs: b }
        } else {
            DpRow { k, lhs: b, rhs: a }
        }
    }

    /// P (|Θ̃| × |Y|) from a solution vector in variable order.
    pub fn mechanism_matrix(&self, x: &[f64]) -> Array2<f64> {
        let (n_obs, n_out) = (self.n_obs(), self.n_outputs());
        Array2::from_shape_fn((n_out, n_obs), |(k, i)| x[i * n_out + k])
    }

    /// The Bayes risk Σ c[k,i] P[k,i] of a mechanism P (|Θ̃| × |Y|), unscaled.
    pub fn bayes_risk(&self, p: &Array2<f64>) -> f64 {
        (&self.cost.t() * p).sum()
    }

    /// Largest P[k,a] − e^ε P[k,b] over ordered neighbour pairs and outputs (≤ 0 when feasible).
    pub fn max_dp_violation(&self, p: &Array2<f64>) -> f64 {
        max_dp_violation(p, &self.neighbours, self.eps)
    }

    /// Largest |Σ_k P[k,i] − 1| over columns.
    pub fn max_column_error(&self, p: &Array2<f64>) -> f64 {
        p.columns().into_iter().map(|c| (c.sum() - 1.0).abs()).fold(0.0, f64::max)
    }

    /// Lagrangian lower bound on the optimum from DP multipliers μ ≥ 0 (unscaled, one per DP row;
    /// negative entries are clipped to 0). Relaxing the DP rows leaves one simplex per column, so
    ///
    /// `g(μ) = Σ_i min_k ( c[k,i] + Σ_r μ_r A[r, (k,i)] ) ≤ optimum`    (weak duality)
    ///
    /// for every μ ≥ 0: a certificate that does not trust the solver that produced μ.
    pub fn lagrangian_bound(&self, mu: &[f64]) -> f64 {
        let (n_obs, n_out) = (self.n_obs(), self.n_outputs());
        assert_eq!(mu.len(), self.n_rows() - n_obs, "one multiplier per DP row");
        let e_eps = self.eps.exp();
        let mut r = self.cost.t().to_owned(); // r[k, i]
        for (e, (a, b)) in self.neighbours.edges().enumerate() {
            for k in 0..n_out {
                let m0 = mu[2 * e * n_out + k].max(0.0);
                let m1 = mu[(2 * e + 1) * n_out + k].max(0.0);
                r[[k, a]] += m0 - e_eps * m1;
                r[[k, b]] += m1 - e_eps * m0;
            }
        }
        r.columns().into_iter().map(|c| c.iter().copied().fold(f64::INFINITY, f64::min)).sum()
    }
}

/// Largest P[k,a] − e^ε P[k,b] over ordered neighbour pairs (a, b) and outputs k.
pub fn max_dp_violation(p: &Array2<f64>, neighbours: &Neighbours, eps: f64) -> f64 {
    let e_eps = eps.exp();
    let mut worst = f64::NEG_INFINITY;
    for (a, b) in neighbours.edges() {
        for k in 0..p.nrows() {
            let (pa, pb) = (p[[k, a]], p[[k, b]]);
            worst = worst.max(pa - e_eps * pb).max(pb - e_eps * pa);
        }
    }
    worst
}

/// The objective scale: the non-private risk when positive, else the best constant risk, else 1.
pub fn objective_scale(cost: &Array2<f64>) -> f64 {
    [non_private_risk(cost), best_constant_risk(cost)]
        .into_iter()
        .find(|s| s.is_finite() && *s > 0.0)
        .unwrap_or(1.0)
}

/// Risk of the best constant estimator, min_k Σ_i c[k,i]: the UBaPP optimum as ε → 0.
pub fn best_constant_risk(cost: &Array2<f64>) -> f64 {
    cost.columns().into_iter().map(|c| c.sum()).fold(f64::INFINITY, f64::min)
}

/// Non-private Bayes risk on the output grid, Σ_i min_k c[k,i]: the UBaPP optimum as ε → ∞.
pub fn non_private_risk(cost: &Array2<f64>) -> f64 {
    cost.rows().into_iter().map(|r| r.iter().copied().fold(f64::INFINITY, f64::min)).sum()
}
