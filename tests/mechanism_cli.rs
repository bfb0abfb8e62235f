//! The mechanism artifact through the `ubapp` binary: solve → verify → sample → audit, and every
//! way a file can be damaged or tampered with (one sentence, exit code 2, nothing written).

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;

use common::{binomial, stderr, stdout};
use serde_json::Value;

/// K = 8, M = 12, ε = 1, named cli-small; `top` adds top-level lines (e.g. `delta = 0.01`).
fn model_with(top: &str) -> String {
    binomial(8, 12, "squared", &[1.0]).name("cli-small").top(top).toml()
}

/// Run `ubapp` in `dir`.
fn ubapp(args: &[&str], dir: &Path) -> Output {
    common::ubapp_in(dir, args)
}

/// A temp dir with model.toml and a solved mech.json (ε = 1).
fn setup() -> (tempfile::TempDir, PathBuf) {
    setup_with(&model_with(""))
}

/// The model under (ε, 0.01)-DP.
fn delta_model() -> String {
    model_with("delta = 0.01")
}

/// A temp dir with the (ε, 0.01) model and its solved mech.json.
fn setup_delta() -> (tempfile::TempDir, PathBuf) {
    setup_with(&delta_model())
}

/// A temp dir with `model` as model.toml and its solved mech.json (ε = 1).
fn setup_with(model: &str) -> (tempfile::TempDir, PathBuf) {
    let (dir, _) = common::model_file(model);
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
        assert!(o.stdout.is_empty(), "{args:?} printed to stdout: {}", stdout(&o));
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

/// One test per damaged artifact: `name: setup, |v| edit => needle;` solves with `setup`
/// (`setup` or `setup_delta`), applies `edit` to the artifact's JSON `v` and expects verify and
/// sample to reject the result with `needle` in the one-sentence error;
/// `name: setup, text |t| expr => needle;` rejects the text `expr` made from the artifact's text `t`.
macro_rules! rejected {
    (@run $dir:ident, $path:ident, |$v:ident| $edit:expr => $needle:expr) => {
        assert_rejected($dir.path(), &edited(&$path, |$v: &mut Value| {
            $edit;
        }), $needle)
    };
    (@run $dir:ident, $path:ident, text |$t:ident| $text:expr => $needle:expr) => {{
        let $t = std::fs::read_to_string(&$path).unwrap();
        assert_rejected($dir.path(), &$text, $needle)
    }};
    ($($name:ident: $setup:ident, $($kind:ident)? |$v:ident| $edit:expr => $needle:expr;)*) => {
        $(
            #[test]
            fn $name() {
                let (dir, path) = $setup();
                rejected!(@run dir, path, $($kind)? |$v| $edit => $needle);
            }
        )*
    };
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
        let o =
            ubapp(&["sample", "mech.json", "--y", "3", "--allow-composition", "--n", "50", "--seed", seed], dir.path());
        assert!(o.status.success(), "{}", stderr(&o));
        String::from_utf8(o.stdout).unwrap()
    };
    let a = run("7");
    assert_eq!(a, run("7"));
    assert_ne!(a, run("8"));
    let values: Vec<f64> = a.lines().map(|l| l.parse().unwrap()).collect();
    assert_eq!(values.len(), 50);
    // Each value is an output as people write it: within round-off (4 ulps) of the grid's double.
    assert!(values.iter().all(|v| outputs.iter().any(|o| (o - v).abs() <= 4.0 * f64::EPSILON * o.abs())));

    let o = ubapp(
        &["sample", "mech.json", "--y", "3", "--allow-composition", "--n", "4", "--seed", "1", "--json"],
        dir.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let j: Vec<f64> = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(j.len(), 4);
}

/// `sample --y BAD` on the scalar model: exit 2, an error naming --y, nothing on stdout.
fn assert_bad_scalar_y(bad: &str) {
    let (dir, _) = setup();
    let o = ubapp(&["sample", "mech.json", "--y", bad], dir.path());
    assert_eq!(o.status.code(), Some(2), "{bad}: {}", stderr(&o));
    assert!(stderr(&o).contains("--y"), "{}", stderr(&o));
    assert!(o.stdout.is_empty());
}

#[test]
fn sample_rejects_an_observation_beyond_the_trials() {
    assert_bad_scalar_y("9");
}

#[test]
fn sample_rejects_a_negative_observation() {
    assert_bad_scalar_y("-1");
}

#[test]
fn sample_rejects_a_fractional_observation() {
    assert_bad_scalar_y("2.5");
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

rejected! {
    // Swap the first and last columns: neighbours now differ by far more than e^1.
    rejected_first_and_last_columns_swapped: setup, |v| v["columns"].as_array_mut().unwrap().swap(0, 8) => "not eps-DP";
    // Swap two adjacent columns: each is still a distribution, but y = 2 now faces y = 4's column.
    rejected_adjacent_columns_swapped: setup, |v| v["columns"].as_array_mut().unwrap().swap(3, 4) => "not eps-DP";
    // A stored risk that does not belong to the weights (the check that catches a reordering which
    // happens to stay ε-DP).
    rejected_a_stored_risk_not_of_the_weights: setup,
        |v| v["bayes_risk"] = Value::from(v["bayes_risk"].as_f64().unwrap() * 1.001)
        => "does not match the risk of the weights";
    // Edit one weight.
    rejected_one_weight_edited: setup, |v| {
        let w = v["columns"][2][5].as_u64().unwrap();
        v["columns"][2][5] = Value::from(w + 1);
    } => "columns[2] sums to";
    // Move a whole weight to another output of the same column (total unchanged): a zero facing
    // a positive neighbour weight.
    rejected_a_zero_facing_a_positive_weight: setup, |v| {
        let col = v["columns"][4].as_array_mut().unwrap();
        let k = (0..col.len()).max_by_key(|&k| col[k].as_u64().unwrap()).unwrap();
        // Another output with positive weight (the optimal mechanism may leave some outputs unused).
        let j = (0..col.len()).find(|&j| j != k && col[j].as_u64().unwrap() > 0).unwrap();
        let (wk, wj) = (col[k].as_u64().unwrap(), col[j].as_u64().unwrap());
        col[k] = Value::from(wk + wj);
        col[j] = Value::from(0u64);
    } => "no finite ε holds";
    // Claim a smaller ε than the weights certify.
    rejected_a_smaller_eps_claimed: setup, |v| v["eps"] = Value::from(0.5) => "not eps-DP";
    rejected_a_smaller_certified_eps_claimed: setup, |v| v["certified_eps"] = Value::from(0.9) => "certified_eps";
    // Wrong totals and shapes.
    rejected_a_halved_total: setup, |v| v["total"] = Value::from(1u64 << 51) => "sums to";
    rejected_a_total_not_a_power_of_two: setup, |v| v["total"] = Value::from(3u64) => "power of two";
    rejected_a_missing_column: setup, |v| {
        v["columns"].as_array_mut().unwrap().pop();
    } => "observations";
    rejected_a_missing_output_in_every_column: setup, |v| {
        for c in v["columns"].as_array_mut().unwrap() {
            c.as_array_mut().unwrap().pop();
        }
    } => "outputs";
    rejected_an_embedded_model_with_other_trials: setup,
        |v| v["model"]["observation"]["trials"] = Value::from(9) => "observations";
    rejected_an_edited_output_grid: setup, |v| v["outputs"][0] = Value::from(0.5) => "outputs differ";
    rejected_a_negative_eps: setup, |v| v["eps"] = Value::from(-1.0) => "eps must be";
    rejected_a_negative_weight: setup, |v| v["columns"][0][0] = Value::from(-3) => "columns[0][0]";

    // Broken files.
    rejected_a_truncated_file: setup, text |t| t[..t.len() / 2] => "truncated";
    rejected_a_file_that_is_not_json: setup, text |_t| "hello, I am not JSON" => "not valid JSON";
    rejected_an_empty_file: setup, text |_t| "" => "truncated";
    rejected_json_that_is_not_a_mechanism: setup, text |_t| "[1, 2, 3]" => "not a ubapp mechanism file";
    rejected_an_unknown_format_version: setup, |v| v["format_version"] = Value::from(3) => "format_version is 3";
    // A pure-ε (version 1) file relabelled as version 2 lacks the δ fields version 2 requires.
    rejected_a_pure_eps_file_relabelled_version_2: setup, |v| v["format_version"] = Value::from(2) => "delta is missing";
    rejected_a_file_without_format: setup, |v| {
        v.as_object_mut().unwrap().remove("format");
    } => "not a ubapp mechanism file";
    rejected_a_file_without_columns: setup, |v| {
        v.as_object_mut().unwrap().remove("columns");
    } => "columns";
}

/// The artifact `v` (version 1) in the packed form (version 4) that large mechanisms are written
/// in: the same weights as minimal LEB128 varints in base64, encoded here independently of the
/// writer.
fn packed(mut v: Value) -> Value {
    use base64::Engine;
    let mut bytes = Vec::new();
    for w in v["columns"].as_array().unwrap().iter().flat_map(|c| c.as_array().unwrap()) {
        let mut w = w.as_u64().unwrap();
        while w >= 0x80 {
            bytes.push((w & 0x7f) as u8 | 0x80);
            w >>= 7;
        }
        bytes.push(w as u8);
    }
    let o = v.as_object_mut().unwrap();
    o.remove("columns");
    o.insert("format_version".into(), 4.into());
    o.insert("delta".into(), 0.0.into());
    o.insert("certified_delta".into(), 0.0.into());
    o.insert("weights_encoding".into(), "leb128-base64".into());
    o.insert("weights".into(), base64::engine::general_purpose::STANDARD.encode(bytes).into());
    v
}

/// A packed file's weights as bytes, edited by `f` and packed again.
fn edit_packed_bytes(v: &mut Value, f: impl FnOnce(&mut Vec<u8>)) {
    use base64::Engine;
    let b64 = base64::engine::general_purpose::STANDARD;
    let mut bytes = b64.decode(v["weights"].as_str().unwrap()).unwrap();
    f(&mut bytes);
    v["weights"] = b64.encode(bytes).into();
}

/// A temp dir with model.toml, its solved mech.json (ε = 1) and that mechanism packed as
/// packed.json (whose path is returned).
fn setup_packed() -> (tempfile::TempDir, PathBuf) {
    let (dir, path) = setup();
    let packed_path = dir.path().join("packed.json");
    std::fs::write(&packed_path, serde_json::to_string_pretty(&packed(read_json(&path))).unwrap()).unwrap();
    (dir, packed_path)
}

#[test]
fn a_packed_file_verifies_and_samples_as_its_arrays_do() {
    let (dir, _) = setup_packed();
    for args in [vec!["verify", "packed.json"], vec!["verify", "packed.json", "--model", "model.toml"]] {
        let o = ubapp(&args, dir.path());
        assert!(o.status.success() && stdout(&o).contains("OK, certified ε = "), "{args:?}: {}", stderr(&o));
    }
    let draws = |file: &str| {
        let o = ubapp(&["sample", file, "--y", "3", "--allow-composition", "--n", "50", "--seed", "7"], dir.path());
        assert!(o.status.success(), "{}", stderr(&o));
        stdout(&o)
    };
    assert_eq!(draws("packed.json"), draws("mech.json"), "the same weights draw the same outputs");
}

/// A mechanism of more than 2^20 weights (|Y| = 2048, |Θ̃| = 1024), built from integer weights
/// through the library, is saved packed, smaller than its arrays, and verifies and samples
/// through the binary.
#[test]
fn a_mechanism_above_two_to_the_twenty_weights_is_saved_packed() {
    let text = common::binomial(2047, 1024, "squared", &[1.0]).name("packed-large").toml();
    let (dir, _) = common::model_file(&text);
    // Every column uniform but for a quarter more weight on one output: ratios ≤ 1.25 < e.
    let (base, extra) = ((1u64 << 42) - (1 << 30), 1u64 << 40);
    let columns: Vec<Vec<u64>> =
        (0..2048).map(|i| (0..1024).map(|k| if k == i / 2 { base + extra } else { base }).collect()).collect();
    let release = ubapp::mechanism::Release::from_weights(common::parse_model(&text), 1.0, 1 << 52, columns).unwrap();
    let m = release.dense().expect("weights make a dense release");
    let path = dir.path().join("big.json");
    m.save(&path).unwrap();
    let v = read_json(&path);
    assert_eq!((v["format_version"].as_u64(), v["weights_encoding"].as_str()), (Some(4), Some("leb128-base64")));
    assert!(v.get("columns").is_none());
    let mut arrays = v.clone();
    let o = arrays.as_object_mut().unwrap();
    o.remove("weights");
    o.insert("columns".into(), (0..m.n_observations()).map(|i| m.column(i).to_vec()).collect::<Vec<_>>().into());
    let (size, arrays_size) =
        (std::fs::metadata(&path).unwrap().len(), serde_json::to_string_pretty(&arrays).unwrap().len() as u64);
    assert!(2 * size < arrays_size, "packed {size} bytes, arrays {arrays_size}");
    let o = ubapp(&["verify", "big.json", "--model", "model.toml"], dir.path());
    assert!(o.status.success() && stdout(&o).contains("|Y| = 2048, |Θ̃| = 1024"), "{}", stderr(&o));
    let o = ubapp(&["sample", "big.json", "--y", "100", "--n", "3", "--allow-composition", "--seed", "1"], dir.path());
    assert!(o.status.success() && stdout(&o).lines().count() == 3, "{}", stderr(&o));
}

rejected! {
    rejected_packed_weights_not_base64: setup_packed, |v| {
        let w = v["weights"].as_str().unwrap();
        v["weights"] = Value::from(format!("*{}", &w[1..]));
    } => "weights is not valid base64";
    rejected_packed_weights_with_a_byte_after_the_last: setup_packed,
        |v| edit_packed_bytes(v, |b| b.push(0)) => "weights holds more than";
    rejected_packed_weights_ending_inside_a_varint: setup_packed,
        |v| edit_packed_bytes(v, |b| *b.last_mut().unwrap() |= 0x80) => "weights ends inside a varint";
    rejected_packed_weights_with_one_weight_edited: setup_packed,
        |v| edit_packed_bytes(v, |b| b[0] ^= 1) => "weights has column 0";
    rejected_packed_weights_of_an_unknown_encoding: setup_packed,
        |v| v["weights_encoding"] = Value::from("zstd") => "weights_encoding is \"zstd\"";
}

#[test]
fn verify_names_a_missing_file_with_exit_code_2() {
    let dir = tempfile::tempdir().unwrap();
    let o = ubapp(&["verify", "does-not-exist.json"], dir.path());
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("cannot read mechanism file"));
}

/// A solve that fails on `--eps EPS` leaves the existing artifact and the directory as they were.
fn assert_failed_solve_keeps_the_artifact(eps: &str) {
    let (dir, path) = setup();
    let before = std::fs::read(&path).unwrap();
    let o = ubapp(&["solve", "model.toml", "--eps", eps, "--out", "mech.json"], dir.path());
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_eq!(std::fs::read(&path).unwrap(), before);
    let names: Vec<String> = listing(dir.path()).into_iter().map(|(n, _)| n).collect();
    assert_eq!(names, vec!["mech.json".to_string(), "model.toml".to_string()]);
}

#[test]
fn failed_solve_at_eps_zero_keeps_an_existing_artifact() {
    assert_failed_solve_keeps_the_artifact("0");
}

#[test]
fn failed_solve_at_eps_nan_keeps_an_existing_artifact() {
    assert_failed_solve_keeps_the_artifact("nan");
}

#[test]
fn failed_solve_at_a_negative_eps_keeps_an_existing_artifact() {
    assert_failed_solve_keeps_the_artifact("-1");
}

#[test]
fn delta_artifact_verifies_samples_and_audits() {
    let (dir, path) = setup_delta();
    let d = dir.path();
    let v = read_json(&path);
    assert_eq!(v["format_version"], 2);
    assert_eq!(v["delta"], 0.01);
    assert_eq!(v["certified_eps"], 1.0, "for δ > 0 certified_eps is the ε of the (ε, δ) pair");
    let certified = v["certified_delta"].as_f64().unwrap();
    // The optimum spends its budget; repair keeps it within δ.
    assert!(certified <= 0.01 && certified > 0.0099, "{certified}");

    let o = ubapp(&["verify", "mech.json"], d);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("(ε, δ)-DP with certified δ = "));
    let o = ubapp(&["verify", "mech.json", "--json"], d);
    let j: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!((j["delta"].as_f64(), j["certified_delta"].as_f64()), (Some(0.01), Some(certified)));

    let o = ubapp(&["sample", "mech.json", "--y", "3", "--allow-composition", "--n", "5", "--seed", "1"], d);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o).lines().count(), 5);

    let o = ubapp(&["audit", "mech.json", "--samples", "20000", "--seed", "3", "--json"], d);
    assert!(o.status.success(), "{}", stderr(&o));
    let r: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(r["judged"], "delta");
    assert_eq!(r["consistent"], true);
    assert!(r["empirical_delta_lower"].as_f64().unwrap() <= certified);
    let o = ubapp(&["audit", "mech.json", "--samples", "2000", "--seed", "3"], d);
    assert!(stdout(&o).contains("empirical δ lower bound"));
}

