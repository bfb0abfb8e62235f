//! Independent checks on the LP optimum that do not take a solver's word: limits in ε, monotonicity
//! and a hand-solved 2 × 2 case.

use std::sync::Arc;

use super::common::solve_problem;
use crate::lp::{best_constant_risk, cost_matrix, non_private_risk, Problem};
use crate::solve::{solve_model, SolverChoice};

/// The structured chain solver (what `auto` picks for these binomial models) and the LP path.
const SOLVERS: [SolverChoice; 2] = [SolverChoice::Chain, SolverChoice::Clarabel];

/// Compiled in (the chain solver always is; an LP backend only with its feature).
fn available(s: SolverChoice) -> bool {
    s == SolverChoice::Chain || s.is_available()
}

#[test]
fn tiny_epsilon_gives_the_best_constant_estimator() {
    for (loss, solver) in ["squared", "absolute"].into_iter().flat_map(|l| SOLVERS.map(|s| (l, s))) {
        let model = super::common::binomial_model(20, 15, loss, &[1e-7]);
        if !available(solver) {
            continue;
        }
        let s = solve_model(&model, None, solver).unwrap().remove(0);
        let constant = best_constant_risk(&cost_matrix(&model, crate::lp::MemoryBudget::available()).unwrap());
        // The constant estimator is feasible, so risk ≤ constant; at ε = 1e-7 the gain is O(ε).
        assert!(s.bayes_risk <= constant * (1.0 + 1e-9), "{loss}: {} > {constant}", s.bayes_risk);
        assert!(super::common::rel_diff(s.bayes_risk, constant) < 1e-5, "{loss}: {} vs {constant}", s.bayes_risk);
    }
}

#[test]
fn large_epsilon_gives_the_non_private_bayes_risk_on_the_grid() {
    for (loss, solver) in ["squared", "absolute"].into_iter().flat_map(|l| SOLVERS.map(|s| (l, s))) {
        let model = super::common::binomial_model(20, 15, loss, &[15.0]);
        if !available(solver) {
            continue;
        }
        let s = solve_model(&model, None, solver).unwrap().remove(0);
        let np = non_private_risk(&cost_matrix(&model, crate::lp::MemoryBudget::available()).unwrap());
        // No ε-DP estimator beats the non-private Bayes rule on the grid; at ε = 15 it is reached.
        assert!(s.bayes_risk >= np * (1.0 - 1e-9), "{loss}: {} < {np}", s.bayes_risk);
        assert!(super::common::rel_diff(s.bayes_risk, np) < 1e-6, "{loss}: {} vs {np}", s.bayes_risk);
    }
}

#[test]
fn risk_is_non_increasing_in_epsilon() {
    let eps = [1e-3, 1e-2, 0.05, 0.1, 0.3, 1.0, 2.0, 5.0, 10.0];
    let model = super::common::binomial_model(30, 20, "squared", &eps);
    for solver in SOLVERS {
        if !available(solver) {
            continue;
        }
        let solutions = solve_model(&model, None, solver).unwrap();
        let risks: Vec<f64> = solutions.iter().map(|s| s.bayes_risk).collect();
        for w in risks.windows(2) {
            assert!(w[1] <= w[0] * (1.0 + 1e-8), "{solver}: risk rose with ε: {risks:?}");
        }
        assert!(risks[0] > 1.5 * risks[risks.len() - 1], "privacy should cost something: {risks:?}");
    }
}

/// K = 1, Θ = Θ̃ = {1/4, 3/4} with equal weights, squared loss. With P[θ̃_1 | y=0] = a and
/// P[θ̃_1 | y=1] = b, the risk is 1/8 − (a − b)/16, and the DP constraints allow at most
/// a − b = (e^ε − 1)/(e^ε + 1) (randomised response), so the optimum is 1/8 − tanh(ε/2)/16.
#[test]
fn hand_solved_two_by_two() {
    let model = super::common::binomial_model(1, 2, "squared", &[0.1]);
    let cost = Arc::new(cost_matrix(&model, crate::lp::MemoryBudget::available()).unwrap());
    for eps in [0.01, 0.1, 0.5, 1.0, 3.0] {
        let problem = Problem::new(cost.clone(), model.family.neighbours(), eps);
        let want = 0.125 - (eps / 2.0).tanh() / 16.0;
        for choice in [SolverChoice::Clarabel, SolverChoice::Highs, SolverChoice::GoodLp] {
            if !choice.is_available() {
                continue;
            }
            let backend = choice;
            let s = solve_problem(&problem, backend).unwrap();
            assert!((s.bayes_risk - want).abs() < 1e-10, "{}: ε = {eps}: {} vs {want}", s.solver, s.bayes_risk);
            let a = s.p[[0, 0]];
            assert!((a - eps.exp() / (1.0 + eps.exp())).abs() < 1e-7, "{}: a = {a}", s.solver);
        }
    }
}

