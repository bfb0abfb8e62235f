//! The programs beyond the paper's Bayes / pure-ε LP: minimax, (ε, δ), and exact conjugate costs.

use std::sync::Arc;

use super::common::{binomial, solve_problem};
use crate::lp::{cost_matrix, Problem, Program};
use crate::model::{ExactBetaBinomial, Grid, Loss, Model};
use crate::solve::{solve_model, SolverChoice, Status};

/// K trials, an M-point midpoint grid, a Beta(2, 3) prior, ε ∈ {0.5, 2}, plus `extra` top-level lines.
fn bernoulli(k: u64, m: usize, extra: &str, loss: &str) -> Model {
    binomial(k, m, loss, &[0.5, 2.0]).prior(BETA_2_3).top(extra).model()
}

const BETA_2_3: &str = "{ kind = \"beta\", a = 2.0, b = 3.0 }";

fn highs() -> SolverChoice {
    SolverChoice::HighsSimplex
}

#[test]
fn minimax_has_smaller_worst_case_and_larger_bayes_risk_than_bayes() {
    for loss in ["squared", "absolute"] {
        let bayes_model = bernoulli(12, 24, "", loss);
        let mm_model = bernoulli(12, 24, "objective = \"minimax\"", loss);
        let bayes = solve_model(&bayes_model, None, SolverChoice::HighsSimplex).unwrap();
        let mm = solve_model(&mm_model, None, SolverChoice::HighsSimplex).unwrap();
        let w = Arc::new(mm_model.risk_matrix());
        assert_eq!((bayes.len(), mm.len()), (2, 2), "one solution per ε");
        for (b, m) in bayes.iter().zip(&mm) {
            assert_eq!(b.status, Status::Optimal);
            assert_eq!(m.status, Status::Optimal, "{loss} ε = {}: {:?}", m.eps, m.checks.relative_gap);
            let probe = Problem::with_program(
                Arc::new(cost_matrix(&bayes_model, crate::lp::MemoryBudget::available()).unwrap()),
                bayes_model.family.neighbours(),
                b.eps,
                Program { risk_rows: Some(w.clone()), ..Program::default() },
            );
            let bayes_worst = probe.objective_value(&b.p);
            let mm_worst = m.checks.worst_case_risk.unwrap();
            assert!(mm_worst <= bayes_worst * (1.0 + 1e-8), "{loss} ε = {}: {mm_worst} vs {bayes_worst}", m.eps);
            assert!(m.bayes_risk >= b.bayes_risk * (1.0 - 1e-8), "{loss} ε = {}", m.eps);
            // Not a tie: the two programs really differ on this model.
            assert!(mm_worst < bayes_worst * (1.0 - 1e-3), "{loss} ε = {}: minimax gains nothing?", m.eps);
            // The Lagrangian bound (least-favourable-prior form) certifies the minimax optimum.
            let d = m.checks.dual_bound.unwrap();
            assert!(d <= mm_worst * (1.0 + 1e-9) && d >= mm_worst * (1.0 - 1e-7), "bound {d} vs {mm_worst}");
        }
    }
}

#[test]
fn minimax_agrees_across_backends() {
    let mm_model = bernoulli(8, 16, "objective = \"minimax\"", "squared");
    let a = solve_model(&mm_model, None, SolverChoice::HighsSimplex).unwrap();
    for choice in [SolverChoice::Clarabel, SolverChoice::GoodLpMicrolp] {
        let b = solve_model(&mm_model, None, choice).unwrap();
        assert_eq!((a.len(), b.len()), (2, 2), "one solution per ε");
        for (x, y) in a.iter().zip(&b) {
            assert!(
                ((x.checks.objective - y.checks.objective) / x.checks.objective).abs() < 1e-6,
                "{choice}: {} vs {}",
                x.checks.objective,
                y.checks.objective
            );
        }
    }
}

