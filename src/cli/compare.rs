//! `ubapp compare MODEL [--eps LIST] [--trials LIST] [--methods LIST] [--out DIR] [--json] [--seed S]
//! [--delta D] [--parties LIST] [--solver NAME]`.
//!
//! A binomial model without parties gets the single-holder comparison; `--parties`, a model with a
//! `[parties]` section, and every other family or loss get the party comparison (`parties.rs`).

use std::path::PathBuf;

use ubapp::compare::{check_model, compare, validate, BaselineOptions, CompareOptions, Method};
use ubapp::model::Model;
use ubapp::report::write_comparison;
use ubapp::solve::SolverChoice;
use ubapp::Result;

/// Flags of `compare`.
#[derive(clap::Args)]
pub struct Args {
    /// Model file (TOML; any family).
    model: PathBuf,
    /// Comma-separated privacy levels; default: the model's `epsilon` list.
    #[arg(long, value_delimiter = ',', allow_negative_numbers = true)]
    eps: Option<Vec<f64>>,
    /// Comma-separated numbers of trials K; default: the model's.
    #[arg(long, value_delimiter = ',', allow_negative_numbers = true)]
    trials: Option<Vec<u64>>,
    /// Comma-separated method ids; default: all that apply.
    #[arg(long, value_delimiter = ',')]
    methods: Option<Vec<Method>>,
    /// Write risk.csv and the plots (PNG and SVG) into this directory.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Print the rows as JSON.
    #[arg(long)]
    json: bool,
    /// Seed of the Monte-Carlo risk estimates (used where no exact route exists).
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// δ of the (ε, δ) methods (gaussian, gaussian-conventional, cape).
    #[arg(long, default_value_t = 1e-5)]
    delta: f64,
    /// Comma-separated numbers of parties M: the records in all are split into M parties (T/M
    /// records each) and each party releases with ε-DP; rows for ubapp-local, geometric-local,
    /// geometric-shares, DSSA, DSAA and CAPE. Several values also plot risk against M.
    #[arg(long, value_delimiter = ',')]
    parties: Option<Vec<u64>>,
    /// LP solver for UBaPP (as for `solve`).
    #[arg(long, value_enum, default_value_t = SolverChoice::Auto)]
    solver: SolverChoice,
}

impl Args {
    fn into_party_args(self) -> super::compare_parties::PartyArgs {
        super::compare_parties::PartyArgs {
            eps: self.eps,
            trials: self.trials,
            methods: self.methods,
            out: self.out,
            json: self.json,
            seed: self.seed,
            delta: self.delta,
            parties: self.parties,
            solver: self.solver,
        }
    }
}

/// Run the command.
pub fn run(a: Args) -> Result<()> {
    let solver = a.solver;
    let model = Model::load(&a.model)?;
    let single_holder = check_model(&model, &a.model.display().to_string());
    if a.parties.is_some() || model.parties() > 1 || single_holder.is_err() {
        return super::compare_parties::run(a.into_party_args(), model);
    }
    let setting = single_holder?;
    let mut methods: Vec<Method> = Vec::new();
    for m in a.methods.unwrap_or_else(|| Method::ALL.iter().copied().filter(|m| !m.party_only()).collect()) {
        if !methods.contains(&m) {
            methods.push(m);
        }
    }
    let opts = CompareOptions {
        eps: a.eps.unwrap_or_else(|| model.epsilons().to_vec()),
        trials: a.trials.unwrap_or_else(|| vec![setting.trials]),
        methods,
        baseline: BaselineOptions { delta: a.delta, parties: None, seed: a.seed },
        solver,
        curve_points: 101,
    };
    validate(&opts)?;
    let cmp = compare(&model, &opts, &mut |line| eprintln!("{line}"))?;
    if let Some(dir) = &a.out {
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
        for c in cmp.caveats() {
            println!("note: {c}");
        }
        println!("note: ubapp-local, geometric-local and geometric-shares compare several parties: add --parties M");
    }
    Ok(())
}
