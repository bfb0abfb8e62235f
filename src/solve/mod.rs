//! Solvers for the UBaPP LP behind one trait, and the checks that never take a solver's word.
//!
//! Each backend ([`highs`], [`clarabel`], [`good_lp`]) only translates the canonical
//! [`crate::lp::Problem`] and maps its status through an exhaustive `match` into [`Status`].
//! [`solve_problem`] then measures what came back: column sums, DP violation, the objective in
//! unscaled units and a Lagrangian lower bound built from the returned multipliers. A solver's
//! "optimal" becomes [`Status::NearOptimal`] when those checks do not confirm it.

pub mod chain;
#[cfg(feature = "clarabel")]
pub mod clarabel;
#[cfg(feature = "good_lp")]
pub mod good_lp;
#[cfg(feature = "highs")]
pub mod highs;

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Instant;

use ndarray::Array2;
use serde::Serialize;

use crate::lp::{cost_matrix, Problem};
use crate::model::Model;
use crate::{Error, Result};

/// Outcome of a solve, from our point of view (never "optimal" on "almost").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    /// Solved to the solver's full tolerances, and our own checks agree.
    Optimal,
    /// A solution of reduced accuracy (the solver said "almost", or our checks found a gap or
    /// violation larger than the stated tolerances).
    NearOptimal,
    /// The LP is infeasible (cannot happen for a valid UBaPP model; reported, not hidden).
    Infeasible,
    /// The LP is unbounded (likewise).
    Unbounded,
    /// A time limit stopped the solver.
    TimeLimit,
    /// An iteration limit stopped the solver.
    IterationLimit,
    /// The solver gave up on numerical grounds.
    NumericalError,
    /// Any other failure.
    Failed,
}

impl Status {
    /// True when a usable solution came back.
    pub fn has_solution(self) -> bool {
        matches!(self, Status::Optimal | Status::NearOptimal)
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = match self {
            Status::Optimal => "optimal",
            Status::NearOptimal => "near-optimal",
            Status::Infeasible => "infeasible",
            Status::Unbounded => "unbounded",
            Status::TimeLimit => "time-limit",
            Status::IterationLimit => "iteration-limit",
            Status::NumericalError => "numerical-error",
            Status::Failed => "failed",
        };
        f.write_str(s)
    }
}

/// What a backend returns, in the canonical variable order and the scaled objective's units.
#[derive(Debug, Clone)]
pub struct RawSolution {
    /// The primal point (P in variable order).
    pub x: Vec<f64>,
    /// Multipliers μ ≥ 0 of the DP rows for the scaled objective, when the backend gives them.
    pub dp_multipliers: Option<Vec<f64>>,
    /// The backend's status, mapped.
    pub status: Status,
    /// The backend's own words about the outcome (e.g. `AlmostSolved`), for reports.
    pub detail: String,
}

/// A solver of the canonical UBaPP LP.
pub trait LpSolver {
    /// Name for reports, e.g. `highs-simplex`.
    fn name(&self) -> String;
    /// Solve (scaled objective c / scale).
    fn solve(&self, problem: &Problem) -> Result<RawSolution>;
}

/// Which solver to use: parsed from `--solver`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SolverChoice {
    /// The fastest available general backend (Clarabel, else HiGHS, else good_lp).
    Auto,
    /// HiGHS, letting it choose the method (dual simplex on these LPs).
    Highs,
    /// HiGHS dual simplex.
    HighsSimplex,
    /// HiGHS interior point with crossover.
    HighsIpm,
    /// Clarabel interior point.
    Clarabel,
    /// good_lp with its default backend here (HiGHS, else Clarabel, else microlp).
    GoodLp,
    /// good_lp with microlp (pure-Rust simplex; small problems only).
    GoodLpMicrolp,
    /// The structured chain solver (geometric + remap or column generation, certified);
    /// [`solve_model`] picks it for `auto` whenever the neighbour relation is the chain.
    Chain,
}