#[test]
fn rejected_a_delta_file_whose_mass_moved_beyond_its_delta() {
    let (dir, path) = setup_delta();
    let d = dir.path();
    let v = read_json(&path);
    // Move 5 % of y = 1's mass onto an output that y = 0 hardly uses, from an output where y = 1's
    // weight is below e^ε times y = 0's (so the spend of (y = 1, y = 0) rises by about 5 %).
    let t = v["total"].as_u64().unwrap();
    let w =
        |i: usize| -> Vec<u64> { v["columns"][i].as_array().unwrap().iter().map(|x| x.as_u64().unwrap()).collect() };
    let (w0, w1) = (w(0), w(1));
    let m = t / 20;
    let j = (0..w1.len())
        .find(|&j| w1[j] >= m && (w1[j] as f64) <= std::f64::consts::E * w0[j] as f64)
        .expect("a source output");
    let k = (0..w0.len()).filter(|&k| k != j).min_by_key(|&k| w0[k]).unwrap();
    assert!(w0[k] < t / 200, "a target output y = 0 hardly uses");
    assert_rejected(
        d,
        &edited(&path, |v| {
            v["columns"][1][j] = Value::from(w1[j] - m);
            v["columns"][1][k] = Value::from(w1[k] + m);
        }),
        "not (eps, delta)-DP",
    );
}

