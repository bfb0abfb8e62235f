//! `ubapp solve MODEL [--eps LIST] [--solver NAME] [--json] [--out FILE]`.

use std::path::Path;

use ubapp::mechanism::Mechanism;
use ubapp::model::Model;
use ubapp::solve::{solve_model, Solution, SolverChoice};
use ubapp::{Error, Result};

/// Run the command.
pub fn run(model_path: &Path, eps: Option<&[f64]>, solver: &str, json: bool, out: Option<&Path>) -> Result<()> {
    let choice: SolverChoice = solver.parse()?;
    let model = Model::load(model_path)?;
    let n_eps = eps.map_or(model.epsilons.len(), <[f64]>::len);
    if out.is_some() && n_eps != 1 {
        return Err(Error::input(format!(
            "--out writes one mechanism: give exactly one ε with --eps (the model lists {n_eps})"
        )));
    }
    let solutions = solve_model(&model, eps, choice).map_err(|e| match e {
        // Flags are named as such; anything else about the input is the model file's.
        Error::Input(m) if !m.starts_with("--") => Error::Input(format!("{}: {m}", model_path.display())),
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
        model.theta.len(),
        s0.observations,
        s0.outputs,
        model.loss.name(),
        s0.variables,
        s0.rows
    );
    if model.objective == ubapp::model::Objective::Minimax || model.delta > 0.0 {
        println!(
            "objective {}, δ = {}; dual_bound bounds the {} (column worst_risk / delta_spent below)",
            if model.objective == ubapp::model::Objective::Minimax { "minimax" } else { "bayes" },
            model.delta,
            if model.objective == ubapp::model::Objective::Minimax { "worst-case risk over Θ" } else { "Bayes risk" }
        );
        for s in solutions {
            println!(
                "  eps {:>10}: worst_risk {}  delta_spent {:.3e}",
                s.eps,
                s.worst_case_risk.map_or("-".to_string(), |w| format!("{w:.8e}")),
                s.delta_spent
            );
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
            opt(s.dual_bound, 8),
            opt(s.relative_gap, 1),
            s.status.to_string(),
            s.seconds,
            s.max_dp_violation,
            s.solver
        );
    }
    println!("{footnote}");
}
