//! The UBaPP linear program in one canonical form that every backend translates.
//!
//! Variables: x\[i·|Θ̃| + k\] = P\[k, i\] = Pr(release θ̃_k | y_i) (column i of P is contiguous).
//!
//! ```text
//! min  Σ_{k,i} c[k,i] P[k,i],   c[k,i] = Σ_j π_j q_{θ_j}(y_i) L(θ_j, θ̃_k)     (UBaPP, tr(Q diag(π) L P))
//! s.t. Σ_k P[k,i] = 1                      rows 0..|Y|            (each column a distribution)
//!      P[k,a] − e^ε P[k,b] ≤ 0             one row per ordered neighbour pair (a, b) per output k
//!      P ≥ 0
//! ```
//!
//! Two optional extensions (a [`Program`]) append variables and rows after these, so the layout
//! above is unchanged:
//!
//! ```text
//! (ε, δ):   s[r] ≥ 0 per DP row r, entering it as  P[k,a] − e^ε P[k,b] − s[r] ≤ 0,
//!           and one row per ordered pair (a, b):   Σ_k s[(a,b),k] ≤ δ
//!           (so Σ_k max(0, P[k,a] − e^ε P[k,b]) ≤ δ; δ = 0 forces s = 0: pure ε)
//! minimax:  objective τ (free) and one row per θ_j:  Σ_{k,i} (q_{θ_j}(y_i) L(θ_j, θ̃_k)/scale) P[k,i] − τ ≤ 0
//!           (the Bayes costs then only serve for reports)
//! ```
//!
//! Variables: P (|Y|·|Θ̃|), then s (if δ), then τ (if minimax). Rows: equalities, DP rows, δ rows,
//! minimax rows. [`Problem::col_bounds`] gives each variable's bounds (τ is free).
//!
//! The constraint matrix is assembled directly in compressed sparse column form. The objective
//! handed to solvers is scaled by 1/`scale`, where `scale` is the non-private Bayes risk on the
//! output grid (the optimum as ε → ∞), so the scaled optimum is ≥ 1 and solver tolerances, which
//! are absolute, act relative to the risk rather than to raw costs of order 1e-5.

mod constraints;
mod costs;
mod incidence;
mod support;
// The orbit LP is solved by the HiGHS backend only.
#[cfg_attr(not(feature = "highs"), allow(dead_code))]
mod symmetry;

pub use crate::guard::{MemoryBudget, SizeError};

/// Why the LP cannot be assembled: an ε it cannot represent, or a size beyond the memory budget.
/// Both are the caller's input to fix.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LpError {
    /// ε outside (0, 30] (e^ε beyond 1e13 is not represented faithfully by LP solvers).
    #[error("ε {problem}")]
    Epsilon {
        /// What is wrong, phrased to follow "ε".
        problem: String,
    },
    /// The LP and a solver's copies would not fit in memory.
    #[error(transparent)]
    TooLarge(#[from] SizeError),
}
pub(crate) use crate::model::size_fields;
pub(crate) use constraints::{constraint_row_count, constraint_rows, LpConstraints};
pub(crate) use costs::cost_matrix;
#[cfg(test)]
pub(crate) use costs::take_builds;
pub(crate) use incidence::Incidence;
pub(crate) use support::{non_private_rule, rule_change_distance, Support};
pub(crate) use symmetry::Symmetry;

use std::sync::Arc;

use ndarray::Array2;
use sprs::CsMat;

use crate::model::Neighbours;

/// One UBaPP LP: costs, constraints and the ε they encode.
#[derive(Debug, Clone)]
pub(crate) struct Problem {
    /// The privacy level ε.
    pub eps: f64,
    /// Cost matrix C\[i, k\] = c\[k, i\] (|Y| × |Θ̃|), unscaled: Bayes risk contributions.
    pub cost: Arc<Array2<f64>>,
    /// Objective scale: solvers see c / scale.
    pub scale: f64,
    /// The neighbour relation on Y.
    pub neighbours: Neighbours,
    /// Constraint matrix (CSC): |Y| equality rows, then the DP rows, then the program's extra rows.
    pub a: CsMat<f64>,
    /// Extensions beyond the Bayes, pure-ε program (none by default).
    pub program: Program,
    /// Coordinate permutations that leave the LP unchanged, when the caller looked for them:
    /// backends that can may solve the orbit LP instead (see [`Symmetry`]).
    pub symmetry: Option<Arc<Symmetry>>,
}