rejected! {
    // Claims that do not match the weights or the model.
    rejected_a_delta_file_claiming_half_its_certified_delta: setup_delta, |v| {
        let certified = v["certified_delta"].as_f64().unwrap();
        v["certified_delta"] = Value::from(certified / 2.0);
    } => "certified_delta = ";
    rejected_a_delta_above_the_models: setup_delta,
        |v| v["delta"] = Value::from(0.02) => "larger than the embedded model's delta";
    rejected_an_embedded_model_delta_below_the_files: setup_delta,
        |v| v["model"]["delta"] = Value::from(0.005) => "larger than the embedded model's delta";
    rejected_a_delta_below_what_the_weights_spend: setup_delta,
        |v| v["delta"] = Value::from(0.001) => "not (eps, delta)-DP";
    rejected_a_delta_outside_the_unit_interval: setup_delta,
        |v| v["delta"] = Value::from(1.5) => "delta must be a number in [0, 1)";
    // The version and the δ fields go together.
    rejected_a_version_2_file_without_delta: setup_delta, |v| {
        v.as_object_mut().unwrap().remove("delta");
    } => "delta is missing";
    rejected_a_version_2_file_without_certified_delta: setup_delta, |v| {
        v.as_object_mut().unwrap().remove("certified_delta");
    } => "certified_delta is missing";
    rejected_delta_fields_in_a_version_1_file: setup_delta,
        |v| v["format_version"] = Value::from(1) => "not part of format_version 1";
    // Read as pure ε (δ = 0 claimed), the weights are not ε-DP at all.
    rejected_a_delta_file_claiming_delta_zero: setup_delta, |v| v["delta"] = Value::from(0.0) => "eps";
}

