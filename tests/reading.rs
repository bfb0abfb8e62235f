//! What a statistician reads is right and says what it is, through the binary: a vector posterior's
//! marginal intervals and joint region, the Bayes estimate for the model's loss, whole audit
//! witnesses, numbers as people write them, a half-way release, and the words of a refusal.

mod common;

use std::path::{Path, PathBuf};

use common::{
    assert_input_error, assert_success, binomial, bundled, stderr, stdout, stdout_json, ubapp_in, write_file,
};
use serde_json::Value;

/// `ubapp solve MODEL --eps EPS --out mech.json` in `dir`; the mechanism's path.
fn solve(dir: &Path, model: &Path, eps: &str) -> PathBuf {
    let o = ubapp_in(dir, &["solve", model.to_str().unwrap(), "--eps", eps, "--out", "mech.json"]);
    assert_success(&o);
    dir.join("mech.json")
}

fn floats(v: &Value) -> Vec<f64> {
    v.as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).collect()
}

#[test]
fn a_vector_posterior_labels_its_intervals_marginal_and_prints_a_joint_region_that_holds_the_level() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    solve(d, &bundled("vote-share-3way-small"), "1");
    for level in ["0.9", "0.95"] {
        let args = ["posterior", "mech.json", "--release", "0.6,0.2,0.2", "--level", level];
        let text = ubapp_in(d, &args);
        assert_success(&text);
        let t = stdout(&text);
        assert!(t.contains("marginal interval (coordinate 3)") && t.contains("marginal mass"), "{t}");
        assert!(!t.contains("mass inside the interval"), "an unlabelled mass: {t}");
        assert!(t.contains("joint credible region") && t.contains("joint mass of the box"), "{t}");
        let v = stdout_json(&ubapp_in(d, &[&args[..], &["--json"]].concat()));
        let level: f64 = level.parse().unwrap();
        let theta: Vec<Vec<f64>> = v["theta"].as_array().unwrap().iter().map(floats).collect();
        let p = floats(&v["probabilities"]);
        assert_eq!(v["interval_kind"], "marginal equal-tailed");
        assert_eq!(v["region"]["kind"], "joint highest-posterior set");
        // The region: its mass re-summed, at least the level, and the fewest points that reach it
        // (without its least probable points it falls short).
        let points: Vec<usize> =
            v["region"]["points"].as_array().unwrap().iter().map(|x| x.as_u64().unwrap() as usize).collect();
        let mass: f64 = points.iter().map(|&j| p[j]).sum();
        assert!((mass - v["region"]["mass"].as_f64().unwrap()).abs() < 1e-12 && mass >= level, "{mass}");
        let least = points.iter().map(|&j| p[j]).fold(f64::INFINITY, f64::min);
        let without: f64 = points.iter().map(|&j| p[j]).filter(|&x| x > least).sum();
        assert!(without < level, "not the highest-posterior set: {without} without its least points");
        assert!(p.iter().enumerate().all(|(j, &x)| points.contains(&j) || x <= least));
        // Each marginal mass and the box's joint mass, re-summed from the grid.
        let iv: Vec<Vec<f64>> = v["interval"].as_array().unwrap().iter().map(floats).collect();
        for (c, m) in floats(&v["interval_mass"]).iter().enumerate() {
            let inside: f64 =
                theta.iter().zip(&p).filter(|(t, _)| iv[c][0] <= t[c] && t[c] <= iv[c][1]).map(|(_, w)| w).sum();
            assert!((inside - m).abs() < 1e-12 && *m >= level);
        }
        let boxed: f64 = theta
            .iter()
            .zip(&p)
            .filter(|(t, _)| (0..3).all(|c| iv[c][0] <= t[c] && t[c] <= iv[c][1]))
            .map(|(_, w)| w)
            .sum();
        assert!((boxed - v["box_mass"].as_f64().unwrap()).abs() < 1e-12);
    }
}

/// The lower median of the grid values `theta` under `p`, computed here.
fn lower_median(theta: &[f64], p: &[f64]) -> f64 {
    let mut v: Vec<(f64, f64)> = theta.iter().copied().zip(p.iter().copied()).collect();
    v.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut c = 0.0;
    v.iter()
        .find(|(_, w)| {
            c += w;
            c >= 0.5 - 1e-12
        })
        .unwrap()
        .0
}