/// Extensions of the UBaPP LP: (ε, δ)-DP, the minimax objective and `[constraints]`.
#[derive(Debug, Clone, Default)]
pub(crate) struct Program {
    /// `[constraints]`' rows (each `Σ a·P ≤ b`), after every other row; `None`: no constraints.
    pub constraints: Option<Arc<LpConstraints>>,
    /// `Some(δ)`: the (ε, δ) program with auxiliary variables (`Some(0.0)` is pure ε in that
    /// formulation); `None`: the plain pure-ε rows.
    pub delta: Option<f64>,
    /// `Some(W)`: minimise the worst-case risk max_j Σ_{k,i} W\[j, i·|Θ̃|+k\] P\[k,i\] (W from
    /// [`crate::model::Model::risk_matrix`]); `None`: minimise the Bayes risk.
    pub risk_rows: Option<Arc<Array2<f64>>>,
}

impl Program {
    /// The program a model asks for: δ > 0 adds the (ε, δ) rows, `objective = "minimax"` the epigraph.
    pub(crate) fn for_model(model: &crate::model::Model) -> Program {
        // Only minimax programs pay for the dense risk matrix; asking whether a program is plain
        // goes through `Model::is_plain_program` and builds nothing.
        Program {
            delta: (model.delta > 0.0).then_some(model.delta),
            risk_rows: (model.objective == crate::model::Objective::Minimax).then(|| Arc::new(model.risk_matrix())),
            constraints: (!model.constraints().is_empty()).then(|| {
                let (n_obs, n_out) = (model.family().observation_count(), model.outputs().len());
                Arc::new(LpConstraints {
                    rows: constraint_rows(model.constraints(), n_obs, n_out),
                    model: model.constraints().clone(),
                })
            }),
        }
    }

    /// True for the paper's program (Bayes risk, pure ε, no extra variables, no constraints).
    pub(crate) fn is_plain(&self) -> bool {
        self.delta.is_none() && self.risk_rows.is_none() && self.constraints.is_none()
    }
}

/// Largest ε the LP path accepts: e^30 ≈ 1.1e13 keeps the DP coefficients within the range
/// (1e15) that HiGHS accepts and leaves room for its tolerances.
pub(crate) const MAX_LP_EPSILON: f64 = 30.0;

/// Which ordered neighbour pair and output a DP row constrains: `P[k, lhs] ≤ e^ε P[k, rhs]`.
#[cfg(test)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct DpRow {
    /// Output index k.
    pub k: usize,
    /// Observation whose probability is bounded.
    pub lhs: usize,
    /// Observation it is bounded by.
    pub rhs: usize,
}

/// An ε the LP path can take: finite, > 0 and at most [`MAX_LP_EPSILON`] (an argument error
/// otherwise, checked before any LP is built).
pub(crate) fn check_lp_eps(eps: f64) -> Result<(), LpError> {
    if !(eps.is_finite() && eps > 0.0) {
        return Err(LpError::Epsilon { problem: format!("must be a finite number > 0 (got {eps})") });
    }
    if eps > MAX_LP_EPSILON {
        return Err(LpError::Epsilon {
            problem: format!(
                "= {eps} is too large for the LP path: the DP rows would carry e^ε ≈ {:.1e}, beyond the \
                 {MAX_LP_EPSILON}-nat limit (e^ε ≤ 1e13) that LP solvers represent faithfully",
                eps.exp()
            ),
        });
    }
    Ok(())
}

impl Problem {
    /// Assemble the LP, first refusing (an input error naming the fields) if it and a solver's
    /// working copies would not fit in memory.
    pub(crate) fn try_new(
        cost: Arc<Array2<f64>>,
        neighbours: Neighbours,
        eps: f64,
        budget: MemoryBudget,
    ) -> Result<Problem, LpError> {
        Problem::try_with_program(cost, neighbours, eps, Program::default(), budget)
    }

