//! `ubapp compare` for data held by several parties (and for every family the single-holder
//! comparison does not cover): validate the flags, run `ubapp::compare::parties`, print and write.

use std::path::PathBuf;

use ubapp::compare::parties::{compare_parties, validate_party_options, PartyComparison, PartyOptions};
use ubapp::compare::Method;
use ubapp::model::Model;
use ubapp::parties::RiskOptions;
use ubapp::report::write_party_comparison;
use ubapp::solve::SolverChoice;
use ubapp::sweep::parties::party_shard;
use ubapp::sweep::SHARD_FILE;
use ubapp::{Error, Result};

/// The `compare` flags, as the party comparison reads them (see `compare::Args`).
pub struct PartyArgs {
    pub eps: Option<Vec<f64>>,
    pub trials: Option<Vec<u64>>,
    pub methods: Option<Vec<Method>>,
    pub out: Option<PathBuf>,
    pub json: bool,
    pub seed: u64,
    pub delta: f64,
    pub parties: Option<Vec<u64>>,
    pub solver: SolverChoice,
    pub shard: Option<String>,
}

/// Run the party comparison.
pub fn run(a: PartyArgs, model: Model) -> Result<()> {
    if a.trials.is_some() {
        return Err(Error::argument(
            "--trials",
            "applies to the binomial comparison without parties; with parties the records in all stay the model's and --parties splits them",
        ));
    }
    let eps = a.eps.unwrap_or_else(|| model.epsilons().to_vec());
    validate_party_options(&eps, a.delta)?;
    // Each M once, in the order given (a repeated M would repeat its rows).
    let mut parties: Vec<u64> = Vec::new();
    for m in a.parties.unwrap_or_else(|| vec![model.parties()]) {
        if !parties.contains(&m) {
            parties.push(m);
        }
    }
    let opts = PartyOptions {
        eps,
        parties,
        delta: a.delta,
        seed: a.seed,
        solver: a.solver,
        risk: RiskOptions { seed: a.seed, ..RiskOptions::default() },
    };
    if let Some(given) = &a.shard {
        let (shard, dir) = super::compare::shard_and_dir(given, a.out.as_deref())?;
        let file = party_shard(&model, &opts, a.methods.as_deref(), shard, &mut |line| eprintln!("{line}"))?;
        file.write(dir)?;
        let rows = file.rows();
        eprintln!(
            "wrote shard {}/{} ({} row(s)) to {}; join every shard's directory with `ubapp merge`",
            shard.index,
            shard.count,
            rows.len(),
            dir.join(SHARD_FILE).display()
        );
        print_party_comparison(&PartyComparison { rows, notes: Vec::new() }, a.json);
        return Ok(());
    }
    let mut cmp = compare_parties(&model, &opts, &mut |line| eprintln!("{line}"))?;
    if let Some(methods) = &a.methods {
        cmp.keep_methods(methods, &model);
    }
    if let Some(dir) = &a.out {
        let files = write_party_comparison(dir, &cmp, &model)?;
        eprintln!("wrote {} file(s) to {}", files.len(), dir.display());
    }
    print_party_comparison(&cmp, a.json);
    Ok(())
}

/// The party comparison's table (or `--json`) and its notes on stdout.
pub fn print_party_comparison(cmp: &PartyComparison, json: bool) {
    if json {
        outln!("{}", serde_json::to_string_pretty(&cmp).expect("rows serialise"));
        return;
    }
    outln!(
        "{:<22} {:>9} {:>8} {:>7} {:>7} {:>14} {:>14} {:>12}",
        "method",
        "privacy",
        "eps",
        "records",
        "M",
        "bayes_risk",
        "true_risk",
        "risk_method"
    );
    for r in &cmp.rows {
        let se = if r.bayes_risk_se > 0.0 { format!(" ±{:.1e}", r.bayes_risk_se) } else { String::new() };
        let m = r.parties.map_or("-".to_string(), |p| p.to_string());
        let records = if r.trials == 0 { "-".to_string() } else { r.trials.to_string() };
        outln!(
            "{:<22} {:>9} {:>8} {:>7} {:>7} {:>14.6e} {:>14.6e} {:>12}{se}",
            r.method,
            r.privacy,
            r.eps,
            records,
            m,
            r.bayes_risk,
            r.true_risk,
            r.risk_method
        );
    }
    for n in &cmp.notes {
        outln!("note: {n}");
    }
}
