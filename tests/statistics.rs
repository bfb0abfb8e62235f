//! The statistician's workflow (issue 16): reference risks and a design's worst case in `solve`,
//! the exact posterior of θ given releases, `plan` (smallest ε for a target risk) and `sample`'s
//! privacy budget. Randomised checks use fixed seeds; their tolerances are stated where used.

mod common;

use common::{assert_input_error, assert_success, bundled, stderr, stdout, stdout_json, ubapp};
use proptest::prelude::*;
use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};
use ubapp::analysis::{plan_eps, plan_trials, risk_profile};
use ubapp::mechanism::{Mechanism, Posterior, Release};
use ubapp::model::Model;
use ubapp::solve::{reference_risks, solve_model, SolveOptions, SolverChoice};
use ubapp::MemoryBudget;

/// K = 1, θ ∈ {0.25, 0.75} (uniform prior), Θ̃ = Θ, and the weights (10, 6) | (6, 10) of total 16
/// (ratio 5/3 ≤ e^0.6): small enough to compute the posterior by hand.
fn two_by_two() -> Mechanism {
    let model = common::binomial_model(1, 2, "squared", &[0.6]);
    let release = Release::from_weights(model, 0.6, 16, vec![vec![10, 6], vec![6, 10]]).unwrap();
    release.dense().expect("weights make a dense release").clone()
}

/// A certified mechanism for a binomial model (Beta(2, 5) prior) at ε.
fn binomial_mechanism(trials: u64, points: usize, eps: f64) -> Mechanism {
    let model =
        common::binomial(trials, points, "squared", &[eps]).prior("{ kind = \"beta\", a = 2.0, b = 5.0 }").model();
    let s = solve_model(&model, None, SolverChoice::Auto).unwrap().remove(0);
    let release = Release::certify(&model, &s).unwrap();
    release.dense().expect("a dense release at this size").clone()
}

#[test]
fn reference_risks_are_the_optima_at_tiny_and_huge_epsilon() {
    // The same limits (and tolerances) as src/tests/optimum_checks.rs, through the public API.
    let model = common::binomial_model(20, 15, "squared", &[1e-7, 15.0]);
    let refs = reference_risks(&model, MemoryBudget::available()).unwrap();
    let s = solve_model(&model, None, SolverChoice::Auto).unwrap();
    assert!(common::rel_diff(s[0].bayes_risk, refs.prior_risk) < 1e-5, "{} vs {}", s[0].bayes_risk, refs.prior_risk);
    assert!(
        common::rel_diff(s[1].bayes_risk, refs.non_private_risk) < 1e-6,
        "{} vs {}",
        s[1].bayes_risk,
        refs.non_private_risk
    );
}

#[test]
fn risk_profile_equals_the_dense_minimax_rows() {
    // R(θ_j) column by column against W·vec(P) with the dense risk matrix of the minimax program.
    let model = common::binomial(12, 9, "absolute", &[0.7]).output("{ kind = \"midpoint\", points = 13 }").model();
    let s = solve_model(&model, None, SolverChoice::Auto).unwrap().remove(0);
    let profile = risk_profile(&model, &s.p).unwrap();
    let w = model.risk_matrix();
    let n_out = model.outputs().len();
    for (j, r) in profile.iter().enumerate() {
        let dense: f64 = (0..w.ncols()).map(|c| w[[j, c]] * s.p[[c % n_out, c / n_out]]).sum();
        assert!((r - dense).abs() <= 1e-13, "θ_{j}: {r} vs {dense}");
    }
    // The prior-weighted average of the profile is the Bayes risk.
    let avg: f64 = profile.iter().zip(model.prior()).map(|(r, p)| r * p).sum();
    assert!(common::rel_diff(avg, s.bayes_risk) < 1e-12, "{avg} vs {}", s.bayes_risk);
}