    /// [`Problem::try_new`] with a [`Program`] (δ and/or minimax). (The ε check is
    /// [`check_lp_eps`].)
    pub(crate) fn try_with_program(
        cost: Arc<Array2<f64>>,
        neighbours: Neighbours,
        eps: f64,
        program: Program,
        budget: MemoryBudget,
    ) -> Result<Problem, LpError> {
        check_lp_eps(eps)?;
        let (n_obs, n_out) = cost.dim();
        let n_vars = n_obs as u128 * n_out as u128;
        let n_dp = 2 * neighbours.edge_count() as u128 * n_out as u128;
        let mut nnz = n_vars + 2 * n_dp;
        if program.delta.is_some() {
            nnz += 2 * n_dp;
        }
        if let Some(w) = &program.risk_rows {
            nnz += w.len() as u128 + w.nrows() as u128;
        }
        if let Some(rows) = &program.constraints {
            nnz += rows.rows.iter().map(|r| r.terms.len() as u128 + 1).sum::<u128>();
        }
        // CSC (value + index) plus a factor 3 for the solver's own copies and factorisation.
        budget.check_dense(&[], 3 * (nnz * 16 + (2 * n_vars + 2 * n_dp + n_obs as u128) * 8 * 4))?;
        Ok(Problem::with_program(cost, neighbours, eps, program))
    }

    /// Assemble the LP for `cost` (from [`cost_matrix`]), neighbour relation and ε.
    pub(crate) fn new(cost: Arc<Array2<f64>>, neighbours: Neighbours, eps: f64) -> Problem {
        Problem::with_program(cost, neighbours, eps, Program::default())
    }

