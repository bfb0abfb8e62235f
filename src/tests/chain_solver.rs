//! The chain solver against the general LP backends, and its certificate against brute force.

use std::sync::Arc;

use super::common::{binomial, binomial_model, bundled, bundled_models, solve_problem};
use crate::lp::{cost_matrix, Problem};
use crate::model::{Model, Neighbours};
use crate::solve::chain::{self, certify, solve_dense, solve_geometric, DenseCosts};
use crate::solve::{solve_model, SolverChoice, Status};
use ndarray::Array2;
use rand::{rngs::StdRng, RngExt, SeedableRng};

/// Relative agreement required between the chain optimum and an LP backend's: the LP backends'
/// own certified accuracy (CHECK_TOLERANCE) is 1e-7.
const LP_ACCURACY: f64 = 1e-7;

fn rel(a: f64, b: f64) -> f64 {
    (a - b).abs() / b.abs()
}

fn lp_backends() -> Vec<SolverChoice> {
    let mut v = Vec::new();
    if cfg!(feature = "clarabel") {
        v.push(SolverChoice::Clarabel);
    }
    if cfg!(feature = "highs") {
        v.push(SolverChoice::Highs);
    }
    v
}

/// Compare the chain solver with each LP backend on `model` at `eps`.
fn check_against_lp(model: &Model, eps: &[f64], backends: &[SolverChoice]) {
    let chain = solve_model(model, Some(eps), SolverChoice::Chain).unwrap();
    assert_eq!(chain.len(), eps.len(), "{}: one solution per ε", model.name());
    for s in &chain {
        assert_eq!(s.solver, "chain", "{} ε = {}: {}", model.name(), s.eps, s.solver_detail);
        assert_eq!(s.status, Status::Optimal, "{} ε = {}: {}", model.name(), s.eps, s.solver_detail);
        assert!(s.checks.relative_gap.unwrap() <= chain::GAP_TOLERANCE, "{} ε = {}", model.name(), s.eps);
        assert!(s.checks.max_dp_violation <= 1e-12 && s.checks.max_column_error <= 1e-12 && s.checks.min_entry >= 0.0);
    }
    for &b in backends {
        let lp = solve_model(model, Some(eps), b).unwrap();
        assert_eq!(lp.len(), eps.len(), "{} with {b}: one solution per ε", model.name());
        for (c, l) in chain.iter().zip(&lp) {
            assert!(
                rel(c.bayes_risk, l.bayes_risk) <= LP_ACCURACY,
                "{} ε = {}: chain {} vs {} {}",
                model.name(),
                c.eps,
                c.bayes_risk,
                l.solver,
                l.bayes_risk
            );
            // The certified bound never exceeds what a feasible LP point achieves (up to the LP's
            // own feasibility tolerance).
            assert!(c.checks.dual_bound.unwrap() <= l.bayes_risk * (1.0 + LP_ACCURACY));
        }
    }
}

/// The chain solver applies to chain neighbours and the plain Bayes program.
fn is_chain_model(model: &Model) -> bool {
    model.family.neighbours().is_chain() && crate::lp::Program::for_model(model).is_plain()
}

/// The bundled model `name` against Clarabel at every ε.
fn assert_bundled_model_matches_clarabel(name: &str) {
    let model = bundled(&format!("{name}.toml"));
    assert!(is_chain_model(&model), "{name} is not a chain model");
    if cfg!(feature = "clarabel") {
        check_against_lp(&model, &model.epsilons.clone(), &[SolverChoice::Clarabel]);
    }
}

/// The bundled model `name` against HiGHS (several times slower on these LPs): at every ε on
/// small models, at the smallest ε on the others.
fn assert_bundled_model_matches_highs(name: &str) {
    let model = bundled(&format!("{name}.toml"));
    assert!(is_chain_model(&model), "{name} is not a chain model");
    if cfg!(feature = "highs") {
        let all = model.epsilons.clone();
        let few = if model.family.observation_count() * model.outputs.len() <= 5000 {
            all
        } else {
            vec![all.iter().copied().fold(f64::INFINITY, f64::min)]
        };
        check_against_lp(&model, &few, &[SolverChoice::Highs]);
    }
}

