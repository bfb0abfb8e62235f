//! Symmetry reduction (`lp::Symmetry`): the orbit LP's lifted optimum is the full LP's optimum,
//! found independently (Clarabel on the full LP, no reduction), and its lifted multipliers
//! certify it against the full LP; only true symmetries are used.
#![cfg(all(feature = "highs", feature = "clarabel"))]

use std::sync::Arc;

use crate::lp::{cost_matrix, MemoryBudget, Problem, Symmetry};
use crate::model::Model;
use crate::solve::SolverChoice;

use super::common::{parse_model, rel_diff, solve_problem};

fn multinomial(alpha: [f64; 3], records: u64, resolution: usize) -> Model {
    parse_model(&format!(
        "name = \"sym\"\nepsilon = [0.7]\n[parameter]\ngrid = {{ kind = \"simplex\", resolution = {resolution} }}\n\
         prior = {{ kind = \"dirichlet\", alpha = [{}, {}, {}] }}\n[observation]\nfamily = \"multinomial\"\n\
         categories = 3\nrecords = {records}\n[loss]\nkind = \"squared-euclidean\"\n",
        alpha[0], alpha[1], alpha[2]
    ))
}

fn problem(model: &Model, eps: f64, with_symmetry: bool) -> Problem {
    let cost = Arc::new(cost_matrix(model, MemoryBudget::available()).unwrap());
    let neighbours = model.family().neighbours();
    let mut problem = Problem::try_new(cost.clone(), neighbours.clone(), eps, MemoryBudget::available()).unwrap();
    if with_symmetry {
        problem.symmetry =
            Symmetry::find(&cost, &model.family().observations(), model.outputs(), &neighbours).map(Arc::new);
    }
    problem
}

#[test]
fn group_is_what_the_prior_allows() {
    let order = |alpha| {
        let m = multinomial(alpha, 5, 4);
        let p = problem(&m, 0.7, true);
        p.symmetry.as_ref().map_or(1, |s| s.group_order)
    };
    assert_eq!(order([2.0, 2.0, 2.0]), 6, "a symmetric Dirichlet: all of S_3");
    assert_eq!(order([2.0, 2.0, 3.0]), 2, "two equal weights: one transposition");
    assert_eq!(order([1.0, 2.0, 3.0]), 1, "no two equal: identity only, no reduction");
}

#[test]
fn orbit_lp_optimum_is_the_full_optimum_and_certified() {
    for (alpha, eps) in [([2.0, 2.0, 2.0], 0.7), ([2.0, 2.0, 3.0], 1.5), ([1.0, 1.0, 1.0], 0.2)] {
        let model = multinomial(alpha, 6, 5);
        let reduced = problem(&model, eps, true);
        let symmetry = reduced.symmetry.clone().expect("symmetric model");
        let (vars, _) = symmetry.reduced_size();
        assert!(vars * symmetry.group_order >= reduced.n_p() && vars < reduced.n_p());
        let fast = solve_problem(&reduced, SolverChoice::HighsSimplex).unwrap();
        assert!(fast.solver_detail.contains("orbit LP"), "{}", fast.solver_detail);
        // Independent route: Clarabel (interior point + polish) on the full LP, no reduction.
        let full = solve_problem(&problem(&model, eps, false), SolverChoice::Clarabel).unwrap();
        assert!(rel_diff(fast.bayes_risk, full.bayes_risk) < 1e-8, "{} vs {}", fast.bayes_risk, full.bayes_risk);
        // The lifted multipliers certify the lifted point against the full LP.
        let gap = fast.checks.relative_gap.unwrap();
        assert!(gap <= 1e-9, "certified gap {gap:e}");
        assert!(fast.checks.dual_bound.unwrap() <= full.bayes_risk * (1.0 + 1e-9));
    }
}

#[test]
fn lifted_mechanism_is_symmetric_and_feasible() {
    let model = multinomial([2.0, 2.0, 2.0], 6, 5);
    let reduced = problem(&model, 0.7, true);
    let s = solve_problem(&reduced, SolverChoice::HighsIpm).unwrap();
    let p = &s.p;
    assert!(crate::lp::max_dp_violation(p, &reduced.neighbours, 0.7) <= 1e-9);
    assert!(crate::lp::max_column_error(p) <= 1e-9);
    // Swapping the first two categories maps P onto itself.
    let ys = model.family().observations();
    let out = model.outputs();
    let find = |g: &crate::model::Grid, v: Vec<f64>| (0..g.len()).find(|&j| g.point(j).to_vec() == v).unwrap();
    for i in 0..ys.len() {
        let y = ys.point(i);
        let i2 = find(&ys, vec![y[1], y[0], y[2]]);
        for k in 0..out.len() {
            let t = out.point(k);
            let k2 = find(out, vec![t[1], t[0], t[2]]);
            assert!((p[[k, i]] - p[[k2, i2]]).abs() <= 1e-12);
        }
    }
}
