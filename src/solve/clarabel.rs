//! Clarabel backend (direct): a pure-Rust interior-point solver.
//!
//! Clarabel's form is `min qᵀx s.t. Ax + s = b, s ∈ K`. Our equality rows go to the zero cone,
//! DP rows (≤ 0) and the bounds x ≥ 0 (as −x + s = 0) to the non-negative cone.
//!
//! A bound P[k,i] ≥ 0 is only added when observation i has no neighbour: for an edge (i, j) the
//! two DP rows give P[k,i] ≤ e^ε P[k,j] ≤ e^{2ε} P[k,i], so (e^{2ε} − 1) P[k,i] ≥ 0 and, as ε > 0,
//! P[k,i] ≥ 0 already. This removes a third of the KKT system's rows on the UBaPP LP.

use clarabel::algebra::CscMatrix;
use clarabel::solver::{DefaultSettings, DefaultSettingsBuilder, DefaultSolver, IPSolver, SolverStatus, SupportedConeT};

use super::{LpSolver, RawSolution, Status};
use crate::lp::Problem;
use crate::{Error, Result};

/// The Clarabel backend with its settings.
#[derive(Debug, Clone)]
pub struct ClarabelSolver {
    /// Relative gap and feasibility tolerance (the scaled optimum lies in (0, 1]).
    pub tolerance: f64,
    /// Iteration cap.
    pub max_iter: u32,
}

impl Default for ClarabelSolver {
    fn default() -> Self {
        ClarabelSolver { tolerance: 1e-10, max_iter: 400 }
    }
}

impl ClarabelSolver {
    fn settings(&self) -> Result<DefaultSettings<f64>> {
        DefaultSettingsBuilder::default()
            .verbose(false)
            .max_iter(self.max_iter)
            .tol_gap_abs(self.tolerance)
            .tol_gap_rel(self.tolerance)
            .tol_feas(self.tolerance)
            .presolve_enable(true)
            .build()
            .map_err(|e| Error::Solver(format!("invalid Clarabel settings: {e}")))
    }
}

impl LpSolver for ClarabelSolver {
    fn name(&self) -> String {
        "clarabel".into()
    }

    fn solve(&self, problem: &Problem) -> Result<RawSolution> {
        let (m, n) = (problem.n_rows(), problem.n_vars());
        // Stack [A; −I_S] where S = variables of observations without neighbours (module docs):
        // each such column gets one more entry, value −1 (x_j ≥ 0).
        let mut has_neighbour = vec![false; problem.n_obs()];
        for (a, b) in problem.neighbours.edges() {
            has_neighbour[a] = true;
            has_neighbour[b] = true;
        }
        let n_out = problem.n_outputs();
        let a = &problem.a;
        let mut colptr = Vec::with_capacity(n + 1);
        let mut rowval = Vec::with_capacity(a.nnz() + n);
        let mut nzval = Vec::with_capacity(a.nnz() + n);
        let mut bounds = 0;
        colptr.push(0);
        for (j, col) in a.outer_iterator().enumerate() {
            for (r, &v) in col.iter() {
                rowval.push(r);
                nzval.push(v);
            }
            if !has_neighbour[j / n_out] {
                rowval.push(m + bounds);
                nzval.push(-1.0);
                bounds += 1;
            }
            colptr.push(rowval.len());
        }
        let a_stacked = CscMatrix::new(m + bounds, n, colptr, rowval, nzval);
        let p = CscMatrix::<f64>::zeros((n, n));
        let mut b = vec![0.0; m + bounds];
        b[..problem.n_eq()].fill(1.0);
        let cones = [
            SupportedConeT::ZeroConeT(problem.n_eq()),
            SupportedConeT::NonnegativeConeT(m - problem.n_eq() + bounds),
        ];
        let q = problem.scaled_costs();
        let mut solver = DefaultSolver::new(&p, &q, &a_stacked, &b, &cones, self.settings()?)
            .map_err(|e| Error::Solver(format!("Clarabel rejected the LP: {e}")))?;
        solver.solve();
        let sol = &solver.solution;
        let status = map_status(sol.status);
        // Lagrangian cᵀx + zᵀ(Ax − b) with z ≥ 0 on the non-negative cone: z of the DP rows is μ.
        let mu = sol.z[problem.n_eq()..m].to_vec();
        Ok(RawSolution {
            x: sol.x.clone(),
            dp_multipliers: Some(mu),
            status,
            detail: format!("{:?} in {} iterations", sol.status, sol.iterations),
        })
    }
}

/// Exhaustive: a Clarabel status added later fails to compile here until mapped.
pub(crate) fn map_status(s: SolverStatus) -> Status {
    match s {
        SolverStatus::Solved => Status::Optimal,
        SolverStatus::AlmostSolved => Status::NearOptimal,
        SolverStatus::PrimalInfeasible | SolverStatus::AlmostPrimalInfeasible => Status::Infeasible,
        SolverStatus::DualInfeasible | SolverStatus::AlmostDualInfeasible => Status::Unbounded,
        SolverStatus::MaxIterations => Status::IterationLimit,
        SolverStatus::MaxTime => Status::TimeLimit,
        SolverStatus::NumericalError | SolverStatus::InsufficientProgress => Status::NumericalError,
        SolverStatus::Unsolved | SolverStatus::CallbackTerminated => Status::Failed,
    }
}
