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
    /// One data holder of a model the single-holder comparison does not cover (no `--parties`,
    /// no `[parties]` section): the comparison is read as that holder's.
    pub single_holder: bool,
    pub eps: Option<Vec<f64>>,
    pub trials: Option<Vec<u64>>,
    pub methods: Option<Vec<Method>>,
    pub out: Option<PathBuf>,
    pub json: bool,
    pub seed: u64,
    pub delta: f64,
    pub parties: Option<Vec<u64>>,
    pub solver: SolverChoice,
    /// `--max-seconds`.
    pub max_seconds: Option<f64>,
    /// `--gap`.
    pub gap: Option<f64>,
    pub shard: Option<String>,
    pub quiet: bool,
}

/// A party comparison as asked for: the library's options checked, and what to do with the result.
struct PartyRequest {
    opts: PartyOptions,
    methods: Option<Vec<Method>>,
    out: Option<PathBuf>,
    json: bool,
    shard: Option<String>,
    /// No `--parties` and no `[parties]` section: one data holder's comparison.
    single_holder: bool,
    /// `--quiet`: no progress lines.
    quiet: bool,
}

impl PartyArgs {
    /// The flags as checked library options for `model` (each error names its flag).
    fn validate(self, model: &Model) -> Result<PartyRequest> {
        if self.trials.is_some() {
            return Err(Error::argument(
                "--trials",
                "applies to the binomial comparison without parties; with parties the records in all stay the model's and --parties splits them",
            ));
        }
        let eps = self.eps.unwrap_or_else(|| model.epsilons().to_vec());
        validate_party_options(&eps, self.delta)?;
        // Each M once, in the order given (a repeated M would repeat its rows).
        let mut parties: Vec<u64> = Vec::new();
        for m in self.parties.unwrap_or_else(|| vec![model.parties()]) {
            if !parties.contains(&m) {
                parties.push(m);
            }
        }
        let opts = PartyOptions {
            eps,
            parties,
            delta: self.delta,
            seed: self.seed,
            solve: super::common::solve_options(self.solver, self.max_seconds, self.gap),
            risk: RiskOptions { seed: self.seed, ..RiskOptions::default() },
        };
        Ok(PartyRequest {
            opts,
            methods: self.methods,
            out: self.out,
            json: self.json,
            shard: self.shard,
            single_holder: self.single_holder,
            quiet: self.quiet,
        })
    }
}

/// Run the party comparison: the flags checked, then one shard of it (`--shard`) or the whole,
/// its files written and its rows printed.
pub fn run(a: PartyArgs, model: Model) -> Result<()> {
    let r = a.validate(&model)?;
    if let Some(given) = &r.shard {
        return run_shard(&r, &model, given);
    }
    let mut cmp = compare_parties(&model, &r.opts, &mut super::common::progress(r.quiet))?;
    if r.single_holder {
        cmp = cmp.single_holder(&model);
    }
    if let Some(methods) = &r.methods {
        cmp.keep_methods(methods, &model);
    }
    if let Some(dir) = &r.out {
        let files = write_party_comparison(dir, &cmp, &model)?;
        eprintln!("wrote {} file(s) to {}", files.len(), dir.display());
    }
    print_party_comparison(&cmp, r.json);
    Ok(())
}

/// `--shard`: one slice of the party comparison's cases, written as `DIR/shard.json`.
fn run_shard(r: &PartyRequest, model: &Model, given: &str) -> Result<()> {
    let (shard, dir) = super::common::shard_and_dir(given, r.out.as_deref())?;
    let file = party_shard(model, &r.opts, r.methods.as_deref(), shard, &mut super::common::progress(r.quiet))?;
    file.write(dir)?;
    let rows = file.rows();
    eprintln!(
        "wrote shard {}/{} ({} row(s)) to {}; join every shard's directory with `ubapp merge`",
        shard.index,
        shard.count,
        rows.len(),
        dir.join(SHARD_FILE).display()
    );
    print_party_comparison(&PartyComparison { rows, notes: Vec::new(), bounds: Vec::new() }, r.json);
    Ok(())
}

/// The party comparison's table (or `--json`) and its notes on stdout.
pub fn print_party_comparison(cmp: &PartyComparison, json: bool) {
    if json {
        outln!("{}", serde_json::to_string_pretty(&cmp).expect("rows serialise"));
        return;
    }
    // The method column fits the longest id shown (22 at the least).
    let w = cmp.rows.iter().map(|r| r.method.id().len()).max().unwrap_or(0).max(22);
    outln!(
        "{:<w$} {:>9} {:>8} {:>7} {:>7} {:>14} {:>14} {:>12}",
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
            "{:<w$} {:>9} {:>8} {:>7} {:>7} {:>14.6e} {:>14.6e} {:>12}{se}",
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
