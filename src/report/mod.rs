//! Reports: `ubapp report`'s HTML and Markdown pages of one model ([`Report`]), and a comparison's
//! CSV, index page and plots (PNG and SVG through `plotters`, text drawn with an
//! embedded DejaVu Sans font, so no system font library is needed), and a dependency-free SVG heat
//! map of a mechanism over the 2-simplex. Every file is written atomically.

mod curve;
mod document;
mod html;
mod parties;
mod plot;
mod render;
mod report_dir;
mod simplex_svg;

use std::path::{Path, PathBuf};

pub use curve::{curve_csv, write_risk_curve, RiskCurve};
pub use document::{CertificateRow, Figure, Report, ReportOptions, Reproduce, RiskRow};
pub use parties::write_party_comparison;
pub use plot::{
    coinciding, heatmap_svg, line_plot_svg, reference_lines, risk_series, write_heatmap, write_line_plot, Formats,
    LinePlot, Reference, Series, Shade, COINCIDE_RELATIVE, REFERENCE_COLOR,
};
pub use render::num;
pub use simplex_svg::{default_panels, mechanism_heatmap_svg};

use crate::compare::{curves_csv, rows_csv, Comparison};
use crate::model::Model;
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

/// Write a comparison into `dir`: `risk.csv` (the table, always at this path),
/// `data/mse_theta.csv` (the risk(θ) curves), the plots in sub-folders (`plots/` risk vs ε and vs K,
/// `mse_theta/`, `heatmaps/`, each as PNG and SVG) and `index.html` (the model in words, the best
/// method per ε, every plot with a caption, every row ranked) linking all of them. The
/// directory is written whole: it must not exist, be empty or hold an earlier output of ubapp
/// (replaced; [`check_report_dir`] says so before any work). Returns the files written, relative
/// to `dir`.
pub fn write_comparison(dir: &Path, cmp: &Comparison, model: &Model) -> Result<Vec<String>> {
    let mut files = Vec::new();
    crate::output::write_dir_atomic::<Error>(dir, "--out", &mut |tmp| {
        files = fill_comparison(tmp, cmp, model)?;
        Ok(())
    })?;
    Ok(files)
}

/// The files of [`write_comparison`], into the (temporary) directory `dir`.
fn fill_comparison(dir: &Path, cmp: &Comparison, model: &Model) -> Result<Vec<String>> {
    let data = dir.join("data");
    std::fs::create_dir_all(&data).map_err(|source| Error::Io { path: data.clone(), source })?;
    let mut files = vec!["risk.csv".to_string(), "data/mse_theta.csv".to_string()];
    write_atomic(&dir.join("risk.csv"), rows_csv(&cmp.rows).as_bytes())?;
    write_atomic(&data.join("mse_theta.csv"), curves_csv(&cmp.curves).as_bytes())?;
    files.extend(plot::write_all(dir, cmp)?);
    let index = html::comparison_index(cmp, &files, model);
    write_atomic(&dir.join("index.html"), index.as_bytes())?;
    files.push("index.html".to_string());
    Ok(files)
}

/// Whether `dir` may receive a report: it does not exist, is empty, or is an earlier output of
/// ubapp (then replaced whole). Checked before any work; an input error names `flag`.
pub fn check_report_dir(dir: &Path, flag: &str) -> Result<()> {
    Ok(crate::output::check_output_dir(dir, flag)?)
}
