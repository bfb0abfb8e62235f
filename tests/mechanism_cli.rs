//! The mechanism artifact through the `ubapp` binary: solve → verify → sample → audit, and every
//! way a file can be damaged or tampered with (one sentence, exit code 2, nothing written).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

const MODEL: &str = r#"
name = "cli-small"
epsilon = [1.0]
[parameter]
lower = 0.0
upper = 1.0
grid = { kind = "midpoint", points = 12 }
prior = { kind = "uniform" }
[observation]
family = "binomial"
trials = 8
[loss]
kind = "squared"
"#;

fn ubapp(args: &[&str], dir: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ubapp")).args(args).current_dir(dir).output().expect("run ubapp")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A temp dir with model.toml and a solved mech.json (ε = 1).
fn setup() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("model.toml"), MODEL).unwrap();
    let o = ubapp(&["solve", "model.toml", "--eps", "1", "--out", "mech.json"], dir.path());
    assert!(o.status.success(), "solve failed: {}", stderr(&o));
    let path = dir.path().join("mech.json");
    (dir, path)
}

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn listing(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut v: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            (e.file_name().to_string_lossy().into_owned(), std::fs::read(e.path()).unwrap())
        })
        .collect();
    v.sort();
    v
}

/// Write `text` as bad.json, then check that verify and sample both fail with exit 2, one line of
/// stderr containing `needle`, nothing on stdout and no file created or changed.
fn assert_rejected(dir: &Path, text: &str, needle: &str) {
    std::fs::write(dir.join("bad.json"), text).unwrap();
    let before = listing(dir);
    for args in [vec!["verify", "bad.json"], vec!["sample", "bad.json", "--y", "3", "--n", "5", "--seed", "1"]] {
        let o = ubapp(&args, dir);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?} should fail with exit 2; stderr: {err}");
        assert!(o.stdout.is_empty(), "{args:?} printed to stdout: {}", String::from_utf8_lossy(&o.stdout));
        assert_eq!(err.trim_end().lines().count(), 1, "one sentence expected, got: {err}");
        assert!(err.contains(needle), "{args:?}: expected {needle:?} in: {err}");
    }
    assert_eq!(before, listing(dir), "a failed verify/sample changed the directory");
}

fn edited(path: &Path, f: impl FnOnce(&mut Value)) -> String {
    let mut v = read_json(path);
    f(&mut v);
    serde_json::to_string_pretty(&v).unwrap()
}

#[test]
fn solve_writes_an_artifact_that_verifies() {
    let (dir, path) = setup();
    let v = read_json(&path);
    assert_eq!(v["format"], "ubapp-mechanism");
    assert_eq!(v["format_version"], 1);
    assert_eq!(v["total"].as_u64(), Some(1 << 52));
    assert_eq!(v["columns"].as_array().unwrap().len(), 9);
    assert_eq!(v["columns"][0].as_array().unwrap().len(), 12);
    assert_eq!(v["outputs"].as_array().unwrap().len(), 12);
    assert_eq!(v["model"]["name"], "cli-small");
    let certified = v["certified_eps"].as_f64().unwrap();
    assert!(certified <= 1.0 && certified > 0.99, "{certified}");
    assert!(v["provenance"]["solver"]["name"].is_string());
    assert!(v["provenance"]["lp_bayes_risk"].is_number());

    let o = ubapp(&["verify", "mech.json"], dir.path());
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8(o.stdout).unwrap();
    assert!(out.contains("OK, certified ε = "), "{out}");

    let o = ubapp(&["verify", "mech.json", "--json"], dir.path());
    assert!(o.status.success());
    let j: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(j["ok"], true);
    assert_eq!(j["certified_eps"].as_f64(), Some(certified));
}

#[test]
fn sample_prints_n_values_from_the_output_grid_and_is_reproducible() {
    let (dir, path) = setup();
    let outputs: Vec<f64> =
        read_json(&path)["outputs"].as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).collect();
    let run = |seed: &str| {
        let o = ubapp(&["sample", "mech.json", "--y", "3", "--n", "50", "--seed", seed], dir.path());
        assert!(o.status.success(), "{}", stderr(&o));
        String::from_utf8(o.stdout).unwrap()
    };
    let a = run("7");
    assert_eq!(a, run("7"));
    assert_ne!(a, run("8"));
    let values: Vec<f64> = a.lines().map(|l| l.parse().unwrap()).collect();
    assert_eq!(values.len(), 50);
    assert!(values.iter().all(|v| outputs.contains(v)));

    let o = ubapp(&["sample", "mech.json", "--y", "3", "--n", "4", "--seed", "1", "--json"], dir.path());
    let j: Vec<f64> = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(j.len(), 4);

    for bad in ["9", "-1", "2.5"] {
        let o = ubapp(&["sample", "mech.json", "--y", bad], dir.path());
        assert_eq!(o.status.code(), Some(2));
        assert!(stderr(&o).contains("--y"), "{}", stderr(&o));
        assert!(o.stdout.is_empty());
    }
}

#[test]
fn audit_reports_an_empirical_bound_below_the_certificate() {
    let (dir, _) = setup();
    let o = ubapp(&["audit", "mech.json", "--samples", "20000", "--seed", "3", "--json"], dir.path());
    assert!(o.status.success(), "{}", stderr(&o));
    let r: Value = serde_json::from_slice(&o.stdout).unwrap();
    let (emp, cert) = (r["empirical_eps_lower"].as_f64().unwrap(), r["certified_eps"].as_f64().unwrap());
    assert!(emp > 0.0 && emp <= cert, "empirical {emp} vs certified {cert}");
    assert_eq!(r["pairs_tested"], 8);
    assert!(stderr(&o).contains("100%"), "progress expected on stderr");
}

