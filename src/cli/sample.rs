//! `ubapp sample FILE --y Y [--n N] [--seed S] [--json]`: release values from a verified mechanism.

use std::io::Write;
use std::path::Path;

use rand::rngs::StdRng;
use rand::SeedableRng;
use ubapp::mechanism::Artifact;
use ubapp::{Error, Result};

/// Run the command: load (which verifies), then print N released θ̃ values, one per line (a vector
/// output as comma-separated coordinates; with `--json`, a list of numbers or of lists).
pub fn run(file: &Path, y: &str, n: usize, seed: Option<u64>, json: bool) -> Result<()> {
    let m = Artifact::load(file)?;
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
                m.model().name(),
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

/// `37` → \[37\]; `3,5,12` → \[3, 5, 12\].
fn parse_observation(y: &str) -> Result<Vec<f64>> {
    y.split(',')
        .map(|c| {
            c.trim()
                .parse::<f64>()
                .ok()
                .filter(|v| v.is_finite())
                .ok_or_else(|| Error::argument("--y", format!("\"{y}\" is not a number or comma-separated numbers")))
        })
        .collect()
}