    /// Assemble the LP with a [`Program`] (δ and/or minimax); see the module docs for the layout.
    pub(crate) fn with_program(cost: Arc<Array2<f64>>, neighbours: Neighbours, eps: f64, program: Program) -> Problem {
        let (n_obs, n_out) = cost.dim();
        if let Some(w) = &program.risk_rows {
            assert_eq!(w.ncols(), n_obs * n_out, "risk rows must have one entry per P[k,i]");
        }
        assert_eq!(n_obs, neighbours.len(), "cost rows must match |Y|");
        let e_eps = eps.exp();
        let edges: Vec<(usize, usize)> = neighbours.edges().collect();
        // incidence[i] = (edge index, i is the edge's first end), in increasing edge order.
        let mut incidence: Vec<Vec<(usize, bool)>> = vec![Vec::new(); n_obs];
        for (e, &(a, b)) in edges.iter().enumerate() {
            incidence[a].push((e, true));
            incidence[b].push((e, false));
        }
        let n_dp = 2 * edges.len() * n_out;
        let n_delta_rows = if program.delta.is_some() { 2 * edges.len() } else { 0 };
        let n_mm = program.risk_rows.as_ref().map_or(0, |w| w.nrows());
        let con_row0 = n_obs + n_dp + n_delta_rows + n_mm;
        let no_rows = Vec::new();
        let con_rows = program.constraints.as_deref().map_or(&no_rows, |c| &c.rows);
        let n_rows = con_row0 + con_rows.len();
        let n_p = n_obs * n_out;
        let n_vars = n_p + if program.delta.is_some() { n_dp } else { 0 } + usize::from(n_mm > 0);
        let nnz = n_p + 4 * edges.len() * n_out;
        let scale = objective_scale(&cost);
        let mm_row0 = n_obs + n_dp + n_delta_rows;
        // Each P variable's constraint rows, in increasing row order.
        let mut con_of_var: Vec<Vec<(usize, f64)>> = vec![Vec::new(); if con_rows.is_empty() { 0 } else { n_p }];
        for (r, row) in con_rows.iter().enumerate() {
            for &(v, a) in &row.terms {
                con_of_var[v].push((con_row0 + r, a));
            }
        }
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
                if let Some(w) = &program.risk_rows {
                    // Minimax row j: R(θ_j)/scale − τ ≤ 0 (rows after all others: indices stay sorted).
                    let v = i * n_out + k;
                    for j in 0..n_mm {
                        let x = w[[j, v]];
                        if x != 0.0 {
                            indices.push(mm_row0 + j);
                            data.push(x / scale);
                        }
                    }
                }
                if let Some(entries) = con_of_var.get(i * n_out + k) {
                    for &(r, a) in entries {
                        indices.push(r);
                        data.push(a);
                    }
                }
                indptr.push(indices.len());
            }
        }
        if program.delta.is_some() {
            // s for DP row d enters that row with −1 and its pair's δ row (block d / |Θ̃|) with +1.
            for d in 0..n_dp {
                indices.extend([n_obs + d, n_obs + n_dp + d / n_out]);
                data.extend([-1.0, 1.0]);
                indptr.push(indices.len());
            }
        }
        if n_mm > 0 {
            for j in 0..n_mm {
                indices.push(mm_row0 + j);
                data.push(-1.0);
            }
            indptr.push(indices.len());
        }
        let a = CsMat::new_csc((n_rows, n_vars), indptr, indices, data);
        Problem { eps, cost, scale, neighbours, a, program, symmetry: None }
    }

    /// The plain LP over the outputs `keep` only (indices into Θ̃, increasing): the rows of P for
    /// the other outputs fixed at 0. Keeps this LP's objective scale, so the multipliers of the
    /// two LPs are in the same units (see [`Restriction`]).
    pub(crate) fn restricted(&self, keep: &[usize]) -> (Problem, Restriction) {
        debug_assert!(self.program.is_plain(), "only the plain program is restricted");
        debug_assert!(keep.windows(2).all(|w| w[0] < w[1]), "outputs in increasing order");
        let cost = self.cost.select(ndarray::Axis(1), keep);
        let mut sub = Problem::new(Arc::new(cost), self.neighbours.clone(), self.eps);
        sub.scale = self.scale;
        let restriction = Restriction {
            keep: keep.to_vec(),
            n_out: self.n_outputs(),
            n_obs: self.n_obs(),
            n_edges: self.neighbours.edge_count(),
        };
        (sub, restriction)
    }

    /// Column prices ν_i = min over k ∈ `outputs` of the reduced cost
    /// c\[k,i\]/scale + Σ_r μ_r A\[r, (k,i)\] (plain program; μ of every DP row in scaled units,
    /// negative entries read as 0): the multipliers of the column sums that go with μ.
    pub(crate) fn column_prices(&self, mu: &[f64], outputs: &[usize]) -> Vec<f64> {
        let mut nu = vec![f64::INFINITY; self.n_obs()];
        for reduced in self.reduced_costs(mu, outputs) {
            for (n, r) in nu.iter_mut().zip(reduced) {
                *n = n.min(r);
            }
        }
        nu
    }

    /// Each of `outputs`' reduced costs over Y, c\[k,i\]/scale + Σ_r μ_r A\[r, (k,i)\] (plain
    /// program; μ of every DP row in scaled units, negative entries read as 0), in that order.
    pub(crate) fn reduced_costs(&self, mu: &[f64], outputs: &[usize]) -> Vec<Vec<f64>> {
        let (n_obs, n_out, e_eps) = (self.n_obs(), self.n_outputs(), self.eps.exp());
        let edges: Vec<(usize, usize)> = self.neighbours.edges().collect();
        outputs
            .iter()
            .map(|&k| {
                let mut reduced: Vec<f64> = (0..n_obs).map(|i| self.cost[[i, k]] / self.scale).collect();
                add_dp_terms(reduced.as_mut_slice(), &edges, mu, k, n_out, e_eps);
                reduced
            })
            .collect()
    }

    /// Number of P variables |Y|·|Θ̃| (they come first).
    pub(crate) fn n_p(&self) -> usize {
        self.n_obs() * self.n_outputs()
    }

    /// Number of DP rows 2·|edges|·|Θ̃| (they follow the equality rows).
    pub(crate) fn n_dp_rows(&self) -> usize {
        2 * self.neighbours.edge_count() * self.n_outputs()
    }

    /// Index of the first δ row (one per ordered neighbour pair), if the program has δ.
    fn delta_row0(&self) -> usize {
        self.n_eq() + self.n_dp_rows()
    }

    /// Index of the first `[constraints]` row (they come last).
    pub(crate) fn constraint_row0(&self) -> usize {
        self.n_rows() - self.program.constraints.as_ref().map_or(0, |c| c.rows.len())
    }

    /// Number of minimax rows (one per parameter grid point; 0 for the Bayes program).
    pub(crate) fn n_minimax_rows(&self) -> usize {
        self.program.risk_rows.as_ref().map_or(0, |w| w.nrows())
    }

    /// Bounds (lower, upper) of variable `j`: P and s are ≥ 0, the epigraph variable τ is free.
    pub(crate) fn col_bounds(&self, j: usize) -> (f64, f64) {
        if self.n_minimax_rows() > 0 && j == self.n_vars() - 1 {
            (f64::NEG_INFINITY, f64::INFINITY)
        } else {
            (0.0, f64::INFINITY)
        }
    }

    /// Per-grid-point risks R(θ_j) = Σ_{k,i} q_{θ_j}(y_i) L(θ_j, θ̃_k) P\[k,i\] of P (minimax programs only).
    pub(crate) fn grid_risks(&self, p: &Array2<f64>) -> Option<Vec<f64>> {
        let w = self.program.risk_rows.as_ref()?;
        let flat: Vec<f64> = (0..self.n_obs()).flat_map(|i| p.column(i).to_vec()).collect();
        Some(w.rows().into_iter().map(|r| r.iter().zip(&flat).map(|(a, b)| a * b).sum()).collect())
    }

    /// The LP's objective at P in unscaled units: the Bayes risk, or the worst-case grid risk for
    /// a minimax program.
    pub(crate) fn objective_value(&self, p: &Array2<f64>) -> f64 {
        match self.grid_risks(p) {
            Some(r) => r.into_iter().fold(f64::NEG_INFINITY, f64::max),
            None => self.bayes_risk(p),
        }
    }

    /// δ actually spent by P: max over ordered neighbour pairs (a, b) of Σ_k max(0, P\[k,a\] − e^ε P\[k,b\])
    /// (0 for a pure ε-DP mechanism).
    pub(crate) fn delta_spent(&self, p: &Array2<f64>) -> f64 {
        delta_spent(p, &self.neighbours, self.eps)
    }

    /// |Y|.
    pub(crate) fn n_obs(&self) -> usize {
        self.cost.nrows()
    }

    /// |Θ̃|.
    pub(crate) fn n_outputs(&self) -> usize {
        self.cost.ncols()
    }

    /// Number of variables |Θ̃|·|Y|.
    pub(crate) fn n_vars(&self) -> usize {
        self.a.cols()
    }

    /// Number of constraint rows.
    pub(crate) fn n_rows(&self) -> usize {
        self.a.rows()
    }

    /// Number of equality rows (= |Y|); they come first.
    pub(crate) fn n_eq(&self) -> usize {
        self.n_obs()
    }

    /// Variable index of P\[k, i\].
    pub(crate) fn var(&self, k: usize, i: usize) -> usize {
        i * self.n_outputs() + k
    }

    /// The scaled objective vector in variable order: c / scale on P (Bayes), or 1 on τ and 0
    /// elsewhere (minimax); 0 on the δ program's auxiliary variables.
    pub(crate) fn scaled_costs(&self) -> Vec<f64> {
        let mut c = Vec::with_capacity(self.n_vars());
        if self.n_minimax_rows() > 0 {
            c.resize(self.n_vars() - 1, 0.0);
            c.push(1.0);
            return c;
        }
        let s = self.scale;
        let n_out = self.n_outputs();
        for i in 0..self.n_obs() {
            c.extend((0..n_out).map(|k| self.cost[[i, k]] / s));
        }
        c.resize(self.n_vars(), 0.0);
        c
    }

    /// Row bounds (lower, upper): equality rows are \[1, 1\], DP and minimax rows (−∞, 0], δ rows (−∞, δ].
    pub(crate) fn row_bounds(&self, r: usize) -> (f64, f64) {
        if let Some(rows) = self.program.constraints.as_ref().filter(|_| r >= self.constraint_row0()) {
            (f64::NEG_INFINITY, rows.rows[r - self.constraint_row0()].rhs)
        } else if r < self.n_eq() {
            (1.0, 1.0)
        } else if let Some(delta) = self
            .program
            .delta
            .filter(|_| r >= self.delta_row0() && r < self.delta_row0() + 2 * self.neighbours.edge_count())
        {
            (f64::NEG_INFINITY, delta)
        } else {
            (f64::NEG_INFINITY, 0.0)
        }
    }

    /// What DP row `r` (counted from 0 among DP rows) constrains.
    #[cfg(test)]
    pub(crate) fn dp_row(&self, r: usize) -> DpRow {
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
    pub(crate) fn mechanism_matrix(&self, x: &[f64]) -> Array2<f64> {
        let (n_obs, n_out) = (self.n_obs(), self.n_outputs());
        Array2::from_shape_fn((n_out, n_obs), |(k, i)| x[i * n_out + k])
    }

    /// The Bayes risk Σ c\[k,i\] P\[k,i\] of a mechanism P (|Θ̃| × |Y|), unscaled.
    pub(crate) fn bayes_risk(&self, p: &Array2<f64>) -> f64 {
        (&self.cost.t() * p).sum()
    }

    /// Largest P\[k,a\] − e^ε P\[k,b\] over ordered neighbour pairs and outputs (≤ 0 when feasible).
    #[cfg(test)]
    pub(crate) fn max_dp_violation(&self, p: &Array2<f64>) -> f64 {
        max_dp_violation(p, &self.neighbours, self.eps)
    }

    /// Largest |Σ_k P\[k,i\] − 1| over columns.
    #[cfg(test)]
    pub(crate) fn max_column_error(&self, p: &Array2<f64>) -> f64 {
        max_column_error(p)
    }

    /// Lagrangian lower bound on the optimum from multipliers of every non-equality row (unscaled;
    /// negative entries are clipped to 0). Relaxing the DP rows leaves one simplex per column, so
    ///
    /// `g(μ) = Σ_i min_k ( c[k,i] + Σ_r μ_r A[r, (k,i)] ) ≤ optimum`    (weak duality)
    ///
    /// for every μ ≥ 0: a certificate that does not trust the solver that produced μ. This is its
    /// float form, the reference the tests hold `certify::exact_lagrangian_bound` (the same sum in
    /// directed rounding, which every solve reports) to. The program's
    /// extensions keep it valid:
    /// - (ε, δ): with multipliers ν_p of the δ rows raised to ν_p' = max(ν_p, max_k μ_(p,k)) the
    ///   auxiliary variables' reduced costs are ≥ 0, so s = 0 minimises and g = (the above) − δ Σ_p ν_p';
    /// - minimax: the multipliers w of the minimax rows, normalised to a distribution (uniform if
    ///   all vanish), replace π: `c_w[k,i] = Σ_j w_j W[j, (k,i)]` — the Bayes LP under the prior w,
    ///   whose optimum never exceeds the minimax value.
    #[cfg(test)]
    pub(crate) fn lagrangian_bound(&self, mu: &[f64]) -> f64 {
        let (n_obs, n_out) = (self.n_obs(), self.n_outputs());
        assert_eq!(mu.len(), self.n_rows() - n_obs, "one multiplier per non-equality row");
        let e_eps = self.eps.exp();
        let mut r = match &self.program.risk_rows {
            None => self.cost.t().to_owned(), // r[k, i]
            Some(w) => {
                let off = self.constraint_row0() - n_obs - w.nrows();
                let mut wts: Vec<f64> = mu[off..].iter().map(|m| m.max(0.0)).collect();
                let total: f64 = wts.iter().sum();
                if total > 0.0 && total.is_finite() {
                    wts.iter_mut().for_each(|x| *x /= total);
                } else {
                    wts.fill(1.0 / w.nrows() as f64);
                }
                let mut r = Array2::zeros((n_out, n_obs));
                for (j, &wj) in wts.iter().enumerate() {
                    if wj == 0.0 {
                        continue;
                    }
                    for i in 0..n_obs {
                        for k in 0..n_out {
                            r[[k, i]] += wj * w[[j, i * n_out + k]];
                        }
                    }
                }
                r
            }
        };
        let edges: Vec<(usize, usize)> = self.neighbours.edges().collect();
        for (k, mut row) in r.rows_mut().into_iter().enumerate() {
            add_dp_terms(&mut row, &edges, mu, k, n_out, e_eps);
        }
        let mut constant = 0.0;
        if let Some(rows) = &self.program.constraints {
            // Σ_r μ_r (A_r P − b_r): the rows' terms join the reduced costs, −μ_r b_r the constant.
            let off = self.constraint_row0() - n_obs;
            for (row, &m) in rows.rows.iter().zip(&mu[off..]) {
                let m = m.max(0.0);
                for &(v, a) in &row.terms {
                    r[[v % n_out, v / n_out]] += m * a;
                }
                constant -= m * row.rhs;
            }
        }
        let mut bound: f64 =
            constant + r.columns().into_iter().map(|c| c.iter().copied().fold(f64::INFINITY, f64::min)).sum::<f64>();
        if let Some(delta) = self.program.delta {
            let n_dp = self.n_dp_rows();
            for p in 0..2 * self.neighbours.edge_count() {
                let nu = mu[n_dp + p].max(0.0);
                let top = (0..n_out).map(|k| mu[p * n_out + k].max(0.0)).fold(nu, f64::max);
                bound -= delta * top;
            }
        }
        bound
    }
}