#[test]
fn solve_warns_on_the_click_through_design_only_on_stderr() {
    let o = ubapp(&["solve", bundled("click-through").to_str().unwrap(), "--json"]);
    assert_success(&o);
    let rows = stdout_json(&o);
    let row = &rows[0];
    for key in ["prior_risk", "non_private_risk", "rmse", "worst_case_risk", "worst_case_theta", "released_range"] {
        assert!(!row[key].is_null(), "{key} missing: {row}");
    }
    let (risk, prior) = (row["bayes_risk"].as_f64().unwrap(), row["prior_risk"].as_f64().unwrap());
    assert!((row["rmse"].as_f64().unwrap() - risk.sqrt()).abs() < 1e-15);
    assert!(row["non_private_risk"].as_f64().unwrap() < risk && risk < prior);
    // The observation: the design never releases more than ≈ 0.2, so its risk near θ = 1 is large.
    assert!(row["released_range"][0][1].as_f64().unwrap() < 0.2, "{row}");
    assert!(row["worst_case_risk"].as_f64().unwrap() > 0.3 && row["worst_case_theta"][0].as_f64().unwrap() > 0.9);
    let err = stderr(&o);
    assert_eq!(err.lines().filter(|l| l.starts_with("warning:")).count(), 1, "{err}");
    assert!(err.contains("objective = \"minimax\""), "{err}");
    assert!(!stdout(&o).contains("warning"));
}

#[test]
fn solve_does_not_warn_on_bernoulli_k100() {
    let o = ubapp(&["solve", bundled("bernoulli-k100").to_str().unwrap()]);
    assert_success(&o);
    assert!(!stderr(&o).contains("warning"), "{}", stderr(&o));
    assert!(stdout(&o).contains("prior_risk") && stdout(&o).contains("worst_case_risk"));
}

#[test]
fn posterior_of_the_two_by_two_mechanism_by_hand() {
    let m = two_by_two();
    // Release θ̃ = 0.25 (k = 0): Pr(k | θ) = Σ_y q_θ(y) w[k, y]/16:
    // θ = 0.25: 0.75·10/16 + 0.25·6/16 = 9/16; θ = 0.75: 0.25·10/16 + 0.75·6/16 = 7/16.
    let p = Posterior::of(&m, &[0], 0.95).unwrap();
    assert!((p.probabilities[0] - 9.0 / 16.0).abs() < 1e-15 && (p.probabilities[1] - 7.0 / 16.0).abs() < 1e-15);
    assert!((p.posterior_mean[0] - (0.25 * 9.0 + 0.75 * 7.0) / 16.0).abs() < 1e-15);
    // Two releases of 0.25: ∝ 81 : 49. Each tail holds far more than 2.5 %: the interval is Θ.
    let p = Posterior::of(&m, &[0, 0], 0.95).unwrap();
    assert!((p.probabilities[0] - 81.0 / 130.0).abs() < 1e-15);
    assert_eq!(p.interval[0], [0.25, 0.75]);
    // At level 0.2 (tails of 0.4 each) only θ = 0.25 remains: Pr(θ < 0.25) = 0 ≤ 0.4 and
    // Pr(θ > 0.25) = 49/130 ≈ 0.377 ≤ 0.4.
    let p = Posterior::of(&m, &[0, 0], 0.2).unwrap();
    assert_eq!(p.interval[0], [0.25, 0.25]);
    // The command line agrees.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("m.json");
    m.save(&file).unwrap();
    let o = ubapp(&["posterior", file.to_str().unwrap(), "--release", "0.25", "--release", "0.25", "--json"]);
    assert_success(&o);
    let v = stdout_json(&o);
    assert!((v["probabilities"][0].as_f64().unwrap() - 81.0 / 130.0).abs() < 1e-15);
    assert!((v["posterior_mean"].as_f64().unwrap() - (0.25 * 81.0 + 0.75 * 49.0) / 130.0).abs() < 1e-15);
    assert_eq!(v["interval"], serde_json::json!([0.25, 0.75]));
    // A value typed short of an output rounds to it, and says so (0.3 is within half a grid step
    // of 0.25); one halfway between two outputs, or off the grid, is refused with the nearest one.
    let f = file.to_str().unwrap();
    let rounded = ubapp(&["posterior", f, "--release", "0.3", "--release", "0.25", "--json"]);
    assert_success(&rounded);
    assert_eq!(stdout_json(&rounded)["probabilities"], v["probabilities"]);
    assert!(stderr(&rounded).contains("--release 0.3 taken as the output 0.25"), "{}", stderr(&rounded));
    assert_input_error(
        &ubapp(&["posterior", f, "--release", "0.5"]),
        &["--release 0.5 lies half-way between the outputs 0.25 and 0.75"],
    );
    assert_input_error(&ubapp(&["posterior", f, "--release", "3"]), &["not an output", "the nearest output is 0.75"]);
    assert_input_error(&ubapp(&["posterior", f, "--release", "0.25,0.75"]), &["has 2 coordinate(s)", "have 1"]);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// The posterior sums to 1, its interval holds at least the level (re-summed here from the
    /// probabilities), and lower ≤ mean ≤ upper is not required (equal tails), but lower ≤ upper is.
    #[test]
    fn posterior_sums_to_one_and_the_interval_holds_the_level(
        trials in 1u64..15, points in 2usize..25, eps in 0.05f64..4.0, seed in 0u64..1000,
        n_releases in 1usize..5, level in 0.5f64..0.99,
    ) {
        let m = binomial_mechanism(trials, points, eps);
        let mut rng = StdRng::seed_from_u64(seed);
        let y = (seed as usize) % m.n_observations();
        let releases = m.sample_batch(y, n_releases, &mut rng);
        let p = Posterior::of(&m, &releases, level).unwrap();
        let total: f64 = p.probabilities.iter().sum();
        prop_assert!((total - 1.0).abs() < 1e-12, "sum {total}");
        let [lo, hi] = p.interval[0];
        prop_assert!(lo <= hi);
        let inside: f64 = p.theta.iter().zip(&p.probabilities).filter(|(t, _)| t[0] >= lo && t[0] <= hi).map(|(_, w)| w).sum();
        prop_assert!(inside >= level - 1e-12, "mass {inside} < level {level}");
        prop_assert!((inside - p.interval_mass[0]).abs() < 1e-12);
    }
}

