//! `ubapp report MODEL --out DIR [--eps LIST] [--solver NAME] [--seed S]`: one page (HTML and
//! Markdown) a colleague can read, with the artifacts and the commands that reproduce it.

use std::path::PathBuf;

use ubapp::model::Model;
use ubapp::report::{Report, ReportOptions};
use ubapp::solve::{SolveOptions, SolverChoice};
use ubapp::{Error, Result};

/// Flags of `report`.
#[derive(clap::Args)]
pub struct Args {
    /// Model file (TOML).
    model: PathBuf,
    /// Directory to write (must not exist, be empty, or hold an earlier ubapp output, which is
    /// replaced whole; written beside it and renamed into place).
    #[arg(long)]
    out: PathBuf,
    /// Comma-separated privacy levels; default: the model's `epsilon` list.
    #[arg(long, value_delimiter = ',', allow_negative_numbers = true)]
    eps: Option<Vec<f64>>,
    /// Solver (as for `solve`).
    #[arg(long, value_parser = super::params::solver(), default_value_t = SolverChoice::Auto)]
    solver: SolverChoice,
    /// Seed of the baselines' Monte-Carlo risks (as for `compare`).
    #[arg(long, default_value_t = 0)]
    seed: u64,
}

/// A report as asked for: the flags checked, the model file read.
struct ReportRun {
    model: Model,
    out: PathBuf,
    options: ReportOptions,
}

impl Args {
    /// The flags as validated library options, before any solve: the output directory may be
    /// written (nothing unrelated is ever overwritten), every ε is finite and > 0, the model
    /// validates.
    fn validate(self) -> Result<ReportRun> {
        if let Some(eps) = &self.eps {
            ubapp::model::validate_epsilons(eps, "--eps")?;
        }
        let model = Model::load(&self.model)?;
        ubapp::report::check_report_dir(&self.out, "--out", &super::common::inputs(&self.model, &model))?;
        let model_text =
            std::fs::read_to_string(&self.model).map_err(|source| Error::Io { path: self.model.clone(), source })?;
        let options = ReportOptions {
            eps: self.eps,
            solve: SolveOptions {
                solver: self.solver,
                memory: super::solve::memory_budget(),
                ..SolveOptions::default()
            },
            seed: self.seed,
            model_arg: self.model.display().to_string(),
            model_text: Some(model_text),
            out_arg: self.out.display().to_string(),
        };
        Ok(ReportRun { model, out: self.out, options })
    }
}

/// Run the command.
pub fn run(args: Args) -> Result<()> {
    let model_path = args.model.clone();
    let ReportRun { model, out, options } = args.validate()?;
    let report = Report::build(&model, &options, &mut |line| eprintln!("{line}"))
        .map_err(|e| super::common::name_model_file(e, &model_path))?;
    report.write(&out, "--out")?;
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
