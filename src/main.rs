//! The `ubapp` command line: parse, call the library, print. Exit codes: 0 success, 2 bad input,
//! 1 any other failure.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod cli;

/// Optimal differentially private Bayes point estimators by linear programming (UBaPP).
#[derive(Parser)]
#[command(name = "ubapp", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Solve the UBaPP LP of a model file for each ε and report the optimal Bayes risk.
    Solve {
        /// Model file (TOML), e.g. models/bernoulli-k100.toml.
        model: PathBuf,
        /// Comma-separated privacy levels; default: the model's `epsilon` list.
        #[arg(long, value_delimiter = ',', allow_negative_numbers = true)]
        eps: Option<Vec<f64>>,
        /// auto | highs | highs-simplex | highs-ipm | clarabel | good-lp | good-lp-microlp | chain
        /// (auto = chain when the neighbour relation is y ~ y ± 1, else the fastest LP backend).
        #[arg(long, default_value = "auto")]
        solver: String,
        /// Print only a JSON array, one object per ε.
        #[arg(long)]
        json: bool,
        /// Write the solved P with its grids as JSON (one ε only).
        #[arg(long)]
        out: Option<PathBuf>,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Solve { model, eps, solver, json, out } => {
            cli::solve::run(&model, eps.as_deref(), &solver, json, out.as_deref())
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(if e.is_input() { 2 } else { 1 })
        }
    }
}