/// Add to `row` (output k's costs over Y) the DP rows' terms Σ_r μ_r A\[r, (k, i)\]: for the edge
/// (a, b), μ₀ (P\[k,a\] − e^ε P\[k,b\] ≤ 0) and μ₁ (the reverse), negative multipliers read as 0.
fn add_dp_terms<R>(row: &mut R, edges: &[(usize, usize)], mu: &[f64], k: usize, n_out: usize, e_eps: f64)
where
    R: std::ops::IndexMut<usize, Output = f64> + ?Sized,
{
    for (e, &(a, b)) in edges.iter().enumerate() {
        let m0 = mu[2 * e * n_out + k].max(0.0);
        let m1 = mu[(2 * e + 1) * n_out + k].max(0.0);
        row[a] += m0 - e_eps * m1;
        row[b] += m1 - e_eps * m0;
    }
}

/// How a [`Problem::restricted`] LP's variables and DP rows sit in the full LP's.
#[derive(Debug, Clone)]
pub(crate) struct Restriction {
    /// The outputs kept, increasing.
    pub keep: Vec<usize>,
    n_out: usize,
    n_obs: usize,
    n_edges: usize,
}

impl Restriction {
    /// The full LP's P variables from the restricted LP's (rows of dropped outputs are 0).
    pub(crate) fn lift_primal(&self, x: &[f64]) -> Vec<f64> {
        let m = self.keep.len();
        let mut full = vec![0.0; self.n_obs * self.n_out];
        for i in 0..self.n_obs {
            for (pos, &k) in self.keep.iter().enumerate() {
                full[i * self.n_out + k] = x[i * m + pos];
            }
        }
        full
    }

