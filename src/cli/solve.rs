//! `ubapp solve MODEL [--eps LIST] [--solver NAME] [--json] [--out FILE]`.

use std::path::Path;

use ubapp::mechanism::Mechanism;
use ubapp::model::{Model, Objective};
use ubapp::solve::{solve_model, Solution, SolveOptions, SolverChoice};
use ubapp::{Error, MemoryBudget, Result};

/// The memory budget: `UBAPP_MEMORY_LIMIT` (bytes) when set, else what the OS reports available.
pub fn memory_budget() -> MemoryBudget {
    match std::env::var("UBAPP_MEMORY_LIMIT").ok().and_then(|s| s.trim().parse().ok()) {
        Some(bytes) => MemoryBudget::bytes(bytes),
        None => MemoryBudget::available(),
    }
}

/// Run the command.
pub fn run(model_path: &Path, eps: Option<&[f64]>, solver: SolverChoice, json: bool, out: Option<&Path>) -> Result<()> {
    let model = Model::load(model_path)?;
    let n_eps = eps.map_or(model.epsilons().len(), <[f64]>::len);
    if out.is_some() && n_eps != 1 {
        return Err(Error::argument(
            "--out",
            format!("writes one mechanism: give exactly one ε with --eps (the model lists {n_eps})"),
        ));
    }
    let options = SolveOptions { solver, memory: memory_budget(), ..SolveOptions::default() };
    let solutions = solve_model(&model, eps, options).map_err(|e| match e {
        // A size refusal is about the model file: name it.
        Error::TooLarge(size) => Error::TooLarge(size.in_origin(&model_path.display().to_string())),
        other => other,
    })?;
    // The certified mechanism (repaired, quantised, checked exactly) is built before anything is
    // written, so a failure leaves no file behind.
    let mechanism = out.map(|_| Mechanism::from_solution(&model, &solutions[0])).transpose()?;
    if json {
        println!("{}", serde_json::to_string_pretty(&solutions).expect("solutions serialise"));
    } else {
        print_table(&model, &solutions);
    }
    if let (Some(path), Some(m)) = (out, &mechanism) {
        m.save(path)?;
        let cost = m.provenance.repair_risk_cost.unwrap_or(f64::NAN);
        let claim = if m.delta() > 0.0 {
            format!("certified (ε, δ) = ({}, {}) (target δ {})", m.eps(), m.certified_delta(), m.delta())
        } else {
            format!("certified ε = {} (target {})", m.certified_eps(), m.eps())
        };
        let note = format!(
            "wrote {}: {claim}, Bayes risk {:.10e} (repair and quantisation cost {:+.3e}, {:+.2e} relative)",
            path.display(),
            m.bayes_risk(),
            cost,
            cost / m.bayes_risk()
        );
        if json {
            eprintln!("{note}");
        } else {
            println!("{note}");
        }
    }
    Ok(())
}

fn print_table(model: &Model, solutions: &[Solution]) {
    let s0 = &solutions[0];
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
    println!(
        "{:>10}  {:>14}  {:>14}  {:>10}  {:>12}  {:>9}  {:>10}  {:>10}",
        "eps", "bayes_risk", "dual_bound", "rel_gap", "status", "seconds", "max_dp_viol", "solver"
    );
    let footnote = "rel_gap: how far the mechanism --out releases can be from the optimum, (its objective − dual_bound)/objective (LP path: measured after repair)";
    for s in solutions {
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
    println!("{footnote}");
}
