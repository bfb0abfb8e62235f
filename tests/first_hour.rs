//! What a new user meets in the first hour, outside the main routes: a scalar `epsilon`, `sample`
//! pointed at a model file, `ubapp models` outside a clone, `--help` in plain words, `plan` that
//! answers in the target it was given and keeps `--curve` when the target cannot be met.

mod common;

use common::{assert_input_error, assert_success, binomial, model_file, stderr, stdout, ubapp, ubapp_in};

#[test]
fn a_scalar_epsilon_is_a_list_of_one() {
    let list = binomial(6, 5, "squared", &[0.5]).toml();
    assert!(list.contains("epsilon = [0.5]"), "{list}");
    let (_d1, scalar) = model_file(&list.replace("epsilon = [0.5]", "epsilon = 0.5"));
    let (_d2, listed) = model_file(&list);
    let a = ubapp(&["solve", scalar.to_str().unwrap(), "--json"]);
    let b = ubapp(&["solve", listed.to_str().unwrap(), "--json"]);
    assert_success(&a);
    assert_eq!(common::stdout_json(&a)[0]["bayes_risk"], common::stdout_json(&b)[0]["bayes_risk"]);
    let (_d3, bad) = model_file(&list.replace("epsilon = [0.5]", "epsilon = \"half\""));
    assert_input_error(&ubapp(&["solve", bad.to_str().unwrap()]), &["epsilon", "a number or a list of numbers"]);
}

#[test]
fn sample_on_a_model_file_says_to_solve_it_first() {
    let model = common::bundled("bernoulli-k100");
    let o = ubapp(&["sample", model.to_str().unwrap(), "--y", "3"]);
    assert_input_error(&o, &["this is a model file", "ubapp solve MODEL --eps E --out mech.json"]);
    assert!(!stderr(&o).contains("not valid JSON"), "{}", stderr(&o));
}

#[test]
fn models_outside_a_clone_lists_the_bundled_models() {
    let empty = tempfile::tempdir().unwrap();
    let o = ubapp_in(empty.path(), &["models"]);
    assert_success(&o);
    let text = stdout(&o);
    for path in common::bundled_models() {
        let file = path.file_name().unwrap().to_str().unwrap().to_string();
        assert!(text.lines().any(|l| l.starts_with(&file)), "{file} not listed:\n{text}");
    }
    // A directory named explicitly must exist.
    assert_input_error(&ubapp_in(empty.path(), &["models", "nowhere"]), &["nowhere", "not a readable directory"]);
}

#[test]
fn help_is_plain_text() {
    for args in [vec!["--help"], vec!["solve", "--help"], vec!["compare", "--help"], vec!["plan", "--help"]] {
        let o = ubapp(&args);
        assert_success(&o);
        let text = stdout(&o);
        assert!(!text.contains("[`"), "rustdoc markup in {args:?}:\n{text}");
    }
}

/// `plan --target-rmse 0.01` answers about the RMSE it was given, does not suggest a finer output
/// grid where the floor is the data's, and still writes `--curve`.
#[test]
fn plan_answers_in_the_target_given_and_keeps_the_curve() {
    let (dir, model) = model_file(&binomial(20, 30, "squared", &[1.0]).toml());
    let curve = dir.path().join("curve");
    let o = ubapp(&[
        "plan",
        model.to_str().unwrap(),
        "--target-rmse",
        "0.01",
        "--curve",
        curve.to_str().unwrap(),
        "--curve-points",
        "3",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let err = stderr(&o);
    let last = err.lines().last().unwrap_or_default();
    for words in ["error: --target-rmse", "0.01 is a target risk of 1e-4", "non-private risk", "more data"] {
        assert!(last.contains(words), "{words:?} not in {last:?}");
    }
    assert!(!err.contains("--target-risk"), "{err}");
    assert!(curve.join("risk_vs_eps.csv").is_file(), "the curve was dropped");
}
