//! A solved LP with everything measured about it.

use ndarray::Array2;
use serde::Serialize;

use super::assess::{Checks, Judged};
use super::compact::GeometricRemap;
use super::Status;
use crate::certify::Repaired;
use crate::lp::Problem;

/// The LP's size.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct LpSize {
    /// |Θ̃|.
    pub outputs: usize,
    /// |Y|.
    pub observations: usize,
    /// LP variables.
    pub variables: usize,
    /// LP rows.
    pub rows: usize,
}

impl LpSize {
    /// The size of the chain LP (|Y| observations, neighbours y ~ y ± 1) with `n_out` outputs: the
    /// LP the chain solver answers without building it.
    pub(crate) fn chain(n_obs: usize, n_out: usize) -> LpSize {
        LpSize {
            outputs: n_out,
            observations: n_obs,
            variables: n_obs * n_out,
            rows: n_obs + 2 * n_obs.saturating_sub(1) * n_out,
        }
    }

    pub(crate) fn of(problem: &Problem) -> LpSize {
        LpSize {
            outputs: problem.n_outputs(),
            observations: problem.n_obs(),
            variables: problem.n_vars(),
            rows: problem.n_rows(),
        }
    }
}

/// A solved UBaPP LP for one ε.
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
    /// The route taken and the backend's own word on the outcome.
    pub solver_detail: String,
    /// Wall-clock seconds of the solve (assembly excluded).
    pub seconds: f64,
    /// Seconds to assemble the LP.
    pub assembly_seconds: f64,
    /// The LP's size.
    #[serde(flatten)]
    pub size: LpSize,
    /// What our checks measured.
    #[serde(flatten)]
    pub checks: Checks,
    /// The mechanism P (|Θ̃| × |Y|); empty (0 × 0) when the solve took the compact chain route at
    /// a size where a dense P is not materialised (see [`Solution::compact`]).
    #[serde(skip)]
    pub p: Array2<f64>,
    /// What would be released from P, when the solve already built it.
    #[serde(skip)]
    pub(crate) release: Option<Repaired>,
    /// The compact form (geometric noise + remap) when the compact chain route solved it.
    #[serde(skip)]
    pub(crate) compact: Option<GeometricRemap>,
}

impl Solution {
    pub(crate) fn from_judged(
        problem: &Problem,
        judged: Judged,
        solver_detail: String,
        seconds: f64,
        assembly_seconds: f64,
    ) -> Solution {
        let status = judged.status();
        let mut a = judged.assessment;
        if status == Status::TimeLimit {
            // A stopped solver's point may be infeasible: what stands is the mechanism certified
            // from it.
            if let Some(r) = &a.release {
                a.p = r.probabilities();
                let residuals = super::assess::Residuals::of(&a.p, &problem.neighbours, problem.eps);
                a.checks.max_dp_violation = residuals.max_dp_violation;
                a.checks.max_column_error = residuals.max_column_error;
                a.checks.min_entry = residuals.min_entry;
                a.checks.objective = problem.objective_value(&a.p);
            }
        }
        Solution {
            eps: problem.eps,
            bayes_risk: problem.bayes_risk(&a.p),
            solver: judged.solver.to_string(),
            status,
            solver_detail,
            seconds,
            assembly_seconds,
            size: LpSize::of(problem),
            checks: a.checks,
            p: a.p,
            release: a.release,
            compact: None,
        }
    }

    /// The repaired, quantised and certified mechanism the solve built from P, if it built one
    /// (the LP path always tries; the chain solver leaves it to [`crate::mechanism::Mechanism`]).
    pub fn repaired(&self) -> Option<&Repaired> {
        self.release.as_ref()
    }

    /// The compact mechanism (truncated geometric noise on y, then a remap table) when the compact
    /// chain route solved this ε: what `ubapp solve --out` writes as a compact artifact. Its P is
    /// `p` when that was materialised.
    pub fn compact(&self) -> Option<&GeometricRemap> {
        self.compact.as_ref()
    }

    /// True when `p` holds the dense P.
    pub fn has_dense_p(&self) -> bool {
        self.p.dim() == (self.size.outputs, self.size.observations)
    }
}
