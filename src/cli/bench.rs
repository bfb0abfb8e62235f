//! `ubapp bench [--eps E] [--lp-solver NAME] [--repeat N] [--quick] [--no-lp] [--json]`: time the
//! LP path and the chain solver on the Bernoulli model, each case in a fresh child process
//! (so the peak memory, VmHWM, is the case's own), and print medians.

use std::process::Command;

use super::{CliError, CliResult as Result};
use crate::cli::bench_cases::{cvxpy_seconds, median, run_case, BenchPath, BenchRow};
use ubapp::solve::SolverChoice;
use ubapp::Error;

/// Sizes (K, M) and whether the LP path runs there.
const CASES: &[(u64, usize, bool)] = &[
    (100, 100, true),
    (300, 300, true),
    (1000, 300, true),
    (1000, 1000, true),
    (10_000, 10_000, false),
    (1_000_000, 1000, false),
];

/// LP cases above this many variables run once whatever `--repeat` says (they take minutes).
const LP_REPEAT_LIMIT: usize = 50_000;

/// Options of `ubapp bench`'s built-in cases.
struct Options<'a> {
    /// ε of every case.
    pub eps: f64,
    /// LP backend name.
    pub lp_solver: SolverChoice,
    /// Runs per case (median reported).
    pub repeat: usize,
    /// Only the two smallest sizes.
    pub quick: bool,
    /// Skip the LP path.
    pub no_lp: bool,
    /// Skip LP cases with more variables than this.
    pub lp_max_vars: usize,
    /// Print JSON rows instead of the table.
    pub json: bool,
    /// Internal: run one case `K,M,PATH` in this process and print its JSON row.
    pub single: Option<&'a str>,
}

/// Flags of `bench`.
#[derive(clap::Args)]
pub struct Args {
    /// Privacy level of every case.
    #[arg(long, default_value_t = 0.1, allow_negative_numbers = true)]
    eps: f64,
    /// LP backend for the LP path.
    #[arg(long, value_parser = super::params::solver(), default_value_t = SolverChoice::Clarabel)]
    lp_solver: SolverChoice,
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
    /// Time `ubapp solve` on these model files instead (each run a child process, at the
    /// model's own ε list; e.g. the general-graph cases in benches/models/).
    #[arg(long, num_args = 1.., value_name = "MODEL")]
    model: Vec<std::path::PathBuf>,
    /// Solver for `--model` runs.
    #[arg(long, value_parser = super::params::solver(), default_value_t = SolverChoice::Auto)]
    solver: SolverChoice,
}

/// Run the command: `ubapp solve` on the `--model` files, else the built-in cases.
pub fn run(a: Args) -> Result<()> {
    if !a.model.is_empty() {
        return super::bench_models::run(&a.model, a.solver, a.repeat, a.json);
    }
    run_cases(&Options {
        eps: a.eps,
        lp_solver: a.lp_solver,
        repeat: a.repeat,
        quick: a.quick,
        no_lp: a.no_lp,
        lp_max_vars: a.lp_max_vars,
        json: a.json,
        single: a.single.as_deref(),
    })
}

