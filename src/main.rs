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
    /// Time the LP path and the chain solver on the Bernoulli model at the sizes
    /// (each case in a child process; medians; peak memory from VmHWM).
    Bench {
        /// Privacy level of every case.
        #[arg(long, default_value_t = 0.1, allow_negative_numbers = true)]
        eps: f64,
        /// LP backend for the LP path (auto, clarabel, highs, …).
        #[arg(long, default_value = "clarabel")]
        lp_solver: String,
        /// Runs per case; the median is printed (LP cases above 5e4 variables run once).
        #[arg(long, default_value_t = 3)]
        repeat: usize,
        /// Only the two smallest sizes.
        #[arg(long)]
        quick: bool,
        /// Skip the LP path.
        #[arg(long)]
        no_lp: bool,
        /// Skip LP cases with more than this many variables (K·M).
        #[arg(long, default_value_t = 1_000_000)]
        lp_max_vars: usize,
        /// Print JSON rows instead of the table.
        #[arg(long)]
        json: bool,
        /// Internal: run one case K,M,PATH in this process and print its JSON row.
        #[arg(long, hide = true)]
        single: Option<String>,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Solve { model, eps, solver, json, out } => {
            cli::solve::run(&model, eps.as_deref(), &solver, json, out.as_deref())
        }
        Command::Bench { eps, lp_solver, repeat, quick, no_lp, lp_max_vars, json, single } => {
            cli::bench::run(&cli::bench::Options { eps, lp_solver: &lp_solver, repeat, quick, no_lp, lp_max_vars, json, single: single.as_deref() })
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