/// Per bundled chain model a module with one test per LP backend; `CHAIN_MODELS` lists them.
macro_rules! chain_models {
    ($($module:ident: $model:expr;)*) => {
        const CHAIN_MODELS: &[&str] = &[$($model),*];
        $(
            mod $module {
                #[test]
                fn matches_clarabel() {
                    super::assert_bundled_model_matches_clarabel($model);
                }

                #[test]
                fn matches_highs() {
                    super::assert_bundled_model_matches_highs($model);
                }
            }
        )*
    };
}

chain_models! {
    bundled_bernoulli_k100: "bernoulli-k100";
    bundled_bernoulli_k100_fine_output: "bernoulli-k100-fine-output";
    bundled_bernoulli_k100_paper_grid: "bernoulli-k100-paper-grid";
    bundled_click_through: "click-through";
    bundled_click_through_exact: "click-through-exact";
    bundled_click_through_robust: "click-through-robust";
    bundled_hospitals_5_parties: "hospitals-5-parties";
    bundled_prevalence_asymmetric_loss: "prevalence-asymmetric-loss";
    bundled_prevalence_imperfect_test: "prevalence-imperfect-test";
    bundled_rare_event_beta: "rare-event-beta";
}

/// The tests above cover every bundled chain model.
#[test]
fn every_bundled_chain_model_has_its_own_test() {
    let mut chain: Vec<String> = bundled_models()
        .into_iter()
        .filter(|p| is_chain_model(&Model::load(p).unwrap()))
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    chain.sort_unstable();
    assert!(chain.len() >= 6, "only {} bundled chain models", chain.len());
    let mut listed = CHAIN_MODELS.to_vec();
    listed.sort_unstable();
    assert_eq!(chain, listed);
}

fn random_model(rng: &mut StdRng) -> Model {
    let trials = rng.random_range(1..25u64);
    let points = rng.random_range(2..30usize);
    let prior = if rng.random_bool(0.5) {
        "{ kind = \"uniform\" }".to_string()
    } else {
        format!("{{ kind = \"beta\", a = {:.3}, b = {:.3} }}", rng.random_range(0.5..6.0), rng.random_range(0.5..6.0))
    };
    let grid = if rng.random_bool(0.7) {
        format!("{{ kind = \"midpoint\", points = {points} }}")
    } else {
        format!("{{ kind = \"prior-samples\", points = {points}, seed = {} }}", rng.random_range(0..1000u64))
    };
    let output = match rng.random_range(0..3) {
        0 => "\"parameter\"".to_string(),
        1 => format!("{{ kind = \"midpoint\", points = {} }}", rng.random_range(1..40usize)),
        _ => format!(
            "{{ kind = \"prior-samples\", points = {}, seed = {} }}",
            rng.random_range(1..40usize),
            rng.random_range(0..1000u64)
        ),
    };
    let loss = if rng.random_bool(0.5) { "squared" } else { "absolute" };
    let eps: Vec<f64> =
        (0..3).map(|_| format!("{:.6}", 10f64.powf(rng.random_range(-3.0..0.8))).parse().unwrap()).collect();
    binomial(trials, points, loss, &eps).name("random").grid(&grid).prior(&prior).output(&output).model()
}

#[test]
fn randomised_small_models_match_the_lp() {
    let mut rng = StdRng::seed_from_u64(5);
    let backends = lp_backends();
    for case in 0..40 {
        let model = random_model(&mut rng);
        // Alternate backends to keep the suite fast; both are exercised.
        let b = [backends[case % backends.len()]];
        check_against_lp(&model, &model.epsilons.clone(), &b);
    }
}

/// All zig-zag rays of length n, each with its sum (for the sum-normalised violation).
fn all_rays(n: usize, eps: f64) -> Vec<Vec<f64>> {
    let a = eps.exp();
    (0..1u32 << (n - 1))
        .map(|mask| {
            let mut r = vec![1.0f64];
            for i in 0..n - 1 {
                let last = r[i];
                r.push(if mask >> i & 1 == 1 { last * a } else { last / a });
            }
            let top = r.iter().copied().fold(0.0, f64::max);
            r.iter().map(|v| v / top).collect()
        })
        .collect()
}