#[test]
fn delta_zero_writes_the_pure_eps_artifact_byte_for_byte() {
    let (_d1, pure) = setup();
    let (_d2, zero) = setup_with(&model_with("delta = 0.0"));
    assert_eq!(std::fs::read(&pure).unwrap(), std::fs::read(&zero).unwrap());
    let v = read_json(&zero);
    assert_eq!(v["format_version"], 1);
    assert!(v.get("delta").is_none() && v.get("certified_delta").is_none(), "no δ fields in a pure-ε file");
}

/// A table model whose grid, prior weights, likelihood, neighbours and loss all come from CSV files
/// in data/, and a multinomial model with an explicit 3-column grid file.
fn write_csv_models(dir: &Path) {
    let files = [
        ("data/grid.csv", "0.25\n0.75\n"),
        ("data/w.csv", "1\n3\n"),
        ("data/lik.csv", "0.5,0.3,0.2\n0.1,0.3,0.6\n"),
        ("data/nb.csv", "# pairs\n0,1\n1,2\n"),
        ("data/loss.csv", "0,1\n2,0\n"),
        ("data/pts.csv", "0.2,0.3,0.5\n0.5,0.25,0.25\n0.1,0.8,0.1\n"),
        (
            "table.toml",
            "name = \"csv-table\"\nepsilon = [1.0]\n[parameter]\n\
             grid = { kind = \"explicit\", file = \"data/grid.csv\" }\nprior = { kind = \"weights\", file = \"data/w.csv\" }\n\
             [observation]\nfamily = \"table\"\nlikelihood = \"data/lik.csv\"\nneighbours = \"data/nb.csv\"\n\
             [loss]\nkind = \"matrix\"\nfile = \"data/loss.csv\"\n",
        ),
        (
            "multi.toml",
            "name = \"csv-multinomial\"\nepsilon = [1.0]\n[parameter]\n\
             grid = { kind = \"explicit\", file = \"data/pts.csv\" }\nprior = { kind = \"uniform\" }\n\
             [observation]\nfamily = \"multinomial\"\ncategories = 3\nrecords = 2\n[loss]\nkind = \"squared\"\n",
        ),
    ];
    std::fs::create_dir_all(dir.join("data")).unwrap();
    for (name, text) in files {
        std::fs::write(dir.join(name), text).unwrap();
    }
}

