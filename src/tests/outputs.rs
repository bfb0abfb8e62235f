//! Output generation (`solve::outputs`): the LP solved on the outputs the optimum uses, the rest
//! proved unused by their pricing LPs, must reach the whole LP's optimum. Checked against the
//! whole LP solved by a different backend (Clarabel, output generation off) on random neighbour
//! graphs and on every bundled model it applies to; the certificate is the full LP's Lagrangian
//! bound from the lifted multipliers, never the restricted LP's word.
#![cfg(all(feature = "highs", feature = "clarabel"))]

use std::sync::Arc;

use ndarray::Array2;
use rand::{rngs::StdRng, RngExt, SeedableRng};

use crate::lp::{cost_matrix, MemoryBudget, Problem, Symmetry};
use crate::model::{Model, Neighbours};
use crate::solve::{solve_lp, Solution, SolveOptions, SolverChoice, Status, CHECK_TOLERANCE};

use super::common::{bundled_models, parse_model, rel_diff};

/// Solve `problem` with `choice`, with output generation on or off.
fn solve(problem: &Problem, choice: SolverChoice, output_generation: bool) -> Solution {
    let options = SolveOptions { output_generation, ..SolveOptions::from(choice) };
    solve_lp(problem, &[choice], "test", &options, 0.0).unwrap()
}

/// The route `auto` takes (its first backend, by output generation) against the whole LP by
/// Clarabel: the same optimum, and a bound on the full LP that certifies it.
fn agree(problem: &Problem, what: &str) -> Solution {
    let first =
        crate::solve::structured::order_for(problem.symmetry.is_some(), &crate::solve::lp_order(&problem.neighbours))
            [0];
    let fast = solve(problem, first, true);
    let whole = solve(problem, SolverChoice::Clarabel, false);
    assert!(!whole.solver_detail.contains("output generation"), "{what}: {}", whole.solver_detail);
    assert_eq!(fast.status, Status::Optimal, "{what}: {}", fast.solver_detail);
    assert_eq!(whole.status, Status::Optimal, "{what}: {}", whole.solver_detail);
    assert!(
        rel_diff(fast.bayes_risk, whole.bayes_risk) < 1e-7,
        "{what}: output generation {} vs whole LP {} ({})",
        fast.bayes_risk,
        whole.bayes_risk,
        fast.solver_detail
    );
    let gap = fast.checks.relative_gap.expect("a certified gap");
    assert!(gap <= CHECK_TOLERANCE, "{what}: gap {gap:e}");
    // Its bound is a true lower bound: never above the independent optimum.
    let bound = fast.checks.dual_bound.expect("a bound");
    assert!(bound <= whole.bayes_risk * (1.0 + 1e-9), "{what}: bound {bound} above optimum {}", whole.bayes_risk);
    fast
}

/// Quadratic costs c\[k,i\] = w_i (t_k − s_i)² + small noise on a grid t of outputs: the optimum
/// uses a few of them, as on a real model.
pub(super) fn random_costs(rng: &mut StdRng, n_obs: usize, n_out: usize) -> Array2<f64> {
    let s: Vec<f64> = (0..n_obs).map(|_| rng.random::<f64>()).collect();
    let w: Vec<f64> = (0..n_obs).map(|_| 0.1 + rng.random::<f64>()).collect();
    Array2::from_shape_fn((n_obs, n_out), |(i, k)| {
        let t = k as f64 / (n_out - 1) as f64;
        w[i] * (t - s[i]).powi(2) + 1e-3 * w[i] * rng.random::<f64>()
    })
}

/// A random graph on n observations: a random spanning tree plus extra edges, or (one in four)
/// two components.
pub(super) fn random_graph(rng: &mut StdRng, n: usize) -> Neighbours {
    let split = if rng.random::<f64>() < 0.25 { n / 2 } else { 0 };
    let mut edges = Vec::new();
    for j in 1..n {
        if j == split {
            continue; // j starts a second component
        }
        let low = if j > split { split } else { 0 };
        edges.push((rng.random_range(low..j), j));
    }
    for _ in 0..n {
        let (a, b) = (rng.random_range(0..n), rng.random_range(0..n));
        if a != b && (a < split) == (b < split) {
            edges.push((a.min(b), a.max(b)));
        }
    }
    edges.sort_unstable();
    edges.dedup();
    Neighbours::Graph { len: n, edges }
}

