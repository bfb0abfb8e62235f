//! `compare --shard I/N` + `merge`: the merged sweep equals the unsharded run file for file (on 1,
//! 3 and 7 shards), shards from the scheduler's environment equal the explicit ones, and merging
//! shards of different sweeps, a shard twice or too few shards is refused with exit code 2 and
//! nothing written.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use ubapp::sweep::{case_hash, Shard};

fn ubapp() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_ubapp"));
    for v in [
        "SLURM_ARRAY_TASK_ID",
        "SLURM_ARRAY_TASK_MIN",
        "SLURM_ARRAY_TASK_COUNT",
        "JOB_COMPLETION_INDEX",
        "HQ_TASK_ID",
        "UBAPP_SHARD_COUNT",
    ] {
        c.env_remove(v);
    }
    c
}

fn model(dir: &Path, trials: u64) -> PathBuf {
    let path = dir.join(format!("small{trials}.toml"));
    std::fs::write(
        &path,
        format!(
            "name = \"small\"\nepsilon = [0.1, 1.0]\n[parameter]\nlower = 0.0\nupper = 1.0\n\
             grid = {{ kind = \"midpoint\", points = 12 }}\nprior = {{ kind = \"uniform\" }}\n\
             [observation]\nfamily = \"binomial\"\ntrials = {trials}\n[loss]\nkind = \"squared\"\n"
        ),
    )
    .unwrap();
    path
}

/// Grid: 2 K × 4 ε = 8 cases, with a Monte-Carlo method (dsaa) whose seed must not depend on the shard.
const GRID: [&str; 8] =
    ["--trials", "8,12", "--eps", "0.1,0.5,1,2", "--methods", "ubapp,lbapp,geometric,dsaa,cape", "--seed", "3"];

fn run(args: &[&str]) -> Output {
    let o = ubapp().args(args).output().unwrap();
    assert!(o.status.success(), "ubapp {args:?}: {}", String::from_utf8_lossy(&o.stderr));
    o
}

fn refused(cmd: &mut Command) -> String {
    let o = cmd.output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(2), "stderr: {err}");
    assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
    err
}

fn shard(model: &Path, i: u32, n: u32, out: &Path, grid: &[&str]) {
    let spec = format!("{i}/{n}");
    let mut args = vec!["compare", model.to_str().unwrap(), "--shard", &spec, "--out", out.to_str().unwrap()];
    args.extend_from_slice(grid);
    run(&args);
}

#[test]
fn sharded_and_merged_equals_unsharded_on_1_3_and_7_shards() {
    let tmp = tempfile::tempdir().unwrap();
    let m = model(tmp.path(), 8);
    let whole = tmp.path().join("whole");
    let mut args = vec!["compare", m.to_str().unwrap(), "--out", whole.to_str().unwrap(), "--json"];
    args.extend_from_slice(&GRID);
    let unsharded = run(&args);
    let expected = common::files_under(&whole);
    assert!(expected.len() > 10, "risk.csv and the plots");
    let csv = std::fs::read_to_string(whole.join("risk.csv")).unwrap();
    assert_eq!(csv.lines().count(), 1 + 8 * 5);
    for n in [1u32, 3, 7] {
        let dirs: Vec<PathBuf> = (0..n).map(|i| tmp.path().join(format!("n{n}-s{i}"))).collect();
        for (i, d) in dirs.iter().enumerate() {
            shard(&m, i as u32, n, d, &GRID);
        }
        let merged = tmp.path().join(format!("merged{n}"));
        let mut args = vec!["merge".to_string()];
        args.extend(dirs.iter().rev().map(|d| d.display().to_string())); // any order
        args.extend(["--out".to_string(), merged.display().to_string(), "--json".to_string()]);
        let o = run(&args.iter().map(String::as_str).collect::<Vec<_>>());
        // Sorted CSV lines equal, and beyond that every file byte for byte (same row order, same plots).
        let sorted = |s: &str| {
            let mut l: Vec<String> = s.lines().map(str::to_string).collect();
            l.sort();
            l
        };
        let got = std::fs::read_to_string(merged.join("risk.csv")).unwrap();
        assert_eq!(sorted(&got), sorted(&csv), "{n} shards");
        assert_eq!(common::files_under(&merged), expected, "{n} shards: every file as the unsharded run writes it");
        assert_eq!(o.stdout, unsharded.stdout, "{n} shards: the same --json rows");
    }
}

