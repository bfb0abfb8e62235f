//! What `solve` reports beside each solution: the reference risks every optimum lies between,
//! √risk, and for Bayes designs the worst case over the parameter grid and the released range
//! (see `docs/statistics.md`). One place builds the `solve --json` rows, so the command line and
//! the Python package print the same fields from the same serialisation.

use super::{robustness, robustness_warning, Robustness};
use crate::lp::MemoryBudget;
use crate::model::{Model, Objective};
use crate::solve::{reference_risks, PhaseTimes, ReferenceRisks, Solution, SolvePlan};

/// The reference risks and the robustness of each solution of one `solve` run.
#[derive(Debug, Clone)]
pub struct SolveSummary {
    /// Prior risk and non-private risk (`None` when the cost matrix exceeds the memory budget).
    pub refs: Option<ReferenceRisks>,
    /// One entry per solution, in order.
    pub rows: Vec<RowSummary>,
    /// One-line warnings for stderr (never in `--json` stdout).
    pub warnings: Vec<String>,
}

/// What `solve` adds to a solution's row.
#[derive(Debug, Clone)]
pub struct RowSummary {
    /// The run's reference risks.
    pub refs: Option<ReferenceRisks>,
    /// √bayes_risk, for squared loss only (the root mean squared error in θ's units).
    pub rmse: Option<f64>,
    /// Worst case and released range (Bayes designs whose profile is small enough to compute).
    pub robustness: Option<Robustness>,
    /// Where the solve's time went, when it was timed ([`SolveSummary::with_timings`]).
    pub timings: Option<PhaseTimes>,
}

impl SolveSummary {
    /// Summarise `solutions` of `model` (reference risks within `memory`).
    pub fn of(model: &Model, solutions: &[Solution], memory: MemoryBudget) -> SolveSummary {
        SolveSummary::with_refs(model, solutions, reference_risks(model, memory).ok())
    }

    /// Summarise the solutions of `plan` (reference risks from the plan's cost matrix, the one its
    /// solve read).
    pub fn of_plan(plan: &SolvePlan<'_>, solutions: &[Solution]) -> SolveSummary {
        SolveSummary::with_refs(plan.model(), solutions, plan.reference_risks().ok())
    }

    fn with_refs(model: &Model, solutions: &[Solution], refs: Option<ReferenceRisks>) -> SolveSummary {
        let mut warnings = Vec::new();
        if refs.is_none() {
            warnings.push(
                "note: prior_risk and non_private_risk skipped: the cost matrix exceeds the memory budget".to_string(),
            );
        }
        let squared = model.loss().name() == "squared";
        let bayes = model.objective() == Objective::Bayes;
        let mut skipped = false;
        let rows = solutions
            .iter()
            .map(|s| {
                let usable = bayes && s.status.has_solution() && s.has_dense_p();
                let robustness = if usable { robustness(model, &s.p) } else { None };
                skipped |= usable && robustness.is_none();
                if let (Some(r), Some(refs)) = (&robustness, &refs) {
                    warnings.extend(robustness_warning(s.eps, s.bayes_risk, refs, r));
                }
                RowSummary { refs, rmse: squared.then(|| s.bayes_risk.max(0.0).sqrt()), robustness, timings: None }
            })
            .collect();
        if skipped {
            warnings.push(format!(
                "note: worst_case_risk skipped: |Θ|·|Y|·|Θ̃| exceeds {:e} (computing the risk at every θ would take too long)",
                super::MAX_PROFILE_WORK
            ));
        }
        SolveSummary { refs, rows, warnings }
    }

    /// Each row with where its time went: `timings` holds one entry per solution, in order (what
    /// [`crate::solve::Timings::finished`] returns after the solve).
    pub fn with_timings(mut self, timings: Vec<PhaseTimes>) -> SolveSummary {
        for (row, t) in self.rows.iter_mut().zip(timings) {
            row.timings = Some(t);
        }
        self
    }

    /// The `solve --json` array: one object per solution.
    pub fn json_rows(&self, solutions: &[Solution]) -> Vec<serde_json::Value> {
        solutions.iter().zip(&self.rows).map(|(s, r)| r.json_row(s)).collect()
    }
}

impl RowSummary {
    /// The solution's JSON object with `prior_risk`, `non_private_risk`, `rmse` and, for Bayes
    /// designs, `worst_case_risk`, `worst_case_theta`, `released_range`, `range_coverage`; when
    /// timed, `phases` (each phase's `phase` and `seconds`) and `threads`.
    pub fn json_row(&self, s: &Solution) -> serde_json::Value {
        let mut v = serde_json::to_value(s).expect("a solution serialises");
        let o = v.as_object_mut().expect("a solution is an object");
        let num = |x: Option<f64>| x.map_or(serde_json::Value::Null, serde_json::Value::from);
        o.insert("prior_risk".into(), num(self.refs.map(|r| r.prior_risk)));
        o.insert("non_private_risk".into(), num(self.refs.map(|r| r.non_private_risk)));
        o.insert("rmse".into(), num(self.rmse));
        if let Some(r) = &self.robustness {
            o.insert("worst_case_risk".into(), r.worst_case_risk.into());
            o.insert("worst_case_theta".into(), serde_json::to_value(&r.worst_case_theta).expect("floats"));
            o.insert("released_range".into(), serde_json::to_value(&r.released_range).expect("floats"));
            o.insert("range_coverage".into(), r.range_coverage.into());
        }
        if let Some(t) = &self.timings {
            o.insert("phases".into(), serde_json::to_value(&t.phases).expect("phases serialise"));
            o.insert("threads".into(), t.threads.into());
        }
        v
    }
}