#[test]
fn random_graphs_reach_the_whole_optimum() {
    let mut rng = StdRng::seed_from_u64(13);
    let mut restricted = 0;
    for case in 0..12 {
        let n_obs = rng.random_range(8..20usize);
        let n_out = rng.random_range(24..40usize);
        let eps = [0.2, 0.7, 1.5, 3.0][case % 4];
        let cost = Arc::new(random_costs(&mut rng, n_obs, n_out));
        let neighbours = random_graph(&mut rng, n_obs);
        let problem = Problem::try_new(cost, neighbours, eps, MemoryBudget::available()).unwrap();
        let fast = agree(&problem, &format!("case {case} (|Y| = {n_obs}, |Θ̃| = {n_out}, ε = {eps})"));
        if fast.solver_detail.contains("by output generation") {
            restricted += 1;
            // The outputs left out of the last restricted LP carry no mass.
            let unused = (0..n_out).filter(|&k| fast.p.row(k).iter().all(|&x| x == 0.0)).count();
            assert!(unused > 0, "case {case}: {}", fast.solver_detail);
        }
    }
    assert!(restricted >= 8, "output generation answered only {restricted} of 12 cases");
}

/// Every bundled model output generation applies to (plain program, ≥ 24 outputs, not the chain
/// route), at each of its ε; models whose whole LP takes Clarabel more than a few seconds are in
/// the ignored test below.
#[test]
fn bundled_models_reach_the_whole_optimum() {
    let mut checked = 0;
    for path in bundled_models() {
        let model = Model::load(&path).unwrap();
        if let Some(problems) = applicable(&model, 5_000) {
            for problem in problems {
                agree(&problem, &format!("{} at ε = {}", path.display(), problem.eps));
                checked += 1;
            }
        }
    }
    assert!(checked >= 3, "only {checked} bundled LPs checked");
}

/// `cargo test --release --lib -- --ignored large_bundled_models` (several minutes: Clarabel on
/// the whole of `models/vote-share-3way.toml`).
#[test]
#[ignore]
fn large_bundled_models_reach_the_whole_optimum() {
    for path in bundled_models() {
        let model = Model::load(&path).unwrap();
        for problem in applicable(&model, usize::MAX).unwrap_or_default() {
            if problem.n_p() > 5_000 {
                agree(&problem, &format!("{} at ε = {}", path.display(), problem.eps));
            }
        }
    }
}

/// The model's LPs (one per ε, symmetries found as `solve` finds them) when output generation
/// applies and the LP has at most `max_vars` variables.
fn applicable(model: &Model, max_vars: usize) -> Option<Vec<Problem>> {
    let neighbours = model.family().neighbours();
    let applies = crate::solve::outputs::applies_to(model.is_plain_program(), model.outputs().len());
    if !applies || neighbours.is_chain() {
        return None;
    }
    let cost = Arc::new(cost_matrix(model, MemoryBudget::available()).unwrap());
    if cost.len() > max_vars {
        return None;
    }
    let symmetry = Symmetry::find(&cost, &model.family().observations(), model.outputs(), &neighbours).map(Arc::new);
    let problems = model
        .epsilons
        .iter()
        .map(|&eps| {
            let mut p = Problem::try_new(cost.clone(), neighbours.clone(), eps, MemoryBudget::available()).unwrap();
            p.symmetry = symmetry.clone();
            p
        })
        .collect();
    Some(problems)
}

/// On a model with symmetries the restricted set is a union of orbits, so the restricted LP keeps
/// the group and HiGHS solves its orbit LP; the answer is the whole LP's.
#[test]
fn symmetric_models_keep_their_orbit_lp_when_restricted() {
    let model = parse_model(
        "name = \"sym\"\nepsilon = [0.5]\n[parameter]\ngrid = { kind = \"simplex\", resolution = 8 }\n\
         prior = { kind = \"dirichlet\", alpha = [2.0, 2.0, 2.0] }\n[observation]\nfamily = \"multinomial\"\n\
         categories = 3\nrecords = 10\n[loss]\nkind = \"squared-euclidean\"\n",
    );
    let problem = applicable(&model, usize::MAX).expect("applies").remove(0);
    assert!(problem.symmetry.is_some());
    let fast = agree(&problem, "symmetric multinomial");
    assert!(fast.solver_detail.contains("orbit LP"), "{}", fast.solver_detail);
    assert!(fast.solver_detail.contains("by output generation"), "{}", fast.solver_detail);
    // The released mechanism is invariant under swapping two categories, as the optimum may be
    // chosen: the restricted set did not break the symmetry.
    let (obs, outs) = (model.family().observations(), model.outputs());
    let swap = |g: &crate::model::Grid, j: usize| {
        let p = g.point(j);
        (0..g.len()).find(|&m| {
            let q = g.point(m);
            q[0] == p[1] && q[1] == p[0] && q[2] == p[2]
        })
    };
    for k in 0..outs.len() {
        for i in 0..obs.len() {
            let (k2, i2) = (swap(outs, k).unwrap(), swap(&obs, i).unwrap());
            assert!((fast.p[[k, i]] - fast.p[[k2, i2]]).abs() < 1e-9);
        }
    }
}