/// Independent of the solver: the bound λ proves, by enumerating every ray of every output.
fn brute_force_bound(ct: &Array2<f64>, lambda: &[f64], eps: f64) -> f64 {
    let n = lambda.len();
    let rays = all_rays(n, eps);
    let mut shift = 0.0f64;
    for k in 0..ct.nrows() {
        for r in &rays {
            let v: f64 = (0..n).map(|i| (ct[[k, i]] - lambda[i]) * r[i]).sum();
            let mass: f64 = r.iter().sum();
            shift = shift.max(-v / mass);
        }
    }
    lambda.iter().sum::<f64>() - n as f64 * shift
}

#[test]
fn random_costs_column_generation_reaches_the_lp_optimum() {
    let mut rng = StdRng::seed_from_u64(11);
    let mut geometric_not_optimal = 0;
    for _ in 0..12 {
        let n = rng.random_range(3..11usize);
        let n_out = rng.random_range(2..7usize);
        let eps = 10f64.powf(rng.random_range(-1.0..0.5));
        let cost = Array2::from_shape_fn((n, n_out), |_| rng.random_range(0.0..1.0));
        let ct = cost.t().to_owned();
        let g = solve_geometric(&DenseCosts::new(&cost), eps);
        if !g.certified() {
            geometric_not_optimal += 1;
        }
        let d = solve_dense(&cost, eps);
        assert!(d.certified, "n = {n}, |Θ̃| = {n_out}, ε = {eps}: {}", d.detail);
        // Feasible P.
        let viol = crate::lp::max_dp_violation(&d.p, &Neighbours::Chain { len: n }, eps);
        assert!(viol <= 1e-9, "DP violation {viol}");
        for c in d.p.columns() {
            assert!((c.sum() - 1.0).abs() <= 1e-9);
        }
        // The certificate, re-checked by enumeration (no solver code involved).
        let brute = brute_force_bound(&ct, &d.lambda, eps);
        assert!(brute >= d.dual_bound - 1e-12 * d.bayes_risk, "brute {brute} < claimed bound {}", d.dual_bound);
        assert!(rel(brute, d.bayes_risk) <= 1e-8, "brute-force bound {brute} vs risk {}", d.bayes_risk);
        // The LP optimum, by each backend.
        for b in lp_backends() {
            let problem = Problem::new(Arc::new(cost.clone()), Neighbours::Chain { len: n }, eps);
            let s = solve_problem(&problem, b).unwrap();
            assert!(
                rel(d.bayes_risk, s.bayes_risk) <= LP_ACCURACY,
                "{} vs {} {}",
                d.bayes_risk,
                s.solver,
                s.bayes_risk
            );
            assert!(d.dual_bound <= s.bayes_risk * (1.0 + LP_ACCURACY));
        }
    }
    assert!(
        geometric_not_optimal >= 6,
        "random costs should defeat geometric + remap (only {geometric_not_optimal} did)"
    );
}

#[test]
fn certificate_rejects_wrong_duals_and_agrees_with_brute_force() {
    let model = binomial_model(9, 12, "absolute", &[0.4]);
    let cost = cost_matrix(&model, crate::lp::MemoryBudget::available()).unwrap();
    let costs = DenseCosts::new(&cost);
    let g = solve_geometric(&costs, 0.4);
    assert!(g.certified());
    let brute = brute_force_bound(costs.rows(), &g.lambda, 0.4);
    assert!(brute >= g.certificate.bound - 1e-15 && rel(brute, g.bayes_risk) < 1e-12);
    // Raising one dual by a lot must be caught: the shifted bound drops below Σλ.
    let mut bad = g.lambda.clone();
    bad[4] += 0.05;
    let c = certify(&costs, 0.4, &bad);
    assert!(c.shift > 0.0 && c.bound < g.bayes_risk, "bound {} vs optimum {}", c.bound, g.bayes_risk);
    assert!(c.bound <= brute_force_bound(costs.rows(), &bad, 0.4) + 1e-15);
}

