//! HiGHS backend (direct, through the `highs` crate): dual simplex or interior point.

use highs::{ColProblem, HighsModelStatus, Sense};

use super::backend::{Limits, LpSolver, RawSolution};
use super::{SolveError, Status};
use crate::lp::Problem;

/// Which HiGHS algorithm to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum HighsAlgorithm {
    /// HiGHS decides (dual simplex for LPs of this kind).
    Choose,
    /// Dual simplex.
    Simplex,
    /// Interior point, followed by crossover to a vertex.
    Ipm,
}

impl HighsAlgorithm {
    fn option(self) -> &'static str {
        match self {
            HighsAlgorithm::Choose => "choose",
            HighsAlgorithm::Simplex => "simplex",
            HighsAlgorithm::Ipm => "ipm",
        }
    }
}

/// The HiGHS backend.
#[derive(Debug, Clone, Copy)]
pub(crate) struct HighsSolver {
    /// Algorithm.
    pub method: HighsAlgorithm,
    /// Iteration and time limits.
    pub limits: Limits,
}

/// Feasibility and optimality tolerances (HiGHS's tightest accepted values; our objective is
/// scaled so that the optimum is ≥ 1).
const TOLERANCE: f64 = 1e-10;

impl LpSolver for HighsSolver {
    fn name(&self) -> String {
        match self.method {
            HighsAlgorithm::Choose => "highs".into(),
            HighsAlgorithm::Simplex => "highs-simplex".into(),
            HighsAlgorithm::Ipm => "highs-ipm".into(),
        }
    }

    fn solve(&self, problem: &Problem) -> Result<RawSolution, SolveError> {
        let mut pb = ColProblem::new();
        let rows: Vec<_> = (0..problem.n_rows())
            .map(|r| {
                let (lo, hi) = problem.row_bounds(r);
                pb.add_row(lo..=hi)
            })
            .collect();
        let costs = problem.scaled_costs();
        for (j, col) in problem.a.outer_iterator().enumerate() {
            let (lo, hi) = problem.col_bounds(j);
            let entries = col.iter().map(|(r, &v)| (rows[r], v));
            match (lo.is_finite(), hi.is_finite()) {
                (true, true) => pb.add_column(costs[j], lo..=hi, entries),
                (true, false) => pb.add_column(costs[j], lo.., entries),
                (false, true) => pb.add_column(costs[j], ..=hi, entries),
                (false, false) => pb.add_column(costs[j], f64::NEG_INFINITY..f64::INFINITY, entries),
            }
        }
        let mut model = pb
            .try_optimise(Sense::Minimise)
            .map_err(|e| SolveError::backend("highs", format!("rejected the LP: {e:?}")))?;
        let set = |m: &mut highs::Model, k: &str, v: &str| {
            m.try_set_option(k, v).map_err(|e| SolveError::backend("highs", format!("option {k} = {v}: {e:?}")))
        };
        set(&mut model, "solver", self.method.option())?;
        for key in ["primal_feasibility_tolerance", "dual_feasibility_tolerance", "ipm_optimality_tolerance"] {
            model
                .try_set_option(key, TOLERANCE)
                .map_err(|e| SolveError::backend("highs", format!("option {key}: {e:?}")))?;
        }
        if let Some(n) = self.limits.iterations {
            let n = n as i32;
            for key in ["simplex_iteration_limit", "ipm_iteration_limit"] {
                model
                    .try_set_option(key, n)
                    .map_err(|e| SolveError::backend("highs", format!("option {key}: {e:?}")))?;
            }
        }
        if let Some(t) = self.limits.seconds {
            model
                .try_set_option("time_limit", t)
                .map_err(|e| SolveError::backend("highs", format!("option time_limit: {e:?}")))?;
        }
        let solved = model.try_solve().map_err(|e| SolveError::backend("highs", format!("failed: {e:?}")))?;
        let hs = solved.status();
        let status = map_status(hs);
        let solution = solved.get_solution();
        let n_eq = problem.n_eq();
        // HiGHS row duals are ∂objective/∂rhs: ≤ 0 on binding ≤ rows of a minimisation.
        let mu = solution.dual_rows()[n_eq..].iter().map(|d| -d).collect();
        Ok(RawSolution { x: solution.columns().to_vec(), dp_multipliers: Some(mu), status, detail: format!("{hs:?}") })
    }
}

fn map_status(s: HighsModelStatus) -> Status {
    match s {
        HighsModelStatus::Optimal => Status::Optimal,
        HighsModelStatus::Infeasible => Status::Infeasible,
        HighsModelStatus::Unbounded | HighsModelStatus::UnboundedOrInfeasible => Status::Unbounded,
        HighsModelStatus::ReachedTimeLimit => Status::TimeLimit,
        HighsModelStatus::ReachedIterationLimit => Status::IterationLimit,
        HighsModelStatus::SolveError | HighsModelStatus::PresolveError | HighsModelStatus::PostsolveError => {
            Status::NumericalError
        }
        HighsModelStatus::NotSet
        | HighsModelStatus::LoadError
        | HighsModelStatus::ModelError
        | HighsModelStatus::ModelEmpty
        | HighsModelStatus::ObjectiveBound
        | HighsModelStatus::ObjectiveTarget
        | HighsModelStatus::Unknown
        | HighsModelStatus::ReachedSolutionLimit
        | HighsModelStatus::ReachedInterrupt
        | HighsModelStatus::ReachedMemoryLimit => Status::Failed,
        // The enum is #[non_exhaustive]: a status added by a future HiGHS is a failure until mapped.
        _ => Status::Failed,
    }
}
