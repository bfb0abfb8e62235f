//! Reports of a comparison: CSV and plots (PNG and SVG through `plotters`, text drawn with an
//! embedded DejaVu Sans font, so no system font library is needed), and a dependency-free SVG heat
//! map of a mechanism over the 2-simplex. Every file is written atomically.

mod parties;
mod plot;
mod simplex_svg;

use std::path::{Path, PathBuf};

pub use parties::write_party_comparison;
pub use plot::{risk_series, write_heatmap, write_line_plot, Formats, LinePlot, Series};
pub use simplex_svg::{default_panels, mechanism_heatmap_svg};

use crate::compare::{rows_csv, Comparison};
use crate::output::write_atomic;
use crate::{Error, Result};

/// A report that could not be drawn or encoded, or a simplex heat map asked of data it cannot show.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// The plotting backend failed while drawing a file.
    #[error("{}: drawing failed: {message}", file.display())]
    Draw {
        /// The file being drawn.
        file: PathBuf,
        /// What the backend said.
        message: String,
    },
    /// The PNG encoder failed.
    #[error("{}: PNG encoding failed: {source}", file.display())]
    Encode {
        /// The file being encoded.
        file: PathBuf,
        /// What the encoder said.
        source: png::EncodingError,
    },
    /// A simplex heat map needs points of dimension 3.
    #[error("a simplex heat map needs three categories (points of dimension 3), got {dim}")]
    NotSimplex {
        /// The dimension of the output points.
        dim: usize,
    },
    /// The mechanism's shape is not |Θ̃| × |Y|.
    #[error("mechanism shape {shape:?} does not match |Θ̃| × |Y| = {outputs} × {observations}")]
    Shape {
        /// The shape of P.
        shape: (usize, usize),
        /// |Θ̃|.
        outputs: usize,
        /// |Y|.
        observations: usize,
    },
    /// A heat-map panel names an observation that does not exist.
    #[error("panel observation index {index} is out of range (|Y| = {observations})")]
    PanelOutOfRange {
        /// The index asked for.
        index: usize,
        /// |Y|.
        observations: usize,
    },
}

/// Write `risk.csv` and every plot of `cmp` into `dir` (created if missing). Returns the files written.
pub fn write_comparison(dir: &Path, cmp: &Comparison) -> Result<Vec<String>> {
    std::fs::create_dir_all(dir).map_err(|source| Error::Io { path: dir.to_path_buf(), source })?;
    let mut files = vec!["risk.csv".to_string()];
    write_atomic(&dir.join("risk.csv"), rows_csv(&cmp.rows).as_bytes())?;
    files.extend(plot::write_all(dir, cmp)?);
    Ok(files)
}