#[test]
fn csv_backed_artifacts_verify_from_any_directory_after_the_csv_files_move() {
    let models = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    write_csv_models(models.path());
    for name in ["table", "multi"] {
        let art = out.path().join(format!("{name}.json"));
        let o = ubapp(&["solve", &format!("{name}.toml"), "--out", art.to_str().unwrap()], models.path());
        assert!(o.status.success(), "{name}: {}", stderr(&o));
        let v = read_json(&art);
        let spec = serde_json::to_string(&v["model"]).unwrap();
        assert!(!spec.contains(".csv"), "{name}: the embedded model still names a CSV file: {spec}");
    }
    // The table's data is inline, exactly as read (prior weights before normalisation).
    let v = read_json(&out.path().join("table.json"));
    assert_eq!(v["model"]["observation"]["likelihood"], serde_json::json!([[0.5, 0.3, 0.2], [0.1, 0.3, 0.6]]));
    assert_eq!(v["model"]["observation"]["neighbours"], serde_json::json!([[0.0, 1.0], [1.0, 2.0]]));
    assert_eq!(v["model"]["parameter"]["prior"]["values"], serde_json::json!([1.0, 3.0]));
    assert_eq!(v["model"]["parameter"]["grid"]["values"], serde_json::json!([0.25, 0.75]));
    assert_eq!(v["model"]["loss"]["values"], serde_json::json!([[0.0, 1.0], [2.0, 0.0]]));
    let v = read_json(&out.path().join("multi.json"));
    assert_eq!(v["model"]["parameter"]["grid"]["points"][1], serde_json::json!([0.5, 0.25, 0.25]));

    std::fs::rename(models.path().join("data"), models.path().join("moved")).unwrap();
    for name in ["table", "multi"] {
        let art = out.path().join(format!("{name}.json"));
        let o = ubapp(&["verify", art.to_str().unwrap()], elsewhere.path());
        assert!(o.status.success(), "{name}: verify from another directory: {}", stderr(&o));
    }
    // (`sample --y` addresses one-dimensional observations, so only the table model here.)
    let art = out.path().join("table.json");
    let o = ubapp(
        &["sample", art.to_str().unwrap(), "--y", "1", "--allow-composition", "--n", "3", "--seed", "1"],
        elsewhere.path(),
    );
    assert!(o.status.success(), "sample from another directory: {}", stderr(&o));
}

