//! `ubapp sample FILE --y Y [--n N] [--seed S] [--json]`: release values from a verified mechanism.

use std::io::Write;
use std::path::Path;

use rand::rngs::StdRng;
use rand::SeedableRng;
use ubapp::mechanism::Release;
use ubapp::{Error, Result};

/// Run the command: load (which verifies), then print N released θ̃ values, one per line (a vector
/// output as comma-separated coordinates; with `--json`, a list of numbers or of lists).
#[allow(clippy::too_many_arguments)]
pub fn run(
    file: &Path,
    y: &str,
    n: usize,
    seed: Option<u64>,
    json: bool,
    budget: Budget,
    trust: &super::trust::TrustArgs,
) -> Result<()> {
    if n == 0 {
        return Err(Error::argument("--n", "must be at least 1 (0 releases is not a request)"));
    }
    let (m, _) = super::trust::load(file, trust)?;
    let (eps_n, delta_n) = m.composed(n);
    check_budget(&m, n, eps_n, budget)?;
    if n > 1 {
        let delta =
            if delta_n > 0.0 { format!(", δ = {n}·{} = {delta_n:e}", m.certified_delta()) } else { String::new() };
        eprintln!(
            "note: {n} releases from the same data spend ε = {n}·{} = {eps_n} by basic composition{delta}",
            m.certified_eps()
        );
    }
    let coords = parse_observation(y)?;
    let obs = m.model().family().observations();
    let Some(i) = m.observation_index(&coords) else {
        let show = |j: usize| {
            let c: Vec<String> = obs.point(j).iter().map(|v| v.to_string()).collect();
            if c.len() == 1 {
                c[0].clone()
            } else {
                format!("({})", c.join(","))
            }
        };
        let what = if coords.len() == obs.dim() {
            "is not an observation of".to_string()
        } else {
            format!("has {} coordinate(s), but observations have {} in", coords.len(), obs.dim())
        };
        return Err(Error::argument(
            "--y",
            format!(
                "{y} {what} model {} (Y = {{{}, …, {}}}, {} values)",
                ubapp::guard::text::sanitize(m.model().name(), ubapp::guard::text::QUOTE_CHARS),
                show(0),
                show(obs.len() - 1),
                obs.len()
            ),
        ));
    };
    // StdRng is a cryptographically secure generator; without --seed it is seeded from the OS.
    let mut rng: StdRng = match seed {
        Some(s) => StdRng::seed_from_u64(s),
        None => rand::make_rng(),
    };
    let draws = m.sample_batch(i, n, &mut rng);
    let outputs: Vec<Vec<f64>> = draws.iter().map(|&k| m.output(k).to_vec()).collect();
    let mut out = std::io::stdout().lock();
    let io = |source| Error::Io { path: "<stdout>".into(), source };
    if json {
        let text = if m.model().outputs().dim() == 1 {
            serde_json::to_string(&outputs.iter().map(|v| v[0]).collect::<Vec<f64>>())
        } else {
            serde_json::to_string(&outputs)
        };
        writeln!(out, "{}", text.expect("floats serialise")).map_err(io)?;
    } else {
        for v in outputs {
            let line: Vec<String> = v.iter().map(|x| x.to_string()).collect();
            writeln!(out, "{}", line.join(",")).map_err(io)?;
        }
    }
    Ok(())
}

/// The privacy budget flags of `sample`.
#[derive(Debug, Clone, Copy, Default)]
pub struct Budget {
    /// `--budget EPS_TOTAL`: the most ε the request may spend.
    pub eps_total: Option<f64>,
    /// `--allow-composition`: spend n·ε without a stated budget.
    pub allow_composition: bool,
}

/// Refuse a request whose composed ε exceeds the budget, or exceeds the mechanism's ε without a
/// budget or `--allow-composition`.
fn check_budget(m: &Release, n: usize, eps_n: f64, budget: Budget) -> Result<()> {
    match budget.eps_total {
        Some(b) if !(b.is_finite() && b > 0.0) => Err(Error::argument("--budget", format!("must be a positive ε (got {b})"))),
        Some(b) if eps_n > b => Err(Error::argument(
            "--budget",
            format!("{n} releases spend ε = {n}·{} = {eps_n} by basic composition, over the budget {b}", m.certified_eps()),
        )),
        None if n > 1 && !budget.allow_composition => Err(Error::argument(
            "--n",
            format!(
                "{n} releases from the same data spend ε = {n}·{} = {eps_n} by basic composition, more than the mechanism's ε; state the total with --budget {eps_n} (or pass --allow-composition)",
                m.certified_eps()
            ),
        )),
        _ => Ok(()),
    }
}

/// `37` → \[37\]; `3,5,12` → \[3, 5, 12\].
fn parse_observation(y: &str) -> Result<Vec<f64>> {
    parse_numbers(y, "--y")
}

/// A number or comma-separated numbers, for the flag `flag`.
pub(crate) fn parse_numbers(y: &str, flag: &str) -> Result<Vec<f64>> {
    y.split(',')
        .map(|c| {
            c.trim()
                .parse::<f64>()
                .ok()
                .filter(|v| v.is_finite())
                .ok_or_else(|| Error::argument(flag, format!("\"{y}\" is not a number or comma-separated numbers")))
        })
        .collect()
}
