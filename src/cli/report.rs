//! `ubapp report MODEL --out DIR [--eps LIST] [--solver NAME] [--seed S]`: one page (HTML and
//! Markdown) a colleague can read, with the artifacts and the commands that reproduce it.

use std::path::Path;

use ubapp::model::Model;
use ubapp::report::{Report, ReportOptions};
use ubapp::solve::{SolveOptions, SolverChoice};
use ubapp::{Error, Result};

/// Run the command.
pub fn run(model_path: &Path, out: &Path, eps: Option<Vec<f64>>, solver: SolverChoice, seed: u64) -> Result<()> {
    // The output directory is checked before any work: nothing unrelated is ever overwritten.
    ubapp::report::check_report_dir(out, "--out")?;
    let model = Model::load(model_path)?;
    let model_text =
        std::fs::read_to_string(model_path).map_err(|source| Error::Io { path: model_path.to_path_buf(), source })?;
    let opts = ReportOptions {
        eps,
        solve: SolveOptions { solver, memory: super::solve::memory_budget(), ..SolveOptions::default() },
        seed,
        model_arg: model_path.display().to_string(),
        model_text: Some(model_text),
        out_arg: out.display().to_string(),
    };
    let report = Report::build(&model, &opts, &mut |line| eprintln!("{line}"))?;
    report.write(out, "--out")?;
    for w in &report.warnings {
        eprintln!("{w}");
    }
    outln!(
        "wrote {}: report.html (self-contained), report.md, {} figure(s), {} artifact(s)",
        out.display(),
        report.figures.len(),
        report.certificates.len()
    );
    Ok(())
}
