//! The `ubapp` command line: parse, call the library, print. Exit codes: 0 success, 2 bad input,
//! 1 any other failure.

#![deny(unsafe_op_in_unsafe_fn)]

use std::io::Write as _;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// `println!` for results: a standard output that cannot be written (a full disk, `> /dev/full`)
/// ends the process with one line on stderr and exit code 1, never a panic. (A closed pipe ends it
/// by SIGPIPE first, as command-line tools do; see [`restore_sigpipe`].)
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        if let Err(e) = writeln!(std::io::stdout(), $($arg)*) {
            $crate::stdout_failed(e)
        }
    }};
}

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
    Solve(cli::solve::Args),
    /// Compare UBaPP with the baselines of the literature over ε and K: risk.csv, plots, table.
    Compare(cli::compare::Args),
    /// Join the shards of a `compare --shard I/N` or `solve --shard I/N` sweep into the unsharded run's files and rows.
    Merge(cli::merge::Args),
    /// List the model files in a directory with a one-line description of each.
    Models(cli::models::Args),
    /// Re-derive a mechanism file's ε certificate from its integer weights; exit 2 if it fails.
    Verify(cli::verify::Args),
    /// Release values from a verified mechanism file for an observation y (exact sampler).
    Sample(cli::sample::Args),
    /// Release one value from a verified mechanism for the statistic of a dataset's records (a CSV
    /// column), recorded in the privacy-budget ledger before it is printed.
    Release(cli::release::Args),
    /// The privacy-budget ledger: `init` sets a dataset's budget once, `show` prints its releases
    /// and totals.
    Ledger(cli::ledger::Args),
    /// The exact posterior of θ on the model's grid given released values of a mechanism file:
    /// its mean and an equal-tailed credible interval.
    Posterior(cli::posterior::Args),
    /// The smallest ε (to 1 %), or number of trials K at a given ε, whose certified optimal Bayes
    /// risk meets a target; and the risk-vs-ε curve (--curve DIR).
    Plan(cli::plan::Args),
    /// One page a colleague can read (report.html, self-contained, and report.md): the model in
    /// words, the optimal risks with their references, the worst case, the baselines, the plots,
    /// the mechanism's heat map, the certificates of the artifacts and the commands behind every
    /// number.
    Report(cli::report::Args),
    /// Empirical DP test of a mechanism file: sample neighbouring columns, report an ε lower bound.
    Audit(cli::audit::Args),
    /// Time the LP path and the chain solver on the Bernoulli model from (K, M) = (100, 100) to
    /// (10⁶, 10³) (each case in a child process; medians; peak memory from VmHWM).
    Bench(cli::bench::Args),
}

fn main() -> ExitCode {
    restore_sigpipe();
    // An interrupted command leaves no temporary file or directory behind. Without the handlers
    // (they could not be installed) the default actions stay: nothing worse than before.
    let _ = ubapp::output::cleanup::remove_temporaries_on_signals();
    // The library's messages name parameters; the command line's name its flags.
    ubapp::guard::Parameter::set_spelling(cli::params::flag);
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return usage_error(e),
    };
    // A memory limit that is not a number of bytes is the user's to fix, before any work.
    if let Err(e) = ubapp::MemoryBudget::check_env() {
        let _ = writeln!(std::io::stderr(), "error: {e}");
        return ExitCode::from(2);
    }
    let result: cli::CliResult<()> = match cli.command {
        Command::Solve(args) => cli::solve::run(args).map_err(Into::into),
        Command::Compare(args) => cli::compare::run(args).map_err(Into::into),
        Command::Merge(args) => cli::merge::run(args).map_err(Into::into),
        Command::Models(args) => cli::models::run(args).map_err(Into::into),
        Command::Verify(args) => cli::verify::run(args).map_err(Into::into),
        Command::Sample(args) => cli::sample::run(args).map_err(Into::into),
        Command::Release(args) => cli::release::run(args).map_err(Into::into),
        Command::Ledger(args) => cli::ledger::run(args).map_err(Into::into),
        Command::Posterior(args) => cli::posterior::run(args).map_err(Into::into),
        Command::Plan(args) => cli::plan::run(args).map_err(Into::into),
        Command::Report(args) => cli::report::run(args).map_err(Into::into),
        Command::Audit(args) => cli::audit::run(args).map_err(Into::into),
        Command::Bench(args) => cli::bench::run(args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            // Messages quote what files supplied; escape any control character that got through
            // and keep the line short.
            let text = ubapp::guard::text::sanitize(&e.to_string(), ubapp::guard::text::MESSAGE_CHARS);
            let _ = writeln!(std::io::stderr(), "error: {text}");
            ExitCode::from(e.exit_code())
        }
    }
}

/// Standard output failed: say so in one line and end with exit code 1.
fn stdout_failed(e: std::io::Error) -> ! {
    let _ = writeln!(std::io::stderr(), "error: cannot write the results to standard output: {e}");
    std::process::exit(1)
}

/// Rust ignores SIGPIPE, so a write to a closed pipe (`ubapp solve MODEL | head -1`) would make
/// `println!` panic; restore the default so the process ends quietly, as command-line tools do.
fn restore_sigpipe() {
    #[cfg(unix)]
    // SAFETY: called first thing in main, before any thread exists; SIG_DFL is always valid.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

/// Help and version go out as clap renders them; a usage error becomes one line on stderr (the
/// same shape as every other error) with exit code 2.
fn usage_error(e: clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    if matches!(
        e.kind(),
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    ) {
        e.exit();
    }
    let text = e.render().to_string();
    let line: Vec<&str> =
        text.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with("For more information")).collect();
    let _ = writeln!(std::io::stderr(), "{} (see --help)", ubapp::guard::text::sanitize(&line.join(" "), 1000));
    ExitCode::from(2)
}
