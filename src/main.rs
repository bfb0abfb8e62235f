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
        /// auto | highs | highs-simplex | highs-ipm | clarabel | good-lp | good-lp-highs |
        /// good-lp-clarabel | good-lp-microlp | chain (auto = chain when the neighbour relation is
        /// y ~ y ± 1 and the program is the plain Bayes one, else Clarabel then HiGHS; HiGHS first on explicit graphs).
        #[arg(long, default_value = "auto")]
        solver: String,
        /// Print only a JSON array, one object per ε.
        #[arg(long)]
        json: bool,
        /// Write the certified mechanism as a JSON artifact (one ε only; see `ubapp verify`).
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Compare UBaPP with the baselines of the literature over ε and K: risk.csv, plots, table.
    Compare(cli::compare::Args),
    /// List the model files in a directory with a one-line description of each.
    Models {
        /// Directory of model files.
        #[arg(default_value = "models")]
        dir: PathBuf,
    },
    /// Re-derive a mechanism file's ε certificate from its integer weights; exit 2 if it fails.
    Verify {
        /// Mechanism file written by `ubapp solve --out`.
        file: PathBuf,
        /// Print the result as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Release values from a verified mechanism file for an observation y (exact sampler).
    Sample {
        /// Mechanism file written by `ubapp solve --out`.
        file: PathBuf,
        /// The observation: a number (e.g. 37 successes), or comma-separated coordinates for a
        /// vector observation (e.g. 3,5,12 for a 3-category count).
        #[arg(long, allow_negative_numbers = true)]
        y: String,
        /// How many independent releases to draw.
        #[arg(long, default_value_t = 1)]
        n: usize,
        /// Seed for reproducible tests only; without it fresh OS randomness is used (as a real
        /// release must).
        #[arg(long)]
        seed: Option<u64>,
        /// Print a JSON array instead of one value per line.
        #[arg(long)]
        json: bool,
    },
    /// Empirical DP test of a mechanism file: sample neighbouring columns, report an ε lower bound.
    Audit {
        /// Mechanism file written by `ubapp solve --out`.
        file: PathBuf,
        /// Draws per observation column.
        #[arg(long, default_value_t = 200_000)]
        samples: u64,
        /// Seed of the draws.
        #[arg(long, default_value_t = 0)]
        seed: u64,
        /// Simultaneous false-alarm probability of all confidence bounds.
        #[arg(long, default_value_t = 0.05)]
        alpha: f64,
        /// Test at most this many neighbour pairs (evenly spaced over the model's edge list).
        #[arg(long, default_value_t = 1000)]
        max_pairs: usize,
        /// Print the report as JSON.
        #[arg(long)]
        json: bool,
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
        Command::Compare(args) => cli::compare::run(args),
        Command::Models { dir } => cli::models::run(&dir),
        Command::Verify { file, json } => cli::verify::run(&file, json),
        Command::Sample { file, y, n, seed, json } => cli::sample::run(&file, &y, n, seed, json),
        Command::Audit { file, samples, seed, alpha, max_pairs, json } => {
            cli::audit::run(&file, samples, seed, alpha, max_pairs, json)
        }
        Command::Bench { eps, lp_solver, repeat, quick, no_lp, lp_max_vars, json, single } => {
            cli::bench::run(&cli::bench::Options {
                eps,
                lp_solver: &lp_solver,
                repeat,
                quick,
                no_lp,
                lp_max_vars,
                json,
                single: single.as_deref(),
            })
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