    /// Write the restricted LP's DP-row multipliers into the full LP's vector `full` (rows of
    /// dropped outputs are left as they are).
    pub(crate) fn lift_multipliers(&self, mu: &[f64], full: &mut [f64]) {
        let m = self.keep.len();
        for block in 0..2 * self.n_edges {
            for (pos, &k) in self.keep.iter().enumerate() {
                full[block * self.n_out + k] = mu[block * m + pos];
            }
        }
    }
}

/// max over ordered neighbour pairs (a, b) of Σ_k max(0, P\[k,a\] − e^ε P\[k,b\]): the δ a mechanism
/// spends at ε (the hockey-stick divergence between its columns).
pub(crate) fn delta_spent(p: &Array2<f64>, neighbours: &Neighbours, eps: f64) -> f64 {
    let e_eps = eps.exp();
    let edges: Vec<(usize, usize)> = neighbours.edges().collect();
    // Row by row (P is row-major), one running sum per ordered pair.
    let (mut s_ab, mut s_ba) = (vec![0.0; edges.len()], vec![0.0; edges.len()]);
    for row in p.rows() {
        for (e, &(a, b)) in edges.iter().enumerate() {
            let (pa, pb) = (row[a], row[b]);
            s_ab[e] += (pa - e_eps * pb).max(0.0);
            s_ba[e] += (pb - e_eps * pa).max(0.0);
        }
    }
    s_ab.into_iter().chain(s_ba).fold(0.0, f64::max)
}