#[test]
fn the_posterior_names_the_bayes_estimate_of_the_models_loss() {
    for (loss, line, rule) in [
        ("squared", "posterior_mean", "posterior mean"),
        ("absolute", "posterior_median", "posterior median (coordinate-wise)"),
        ("zero-one", "posterior_mode", "posterior mode"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let model = write_file(
            d,
            "m.toml",
            &(binomial(12, 20, loss, &[1.0]).prior("{ kind = \"beta\", a = 2.0, b = 3.0 }").toml()
                + if loss == "zero-one" { "tolerance = 0.0\n" } else { "" }),
        );
        solve(d, &model, "1");
        let o = ubapp_in(d, &["sample", "mech.json", "--y", "5", "--n", "2", "--allow-composition", "--seed", "4"]);
        let drawn: Vec<String> = stdout(&o).lines().map(str::to_string).collect();
        let args = ["posterior", "mech.json", "--release", &drawn[0], "--release", &drawn[1]];
        let o = ubapp_in(d, &args);
        assert_success(&o);
        let name = loss;
        let expected = format!("(the Bayes estimate under {name} loss)");
        let shown = stdout(&o).lines().find(|l| l.contains(&expected)).map(str::to_string);
        assert!(shown.as_deref().is_some_and(|l| l.starts_with(line)), "{loss}: {}", stdout(&o));
        if loss != "squared" {
            assert!(stdout(&o).contains("posterior_mean"), "the mean is printed beside it: {}", stdout(&o));
        }
        let v = stdout_json(&ubapp_in(d, &[&args[..], &["--json"]].concat()));
        assert_eq!(v["bayes_estimate"]["rule"], rule);
        assert_eq!(v["bayes_estimate"]["loss"], name);
        let (theta, p) = (floats(&v["theta"]), floats(&v["probabilities"]));
        let mean: f64 = theta.iter().zip(&p).map(|(t, w)| t * w).sum();
        let mode = theta[(0..p.len()).fold(0, |b, j| if p[j] > p[b] { j } else { b })];
        assert!((v["posterior_mean"].as_f64().unwrap() - mean).abs() < 1e-12);
        assert_eq!(v["posterior_median"].as_f64().unwrap(), lower_median(&theta, &p));
        assert_eq!(v["posterior_mode"].as_f64().unwrap(), mode);
        let want = match name {
            "squared" => mean,
            "absolute" => lower_median(&theta, &p),
            _ => mode,
        };
        assert!((v["bayes_estimate"]["value"].as_f64().unwrap() - want).abs() < 1e-12, "{loss}");
    }
}

#[test]
fn audit_witnesses_of_a_multinomial_mechanism_are_whole_vectors() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    solve(d, &bundled("vote-share-3way-small"), "1");
    let o = ubapp_in(d, &["audit", "mech.json", "--samples", "4000", "--max-pairs", "6", "--seed", "2", "--json"]);
    assert_success(&o);
    let w = &stdout_json(&o)["witness"];
    for key in ["y_a", "y_b", "output"] {
        assert_eq!(w[key].as_array().map(Vec::len), Some(3), "{key}: {w}");
    }
    let counts = |k: &str| floats(&w[k]).iter().sum::<f64>();
    assert_eq!((counts("y_a"), counts("y_b")), (8.0, 8.0), "observations are count vectors of 8 records");
    let text = ubapp_in(d, &["audit", "mech.json", "--samples", "4000", "--max-pairs", "6", "--seed", "2"]);
    assert_success(&text);
    let line = stdout(&text).lines().find(|l| l.contains("attained at")).unwrap().to_string();
    assert_eq!(line.matches('(').count(), 3, "three vectors in {line}");
    // A scalar model keeps its plain numbers.
    solve(d, &bundled("bernoulli-k100"), "1");
    let o = ubapp_in(d, &["audit", "mech.json", "--samples", "2000", "--max-pairs", "3", "--seed", "2", "--json"]);
    assert!(stdout_json(&o)["witness"]["y_a"].is_f64(), "{}", stdout(&o));
}

#[test]
fn releases_print_as_people_write_them_and_a_half_way_value_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // A 40-point midpoint grid: its 4th point is 0.08750000000000001 in binary arithmetic, and the
    // optimum at ε = 3 releases it for y = 0 most of the time.
    let model = write_file(d, "m.toml", &binomial(10, 40, "squared", &[3.0]).toml());
    solve(d, &model, "3");
    let o = ubapp_in(d, &["sample", "mech.json", "--y", "0", "--n", "400", "--allow-composition", "--seed", "1"]);
    assert_success(&o);
    assert!(stdout(&o).lines().any(|l| l == "0.0875"), "{}", stdout(&o));
    assert!(stdout(&o).lines().all(|l| l.len() <= 7), "{}", stdout(&o));
    let o =
        ubapp_in(d, &["sample", "mech.json", "--y", "0", "--n", "400", "--allow-composition", "--seed", "1", "--json"]);
    assert!(stdout(&o).contains("0.0875,") && !stdout(&o).contains("0000000"), "{}", stdout(&o));
    // Printed values read back as the output they are; the JSON interval too.
    let p = ubapp_in(d, &["posterior", "mech.json", "--release", "0.0875", "--json"]);
    assert_success(&p);
    assert!(!stderr(&p).contains("note:"), "{}", stderr(&p));
    assert!(!stdout(&p).contains("0000000"), "{}", stdout(&p));
    // 0.1 lies half-way between 0.0875 and 0.1125: refused, naming both.
    assert_input_error(
        &ubapp_in(d, &["posterior", "mech.json", "--release", "0.1"]),
        &["--release 0.1 lies half-way between the outputs 0.0875 and 0.1125"],
    );
    let o = ubapp_in(d, &["posterior", "mech.json", "--release", "0.09"]);
    assert_success(&o);
    assert!(stderr(&o).contains("note: --release 0.09 taken as the output 0.0875"), "{}", stderr(&o));
}

