//! Reports: CSV and plots (PNG and SVG through `plotters`, text drawn with an embedded DejaVu Sans
//! font, so no system font library is needed). Every file is written atomically.

pub mod plot;

use std::path::Path;

use crate::eval::compare::{rows_csv, Comparison};
use crate::output::write_atomic;
use crate::{Error, Result};

/// Write `risk.csv` and every plot of `cmp` into `dir` (created if missing). Returns the files written.
pub fn write_comparison(dir: &Path, cmp: &Comparison) -> Result<Vec<String>> {
    std::fs::create_dir_all(dir).map_err(|source| Error::Io { path: dir.to_path_buf(), source })?;
    let mut files = vec!["risk.csv".to_string()];
    write_atomic(&dir.join("risk.csv"), rows_csv(&cmp.rows).as_bytes())?;
    files.extend(plot::write_all(dir, cmp)?);
    Ok(files)
}