#[test]
fn credible_interval_covers_at_the_level_under_the_prior() {
    // θ from the (discrete) prior, y from the binomial, one release from the mechanism: the
    // posterior is exact, so Pr(θ ∈ interval) = E[interval mass] ≥ level. 20 000 draws: the
    // empirical coverage's sd is ≤ √(0.05·0.95/20 000) ≈ 1.6e-3; we allow 5 sd (8e-3).
    let m = binomial_mechanism(20, 40, 1.0);
    let model: &Model = m.model();
    let level = 0.9;
    // Outputs never released have no posterior (probability 0 under every θ) and are never drawn.
    let posts: Vec<Option<Posterior>> = (0..m.n_outputs()).map(|k| Posterior::of(&m, &[k], level).ok()).collect();
    let mut rng = StdRng::seed_from_u64(16);
    let n = 20_000;
    let (mut covered, mut expected) = (0usize, 0.0);
    let cdf = |w: &[f64], u: f64| {
        let mut c = 0.0;
        w.iter()
            .position(|&x| {
                c += x;
                u < c
            })
            .unwrap_or(w.len() - 1)
    };
    for _ in 0..n {
        let j = cdf(model.prior(), rng.random::<f64>());
        let theta = model.theta().point(j)[0];
        let y = cdf(&model.family().likelihood(model.theta().point(j)), rng.random::<f64>());
        let k = m.sample(y, &mut rng);
        let post = posts[k].as_ref().expect("a drawn output has a posterior");
        let [lo, hi] = post.interval[0];
        // The interval's ends are grid values as people write them (0.475, not
        // 0.47500000000000003): compare within that rounding.
        let slack = 1e-12 * theta.abs().max(1.0);
        covered += usize::from(lo - slack <= theta && theta <= hi + slack);
        expected += post.interval_mass[0];
    }
    let (cov, exp) = (covered as f64 / n as f64, expected / n as f64);
    assert!(exp >= level, "mean interval mass {exp} below {level}");
    assert!(cov >= level - 8e-3, "coverage {cov} below {level} − 8e-3");
    assert!((cov - exp).abs() <= 8e-3, "coverage {cov} vs mean interval mass {exp}");
}

#[test]
fn plan_returns_an_eps_that_meets_the_target_while_099_eps_does_not() {
    let model = Model::load(&bundled("bernoulli-k100")).unwrap();
    let target = 0.05f64.powi(2);
    let plan = plan_eps(&model, target, SolveOptions::default()).unwrap();
    let at = |eps: f64| {
        let s = solve_model(&model, Some(&[eps]), SolveOptions::default()).unwrap().remove(0);
        s.checks.certified_objective.unwrap_or(s.bayes_risk)
    };
    assert!(at(plan.eps) <= target, "{} > {target} at ε = {}", at(plan.eps), plan.eps);
    assert!(at(0.99 * plan.eps) > target, "{} ≤ {target} at 0.99·ε", at(0.99 * plan.eps));
    // The command line gives the same ε, and refuses targets no ε can or must reach.
    let path = bundled("bernoulli-k100");
    let o = ubapp(&["plan", path.to_str().unwrap(), "--target-rmse", "0.05", "--json"]);
    assert_success(&o);
    assert_eq!(stdout_json(&o)["eps"].as_f64().unwrap(), plan.eps);
    assert_input_error(&ubapp(&["plan", path.to_str().unwrap(), "--target-risk", "0.1"]), &["ε → 0"]);
    assert_input_error(&ubapp(&["plan", path.to_str().unwrap(), "--target-risk", "0.001"]), &["non-private"]);
}

