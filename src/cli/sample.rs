//! `ubapp sample FILE --y Y [--n N] [--seed S] [--json]`: release values from a verified mechanism.

use std::io::Write;
use std::path::Path;

use rand::rngs::StdRng;
use rand::SeedableRng;
use ubapp::mechanism::Mechanism;
use ubapp::{Error, Result};

/// Run the command: load (which verifies), then print N released θ̃ values, one per line.
pub fn run(file: &Path, y: f64, n: usize, seed: Option<u64>, json: bool) -> Result<()> {
    let m = Mechanism::load(file)?;
    let Some(i) = m.observation_index(y) else {
        let obs = m.model().family.observations().values();
        let (first, last) = (obs[0], obs[obs.len() - 1]);
        return Err(Error::input(format!(
            "--y {y} is not an observation of model {} (Y = {{{first}, …, {last}}}, {} values)",
            m.model().name(),
            obs.len()
        )));
    };
    // StdRng is a cryptographically secure generator; without --seed it is seeded from the OS.
    let mut rng: StdRng = match seed {
        Some(s) => StdRng::seed_from_u64(s),
        None => rand::make_rng(),
    };
    let draws = m.sample_batch(i, n, &mut rng);
    let values: Vec<f64> = draws.iter().map(|&k| m.output(k)[0]).collect();
    let mut out = std::io::stdout().lock();
    let io = |source| Error::Io { path: "<stdout>".into(), source };
    if json {
        writeln!(out, "{}", serde_json::to_string(&values).expect("floats serialise")).map_err(io)?;
    } else {
        for v in values {
            writeln!(out, "{v}").map_err(io)?;
        }
    }
    Ok(())
}