#[test]
fn delta_zero_reproduces_pure_eps_and_larger_delta_never_hurts() {
    let m = bernoulli(15, 30, "", "squared");
    let cost = Arc::new(cost_matrix(&m, crate::lp::MemoryBudget::available()).unwrap());
    let solver = highs();
    for eps in [0.1, 0.5, 2.0] {
        let pure = solve_problem(&Problem::new(cost.clone(), m.family.neighbours(), eps), solver).unwrap();
        let mut last = f64::INFINITY;
        for delta in [0.0, 1e-4, 1e-3, 1e-2, 0.05, 0.2] {
            let program = Program { delta: Some(delta), ..Program::default() };
            let pb = Problem::with_program(cost.clone(), m.family.neighbours(), eps, program);
            let s = solve_problem(&pb, solver).unwrap();
            assert_eq!(s.status, Status::Optimal, "ε = {eps}, δ = {delta}: gap {:?}", s.checks.relative_gap);
            assert!(s.checks.delta_spent <= delta + 1e-9, "spent {} > δ = {delta}", s.checks.delta_spent);
            if delta == 0.0 {
                assert!(
                    (s.bayes_risk - pure.bayes_risk).abs() <= 1e-9 * pure.bayes_risk,
                    "{} vs {}",
                    s.bayes_risk,
                    pure.bayes_risk
                );
                assert!(s.checks.max_dp_violation <= 1e-9);
            }
            assert!(s.bayes_risk <= last * (1.0 + 1e-9), "ε = {eps}, δ = {delta}: {} > {last}", s.bayes_risk);
            last = s.bayes_risk;
        }
        // δ = 0.2 must buy something at these ε (the ε-only optimum is not the non-private one).
        assert!(last < pure.bayes_risk * 0.999, "ε = {eps}");
    }
}

#[test]
fn delta_program_agrees_across_backends() {
    let m = bernoulli(10, 20, "delta = 0.01", "absolute");
    let a = solve_model(&m, None, SolverChoice::HighsSimplex).unwrap();
    let b = solve_model(&m, None, SolverChoice::Clarabel).unwrap();
    assert_eq!((a.len(), b.len()), (2, 2), "one solution per ε");
    for (x, y) in a.iter().zip(&b) {
        assert!(((x.bayes_risk - y.bayes_risk) / x.bayes_risk).abs() < 1e-6);
        let d = x.checks.dual_bound.unwrap();
        assert!(d <= x.bayes_risk * (1.0 + 1e-9) && d >= x.bayes_risk * (1.0 - 1e-7), "bound {d} vs {}", x.bayes_risk);
    }
}

/// ∫_0^1 f by composite Simpson with n (even) intervals; the end values are one-sided limits
/// (taken 1e-12 inside), so f may jump or be undefined exactly at 0 and 1.
fn simpson(f: impl Fn(f64) -> f64, n: usize) -> f64 {
    let h = 1.0 / n as f64;
    let mut s = f(1e-12) + f(1.0 - 1e-12);
    for i in 1..n {
        s += f(i as f64 * h) * if i % 2 == 1 { 4.0 } else { 2.0 };
    }
    s * h / 3.0
}

#[test]
fn exact_conjugate_costs_agree_with_fine_quadrature() {
    use statrs::distribution::{Beta, Continuous};
    for (a, b) in [(1.0, 1.0), (2.0, 3.0), (1.0, 19.0), (0.7, 2.0)] {
        let e = ExactBetaBinomial { a, b, trials: 7 };
        let outputs = Grid::midpoint(0.0, 1.0, 9);
        let prior = Beta::new(a, b).unwrap();
        for loss in [Loss::Squared, Loss::Absolute, Loss::ZeroOne { tolerance: 0.1 }] {
            let c = e.cost_matrix(&outputs, &loss);
            for i in 0..8usize {
                for k in 0..9 {
                    let t = outputs.point(k)[0];
                    let binom = [1.0, 7.0, 21.0, 35.0, 35.0, 21.0, 7.0, 1.0][i];
                    let lik = |th: f64| binom * th.powi(i as i32) * (1.0 - th).powi(7 - i as i32);
                    let l = |th: f64| loss.eval(ndarray::arr1(&[th]).view(), ndarray::arr1(&[t]).view());
                    // Split at the loss's kinks so Simpson sees smooth pieces; a < 1 has an
                    // integrable endpoint singularity: substitute θ = u^(1/a) near 0 to remove it.
                    let f = |th: f64| prior.pdf(th) * lik(th) * l(th);
                    let mut knots = vec![0.0, 1.0, t];
                    if let Loss::ZeroOne { tolerance } = loss {
                        knots.extend([t - tolerance, t + tolerance]);
                    }
                    knots.retain(|x| (0.0..=1.0).contains(x));
                    knots.sort_by(f64::total_cmp);
                    let mut q = 0.0;
                    for w in knots.windows(2) {
                        let (lo, hi) = (w[0], w[1]);
                        if hi <= lo {
                            continue;
                        }
                        if lo == 0.0 && a < 1.0 {
                            // θ = lo + (hi − lo) u^(1/a): dθ = (hi − lo)/a u^(1/a − 1) du.
                            q += simpson(
                                |u| {
                                    let th = hi * u.powf(1.0 / a);
                                    f(th) * hi / a * u.powf(1.0 / a - 1.0)
                                },
                                10_000,
                            );
                        } else {
                            q += simpson(|u| f(lo + (hi - lo) * u) * (hi - lo), 10_000);
                        }
                    }
                    let got = c[[i, k]];
                    assert!(
                        (got - q).abs() <= 1e-8 * q.abs().max(1e-6),
                        "Beta({a},{b}) {} y={i} t={t}: {got} vs {q}",
                        loss.name()
                    );
                }
            }
        }
    }
}