#[test]
fn refusals_say_what_the_user_must_change() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    solve(d, &bundled("vote-share-3way-small"), "1");
    assert_input_error(
        &ubapp_in(d, &["sample", "mech.json", "--y", "3,3,3"]),
        &["--y 3,3,3", "the counts must sum to the number of records, 8 (these sum to 9)"],
    );
    assert_input_error(
        &ubapp_in(d, &["sample", "mech.json", "--y", "2.5,3,2.5"]),
        &["whole numbers ≥ 0 that sum to the number of records, 8"],
    );
    let o = ubapp_in(d, &["sample", "mech.json", "--y", "3,3,2", "--n", "1000", "--budget", "1"]);
    assert_input_error(&o, &["--budget 1 is exceeded: 1000 releases spend ε = 1000·", "over the budget 1"]);
}

/// An unbiased binomial design, K = 20, on `output` (a TOML `[output]` grid line, or none).
fn unbiased_model(dir: &Path, name: &str, output: Option<&str>) -> PathBuf {
    let mut text = binomial(20, 40, "squared", &[1.0]).toml();
    if let Some(grid) = output {
        text += &format!("[output]\ngrid = {grid}\n");
    }
    write_file(dir, name, &(text + "[constraints]\nunbiased = true\n"))
}

#[test]
fn an_unbiased_design_is_priced_against_its_like_and_says_why_a_coarse_grid_loses() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // Outputs −1 … 2 in steps of 0.1: half of the estimates y/20 are not outputs.
    let values: Vec<String> = (0..=30).map(|i| format!("{}", (-10 + i) as f64 / 10.0)).collect();
    let coarse =
        unbiased_model(d, "coarse.toml", Some(&format!("{{ kind = \"explicit\", values = [{}] }}", values.join(", "))));
    let methods = "ubapp,ubapp-unconstrained,laplace-count,lbapp-clamped";
    let o = ubapp_in(d, &["compare", coarse.to_str().unwrap(), "--eps", "1", "--methods", methods, "--json"]);
    assert_success(&o);
    let rows = stdout_json(&o);
    let row = |m: &str| rows.as_array().unwrap().iter().find(|r| r["method"] == m).unwrap().clone();
    assert_eq!(row("laplace-count")["note"]["satisfies"], "unbiased", "laplace-count is y/K + Laplace noise: unbiased");
    assert!(row("lbapp-clamped")["note"].get("satisfies").is_none(), "a clamped release is biased");
    let (design, laplace, free) = (
        row("ubapp")["bayes_risk"].as_f64().unwrap(),
        row("laplace-count")["bayes_risk"].as_f64().unwrap(),
        row("ubapp-unconstrained")["bayes_risk"].as_f64().unwrap(),
    );
    assert!(design > laplace, "the coarse grid's design {design} is above laplace-count {laplace}");
    assert_eq!(row("ubapp")["note"]["constraints"]["estimates_off_grid"], 10);
    let text = ubapp_in(d, &["compare", coarse.to_str().unwrap(), "--eps", "1", "--methods", methods]);
    let price = format!("{:+.1} %", 100.0 * (laplace / free - 1.0));
    let said = stdout(&text) + &stderr(&text);
    for words in [
        &format!("constraints unbiased cost {price}")[..],
        "the best method that meets them being laplace-count",
        "is above laplace-count",
        "whose step (0.1) is coarser than the estimates' spacing (0.05), and 10 of the 21 estimates are not outputs",
        "an output grid with step 0.05 that holds every estimate",
    ] {
        assert!(said.contains(words), "missing {words:?} in {said}");
    }
    // Without an output grid, the unbiased design gets the estimates' lattice −1 … 2 in steps of
    // 1/20 (61 outputs): it holds every estimate, and the design is below laplace-count.
    let default = unbiased_model(d, "default.toml", None);
    let o = ubapp_in(d, &["compare", default.to_str().unwrap(), "--eps", "1", "--methods", methods, "--json"]);
    assert_success(&o);
    let rows = stdout_json(&o);
    let risk =
        |m: &str| rows.as_array().unwrap().iter().find(|r| r["method"] == m).unwrap()["bayes_risk"].as_f64().unwrap();
    assert!(risk("ubapp") < risk("laplace-count"), "{} vs {}", risk("ubapp"), risk("laplace-count"));
    let r = rows.as_array().unwrap().iter().find(|r| r["method"] == "ubapp").unwrap();
    assert_eq!(r["note"]["constraints"]["estimates_off_grid"], 0);
    let dry = ubapp_in(d, &["solve", default.to_str().unwrap(), "--json", "--eps", "1"]);
    assert_success(&dry);
    // A fixed point without an output grid gets Y's estimates in order, and solves.
    let fixed = write_file(
        d,
        "fixed.toml",
        &(binomial(20, 40, "squared", &[1.0]).toml()
            + &format!("[constraints]\nfixed_point = {{ values = [{}] }}\n", vec!["1"; 21].join(", "))),
    );
    assert_success(&ubapp_in(d, &["solve", fixed.to_str().unwrap(), "--eps", "1"]));
}