#[test]
fn plan_for_trials_returns_the_smallest_k_that_meets_the_target() {
    // Uniform prior, 50 midpoints, ε = 1: the optimum falls with K (a design for K records applied
    // to K of K + 1 is as private and as good).
    let model = common::binomial(4, 50, "squared", &[1.0]).model();
    let target = 0.012;
    let plan = plan_trials(&model, 1.0, target, SolveOptions::default()).unwrap();
    let at = |k: u64| {
        let m = model.with_trials(k).unwrap();
        let s = solve_model(&m, Some(&[1.0]), SolveOptions::default()).unwrap().remove(0);
        s.checks.certified_objective.unwrap_or(s.bayes_risk)
    };
    assert!(plan.trials > 1, "the target must need more than one trial: {plan:?}");
    assert!(at(plan.trials) <= target, "{} > {target} at K = {}", at(plan.trials), plan.trials);
    assert!(at(plan.trials - 1) > target, "{} ≤ {target} at K − 1 = {}", at(plan.trials - 1), plan.trials - 1);
    assert_eq!(plan.trials_below, Some(plan.trials - 1));
    // The command line gives the same K; a family without trials is refused by name.
    let (_dir, path) = common::model_file(&common::binomial(4, 50, "squared", &[1.0]).toml());
    let o = ubapp(&["plan", path.to_str().unwrap(), "--for", "trials", "--target-risk", "0.012", "--json"]);
    assert_success(&o);
    assert_eq!(stdout_json(&o)["trials"].as_u64().unwrap(), plan.trials);
    let poisson = bundled("rare-events-poisson-cap3");
    assert_input_error(
        &ubapp(&["plan", poisson.to_str().unwrap(), "--for", "trials", "--eps", "1", "--target-risk", "0.01"]),
        &["observation.trials"],
    );
}

#[test]
fn plan_curve_writes_the_optimum_at_each_eps_with_the_references() {
    let (dir, path) = common::model_file(&common::binomial(10, 30, "squared", &[1.0]).toml());
    let out = dir.path().join("curve");
    let o = ubapp(&[
        "plan",
        path.to_str().unwrap(),
        "--target-rmse",
        "0.15",
        "--curve",
        out.to_str().unwrap(),
        "--curve-range",
        "0.05,20",
        "--curve-points",
        "7",
    ]);
    assert_success(&o);
    let csv = std::fs::read_to_string(out.join("risk_vs_eps.csv")).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines[0], "eps,bayes_risk,rmse,prior_risk,non_private_risk");
    assert_eq!(lines.len(), 8);
    let model = Model::load(&path).unwrap();
    let refs = reference_risks(&model, MemoryBudget::available()).unwrap();
    let mut last = f64::INFINITY;
    for l in &lines[1..] {
        let f: Vec<f64> = l.split(',').map(|x| x.parse().unwrap()).collect();
        let s = solve_model(&model, Some(&[f[0]]), SolveOptions::default()).unwrap().remove(0);
        let want = s.checks.certified_objective.unwrap_or(s.bayes_risk);
        assert!((f[1] - want).abs() <= 1e-9 * want, "ε = {}: {} vs {want}", f[0], f[1]);
        assert!((f[2] - f[1].sqrt()).abs() <= 1e-9 * f[2]);
        assert!((f[3] - refs.prior_risk).abs() <= 1e-9 * refs.prior_risk);
        assert!(f[1] <= last * (1.0 + 1e-9), "non-increasing in ε");
        last = f[1];
    }
    for f in ["risk_vs_eps.png", "risk_vs_eps.svg"] {
        assert!(std::fs::metadata(out.join(f)).unwrap().len() > 1000, "{f}");
    }
    // The curve alone (no target) is allowed; a directory holding other files is refused, and
    // one holding the run's own model with a sentence that says so.
    let busy = dir.path().join("busy");
    std::fs::create_dir(&busy).unwrap();
    std::fs::write(busy.join("other.txt"), "x").unwrap();
    assert_input_error(
        &ubapp(&["plan", path.to_str().unwrap(), "--curve", busy.to_str().unwrap()]),
        &["--curve", "not empty"],
    );
    assert_input_error(
        &ubapp(&["plan", path.to_str().unwrap(), "--curve", dir.path().to_str().unwrap()]),
        &["--curve", "an input of this run"],
    );
    assert_success(&ubapp(&["plan", path.to_str().unwrap(), "--curve", out.to_str().unwrap(), "--curve-points", "3"]));
    assert_eq!(std::fs::read_to_string(out.join("risk_vs_eps.csv")).unwrap().lines().count(), 4);
}

