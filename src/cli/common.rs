//! What several subcommands share (`solve`, `compare` and its party route, `report`): the checks
//! of `--max-seconds`, `--gap` and `--shard`, the solve options they build, the progress lines'
//! sink, the files a run reads and the model file named in errors about the model as a whole. The
//! subcommands import it and never each other's helpers.

use std::path::{Path, PathBuf};

use ubapp::model::Model;
use ubapp::solve::{Limits, SolveError, SolveOptions, SolverChoice};
use ubapp::sweep::{Shard, ShardError};
use ubapp::{Error, Result};

/// `--max-seconds` (> 0) and `--gap` (in (0, 1)), checked before any work (`solve`, `compare`).
pub fn check_limits(max_seconds: Option<f64>, gap: Option<f64>) -> Result<()> {
    if let Some(s) = max_seconds {
        if !(s.is_finite() && s > 0.0) {
            return Err(Error::argument("--max-seconds", format!("must be a number of seconds > 0 (got {s})")));
        }
    }
    if let Some(g) = gap {
        if !(g > 0.0 && g < 1.0) {
            return Err(Error::argument("--gap", format!("must lie in (0, 1), a relative gap such as 1e-3 (got {g})")));
        }
    }
    Ok(())
}

/// The UBaPP solves' options from `--solver`, `--max-seconds` and `--gap`.
pub fn solve_options(solver: SolverChoice, max_seconds: Option<f64>, gap: Option<f64>) -> SolveOptions {
    SolveOptions {
        solver,
        limits: Limits { seconds: max_seconds, ..Limits::default() },
        gap,
        ..SolveOptions::default()
    }
}

/// The slice `--shard` asks for, with the directory it writes (both checked before any work).
pub fn shard_and_dir<'a>(given: &str, out: Option<&'a Path>) -> Result<(Shard, &'a Path)> {
    let shard = Shard::parse(given, &|name| std::env::var(name).ok())?;
    let Some(dir) = out else { return Err(ShardError::NoOutput.into()) };
    Ok((shard, dir))
}

/// The files a run of `model` (read from `path`) reads: the model file and its CSV files.
pub fn inputs<'a>(path: &'a Path, model: &'a Model) -> Vec<&'a Path> {
    std::iter::once(path).chain(model.csv_files().iter().map(PathBuf::as_path)).collect()
}

/// An error about the model as a whole (its size, its costs) names the model's file.
pub fn name_model_file(e: impl Into<Error>, model_path: &Path) -> Error {
    let e: Error = e.into();
    let origin = model_path.display().to_string();
    match e {
        Error::TooLarge(size) => Error::TooLarge(size.in_origin(&origin)),
        Error::Solve(SolveError::NonFiniteCosts { fields }) if !fields.starts_with(&origin) => {
            SolveError::NonFiniteCosts { fields: format!("{origin}: {fields}") }.into()
        }
        Error::Solve(SolveError::TooSlow { estimated_seconds, limit_seconds, fields })
            if !fields.starts_with(&origin) =>
        {
            SolveError::TooSlow { estimated_seconds, limit_seconds, fields: format!("{fields} in {origin}") }.into()
        }
        other => other,
    }
}

/// The progress lines' sink: stderr, or nothing under `--quiet`.
pub fn progress(quiet: bool) -> impl FnMut(&str) {
    move |line: &str| {
        if !quiet {
            eprintln!("{line}");
        }
    }
}
