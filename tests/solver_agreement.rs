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

/// Solve the bundled model `name` at its smallest and largest ε with every backend and check that
/// they agree.
fn assert_backends_agree(name: &str) {
    let solvers = solvers();
    assert!(solvers.len() >= 2, "need two backends to compare");
    let path = common::bundled(name);
    let model = Model::load(&path).unwrap();
    let size = model.family().observation_count() * model.outputs().len();
    assert!(size <= MAX_VARIABLES, "{name}: {size} variables, more than this test solves");
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
            // A constrained LP writes each equality as two ≤ rows, which leaves an interior point
            // without a strict interior there: good_lp's Clarabel (no regularisation ladder, no
            // polish) meets the DP rows to 4e-9 on count-unbiased-k10 at ε = 2; 1e-8 there too.
            let loose = s.checks.worst_case_risk.is_some() || !model.constraints().is_empty();
            let dp_tol = if loose { 1e-8 } else { 1e-9 };
            if s.checks.delta == 0.0 {
                assert!(s.checks.max_dp_violation <= dp_tol, "{what}: DP violated by {}", s.checks.max_dp_violation);
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

/// One test per bundled model with at most `MAX_VARIABLES` variables; `CHECKED` lists them.
macro_rules! backends_agree {
    ($($name:ident: $model:expr;)*) => {
        const CHECKED: &[&str] = &[$($model),*];
        $(
            #[test]
            fn $name() {
                assert_backends_agree($model);
            }
        )*
    };
}

backends_agree! {
    backends_agree_on_bernoulli_approx_dp_k30: "bernoulli-approx-dp-k30";
    backends_agree_on_bernoulli_k100: "bernoulli-k100";
    backends_agree_on_bernoulli_k100_paper_grid: "bernoulli-k100-paper-grid";
    backends_agree_on_bernoulli_minimax_k30: "bernoulli-minimax-k30";
    backends_agree_on_click_through_exact: "click-through-exact";
    backends_agree_on_count_unbiased_k10: "count-unbiased-k10";
    backends_agree_on_hospitals_5_parties: "hospitals-5-parties";
    backends_agree_on_prevalence_asymmetric_loss: "prevalence-asymmetric-loss";
    backends_agree_on_prevalence_imperfect_test: "prevalence-imperfect-test";
    backends_agree_on_rare_event_beta: "rare-event-beta";
    backends_agree_on_rare_events_poisson_cap3: "rare-events-poisson-cap3";
    backends_agree_on_vote_share_3way_small: "vote-share-3way-small";
}

/// Small bundled models left out of the agreement above, with the reason. `click-through`
/// (Beta(2, 30) prior, risk ≈ 1.2e-3): one LP backend's P lies 3e-8 (relative) below the exact
/// optimum (feasible only to its tolerance), so HiGHS's dual bound sits 1.6e-8 above it, beyond
/// the 1e-8 weak-duality slack here; `src/tests/chain_solver.rs` checks it against both LP
/// backends with the chain solver's exact optimum instead. Issue 16 found this; it is not fixed.
/// `click-through-robust` (its mixture prior is 90 % that Beta) shows the same: a dual bound 5e-6
/// (relative) above an LP backend's objective at ε = 0.5; it too is checked in
/// `src/tests/chain_solver.rs` against the chain solver's exact optimum.
const EXCLUDED: &[&str] = &["click-through", "click-through-robust"];

/// The tests above cover every bundled model small enough to solve three times per ε.
#[test]
fn every_small_bundled_model_has_its_own_test() {
    let mut small = Vec::new();
    for path in common::bundled_models() {
        let model = Model::load(&path).unwrap();
        if model.family().observation_count() * model.outputs().len() <= MAX_VARIABLES {
            small.push(path.file_stem().unwrap().to_string_lossy().into_owned());
        }
    }
    assert!(small.len() >= 8, "only {} bundled models were small enough to check", small.len());
    small.retain(|s| !EXCLUDED.contains(&s.as_str()));
    small.sort_unstable();
    let mut checked: Vec<&str> = CHECKED.to_vec();
    checked.sort_unstable();
    assert_eq!(small, checked);
}
