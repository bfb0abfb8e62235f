//! `ubapp solve MODEL [--eps LIST] [--solver NAME] [--json] [--out FILE]`.

use std::path::Path;

use ubapp::mechanism::{CompactMechanism, Mechanism};
use ubapp::model::{Model, Objective};
use ubapp::solve::{
    estimate, reference_risks, robustness, robustness_warning, solve_model_each, Estimate, ReferenceRisks, Robustness,
    Solution, SolveOptions, SolverChoice,
};

use super::progress::Progress;
use ubapp::{Error, MemoryBudget, Result};

/// The memory budget: `UBAPP_MEMORY_LIMIT` (bytes) when set, else what the OS reports available.
pub fn memory_budget() -> MemoryBudget {
    match std::env::var("UBAPP_MEMORY_LIMIT").ok().and_then(|s| s.trim().parse().ok()) {
        Some(bytes) => MemoryBudget::bytes(bytes),
        None => MemoryBudget::available(),
    }
}

/// Run the command.
pub fn run(
    model_path: &Path,
    eps: Option<&[f64]>,
    solver: SolverChoice,
    json: bool,
    out: Option<&Path>,
    dry_run: bool,
) -> Result<()> {
    let model = Model::load(model_path)?;
    let n_eps = eps.map_or(model.epsilons().len(), <[f64]>::len);
    if out.is_some() && n_eps != 1 {
        return Err(Error::argument(
            "--out",
            format!("writes one mechanism: give exactly one ε with --eps (the model lists {n_eps})"),
        ));
    }
    let options = SolveOptions { solver, memory: memory_budget(), ..SolveOptions::default() };
    let name_file = |e: Error| match e {
        // A size refusal is about the model file: name it.
        Error::TooLarge(size) => Error::TooLarge(size.in_origin(&model_path.display().to_string())),
        other => other,
    };
    if dry_run {
        let est = estimate(&model, &options).map_err(name_file)?;
        print_estimate(&model, &est, n_eps, json);
        return Ok(());
    }
    // Rows of the plain program are printed as each ε is solved; the (ε, δ) and minimax tables
    // (small programs, extra lines first) once all are.
    let streaming = !json && model.objective() == Objective::Bayes && model.delta() == 0.0;
    let progress = Progress::new(n_eps as u64, "ε", !json);
    let eps_list: Vec<f64> = eps.map_or_else(|| model.epsilons().to_vec(), <[f64]>::to_vec);
    if let Some(&first) = eps_list.first() {
        progress.message(format!("solving ε = {first}"));
    }
    let mut printed = 0usize;
    let mut each = |s: &Solution| {
        progress.inc();
        if let Some(next) = eps_list.get(printed + 1) {
            progress.message(format!("solving ε = {next}"));
        }
        if streaming {
            progress.suspend(|| {
                if printed == 0 {
                    print_header(&model, s);
                    print_columns();
                }
                print_row(s);
            });
        }
        printed += 1;
    };
    let solutions = solve_model_each(&model, eps, options, &mut each).map_err(name_file)?;
    progress.finish();
    // The certified mechanism (repaired, quantised, checked exactly; or the compact one) is built
    // before anything is written, so a failure leaves no file behind.
    enum Built {
        Dense(Mechanism),
        Compact(CompactMechanism),
    }
    let built = match out {
        None => None,
        Some(_) if solutions[0].compact().is_some() => {
            Some(Built::Compact(CompactMechanism::from_solution(&model, &solutions[0])?))
        }
        Some(_) => Some(Built::Dense(Mechanism::from_solution(&model, &solutions[0])?)),
    };
    let context = Context::of(&model, &solutions, options.memory);
    if json {
        let rows: Vec<serde_json::Value> = solutions.iter().zip(&context.rows).map(|(s, r)| r.json_row(s)).collect();
        println!("{}", serde_json::to_string_pretty(&rows).expect("solutions serialise"));
    } else if streaming {
        println!("{FOOTNOTE}");
        print_references(&model, &solutions, &context);
    } else {
        print_table(&model, &solutions);
        print_references(&model, &solutions, &context);
    }
    for w in &context.warnings {
        eprintln!("{w}");
    }
    if model.parties() > 1 {
        eprintln!(
            "note: the model has {} parties: this is one party's mechanism (ε-DP for its own records);              `ubapp compare` evaluates the Bayes aggregate of their releases",
            model.parties()
        );
    }
    let note = match (out, &built) {
        (Some(path), Some(Built::Dense(m))) => {
            m.save(path)?;
            let cost = m.provenance.repair_risk_cost.unwrap_or(f64::NAN);
            let claim = if m.delta() > 0.0 {
                format!("certified (ε, δ) = ({}, {}) (target δ {})", m.eps(), m.certified_delta(), m.delta())
            } else {
                format!("certified ε = {} (target {})", m.certified_eps(), m.eps())
            };
            format!(
                "wrote {}: {claim}, Bayes risk {:.10e} (repair and quantisation cost {:+.3e}, {:+.2e} relative)",
                path.display(),
                m.bayes_risk(),
                cost,
                cost / m.bayes_risk()
            )
        }
        (Some(path), Some(Built::Compact(m))) => {
            m.save(path)?;
            let cost = m.provenance.repair_risk_cost.unwrap_or(f64::NAN);
            format!(
                "wrote {}: compact geometric + remap ({} runs), certified ε = {} (target {}), Bayes risk {:.10e} (sampling at ε' costs {:+.3e}, {:+.2e} relative)",
                path.display(),
                m.runs().len(),
                m.certified_eps(),
                m.eps(),
                m.bayes_risk(),
                cost,
                cost / m.bayes_risk()
            )
        }
        _ => return Ok(()),
    };
    if json {
        eprintln!("{note}");
    } else {
        println!("{note}");
    }
    Ok(())
}

