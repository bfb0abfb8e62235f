//! HiGHS, Clarabel and good_lp must agree on the optimal Bayes risk of every bundled model, and each
//! returned P must be a DP mechanism up to 1e-9. Each model is solved at the smallest and largest
//! ε of its list (HiGHS's simplex is slowest at small ε; the whole list is exercised by `make demo`).

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
    for path in common::bundled_models() {
        let model = Model::load(&path).unwrap();
        let lo = model.epsilons.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = model.epsilons.iter().copied().fold(0.0, f64::max);
        for eps in [lo, hi] {
            let results: Vec<_> = solvers
                .iter()
                .map(|&s| solve_model(&model, Some(&[eps]), s).unwrap().remove(0))
                .collect();
            let best = results.iter().map(|s| s.bayes_risk).fold(f64::INFINITY, f64::min);
            for s in &results {
                let what = format!("{} at ε = {eps} with {}", path.display(), s.solver);
                assert!(s.status.has_solution(), "{what}: {}", s.status);
                assert!(
                    common::rel_diff(s.bayes_risk, best) <= 1e-7,
                    "{what}: risk {} vs best {best}",
                    s.bayes_risk
                );
                assert!(s.max_column_error <= 1e-9, "{what}: column sums off by {}", s.max_column_error);
                assert!(s.max_dp_violation <= 1e-9, "{what}: DP violated by {}", s.max_dp_violation);
                assert!(s.min_entry >= -1e-9, "{what}: negative entry {}", s.min_entry);
                // Weak duality: a Lagrangian bound never exceeds any feasible risk.
                if let Some(d) = s.dual_bound {
                    assert!(d <= best * (1.0 + 1e-9), "{what}: dual bound {d} above risk {best}");
                    assert!(common::rel_diff(d, best) <= 1e-6, "{what}: dual bound {d} far below {best}");
                }
            }
        }
    }
}
