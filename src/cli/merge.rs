//! `ubapp merge DIR… --out DIR [--json]`: join the shards of a `compare --shard` sweep into the
//! risk.csv, plots and table of the unsharded run.

use std::path::{Path, PathBuf};

use ubapp::compare::merge;
use ubapp::report::write_comparison;
use ubapp::Result;

/// Flags of `merge`.
#[derive(clap::Args)]
pub struct Args {
    /// The --out directories of every `compare --shard I/N` run of one sweep.
    #[arg(required = true)]
    shards: Vec<PathBuf>,
    /// Write risk.csv and the plots (PNG and SVG) into this directory.
    #[arg(long)]
    out: PathBuf,
    /// Print the rows as JSON.
    #[arg(long)]
    json: bool,
}

/// Run the command: every check before anything is written.
pub fn run(a: Args) -> Result<()> {
    ubapp::report::check_report_dir(&a.out, "--out")?;
    if let Ok(out) = a.out.canonicalize() {
        if let Some(shard) = a.shards.iter().find(|s| s.canonicalize().is_ok_and(|s| s == out)) {
            return Err(ubapp::Error::argument(
                "--out",
                format!("{} is one of the shard directories read; give a new directory", shard.display()),
            ));
        }
    }
    let dirs: Vec<&Path> = a.shards.iter().map(PathBuf::as_path).collect();
    let (cmp, model) = merge(&dirs)?;
    let files = write_comparison(&a.out, &cmp, &model)?;
    eprintln!("merged {} shard(s): wrote {} file(s) to {}", dirs.len(), files.len(), a.out.display());
    super::compare::print_comparison(&cmp, a.json);
    Ok(())
}
