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
    /// `--eps` (comma-separated).
    pub eps: Option<String>,
    /// `--trials` (comma-separated).
    pub trials: Option<String>,
    /// `--methods` (comma-separated).
    pub methods: Option<String>,
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
        Some(list) => Method::parse_list(&items(list))?,
        None => Method::ALL.to_vec(),
    };
    let eps = a.eps.as_deref().map(|s| parse_list::<f64>(s, "--eps", "a number")).transpose()?;
    let trials = a.trials.as_deref().map(|s| parse_list::<u64>(s, "--trials", "a whole number")).transpose()?;
    let model = Model::load(a.model)?;
    #[allow(unreachable_patterns)]
    let default_trials = match model.family() {
        Family::Binomial { trials } => *trials,
        _ => 0,
    };
    let opts = CompareOptions {
        eps: eps.unwrap_or_else(|| model.epsilons().to_vec()),
        trials: trials.unwrap_or_else(|| vec![default_trials]),
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

/// The non-empty comma-separated items of a flag's value.
fn items(s: &str) -> Vec<String> {
    s.split(',').map(str::trim).filter(|x| !x.is_empty()).map(String::from).collect()
}

/// Parse a comma-separated list (emptiness is checked by the library's validation).
fn parse_list<T: std::str::FromStr>(s: &str, flag: &str, what: &str) -> Result<Vec<T>> {
    items(s)
        .iter()
        .map(|x| x.parse().map_err(|_| ubapp::Error::argument(flag, format!("\"{x}\" is not {what}"))))
        .collect()
}