#[test]
fn sample_takes_vector_observations_of_a_multinomial_model() {
    let dir = setup_multinomial();
    let outputs: Vec<Vec<f64>> =
        serde_json::from_value(read_json(&dir.path().join("mech.json"))["outputs"].clone()).unwrap();
    let o =
        ubapp(&["sample", "mech.json", "--y", "3,3,2", "--allow-composition", "--n", "20", "--seed", "1"], dir.path());
    assert!(o.status.success(), "{}", stderr(&o));
    let lines: Vec<Vec<f64>> = String::from_utf8(o.stdout)
        .unwrap()
        .lines()
        .map(|l| l.split(',').map(|c| c.parse().unwrap()).collect())
        .collect();
    assert_eq!(lines.len(), 20);
    assert!(lines.iter().all(|v| v.len() == 3 && outputs.contains(v)), "{lines:?}");
    let o = ubapp(
        &["sample", "mech.json", "--y", "3,3,2", "--allow-composition", "--n", "2", "--seed", "1", "--json"],
        dir.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let j: Vec<Vec<f64>> = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(j.len(), 2);
}

/// A temp dir with the small 3-way vote-share model solved at ε = 1 as mech.json.
fn setup_multinomial() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let model = common::bundled("vote-share-3way-small");
    let o = ubapp(&["solve", model.to_str().unwrap(), "--eps", "1", "--out", "mech.json"], dir.path());
    assert!(o.status.success(), "{}", stderr(&o));
    dir
}

