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
pub mod polish;

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Instant;

use ndarray::Array2;
use serde::Serialize;

use crate::lp::{cost_matrix, Problem, Program};
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
    /// Clarabel, then HiGHS when Clarabel's result is not confirmed optimal (HiGHS first on an
    /// explicit neighbour graph: [`solve_with_choice`]; the first usable
    /// result is kept if neither is).
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
    /// good_lp driving HiGHS.
    GoodLpHighs,
    /// good_lp driving Clarabel.
    GoodLpClarabel,
    /// good_lp with microlp (pure-Rust simplex; small problems only).
    GoodLpMicrolp,
    /// The structured chain solver (geometric + remap or column generation, certified);
    /// [`solve_model`] picks it for `auto` whenever the neighbour relation is the chain.
    Chain,
}

impl SolverChoice {
    /// All names accepted by `--solver`.
    pub const NAMES: &'static [&'static str] = &[
        "auto",
        "highs",
        "highs-simplex",
        "highs-ipm",
        "clarabel",
        "good-lp",
        "good-lp-highs",
        "good-lp-clarabel",
        "good-lp-microlp",
        "chain",
    ];

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
                    missing("clarabel")
                }
            }
            #[cfg(feature = "highs")]
            SolverChoice::Highs => Ok(Box::new(highs::HighsSolver { method: highs::Method::Choose, polish: true })),
            #[cfg(feature = "highs")]
            SolverChoice::HighsSimplex => {
                Ok(Box::new(highs::HighsSolver { method: highs::Method::Simplex, polish: true }))
            }
            #[cfg(feature = "highs")]
            SolverChoice::HighsIpm => Ok(Box::new(highs::HighsSolver { method: highs::Method::Ipm, polish: true })),
            #[cfg(not(feature = "highs"))]
            SolverChoice::Highs | SolverChoice::HighsSimplex | SolverChoice::HighsIpm => missing("highs"),
            #[cfg(feature = "clarabel")]
            SolverChoice::Clarabel => Ok(Box::new(clarabel::ClarabelSolver::default())),
            #[cfg(not(feature = "clarabel"))]
            SolverChoice::Clarabel => missing("clarabel"),
            #[cfg(feature = "good_lp")]
            SolverChoice::GoodLp => Ok(Box::new(good_lp::GoodLpSolver { backend: good_lp::Backend::preferred() })),
            #[cfg(all(feature = "good_lp", feature = "highs"))]
            SolverChoice::GoodLpHighs => Ok(Box::new(good_lp::GoodLpSolver { backend: good_lp::Backend::Highs })),
            #[cfg(not(all(feature = "good_lp", feature = "highs")))]
            SolverChoice::GoodLpHighs => missing("good_lp,highs"),
            #[cfg(all(feature = "good_lp", feature = "clarabel"))]
            SolverChoice::GoodLpClarabel => Ok(Box::new(good_lp::GoodLpSolver { backend: good_lp::Backend::Clarabel })),
            #[cfg(not(all(feature = "good_lp", feature = "clarabel")))]
            SolverChoice::GoodLpClarabel => missing("good_lp,clarabel"),
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
            SolverChoice::GoodLpHighs => 6,
            SolverChoice::GoodLpClarabel => 7,
            SolverChoice::GoodLpMicrolp => 8,
            SolverChoice::Chain => 9,
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
            "good-lp-highs" => SolverChoice::GoodLpHighs,
            "good-lp-clarabel" => SolverChoice::GoodLpClarabel,
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

/// Relative gap (objective − certified lower bound) / objective that our checks accept in a
/// solution called optimal.
pub const CHECK_TOLERANCE: f64 = 1e-7;

/// Largest DP-row violation, column-sum error or negative entry (absolute, on probabilities) that
/// our checks accept in a solution called optimal. Solver tolerances are 1e-10 on the scaled LP; a
/// point infeasible by more can sit measurably below the true optimum (seen: 4e-9 violations with a
/// risk 3e-7 below the certified optimum).
pub const FEASIBILITY_TOLERANCE: f64 = 1e-9;