const FOOTNOTE: &str = "rel_gap: how far the mechanism --out releases can be from the optimum, (its objective − dual_bound)/objective (LP path: measured after repair)";

/// `--dry-run`: what a solve would take, without solving.
fn print_estimate(model: &Model, est: &Estimate, n_eps: usize, json: bool) {
    if json {
        let mut v = serde_json::to_value(est).expect("an estimate serialises");
        v["model"] = model.name().into();
        v["epsilons"] = n_eps.into();
        println!("{}", serde_json::to_string_pretty(&v).expect("JSON values serialise"));
        return;
    }
    let gib = |b: f64| b / 2f64.powi(30);
    println!(
        "model {}: |Θ| = {}, |Y| = {}, |Θ̃| = {}, {} neighbour pairs; LP {} variables × {} rows",
        model.name(),
        model.theta().len(),
        est.size.observations,
        est.size.outputs,
        est.edges,
        est.size.variables,
        est.size.rows
    );
    println!("route: {} via {} ({})", est.solvers.join(" then "), est.path, est.reason);
    let fits = if est.fits {
        "fits".to_string()
    } else {
        format!("does NOT fit: reduce {} (or raise UBAPP_MEMORY_LIMIT)", est.fields)
    };
    println!(
        "memory: about {:.3} GiB of {:.1} GiB available ({fits})",
        gib(est.memory_bytes as f64),
        gib(est.available_bytes as f64)
    );
    println!(
        "time: roughly {} per ε, {} ε: {} (a rough estimate from this machine's benchmarks; size fields: {})",
        seconds(est.seconds_per_eps),
        n_eps,
        seconds(est.seconds_per_eps * n_eps as f64),
        est.fields
    );
}

fn seconds(s: f64) -> String {
    if s < 1.0 {
        format!("{:.0} ms", (s * 1e3).max(1.0))
    } else if s < 120.0 {
        format!("{s:.0} s")
    } else if s < 7200.0 {
        format!("{:.0} min", s / 60.0)
    } else {
        format!("{:.1} h", s / 3600.0)
    }
}

fn print_header(model: &Model, s0: &Solution) {
    println!(
        "model {}: |Θ| = {}, |Y| = {}, |Θ̃| = {}, {} loss; LP {} variables × {} rows",
        model.name(),
        model.theta().len(),
        s0.size.observations,
        s0.size.outputs,
        model.loss().name(),
        s0.size.variables,
        s0.size.rows
    );
}

fn print_columns() {
    println!(
        "{:>10}  {:>14}  {:>14}  {:>10}  {:>12}  {:>9}  {:>10}  {:>10}",
        "eps", "bayes_risk", "dual_bound", "rel_gap", "status", "seconds", "max_dp_viol", "solver"
    );
}

fn print_row(s: &Solution) {
    let opt = |v: Option<f64>, p: usize| v.map_or("-".to_string(), |x| format!("{x:.p$e}"));
    println!(
        "{:>10}  {:>14.8e}  {:>14}  {:>10}  {:>12}  {:>9.5}  {:>10.1e}  {:>10}",
        s.eps,
        s.bayes_risk,
        opt(s.checks.dual_bound, 8),
        opt(s.checks.relative_gap, 1),
        s.status.to_string(),
        s.seconds,
        s.checks.max_dp_violation,
        s.solver
    );
}

fn print_table(model: &Model, solutions: &[Solution]) {
    let s0 = &solutions[0];
    print_header(model, s0);
    let minimax = model.objective() == Objective::Minimax;
    let delta = model.delta();
    if minimax || delta > 0.0 {
        // What the extra lines show depends on the program: the worst case for minimax, the δ
        // spent for (ε, δ); the main table follows them.
        let mut columns = Vec::new();
        if minimax {
            columns.push("worst_risk");
        }
        if delta > 0.0 {
            columns.push("delta_spent");
        }
        println!(
            "objective {}, δ = {delta}; dual_bound bounds the {} ({} per ε just below, the full table after)",
            if minimax { "minimax" } else { "bayes" },
            if minimax { "worst-case risk over Θ" } else { "Bayes risk" },
            columns.join(" and ")
        );
        for s in solutions {
            let mut line = format!("  eps {:>10}:", s.eps);
            if minimax {
                line += &format!(
                    " worst_risk {}",
                    s.checks.worst_case_risk.map_or("-".to_string(), |w| format!("{w:.8e}"))
                );
            }
            if delta > 0.0 {
                line += &format!(" delta_spent {:.3e}", s.checks.delta_spent);
            }
            println!("{line}");
        }
    }
    print_columns();
    for s in solutions {
        print_row(s);
    }
    println!("{FOOTNOTE}");
}

