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

/// A unanimous poll could never be released as such on the interior simplex grid: `--dry-run`
/// says so; `boundary = true` puts the vertices on the output grid, and `--dry-run` is then
/// silent about it.
#[test]
fn a_simplex_output_grid_can_include_its_boundary_and_dry_run_says_when_it_does_not() {
    let text = |output: &str| {
        format!(
            "name = \"poll\"\nepsilon = [1.0]\n[parameter]\ngrid = {{ kind = \"simplex\", resolution = 4 }}\n\
             prior = {{ kind = \"dirichlet\", alpha = [1.0, 1.0, 1.0] }}\n[observation]\nfamily = \"multinomial\"\n\
             categories = 3\nrecords = 3\n[output]\ngrid = {output}\n[loss]\nkind = \"squared-euclidean\"\n"
        )
    };
    let (_d1, interior) = model_file(&text("\"parameter\""));
    let (_d2, closed) = model_file(&text("{ kind = \"simplex\", resolution = 4, boundary = true }"));
    let o = ubapp(&["solve", interior.to_str().unwrap(), "--dry-run"]);
    assert_success(&o);
    assert!(stdout(&o).contains("note: the releases never reach the parameter's extremes"), "{}", stdout(&o));
    assert!(stdout(&o).contains("boundary = true"), "the fix is named: {}", stdout(&o));
    let o = ubapp(&["solve", closed.to_str().unwrap(), "--dry-run"]);
    assert_success(&o);
    assert!(!stdout(&o).contains("never reach"), "{}", stdout(&o));
    // The closed grid holds the vertices: θ = n/R for every composition of R = 4.
    let m = ubapp::model::Model::load(&closed).unwrap();
    let points = m.outputs().points();
    assert_eq!(points.nrows(), 15);
    assert!(points.rows().into_iter().any(|p| p.to_vec() == [1.0, 0.0, 0.0]));
    assert!(points.rows().into_iter().any(|p| p.to_vec() == [0.25, 0.75, 0.0]));
    // Solved and certified like any grid.
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("m.json");
    assert_success(&ubapp(&["solve", closed.to_str().unwrap(), "--out", out.to_str().unwrap()]));
    assert_success(&ubapp(&["verify", out.to_str().unwrap(), "--model", closed.to_str().unwrap()]));
}