#[test]
fn midpoint_grid_risk_converges_to_the_exact_risk() {
    let spec = |grid: &str| {
        binomial(20, 0, "squared", &[1.0])
            .name("conv")
            .grid(grid)
            .prior(BETA_2_3)
            .output("{ kind = \"midpoint\", points = 30 }")
            .model()
    };
    let exact = solve_model(&spec(r#"{ kind = "exact" }"#), None, SolverChoice::HighsSimplex).unwrap()[0].bayes_risk;
    let mut errors = Vec::new();
    for m in [10, 20, 40, 80, 160, 320] {
        let s =
            &solve_model(&spec(&format!(r#"{{ kind = "midpoint", points = {m} }}"#)), None, SolverChoice::HighsSimplex)
                .unwrap()[0];
        assert_eq!(s.status, Status::Optimal);
        errors.push((m, (s.bayes_risk - exact).abs() / exact));
    }
    eprintln!("relative |risk_M − risk_exact| by M: {errors:?}");
    // The midpoint rule converges as O(1/M²): each doubling should cut the error by about 4.
    for w in errors.windows(2) {
        assert!(w[1].1 < w[0].1 * 0.5, "no convergence from M = {} to {}: {errors:?}", w[0].0, w[1].0);
    }
    assert!(errors.last().unwrap().1 < 1e-4, "{errors:?}");
}

#[test]
fn lagrangian_bounds_of_the_extended_programs_hold_for_arbitrary_multipliers() {
    use rand::{rngs::StdRng, RngExt, SeedableRng};
    let m = bernoulli(6, 10, "", "squared");
    let cost = Arc::new(cost_matrix(&m, crate::lp::MemoryBudget::available()).unwrap());
    let w = Arc::new(m.risk_matrix());
    let solver = highs();
    let mut rng = StdRng::seed_from_u64(3);
    for program in [
        Program { delta: Some(0.01), ..Program::default() },
        Program { risk_rows: Some(w.clone()), ..Program::default() },
        Program { delta: Some(0.02), risk_rows: Some(w.clone()), ..Program::default() },
    ] {
        let pb = Problem::with_program(cost.clone(), m.family.neighbours(), 0.7, program);
        let s = solve_problem(&pb, solver).unwrap();
        let n = pb.n_rows() - pb.n_eq();
        for _ in 0..200 {
            let scale: f64 = 10f64.powf(rng.random_range(-4.0..1.0));
            let mu: Vec<f64> =
                (0..n).map(|_| if rng.random::<f64>() < 0.5 { 0.0 } else { scale * rng.random::<f64>() }).collect();
            let b = pb.lagrangian_bound(&mu);
            assert!(b <= s.checks.objective * (1.0 + 1e-9), "bound {b} above the optimum {}", s.checks.objective);
        }
        // And the solver's own multipliers make it tight.
        assert!(s.checks.relative_gap.unwrap() < 1e-7, "gap {:?}", s.checks.relative_gap);
    }
}
