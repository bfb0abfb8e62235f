//! `ubapp ledger init|show`: set a dataset's privacy budget once, and print every dataset's
//! releases and totals.

use ubapp::ledger::{show_number as num, Budget, DatasetHistory};
use ubapp::Result;

/// Flags of `ledger`.
#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(clap::Subcommand)]
enum Command {
    /// Create the ledger if needed and set a dataset's budget (once).
    Init(InitArgs),
    /// Print each dataset's budget, spent and remaining totals, and its releases.
    Show(ShowArgs),
}

/// Flags of `ledger init`.
#[derive(clap::Args)]
struct InitArgs {
    /// The ledger: an SQLite file (created if missing), or a postgres:// URL.
    #[arg(long, value_name = "PATH_OR_URL")]
    ledger: String,
    /// The dataset's name.
    #[arg(long, value_name = "NAME")]
    dataset: String,
    /// The total ε its releases may spend (basic composition).
    #[arg(long, value_name = "EPS", allow_negative_numbers = true)]
    budget: f64,
    /// The total δ its releases may spend (0: pure-ε mechanisms only).
    #[arg(long, value_name = "DELTA", default_value_t = 0.0, allow_negative_numbers = true)]
    delta_budget: f64,
}

/// Flags of `ledger show`.
#[derive(clap::Args)]
struct ShowArgs {
    /// The ledger: an SQLite file, or a postgres:// URL.
    #[arg(long, value_name = "PATH_OR_URL")]
    ledger: String,
    /// Only this dataset.
    #[arg(long, value_name = "NAME")]
    dataset: Option<String>,
    /// Print JSON: one object per dataset with its totals and releases.
    #[arg(long)]
    json: bool,
}

/// Run `ledger init` or `ledger show`.
pub fn run(args: Args) -> Result<()> {
    match args.command {
        Command::Init(a) => init(a),
        Command::Show(a) => show(a),
    }
}

fn init(a: InitArgs) -> Result<()> {
    let budget = Budget { eps: a.budget, delta: a.delta_budget };
    // Checked before the ledger is created or touched.
    ubapp::ledger::check_dataset(&a.dataset)?;
    ubapp::ledger::check_budget(budget)?;
    let mut ledger = ubapp::ledger::open(&a.ledger, true)?;
    ledger.init(&a.dataset, budget)?;
    outln!(
        "ledger {}: dataset \"{}\" has a budget of ε = {}{}",
        ledger.location(),
        ubapp::guard::text::sanitize(&a.dataset, ubapp::guard::text::QUOTE_CHARS),
        budget.eps,
        if budget.delta > 0.0 { format!(", δ = {:e}", budget.delta) } else { String::new() }
    );
    Ok(())
}

fn show(a: ShowArgs) -> Result<()> {
    if let Some(d) = &a.dataset {
        ubapp::ledger::check_dataset(d)?;
    }
    let mut ledger = ubapp::ledger::open(&a.ledger, false)?;
    let history = ledger.history(a.dataset.as_deref())?;
    if a.json {
        let rows: Vec<serde_json::Value> = history.iter().map(json_row).collect();
        outln!("{}", serde_json::Value::Array(rows));
        return Ok(());
    }
    let quote = |s: &str| ubapp::guard::text::sanitize(s, ubapp::guard::text::QUOTE_CHARS);
    for d in &history {
        let r = d.remaining();
        outln!(
            "dataset \"{}\": budget ε = {}, δ = {}; spent ε = {}, δ = {}; remaining ε = {}, δ = {}; {} releases",
            quote(&d.dataset),
            num(d.budget.eps),
            num(d.budget.delta),
            num(d.spent.eps),
            num(d.spent.delta),
            num(r.eps),
            num(r.delta),
            d.releases.len()
        );
        for e in &d.releases {
            outln!(
                "  {:>6}  {}  ε = {}  δ = {}  {}  {}  {}  value {}",
                e.id,
                e.time,
                num(e.eps),
                num(e.delta),
                e.composition.name(),
                &e.fingerprint[..e.fingerprint.len().min(12)],
                quote(&e.mechanism),
                quote(&e.value)
            );
        }
    }
    if history.is_empty() {
        outln!("ledger {}: no datasets", ledger.location());
    }
    Ok(())
}

/// A dataset's `--json` object: its totals (and what remains) and its releases.
fn json_row(d: &DatasetHistory) -> serde_json::Value {
    let mut v = serde_json::to_value(d).expect("a history serialises");
    v["remaining"] = serde_json::to_value(d.remaining()).expect("a budget serialises");
    v["count"] = d.releases.len().into();
    v
}
