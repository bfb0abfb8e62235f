//! The seeds' distributed claims, reproduced on our models through the public route (numbers in
//! docs/comparing.md, "Several parties"):
//! - Chen & Sung: DSSA's risk is (1/(MNI))(1 + 2Λ²/(Nε²I)) (PAPERS.md §3, corrected), I = θ(1 − θ)
//!   the Fisher information of the natural parameter, Λ = 1 for Bernoulli records;
//! - CAPE (Imtiaz et al.): a factor S in noise variance over the conventional distributed Gaussian.

use ubapp::compare::{build, BaselineOptions, Method};
use ubapp::model::{Model, ModelSpec};

fn binomial(trials: u64) -> Model {
    let text = format!(
        "name = \"t\"\nepsilon = [1.0]\n[parameter]\ngrid = {{ kind = \"midpoint\", points = 50 }}\n\
         prior = {{ kind = \"uniform\" }}\n[observation]\nfamily = \"binomial\"\ntrials = {trials}\n\
         [loss]\nkind = \"squared\"\n"
    );
    Model::from_spec(ModelSpec::from_toml(&text, "test").unwrap()).unwrap()
}

#[test]
fn dssa_risk_follows_the_corrected_chen_sung_factor() {
    // Away from the ends of [0, 1] the clamp is inactive up to exponentially small terms, so the
    // exact risk is the formula's: sampling variance θ(1−θ)/(MN) times 1 + 2/(Nε²θ(1−θ)).
    for (parties, n, eps, theta) in [(4u64, 50u64, 1.0, 0.4), (10, 20, 2.0, 0.5), (2, 200, 0.5, 0.3)] {
        let m = binomial(parties * n);
        let opts = BaselineOptions { parties: Some(parties), ..BaselineOptions::default() };
        let est = build(Method::Dssa, &m, eps, &opts).unwrap().unwrap();
        let got = est.risk_at(theta).value;
        let info = theta * (1.0 - theta);
        let want = info / (parties * n) as f64 * (1.0 + 2.0 / (n as f64 * eps * eps * info));
        assert!((got - want).abs() <= 1e-3 * want, "M {parties}, N {n}, ε {eps}: {got} vs {want}");
    }
}

#[test]
fn cape_gains_less_than_a_factor_s_once_colluders_are_accounted_for() {
    // Noise variance (risk minus the sampling variance θ(1−θ)/K, the estimators are unbiased and
    // unclamped) of the conventional scheme over CAPE's. With our exact calibration against the
    // aggregator plus ⌈S/3⌉ − 1 colluding sites, the gain is S/(Σ⁻¹)₁₁: (S + 1)/2 for S ≤ 3, not S.
    let theta = 0.5;
    for sites in [2u64, 3, 4, 10, 20] {
        let m = binomial(sites * 10);
        let opts = BaselineOptions { parties: Some(sites), ..BaselineOptions::default() };
        let sampling = theta * (1.0 - theta) / (sites * 10) as f64;
        let noise = |method| build(method, &m, 0.5, &opts).unwrap().unwrap().risk_at(theta).value - sampling;
        let (conventional, cape, pooled) =
            (noise(Method::GaussianConventional), noise(Method::Cape), noise(Method::Gaussian));
        let gain = conventional / cape;
        eprintln!("S = {sites}: conventional/cape = {gain:.3}, cape/pooled = {:.3}", cape / pooled);
        assert!((conventional / pooled - sites as f64).abs() < 1e-6 * sites as f64, "conventional is S × pooled");
        assert!(gain < sites as f64 + 1e-9 && gain > 1.0, "S = {sites}: gain {gain}");
        if sites <= 3 {
            let want = (sites as f64 + 1.0) / 2.0;
            assert!((gain - want).abs() < 1e-6, "S = {sites}: gain {gain} vs (S + 1)/2 = {want}");
        }
    }
}
