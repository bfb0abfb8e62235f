//! The party risks against independent routes: brute-force enumeration of release tuples, Monte
//! Carlo through the aggregator, and the single-party optimum at M = 1.

use ndarray::Array2;

use super::*;
use crate::model::ModelSpec;
use crate::solve::{solve_model, SolverChoice};

fn model(text: &str) -> Model {
    Model::from_spec(ModelSpec::from_toml(text, "test").unwrap()).unwrap()
}

fn binomial(points: usize, trials: u64, loss: &str) -> Model {
    model(&format!(
        "name = \"t\"\nepsilon = [1.0]\n[parameter]\ngrid = {{ kind = \"midpoint\", points = {points} }}\n\
         prior = {{ kind = \"beta\", a = 2.0, b = 3.0 }}\n[observation]\nfamily = \"binomial\"\ntrials = {trials}\n\
         [loss]\nkind = \"{loss}\"\n"
    ))
}

fn ubapp_local(m: &Model, eps: f64) -> LocalMechanism {
    let s = solve_model(m, Some(&[eps]), SolverChoice::Auto).unwrap().remove(0);
    LocalMechanism::ubapp(m, &s).unwrap()
}

/// Bayes risk of the posterior mean by brute force over all R^M release tuples, with products
/// of likelihoods taken directly (no logs, no histograms).
fn brute_force_bayes(m: &Model, p: &Array2<f64>, parties: u32, median: bool) -> f64 {
    let q = m.family().likelihood_matrix(m.theta());
    let r = p.dot(&q); // |R| × |Θ|
    let (n_rel, n_theta) = r.dim();
    let theta = m.theta().values();
    let prior = m.prior();
    let mut total = 0.0;
    for code in 0..n_rel.pow(parties) {
        let mut lik = vec![1.0; n_theta];
        let mut c = code;
        for _ in 0..parties {
            let k = c % n_rel;
            c /= n_rel;
            for j in 0..n_theta {
                lik[j] *= r[[k, j]];
            }
        }
        let joint: Vec<f64> = (0..n_theta).map(|j| prior[j] * lik[j]).collect();
        let z: f64 = joint.iter().sum();
        if z == 0.0 {
            continue;
        }
        let est = if median {
            let mut acc = 0.0;
            let mut e = theta[n_theta - 1];
            for j in 0..n_theta {
                acc += joint[j] / z;
                if acc >= 0.5 - 1e-12 {
                    e = theta[j];
                    break;
                }
            }
            e
        } else {
            (0..n_theta).map(|j| theta[j] * joint[j]).sum::<f64>() / z
        };
        for j in 0..n_theta {
            let l = if median { (theta[j] - est).abs() } else { (theta[j] - est).powi(2) };
            total += joint[j] * l;
        }
    }
    total
}

#[test]
fn exact_risk_matches_brute_force_enumeration_for_three_parties_and_four_trials() {
    for (loss, median) in [("squared", false), ("absolute", true)] {
        let m = binomial(6, 4, loss);
        let rule = Aggregate::for_loss(m.loss());
        for mech in [ubapp_local(&m, 0.8), LocalMechanism::geometric(&m, 0.8).unwrap()] {
            let got = party_risk(&m, &mech, rule, 3, &RiskOptions::default());
            assert_eq!(got.bayes.method, RiskMethod::Exact);
            let want = brute_force_bayes(&m, &mech.p, 3, median);
            assert!(
                (got.bayes.value - want).abs() <= 1e-12 * want,
                "{} {loss}: exact {} vs brute force {want}",
                mech.design.method(),
                got.bayes.value
            );
        }
    }
}

#[test]
fn exact_risk_agrees_with_monte_carlo_through_the_aggregator() {
    // Stated tolerance: 4 standard errors (a false failure has probability ≈ 6e-5 per comparison
    // under normality), seed fixed.
    let m = binomial(8, 6, "squared");
    for mech in [ubapp_local(&m, 0.5), LocalMechanism::geometric(&m, 0.5).unwrap()] {
        let exact = party_risk(&m, &mech, Aggregate::PosteriorMean, 5, &RiskOptions::default());
        let opts = RiskOptions { draws: 4000, seed: 11, force_monte_carlo: true, ..RiskOptions::default() };
        let mc = party_risk(&m, &mech, Aggregate::PosteriorMean, 5, &opts);
        assert_eq!(mc.bayes.method, RiskMethod::MonteCarlo);
        assert!(mc.bayes.se > 0.0);
        let z = (mc.bayes.value - exact.bayes.value).abs() / mc.bayes.se;
        assert!(
            z < 4.0,
            "{}: exact {} vs MC {} ± {}",
            mech.design.method(),
            exact.bayes.value,
            mc.bayes.value,
            mc.bayes.se
        );
        let (te, tm) = (exact.truth.unwrap(), mc.truth.unwrap());
        assert!((tm.value - te.value).abs() < 4.0 * tm.se, "true risk: {} vs {} ± {}", te.value, tm.value, tm.se);
    }
}