/// The reference risks and the robustness of each row (see `docs/statistics.md`).
struct Context {
    refs: Option<ReferenceRisks>,
    rows: Vec<RowExtras>,
    /// One-line warnings for stderr (never in `--json` stdout).
    warnings: Vec<String>,
}

/// What `solve` adds to a solution's row.
struct RowExtras {
    refs: Option<ReferenceRisks>,
    /// √bayes_risk, for squared loss only (the root mean squared error in θ's units).
    rmse: Option<f64>,
    /// Worst case and released range (Bayes designs whose profile is small enough to compute).
    robustness: Option<Robustness>,
}

impl Context {
    fn of(model: &Model, solutions: &[Solution], memory: MemoryBudget) -> Context {
        let mut warnings = Vec::new();
        let refs = reference_risks(model, memory).ok();
        if refs.is_none() {
            warnings.push(
                "note: prior_risk and non_private_risk skipped: the cost matrix exceeds the memory budget".to_string(),
            );
        }
        let squared = model.loss().name() == "squared";
        let bayes = model.objective() == Objective::Bayes;
        let mut skipped = false;
        let rows = solutions
            .iter()
            .map(|s| {
                let usable = bayes && s.status.has_solution() && s.has_dense_p();
                let robustness = if usable { robustness(model, &s.p) } else { None };
                skipped |= usable && robustness.is_none();
                if let (Some(r), Some(refs)) = (&robustness, &refs) {
                    warnings.extend(robustness_warning(s.eps, s.bayes_risk, refs, r));
                }
                RowExtras { refs, rmse: squared.then(|| s.bayes_risk.max(0.0).sqrt()), robustness }
            })
            .collect();
        if skipped {
            warnings.push(format!(
                "note: worst_case_risk skipped: |Θ|·|Y|·|Θ̃| exceeds {:e} (computing the risk at every θ would take too long)",
                ubapp::solve::MAX_PROFILE_WORK
            ));
        }
        Context { refs, rows, warnings }
    }
}

impl RowExtras {
    /// The solution's JSON object with `prior_risk`, `non_private_risk`, `rmse` and, for Bayes
    /// designs, `worst_case_risk`, `worst_case_theta`, `released_range`, `range_coverage`.
    fn json_row(&self, s: &Solution) -> serde_json::Value {
        let mut v = serde_json::to_value(s).expect("a solution serialises");
        let o = v.as_object_mut().expect("a solution is an object");
        let num = |x: Option<f64>| x.map_or(serde_json::Value::Null, serde_json::Value::from);
        o.insert("prior_risk".into(), num(self.refs.map(|r| r.prior_risk)));
        o.insert("non_private_risk".into(), num(self.refs.map(|r| r.non_private_risk)));
        o.insert("rmse".into(), num(self.rmse));
        if let Some(r) = &self.robustness {
            o.insert("worst_case_risk".into(), r.worst_case_risk.into());
            o.insert("worst_case_theta".into(), serde_json::to_value(&r.worst_case_theta).expect("floats"));
            o.insert("released_range".into(), serde_json::to_value(&r.released_range).expect("floats"));
            o.insert("range_coverage".into(), r.range_coverage.into());
        }
        v
    }
}

/// The second table: the references every optimum lies between, RMSE and the design's worst case.
fn print_references(model: &Model, solutions: &[Solution], c: &Context) {
    let dash = || "-".to_string();
    let e = |x: Option<f64>| x.map_or_else(dash, |v| format!("{v:.4e}"));
    println!(
        "{:>10}  {:>11}  {:>16}  {:>11}  {:>15}  {:>11}",
        "eps", "prior_risk", "non_private_risk", "rmse", "worst_case_risk", "worst_theta"
    );
    for (s, r) in solutions.iter().zip(&c.rows) {
        let worst = r.robustness.as_ref().map(|w| w.worst_case_risk).or(s.checks.worst_case_risk);
        let theta = r
            .robustness
            .as_ref()
            .map_or_else(dash, |w| w.worst_case_theta.iter().map(|v| format!("{v:.4}")).collect::<Vec<_>>().join(","));
        println!(
            "{:>10}  {:>11}  {:>16}  {:>11}  {:>15}  {:>11}",
            s.eps,
            e(c.refs.map(|x| x.prior_risk)),
            e(c.refs.map(|x| x.non_private_risk)),
            e(r.rmse),
            e(worst),
            theta
        );
    }
    let rmse =
        if model.loss().name() == "squared" { "rmse = √bayes_risk (θ's units)" } else { "rmse: squared loss only" };
    println!("prior_risk: best constant release (ε → 0); non_private_risk: best non-private estimator on the output grid (ε → ∞); {rmse}; worst_case_risk: max over the parameter grid of the risk at θ");
}
