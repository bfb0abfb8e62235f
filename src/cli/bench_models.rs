//! `ubapp bench --model FILE… [--solver S] [--repeat N] [--json]`: time `ubapp solve FILE --json`
//! end to end, each run in a fresh child process, and print the median wall time with the
//! solve's own time, its optimum, certified gap and route. The general-graph cases (multinomial
//! lattices, clipped-Poisson bands) live in `benches/models/`; `benches/peers.py` runs the same
//! LPs through SciPy's HiGHS and CVXPY + Clarabel for the side-by-side table.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use serde::Serialize;

use super::{CliError, CliResult as Result};
use crate::cli::bench_cases::median;
use ubapp::solve::SolverChoice;
use ubapp::Error;

/// One model's timing (medians over the runs; the optimum and route from the last run).
#[derive(Debug, Serialize)]
struct ModelRow {
    model: PathBuf,
    eps: f64,
    runs: usize,
    /// Whole process: reading the model, assembly, solve, checks, printing.
    wall_seconds: f64,
    /// The solve as the JSON row reports it (backend and checks).
    solve_seconds: f64,
    assembly_seconds: f64,
    variables: Option<u64>,
    bayes_risk: f64,
    relative_gap: Option<f64>,
    status: String,
    solver: String,
    solver_detail: String,
}

/// Run the command.
pub fn run(models: &[PathBuf], solver: SolverChoice, repeat: usize, json: bool) -> Result<()> {
    if repeat == 0 {
        return Err(Error::argument("--repeat", "must be at least 1").into());
    }
    let exe = std::env::current_exe().map_err(|e| CliError::Bench(format!("cannot find the ubapp executable: {e}")))?;
    let mut rows = Vec::new();
    for model in models {
        // Validate before timing anything: a bad file is the user's error, not a failed case.
        ubapp::model::Model::load(model).map_err(Error::from)?;
        let mut runs: Vec<(f64, serde_json::Value)> = Vec::new();
        for _ in 0..repeat {
            runs.push(run_once(&exe, model, solver)?);
        }
        let (_, last) = runs.last().expect("repeat ≥ 1");
        for (e, solution) in last.as_array().into_iter().flatten().enumerate() {
            let field = |name: &str| solution.get(name).cloned().unwrap_or(serde_json::Value::Null);
            let per_eps = |name: &str| -> f64 {
                median(runs.iter().map(|(_, v)| v[e].get(name).and_then(|x| x.as_f64()).unwrap_or(f64::NAN)).collect())
            };
            let row = ModelRow {
                model: model.clone(),
                eps: field("eps").as_f64().unwrap_or(f64::NAN),
                runs: runs.len(),
                wall_seconds: median(runs.iter().map(|(t, _)| *t).collect()),
                solve_seconds: per_eps("seconds"),
                assembly_seconds: per_eps("assembly_seconds"),
                variables: field("observations").as_u64().zip(field("outputs").as_u64()).map(|(a, b)| a * b),
                bayes_risk: field("bayes_risk").as_f64().unwrap_or(f64::NAN),
                relative_gap: field("relative_gap").as_f64(),
                status: field("status").as_str().unwrap_or("?").to_string(),
                solver: field("solver").as_str().unwrap_or("?").to_string(),
                solver_detail: field("solver_detail").as_str().unwrap_or("").to_string(),
            };
            if !json {
                print_row(&row, rows.is_empty());
            }
            rows.push(row);
        }
    }
    if json {
        outln!("{}", serde_json::to_string_pretty(&rows).expect("rows serialise"));
    }
    Ok(())
}

/// One timed `ubapp solve MODEL --json` in a child process: (wall seconds, its JSON rows).
fn run_once(exe: &Path, model: &Path, solver: SolverChoice) -> Result<(f64, serde_json::Value)> {
    let start = Instant::now();
    let out = Command::new(exe)
        .arg("solve")
        .arg(model)
        .args(["--json", "--solver", &solver.to_string()])
        .output()
        .map_err(|e| CliError::Bench(format!("cannot run ubapp solve: {e}")))?;
    let wall = start.elapsed().as_secs_f64();
    if !out.status.success() {
        return Err(CliError::Bench(format!(
            "ubapp solve {} failed: {}",
            model.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    let rows = serde_json::from_slice(&out.stdout)
        .map_err(|e| CliError::Bench(format!("ubapp solve {} printed unreadable JSON: {e}", model.display())))?;
    Ok((wall, rows))
}

fn print_row(r: &ModelRow, header: bool) {
    if header {
        outln!(
            "{:<40} {:>6} {:>9} {:>9} {:>9} {:>20} {:>9} {:>13} {:>12}",
            "model",
            "eps",
            "vars",
            "wall s",
            "solve s",
            "bayes_risk",
            "gap",
            "status",
            "solver"
        );
    }
    let name = r.model.file_name().map_or_else(|| r.model.display().to_string(), |n| n.to_string_lossy().into_owned());
    outln!(
        "{:<40} {:>6} {:>9} {:>9.3} {:>9.3} {:>20.13e} {:>9} {:>13} {:>12}",
        name,
        r.eps,
        r.variables.map_or("-".into(), |v| v.to_string()),
        r.wall_seconds,
        r.solve_seconds,
        r.bayes_risk,
        r.relative_gap.map_or("-".into(), |g| format!("{g:.1e}")),
        r.status,
        r.solver
    );
}
