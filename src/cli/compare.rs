//! `ubapp compare MODEL [--eps LIST] [--trials LIST] [--methods LIST] [--out DIR] [--json] [--seed S]
//! [--delta D] [--parties M] [--solver NAME]`.

use std::path::Path;

use ubapp::baselines::{BaselineOptions, Method};
use ubapp::eval::compare::{compare, validate, CompareOptions};
use ubapp::model::{Family, Model};
use ubapp::report::write_comparison;
use ubapp::solve::SolverChoice;
use ubapp::Result;

/// Flags of `compare`, as parsed.
pub struct Args<'a> {
    /// Model file.
    pub model: &'a Path,
    /// `--eps`.
    pub eps: Option<Vec<f64>>,
    /// `--trials`.
    pub trials: Option<Vec<u64>>,
    /// `--methods`.
    pub methods: Option<Vec<String>>,
    /// `--out`.
    pub out: Option<&'a Path>,
    /// `--json`.
    pub json: bool,
    /// `--seed`.
    pub seed: u64,
    /// `--delta`.
    pub delta: f64,
    /// `--parties`.
    pub parties: Option<u64>,
    /// `--solver`.
    pub solver: &'a str,
}

/// Run the command.
pub fn run(a: Args<'_>) -> Result<()> {
    let solver: SolverChoice = a.solver.parse()?;
    let methods = match &a.methods {
        Some(list) => Method::parse_list(list)?,
        None => Method::ALL.to_vec(),
    };
    let model = Model::load(a.model)?;
    #[allow(unreachable_patterns)]
    let default_trials = match model.family {
        Family::Binomial { trials } => trials,
        _ => 0,
    };
    let opts = CompareOptions {
        eps: a.eps.unwrap_or_else(|| model.epsilons.clone()),
        trials: a.trials.unwrap_or_else(|| vec![default_trials]),
        methods,
        baseline: BaselineOptions { delta: a.delta, parties: a.parties, seed: a.seed },
        solver,
        curve_points: 101,
    };
    validate(&opts)?;
    let cmp = compare(&model, &opts, &mut |line| eprintln!("{line}"))?;
    if let Some(dir) = a.out {
        let files = write_comparison(dir, &cmp)?;
        eprintln!("wrote {} file(s) to {}", files.len(), dir.display());
    }
    if a.json {
        println!("{}", serde_json::to_string_pretty(&cmp.rows).expect("rows serialise"));
    } else {
        println!(
            "{:<22} {:>9} {:>10} {:>7} {:>6} {:>14} {:>14} {:>22}",
            "method", "privacy", "eps", "delta", "K", "bayes_risk", "true_risk", "risk_method"
        );
        for r in &cmp.rows {
            let se = if r.bayes_risk_se > 0.0 { format!(" ±{:.1e}", r.bayes_risk_se) } else { String::new() };
            println!(
                "{:<22} {:>9} {:>10} {:>7} {:>6} {:>14.6e} {:>14.6e} {:>22}{se}",
                r.method, r.privacy, r.eps, r.delta, r.trials, r.bayes_risk, r.true_risk, r.risk_method
            );
        }
    }
    Ok(())
}