impl SolverChoice {
    /// All names accepted by `--solver`.
    pub const NAMES: &'static [&'static str] =
        &["auto", "highs", "highs-simplex", "highs-ipm", "clarabel", "good-lp", "good-lp-microlp", "chain"];

    /// The backend, or an input error if it was not compiled in.
    pub fn backend(self) -> Result<Box<dyn LpSolver>> {
        #[allow(unused_variables)] // used only when a backend feature is off
        let missing = |feature: &str| -> Result<Box<dyn LpSolver>> {
            Err(Error::input(format!(
                "--solver {self}: this build has no `{feature}` feature (rebuild with --features {feature})"
            )))
        };
        match self {
            SolverChoice::Auto => {
                if cfg!(feature = "clarabel") {
                    SolverChoice::Clarabel.backend()
                } else if cfg!(feature = "highs") {
                    SolverChoice::Highs.backend()
                } else {
                    SolverChoice::GoodLp.backend()
                }
            }
            #[cfg(feature = "highs")]
            SolverChoice::Highs => Ok(Box::new(highs::HighsSolver { method: highs::Method::Choose })),
            #[cfg(feature = "highs")]
            SolverChoice::HighsSimplex => Ok(Box::new(highs::HighsSolver { method: highs::Method::Simplex })),
            #[cfg(feature = "highs")]
            SolverChoice::HighsIpm => Ok(Box::new(highs::HighsSolver { method: highs::Method::Ipm })),
            #[cfg(not(feature = "highs"))]
            SolverChoice::Highs | SolverChoice::HighsSimplex | SolverChoice::HighsIpm => missing("highs"),
            #[cfg(feature = "clarabel")]
            SolverChoice::Clarabel => Ok(Box::new(clarabel::ClarabelSolver::default())),
            #[cfg(not(feature = "clarabel"))]
            SolverChoice::Clarabel => missing("clarabel"),
            #[cfg(feature = "good_lp")]
            SolverChoice::GoodLp => Ok(Box::new(good_lp::GoodLpSolver { backend: good_lp::Backend::preferred() })),
            #[cfg(feature = "good_lp")]
            SolverChoice::GoodLpMicrolp => Ok(Box::new(good_lp::GoodLpSolver { backend: good_lp::Backend::Microlp })),
            #[cfg(not(feature = "good_lp"))]
            SolverChoice::GoodLp | SolverChoice::GoodLpMicrolp => missing("good_lp"),
            SolverChoice::Chain => Ok(Box::new(chain::ChainSolver)),
        }
    }
}

impl fmt::Display for SolverChoice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let i = match self {
            SolverChoice::Auto => 0,
            SolverChoice::Highs => 1,
            SolverChoice::HighsSimplex => 2,
            SolverChoice::HighsIpm => 3,
            SolverChoice::Clarabel => 4,
            SolverChoice::GoodLp => 5,
            SolverChoice::GoodLpMicrolp => 6,
            SolverChoice::Chain => 7,
        };
        f.write_str(Self::NAMES[i])
    }
}

impl FromStr for SolverChoice {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        Ok(match s {
            "auto" => SolverChoice::Auto,
            "highs" => SolverChoice::Highs,
            "highs-simplex" => SolverChoice::HighsSimplex,
            "highs-ipm" => SolverChoice::HighsIpm,
            "clarabel" => SolverChoice::Clarabel,
            "good-lp" | "good_lp" => SolverChoice::GoodLp,
            "good-lp-microlp" => SolverChoice::GoodLpMicrolp,
            "chain" => SolverChoice::Chain,
            other => {
                return Err(Error::input(format!(
                    "--solver: unknown solver \"{other}\" (expected one of {})",
                    Self::NAMES.join(", ")
                )))
            }
        })
    }
}

/// Tolerances our own checks apply before agreeing that a solution is optimal.
pub const CHECK_TOLERANCE: f64 = 1e-7;

