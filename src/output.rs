//! Writing results: atomic file writes and the JSON form of a solved LP.

use std::io::Write;
use std::path::Path;

use serde_json::{json, Value};

use crate::model::{Grid, Model};
use crate::solve::Solution;
use crate::{Error, Result};

/// Write `bytes` to `path` atomically: a temporary file in the same directory, flushed to disk,
/// then renamed over the target. On any failure the temporary file is removed and an existing
/// `path` is left untouched.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let name = path.file_name().ok_or_else(|| Error::input(format!("{}: not a file name", path.display())))?;
    let tmp = dir.join(format!(".{}.{}.tmp", name.to_string_lossy(), std::process::id()));
    let io = |source| Error::Io { path: path.to_path_buf(), source };
    let result = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result.map_err(io)
}

/// Grid points as JSON: plain numbers for a one-dimensional grid, arrays otherwise.
pub fn grid_json(grid: &Grid) -> Value {
    if grid.dim() == 1 {
        json!(grid.values())
    } else {
        Value::Array(grid.points().rows().into_iter().map(|r| json!(r.to_vec())).collect())
    }
}

/// Format version of [`solution_json`].
pub const SOLUTION_FORMAT_VERSION: u32 = 1;

/// A solved LP with its grids: `columns[i][k] = P[k, i]` (one array per observation).
/// This is the raw solver output; it is not yet a certified mechanism.
pub fn solution_json(model: &Model, s: &Solution) -> Value {
    let columns: Vec<Vec<f64>> = s.p.columns().into_iter().map(|c| c.to_vec()).collect();
    json!({
        "format": "ubapp-lp-solution",
        "format_version": SOLUTION_FORMAT_VERSION,
        "tool_version": env!("CARGO_PKG_VERSION"),
        "model": model.spec,
        "eps": s.eps,
        "delta": s.delta,
        "delta_spent": s.delta_spent,
        "bayes_risk": s.bayes_risk,
        "objective": s.objective,
        "worst_case_risk": s.worst_case_risk,
        "solver": s.solver,
        "status": s.status,
        "solver_detail": s.solver_detail,
        "max_dp_violation": s.max_dp_violation,
        "max_column_error": s.max_column_error,
        "dual_bound": s.dual_bound,
        "relative_gap": s.relative_gap,
        "outputs": grid_json(&model.outputs),
        "observations": grid_json(&model.family.observations()),
        "columns": columns,
    })
}
