//! Shared helpers for integration tests.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use proptest::prelude::*;
use ubapp::model::{Model, ModelSpec, Neighbours};

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

/// Run the `ubapp` binary.
pub fn ubapp(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ubapp")).args(args).output().expect("run ubapp")
}

/// Run the `ubapp` binary with extra environment variables.
pub fn ubapp_env(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_ubapp"));
    c.args(args);
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().expect("run ubapp")
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