/// A solved UBaPP LP with everything measured about it.
#[derive(Debug, Clone, Serialize)]
pub struct Solution {
    /// Privacy level ε.
    pub eps: f64,
    /// Bayes risk Σ c[k,i] P[k,i] of the returned P under the discretised prior.
    pub bayes_risk: f64,
    /// Solver name.
    pub solver: String,
    /// Status after our checks.
    pub status: Status,
    /// The backend's own word on the outcome.
    pub solver_detail: String,
    /// Wall-clock seconds of the solve (assembly excluded).
    pub seconds: f64,
    /// Seconds to assemble the LP.
    pub assembly_seconds: f64,
    /// |Θ̃|.
    pub outputs: usize,
    /// |Y|.
    pub observations: usize,
    /// LP variables.
    pub variables: usize,
    /// LP rows.
    pub rows: usize,
    /// Largest P[k,a] − e^ε P[k,b] in the returned P (≤ 0: no violation).
    pub max_dp_violation: f64,
    /// Largest |Σ_k P[k,i] − 1|.
    pub max_column_error: f64,
    /// Smallest entry of P (negative values are solver round-off).
    pub min_entry: f64,
    /// Lagrangian lower bound on the optimum from the returned multipliers (if any).
    pub dual_bound: Option<f64>,
    /// (bayes_risk − dual_bound) / bayes_risk.
    pub relative_gap: Option<f64>,
    /// The mechanism P (|Θ̃| × |Y|).
    #[serde(skip)]
    pub p: Array2<f64>,
}

/// Solve one LP with a backend and measure the result.
pub fn solve_problem(problem: &Problem, solver: &dyn LpSolver, assembly_seconds: f64) -> Result<Solution> {
    let start = Instant::now();
    let raw = solver.solve(problem)?;
    let seconds = start.elapsed().as_secs_f64();
    if !raw.status.has_solution() {
        return Err(Error::Solver(format!(
            "{} returned no solution at ε = {}: {} ({})",
            solver.name(),
            problem.eps,
            raw.status,
            raw.detail
        )));
    }
    let p = problem.mechanism_matrix(&raw.x);
    let bayes_risk = problem.bayes_risk(&p);
    let max_dp_violation = problem.max_dp_violation(&p);
    let max_column_error = problem.max_column_error(&p);
    let min_entry = p.iter().copied().fold(f64::INFINITY, f64::min);
    let dual_bound = raw.dp_multipliers.as_ref().map(|mu| {
        let mu: Vec<f64> = mu.iter().map(|m| m * problem.scale).collect();
        problem.lagrangian_bound(&mu)
    });
    let relative_gap = dual_bound.map(|d| (bayes_risk - d) / bayes_risk.abs().max(f64::MIN_POSITIVE));
    let confirmed = max_dp_violation <= CHECK_TOLERANCE
        && max_column_error <= CHECK_TOLERANCE
        && min_entry >= -CHECK_TOLERANCE
        && relative_gap.is_none_or(|g| g <= CHECK_TOLERANCE);
    let status = match raw.status {
        Status::Optimal if !confirmed => Status::NearOptimal,
        s => s,
    };
    Ok(Solution {
        eps: problem.eps,
        bayes_risk,
        solver: solver.name(),
        status,
        solver_detail: raw.detail,
        seconds,
        assembly_seconds,
        outputs: problem.n_outputs(),
        observations: problem.n_obs(),
        variables: problem.n_vars(),
        rows: problem.n_rows(),
        max_dp_violation,
        max_column_error,
        min_entry,
        dual_bound,
        relative_gap,
        p,
    })
}

/// Solve a model for each ε in `epsilons` (the model's own list when `None`). `Auto` uses the
/// certified chain solver when the neighbour relation is the chain y ~ y ± 1.
pub fn solve_model(model: &Model, epsilons: Option<&[f64]>, choice: SolverChoice) -> Result<Vec<Solution>> {
    let eps_list = epsilons.unwrap_or(&model.epsilons);
    crate::model::validate_epsilons(eps_list, "--eps")?;
    let choice = match choice {
        SolverChoice::Auto if model.family.neighbours().is_chain() => SolverChoice::Chain,
        c => c,
    };
    if choice == SolverChoice::Chain {
        return chain::solve_model(model, eps_list);
    }
    let solver = choice.backend()?;
    let start = Instant::now();
    let cost = Arc::new(cost_matrix(model)?);
    let cost_seconds = start.elapsed().as_secs_f64();
    eps_list
        .iter()
        .map(|&eps| {
            let t = Instant::now();
            let problem = Problem::try_new(cost.clone(), model.family.neighbours(), eps)?;
            let assembly = cost_seconds + t.elapsed().as_secs_f64();
            solve_problem(&problem, solver.as_ref(), assembly)
        })
        .collect()
}
