//! Reports: `ubapp report`'s HTML and Markdown pages of one model ([`Report`]), and a comparison's
//! CSV, index page and plots (PNG and SVG through `plotters`, text drawn with an
//! embedded DejaVu Sans font, so no system font library is needed), and a dependency-free SVG heat
//! map of a mechanism over the 2-simplex. Every file is written atomically.

mod comparison_plots;
mod curve;
mod document;
mod html;
mod parties;
mod plot;
mod render;
mod report_dir;
mod simplex_svg;

use std::path::{Path, PathBuf};

pub use comparison_plots::{reference_lines, risk_series};
pub use curve::{curve_csv, write_risk_curve, RiskCurve};
pub use document::{CertificateRow, Figure, Report, ReportOptions, Reproduce, RiskRow};
pub use parties::write_party_comparison;
pub use plot::{
    coinciding, heatmap_svg, line_plot_svg, write_heatmap, write_line_plot, Formats, LinePlot, Reference, Series,
    Shade, COINCIDE_RELATIVE, REFERENCE_COLOR,
};
pub use render::num;
pub use simplex_svg::{default_panels, mechanism_heatmap_svg};

use crate::compare::{curves_csv, rows_csv, CompareError, Comparison};
use crate::guard::{ArgumentError, SizeError};
use crate::mechanism::MechanismError;
use crate::model::{Model, ModelError};
use crate::output::{write_atomic, OutputError};
use crate::solve::SolveError;

/// The report layer's result.
pub(crate) type Result<T, E = ReportError> = std::result::Result<T, E>;

/// A report that could not be drawn or encoded, a simplex heat map asked of data it cannot show,
/// or a lower layer's error met while building a report (its solve, releases, comparison, files).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
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
    /// A caller's value out of range.
    #[error(transparent)]
    Argument(#[from] ArgumentError),
    /// The report's privacy levels, checked as a model's.
    #[error(transparent)]
    Model(Box<ModelError>),
    /// A reference computation that would not fit in memory.
    #[error(transparent)]
    TooLarge(Box<SizeError>),
    /// The report's solve failed.
    #[error(transparent)]
    Solve(Box<SolveError>),
    /// A certified release could not be built or saved.
    #[error(transparent)]
    Mechanism(Box<MechanismError>),
    /// The comparison inside the report failed.
    #[error(transparent)]
    Compare(Box<CompareError>),
    /// A file or directory could not be written.
    #[error(transparent)]
    Output(#[from] OutputError),
}

boxed_from!(ReportError {
    ModelError => Model,
    SizeError => TooLarge,
    SolveError => Solve,
    MechanismError => Mechanism,
    CompareError => Compare,
});

impl ReportError {
    /// True when the fault lies with the caller's input (the CLI's exit 2); drawing and encoding
    /// failures are ours.
    pub fn is_input(&self) -> bool {
        match self {
            ReportError::Argument(_) | ReportError::Model(_) | ReportError::TooLarge(_) => true,
            ReportError::Solve(e) => e.is_input(),
            ReportError::Mechanism(e) => e.is_input(),
            ReportError::Compare(e) => e.is_input(),
            ReportError::Output(e) => e.is_input(),
            ReportError::Draw { .. }
            | ReportError::Encode { .. }
            | ReportError::NotSimplex { .. }
            | ReportError::Shape { .. }
            | ReportError::PanelOutOfRange { .. } => false,
        }
    }
}

/// A directory that could not be created, as the output layer names it.
pub(crate) fn io_error(path: &Path) -> impl FnOnce(std::io::Error) -> ReportError + '_ {
    move |source| OutputError::Io { path: path.to_path_buf(), source }.into()
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
    crate::output::write_dir_atomic::<ReportError>(dir, crate::guard::Parameter::Out.spelled(), &mut |tmp| {
        files = fill_comparison(tmp, cmp, model)?;
        Ok(())
    })?;
    Ok(files)
}

/// The files of [`write_comparison`], into the (temporary) directory `dir`.
fn fill_comparison(dir: &Path, cmp: &Comparison, model: &Model) -> Result<Vec<String>> {
    let data = dir.join("data");
    std::fs::create_dir_all(&data).map_err(io_error(&data))?;
    let mut files = vec!["risk.csv".to_string(), "data/mse_theta.csv".to_string()];
    write_atomic(&dir.join("risk.csv"), rows_csv(&cmp.rows).as_bytes())?;
    write_atomic(&data.join("mse_theta.csv"), curves_csv(&cmp.curves).as_bytes())?;
    files.extend(comparison_plots::write_all(dir, cmp)?);
    let index = html::comparison_index(cmp, &files, model);
    write_atomic(&dir.join("index.html"), index.as_bytes())?;
    files.push("index.html".to_string());
    Ok(files)
}

/// Whether `dir` may receive a report: it does not exist (the nearest existing parent writable),
/// is empty, or is an earlier output of ubapp holding only what it wrote and none of `inputs`
/// (the files and directories the run reads), then replaced whole. Checked before any work; an
/// input error names `flag`.
pub fn check_report_dir(dir: &Path, flag: &str, inputs: &[&Path]) -> Result<()> {
    Ok(crate::output::check_output_dir(dir, flag, inputs)?)
}
