//! The log-normal and mixture priors: grid weights against the closed-form cell probabilities of
//! each truncated component (statrs CDFs, an independent route from our densities), the continuous
//! density used by true risks against the closed-form normalised density, and the model file's
//! errors.

mod common;

use common::{assert_input_error, assert_success, binomial, model_file, stdout_json, ubapp};
use statrs::distribution::{Beta, Continuous, ContinuousCDF, Gamma, LogNormal};
use ubapp::eval::prior_shape;

/// Gamma(2, rate 8), LogNormal(−1.5, 0.6) and Beta(2, 5) on [0, 1], mixed 0.5 / 0.3 / 0.2.
const MIXTURE: &str = "{ kind = \"mixture\", weights = [5.0, 3.0, 2.0], components = [ \
    { kind = \"gamma\", shape = 2.0, rate = 8.0 }, { kind = \"log-normal\", mu = -1.5, sigma = 0.6 }, \
    { kind = \"beta\", a = 2.0, b = 5.0 } ] }";

/// A function of θ.
type Curve = Box<dyn Fn(f64) -> f64>;

/// The components as closed forms: (weight, cdf, pdf), each to be truncated to [0, 1].
fn components() -> Vec<(f64, Curve, Curve)> {
    let g = Gamma::new(2.0, 8.0).unwrap();
    let l = LogNormal::new(-1.5, 0.6).unwrap();
    let b = Beta::new(2.0, 5.0).unwrap();
    vec![
        (0.5, Box::new(move |x| g.cdf(x)), Box::new(move |x| g.pdf(x))),
        (
            0.3,
            Box::new(move |x: f64| if x > 0.0 { l.cdf(x) } else { 0.0 }),
            Box::new(move |x: f64| if x > 0.0 { l.pdf(x) } else { 0.0 }),
        ),
        (0.2, Box::new(move |x| b.cdf(x)), Box::new(move |x| b.pdf(x))),
    ]
}

/// Σ_j |π_j − P_j| between a midpoint grid's weights and the exact cell probabilities P_j of the
/// truncated (and mixed) prior.
fn total_variation(weights: &[f64], cells: &dyn Fn(f64, f64) -> f64) -> f64 {
    let m = weights.len();
    (0..m).map(|j| (weights[j] - cells(j as f64 / m as f64, (j + 1) as f64 / m as f64)).abs()).sum()
}

#[test]
fn log_normal_grid_weights_match_the_truncated_cell_probabilities() {
    let model = binomial(5, 2000, "squared", &[1.0]).prior("{ kind = \"log-normal\", mu = -1.5, sigma = 0.6 }").model();
    let l = LogNormal::new(-1.5, 0.6).unwrap();
    let z = l.cdf(1.0);
    let tv = total_variation(model.prior(), &|a, b| (l.cdf(b) - if a > 0.0 { l.cdf(a) } else { 0.0 }) / z);
    // The midpoint rule's error per cell is O(h³ f''); summed, O(h²) = O(2.5e-7) times f'' scale.
    assert!(tv < 1e-4, "total variation {tv:e}");
    let mean: f64 = model.prior().iter().zip(model.theta().values()).map(|(w, t)| w * t).sum();
    assert!(mean > 0.2 && mean < 0.3, "ln θ ≈ N(−1.5, 0.36): mean near e^(−1.5+0.18) ≈ 0.27, got {mean}");
}

#[test]
fn mixture_grid_weights_match_the_mixed_truncated_cell_probabilities() {
    let model = binomial(5, 2000, "squared", &[1.0]).prior(MIXTURE).model();
    let comps = components();
    let cells =
        |a: f64, b: f64| -> f64 { comps.iter().map(|(w, cdf, _)| w * (cdf(b) - cdf(a)) / (cdf(1.0) - cdf(0.0))).sum() };
    let tv = total_variation(model.prior(), &cells);
    assert!(tv < 1e-4, "total variation {tv:e}");
    assert!((model.prior().iter().sum::<f64>() - 1.0).abs() < 1e-12);
    // Each component's share is exactly its weight: a single-component "mixture" is that prior.
    let one = binomial(5, 50, "squared", &[1.0])
        .prior("{ kind = \"mixture\", weights = [3.0], components = [{ kind = \"gamma\", shape = 2.0, rate = 8.0 }] }")
        .model();
    let plain = binomial(5, 50, "squared", &[1.0]).prior("{ kind = \"gamma\", shape = 2.0, rate = 8.0 }").model();
    for (a, b) in one.prior().iter().zip(plain.prior()) {
        assert!((a - b).abs() < 1e-15);
    }
}

#[test]
fn mixture_density_for_true_risks_is_the_normalised_closed_form() {
    let model = binomial(5, 50, "squared", &[1.0]).prior(MIXTURE).model();
    let comps = components();
    let exact = |x: f64| -> f64 { comps.iter().map(|(w, cdf, pdf)| w * pdf(x) / (cdf(1.0) - cdf(0.0))).sum() };
    let shape = prior_shape(&model);
    assert_eq!(shape.len(), 201);
    for &(x, d) in shape.iter().filter(|(x, _)| *x > 0.0) {
        // Each component's normaliser is a 96-node Gauss–Legendre integral of a smooth density.
        assert!((d - exact(x)).abs() <= 1e-6 * exact(x).max(1e-3), "θ = {x}: {d} vs {}", exact(x));
    }
}

#[test]
fn a_mixture_model_solves_and_its_optimum_lies_between_the_references() {
    let (_dir, path) = model_file(&binomial(10, 40, "squared", &[0.5, 2.0]).prior(MIXTURE).toml());
    let o = ubapp(&["solve", path.to_str().unwrap(), "--json"]);
    assert_success(&o);
    for row in stdout_json(&o).as_array().unwrap() {
        let (r, lo, hi) = (
            row["bayes_risk"].as_f64().unwrap(),
            row["non_private_risk"].as_f64().unwrap(),
            row["prior_risk"].as_f64().unwrap(),
        );
        assert!(lo <= r * (1.0 + 1e-9) && r <= hi * (1.0 + 1e-9), "{lo} ≤ {r} ≤ {hi}");
    }
}

#[test]
fn bad_priors_are_refused_naming_the_field() {
    for (prior, words) in [
        ("{ kind = \"log-normal\", mu = 0.0, sigma = 0.0 }", &["parameter.prior.sigma", "> 0"][..]),
        ("{ kind = \"mixture\", weights = [1.0], components = [{ kind = \"uniform\" }, { kind = \"uniform\" }] }", &["parameter.prior.weights", "one weight per component"][..]),
        ("{ kind = \"mixture\", weights = [1.0, -1.0], components = [{ kind = \"uniform\" }, { kind = \"uniform\" }] }", &["parameter.prior.weights[1]"][..]),
        ("{ kind = \"mixture\", weights = [1.0, 1.0], components = [{ kind = \"uniform\" }, { kind = \"dirichlet\", alpha = [1.0, 1.0] }] }", &["parameter.prior.components[1]", "dirichlet"][..]),
        ("{ kind = \"mixture\", weights = [1.0, 1.0], components = [{ kind = \"uniform\" }, { kind = \"beta\", a = 0.0, b = 1.0 }] }", &["parameter.prior.components[1].a"][..]),
    ] {
        let (_dir, path) = model_file(&binomial(5, 20, "squared", &[1.0]).prior(prior).toml());
        assert_input_error(&ubapp(&["solve", path.to_str().unwrap()]), words);
    }
}