/// Largest |Σ_k P\[k,i\] − 1| over the columns of P.
pub(crate) fn max_column_error(p: &Array2<f64>) -> f64 {
    // Row by row into one running sum per column (P is row-major).
    let mut sums = vec![0.0; p.ncols()];
    for row in p.rows() {
        for (s, &x) in sums.iter_mut().zip(row) {
            *s += x;
        }
    }
    sums.into_iter().map(|s| (s - 1.0).abs()).fold(0.0, f64::max)
}

/// Largest P\[k,a\] − e^ε P\[k,b\] over ordered neighbour pairs (a, b) and outputs k.
///
/// Always a finite number. When e^ε overflows to ∞ (ε ≳ 709.8) the products ∞·0 have no value and
/// are skipped, as a NaN would be by `max` (a zero entry facing a positive one is then left to the
/// repair, which certifies exactly); the result is clipped below at −1 (every entry is a
/// probability, so −1 already means "no violation"), so no −∞ reaches a report or an artifact.
pub(crate) fn max_dp_violation(p: &Array2<f64>, neighbours: &Neighbours, eps: f64) -> f64 {
    let e_eps = eps.exp();
    let term = |x: f64, y: f64| if e_eps.is_infinite() && y == 0.0 { f64::NEG_INFINITY } else { x - e_eps * y };
    let edges: Vec<(usize, usize)> = neighbours.edges().collect();
    let mut worst = -1.0f64;
    // Row by row: P is row-major, so each output's entries are read in order.
    for row in p.rows() {
        match (row.as_slice(), neighbours) {
            (Some(row), Neighbours::Chain { .. }) => {
                for w in row.windows(2) {
                    worst = worst.max(term(w[0], w[1])).max(term(w[1], w[0]));
                }
            }
            _ => {
                for &(a, b) in &edges {
                    let (pa, pb) = (row[a], row[b]);
                    worst = worst.max(term(pa, pb)).max(term(pb, pa));
                }
            }
        }
    }
    worst
}

