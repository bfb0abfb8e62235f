//! `ubapp release --data`: the statistic computed from a CSV's records equals the one computed by
//! hand (the same value as `sample --y` for the same seed), standard input works, and bad records
//! are refused with one sentence naming the file, line and column, exit 2, nothing spent.

mod common;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use common::{assert_input_error, assert_success, stdout, stdout_json, ubapp, write_file};

/// A binomial model of 250 patients (cured or not) at ε = 0.5.
fn patients_model(dir: &Path) -> PathBuf {
    write_file(
        dir,
        "patients.toml",
        "name = \"patients\"\nepsilon = [0.5]\n[parameter]\ngrid = { kind = \"midpoint\", points = 25 }\n\
         prior = { kind = \"uniform\" }\n[observation]\nfamily = \"binomial\"\ntrials = 250\n[loss]\nkind = \"squared\"\n",
    )
}

/// The model solved into `mech.json` (verified against the model on every use below).
fn mechanism(dir: &Path, model: &Path) -> PathBuf {
    let out = dir.join("mech.json");
    assert_success(&ubapp(&[
        "solve".as_ref(),
        model.as_os_str(),
        "--out".as_ref(),
        out.as_os_str(),
        "--quiet".as_ref(),
    ]));
    out
}

/// 250 patient records: id, age, cured (0/1); `cured` of patient i is a fixed pseudo-random bit.
fn patients_csv(n: usize) -> (String, u64) {
    let mut text = String::from("id,age,cured\n");
    let mut count = 0;
    for i in 0..n {
        let cured = u64::from((i * 7919 + 13) % 10 < 3);
        count += cured;
        text.push_str(&format!("{i},{},{cured}\n", 20 + i % 60));
    }
    (text, count)
}

fn init(ledger: &Path, dataset: &str, budget: &str) {
    let o = ubapp(&["ledger", "init", "--ledger", ledger.to_str().unwrap(), "--dataset", dataset, "--budget", budget]);
    assert_success(&o);
}

fn spent(ledger: &Path) -> (usize, f64) {
    let o = ubapp(&["ledger", "show", "--ledger", ledger.to_str().unwrap(), "--json"]);
    assert_success(&o);
    let v = stdout_json(&o);
    let d = &v[0];
    (d["releases"].as_array().unwrap().len(), d["spent"]["eps"].as_f64().unwrap())
}

#[test]
fn a_release_from_records_equals_sample_with_the_count_computed_by_hand() {
    let dir = tempfile::tempdir().unwrap();
    let model = patients_model(dir.path());
    let mech = mechanism(dir.path(), &model);
    let (csv, count) = patients_csv(250);
    let data = write_file(dir.path(), "patients.csv", &csv);
    let ledger = dir.path().join("ledger.db");
    init(&ledger, "hospital-2026", "5");
    let (m, d, l) = (mech.to_str().unwrap(), data.to_str().unwrap(), ledger.to_str().unwrap());
    let trust = ["--model", model.to_str().unwrap()];
    for seed in ["1", "2", "3"] {
        let mut args =
            vec!["release", m, "--data", d, "--column", "cured", "--ledger", l, "--dataset", "hospital-2026"];
        args.extend(["--seed", seed]);
        args.extend(trust);
        let released = ubapp(&args);
        assert_success(&released);
        let y = count.to_string();
        let mut sample = vec!["sample", m, "--y", &y, "--seed", seed];
        sample.extend(trust);
        let sampled = ubapp(&sample);
        assert_success(&sampled);
        assert_eq!(stdout(&released), stdout(&sampled), "seed {seed}, count {count}");
    }
    let (n, eps) = spent(&ledger);
    assert_eq!(n, 3);
    assert!((eps - 1.5).abs() < 1e-9, "{eps}");

    // Standard input, and the JSON entry.
    let mut child = Command::new(env!("CARGO_BIN_EXE_ubapp"))
        .args(["release", m, "--data", "-", "--column", "cured", "--ledger", l, "--dataset", "hospital-2026"])
        .args(["--seed", "1", "--json"])
        .args(trust)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(csv.as_bytes()).unwrap();
    let o = child.wait_with_output().unwrap();
    assert_success(&o);
    let entry = stdout_json(&o);
    let mut sample =
        vec!["sample", m, "--y", &count.to_string(), "--seed", "1"].into_iter().map(String::from).collect::<Vec<_>>();
    sample.extend(trust.iter().map(|s| s.to_string()));
    assert_eq!(entry["value"].as_str().unwrap(), stdout(&ubapp(&sample)).trim());
    assert_eq!(entry["dataset"], "hospital-2026");
    assert_eq!(entry["composition"], "basic-pure-eps");
    assert_eq!(entry["id"], 4);
}

