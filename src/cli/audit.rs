//! `ubapp audit FILE [--samples N] [--seed S]`: empirical DP test of a mechanism file (ε, or δ
//! spent at ε for (ε, δ) files).

use std::path::{Path, PathBuf};

use rand::rngs::StdRng;
use rand::SeedableRng;
use ubapp::mechanism::{audit, AuditError, AuditJudgement, AuditOptions, AuditReport, Release};

use super::progress::Progress;
use super::trust::TrustArgs;
use ubapp::Result;

/// Flags of `audit`.
#[derive(clap::Args)]
pub struct Args {
    /// Mechanism file written by `ubapp solve --out`.
    file: PathBuf,
    /// Draws per observation column.
    #[arg(long, default_value_t = 200_000)]
    samples: u64,
    /// Seed of the draws.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Simultaneous false-alarm probability of all confidence bounds.
    #[arg(long, default_value_t = 0.05)]
    alpha: f64,
    /// Test at most this many neighbour pairs (evenly spaced over the model's edge list).
    #[arg(long, default_value_t = 1000)]
    max_pairs: usize,
    /// Print the report as JSON.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    trust: TrustArgs,
}

/// An audit as asked for, its options checked before the file is read.
struct Audit {
    file: PathBuf,
    options: AuditOptions,
    seed: u64,
    json: bool,
    trust: TrustArgs,
}

impl Args {
    /// The flags as validated library options (each error names its flag).
    fn validate(self) -> Result<Audit> {
        let options = AuditOptions { samples: self.samples, alpha: self.alpha, max_pairs: self.max_pairs };
        options.validate()?;
        Ok(Audit { file: self.file, options, seed: self.seed, json: self.json, trust: self.trust })
    }
}

/// Run the command: options checked, then the file loaded and audited. Exits 1 (an
/// [`AuditError::Contradiction`]) when the empirical bound contradicts the certificate: the ε bound
/// for pure-ε files, the δ bound for (ε, δ) files.
pub fn run(args: Args) -> Result<()> {
    let a = args.validate()?;
    let (m, checked) = super::trust::load(&a.file, &a.trust)?;
    let r = sample_with_progress(&m, &a)?;
    let file = &a.file;
    let json = a.json;
    let what = r.judged.symbol();
    let (found, certified) = match r.judged {
        AuditJudgement::Delta => (r.empirical_delta_lower, r.certified_delta),
        AuditJudgement::Eps => (r.empirical_eps_lower, r.certified_eps),
    };
    let verdict = || {
        if r.consistent {
            Ok(())
        } else {
            Err(AuditError::Contradiction {
                origin: file.display().to_string(),
                what,
                found,
                certified,
                alpha: r.alpha,
            }
            .into())
        }
    };
    if json {
        let mut v = serde_json::to_value(&r).expect("report serialises");
        v["checked_against"] = checked.json().into();
        v["fingerprint"] = m.fingerprint().into();
        outln!("{}", serde_json::to_string_pretty(&v).expect("JSON values serialise"));
        return verdict();
    }
    print_report(&r, file, &checked.sentence());
    verdict()
}

/// The audit's draws; progress goes to stderr every 10 % of the sampled columns (a bar on a
/// terminal; nothing under --json).
fn sample_with_progress(m: &Release, a: &Audit) -> Result<AuditReport> {
    let mut rng = StdRng::seed_from_u64(a.seed);
    // A bar on a terminal (not under --json); the decile lines on stderr otherwise, as before.
    let bar = Progress::new(0, "columns", !a.json);
    let terminal = !a.json && std::io::IsTerminal::is_terminal(&std::io::stderr());
    let mut last_decile = 0;
    let mut progress = |done: usize, total: usize| {
        if terminal {
            bar.set_length(total as u64);
            bar.set(done as u64);
            return;
        }
        let decile = done * 10 / total;
        if decile > last_decile {
            last_decile = decile;
            eprintln!("audit: sampled {done}/{total} columns ({}%)", decile * 10);
        }
    };
    let r = audit(m, a.options, &mut rng, &mut progress)?;
    bar.finish();
    Ok(r)
}

/// The report in words.
fn print_report(r: &AuditReport, file: &Path, checked: &str) {
    let what = r.judged.symbol();
    outln!(
        "audit of {}: {} of {} neighbour pairs, {} columns × {} draws, Clopper–Pearson bounds at level {:.2e} each (α = {} overall)",
        file.display(),
        r.pairs_tested,
        r.pairs_total,
        r.columns_sampled,
        r.samples_per_column,
        r.per_bound_level,
        r.alpha
    );
    outln!("{checked}");
    if r.judged == AuditJudgement::Delta {
        outln!("certified (ε, δ)        = ({}, {})", r.eps, r.certified_delta);
        outln!(
            "empirical δ lower bound = {:.6}  (δ spent at ε = {}, at confidence {})",
            r.empirical_delta_lower,
            r.eps,
            1.0 - r.alpha
        );
        if let Some(w) = &r.delta_witness {
            outln!("  attained at y = {} against y = {} over {} outputs", w.y_a, w.y_b, w.outputs);
        }
    } else {
        outln!("certified ε            = {}", r.certified_eps);
        outln!("empirical ε lower bound = {:.6}  (at confidence {})", r.empirical_eps_lower, 1.0 - r.alpha);
        if let Some(w) = &r.witness {
            outln!(
                "  attained at θ̃ = {}: {} draws at y = {} vs {} at y = {}",
                w.output,
                w.counts.0,
                w.y_a,
                w.counts.1,
                w.y_b
            );
        }
    }
    outln!(
        "{}",
        if r.consistent {
            format!("consistent: the empirical bound does not exceed the certified {what}")
        } else {
            format!("INCONSISTENT: the empirical bound exceeds the certified {what} (probability ≤ α if the mechanism is correct)")
        }
    );
}
