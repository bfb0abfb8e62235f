//! `ubapp compare MODEL [--eps LIST] [--trials LIST] [--methods LIST] [--out DIR] [--json] [--seed S]
//! [--delta D] [--parties LIST] [--solver NAME] [--shard I/N]`.
//!
//! A binomial model without parties gets the single-holder comparison; `--parties`, a model with a
//! `[parties]` section, and every other family or loss get the party comparison
//! (`compare_parties.rs`): the library's `CompareRoute::for_model` decides.

use std::path::PathBuf;

use ubapp::compare::{compare, validate, BaselineOptions, CompareOptions, CompareRoute, Comparison, Method, Row};
use ubapp::model::Model;
use ubapp::report::write_comparison;
use ubapp::solve::SolverChoice;
use ubapp::sweep::compare::compare_shard;
use ubapp::sweep::SHARD_FILE;
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
    #[arg(long, value_delimiter = ',', value_parser = super::params::method())]
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
    #[arg(long, value_parser = super::params::solver(), default_value_t = SolverChoice::Auto)]
    solver: SolverChoice,
    /// Give the UBaPP solves at most S seconds in all (as for `solve`): a design stopped by the
    /// limit is the best certified mechanism found by then, its gap in the notes.
    #[arg(long, value_name = "S")]
    max_seconds: Option<f64>,
    /// Stop the anytime route (the designs too large for an exact route) when the certified
    /// relative gap is at most G, in (0, 1); default 1e-3.
    #[arg(long, value_name = "G")]
    gap: Option<f64>,
    /// Run only slice I of N (0-based) of the cases ((K, ε); for a party comparison each ε's
    /// one-curator row and each (M, ε)) and write DIR/shard.json for `ubapp merge` (needs --out).
    /// `env` takes I and N from a job array's environment (Slurm SLURM_ARRAY_TASK_ID/COUNT;
    /// Kubernetes JOB_COMPLETION_INDEX or HyperQueue HQ_TASK_ID with UBAPP_SHARD_COUNT), `env/N`
    /// takes I from it and N as given.
    #[arg(long, value_name = "I/N|env|env/N")]
    shard: Option<String>,
    /// No progress lines on stderr (errors and the `wrote …` line still show).
    #[arg(short, long)]
    quiet: bool,
}

impl Args {
    fn into_party_args(self, single_holder: bool) -> super::compare_parties::PartyArgs {
        super::compare_parties::PartyArgs {
            single_holder,
            eps: self.eps,
            trials: self.trials,
            methods: self.methods,
            out: self.out,
            json: self.json,
            seed: self.seed,
            delta: self.delta,
            parties: self.parties,
            solver: self.solver,
            max_seconds: self.max_seconds,
            gap: self.gap,
            shard: self.shard,
            quiet: self.quiet,
        }
    }
}

/// Run the command (an error about the model as a whole names its file).
pub fn run(a: Args) -> Result<()> {
    let path = a.model.clone();
    run_named(a).map_err(|e| super::common::name_model_file(e, &path))
}

fn run_named(a: Args) -> Result<()> {
    super::common::check_limits(a.max_seconds, a.gap)?;
    let model = Model::load(&a.model)?;
    if let Some(dir) = &a.out {
        // Before any work: a directory of the user's (or the model file itself) is never written,
        // nor one holding an input of this run.
        ubapp::report::check_report_dir(dir, "--out", &super::common::inputs(&a.model, &model))?;
    }
    let setting = match CompareRoute::for_model(&model, a.parties.is_some(), &a.model.display().to_string()) {
        CompareRoute::SingleHolder(setting) => setting,
        CompareRoute::OneHolder(_) => return super::compare_parties::run(a.into_party_args(true), model),
        CompareRoute::Parties => return super::compare_parties::run(a.into_party_args(false), model),
    };
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
        solve: super::common::solve_options(a.solver, a.max_seconds, a.gap),
        curve_points: 101,
    };
    validate(&opts)?;
    if let Some(given) = &a.shard {
        let (shard, dir) = super::common::shard_and_dir(given, a.out.as_deref())?;
        let file = compare_shard(&model, &opts, shard, &mut super::common::progress(a.quiet))?;
        file.write(dir)?;
        eprintln!(
            "wrote shard {}/{} ({} row(s)) to {}; join every shard's directory with `ubapp merge`",
            shard.index,
            shard.count,
            file.rows().len(),
            dir.join(SHARD_FILE).display()
        );
        print_rows(&file.rows(), &[], a.json);
        return Ok(());
    }
    let cmp = compare(&model, &opts, &mut super::common::progress(a.quiet))?;
    if let Some(dir) = &a.out {
        let files = write_comparison(dir, &cmp, &model)?;
        eprintln!("wrote {} file(s) to {}", files.len(), dir.display());
    }
    print_comparison(&cmp, a.json);
    if !a.json {
        outln!("note: ubapp-local, geometric-local and geometric-shares compare several parties: add --parties M");
    }
    Ok(())
}

/// The comparison's table (or `--json` rows) and its caveats on stdout.
pub fn print_comparison(cmp: &Comparison, json: bool) {
    print_rows(&cmp.rows, &cmp.caveats(), json);
}

fn print_rows(rows: &[Row], caveats: &[String], json: bool) {
    if json {
        outln!("{}", serde_json::to_string_pretty(rows).expect("rows serialise"));
    } else {
        outln!(
            "{:<22} {:>9} {:>10} {:>7} {:>6} {:>14} {:>14} {:>22}",
            "method",
            "privacy",
            "eps",
            "delta",
            "K",
            "bayes_risk",
            "true_risk",
            "risk_method"
        );
        for r in rows {
            let se = if r.bayes_risk_se > 0.0 { format!(" ±{:.1e}", r.bayes_risk_se) } else { String::new() };
            outln!(
                "{:<22} {:>9} {:>10} {:>7} {:>6} {:>14.6e} {:>14.6e} {:>22}{se}",
                r.method,
                r.privacy,
                r.eps,
                r.delta,
                r.trials,
                r.bayes_risk,
                r.true_risk,
                r.risk_method
            );
        }
        for c in caveats {
            outln!("note: {c}");
        }
    }
}
