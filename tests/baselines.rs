//! Baselines and the solved mechanism: every exact (or numerically integrated) risk formula against
//! a Monte-Carlo estimate through `release`; LBaPP's closed form; UBaPP's optimality against every
//! pure-ε baseline rounded to its output grid.

use rand::rngs::StdRng;
use rand::SeedableRng;

use statrs::distribution::{Binomial, Discrete};
use ubapp::baselines::{build, BaselineOptions, Method};
use ubapp::eval::{bayes_risk, monte_carlo_risk, true_risk, Estimator, GridMechanism, RiskMethod, Setting};
use ubapp::model::{Model, ModelSpec};
use ubapp::solve::{solve_model, SolverChoice};

fn model(trials: u64, points: usize, lower: f64, upper: f64, loss: &str, prior: &str) -> Model {
    let text = format!(
        "name = \"t\"\nepsilon = [1.0]\n[parameter]\nlower = {lower}\nupper = {upper}\n\
         grid = {{ kind = \"midpoint\", points = {points} }}\nprior = {prior}\n\
         [observation]\nfamily = \"binomial\"\ntrials = {trials}\n[loss]\nkind = \"{loss}\"\n"
    );
    Model::from_spec(ModelSpec::from_toml(&text, "test").unwrap()).unwrap()
}

/// Every method's risk at θ agrees with the Monte-Carlo mean of its releases within 5 standard
/// errors plus 1e-6 (a false failure has probability ≈ 6e-7 per comparison under normality; the
/// seed is fixed, so the test is deterministic).
fn check_against_monte_carlo(m: &Model, eps_list: &[f64], thetas: &[f64], draws: usize) {
    let setting = Setting::of(m).unwrap();
    let opts = BaselineOptions::default();
    let mut rng = StdRng::seed_from_u64(20260521);
    let solutions = solve_model(m, Some(eps_list), SolverChoice::Clarabel).unwrap();
    for (ei, &eps) in eps_list.iter().enumerate() {
        let mut ests: Vec<Box<dyn Estimator>> =
            vec![Box::new(GridMechanism::from_solution(m, &solutions[ei], setting))];
        for method in Method::ALL {
            if let Some(e) = build(method, m, eps, &opts).unwrap() {
                ests.push(e);
            }
        }
        assert!(ests.len() >= 14, "every method applies (got {})", ests.len());
        for est in &ests {
            for &theta in thetas {
                let r = est.risk_at(theta);
                if r.method == RiskMethod::MonteCarlo {
                    continue; // nothing exact to check
                }
                let (mc, se) = monte_carlo_risk(est.as_ref(), &setting, theta, draws, &mut rng);
                assert!(
                    (r.value - mc).abs() <= 5.0 * se + 1e-6,
                    "{} at ε = {eps}, θ = {theta} ({:?} loss): formula {} vs Monte Carlo {mc} ± {se}",
                    est.id(),
                    setting.loss,
                    r.value
                );
            }
        }
    }
}

#[test]
fn exact_risks_match_monte_carlo_squared_loss() {
    let m = model(12, 15, 0.0, 1.0, "squared", "{ kind = \"uniform\" }");
    check_against_monte_carlo(&m, &[0.3, 2.0], &[0.13, 0.5, 0.81], 200_000);
}

#[test]
fn exact_risks_match_monte_carlo_absolute_loss_and_a_restricted_interval() {
    // A clamp that binds (Θ = [0.1, 0.8]) and absolute loss exercise the numerical routes.
    let m = model(12, 12, 0.1, 0.8, "absolute", "{ kind = \"beta\", a = 2.0, b = 3.0 }");
    check_against_monte_carlo(&m, &[0.5, 3.0], &[0.15, 0.62], 200_000);
}

