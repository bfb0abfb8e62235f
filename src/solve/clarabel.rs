//! Clarabel backend (direct): a pure-Rust interior-point solver.
//!
//! Clarabel's form is `min qᵀx s.t. Ax + s = b, s ∈ K`. Our equality rows go to the zero cone,
//! the other rows (≤ b) and the finite variable bounds (x ≥ l as −x + s = −l) to the non-negative cone.
//!
//! In the plain pure-ε program with ε ≥ 0.1 a bound P\[k,i\] ≥ 0 is only added when observation i
//! has no neighbour: for an edge (i, j) the two DP rows give P\[k,i\] ≤ e^ε P\[k,j\] ≤ e^{2ε} P\[k,i\], so
//! (e^{2ε} − 1) P\[k,i\] ≥ 0 and, as ε > 0, P\[k,i\] ≥ 0 already. This removes a third of the KKT
//! system's rows on the UBaPP LP. (With δ > 0 the DP rows are relaxed, so every bound is kept.)

use clarabel::algebra::CscMatrix;
use clarabel::solver::{
    DefaultInfo, DefaultSettings, DefaultSettingsBuilder, DefaultSolver, IPSolver, SolverStatus, SupportedConeT,
};

use super::backend::{Limits, LpSolver, RawSolution};
use super::progress::{Event, Progress};
use super::{Library, SolveError, SolverChoice, Status};
use crate::lp::Problem;

/// The Clarabel backend with its settings (one attempt; the regularisation ladder is
/// [`super::strategy`]'s).
#[derive(Debug, Clone)]
pub(crate) struct ClarabelSolver {
    /// Absolute and relative duality-gap tolerance (the scaled optimum is ≥ 1).
    pub gap_tolerance: f64,
    /// Primal/dual feasibility tolerance.
    pub feasibility_tolerance: f64,
    /// Iteration cap.
    pub max_iter: u32,
    /// Time cap (seconds).
    pub time_limit: Option<f64>,
    /// Static regularisation constant added to the KKT system's diagonal. Clarabel's default,
    /// 1e-8, caps the accuracy on the UBaPP LP: at (K, M) = (300, 300), ε = 0.1 the primal residual
    /// stalls near 1e-8 for 40 iterations (12 s) and P and the dual bound both land 3e-6 below the
    /// optimum; with 1e-13 it converges in 23 iterations (4.7 s) to a certified gap of 3e-8.
    pub static_regularization: f64,
    /// Where each iteration is reported (through Clarabel's termination callback, which never
    /// stops the solve).
    pub progress: Progress,
}

impl ClarabelSolver {
    /// Our tolerances with the caller's limits and the first step of the ladder.
    pub(crate) fn with_limits(limits: Limits) -> Self {
        ClarabelSolver {
            gap_tolerance: 1e-9,
            feasibility_tolerance: 1e-10,
            max_iter: limits.iterations.unwrap_or(400),
            time_limit: limits.seconds,
            static_regularization: 1e-13,
            progress: Progress::none(),
        }
    }
}

impl ClarabelSolver {
    fn settings(&self, static_regularization: f64) -> Result<DefaultSettings<f64>, SolveError> {
        DefaultSettingsBuilder::default()
            .verbose(false)
            .max_iter(self.max_iter)
            .tol_gap_abs(self.gap_tolerance)
            .tol_gap_rel(self.gap_tolerance)
            .tol_feas(self.feasibility_tolerance)
            .presolve_enable(true)
            .time_limit(self.time_limit.unwrap_or(f64::INFINITY))
            .static_regularization_constant(static_regularization)
            .build()
            .map_err(|e| SolveError::backend(Library::Clarabel, format!("invalid settings: {e}")))
    }
}

impl LpSolver for ClarabelSolver {
    fn name(&self) -> SolverChoice {
        SolverChoice::Clarabel
    }

    fn solve(&self, problem: &Problem) -> Result<RawSolution, SolveError> {
        self.solve_with(problem, self.static_regularization)
    }
}