#[test]
fn one_party_reproduces_the_single_party_optimum() {
    for loss in ["squared", "absolute"] {
        let m = binomial(12, 10, loss);
        let s = solve_model(&m, Some(&[0.6]), SolverChoice::Auto).unwrap().remove(0);
        let artifact = crate::mechanism::Mechanism::from_solution(&m, &s).unwrap();
        let mech = LocalMechanism::from_artifact(&artifact);
        let grid = party_risk(&m, &mech, Aggregate::GridAction, 1, &RiskOptions::default());
        // The optimum's releases are Bayes points of their own rows (merging a row into a better
        // label would be feasible and cheaper), so the aggregator's best grid point is the release.
        let want = artifact.bayes_risk();
        assert!((grid.bayes.value - want).abs() <= 1e-9 * want, "{loss}: {} vs optimum {want}", grid.bayes.value);
        // The real-valued Bayes action can only do better.
        let best = party_risk(&m, &mech, Aggregate::for_loss(m.loss()), 1, &RiskOptions::default());
        assert!(best.bayes.value <= want * (1.0 + 1e-12), "{loss}: {} vs {want}", best.bayes.value);
    }
}

#[test]
fn more_parties_never_hurt_the_exact_aggregate() {
    // The Bayes risk of the posterior mean cannot increase with more independent releases.
    let m = binomial(10, 5, "squared");
    let mech = LocalMechanism::geometric(&m, 1.0).unwrap();
    let risks: Vec<f64> = (1..=6)
        .map(|p| party_risk(&m, &mech, Aggregate::PosteriorMean, p, &RiskOptions::default()).bayes.value)
        .collect();
    for w in risks.windows(2) {
        assert!(w[1] <= w[0] * (1.0 + 1e-12), "{risks:?}");
    }
}

#[test]
fn multinomial_and_poisson_parties_have_exact_risks() {
    let poisson = model(
        "name = \"p\"\nepsilon = [1.0]\n[parameter]\nlower = 0.0\nupper = 4.0\n\
         grid = { kind = \"midpoint\", points = 8 }\nprior = { kind = \"gamma\", shape = 2.0, rate = 1.0 }\n\
         [observation]\nfamily = \"poisson\"\nrecords = 2\ncap = 2\n[loss]\nkind = \"squared\"\n",
    );
    let multinomial = model(
        "name = \"m\"\nepsilon = [1.0]\n[parameter]\ngrid = { kind = \"simplex\", resolution = 3 }\n\
         prior = { kind = \"uniform\" }\n[observation]\nfamily = \"multinomial\"\ncategories = 3\nrecords = 2\n\
         [loss]\nkind = \"squared\"\n",
    );
    for m in [poisson, multinomial] {
        let mech = LocalMechanism::geometric(&m, 1.0).unwrap();
        assert!(mech.certified_eps <= 1.0);
        let r2 = party_risk(&m, &mech, Aggregate::PosteriorMean, 2, &RiskOptions::default());
        assert_eq!(r2.bayes.method, RiskMethod::Exact);
        let opts = RiskOptions { draws: 3000, seed: 5, force_monte_carlo: true, ..RiskOptions::default() };
        let mc = party_risk(&m, &mech, Aggregate::PosteriorMean, 2, &opts);
        assert!(
            (mc.bayes.value - r2.bayes.value).abs() < 4.0 * mc.bayes.se,
            "{}: {} vs {} ± {}",
            m.name(),
            r2.bayes.value,
            mc.bayes.value,
            mc.bayes.se
        );
    }
}

#[test]
fn one_party_plug_in_risk_is_the_clamped_geometric_counts_risk() {
    // Independent route: Σ_j π_j Σ_y q_j(y) Σ_z G[z, y] (z/K − θ_j)², with G the certified weights.
    let m = binomial(9, 7, "squared");
    let g = LocalMechanism::geometric(&m, 0.9).unwrap();
    let got = party_risk(&m, &g, Aggregate::PlugIn, 1, &RiskOptions::default()).bayes.value;
    let q = m.family().likelihood_matrix(m.theta());
    let theta = m.theta().values();
    let mut want = 0.0;
    for (j, &t) in theta.iter().enumerate() {
        for y in 0..=7 {
            for z in 0..=7 {
                want += m.prior()[j] * q[[y, j]] * g.p[[z, y]] * (z as f64 / 7.0 - t).powi(2);
            }
        }
    }
    assert!((got - want).abs() <= 1e-12 * want, "{got} vs {want}");
    // Bayes post-processing of the same releases is better.
    let bayes = party_risk(&m, &g, Aggregate::PosteriorMean, 1, &RiskOptions::default()).bayes.value;
    assert!(bayes < got);
    // And with several parties the plug-in average agrees with Monte Carlo through the aggregator.
    let exact = party_risk(&m, &g, Aggregate::PlugIn, 4, &RiskOptions::default());
    let opts = RiskOptions { draws: 3000, seed: 2, force_monte_carlo: true, ..RiskOptions::default() };
    let mc = party_risk(&m, &g, Aggregate::PlugIn, 4, &opts);
    assert!(
        (mc.bayes.value - exact.bayes.value).abs() < 4.0 * mc.bayes.se,
        "{} vs {} ± {}",
        exact.bayes.value,
        mc.bayes.value,
        mc.bayes.se
    );
}
