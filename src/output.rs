//! Writing results: atomic file writes and the JSON form of grids.

use std::io::Write;
use std::path::Path;

use serde_json::{json, Value};

use crate::model::Grid;
use crate::{Error, Result};

/// Write `bytes` to `path` atomically: a temporary file in the same directory, flushed to disk,
/// then renamed over the target. On any failure the temporary file is removed and an existing
/// `path` is left untouched.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let name = path.file_name().ok_or_else(|| Error::argument(path.display().to_string(), "is not a file name"))?;
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
pub(crate) fn grid_json(grid: &Grid) -> Value {
    if grid.dim() == 1 {
        json!(grid.values())
    } else {
        Value::Array(grid.points().rows().into_iter().map(|r| json!(r.to_vec())).collect())
    }
}
