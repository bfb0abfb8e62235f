//! Shared helpers for integration tests.

use std::path::{Path, PathBuf};
use std::process::Output;

use crate::model::{Model, ModelSpec, Neighbours};
use proptest::prelude::*;

/// The bundled model files, sorted.
pub fn bundled_models() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("models");
    let mut v: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("models/ exists")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    v.sort();
    assert!(!v.is_empty(), "no bundled models found");
    v
}

/// A binomial model with a uniform midpoint grid (Θ̃ = Θ) from a few numbers.
pub fn binomial_model(trials: u64, points: usize, loss: &str, eps: &[f64]) -> Model {
    let text = format!(
        "name = \"t\"\nepsilon = {eps:?}\n[parameter]\nlower = 0.0\nupper = 1.0\n\
         grid = {{ kind = \"midpoint\", points = {points} }}\nprior = {{ kind = \"uniform\" }}\n\
         [observation]\nfamily = \"binomial\"\ntrials = {trials}\n[loss]\nkind = \"{loss}\"\n"
    );
    Model::from_spec(ModelSpec::from_toml(&text, "test").unwrap()).unwrap()
}

/// stderr as text.
pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Relative difference |a − b| / max(|a|, |b|).
pub fn rel_diff(a: f64, b: f64) -> f64 {
    (a - b).abs() / a.abs().max(b.abs()).max(f64::MIN_POSITIVE)
}

/// A random neighbour relation on n observations: a chain, or a random graph (possibly
/// disconnected) built from a list of candidate edges.
pub fn neighbours_strategy() -> impl Strategy<Value = Neighbours> {
    (2usize..7).prop_flat_map(|n| {
        prop_oneof![
            Just(Neighbours::Chain { len: n }),
            proptest::collection::vec((0..n, 0..n), 1..12).prop_map(move |pairs| {
                let mut edges: Vec<(usize, usize)> =
                    pairs.into_iter().filter(|(a, b)| a != b).map(|(a, b)| (a.min(b), a.max(b))).collect();
                edges.sort_unstable();
                edges.dedup();
                Neighbours::Graph { len: n, edges }
            }),
        ]
    })
}

/// Solve one LP with one backend exactly as the LP route does (attempts, polish, checks).
pub fn solve_problem(
    problem: &crate::lp::Problem,
    choice: crate::solve::SolverChoice,
) -> crate::Result<crate::solve::Solution> {
    let options = crate::solve::SolveOptions::from(choice);
    let backends = match choice {
        crate::solve::SolverChoice::Auto => crate::solve::lp_order(&problem.neighbours),
        c => vec![c],
    };
    crate::solve::solve_lp(problem, &backends, "test", &options, 0.0)
}

/// The Bernoulli benchmark model at (K, M) and one ε: uniform prior, midpoint grid, Θ̃ = Θ, squared loss.
pub fn bernoulli_model(trials: u64, points: usize, eps: f64) -> Model {
    let text = format!(
        "name = \"bernoulli-k{trials}-m{points}\"\nepsilon = [{eps:e}]\n[parameter]\nlower = 0.0\nupper = 1.0\n\
         grid = {{ kind = \"midpoint\", points = {points} }}\nprior = {{ kind = \"uniform\" }}\n\
         [observation]\nfamily = \"binomial\"\ntrials = {trials}\n[output]\ngrid = \"parameter\"\n[loss]\nkind = \"squared\"\n"
    );
    Model::from_spec(ModelSpec::from_toml(&text, "bench").expect("bench model parses")).expect("bench model is valid")
}