#[test]
fn shard_from_the_schedulers_environment_equals_the_explicit_slice() {
    let tmp = tempfile::tempdir().unwrap();
    let m = model(tmp.path(), 8);
    let explicit = tmp.path().join("explicit");
    shard(&m, 1, 3, &explicit, &GRID);
    let want = std::fs::read(explicit.join("shard.json")).unwrap();
    let cases: [(&[(&str, &str)], &str); 4] = [
        (&[("SLURM_ARRAY_TASK_ID", "1"), ("SLURM_ARRAY_TASK_COUNT", "3")], "env"),
        // Slurm arrays numbered 1..N.
        (&[("SLURM_ARRAY_TASK_ID", "2"), ("SLURM_ARRAY_TASK_MIN", "1"), ("SLURM_ARRAY_TASK_COUNT", "3")], "env"),
        (&[("JOB_COMPLETION_INDEX", "1")], "env/3"),
        (&[("HQ_TASK_ID", "1"), ("UBAPP_SHARD_COUNT", "3")], "env"),
    ];
    for (n, (vars, spec)) in cases.iter().enumerate() {
        let out = tmp.path().join(format!("env{n}"));
        let mut c = ubapp();
        c.args(["compare", m.to_str().unwrap(), "--shard", spec, "--out", out.to_str().unwrap()]).args(GRID);
        for (k, v) in vars.iter() {
            c.env(k, v);
        }
        let o = c.output().unwrap();
        assert!(o.status.success(), "{vars:?}: {}", String::from_utf8_lossy(&o.stderr));
        assert_eq!(std::fs::read(out.join("shard.json")).unwrap(), want, "{vars:?}");
    }
    // No scheduler, an index past the count, no count, no --out, a bad spec: exit 2, one sentence.
    let out = tmp.path().join("never").display().to_string();
    let base = |spec: &str| {
        let mut c = ubapp();
        c.args(["compare", m.to_str().unwrap(), "--shard", spec, "--out", &out]);
        c
    };
    assert!(refused(&mut base("env")).contains("SLURM_ARRAY_TASK_ID"));
    assert!(refused(base("env").env("SLURM_ARRAY_TASK_ID", "3").env("SLURM_ARRAY_TASK_COUNT", "3")).contains("below"));
    assert!(refused(base("env").env("HQ_TASK_ID", "0")).contains("UBAPP_SHARD_COUNT"));
    assert!(refused(&mut base("3/3")).contains("0 ≤ I < N"));
    assert!(refused(&mut base("1-3")).contains("--shard"));
    assert!(refused(ubapp().args(["compare", m.to_str().unwrap(), "--shard", "0/2"])).contains("--out"));
    assert!(!Path::new(&out).exists(), "nothing written on refusal");
}

