//! HiGHS, Clarabel and good_lp must agree on the optimal Bayes risk of every bundled model, and each
//! returned P must be a DP mechanism up to 1e-9. Each model is solved at the smallest and largest
//! ε of its list (HiGHS's simplex is slowest at small ε; the whole list is exercised by `make demo`).
//! Models whose LP has more than `MAX_VARIABLES` variables (the 3-way vote share: 15k variables ×
//! 83k rows, a minute per solve with HiGHS) are solved once in `tests/breadth_models.rs`.

/// Largest LP this test solves three times per ε.
const MAX_VARIABLES: usize = 12_000;

mod common;

use ubapp::model::Model;
use ubapp::solve::{solve_model, SolverChoice};

fn solvers() -> Vec<SolverChoice> {
    let mut v = Vec::new();
    if cfg!(feature = "highs") {
        v.push(SolverChoice::Highs);
    }
    if cfg!(feature = "clarabel") {
        v.push(SolverChoice::Clarabel);
    }
    // good_lp builds the LP again through its own modelling layer; it drives Clarabel here so that
    // the slowest backend (HiGHS's simplex at small ε) runs once per case.
    if cfg!(feature = "good_lp") && cfg!(feature = "clarabel") {
        v.push(SolverChoice::GoodLpClarabel);
    }
    v
}

#[test]
fn backends_agree_on_every_bundled_model() {
    let solvers = solvers();
    assert!(solvers.len() >= 2, "need two backends to compare");
    let mut checked = 0;
    for path in common::bundled_models() {
        let model = Model::load(&path).unwrap();
        if model.family().observation_count() * model.outputs().len() > MAX_VARIABLES {
            continue;
        }
        checked += 1;
        let lo = model.epsilons().iter().copied().fold(f64::INFINITY, f64::min);
        let hi = model.epsilons().iter().copied().fold(0.0, f64::max);
        for eps in [lo, hi] {
            let results: Vec<_> =
                solvers.iter().map(|&s| solve_model(&model, Some(&[eps]), s).unwrap().remove(0)).collect();
            // The objective (Bayes risk, or worst-case risk for minimax) is unique; P may not be.
            let best = results.iter().map(|s| s.checks.objective).fold(f64::INFINITY, f64::min);
            // Together the bounds certify the optimum: the best of them is within 1e-6 of it. (Each
            // alone need not be: HiGHS's row duals are loose by up to ~2e-6 on some models.)
            let best_bound = results.iter().filter_map(|s| s.checks.dual_bound).fold(f64::NEG_INFINITY, f64::max);
            assert!(
                common::rel_diff(best_bound, best) <= 1e-6,
                "{} at ε = {eps}: best dual bound {best_bound} far below {best}",
                path.display()
            );
            for s in &results {
                let what = format!("{} at ε = {eps} with {}", path.display(), s.solver);
                assert!(s.status.has_solution(), "{what}: {}", s.status);
                assert!(
                    common::rel_diff(s.checks.objective, best) <= 1e-7,
                    "{what}: objective {} vs best {best}",
                    s.checks.objective
                );
                assert!(s.checks.max_column_error <= 1e-9, "{what}: column sums off by {}", s.checks.max_column_error);
                // The Bayes program's P meets the DP rows to 1e-9. HiGHS's internal row scaling of the
                // minimax epigraph rows loosens its effective tolerance (5e-9 seen at ε = 2): 1e-8 there.
                let dp_tol = if s.checks.worst_case_risk.is_some() { 1e-8 } else { 1e-9 };
                if s.checks.delta == 0.0 {
                    assert!(
                        s.checks.max_dp_violation <= dp_tol,
                        "{what}: DP violated by {}",
                        s.checks.max_dp_violation
                    );
                } else {
                    assert!(
                        s.checks.delta_spent <= s.checks.delta + 1e-9,
                        "{what}: spends δ = {} > {}",
                        s.checks.delta_spent,
                        s.checks.delta
                    );
                }
                assert!(s.checks.min_entry >= -1e-9, "{what}: negative entry {}", s.checks.min_entry);
                // Weak duality: a Lagrangian bound never exceeds any feasible objective (the returned
                // points are feasible only to ~1e-10, which can lower their objective by ~1e-9).
                if let Some(d) = s.checks.dual_bound {
                    assert!(d <= best * (1.0 + 1e-8), "{what}: dual bound {d} above objective {best}");
                }
            }
        }
    }
    assert!(checked >= 8, "only {checked} bundled models were small enough to check");
}
