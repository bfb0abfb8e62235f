//! `ubapp solve` end to end: output formats, and bad input (one sentence naming the field, exit
//! code 2, no output file written, an existing file kept).

mod common;

use std::path::Path;

use common::{stderr, ubapp, ubapp_env};

const GOOD: &str = r#"name = "small"
description = "test"
epsilon = [0.5, 2.0]
[parameter]
lower = 0.0
upper = 1.0
grid = { kind = "midpoint", points = 10 }
prior = { kind = "uniform" }
[observation]
family = "binomial"
trials = 12
[output]
grid = "parameter"
[loss]
kind = "squared"
"#;

fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.to_string_lossy().into_owned()
}

#[test]
fn json_output_has_the_documented_fields() {
    let dir = tempfile::tempdir().unwrap();
    let model = write(dir.path(), "m.toml", GOOD);
    let o = ubapp(&["solve", &model, "--json", "--solver", "clarabel"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("stdout is only JSON");
    let rows = v.as_array().unwrap();
    assert_eq!(rows.len(), 2);
    for key in ["eps", "bayes_risk", "solver", "status", "seconds", "outputs", "observations", "max_dp_violation"] {
        assert!(rows[0].get(key).is_some(), "missing {key}");
    }
    assert_eq!(rows[0]["outputs"], 10);
    assert_eq!(rows[0]["observations"], 13);
    assert_eq!(rows[1]["eps"], 2.0);
    assert!(rows[1]["bayes_risk"].as_f64().unwrap() < rows[0]["bayes_risk"].as_f64().unwrap());
}

#[test]
fn table_output_and_eps_override() {
    let dir = tempfile::tempdir().unwrap();
    let model = write(dir.path(), "m.toml", GOOD);
    let o = ubapp(&["solve", &model, "--eps", "0.1,1,3"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8(o.stdout).unwrap();
    assert_eq!(text.lines().filter(|l| l.contains("optimal")).count(), 3, "{text}");
}

#[test]
fn out_writes_a_json_file_for_one_eps() {
    let dir = tempfile::tempdir().unwrap();
    let model = write(dir.path(), "m.toml", GOOD);
    let out = dir.path().join("p.json");
    let o = ubapp(&["solve", &model, "--eps", "1", "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(v["columns"].as_array().unwrap().len(), 13);
    assert_eq!(v["eps"], 1.0);
    // Only the target file: no temporary left behind.
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2);
}

/// (model text edit, words the one-sentence error must contain)
fn bad_models() -> Vec<(String, Vec<&'static str>)> {
    vec![
        (GOOD.replace("epsilon = [0.5, 2.0]\n", ""), vec!["missing field", "epsilon"]),
        (GOOD.replace("epsilon =", "epsilonn ="), vec!["unknown field", "epsilonn"]),
        (GOOD.replace("trials = 12", "trails = 12"), vec!["observation", "trails"]),
        (GOOD.replace("\"binomial\"", "\"binomal\""), vec!["observation", "binomal"]),
        (GOOD.replace("kind = \"squared\"", "kind = \"cubic\""), vec!["loss", "cubic"]),
        (GOOD.replace("[0.5, 2.0]", "[0.5, 0.0]"), vec!["epsilon[1]", "> 0"]),
        (GOOD.replace("[0.5, 2.0]", "[-1.0]"), vec!["epsilon[0]", "> 0"]),
        (GOOD.replace("[0.5, 2.0]", "[nan]"), vec!["epsilon[0]", "finite"]),
        (GOOD.replace("[0.5, 2.0]", "[inf]"), vec!["epsilon[0]", "finite"]),
        (GOOD.replace("[0.5, 2.0]", "[]"), vec!["epsilon", "at least one"]),
        (GOOD.replace("trials = 12", "trials = 0"), vec!["observation.trials", "at least 1"]),
        (GOOD.replace("points = 10", "points = 0"), vec!["parameter.grid.points", "at least 1"]),
        (
            GOOD.replace("grid = \"parameter\"", "grid = { kind = \"midpoint\", points = 0 }"),
            vec!["output.grid.points", "at least 1"],
        ),
        (GOOD.replace("grid = \"parameter\"", "grid = \"params\""), vec!["output.grid", "params"]),
        (
            GOOD.replace("{ kind = \"uniform\" }", "{ kind = \"beta\", a = 0.0, b = 2.0 }"),
            vec!["parameter.prior.a", "> 0"],
        ),
        (
            GOOD.replace("{ kind = \"uniform\" }", "{ kind = \"beta\", a = 2.0, b = -1.0 }"),
            vec!["parameter.prior.b", "> 0"],
        ),
        (GOOD.replace("upper = 1.0", "upper = 0.0"), vec!["parameter.lower", "lower < upper"]),
        (GOOD.replace("upper = 1.0", "upper = 2.0"), vec!["parameter", "[0, 1]"]),
        (GOOD.replace("points = 10 }", "points = -3 }"), vec!["parameter.grid", "-3"]),
        (GOOD.replace("[loss]", "[losss]"), vec!["losss"]),
        ("name = \"x\"\nepsilon = [1.0\n".to_string(), vec!["line"]),
        (
            GOOD.replace("trials = 12", "trials = 100000000").replace("points = 10", "points = 100000"),
            vec!["memory", "observation.trials"],
        ),
    ]
}

#[test]
fn bad_models_fail_with_one_sentence_naming_the_field_and_write_nothing() {
    let dir = tempfile::tempdir().unwrap();
    for (i, (text, words)) in bad_models().into_iter().enumerate() {
        let model = write(dir.path(), &format!("bad{i}.toml"), &text);
        let out = dir.path().join(format!("out{i}.json"));
        let o = ubapp(&["solve", &model, "--eps", "1", "--out", out.to_str().unwrap()]);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "case {i}: expected exit 2, got {:?}: {err}", o.status);
        assert_eq!(err.trim().lines().count(), 1, "case {i}: not one line: {err}");
        assert!(err.contains(&format!("bad{i}.toml")), "case {i}: file not named: {err}");
        for w in words {
            assert!(err.contains(w), "case {i}: {w:?} not in: {err}");
        }
        assert!(!out.exists(), "case {i}: output written despite the error");
    }
}

#[test]
fn bad_flags_fail_with_exit_code_2() {
    let dir = tempfile::tempdir().unwrap();
    let model = write(dir.path(), "m.toml", GOOD);
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["--eps", "-1"], "--eps[0]"),
        (vec!["--eps", "nan"], "--eps[0]"),
        (vec!["--eps", "0.5,0"], "--eps[1]"),
        (vec!["--solver", "gurobi"], "gurobi"),
        (vec!["--eps", "45", "--solver", "clarabel"], "too large for the LP path"),
        (vec!["--out", "x.json"], "exactly one"),
    ];
    for (extra, word) in cases {
        let mut args = vec!["solve", model.as_str()];
        args.extend(extra.iter());
        let o = ubapp(&args);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{extra:?}: {err}");
        assert!(err.contains(word), "{extra:?}: {word:?} not in {err}");
    }
    let o = ubapp(&["solve", "/nonexistent/model.toml"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("/nonexistent/model.toml"));
}

#[test]
fn a_problem_too_large_for_memory_is_refused_before_allocation() {
    let dir = tempfile::tempdir().unwrap();
    let model = write(dir.path(), "m.toml", GOOD);
    let out = dir.path().join("out.json");
    std::fs::write(&out, "precious").unwrap();
    // The LP path (the chain solver would need only O(|Θ̃|·|Y|) memory here).
    let o = ubapp_env(
        &["solve", &model, "--eps", "1", "--solver", "clarabel", "--out", out.to_str().unwrap()],
        &[("UBAPP_MEMORY_LIMIT", "20000")],
    );
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("memory") && err.contains("observation.trials"), "{err}");
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "precious", "an existing file was touched");
}
