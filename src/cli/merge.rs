//! `ubapp merge DIR… --out DIR [--json]`: join the shards of a `--shard` sweep into what the
//! unsharded run writes and prints (the kind of sweep is read from the shard files): for
//! `compare`, its risk.csv, plots and table; for `solve`, its `--json` array as DIR/solve.json.

use std::path::{Path, PathBuf};

use ubapp::report::{write_comparison, write_party_comparison};
use ubapp::sweep::parties::PartyGrid;
use ubapp::sweep::solve::SolveGrid;
use ubapp::sweep::{format_of, SweepGrid};
use ubapp::Result;

/// The file a merged solve sweep writes into --out: the unsharded `solve --json` output.
pub const SOLVE_FILE: &str = "solve.json";

/// Flags of `merge`.
#[derive(clap::Args)]
pub struct Args {
    /// The --out directories of every `compare --shard I/N` (or `solve --shard I/N`) run of one sweep.
    #[arg(required = true)]
    shards: Vec<PathBuf>,
    /// Write the merged results into this directory: a comparison's risk.csv and plots (PNG and
    /// SVG), or a solve sweep's solve.json.
    #[arg(long)]
    out: PathBuf,
    /// Print the rows as JSON (what the unsharded run's --json prints).
    #[arg(long)]
    json: bool,
}

/// Run the command: every check before anything is written.
pub fn run(a: Args) -> Result<()> {
    let inputs: Vec<&Path> = a.shards.iter().map(PathBuf::as_path).collect();
    ubapp::report::check_report_dir(&a.out, "--out", &inputs)?;
    if let Ok(out) = a.out.canonicalize() {
        if let Some(shard) = a.shards.iter().find(|s| s.canonicalize().is_ok_and(|s| s == out)) {
            return Err(ubapp::Error::argument(
                "--out",
                format!("{} is one of the shard directories read; give a new directory", shard.display()),
            ));
        }
    }
    let dirs: Vec<&Path> = a.shards.iter().map(PathBuf::as_path).collect();
    let format = format_of(dirs[0])?;
    let written = |files: usize| {
        eprintln!("merged {} shard(s): wrote {files} file(s) to {}", dirs.len(), a.out.display());
    };
    if format == PartyGrid::FORMAT {
        let (cmp, model) = ubapp::sweep::parties::merge_parties(&dirs)?;
        written(write_party_comparison(&a.out, &cmp, &model)?.len());
        super::compare_parties::print_party_comparison(&cmp, a.json);
    } else if format == SolveGrid::FORMAT {
        let (rows, warnings) = ubapp::sweep::solve::merge_solve(&dirs)?;
        let text = serde_json::to_string_pretty(&rows).expect("rows serialise");
        ubapp::output::write_one_file_dir(&a.out, "--out", SOLVE_FILE, format!("{text}\n").as_bytes())?;
        written(1);
        if a.json {
            outln!("{text}");
        } else {
            outln!("{} row(s), one per ε, in {}", rows.len(), a.out.join(SOLVE_FILE).display());
        }
        for w in &warnings {
            eprintln!("{w}");
        }
    } else {
        // A single-holder comparison, or a file of no known sweep (refused naming the format).
        let (cmp, model) = ubapp::sweep::compare::merge(&dirs)?;
        written(write_comparison(&a.out, &cmp, &model)?.len());
        super::compare::print_comparison(&cmp, a.json);
    }
    Ok(())
}
