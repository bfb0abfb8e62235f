//! Writing results: atomic file writes and the JSON form of grids.

use std::io::Write;
use std::path::Path;

use serde_json::{json, Value};

use crate::model::Grid;
use crate::{Error, Result};

/// Write `bytes` to `path` atomically: a temporary file created exclusively, with an
/// unpredictable name, in the same directory (so a planted file or symbolic link cannot be
/// followed), flushed to disk, then renamed over the target. On any failure the temporary file
/// is removed and an existing `path` is left untouched.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    if path.file_name().is_none() {
        return Err(Error::argument(path.display().to_string(), "is not a file name"));
    }
    let io = |source| Error::Io { path: path.to_path_buf(), source };
    let mut builder = tempfile::Builder::new();
    builder.prefix(".ubapp-").suffix(".tmp");
    #[cfg(unix)]
    {
        // Readable as a file written by `File::create` would be (the umask still applies).
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(std::fs::Permissions::from_mode(0o644));
    }
    let mut tmp = builder.tempfile_in(dir).map_err(io)?;
    tmp.write_all(bytes).map_err(io)?;
    tmp.as_file().sync_all().map_err(io)?;
    // Dropping `tmp` on an error above removes it; `persist` renames it (or hands it back).
    tmp.persist(path).map_err(|e| io(e.error))?;
    Ok(())
}

/// Grid points as JSON: plain numbers for a one-dimensional grid, arrays otherwise.
pub(crate) fn grid_json(grid: &Grid) -> Value {
    if grid.dim() == 1 {
        json!(grid.values())
    } else {
        Value::Array(grid.points().rows().into_iter().map(|r| json!(r.to_vec())).collect())
    }
}
