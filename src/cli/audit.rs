//! `ubapp audit FILE [--samples N] [--seed S]`: empirical DP test of a mechanism file (ε, or δ
//! spent at ε for (ε, δ) files).

use std::path::Path;

use rand::rngs::StdRng;
use rand::SeedableRng;
use ubapp::mechanism::{audit, AuditError, AuditJudgement, AuditOptions};

use super::progress::Progress;
use ubapp::Result;

/// Run the command; progress goes to stderr every 10 % of the sampled columns. Exits 1 (an
/// [`AuditError::Contradiction`]) when the empirical bound contradicts the certificate: the ε bound for pure-ε
/// files, the δ bound for (ε, δ) files.
pub fn run(
    file: &Path,
    samples: u64,
    seed: u64,
    alpha: f64,
    max_pairs: usize,
    json: bool,
    trust: &super::trust::TrustArgs,
) -> Result<()> {
    let (m, checked) = super::trust::load(file, trust)?;
    let mut rng = StdRng::seed_from_u64(seed);
    // A bar on a terminal (not under --json); the decile lines on stderr otherwise, as before.
    let bar = Progress::new(0, "columns", !json);
    let terminal = !json && std::io::IsTerminal::is_terminal(&std::io::stderr());
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
    let r = audit(&m, AuditOptions { samples, alpha, max_pairs }, &mut rng, &mut progress)?;
    bar.finish();
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
    outln!("{}", checked.sentence());
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
    verdict()
}
