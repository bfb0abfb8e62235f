//! `ubapp release FILE --data DATA.csv --column NAME --ledger LEDGER --dataset NAME`: the model's
//! statistic computed from the records, one value released from the verified mechanism and
//! recorded in the ledger — and printed only once the ledger has committed it.

use std::path::PathBuf;

use rand::rngs::StdRng;
use rand::SeedableRng;
use ubapp::data::{read_csv, DataSource};
use ubapp::{Error, Result};

use super::trust::TrustArgs;

/// Flags of `release`.
#[derive(clap::Args)]
pub struct Args {
    /// Mechanism file written by `ubapp solve --out`.
    file: PathBuf,
    /// The records: a CSV file with a header row, or `-` for standard input.
    #[arg(long, value_name = "FILE.csv")]
    data: String,
    /// The column holding the records (a binomial model's 0/1 records, a Poisson model's counts,
    /// a multinomial model's category indices 0..d−1; repeat it once per category for d 0/1
    /// indicator columns).
    #[arg(long = "column", value_name = "NAME", required = true)]
    columns: Vec<String>,
    /// The ledger every release is recorded in: an SQLite file, or a postgres:// URL.
    #[arg(long, value_name = "PATH_OR_URL")]
    ledger: String,
    /// The dataset's name in the ledger (its budget was set by `ubapp ledger init`).
    #[arg(long, value_name = "NAME")]
    dataset: String,
    /// Seed for reproducible tests only; without it fresh OS randomness is used (as a real
    /// release must).
    #[arg(long, allow_negative_numbers = true)]
    seed: Option<u64>,
    /// Print the ledger's entry as JSON (value, ε, δ, fingerprint, time, totals).
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    trust: TrustArgs,
}

/// Run the command: flags checked, the ledger opened, the mechanism loaded against the trusted
/// model, the records read and their statistic computed (any refusal so far spends nothing), then
/// the recorded release, then the value printed.
pub fn run(args: Args) -> Result<()> {
    ubapp::ledger::check_dataset(&args.dataset)?;
    if args.columns.iter().any(|c| c.trim().is_empty()) {
        return Err(Error::argument("--column", "must name a column of the CSV header (got an empty name)"));
    }
    let mut ledger = ubapp::ledger::open(&args.ledger, false)?;
    let (m, checked) = super::trust::load_for_release(&args.file, &args.trust, "release")?;
    let source = DataSource::parse(&args.data);
    let records = read_csv(&source, &args.columns)?;
    let (i, _) = m.observation_of(&records)?;
    super::trust::warn_if_unchecked(&args.file, &checked);
    // StdRng is a cryptographically secure generator; without --seed it is seeded from the OS.
    let mut rng: StdRng = match args.seed {
        Some(s) => StdRng::seed_from_u64(s),
        None => rand::make_rng(),
    };
    let mechanism = args.file.display().to_string();
    let (_, entry) = m.release_recorded(i, ledger.as_mut(), &args.dataset, &mechanism, &mut rng)?;
    // Committed: from here on the value may be shown.
    if args.json {
        outln!("{}", serde_json::to_string(&entry).expect("an entry serialises"));
    } else {
        outln!("{}", entry.value);
    }
    eprintln!(
        "recorded in ledger {} as release {} of dataset \"{}\" (ε = {}, δ = {}, {})",
        ledger.location(),
        entry.id,
        ubapp::guard::text::sanitize(&entry.dataset, ubapp::guard::text::QUOTE_CHARS),
        entry.eps,
        entry.delta,
        entry.composition.name()
    );
    Ok(())
}