#[test]
fn tampered_files_are_rejected_by_verify_and_sample() {
    let (dir, path) = setup();
    let d = dir.path();
    // Swap the first and last columns: neighbours now differ by far more than e^1.
    assert_rejected(d, &edited(&path, |v| v["columns"].as_array_mut().unwrap().swap(0, 8)), "not eps-DP");
    // Swap two adjacent columns: each is still a distribution, but y = 2 now faces y = 4's column.
    assert_rejected(d, &edited(&path, |v| v["columns"].as_array_mut().unwrap().swap(3, 4)), "not eps-DP");
    // A stored risk that does not belong to the weights (the check that catches a reordering which
    // happens to stay ε-DP).
    assert_rejected(
        d,
        &edited(&path, |v| v["bayes_risk"] = Value::from(v["bayes_risk"].as_f64().unwrap() * 1.001)),
        "does not match the risk of the weights",
    );
    // Edit one weight.
    assert_rejected(
        d,
        &edited(&path, |v| {
            let w = v["columns"][2][5].as_u64().unwrap();
            v["columns"][2][5] = Value::from(w + 1);
        }),
        "columns[2] sums to",
    );
    // Move a whole weight to another output of the same column (total unchanged): a zero facing
    // a positive neighbour weight.
    assert_rejected(
        d,
        &edited(&path, |v| {
            let col = v["columns"][4].as_array_mut().unwrap();
            let k = (0..col.len()).max_by_key(|&k| col[k].as_u64().unwrap()).unwrap();
            // Another output with positive weight (the optimal mechanism may leave some outputs unused).
            let j = (0..col.len()).find(|&j| j != k && col[j].as_u64().unwrap() > 0).unwrap();
            let (wk, wj) = (col[k].as_u64().unwrap(), col[j].as_u64().unwrap());
            col[k] = Value::from(wk + wj);
            col[j] = Value::from(0u64);
        }),
        "no finite ε holds",
    );
    // Claim a smaller ε than the weights certify.
    assert_rejected(d, &edited(&path, |v| v["eps"] = Value::from(0.5)), "not eps-DP");
    assert_rejected(d, &edited(&path, |v| v["certified_eps"] = Value::from(0.9)), "certified_eps");
    // Wrong totals and shapes.
    assert_rejected(d, &edited(&path, |v| v["total"] = Value::from(1u64 << 51)), "sums to");
    assert_rejected(d, &edited(&path, |v| v["total"] = Value::from(3u64)), "power of two");
    assert_rejected(d, &edited(&path, |v| { v["columns"].as_array_mut().unwrap().pop(); }), "observations");
    assert_rejected(
        d,
        &edited(&path, |v| {
            for c in v["columns"].as_array_mut().unwrap() {
                c.as_array_mut().unwrap().pop();
            }
        }),
        "outputs",
    );
    assert_rejected(d, &edited(&path, |v| v["model"]["observation"]["trials"] = Value::from(9)), "observations");
    assert_rejected(d, &edited(&path, |v| v["outputs"][0] = Value::from(0.5)), "outputs differ");
    assert_rejected(d, &edited(&path, |v| v["eps"] = Value::from(-1.0)), "eps must be");
    assert_rejected(d, &edited(&path, |v| v["columns"][0][0] = Value::from(-3)), "columns[0][0]");
}

#[test]
fn broken_files_get_one_sentence() {
    let (dir, path) = setup();
    let d = dir.path();
    let text = std::fs::read_to_string(&path).unwrap();
    assert_rejected(d, &text[..text.len() / 2], "truncated");
    assert_rejected(d, "hello, I am not JSON", "not valid JSON");
    assert_rejected(d, "", "truncated");
    assert_rejected(d, "[1, 2, 3]", "not a ubapp mechanism file");
    assert_rejected(d, &edited(&path, |v| v["format_version"] = Value::from(3)), "format_version is 3");
    // A pure-ε (version 1) file relabelled as version 2 lacks the δ fields version 2 requires.
    assert_rejected(d, &edited(&path, |v| v["format_version"] = Value::from(2)), "delta is missing");
    assert_rejected(d, &edited(&path, |v| { v.as_object_mut().unwrap().remove("format"); }), "not a ubapp mechanism file");
    assert_rejected(d, &edited(&path, |v| { v.as_object_mut().unwrap().remove("columns"); }), "columns");
    let o = ubapp(&["verify", "does-not-exist.json"], d);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("cannot read mechanism file"));
}

#[test]
fn failed_solve_keeps_an_existing_artifact() {
    let (dir, path) = setup();
    let before = std::fs::read(&path).unwrap();
    for eps in ["0", "nan", "-1"] {
        let o = ubapp(&["solve", "model.toml", "--eps", eps, "--out", "mech.json"], dir.path());
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    }
    assert_eq!(std::fs::read(&path).unwrap(), before);
    let names: Vec<String> = listing(dir.path()).into_iter().map(|(n, _)| n).collect();
    assert_eq!(names, vec!["mech.json".to_string(), "model.toml".to_string()]);
}