#[test]
fn lbapp_bayes_risk_has_the_papers_closed_form() {
    // K = 100, uniform prior on a 100-point midpoint grid: the Bayes risk of
    // (y+1)/(K+2) + Lap(1/((K+2)ε)) is Σ_j π_j E[((y+1)/(K+2) − θ_j)²] + 2/((K+2)ε)².
    let m = model(100, 100, 0.0, 1.0, "squared", "{ kind = \"uniform\" }");
    let k = 100.0;
    for eps in [0.001, 0.1, 1.0, 5.0] {
        let est = build(Method::Lbapp, &m, eps, &BaselineOptions::default()).unwrap().unwrap();
        let got = bayes_risk(est.as_ref(), &m);
        let mut want = 2.0 / ((k + 2.0) * eps).powi(2);
        for j in 0..100 {
            let theta = (j as f64 + 0.5) / 100.0;
            let b = Binomial::new(theta, 100).unwrap();
            let q: Vec<f64> = (0..=100).map(|y| b.pmf(y)).collect();
            want += 0.01
                * q.iter().enumerate().map(|(y, p)| p * ((y as f64 + 1.0) / (k + 2.0) - theta).powi(2)).sum::<f64>();
        }
        assert_eq!(got.method, RiskMethod::Exact);
        assert!((got.value - want).abs() <= 1e-12 * want, "ε = {eps}: {} vs {want}", got.value);
    }
}

#[test]
fn true_risk_of_lbapp_matches_the_continuous_closed_form() {
    // Under the continuous uniform prior: ∫ [Kθ(1−θ) + (1 − 2θ)²]/(K+2)² dθ = 1/(6(K+2)),
    // plus the noise 2/((K+2)ε)².
    let m = model(30, 20, 0.0, 1.0, "squared", "{ kind = \"uniform\" }");
    let k = 30.0;
    for eps in [0.05, 2.0] {
        let est = build(Method::Lbapp, &m, eps, &BaselineOptions::default()).unwrap().unwrap();
        let got = true_risk(est.as_ref(), &m).value;
        let want = 1.0 / (6.0 * (k + 2.0)) + 2.0 / ((k + 2.0) * eps).powi(2);
        assert!((got - want).abs() <= 1e-10 * want, "ε = {eps}: {got} vs {want}");
    }
}

#[test]
fn ubapp_beats_every_pure_baseline_rounded_to_its_grid() {
    // Rounding a release to the nearest output point is post-processing, so the rounded baseline is
    // a feasible point of the LP: UBaPP's optimum can only be lower (up to solver tolerance).
    let opts = BaselineOptions::default();
    let eps_list = [0.01, 0.5, 5.0];
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/models");
    let mut checked = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) != Some("toml") {
            continue;
        }
        let m = Model::load(&path).unwrap();
        let Some(setting) = Setting::of(&m) else { continue };
        // A minimax program minimises the worst case, not the Bayes risk compared here.
        if m.objective() != ubapp::model::Objective::Bayes {
            continue;
        }
        let outputs = m.outputs().values();
        let solutions = solve_model(&m, Some(&eps_list), SolverChoice::Clarabel).unwrap();
        for (s, &eps) in solutions.iter().zip(&eps_list) {
            let ubapp = GridMechanism::from_solution(&m, s, setting);
            // The estimator route (Σ_j π_j Σ_y q Σ_k P L) reproduces the LP objective.
            let via_trait = bayes_risk(&ubapp, &m).value;
            assert!(
                (via_trait - s.bayes_risk).abs() <= 1e-9 * s.bayes_risk,
                "{}: {via_trait} vs {}",
                m.name(),
                s.bayes_risk
            );
            for method in Method::ALL {
                let Some(est) = build(method, &m, eps, &opts).unwrap() else { continue };
                if !est.privacy().is_pure() {
                    continue;
                }
                let Some(p) = est.rounded_mechanism(&outputs) else { continue };
                let grid = GridMechanism {
                    id: "rounded",
                    privacy: est.privacy(),
                    p: p.clone(),
                    outputs: outputs.clone(),
                    setting,
                };
                let rounded = bayes_risk(&grid, &m).value;
                assert!(
                    s.bayes_risk <= rounded * (1.0 + 1e-6) + 1e-12,
                    "{} ε = {eps}: UBaPP {} > rounded {} {rounded}",
                    m.name(),
                    s.bayes_risk,
                    method.id()
                );
                // The rounded matrix is a mechanism: columns sum to 1.
                for c in p.columns() {
                    assert!((c.sum() - 1.0).abs() < 1e-9, "{}: column sum {}", method.id(), c.sum());
                }
                checked += 1;
            }
        }
    }
    assert!(checked >= 4 * 3 * 6, "checked {checked} (model, ε, baseline) triples");
}
