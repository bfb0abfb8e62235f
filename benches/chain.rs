//! Criterion benchmarks on the Bernoulli model (uniform midpoint prior, Θ̃ = Θ, squared loss,
//! ε = 0.1): the compact chain solver (moments, remap, certificate) at growing sizes, and the LP
//! path (cost matrix, assembly, a Clarabel solve with its checks) at the smallest.
//! `cargo bench --bench chain`. The full table with peak memory is `ubapp bench`
//! (`docs/benchmarks.md`).

use criterion::{criterion_group, criterion_main, Criterion};
use ubapp::model::{Model, ModelSpec};
use ubapp::solve::{solve_model, solve_model_compact, SolverChoice};

fn bernoulli_model(trials: u64, points: usize, eps: f64) -> Model {
    let text = format!(
        "name = \"bernoulli-k{trials}-m{points}\"\nepsilon = [{eps:e}]\n[parameter]\nlower = 0.0\nupper = 1.0\n\
         grid = {{ kind = \"midpoint\", points = {points} }}\nprior = {{ kind = \"uniform\" }}\n\
         [observation]\nfamily = \"binomial\"\ntrials = {trials}\n[output]\ngrid = \"parameter\"\n[loss]\nkind = \"squared\"\n"
    );
    Model::from_spec(ModelSpec::from_toml(&text, "bench").unwrap()).unwrap()
}

fn chain_solver(c: &mut Criterion) {
    let mut g = c.benchmark_group("chain");
    g.sample_size(10);
    for (k, m) in [(100u64, 100usize), (300, 300), (1000, 300), (1000, 1000)] {
        let model = bernoulli_model(k, m, 0.1);
        g.bench_function(format!("moments+solve+certificate K={k} M={m}"), |b| {
            b.iter(|| solve_model_compact(&model, 0.1).unwrap())
        });
    }
    g.finish();
}

fn lp_path(c: &mut Criterion) {
    let mut g = c.benchmark_group("lp");
    g.sample_size(10);
    let model = bernoulli_model(100, 100, 0.1);
    if SolverChoice::Clarabel.is_available() {
        g.bench_function("clarabel K=100 M=100", |b| {
            b.iter(|| solve_model(&model, Some(&[0.1]), SolverChoice::Clarabel).unwrap())
        });
    }
    g.finish();
}

criterion_group!(benches, chain_solver, lp_path);
criterion_main!(benches);