/// Time the built-in cases (or, with `single`, run one in this process).
fn run_cases(o: &Options<'_>) -> Result<()> {
    if !(o.eps.is_finite() && o.eps > 0.0) {
        return Err(Error::argument("--eps", format!("must be a finite number > 0 (got {})", o.eps)).into());
    }
    if let Some(spec) = o.single {
        let parts: Vec<&str> = spec.split(',').collect();
        let bad = || Error::argument("--single", format!("must be K,M,PATH (got \"{spec}\")"));
        if parts.len() != 3 {
            return Err(bad().into());
        }
        let k: u64 = parts[0].parse().map_err(|_| bad())?;
        let m: usize = parts[1].parse().map_err(|_| bad())?;
        let row = run_case(k, m, o.eps, BenchPath::parse(parts[2])?)?;
        outln!("{}", serde_json::to_string(&row).expect("rows serialise"));
        return Ok(());
    }
    if o.repeat == 0 {
        return Err(Error::argument("--repeat", "must be at least 1").into());
    }
    let lp = BenchPath::Lp(o.lp_solver);
    lp_backend_available(lp)?;
    let exe = std::env::current_exe().map_err(|e| CliError::Bench(format!("cannot find the ubapp executable: {e}")))?;
    let mut rows = Vec::new();
    for &(k, m, with_lp) in CASES.iter().take(if o.quick { 2 } else { CASES.len() }) {
        let mut paths = Vec::new();
        if with_lp && !o.no_lp && k as usize * m <= o.lp_max_vars {
            paths.push(lp);
        }
        paths.push(BenchPath::Chain);
        for path in paths {
            let reps = if matches!(path, BenchPath::Lp(_)) && k as usize * m > LP_REPEAT_LIMIT { 1 } else { o.repeat };
            let mut runs = Vec::new();
            for _ in 0..reps {
                let out = Command::new(&exe)
                    .args(["bench", "--eps", &o.eps.to_string(), "--single", &format!("{k},{m},{}", path.name())])
                    .output()
                    .map_err(|e| CliError::Bench(format!("cannot run a bench case: {e}")))?;
                if !out.status.success() {
                    return Err(CliError::Bench(format!(
                        "bench case K = {k}, M = {m}, {} failed: {}",
                        path.name(),
                        String::from_utf8_lossy(&out.stderr).trim()
                    )));
                }
                let row: BenchRow = serde_json::from_slice(&out.stdout)
                    .map_err(|e| CliError::Bench(format!("bench case output unreadable: {e}")))?;
                runs.push(row);
            }
            let row = median_row(runs);
            if !o.json {
                print_row(&row, rows.is_empty(), reps);
            }
            rows.push(row);
        }
    }
    if o.json {
        outln!("{}", serde_json::to_string_pretty(&rows).expect("rows serialise"));
    }
    Ok(())
}

fn lp_backend_available(path: BenchPath) -> Result<()> {
    if let BenchPath::Lp(c) = path {
        if !c.is_available() {
            return Err(Error::argument("--lp-solver", format!("{c} is not compiled into this build")).into());
        }
    }
    Ok(())
}

/// Medians of the timings and memory; the other fields from the first run.
fn median_row(runs: Vec<BenchRow>) -> BenchRow {
    let med = |f: fn(&BenchRow) -> f64| median(runs.iter().map(f).collect());
    let mut row = runs[0].clone();
    row.assembly_seconds = med(|r| r.assembly_seconds);
    row.solve_seconds = med(|r| r.solve_seconds);
    row.certificate_seconds = med(|r| r.certificate_seconds);
    row.peak_kib = runs
        .iter()
        .map(|r| r.peak_kib)
        .collect::<Option<Vec<u64>>>()
        .map(|v| median(v.iter().map(|&x| x as f64).collect()) as u64);
    row
}

fn print_row(r: &BenchRow, header: bool, reps: usize) {
    if header {
        outln!(
            "{:>8} {:>6} {:>14} {:>10} {:>10} {:>10} {:>9} {:>10} {:>9} {:>14} {:>5} {:>12}",
            "K",
            "M",
            "path",
            "assembly",
            "solve",
            "certif.",
            "peak MiB",
            "rel_gap",
            "status",
            "CVXPY/total",
            "runs",
            "bayes_risk"
        );
    }
    let total = r.assembly_seconds + r.solve_seconds + r.certificate_seconds;
    let ratio = cvxpy_seconds(r.trials, r.points).map_or("-".into(), |c| format!("{:.2}x", c / total));
    outln!(
        "{:>8} {:>6} {:>14} {:>9.4}s {:>9.4}s {:>9.4}s {:>9} {:>10} {:>9} {:>14} {:>5} {:>12.6e}",
        r.trials,
        r.points,
        r.path,
        r.assembly_seconds,
        r.solve_seconds,
        r.certificate_seconds,
        r.peak_kib.map_or("-".into(), |k| format!("{:.1}", k as f64 / 1024.0)),
        r.relative_gap.map_or("-".into(), |g| format!("{g:.1e}")),
        r.status,
        ratio,
        reps,
        r.bayes_risk
    );
}