/// What our checks measure of a returned P, and whether it passes them (FEASIBILITY_TOLERANCE).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Residuals {
    /// Largest P\[k,a\] − e^ε P\[k,b\].
    pub max_dp_violation: f64,
    /// Largest |Σ_k P\[k,i\] − 1|.
    pub max_column_error: f64,
    /// Smallest entry.
    pub min_entry: f64,
}

impl Residuals {
    /// Measure P (|Θ̃| × |Y|) against the pure ε-DP rows of `neighbours`.
    pub(crate) fn of(p: &Array2<f64>, neighbours: &crate::model::Neighbours, eps: f64) -> Residuals {
        Residuals {
            max_dp_violation: crate::lp::max_dp_violation(p, neighbours, eps),
            max_column_error: crate::lp::max_column_error(p),
            min_entry: p.iter().copied().fold(f64::INFINITY, f64::min),
        }
    }

    /// Every column a distribution, to the tolerance.
    pub(crate) fn is_distribution(&self) -> bool {
        self.max_column_error <= FEASIBILITY_TOLERANCE && self.min_entry >= -FEASIBILITY_TOLERANCE
    }

    /// Every pure ε-DP row holds, to the tolerance.
    pub(crate) fn is_private(&self) -> bool {
        self.max_dp_violation <= FEASIBILITY_TOLERANCE
    }
}

/// A solved UBaPP LP with everything measured about it.
#[derive(Debug, Clone, Serialize)]
pub struct Solution {
    /// Privacy level ε.
    pub eps: f64,
    /// Bayes risk Σ c\[k,i\] P\[k,i\] of the returned P under the discretised prior.
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
    /// Largest P\[k,a\] − e^ε P\[k,b\] in the returned P (≤ 0: no violation).
    pub max_dp_violation: f64,
    /// Largest |Σ_k P\[k,i\] − 1|.
    pub max_column_error: f64,
    /// Smallest entry of P (negative values are solver round-off).
    pub min_entry: f64,
    /// Lagrangian lower bound on the optimum from the returned multipliers (if any).
    pub dual_bound: Option<f64>,
    /// (certified_objective − dual_bound) / certified_objective where a certified mechanism was
    /// built (else objective in its place): how far what `ubapp solve --out` releases can be from
    /// the optimum. Measured from a *feasible* point: the returned P may sit below the optimum.
    pub relative_gap: Option<f64>,
    /// The LP's objective at the returned P, unscaled: the Bayes risk, or for a minimax program the
    /// worst-case risk over the parameter grid.
    pub objective: f64,
    /// The objective of the exactly certified mechanism built from P by repair and quantisation
    /// (`None` when P is too far from feasible to repair).
    pub certified_objective: Option<f64>,
    /// max_j R(θ_j) over the parameter grid (minimax programs only).
    pub worst_case_risk: Option<f64>,
    /// δ of the program (0 for pure ε-DP).
    pub delta: f64,
    /// δ the returned P actually spends at ε: max over ordered neighbour pairs of
    /// Σ_k max(0, P\[k,a\] − e^ε P\[k,b\]).
    pub delta_spent: f64,
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
    let Assessment {
        residuals, delta_spent, objective, certified_objective, dual_bound, relative_gap, confirmed, ..
    } = Assessment::of(problem, &p, &raw);
    let Residuals { max_dp_violation, max_column_error, min_entry } = residuals;
    let worst_case_risk = problem.program.risk_rows.as_ref().map(|_| objective);
    let delta = problem.program.delta.unwrap_or(0.0);
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
        objective,
        certified_objective,
        worst_case_risk,
        delta,
        delta_spent,
        p,
    })
}