#[test]
fn sample_refuses_an_over_budget_request_and_zero_draws() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("m.json");
    two_by_two().save(&file).unwrap();
    let f = file.to_str().unwrap();
    // 3 releases at ε = 0.6 spend 1.8.
    assert_input_error(&ubapp(&["sample", f, "--y", "1", "--n", "3"]), &["--n", "composition", "--budget"]);
    assert_input_error(
        &ubapp(&["sample", f, "--y", "1", "--n", "3", "--budget", "1"]),
        &["--budget", "over the budget 1"],
    );
    assert_input_error(&ubapp(&["sample", f, "--y", "1", "--n", "0"]), &["--n"]);
    let o = ubapp(&["sample", f, "--y", "1", "--n", "3", "--budget", "2", "--seed", "1"]);
    assert_success(&o);
    assert_eq!(stdout(&o).lines().count(), 3);
    assert!(stderr(&o).contains("basic composition"), "{}", stderr(&o));
    assert_success(&ubapp(&["sample", f, "--y", "1", "--n", "3", "--allow-composition", "--seed", "1"]));
    assert_success(&ubapp(&["sample", f, "--y", "1", "--seed", "1"]));
}

#[test]
fn batch_reports_the_composed_epsilon() {
    let m = two_by_two();
    let b = m.sample_spending(0, 5, &mut StdRng::seed_from_u64(3));
    assert_eq!(b.indices.len(), 5);
    // 5·ε rounded up: the float product, or the next double above it when it rounded down.
    let product = 5.0 * m.certified_eps();
    assert!(b.eps_spent >= product && b.eps_spent - product <= f64::EPSILON * product, "{}", b.eps_spent);
    assert!(5f64.mul_add(m.certified_eps(), -b.eps_spent) <= 0.0, "below the exact product");
    assert_eq!(b.delta_spent, 0.0);
}

/// A Poisson rate on [0, 4] (clipped at 1, a chain) with the given prior line.
fn poisson_text(prior: &str) -> String {
    format!(
        "name = \"g\"\ndescription = \"gamma\"\nepsilon = [1.0]\n[parameter]\nlower = 0.0\nupper = 4.0\ngrid = {{ kind = \"midpoint\", points = 20 }}\nprior = {prior}\n[observation]\nfamily = \"poisson\"\nrecords = 10\ncap = 1\n[loss]\nkind = \"squared\"\n"
    )
}

#[test]
fn gamma_prior_weights_the_grid_by_the_truncated_density_and_solves() {
    let m = common::parse_model(&poisson_text("{ kind = \"gamma\", shape = 2.0, rate = 1.5 }"));
    let theta = m.theta().values();
    let dens: Vec<f64> = theta.iter().map(|&x| x * (-1.5 * x).exp()).collect();
    let total: f64 = dens.iter().sum();
    for (w, d) in m.prior().iter().zip(&dens) {
        assert!((w - d / total).abs() < 1e-15, "{w} vs {}", d / total);
    }
    let s = solve_model(&m, None, SolverChoice::Auto).unwrap().remove(0);
    let refs = reference_risks(&m, MemoryBudget::available()).unwrap();
    assert!(refs.non_private_risk < s.bayes_risk && s.bayes_risk < refs.prior_risk);
    // Invalid parameters name the field.
    let (_dir, path) = common::model_file(&poisson_text("{ kind = \"gamma\", shape = 0.0, rate = 1.5 }"));
    assert_input_error(&ubapp(&["solve", path.to_str().unwrap()]), &["parameter.prior.shape"]);
}
