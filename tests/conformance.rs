//! One conformance suite run against every solver backend (good_lp's shared-test idea): the
//! hand-solved 2 × 2 program, a chain optimum certified by the exact chain solver, a minimax and
//! an (ε, δ) program with closed-form optima, and a forced non-optimal outcome that must never come
//! back `Optimal`. Backends not compiled into this build are skipped by name.

mod common;

use common::{binomial, binomial_model};
use ubapp::model::Model;
use ubapp::solve::{solve_model, Limits, SolveError, SolveOptions, SolverChoice, Status};
use ubapp::Error;

/// K = 1 trial, θ ∈ {0.25, 0.75} (midpoints, uniform prior), Θ̃ = Θ, squared loss, plus `extra`
/// top-level keys (before the tables).
fn two_by_two(extra: &str) -> Model {
    binomial(1, 2, "squared", &[0.5]).name("two-by-two").top(extra).model()
}

/// By symmetry the optimum releases the matching grid point with probability a and the other with
/// 1 − a; the risk at either θ is ¼(¾ − ½a) = 3/16 − a/8, and a is as large as privacy allows:
/// a = e^ε/(1 + e^ε) for pure ε (so the optimum is 1/8 − tanh(ε/2)/16), and
/// a = min(1, (e^ε + δ)/(1 + e^ε)) for (ε, δ) (the pair's only positive term a − e^ε(1 − a) ≤ δ).
/// The worst case over Θ equals the Bayes risk: the minimax optimum is the same number.
fn two_by_two_optimum(eps: f64, delta: f64) -> f64 {
    let a = ((eps.exp() + delta) / (1.0 + eps.exp())).min(1.0);
    3.0 / 16.0 - a / 8.0
}

/// Solve `model` at one ε with exactly one backend. (`ubapp::Error` is the library's; its size is
/// not this test's to change.)
fn solve_one(model: &Model, eps: f64, choice: SolverChoice) -> ubapp::Result<ubapp::solve::Solution> {
    Ok(solve_model(model, Some(&[eps]), choice).map(|mut v| v.remove(0))?)
}

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol * a.abs().max(b.abs()).max(1e-300)
}

// Each backend's suite is compiled only when its features are: a build without a backend lists
// no tests for it, instead of reporting passes that ran nothing.
macro_rules! conformance {
    ($name:ident, $choice:expr, $($feature:literal),+) => {
        #[cfg(all($(feature = $feature),+))]
        mod $name {
            use super::*;
            const CHOICE: SolverChoice = $choice;

            #[test]
            fn is_available_in_this_build() {
                assert!(CHOICE.is_available());
            }

            #[test]
            fn hand_solved_two_by_two() {
                let model = two_by_two("");
                for eps in [0.1, 0.5, 2.0] {
                    let s = solve_one(&model, eps, CHOICE).unwrap();
                    assert_eq!(s.status, Status::Optimal, "ε = {eps}: {}", s.solver_detail);
                    let want = two_by_two_optimum(eps, 0.0);
                    assert!(close(s.bayes_risk, want, 1e-9), "ε = {eps}: {} vs {want}", s.bayes_risk);
                    assert!(s.checks.max_dp_violation <= 1e-9);
                }
            }

            #[test]
            fn chain_optimum() {
                let model = binomial(40, 25, "absolute", &[0.3]).prior("{ kind = \"beta\", a = 2.0, b = 5.0 }").model();
                let exact = solve_one(&model, 0.3, SolverChoice::Chain).unwrap();
                assert_eq!(exact.status, Status::Optimal);
                let s = solve_one(&model, 0.3, CHOICE).unwrap();
                assert!(s.status.has_solution(), "{}", s.solver_detail);
                // Every backend's released mechanism is within its certified gap of the exact optimum.
                let tol = 1e-7 + s.checks.relative_gap.unwrap_or(0.0).max(0.0);
                assert!(close(s.bayes_risk, exact.bayes_risk, tol), "{} vs chain {}", s.bayes_risk, exact.bayes_risk);
                if s.status == Status::Optimal {
                    assert!(s.checks.relative_gap.is_none_or(|g| g <= ubapp::solve::CHECK_TOLERANCE));
                }
            }

            #[test]
            fn minimax_program() {
                let model = two_by_two("objective = \"minimax\"");
                let s = solve_one(&model, 0.5, CHOICE).unwrap();
                assert!(s.status.has_solution(), "{}", s.solver_detail);
                let want = two_by_two_optimum(0.5, 0.0);
                let worst = s.checks.worst_case_risk.expect("a minimax program reports its worst case");
                assert!(close(worst, want, 1e-7), "worst case {worst} vs {want}");
            }

            #[test]
            fn epsilon_delta_program() {
                let delta = 0.05;
                let model = two_by_two(&format!("delta = {delta}"));
                let s = solve_one(&model, 0.5, CHOICE).unwrap();
                assert!(s.status.has_solution(), "{}", s.solver_detail);
                let want = two_by_two_optimum(0.5, delta);
                assert!(close(s.bayes_risk, want, 1e-7), "{} vs {want}", s.bayes_risk);
                assert!(s.checks.delta_spent <= delta + 1e-9, "spends {}", s.checks.delta_spent);
            }

            #[test]
            fn an_iteration_limit_of_one_is_never_optimal() {
                let model = binomial_model(30, 30, "squared", &[0.5]);
                let options = SolveOptions {
                    solver: CHOICE,
                    limits: Limits { iterations: Some(1), ..Limits::default() },
                    polish: false,
                    ..SolveOptions::default()
                };
                match solve_model(&model, None, options) {
                    Ok(v) => assert_ne!(v[0].status, Status::Optimal, "{}", v[0].solver_detail),
                    Err(SolveError::NoSolution { status, .. }) => {
                        assert!(
                            matches!(status, Status::IterationLimit | Status::Failed | Status::NumericalError),
                            "{status}"
                        )
                    }
                    Err(SolveError::Backend { .. } | SolveError::LimitUnsupported { .. }) => {}
                    Err(e) => panic!("unexpected error: {e}"),
                }
            }
        }
    };
}

