//! Criterion benchmarks on the Bernoulli model (uniform midpoint prior, Θ̃ = Θ, squared
//! loss, ε = 0.1): the chain solver (compact, with its certificate) at growing sizes and the LP
//! path (assembly and a Clarabel solve) at the smallest. `cargo bench --bench chain`.
//! The full table with peak memory is `ubapp bench` (see the README's performance section).

use std::sync::Arc;

use criterion::{criterion_group, criterion_main, Criterion};
use ubapp::bench::bernoulli_model;
use ubapp::lp::{cost_matrix, Problem};
use ubapp::solve::chain::{self, solve_geometric};

fn chain_solver(c: &mut Criterion) {
    let mut g = c.benchmark_group("chain");
    g.sample_size(10);
    for (k, m) in [(100u64, 100usize), (300, 300), (1000, 300), (1000, 1000)] {
        let model = bernoulli_model(k, m, 0.1);
        let costs = chain::squared_moments(&model).expect("squared loss");
        g.bench_function(format!("moments K={k} M={m}"), |b| b.iter(|| chain::squared_moments(&model)));
        g.bench_function(format!("solve+certificate K={k} M={m}"), |b| b.iter(|| solve_geometric(&costs, 0.1)));
    }
    g.finish();
}

fn lp_path(c: &mut Criterion) {
    let mut g = c.benchmark_group("lp");
    g.sample_size(10);
    let model = bernoulli_model(100, 100, 0.1);
    g.bench_function("cost matrix + assembly K=100 M=100", |b| {
        b.iter(|| Problem::new(Arc::new(cost_matrix(&model).unwrap()), model.family.neighbours(), 0.1))
    });
    #[cfg(feature = "clarabel")]
    {
        let problem = Problem::new(Arc::new(cost_matrix(&model).unwrap()), model.family.neighbours(), 0.1);
        let solver = ubapp::solve::SolverChoice::Clarabel.backend().unwrap();
        g.bench_function("clarabel solve K=100 M=100", |b| b.iter(|| solver.solve(&problem).unwrap()));
    }
    g.finish();
}

criterion_group!(benches, chain_solver, lp_path);
criterion_main!(benches);
