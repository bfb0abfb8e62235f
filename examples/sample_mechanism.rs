//! The library route to a deployed mechanism: solve a model, certify and save the mechanism,
//! load it back (which re-verifies the certificate from the weights), and draw a batch of
//! releases with a seeded RNG.
//!
//! Run: `cargo run --release --example sample_mechanism`

use std::path::Path;

use rand::rngs::StdRng;
use rand::SeedableRng;
use ubapp::mechanism::Release;
use ubapp::model::Model;
use ubapp::solve::{solve_model, SolverChoice};

fn main() -> ubapp::Result<()> {
    // 1. Solve the paper's model (K = 100 coin tosses, uniform prior, squared loss) at ε = 1.
    let model = Model::load(Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/models/bernoulli-k100.toml")))?;
    let solution = solve_model(&model, Some(&[1.0]), SolverChoice::Auto)?.remove(0);

    // 2. Repair + quantise the float P into integer weights that are exactly ε-DP, and save them.
    let mechanism = Release::certify(&model, &solution)?;
    let path = std::env::temp_dir().join(format!("ubapp-example-{}.json", std::process::id()));
    mechanism.save(&path)?;
    println!(
        "saved {}: LP risk {:.10e}, certified risk {:.10e}",
        path.display(),
        solution.bayes_risk,
        mechanism.bayes_risk()
    );

    // 3. Load: this re-derives the certificate from the weights and refuses a tampered file.
    let loaded = Release::load(&path)?;
    println!("verified: certified ε = {} ≤ target ε = {}", loaded.certified_eps(), loaded.eps());

    // 4. Release 10 values for an observation of y = 37 successes (a seeded RNG for a reproducible
    //    example; a real release should use fresh OS randomness, e.g. `rand::make_rng()`).
    let y = loaded.observation_index(&[37.0]).expect("37 ∈ Y = {0, …, 100}");
    let mut rng = StdRng::seed_from_u64(2023);
    let released: Vec<f64> = loaded.sample_batch(y, 10, &mut rng).into_iter().map(|k| loaded.output(k)[0]).collect();
    println!("10 releases for y = 37: {released:?}");

    std::fs::remove_file(&path).map_err(|source| ubapp::Error::Io { path: path.clone(), source })?;
    Ok(())
}
