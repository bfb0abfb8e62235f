//! Shared fixtures for the crate-internal scenario tests: model text and models, the LP route for
//! one assembled problem, a few numeric helpers. (The binary is run only from `tests/`.)

use std::path::{Path, PathBuf};

use proptest::prelude::*;

use crate::model::{Model, ModelSpec, Neighbours};

// The model-text builder is shared with the integration tests: one file, plain text.
#[path = "../../tests/common/model_text.rs"]
mod model_text;
pub use model_text::{binomial, Binomial};

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

/// A bundled model by file name, with `.toml` (e.g. `"rare-event-beta.toml"`).
pub fn bundled(name: &str) -> Model {
    Model::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("models").join(name)).unwrap()
}

/// A model from its TOML text (panics with the error: the text is the test's own).
pub fn parse_model(text: &str) -> Model {
    Model::from_spec(ModelSpec::from_toml(text, "test").unwrap_or_else(|e| panic!("{e}\n{text}")))
        .unwrap_or_else(|e| panic!("{e}\n{text}"))
}

impl Binomial {
    /// The model this text describes.
    pub fn model(&self) -> Model {
        parse_model(&self.toml())
    }
}

/// A binomial model with a uniform midpoint grid (Θ̃ = Θ) from a few numbers.
pub fn binomial_model(trials: u64, points: usize, loss: &str, eps: &[f64]) -> Model {
    binomial(trials, points, loss, eps).model()
}

/// The Bernoulli benchmark model at (K, M) and one ε: uniform prior, midpoint grid, Θ̃ = Θ, squared loss.
pub fn bernoulli_model(trials: u64, points: usize, eps: f64) -> Model {
    binomial(trials, points, "squared", &[eps])
        .name(&format!("bernoulli-k{trials}-m{points}"))
        .output("\"parameter\"")
        .model()
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
    Ok(crate::solve::solve_lp(problem, &backends, "test", &options, 0.0)?)
}

/// Connected components of a graph on n vertices (union-find).
pub fn components(n: usize, edges: &[(usize, usize)]) -> usize {
    let mut parent: Vec<usize> = (0..n).collect();
    fn root(parent: &mut [usize], mut v: usize) -> usize {
        while parent[v] != v {
            parent[v] = parent[parent[v]];
            v = parent[v];
        }
        v
    }
    for &(a, b) in edges {
        let (ra, rb) = (root(&mut parent, a), root(&mut parent, b));
        parent[ra] = rb;
    }
    (0..n).filter(|&v| root(&mut parent, v) == v).count()
}
