//! `[constraints]` through the `ubapp` binary: a constrained design solved, saved and verified;
//! bad combinations refused before any solve; a tampered constrained artifact refused (one
//! sentence, exit code 2).

mod common;

use common::{assert_input_error, assert_success, model_file, stdout, ubapp};

/// Binomial K = 6, uniform prior, outputs from −1 to 2 (beyond [0, 1]: an unbiased design needs them).
const UNBIASED: &str = "name = \"unbiased-k6\"\nepsilon = [1.0]\n[parameter]\ngrid = { kind = \"midpoint\", points = 20 }\n\
prior = { kind = \"uniform\" }\n[observation]\nfamily = \"binomial\"\ntrials = 6\n[output]\n\
grid = { kind = \"explicit\", values = [-1.0, -0.5, 0.0, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0] }\n[loss]\nkind = \"squared\"\n\
[constraints]\nunbiased = true\n";

#[test]
fn a_constrained_design_is_solved_saved_and_verified_and_a_tampered_one_refused() {
    let (dir, model) = model_file(UNBIASED);
    let out = dir.path().join("m.json");
    let o = ubapp(&["solve", model.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert_success(&o);
    let o = ubapp(&["verify", out.to_str().unwrap(), "--model", model.to_str().unwrap()]);
    assert_success(&o);
    assert!(stdout(&o).contains("constraints: unbiased"), "{}", stdout(&o));
    // The stated bound on the bias lowered below what the weights show.
    let mut v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let bias = v["constraints"]["max_bias"].as_f64().unwrap();
    v["constraints"]["max_bias"] = (bias / 8.0).into();
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, v.to_string()).unwrap();
    assert_input_error(&ubapp(&["verify", bad.to_str().unwrap()]), &["bad.json", "constraints.max_bias"]);
    // The constraint removed from the trusted model: `verify --model` names the difference.
    let (_d2, plain) = model_file(
        &UNBIASED.replace("[constraints]\nunbiased = true\n", "").replace("-1.0, -0.5, ", "").replace(", 1.5, 2.0", ""),
    );
    assert_input_error(
        &ubapp(&["verify", out.to_str().unwrap(), "--model", plain.to_str().unwrap()]),
        &["trusted model"],
    );
}

#[test]
fn impossible_constraints_are_refused_before_any_solve() {
    // Unbiasedness needs outputs beyond the estimates' range [0, 1].
    let (_d, model) = model_file(&UNBIASED.replace("-1.0, -0.5, ", "").replace(", 1.5, 2.0", ""));
    assert_input_error(&ubapp(&["solve", model.to_str().unwrap()]), &["constraints.unbiased", "beyond"]);
    // The chain solver does not carry constraints.
    let (_d, model) = model_file(UNBIASED);
    assert_input_error(&ubapp(&["solve", model.to_str().unwrap(), "--solver", "chain"]), &["[constraints]"]);
    // Symmetry needs a reflection-closed output grid.
    let (_d, model) = model_file(
        &UNBIASED
            .replace("unbiased = true", "symmetric = true")
            .replace("-1.0, -0.5, 0.0, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0", "0.0, 0.25, 0.5, 1.0"),
    );
    assert_input_error(&ubapp(&["solve", model.to_str().unwrap()]), &["constraints.symmetric", "mirror"]);
    // Unbiasedness at a tiny ε on outputs barely beyond [0, 1]: the LP is infeasible, said as
    // the model's input to fix.
    let (_d, model) = model_file(
        &UNBIASED
            .replace("epsilon = [1.0]", "epsilon = [0.01]")
            .replace("-1.0, -0.5, 0.0, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0", "-0.1, 0.0, 0.5, 1.0, 1.1"),
    );
    assert_input_error(&ubapp(&["solve", model.to_str().unwrap()]), &["constraints", "infeasible", "ε = 0.01"]);
    // Constraints with (ε, δ).
    let (_d, model) = model_file(&UNBIASED.replace("epsilon = [1.0]", "epsilon = [1.0]\ndelta = 0.01"));
    assert_input_error(&ubapp(&["solve", model.to_str().unwrap()]), &["constraints", "delta = 0"]);
}