/// The Lagrangian bound from a backend's multipliers (scaled objective → risk units).
fn dual_bound(problem: &Problem, raw: &RawSolution) -> Option<f64> {
    raw.dp_multipliers.as_ref().map(|mu| {
        let mu: Vec<f64> = mu.iter().map(|m| m * problem.scale).collect();
        problem.lagrangian_bound(&mu)
    })
}

fn relative_gap(upper: f64, bound: f64) -> f64 {
    (upper - bound) / upper.abs().max(f64::MIN_POSITIVE)
}

/// What our checks make of a backend's answer (the measurements [`solve_problem`] reports).
pub(crate) struct Assessment {
    pub residuals: Residuals,
    pub delta_spent: f64,
    pub objective: f64,
    pub certified_objective: Option<f64>,
    pub dual_bound: Option<f64>,
    pub relative_gap: Option<f64>,
    /// Private (pure ε: every DP row; (ε, δ): every pair spends ≤ δ) and a distribution to
    /// FEASIBILITY_TOLERANCE.
    pub feasible: bool,
    /// Feasible, with a gap ≤ CHECK_TOLERANCE where a bound exists.
    pub confirmed: bool,
}

impl Assessment {
    pub(crate) fn of(problem: &Problem, p: &Array2<f64>, raw: &RawSolution) -> Assessment {
        let residuals = Residuals::of(p, &problem.neighbours, problem.eps);
        let delta_spent = problem.delta_spent(p);
        let objective = problem.objective_value(p);
        let certified_objective = certified_objective(problem, p);
        let dual_bound = dual_bound(problem, raw);
        let relative_gap = dual_bound.map(|d| relative_gap(certified_objective.unwrap_or(objective), d));
        let private = match problem.program.delta {
            None => residuals.is_private(),
            Some(d) => delta_spent <= d + FEASIBILITY_TOLERANCE,
        };
        let feasible = private && residuals.is_distribution();
        let confirmed = feasible && relative_gap.is_none_or(|g| g <= CHECK_TOLERANCE);
        Assessment {
            residuals,
            delta_spent,
            objective,
            certified_objective,
            dual_bound,
            relative_gap,
            feasible,
            confirmed,
        }
    }
}

/// The objective of the mechanism `ubapp solve --out` would release from P: repaired and quantised
/// into integer weights certified ε-DP exactly ([`crate::mechanism::repair`]), the cheapest of the
/// repair methods. An interior-point P meets the DP rows only to a tolerance and can sit below the
/// optimum (seen: 7.5e-6 relative below at (K, M) = (300, 300) with violations of 1e-10), so a gap
/// measured from P itself can pass while the released mechanism is far from optimal.
fn certified_objective(problem: &Problem, p: &Array2<f64>) -> Option<f64> {
    use crate::mechanism::{repair, DEFAULT_TOTAL};
    let total = DEFAULT_TOTAL as f64;
    let delta = problem.program.delta.unwrap_or(0.0);
    repair::RepairMethod::for_delta(delta)
        .iter()
        .filter_map(|&method| {
            repair::repair_and_quantise_for(&problem.neighbours, problem.eps, delta, p, DEFAULT_TOTAL, method).ok()
        })
        .map(|(columns, _, _)| {
            let q = Array2::from_shape_fn(p.dim(), |(k, i)| columns[i][k] as f64 / total);
            problem.objective_value(&q)
        })
        .min_by(f64::total_cmp)
}

