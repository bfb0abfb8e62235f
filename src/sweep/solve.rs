//! A long ε list of one model split into slices: `solve MODEL --shard I/N --out DIR` solves only
//! the ε of slice I ([`solve_shard`]) and stores each one's `solve --json` row; [`merge_solve`]
//! joins the slices into the unsharded `solve --json` array. A case is one ε (`eps=<ε>`); each
//! ε is solved exactly as within the whole list (the LP of one ε depends on nothing else).

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::Result;
use super::{cases_of, Shard, SweepCase, SweepFile, SweepGrid};
use crate::analysis::SolveSummary;
use crate::solve::{Solution, SolvePlan};

/// The options of a solve sweep, as each shard records them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SolveGrid {
    /// ε values, in the order of the rows.
    pub eps: Vec<f64>,
    /// The solver, by its `--solver` name.
    pub solver: String,
    /// `--max-seconds` (each shard's own limit, shared among its ε).
    pub max_seconds: Option<f64>,
}

/// The canonical text of a case: `eps=<ε>` (Rust's shortest round-trip form).
pub fn solve_case_key(eps: f64) -> String {
    format!("eps={eps}")
}

impl SweepGrid for SolveGrid {
    const FORMAT: &'static str = "ubapp-solve-shard";
    const FORMAT_VERSION: u32 = 1;
    const COMMAND: &'static str = "solve --shard";
    const FLAGS: &'static str = "grid (--eps, --solver, --max-seconds)";

    fn case_keys(&self) -> Vec<String> {
        self.eps.iter().map(|&e| solve_case_key(e)).collect()
    }
}

/// One ε's `solve --json` row and the warnings `solve` prints beside it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SolveCase {
    eps: f64,
    row: serde_json::Value,
    warnings: Vec<String>,
}

impl SweepCase for SolveCase {
    fn key(&self) -> String {
        solve_case_key(self.eps)
    }

    fn check(&self) -> std::result::Result<(), (String, String)> {
        let Some(row) = self.row.as_object() else {
            return Err(("row".into(), "must be an object (a row of `solve --json`)".into()));
        };
        match row.get("bayes_risk").and_then(serde_json::Value::as_f64) {
            Some(r) if r.is_finite() && r >= 0.0 => Ok(()),
            _ => Err(("row.bayes_risk".into(), "must be a finite risk ≥ 0".into())),
        }
    }
}

/// What one shard of a solve sweep writes (`shard.json`).
pub type SolveShardFile = SweepFile<SolveGrid, SolveCase>;

impl SolveShardFile {
    /// The `solve --json` rows of this shard's ε, in list order.
    pub fn rows(&self) -> Vec<serde_json::Value> {
        self.cases().iter().map(|c| c.row.clone()).collect()
    }
}

/// The ε of `eps` that slice `shard` holds, in list order.
pub fn shard_eps(eps: &[f64], shard: Shard) -> Vec<f64> {
    eps.iter().copied().filter(|&e| shard.holds_key(&solve_case_key(e))).collect()
}

/// Solve the ε of slice `shard` of `eps` by `plan`, the plan of those ε ([`shard_eps`]; its solve
/// and every row's reference risks read its one cost matrix), recording the list's `max_seconds`
/// (`each` receives each solution as it is solved), and return the shard file to write.
pub fn solve_shard(
    plan: &SolvePlan<'_>,
    eps: &[f64],
    max_seconds: Option<f64>,
    shard: Shard,
    each: &mut dyn FnMut(&Solution),
) -> Result<SolveShardFile> {
    let model = plan.model();
    let grid = SolveGrid { eps: eps.to_vec(), solver: plan.options().solver.to_string(), max_seconds };
    let mine = shard_eps(eps, shard);
    debug_assert_eq!(mine.len(), cases_of(&grid, shard).len());
    debug_assert_eq!(mine, plan.epsilons(), "the plan is the slice's");
    if mine.is_empty() {
        return Ok(SolveShardFile::new(model, grid, shard, Vec::new()));
    }
    let solutions = plan.solve_each(each)?;
    let cases = solutions
        .iter()
        .map(|s| {
            // Summarised alone: a row of `solve --json` depends on its own solution only.
            let summary = SolveSummary::of_plan(plan, std::slice::from_ref(s));
            let row = summary.json_rows(std::slice::from_ref(s)).remove(0);
            SolveCase { eps: s.eps, row, warnings: summary.warnings }
        })
        .collect();
    Ok(SolveShardFile::new(model, grid, shard, cases))
}

/// Join the shards of one solve sweep, read from `dirs`, into the rows of the unsharded `solve
/// --json` (in ε order) and the warnings `solve` prints on stderr (each once): see
/// [`SweepFile::gather`] for what is refused.
pub fn merge_solve(dirs: &[&Path]) -> Result<(Vec<serde_json::Value>, Vec<String>)> {
    let (_, cases) = SolveShardFile::gather(dirs)?;
    let mut warnings: Vec<String> = Vec::new();
    for w in cases.iter().flat_map(|c| &c.warnings) {
        if !warnings.contains(w) {
            warnings.push(w.clone());
        }
    }
    Ok((cases.into_iter().map(|c| c.row).collect(), warnings))
}
