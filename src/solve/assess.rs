//! Our checks of a solver's answer, made once per candidate point: residuals, the δ spent, the
//! objective, the Lagrangian bound from the multipliers (proven in directed rounding), and the mechanism that would be released
//! (P repaired, quantised and certified by [`crate::certify::best_repair`]) with the gap measured
//! from *it*. A solver's "optimal" stands only when these confirm it. A candidate kept with its
//! assessment and who produced it is a [`Judged`].

use ndarray::Array2;
use serde::Serialize;

use super::backend::{Producer, RawSolution};
use super::Status;
use crate::certify::{best_repair, exact_lagrangian_bound, objective_upper, Repaired};
use crate::lp::Problem;
use crate::model::Neighbours;

/// Relative gap (objective − certified lower bound) / objective that our checks accept in a
/// solution called optimal.
pub const CHECK_TOLERANCE: f64 = 1e-7;

/// Largest DP-row violation, column-sum error or negative entry (absolute, on probabilities) that
/// our checks accept in a solution called optimal. Solver tolerances are 1e-10 on the scaled LP; a
/// point infeasible by more can sit measurably below the true optimum (seen: 4e-9 violations with a
/// risk 3e-7 below the certified optimum).
pub(crate) const FEASIBILITY_TOLERANCE: f64 = 1e-9;