#[test]
fn merging_shards_of_different_sweeps_or_an_incomplete_set_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let (m8, m12) = (model(tmp.path(), 8), model(tmp.path(), 12));
    let dir = |name: &str| tmp.path().join(name);
    shard(&m8, 0, 2, &dir("a0"), &GRID);
    shard(&m8, 1, 2, &dir("a1"), &GRID);
    shard(&m12, 1, 2, &dir("other-model"), &GRID);
    let mut other_grid = GRID;
    other_grid[3] = "0.1,0.5,1";
    shard(&m8, 1, 2, &dir("other-grid"), &other_grid);
    shard(&m8, 1, 3, &dir("other-count"), &GRID);
    let out = dir("merged");
    let merge = |dirs: &[&str]| {
        let mut c = ubapp();
        c.arg("merge").args(dirs.iter().map(|d| dir(d))).arg("--out").arg(&out);
        c
    };
    assert!(refused(&mut merge(&["a0", "other-model"])).contains("its model differs"));
    assert!(refused(&mut merge(&["a0", "other-grid"])).contains("its grid"));
    assert!(refused(&mut merge(&["a0", "other-count"])).contains("number of shards"));
    assert!(refused(&mut merge(&["a0", "a0"])).contains("both shard 0/2"));
    assert!(refused(&mut merge(&["a0"])).contains("shard(s) 1 of 2 are missing"));
    assert!(refused(&mut merge(&["a0", "nowhere"])).contains("shard.json"));
    // A different version: edit the recorded version of one shard.
    let text = std::fs::read_to_string(dir("a1").join("shard.json")).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let version = v["ubapp_version"].as_str().unwrap().to_string();
    std::fs::create_dir_all(dir("old")).unwrap();
    std::fs::write(dir("old").join("shard.json"), text.replace(&format!("\"{version}\""), "\"0.0.1\"")).unwrap();
    assert!(refused(&mut merge(&["a0", "old"])).contains("ubapp version"));
    assert!(!out.exists(), "nothing written on refusal");
    let o = merge(&["a1", "a0"]).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

#[test]
fn a_case_keeps_its_slice_when_the_grid_grows_and_slices_are_balanced() {
    use ubapp::compare::{CompareOptions, Method};
    use ubapp::model::{Model, ModelSpec};
    use ubapp::sweep::compare::compare_shard;
    // The hash is pinned: a change would move the cases of sweeps already running to other slices.
    assert_eq!(case_hash(100, 1.0), PINNED_HASH);
    let text = std::fs::read_to_string(model(tempfile::tempdir().unwrap().path(), 8)).unwrap();
    let m = Model::from_spec(ModelSpec::from_toml(&text, "small").unwrap()).unwrap();
    let opts = |eps: &[f64], trials: &[u64]| CompareOptions {
        eps: eps.to_vec(),
        trials: trials.to_vec(),
        methods: vec![Method::Lbapp],
        ..CompareOptions::for_model(&m)
    };
    let cases = |o: &CompareOptions, i| {
        let file = compare_shard(&m, o, Shard { index: i, count: 5 }, &mut |_| {}).unwrap();
        file.rows().iter().map(|r| (r.trials, r.eps.to_bits())).collect::<Vec<_>>()
    };
    let small = opts(&[0.1, 1.0], &[8, 12]);
    let big = opts(&[0.05, 0.1, 0.5, 1.0, 2.0], &[4, 8, 12, 16]);
    let mut total = 0;
    for i in 0..5 {
        let (before, after) = (cases(&small, i), cases(&big, i));
        assert!(before.iter().all(|c| after.contains(c)), "slice {i}: {before:?} not kept in {after:?}");
        total += after.len();
    }
    assert_eq!(total, 20, "each case in exactly one slice");
    // Balance: 1000 cases over 7 slices, about 143 each; binomial(1000, 1/7) lies in [100, 190]
    // with probability > 1 − 1e-5 per slice.
    let mut counts = [0usize; 7];
    for k in 1..=200u64 {
        for e in [0.1, 0.5, 1.0, 2.0, 5.0] {
            let slices: Vec<u32> = (0..7).filter(|&i| Shard { index: i, count: 7 }.holds(k, e)).collect();
            assert_eq!(slices.len(), 1);
            counts[slices[0] as usize] += 1;
        }
    }
    assert!(counts.iter().all(|&c| (100..=190).contains(&c)), "{counts:?}");
}

/// FNV-1a of "K=100;eps=1" then SplitMix64's finaliser.
const PINNED_HASH: u64 = 0x712b_0f83_2db8_7d09; // computed independently in Python