#[test]
fn lp_has_the_documented_shape() {
    let model = super::common::binomial_model(4, 3, "squared", &[1.0]);
    let cost = Arc::new(cost_matrix(&model, crate::lp::MemoryBudget::available()).unwrap());
    let p = Problem::new(cost, model.family.neighbours(), 1.0);
    // 5 observations × 3 outputs; 5 equality rows + 2 · 4 edges · 3 outputs DP rows.
    assert_eq!((p.n_vars(), p.n_rows()), (15, 5 + 24));
    assert_eq!(p.a.nnz(), 15 + 4 * 4 * 3);
    let row = p.dp_row(3); // second direction of edge 0, output 0
    assert_eq!((row.k, row.lhs, row.rhs), (0, 1, 0));
    // c[k = 1, y = 0] by hand: Σ_j π_j (1 − θ_j)^4 (θ_j − θ̃_1)².
    let c = cost_matrix(&model, crate::lp::MemoryBudget::available()).unwrap();
    let th = model.theta.values();
    let want: f64 = (0..3).map(|j| model.prior[j] * (1.0 - th[j]).powi(4) * (th[j] - th[1]).powi(2)).sum();
    assert!((c[[0, 1]] - want).abs() < 1e-15);
}

/// The gap an LP solution reports bounds how far its *released* (repaired, certified) mechanism
/// is from the optimum — never measured from a returned P that sits below the optimum — checked
/// against the chain solver's independently certified optimum.
#[test]
fn reported_gap_bounds_the_released_mechanisms_suboptimality() {
    use crate::solve::{chain, Status, CHECK_TOLERANCE};
    for eps in [0.1, 1.0] {
        let model = super::common::bernoulli_model(100, 100, eps);
        let cost = Arc::new(cost_matrix(&model, crate::lp::MemoryBudget::available()).unwrap());
        let exact = chain::solve_dense(&cost, eps);
        assert!(exact.certified, "chain optimum not certified at ε = {eps}");
        let problem = Problem::new(cost.clone(), model.family.neighbours(), eps);
        for choice in [SolverChoice::Clarabel, SolverChoice::HighsSimplex] {
            if !choice.is_available() {
                continue;
            }
            let backend = choice;
            let s = solve_problem(&problem, backend).unwrap();
            let released = s.checks.certified_objective.expect("a near-feasible P is repaired");
            let gap = s.checks.relative_gap.expect("both backends give multipliers");
            // A certified mechanism is feasible: never below the optimum's lower bound.
            assert!(released >= exact.dual_bound * (1.0 - 1e-12), "{choice} ε = {eps}: {released} below optimum");
            let true_gap = (released - exact.dual_bound) / released;
            assert!(gap >= true_gap - 1e-10, "{choice} ε = {eps}: reported {gap:e} < true {true_gap:e}");
            if s.status == Status::Optimal {
                assert!(gap <= CHECK_TOLERANCE && true_gap <= CHECK_TOLERANCE, "{choice} ε = {eps}: {gap:e}");
            }
        }
    }
}

/// The reference risks `solve` reports for squared-loss binomial models come from the moments
/// (no cost matrix); they must equal the dense cost matrix's limits, on grids with the output
/// values unsorted and off the parameter grid.
#[test]
fn reference_risks_from_moments_equal_the_dense_ones() {
    for (trials, points, output) in [
        (20, 15, "\"parameter\""),
        (300, 40, "{ kind = \"explicit\", values = [0.9, 0.05, 0.5, 0.33, 0.7, 0.1] }"),
        (7, 100, "{ kind = \"midpoint\", points = 13 }"),
    ] {
        let model = super::common::binomial(trials, points, "squared", &[1.0]).output(output).model();
        let moments = crate::solve::chain::squared_moments(&model).expect("a squared-loss binomial");
        let (constant, np) = moments.reference_risks();
        let cost = cost_matrix(&model, crate::lp::MemoryBudget::available()).unwrap();
        let (want_constant, want_np) = (best_constant_risk(&cost), non_private_risk(&cost));
        let what = format!("K = {trials}, M = {points}, outputs {output}");
        assert!(super::common::rel_diff(constant, want_constant) < 1e-12, "{what}: {constant} vs {want_constant}");
        assert!(super::common::rel_diff(np, want_np) < 1e-12, "{what}: {np} vs {want_np}");
    }
}