impl ClarabelSolver {
    fn solve_with(&self, problem: &Problem, static_regularization: f64) -> Result<RawSolution, SolveError> {
        let (m, n) = (problem.n_rows(), problem.n_vars());
        // Stack [A; bound rows]: a finite lower bound l_j becomes −x_j + s = −l_j, a finite upper
        // bound u_j becomes x_j + s = u_j, both with s in the non-negative cone. P ≥ 0 rows implied
        // by the DP rows are skipped (module docs).
        let implied = implied_nonnegativity(problem);
        let bounds: Vec<(f64, f64)> = (0..n).map(|j| problem.col_bounds(j)).collect();
        let mut bound_rows: Vec<(usize, f64, f64)> = Vec::new(); // (variable, coefficient, rhs)
        for (j, &(lo, hi)) in bounds.iter().enumerate() {
            if lo.is_finite() && !(lo == 0.0 && implied(j)) {
                bound_rows.push((j, -1.0, -lo));
            }
            if hi.is_finite() {
                bound_rows.push((j, 1.0, hi));
            }
        }
        let mut rows_of_var: Vec<Vec<(usize, f64)>> = vec![Vec::new(); n];
        for (t, &(j, c, _)) in bound_rows.iter().enumerate() {
            rows_of_var[j].push((m + t, c));
        }
        let a = &problem.a;
        let mut colptr = Vec::with_capacity(n + 1);
        let mut rowval = Vec::with_capacity(a.nnz() + bound_rows.len());
        let mut nzval = Vec::with_capacity(a.nnz() + bound_rows.len());
        colptr.push(0);
        for (j, col) in a.outer_iterator().enumerate() {
            for (r, &v) in col.iter() {
                rowval.push(r);
                nzval.push(v);
            }
            for &(r, v) in &rows_of_var[j] {
                rowval.push(r);
                nzval.push(v);
            }
            colptr.push(rowval.len());
        }
        let n_bound = bound_rows.len();
        let a_stacked = CscMatrix::new(m + n_bound, n, colptr, rowval, nzval);
        let p = CscMatrix::<f64>::zeros((n, n));
        let mut b = vec![0.0; m + n_bound];
        for (r, br) in b.iter_mut().enumerate().take(m) {
            let (lo, hi) = problem.row_bounds(r);
            *br = if r < problem.n_eq() {
                debug_assert_eq!(lo, hi);
                hi
            } else {
                debug_assert!(lo == f64::NEG_INFINITY, "non-equality rows are ≤ rows");
                hi
            };
        }
        for (t, &(_, _, rhs)) in bound_rows.iter().enumerate() {
            b[m + t] = rhs;
        }
        let cones =
            [SupportedConeT::ZeroConeT(problem.n_eq()), SupportedConeT::NonnegativeConeT(m - problem.n_eq() + n_bound)];
        let q = problem.scaled_costs();
        let mut solver = DefaultSolver::new(&p, &q, &a_stacked, &b, &cones, self.settings(static_regularization)?)
            .map_err(|e| SolveError::backend(Library::Clarabel, format!("rejected the LP: {e}")))?;
        if self.progress.is_listening() {
            let progress = self.progress.clone();
            solver.set_termination_callback(move |info: &DefaultInfo<f64>| {
                progress.report(Event::Iteration { solver: "clarabel", iteration: u64::from(info.iterations) });
                false // never stop the solve
            });
        }
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

/// Seconds Clarabel's first iteration (its first factorisation of the KKT system) may take on
/// `problem`: on a neighbour graph the fill grows as |Θ̃|³·|Y|^1.87 (the estimate's law for an
/// interior point on a lattice, [`super::estimate`]), a tenth of that law's whole-solve time
/// (multinomial d = 3, K = 40: the restricted LP of 47 outputs × 861 observations ran 223 s past
/// a 3 s limit; the law gives 22 s); on a band, a hundredth of the band's law (nonzeros^1.82:
/// the clipped Poisson sum of 2000 records, cap 5, 12.6 million nonzeros, ran 37 s past a limit
/// of about 15 s, where the law's whole solve is 5900 s); on a chain, 0 (its factorisations are
/// cheap).
pub(crate) fn first_iteration_seconds(problem: &Problem) -> f64 {
    if problem.neighbours.is_chain() {
        return 0.0;
    }
    if matches!(problem.neighbours, crate::model::Neighbours::Band { .. }) {
        return 1.63 * (problem.a.nnz() as f64 / 1.4e5).powf(1.82) / 100.0;
    }
    let (n_obs, n_out) = (problem.n_obs() as f64, problem.n_outputs() as f64);
    7e-10 * n_out.powi(3) * n_obs.powf(1.87)
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

/// Smallest ε at which P ≥ 0 rows implied by the DP rows are dropped (1/(e^{2ε} − 1) ≤ 4.5).
const MIN_EPS_IMPLIED: f64 = 0.1;

/// For variable j: is x_j ≥ 0 implied by the plain DP rows (a P variable of an observation with a
/// neighbour, in a program without δ relaxation)?
fn implied_nonnegativity(problem: &Problem) -> impl Fn(usize) -> bool {
    let mut has_neighbour = vec![false; problem.n_obs()];
    // The implication is numerically weak at small ε: a DP row met to tolerance τ only gives
    // P ≥ −τ/(e^{2ε} − 1), so below MIN_EPS_IMPLIED the bounds are kept (seen at ε = 1e-4: entries
    // of −1e-9 and a risk 1.4e-8 below the certified optimum).
    if problem.program.delta.is_none() && problem.eps >= MIN_EPS_IMPLIED {
        for (a, b) in problem.neighbours.edges() {
            has_neighbour[a] = true;
            has_neighbour[b] = true;
        }
    }
    let (n_out, n_p) = (problem.n_outputs(), problem.n_obs() * problem.n_outputs());
    move |j| j < n_p && has_neighbour[j / n_out]
}
