//! How each backend is run on one LP: its attempts (Clarabel's regularisation ladder, the
//! active-set polish of an unconfirmed answer), each candidate judged once by
//! [`Assessment::of`], the best-ranked kept.

use super::assess::{Assessment, CHECK_TOLERANCE};
use super::backend::{Limits, RawSolution};
use super::{polish, SolveError, SolverChoice, Status};
use crate::lp::Problem;

/// A backend's kept answer with our assessment of it.
pub(crate) struct Judged {
    /// The backend's answer (possibly the polished vertex).
    pub raw: RawSolution,
    /// Our checks of it.
    pub assessment: Assessment,
    /// The backend's name.
    pub solver: String,
}

impl Judged {
    /// The status after our checks: never "optimal" when they do not confirm it.
    pub(crate) fn status(&self) -> Status {
        match self.raw.status {
            Status::Optimal if !self.assessment.confirmed => Status::NearOptimal,
            s => s,
        }
    }
}

/// Clarabel's static regularisation ladder: tried in order until an attempt is confirmed.
#[cfg(feature = "clarabel")]
pub(crate) const CLARABEL_REGULARISATION: [f64; 3] = [1e-13, 1e-10, 1e-8];

/// The ladder on neighbour relations other than the chain, strongest first: on the clipped-Poisson
/// band the weak settings end in numerical trouble (1e-13: NumericalError after 18 iterations;
/// 1e-10: AlmostSolved after 41, gap 2.8e-6) before 1e-8 solves it (60 iterations, certified gap
/// 6.5e-9), so starting there saves two interior points.
#[cfg(feature = "clarabel")]
pub(crate) const CLARABEL_REGULARISATION_GRAPH: [f64; 3] = [1e-8, 1e-10, 1e-13];

/// Run `choice`'s backend on `problem` with its attempts and the polish (`polish` off: the
/// backend's answers only).
pub(crate) fn run(problem: &Problem, choice: SolverChoice, limits: Limits, polish: bool) -> Result<Judged, SolveError> {
    match choice {
        #[cfg(feature = "clarabel")]
        SolverChoice::Clarabel => {
            let mut best: Option<Judged> = None;
            let mut attempts = Vec::new();
            let ladder =
                if problem.neighbours.is_chain() { CLARABEL_REGULARISATION } else { CLARABEL_REGULARISATION_GRAPH };
            for reg in ladder {
                let backend = super::clarabel::ClarabelSolver {
                    static_regularization: reg,
                    ..super::clarabel::ClarabelSolver::with_limits(limits)
                };
                let raw = super::LpSolver::solve(&backend, problem)?;
                let judged = judge(problem, raw, "clarabel", polish, polish::GOOD_ENOUGH_GAP);
                let gap = judged.assessment.checks.relative_gap.unwrap_or(f64::INFINITY);
                attempts.push(format!("regularisation {reg:e}: {}, gap {gap:.1e}", judged.raw.detail));
                let done = judged.assessment.confirmed && judged.raw.status == Status::Optimal;
                if best.as_ref().is_none_or(|b| judged.assessment.rank() < b.assessment.rank()) {
                    best = Some(judged);
                }
                if done {
                    break;
                }
            }
            let mut best = best.expect("the ladder has at least one step");
            if attempts.len() > 1 {
                best.raw.detail = format!("{} (attempts: {})", best.raw.detail, attempts.join("; "));
            }
            Ok(best)
        }
        other => {
            let backend = other.backend(limits)?;
            let raw = backend.solve(problem)?;
            // HiGHS: a vertex that passes our checks stands; the polish is for the occasional
            // inconsistent duals (6.5e-7 of gap at ε = 1 on models/bernoulli-k100.toml) and costs
            // more than it gains on a vertex already certified (vote-share-3way at ε = 2: 10 s).
            let polishes =
                polish && matches!(other, SolverChoice::Highs | SolverChoice::HighsSimplex | SolverChoice::HighsIpm);
            Ok(judge(problem, raw, &backend.name(), polishes, CHECK_TOLERANCE))
        }
    }
}

/// Assess a backend's answer and, when `polish` is on, the program plain, the answer unconfirmed
/// (gap above `polish_above`) and multipliers present, its polished vertex; keep the better-ranked
/// (feasible first, then the smaller measured gap) and say what happened in the detail.
fn judge(problem: &Problem, raw: RawSolution, solver: &str, polish: bool, polish_above: f64) -> Judged {
    let solver = solver.to_string();
    let before = Assessment::of(problem, &raw);
    let gap_before = before.checks.relative_gap.unwrap_or(f64::INFINITY);
    let wanted = polish
        && raw.status.has_solution()
        && problem.program.is_plain()
        && !(before.feasible && gap_before <= polish_above);
    let mu = match raw.dp_multipliers.as_deref() {
        Some(mu) if wanted => mu,
        _ => return Judged { raw, assessment: before, solver },
    };
    let polished = match polish::polish(problem, &raw.x, mu) {
        Ok(p) => p,
        Err(why) => {
            let raw = RawSolution { detail: format!("{}; polish failed: {why}", raw.detail), ..raw };
            return Judged { raw, assessment: before, solver };
        }
    };
    let candidate = RawSolution {
        x: polished.x,
        dp_multipliers: Some(polished.dp_multipliers),
        status: Status::Optimal,
        detail: String::new(),
    };
    let after = Assessment::of(problem, &candidate);
    let gap_after = after.checks.relative_gap.unwrap_or(f64::INFINITY);
    let (cols, rows) = polished.reduced_size;
    let what = format!(
        "polished on a reduced LP of {cols} columns × {rows} rows in {} round(s): gap {gap_before:.1e} → {gap_after:.1e}",
        polished.rounds
    );
    if after.rank() < before.rank() {
        // An exact vertex of the reduced LP is offered as optimal; our checks (feasibility,
        // gap ≤ CHECK_TOLERANCE) still decide what is reported.
        let raw = RawSolution { detail: format!("{}; {what}", raw.detail), status: Status::Optimal, ..candidate };
        Judged { raw, assessment: after, solver }
    } else {
        let raw = RawSolution { detail: format!("{}; not kept: {what}", raw.detail), ..raw };
        Judged { raw, assessment: before, solver }
    }
}