#[test]
fn bad_records_are_refused_in_one_sentence_and_spend_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let model = patients_model(dir.path());
    let mech = mechanism(dir.path(), &model);
    let ledger = dir.path().join("ledger.db");
    init(&ledger, "d", "5");
    let (good, _) = patients_csv(250);
    let mut seven = good.clone();
    seven = seven.replacen("\n5,25,0\n", "\n5,25,7\n", 1);
    assert_ne!(seven, good);
    let (short, _) = patients_csv(249);
    let word = good.replacen("\n9,29,0\n", "\n9,29,yes\n", 1);
    let empty = good.replacen("\n9,29,0\n", "\n9,29,\n", 1);
    let ragged = good.replacen("\n9,29,0\n", "\n9,29\n", 1);
    let cases: Vec<(&str, String, &str, Vec<&str>)> = vec![
        ("seven.csv", seven, "cured", vec!["seven.csv, line 7, column \"cured\": 7 is outside the model's domain"]),
        ("short.csv", short, "cured", vec!["short.csv, column \"cured\": has 249 records", "exactly 250"]),
        ("word.csv", word, "cured", vec!["word.csv, line 11, column \"cured\": \"yes\" is not a number"]),
        ("empty.csv", empty, "cured", vec!["empty.csv, line 11, column \"cured\": the cell is empty"]),
        ("ragged.csv", ragged, "cured", vec!["ragged.csv, line 11: the row has 2 fields, but the header has 3"]),
        ("missing.csv", good.clone(), "outcome", vec!["missing.csv, column \"outcome\": is missing", "\"cured\""]),
        ("none.csv", "id,age,cured\n".into(), "cured", vec!["none.csv, column \"cured\": has no records"]),
    ];
    for (name, text, column, words) in cases {
        let data = write_file(dir.path(), name, &text);
        let o = ubapp(&[
            "release",
            mech.to_str().unwrap(),
            "--data",
            data.to_str().unwrap(),
            "--column",
            column,
            "--ledger",
            ledger.to_str().unwrap(),
            "--dataset",
            "d",
            "--model",
            model.to_str().unwrap(),
        ]);
        assert_input_error(&o, &words);
        assert!(stdout(&o).is_empty(), "{name}: printed {}", stdout(&o));
    }
    // A ledger that does not exist, a dataset without a budget: refused, nothing created.
    let data = write_file(dir.path(), "good.csv", &good);
    let base = |ledger: &str, dataset: &str| -> Vec<String> {
        ["release", mech.to_str().unwrap(), "--data", data.to_str().unwrap(), "--column", "cured"]
            .iter()
            .map(|s| s.to_string())
            .chain(["--ledger", ledger, "--dataset", dataset, "--model", model.to_str().unwrap()].map(String::from))
            .collect()
    };
    let nowhere = dir.path().join("nowhere.db");
    assert_input_error(&ubapp(&base(nowhere.to_str().unwrap(), "d")), &["no such ledger file", "ubapp ledger init"]);
    assert!(!nowhere.exists());
    assert_input_error(&ubapp(&base(ledger.to_str().unwrap(), "other")), &["has no budget for dataset \"other\""]);
    assert_eq!(spent(&ledger), (0, 0.0));
}

#[test]
fn multinomial_records_as_a_category_column_or_indicator_columns() {
    let dir = tempfile::tempdir().unwrap();
    let model = write_file(
        dir.path(),
        "votes.toml",
        "name = \"votes\"\nepsilon = [1.0]\n[parameter]\ngrid = { kind = \"simplex\", resolution = 4 }\n\
         prior = { kind = \"uniform\" }\n[observation]\nfamily = \"multinomial\"\ncategories = 3\nrecords = 6\n\
         [loss]\nkind = \"squared\"\n",
    );
    let mech = mechanism(dir.path(), &model);
    let ledger = dir.path().join("ledger.db");
    init(&ledger, "poll", "10");
    let csv = "vote,a,b,c\n0,1,0,0\n2,0,0,1\n2,0,0,1\n1,0,1,0\n2,0,0,1\n0,1,0,0\n";
    let data = write_file(dir.path(), "votes.csv", csv);
    let run = |columns: &[&str]| {
        let mut args: Vec<&str> = vec!["release", mech.to_str().unwrap(), "--data", data.to_str().unwrap()];
        for c in columns {
            args.extend(["--column", c]);
        }
        args.extend(["--ledger", ledger.to_str().unwrap(), "--dataset", "poll", "--seed", "5"]);
        args.extend(["--model", model.to_str().unwrap()]);
        ubapp(&args)
    };
    let by_index = run(&["vote"]);
    assert_success(&by_index);
    let by_indicator = run(&["a", "b", "c"]);
    assert_success(&by_indicator);
    let sampled =
        ubapp(&["sample", mech.to_str().unwrap(), "--y", "2,1,3", "--seed", "5", "--model", model.to_str().unwrap()]);
    assert_eq!(stdout(&by_index), stdout(&sampled));
    assert_eq!(stdout(&by_indicator), stdout(&sampled));
    assert_input_error(&run(&["a", "b"]), &["votes.csv: model \"votes\" (multinomial) takes one column"]);
    let bad = write_file(dir.path(), "bad.csv", &csv.replace("\n1,0,1,0\n", "\n1,1,1,0\n"));
    let mut args: Vec<&str> = vec!["release", mech.to_str().unwrap(), "--data", bad.to_str().unwrap()];
    args.extend(["--column", "a", "--column", "b", "--column", "c", "--ledger", ledger.to_str().unwrap()]);
    args.extend(["--dataset", "poll", "--model", model.to_str().unwrap()]);
    assert_input_error(&ubapp(&args), &["bad.csv, line 5: the 3 category columns hold 2 ones"]);
}