conformance!(highs, SolverChoice::Highs, "highs");
conformance!(highs_simplex, SolverChoice::HighsSimplex, "highs");
conformance!(highs_ipm, SolverChoice::HighsIpm, "highs");
conformance!(clarabel, SolverChoice::Clarabel, "clarabel");
conformance!(good_lp, SolverChoice::GoodLp, "good_lp");
conformance!(good_lp_highs, SolverChoice::GoodLpHighs, "good_lp", "highs");
conformance!(good_lp_clarabel, SolverChoice::GoodLpClarabel, "good_lp", "clarabel");
conformance!(good_lp_microlp, SolverChoice::GoodLpMicrolp, "good_lp");

/// The chain solver: the plain Bayes program on chain neighbours, exactly; it refuses the rest.
mod chain {
    use super::*;

    #[test]
    fn hand_solved_two_by_two() {
        let model = two_by_two("");
        for eps in [0.1, 0.5, 2.0] {
            let s = solve_one(&model, eps, SolverChoice::Chain).unwrap();
            assert_eq!(s.status, Status::Optimal);
            let want = two_by_two_optimum(eps, 0.0);
            assert!(close(s.bayes_risk, want, 1e-12), "ε = {eps}: {} vs {want}", s.bayes_risk);
        }
    }

    #[test]
    fn refuses_minimax_and_delta_programs_as_input_errors() {
        for extra in ["objective = \"minimax\"", "delta = 0.05"] {
            let e = solve_one(&two_by_two(extra), 0.5, SolverChoice::Chain).unwrap_err();
            assert!(e.is_input(), "{extra}: {e}");
            assert!(matches!(e, Error::Solve(SolveError::NotApplicable { .. })), "{extra}: {e}");
        }
    }
}

/// A time limit that has already passed stops HiGHS with `TimeLimit`, never `Optimal`.
#[cfg(feature = "highs")]
#[test]
fn a_spent_time_limit_is_reported_as_such() {
    let model = two_by_two("");
    let options = SolveOptions {
        solver: SolverChoice::HighsSimplex,
        limits: Limits { seconds: Some(0.0), ..Limits::default() },
        ..SolveOptions::default()
    };
    match solve_model(&model, None, options) {
        Ok(v) => assert_ne!(v[0].status, Status::Optimal),
        Err(SolveError::NoSolution { status, .. }) => assert_eq!(status, Status::TimeLimit),
        Err(e) => panic!("unexpected error: {e}"),
    }
}

/// Anytime: a time limit spent before any solver answers still returns a releasable mechanism —
/// status `TimeLimit` (`CertifiedGap` where `auto` takes the anytime route), certified exactly, with a gap whose interval [dual_bound, certified risk]
/// contains the optimum the unlimited solve certifies (an independent route to the same LP).
#[test]
fn a_spent_time_limit_returns_a_certified_mechanism_whose_interval_holds_the_optimum() {
    let model = Model::load(&common::bundled("vote-share-3way-small")).unwrap();
    for choice in [SolverChoice::Auto, SolverChoice::Clarabel] {
        if !choice.is_available() {
            continue;
        }
        let optimum = solve_one(&model, 0.5, choice).unwrap();
        assert_eq!(optimum.status, Status::Optimal);
        let limited =
            SolveOptions { limits: Limits { seconds: Some(0.0), ..Limits::default() }, ..SolveOptions::from(choice) };
        let s = solve_model(&model, Some(&[0.5]), limited).unwrap().remove(0);
        // `auto` prices the exact route beyond the spent limit and takes the anytime route.
        let stopped = if choice == SolverChoice::Auto { Status::CertifiedGap } else { Status::TimeLimit };
        assert_eq!(s.status, stopped, "{}", s.solver_detail);
        let certified = s.checks.certified_objective.expect("a certified mechanism");
        let bound = s.checks.dual_bound.expect("a certified bound");
        assert!(bound <= optimum.bayes_risk * (1.0 + 1e-9), "bound {bound} above the optimum {}", optimum.bayes_risk);
        assert!(certified >= optimum.bayes_risk * (1.0 - 1e-9), "{certified} below the optimum {}", optimum.bayes_risk);
        let gap = s.checks.relative_gap.unwrap();
        assert!(((certified - bound) / certified - gap).abs() < 1e-12, "gap {gap}");
        let m = ubapp::mechanism::Release::certify(&model, &s).unwrap();
        assert!(m.certified_eps() <= 0.5);
        assert!((m.bayes_risk() - certified).abs() <= 1e-12 * certified, "{} vs {certified}", m.bayes_risk());
    }
}