/// `sample --y BAD` on the multinomial model: one sentence naming --y, exit 2, nothing on stdout.
fn assert_bad_vector_y(bad: &str) {
    let dir = setup_multinomial();
    let o = ubapp(&["sample", "mech.json", "--y", bad], dir.path());
    assert_eq!(o.status.code(), Some(2), "{bad}");
    assert!(stderr(&o).starts_with("error: --y") && stderr(&o).trim().lines().count() == 1, "{}", stderr(&o));
    assert!(o.stdout.is_empty());
}

#[test]
fn sample_rejects_a_count_vector_of_the_wrong_length() {
    assert_bad_vector_y("3,3");
}

#[test]
fn sample_rejects_counts_that_do_not_add_up_to_the_records() {
    assert_bad_vector_y("3,5,2");
}

#[test]
fn sample_rejects_a_scalar_for_a_vector_observation() {
    assert_bad_vector_y("3");
}

#[test]
fn sample_rejects_counts_that_are_not_numbers() {
    assert_bad_vector_y("a,b,c");
}

/// Issue 12, item 10: `verify`, `audit --json` and `sample` into a pipe whose reader goes away
/// (`… | head -1`) end quietly: no panic, no exit code 101.
#[test]
fn verify_into_a_closed_pipe_does_not_panic() {
    let (dir, _) = setup();
    common::assert_quiet_on_closed_pipe(&["verify", "mech.json"], Some(dir.path()));
    common::assert_quiet_on_closed_pipe(&["verify", "mech.json", "--json"], Some(dir.path()));
}

#[test]
fn audit_json_into_a_closed_pipe_does_not_panic() {
    let (dir, _) = setup();
    common::assert_quiet_on_closed_pipe(
        &["audit", "mech.json", "--samples", "2000", "--seed", "3", "--json"],
        Some(dir.path()),
    );
}

/// Far more output than a pipe buffers: the writes after `head -1` are sure to meet a closed pipe.
#[test]
fn sample_into_a_closed_pipe_does_not_panic() {
    let (dir, _) = setup();
    common::assert_quiet_on_closed_pipe(
        &["sample", "mech.json", "--y", "3", "--allow-composition", "--n", "200000", "--seed", "1"],
        Some(dir.path()),
    );
}

/// `audit`'s options are checked before its file is read: a bad --alpha, --samples or
/// --max-pairs is named (exit 2) even when the file does not exist.
#[test]
fn audit_checks_its_options_before_reading_the_file() {
    let dir = tempfile::tempdir().unwrap();
    for (flag, value) in [("--alpha", "2"), ("--samples", "0"), ("--max-pairs", "0")] {
        let o = ubapp(&["audit", "missing.json", flag, value], dir.path());
        assert_eq!(o.status.code(), Some(2), "{flag}: {}", stderr(&o));
        assert!(stderr(&o).contains(flag) && !stderr(&o).contains("missing.json"), "{flag}: {}", stderr(&o));
    }
}