#[test]
fn compact_solver_matches_dense_chain_solver() {
    for (trials, points, out) in [(60u64, 40usize, "\"parameter\""), (200, 30, "{ kind = \"midpoint\", points = 77 }")]
    {
        for prior in ["{ kind = \"uniform\" }", "{ kind = \"beta\", a = 2.0, b = 5.0 }"] {
            let model =
                binomial(trials, points, "squared", &[0.05, 0.5, 3.0]).name("c").prior(prior).output(out).model();
            let dense = solve_model(&model, None, SolverChoice::Chain).unwrap();
            assert_eq!(dense.len(), 3, "one solution per ε");
            for s in dense {
                let (c, _) = chain::solve_model_compact(&model, s.eps).unwrap();
                assert!(c.certified(), "compact gap {}", c.relative_gap);
                assert!(rel(c.bayes_risk, s.bayes_risk) <= 1e-10, "compact {} vs dense {}", c.bayes_risk, s.bayes_risk);
                assert!(rel(c.mechanism.to_dense().iter().sum::<f64>(), s.p.iter().sum::<f64>()) < 1e-12);
            }
        }
    }
}

#[test]
fn compact_solver_refuses_other_losses() {
    let model = bundled("rare-event-beta.toml");
    let e = chain::solve_model_compact(&model, 0.5).unwrap_err();
    assert!(e.is_input() && e.to_string().contains("squared loss"), "{e}");
    let e = chain::solve_model_compact(&model, f64::NAN).unwrap_err();
    assert!(e.is_input(), "{e}");
}

#[test]
fn auto_picks_the_chain_solver_and_chain_is_a_backend() {
    let model = bundled("rare-event-beta.toml");
    let s = solve_model(&model, Some(&[0.5]), SolverChoice::Auto).unwrap();
    assert_eq!(s[0].solver, "chain");
    assert_eq!("chain".parse::<SolverChoice>().unwrap(), SolverChoice::Chain);
    assert_eq!(SolverChoice::Chain.to_string(), "chain");
    // Through the LpSolver trait on an assembled Problem.
    let problem = Problem::new(
        Arc::new(cost_matrix(&model, crate::lp::MemoryBudget::available()).unwrap()),
        model.family.neighbours(),
        0.5,
    );
    let raw = solve_problem(&problem, SolverChoice::Chain).unwrap();
    assert_eq!(raw.status, Status::Optimal);
    assert!(rel(raw.bayes_risk, s[0].bayes_risk) < 1e-14);
    // A non-chain relation is refused as bad input.
    let star = Neighbours::Graph { len: 3, edges: vec![(0, 1), (0, 2)] };
    let cost = Array2::from_elem((3, 2), 0.5);
    let problem = Problem::new(Arc::new(cost), star, 0.5);
    let e = solve_problem(&problem, SolverChoice::Chain).unwrap_err();
    assert!(e.is_input());
}

#[test]
fn squared_moments_reproduce_the_dense_cost_matrix() {
    use crate::solve::chain::ChainCosts;
    for (trials, prior) in [(40u64, "{ kind = \"uniform\" }"), (500, "{ kind = \"beta\", a = 0.7, b = 3.0 }")] {
        let model = binomial(trials, 37, "squared", &[1.0])
            .name("m")
            .prior(prior)
            .output("{ kind = \"midpoint\", points = 23 }")
            .model();
        let dense = cost_matrix(&model, crate::lp::MemoryBudget::available()).unwrap();
        let moments = chain::squared_moments(&model).unwrap();
        let scale = dense.iter().copied().fold(0.0, f64::max);
        for ((i, k), &c) in dense.indexed_iter() {
            let m = moments.at(k, i);
            // Rounding (≈1e-13 of the largest cost) plus the pmf tail cut (≤ 2e-18 mass per grid point).
            assert!((m - c).abs() <= 1e-12 * scale + 1e-17, "c[{k},{i}]: moments {m} vs dense {c}");
        }
    }
}