/// The objective scale: the non-private risk when positive, else the best constant risk, else 1.
pub(crate) fn objective_scale(cost: &Array2<f64>) -> f64 {
    [non_private_risk(cost), best_constant_risk(cost)].into_iter().find(|s| s.is_finite() && *s > 0.0).unwrap_or(1.0)
}

/// Risk of the best constant estimator, min_k Σ_i c\[k,i\]: the UBaPP optimum as ε → 0.
pub(crate) fn best_constant_risk(cost: &Array2<f64>) -> f64 {
    cost.columns().into_iter().map(|c| c.sum()).fold(f64::INFINITY, f64::min)
}

/// The output of least prior risk, argmin_k Σ_i c\[k,i\] (the first on ties): the best constant
/// release.
pub(crate) fn best_constant_output(cost: &Array2<f64>) -> usize {
    cost.columns().into_iter().map(|c| c.sum()).enumerate().min_by(|a, b| a.1.total_cmp(&b.1)).map_or(0, |(k, _)| k)
}

/// Non-private Bayes risk on the output grid, Σ_i min_k c\[k,i\]: the UBaPP optimum as ε → ∞.
pub(crate) fn non_private_risk(cost: &Array2<f64>) -> f64 {
    cost.rows().into_iter().map(|r| r.iter().copied().fold(f64::INFINITY, f64::min)).sum()
}