/// What our checks measure of a returned P.
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
    pub(crate) fn of(p: &Array2<f64>, neighbours: &Neighbours, eps: f64) -> Residuals {
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

/// The measurements reported with every solution (flattened into `solve --json`).
#[derive(Debug, Clone, Serialize)]
pub struct Checks {
    /// Largest P\[k,a\] − e^ε P\[k,b\] in the returned P (≤ 0: no violation).
    pub max_dp_violation: f64,
    /// Largest |Σ_k P\[k,i\] − 1|.
    pub max_column_error: f64,
    /// Smallest entry of P (negative values are solver round-off).
    pub min_entry: f64,
    /// Lower bound on the optimum from the returned multipliers or the chain solver's dual
    /// certificate (if any), evaluated in directed rounding over the LP as stored.
    pub dual_bound: Option<f64>,
    /// True when `dual_bound` is proven: every operation rounded towards the safe side and e^ε
    /// replaced by a rigorous upper bound, so `objective − dual_bound` bounds the distance to the
    /// optimum as a theorem about the stored costs, not a floating-point estimate.
    pub dual_bound_exact: bool,
    /// (certified_objective − dual_bound) / certified_objective where a certified mechanism was
    /// built (else objective in its place): how far what `ubapp solve --out` releases can be from
    /// the optimum. The released objective is then summed from its integer weights with every
    /// rounding upwards, so with a proven bound the gap is proven too. Measured from a *feasible* point: the returned P may sit below the optimum.
    pub relative_gap: Option<f64>,
    /// The LP's objective at the returned P, unscaled: the Bayes risk, or for a minimax program the
    /// worst-case risk over the parameter grid.
    pub objective: f64,
    /// The objective of the exactly certified mechanism built from P by repair and quantisation
    /// (`None` when it was not built, or P is too far from feasible to repair).
    pub certified_objective: Option<f64>,
    /// max_j R(θ_j) over the parameter grid (minimax programs only).
    pub worst_case_risk: Option<f64>,
    /// δ of the program (0 for pure ε-DP).
    pub delta: f64,
    /// δ the returned P actually spends at ε: max over ordered neighbour pairs of
    /// Σ_k max(0, P\[k,a\] − e^ε P\[k,b\]).
    pub delta_spent: f64,
}

impl Checks {
    /// Residuals of a point with a bound and no released mechanism (the chain solver's, whose
    /// bound is its own certificate).
    pub(crate) fn of_exact(residuals: Residuals, objective: f64, dual_bound: f64, relative_gap: f64) -> Checks {
        Checks {
            max_dp_violation: residuals.max_dp_violation,
            max_column_error: residuals.max_column_error,
            min_entry: residuals.min_entry,
            dual_bound: Some(dual_bound),
            dual_bound_exact: true,
            relative_gap: Some(relative_gap),
            objective,
            certified_objective: None,
            worst_case_risk: None,
            delta: 0.0,
            delta_spent: 0.0,
        }
    }
}

/// What our checks make of one candidate point.
pub(crate) struct Assessment {
    /// P (|Θ̃| × |Y|).
    pub p: Array2<f64>,
    /// The measurements.
    pub checks: Checks,
    /// What would be released from P (`None` when P could not be repaired).
    pub release: Option<Repaired>,
    /// Private (pure ε: every DP row; (ε, δ): every pair spends ≤ δ) and a distribution to
    /// FEASIBILITY_TOLERANCE.
    pub feasible: bool,
    /// Feasible, with a gap ≤ CHECK_TOLERANCE where a bound exists.
    pub confirmed: bool,
}

impl Assessment {
    /// Measure a backend's answer: the one place a candidate point is repaired and priced.
    pub(crate) fn of(problem: &Problem, raw: &RawSolution) -> Assessment {
        let p = problem.mechanism_matrix(&raw.x);
        let residuals = Residuals::of(&p, &problem.neighbours, problem.eps);
        let delta_spent = problem.delta_spent(&p);
        let objective = problem.objective_value(&p);
        let delta = problem.program.delta.unwrap_or(0.0);
        let price = |q: &Array2<f64>| problem.objective_value(q);
        let release = match &problem.program.constraints {
            None => best_repair(&problem.neighbours, problem.eps, delta, &p, &price).ok(),
            Some(c) => {
                crate::certify::best_repair_constrained(&problem.neighbours, problem.eps, &c.model, &p, &price).ok()
            }
        };
        let constraint_violation =
            problem.program.constraints.as_ref().map_or(0.0, |c| crate::certify::float_violation(&c.model, &p));
        let certified_objective = release.as_ref().map(|r| r.objective);
        let dual_bound = raw.dp_multipliers.as_ref().map(|mu| {
            let mu: Vec<f64> = mu.iter().map(|m| m * problem.scale).collect();
            exact_lagrangian_bound(problem, &mu)
        });
        // The gap from the released weights' objective rounded up: with the bound rounded down,
        // it is a proven distance from the optimum.
        let released_upper = release.as_ref().map(|r| objective_upper(problem, &r.columns, r.total));
        let relative_gap = dual_bound.map(|d| relative_gap(released_upper.unwrap_or(objective), d));
        let private = match problem.program.delta {
            None => residuals.is_private(),
            Some(d) => delta_spent <= d + FEASIBILITY_TOLERANCE,
        };
        let feasible = private && residuals.is_distribution() && constraint_violation <= FEASIBILITY_TOLERANCE;
        let confirmed = feasible && relative_gap.is_none_or(|g| g <= CHECK_TOLERANCE);
        let checks = Checks {
            max_dp_violation: residuals.max_dp_violation,
            max_column_error: residuals.max_column_error,
            min_entry: residuals.min_entry,
            dual_bound_exact: dual_bound.is_some(),
            dual_bound,
            relative_gap,
            objective,
            certified_objective,
            worst_case_risk: problem.program.risk_rows.as_ref().map(|_| objective),
            delta,
            delta_spent,
        };
        Assessment { p, checks, release, feasible, confirmed }
    }

    /// Take `bound`, another valid lower bound on the same LP's optimum, when it is higher, and
    /// measure the gap from it.
    pub(crate) fn raise_bound(&mut self, bound: Option<f64>) {
        let Some(b) = bound else { return };
        if self.checks.dual_bound.is_none_or(|d| b > d) {
            self.checks.dual_bound = Some(b);
            let upper = self.checks.certified_objective.unwrap_or(self.checks.objective);
            self.checks.relative_gap = Some(relative_gap(upper, b));
        }
    }

    /// Ranking key: feasible first, then the smaller measured gap.
    pub(crate) fn rank(&self) -> (bool, f64) {
        (!self.feasible, self.checks.relative_gap.unwrap_or(f64::INFINITY))
    }
}

/// A backend's kept answer with our assessment of it.
pub(crate) struct Judged {
    /// The backend's answer (possibly the polished vertex).
    pub raw: RawSolution,
    /// Our checks of it.
    pub assessment: Assessment,
    /// Who produced it.
    pub solver: Producer,
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

/// (upper − bound) / |upper|.
pub(crate) fn relative_gap(upper: f64, bound: f64) -> f64 {
    (upper - bound) / upper.abs().max(f64::MIN_POSITIVE)
}
