//! Baselines through the public route (`compare::build` and the `Estimator` trait): LBaPP's Bayes
//! risk and true risk against the paper's closed forms, one ε per test. (The Monte-Carlo checks of
//! every risk formula and UBaPP's optimality against the rounded baselines are unit tests of
//! `compare`, beside the code they need.)

use ubapp::compare::{build, BaselineOptions, Method};
use ubapp::eval::{bayes_risk, true_risk, RiskMethod};
use ubapp::model::{Model, ModelSpec};

fn model(trials: u64, points: usize) -> Model {
    let text = format!(
        "name = \"t\"\nepsilon = [1.0]\n[parameter]\nlower = 0.0\nupper = 1.0\n\
         grid = {{ kind = \"midpoint\", points = {points} }}\nprior = {{ kind = \"uniform\" }}\n\
         [observation]\nfamily = \"binomial\"\ntrials = {trials}\n[loss]\nkind = \"squared\"\n"
    );
    Model::from_spec(ModelSpec::from_toml(&text, "test").unwrap()).unwrap()
}

/// Pr(y | θ) for y = 0..=k: p_0 = (1 − θ)^k, p_{y+1} = p_y (k − y)/(y + 1) · θ/(1 − θ) (0 < θ < 1).
fn binomial_pmf(k: u64, theta: f64) -> Vec<f64> {
    let mut p = vec![(1.0 - theta).powi(k as i32)];
    for y in 0..k {
        let next = p[y as usize] * (k - y) as f64 / (y + 1) as f64 * theta / (1.0 - theta);
        p.push(next);
    }
    p
}

/// K = 100, uniform prior on a 100-point midpoint grid: the Bayes risk of
/// (y+1)/(K+2) + Lap(1/((K+2)ε)) is Σ_j π_j E[((y+1)/(K+2) − θ_j)²] + 2/((K+2)ε)².
fn lbapp_bayes_risk_has_the_papers_closed_form(eps: f64) {
    let m = model(100, 100);
    let k = 100.0;
    let est = build(Method::Lbapp, &m, eps, &BaselineOptions::default()).unwrap().unwrap();
    let got = bayes_risk(est.as_ref(), &m);
    let mut want = 2.0 / ((k + 2.0) * eps).powi(2);
    for j in 0..100 {
        let theta = (j as f64 + 0.5) / 100.0;
        let q = binomial_pmf(100, theta);
        want +=
            0.01 * q.iter().enumerate().map(|(y, p)| p * ((y as f64 + 1.0) / (k + 2.0) - theta).powi(2)).sum::<f64>();
    }
    assert_eq!(got.method, RiskMethod::Exact);
    assert!((got.value - want).abs() <= 1e-12 * want, "ε = {eps}: {} vs {want}", got.value);
}

#[test]
fn lbapp_bayes_risk_has_the_papers_closed_form_at_eps_0_001() {
    lbapp_bayes_risk_has_the_papers_closed_form(0.001);
}

#[test]
fn lbapp_bayes_risk_has_the_papers_closed_form_at_eps_0_1() {
    lbapp_bayes_risk_has_the_papers_closed_form(0.1);
}

#[test]
fn lbapp_bayes_risk_has_the_papers_closed_form_at_eps_1() {
    lbapp_bayes_risk_has_the_papers_closed_form(1.0);
}

#[test]
fn lbapp_bayes_risk_has_the_papers_closed_form_at_eps_5() {
    lbapp_bayes_risk_has_the_papers_closed_form(5.0);
}

/// Under the continuous uniform prior: ∫ [Kθ(1−θ) + (1 − 2θ)²]/(K+2)² dθ = 1/(6(K+2)), plus the
/// noise 2/((K+2)ε)² (K = 30).
fn true_risk_of_lbapp_matches_the_continuous_closed_form(eps: f64) {
    let m = model(30, 20);
    let k = 30.0;
    let est = build(Method::Lbapp, &m, eps, &BaselineOptions::default()).unwrap().unwrap();
    let got = true_risk(est.as_ref(), &m).value;
    let want = 1.0 / (6.0 * (k + 2.0)) + 2.0 / ((k + 2.0) * eps).powi(2);
    assert!((got - want).abs() <= 1e-10 * want, "ε = {eps}: {got} vs {want}");
}

#[test]
fn true_risk_of_lbapp_matches_the_continuous_closed_form_at_eps_0_05() {
    true_risk_of_lbapp_matches_the_continuous_closed_form(0.05);
}

#[test]
fn true_risk_of_lbapp_matches_the_continuous_closed_form_at_eps_2() {
    true_risk_of_lbapp_matches_the_continuous_closed_form(2.0);
}

#[test]
fn lbapp_is_pure_eps_and_cape_is_eps_delta_with_the_options_delta() {
    let m = model(30, 20);
    let opts = BaselineOptions { delta: 1e-4, ..BaselineOptions::default() };
    let lbapp = build(Method::Lbapp, &m, 0.5, &opts).unwrap().unwrap();
    assert!(lbapp.privacy().is_pure());
    let cape = build(Method::Cape, &m, 0.5, &opts).unwrap().unwrap();
    assert_eq!((cape.privacy().eps(), cape.privacy().delta()), (0.5, 1e-4));
}

#[test]
fn ubapp_is_solved_rather_than_built() {
    let m = model(30, 20);
    assert!(build(Method::Ubapp, &m, 0.5, &BaselineOptions::default()).unwrap().is_none());
}