/// Solve one LP with the chosen solver. `Auto` tries Clarabel, then HiGHS (HiGHS first when the
/// neighbour relation is an explicit graph rather than a chain or band), until one returns a
/// solution our checks confirm as optimal; otherwise the usable one with the smallest certified
/// gap is kept.
///
/// Why the order depends on the graph: on a chain or band the KKT system of an interior-point
/// method stays banded and Clarabel wins by far (HiGHS dual simplex: > 120 s at (K, M) =
/// (300, 300) where Clarabel takes 5 s); on the multinomial's lattice it fills in, and HiGHS wins
/// (`models/vote-share-3way.toml` at ε = 0.5: 45 s against 217 s).
pub fn solve_with_choice(problem: &Problem, choice: SolverChoice, assembly_seconds: f64) -> Result<Solution> {
    let banded = !matches!(problem.neighbours, crate::model::Neighbours::Graph { .. });
    let order = if banded {
        [SolverChoice::Clarabel, SolverChoice::Highs]
    } else {
        [SolverChoice::Highs, SolverChoice::Clarabel]
    };
    let candidates: Vec<SolverChoice> = match choice {
        SolverChoice::Auto => order.into_iter().filter(|c| c.backend().is_ok()).collect(),
        other => vec![other],
    };
    let start = Instant::now();
    let mut fallback: Option<Solution> = None;
    let mut tried = Vec::new();
    let mut last_err = None;
    for c in candidates {
        match solve_problem(problem, c.backend()?.as_ref(), assembly_seconds) {
            Ok(s) if s.status == Status::Optimal => {
                return Ok(with_attempts(s, &tried, start));
            }
            Ok(s) => {
                tried.push(format!("{}: {}", s.solver, s.status));
                let gap = |x: &Solution| x.relative_gap.unwrap_or(f64::INFINITY);
                if fallback.as_ref().is_none_or(|f| gap(&s) < gap(f)) {
                    fallback = Some(s);
                }
            }
            Err(e) => {
                tried.push(e.to_string());
                last_err = Some(e);
            }
        }
    }
    match fallback {
        Some(s) => Ok(with_attempts(s, &tried, start)),
        None => Err(last_err.unwrap_or_else(|| Error::Solver("no solver backend compiled in".into()))),
    }
}

/// Charge all attempts' time to the kept solution and record what was tried before it.
fn with_attempts(mut s: Solution, tried: &[String], start: Instant) -> Solution {
    s.seconds = start.elapsed().as_secs_f64();
    if !tried.is_empty() {
        s.solver_detail = format!("{} (attempts: {})", s.solver_detail, tried.join("; "));
    }
    s
}

/// Solve a model for each ε in `epsilons` (the model's own list when `None`). `Auto` uses the
/// certified chain solver when the neighbour relation is the chain y ~ y ± 1 and the program is
/// the plain Bayes one (no δ, not minimax); otherwise the LP backends.
pub fn solve_model(model: &Model, epsilons: Option<&[f64]>, choice: SolverChoice) -> Result<Vec<Solution>> {
    let eps_list = epsilons.unwrap_or(&model.epsilons);
    crate::model::validate_epsilons(eps_list, "--eps")?;
    let plain = Program::for_model(model).is_plain();
    let choice = match choice {
        SolverChoice::Auto if plain && model.family.neighbours().is_chain() => SolverChoice::Chain,
        c => c,
    };
    if choice == SolverChoice::Chain {
        if !plain {
            return Err(Error::input(format!(
                "--solver chain solves the plain Bayes program only (model {} has objective = \"minimax\" or delta > 0)",
                model.name()
            )));
        }
        return chain::solve_model(model, eps_list);
    }
    choice.backend()?;
    let start = Instant::now();
    let cost = Arc::new(cost_matrix(model)?);
    if model.objective == crate::model::Objective::Minimax {
        let (n_obs, n_out) = cost.dim();
        crate::lp::check_dense_size(&[(model.theta.len(), n_obs * n_out)], 0)?;
    }
    let program = Program::for_model(model);
    let cost_seconds = start.elapsed().as_secs_f64();
    eps_list
        .iter()
        .map(|&eps| {
            let t = Instant::now();
            let problem = Problem::try_with_program(cost.clone(), model.family.neighbours(), eps, program.clone())?;
            let assembly = cost_seconds + t.elapsed().as_secs_f64();
            solve_with_choice(&problem, choice, assembly)
        })
        .collect()
}
