//! The library route of `ubapp solve`: load a model file, solve its LP for each ε, and print the
//! optimal Bayes risk with the certified interval [dual bound, risk].
//!
//! Run: `cargo run --release --example solve_model -- models/bernoulli-k100.toml`

use std::path::PathBuf;

use ubapp::model::Model;
use ubapp::solve::{solve_model, SolverChoice};

fn main() -> ubapp::Result<()> {
    let path: PathBuf = std::env::args().nth(1).unwrap_or_else(|| "models/bernoulli-k100.toml".into()).into();
    let model = Model::load(&path)?;
    println!(
        "{}: {} (|Θ| = {}, |Θ̃| = {})",
        model.name(),
        model.spec().description,
        model.theta().len(),
        model.outputs().len()
    );
    for s in solve_model(&model, None, SolverChoice::Auto)? {
        let bound = s.checks.dual_bound.map_or("-".into(), |b| format!("{b:.8e}"));
        println!("ε = {:<8} risk = {:.8e}  lower bound = {bound}  {} via {}", s.eps, s.bayes_risk, s.status, s.solver);
    }
    Ok(())
}
