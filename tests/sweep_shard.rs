//! Sweeps of every family split into shards: `compare --shard I/N` on a party comparison
//! (Poisson, multinomial, table and a several-party binomial model) and `solve --shard I/N` on a
//! long ε list; `merge` of 1, 3 and 7 shards gives exactly the unsharded `--json` (and every file of a
//! comparison's --out byte for byte). Shards of different sweeps, a shard twice or missing, and
//! hand-edited shard files are refused with exit code 2, one sentence naming the file, nothing
//! written.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

mod common;

const POISSON: &str = "name = \"counts\"\nepsilon = [0.5, 2.0]\n[parameter]\nlower = 0.0\nupper = 3.0\n\
    grid = { kind = \"midpoint\", points = 10 }\nprior = { kind = \"uniform\" }\n[observation]\n\
    family = \"poisson\"\nrecords = 6\ncap = 2\n[loss]\nkind = \"absolute\"\n";

const MULTINOMIAL: &str = "name = \"shares\"\nepsilon = [0.5, 2.0]\n[parameter]\n\
    grid = { kind = \"simplex\", resolution = 4 }\nprior = { kind = \"uniform\" }\n[observation]\n\
    family = \"multinomial\"\ncategories = 3\nrecords = 4\n[loss]\nkind = \"squared\"\n";

/// Three sites holding 4 Bernoulli records each.
const SITES: &str = "name = \"sites\"\nepsilon = [0.5, 2.0]\n[parameter]\n\
    grid = { kind = \"midpoint\", points = 10 }\nprior = { kind = \"uniform\" }\n[observation]\n\
    family = \"binomial\"\ntrials = 4\n[parties]\ncount = 3\n[loss]\nkind = \"squared\"\n";

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

fn run(args: &[&str]) -> Output {
    let o = ubapp().args(args).output().unwrap();
    assert!(o.status.success(), "ubapp {args:?}: {}", String::from_utf8_lossy(&o.stderr));
    o
}

/// Exit code 2 and one line on stderr; returns it.
fn refused(cmd: &mut Command) -> String {
    let o = cmd.output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(2), "stderr: {err}");
    assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
    err
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Run `command MODEL --shard i/n --out DIR ARGS` for every i, then `merge` them (in reverse
/// order: any order goes) with --json; returns the merge's output and directory.
fn shard_and_merge(tmp: &Path, tag: &str, command: &str, model: &Path, args: &[&str], n: u32) -> (Output, PathBuf) {
    let dirs: Vec<PathBuf> = (0..n).map(|i| tmp.join(format!("{tag}-n{n}-s{i}"))).collect();
    for (i, d) in dirs.iter().enumerate() {
        let spec = format!("{i}/{n}");
        let mut a = vec![command, s(model), "--shard", &spec, "--out", s(d)];
        a.extend_from_slice(args);
        run(&a);
        assert!(d.join("shard.json").is_file());
    }
    let merged = tmp.join(format!("{tag}-merged{n}"));
    let mut a = vec!["merge".to_string()];
    a.extend(dirs.iter().rev().map(|d| d.display().to_string()));
    a.extend(["--out".to_string(), merged.display().to_string(), "--json".to_string()]);
    let o = run(&a.iter().map(String::as_str).collect::<Vec<_>>());
    (o, merged)
}

/// The party comparison of `text` over `args`, unsharded and merged from 1, 3 and 7 shards: the
/// same `--json` bytes and the same files (risk.csv, notes.txt, plots, page) byte for byte.
fn party_sweep_merges_exactly(tag: &str, text: &str, args: &[&str], rows: usize) {
    let tmp = tempfile::tempdir().unwrap();
    let model = common::write_file(tmp.path(), &format!("{tag}.toml"), text);
    party_sweep_of_file_merges_exactly(tag, &model, tmp.path(), args, rows);
}

fn party_sweep_of_file_merges_exactly(tag: &str, model: &Path, tmp: &Path, args: &[&str], rows: usize) {
    let whole = tmp.join("whole");
    let mut a = vec!["compare", s(model), "--out", s(&whole), "--json"];
    a.extend_from_slice(args);
    let unsharded = run(&a);
    let json: serde_json::Value = serde_json::from_slice(&unsharded.stdout).unwrap();
    assert_eq!(json["rows"].as_array().unwrap().len(), rows, "{tag}: rows of the unsharded run");
    let expected = common::files_under(&whole);
    assert!(expected.iter().any(|(f, _)| f == "risk.csv") && expected.len() > 5, "{tag}: risk.csv and the plots");
    for n in [1, 3, 7] {
        let (o, merged) = shard_and_merge(tmp, tag, "compare", model, args, n);
        assert_eq!(
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&unsharded.stdout),
            "{tag}, {n} shards: the same --json"
        );
        assert_eq!(
            common::files_under(&merged),
            expected,
            "{tag}, {n} shards: every file as the unsharded run writes it"
        );
    }
}

#[test]
fn poisson_party_sweep_merged_from_1_3_and_7_shards_equals_the_unsharded_run() {
    // 2 ε × (1 curator + 3 M) cases; per (M, ε): ubapp-local, geometric-local, geometric-count,
    // geometric-shares.
    party_sweep_merges_exactly("poisson", POISSON, &["--parties", "1,2,3", "--eps", "0.5,2"], 2 + 2 * 3 * 4);
}

#[test]
fn multinomial_party_sweep_merged_from_1_3_and_7_shards_equals_the_unsharded_run() {
    // Per (M, ε): ubapp-local, geometric-local, geometric-count (no shares for a multinomial).
    party_sweep_merges_exactly("multinomial", MULTINOMIAL, &["--parties", "1,2,4", "--eps", "0.5,2"], 2 + 2 * 3 * 3);
}

#[test]
fn several_party_sweep_with_methods_merged_from_1_3_and_7_shards_equals_the_unsharded_run() {
    // A model with [parties]; --methods keeps some rows (and notes that lbapp is no party
    // method); dssa and cape draw Monte-Carlo noise with the seed.
    let args =
        ["--parties", "1,3,6", "--eps", "0.5,1,2", "--methods", "ubapp,ubapp-local,dssa,cape,lbapp", "--seed", "3"];
    party_sweep_merges_exactly("sites", SITES, &args, 3 + 3 * 3 * 3);
}

#[test]
fn table_party_sweep_merged_from_1_3_and_7_shards_equals_the_unsharded_run() {
    // A table family (likelihood and neighbours from CSV files, stored inline in the shards);
    // per (M, ε): ubapp-local, geometric-local; no one-curator row.
    let tmp = tempfile::tempdir().unwrap();
    let model = common::bundled("prevalence-imperfect-test");
    party_sweep_of_file_merges_exactly("table", &model, tmp.path(), &["--parties", "1,2", "--eps", "0.5,2"], 2 * 2 * 2);
}

fn solve_sweep_merges_exactly(tag: &str, text: &str, eps: &str) {
    let tmp = tempfile::tempdir().unwrap();
    let model = common::write_file(tmp.path(), &format!("{tag}.toml"), text);
    let unsharded = run(&["solve", s(&model), "--eps", eps, "--json"]);
    let rows: serde_json::Value = serde_json::from_slice(&unsharded.stdout).unwrap();
    assert_eq!(rows.as_array().unwrap().len(), eps.split(',').count());
    let want = common::without_timings(&unsharded.stdout);
    assert!(want.contains("\"bayes_risk\"") && want.contains("<time>"));
    for n in [1, 3, 7] {
        let (o, merged) = shard_and_merge(tmp.path(), tag, "solve", &model, &["--eps", eps], n);
        assert_eq!(common::without_timings(&o.stdout), want, "{tag}, {n} shards: the unsharded --json");
        let file = std::fs::read(merged.join("solve.json")).unwrap();
        assert_eq!(file, o.stdout, "{tag}, {n} shards: solve.json is the printed --json");
    }
}

#[test]
fn poisson_solve_sweep_merged_from_1_3_and_7_shards_equals_the_unsharded_json() {
    solve_sweep_merges_exactly("poisson", POISSON, "0.1,0.25,0.5,1,1.5,2,3");
}

#[test]
fn multinomial_solve_sweep_merged_from_1_3_and_7_shards_equals_the_unsharded_json() {
    solve_sweep_merges_exactly("multinomial", MULTINOMIAL, "0.25,0.5,1,2,4");
}

#[test]
fn mismatched_party_shards_are_refused_naming_the_file() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = |name: &str| tmp.path().join(name);
    let model = common::write_file(tmp.path(), "counts.toml", POISSON);
    let other = common::write_file(tmp.path(), "other.toml", &POISSON.replace("records = 6", "records = 12"));
    let grid = ["--parties", "1,2", "--eps", "0.5,2"];
    let shard = |m: &Path, spec: &str, out: &str, extra: &[&str]| {
        let mut a = vec!["compare", s(m), "--shard", spec, "--out"];
        let out = dir(out);
        a.push(s(&out));
        a.extend_from_slice(&grid);
        a.extend_from_slice(extra);
        run(&a);
    };
    shard(&model, "0/2", "a0", &[]);
    shard(&model, "1/2", "a1", &[]);
    shard(&other, "1/2", "other-model", &[]);
    shard(&model, "1/2", "other-eps", &["--eps", "0.5,1"]);
    shard(&model, "1/2", "other-methods", &["--methods", "ubapp,ubapp-local"]);
    shard(&model, "1/2", "other-seed", &["--seed", "9"]);
    shard(&model, "1/3", "other-count", &[]);
    run(&["solve", s(&model), "--shard", "1/2", "--out", s(&dir("solve-shard"))]);
    let out = dir("merged");
    let merge = |dirs: &[&str]| {
        let mut c = ubapp();
        c.arg("merge").args(dirs.iter().map(|d| dir(d))).arg("--out").arg(&out);
        c
    };
    let file = |d: &str| dir(d).join("shard.json").display().to_string();
    let e = refused(&mut merge(&["a0", "other-model"]));
    assert!(e.contains(&file("other-model")) && e.contains("its model differs"), "{e}");
    for d in ["other-eps", "other-methods", "other-seed"] {
        let e = refused(&mut merge(&["a0", d]));
        assert!(e.contains(&file(d)) && e.contains("its grid"), "{e}");
    }
    assert!(refused(&mut merge(&["a0", "other-count"])).contains("number of shards"));
    let e = refused(&mut merge(&["a0", "solve-shard"]));
    assert!(e.contains(&file("solve-shard")) && e.contains("kind of sweep"), "{e}");
    assert!(refused(&mut merge(&["a0", "a0"])).contains("both shard 0/2"));
    assert!(refused(&mut merge(&["a1"])).contains("shard(s) 0 of 2 are missing"));
    assert!(refused(&mut merge(&["a0", "nowhere"])).contains(&file("nowhere")));

    // Hand-edited files: a model changed without its fingerprint, a case moved to another ε,
    // a file that is not JSON.
    let text = std::fs::read_to_string(dir("a1").join("shard.json")).unwrap();
    let edited = |name: &str, body: &str| {
        std::fs::create_dir_all(dir(name)).unwrap();
        std::fs::write(dir(name).join("shard.json"), body).unwrap();
    };
    assert!(text.contains("\"records\":6"), "the model is stored in the shard");
    edited("forged-model", &text.replace("\"records\":6", "\"records\":7"));
    let e = refused(&mut merge(&["a0", "forged-model"]));
    assert!(e.contains(&file("forged-model")) && e.contains("model_fingerprint"), "{e}");
    let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let eps = v["cases"][0]["eps"].as_f64().unwrap();
    v["cases"][0]["eps"] = (if eps == 2.0 { 0.5 } else { 2.0 }).into();
    edited("moved-case", &v.to_string());
    let e = refused(&mut merge(&["a0", "moved-case"]));
    assert!(e.contains(&file("moved-case")) && e.contains("its cases are not those of shard 1/2"), "{e}");
    // A forged slice count: refused in one sentence, never an abort or a huge allocation.
    assert!(text.contains("\"shard\":{\"index\":1,\"count\":2}"));
    edited("count-zero", &text.replace("\"count\":2}", "\"count\":0}"));
    assert!(refused(&mut merge(&["count-zero"])).contains("its slice is 1/0"));
    edited("count-huge", &text.replace("\"count\":2}", "\"count\":4000000000}"));
    let e = refused(&mut merge(&["count-huge"]));
    assert!(e.contains(&file("count-huge")) && e.contains("its cases are not those"), "{e}");
    let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
    v["shard"]["count"] = 4_000_000_000u64.into();
    v["shard"]["index"] = 0.into();
    v["cases"] = serde_json::json!([]);
    edited("count-huge-empty", &v.to_string());
    assert!(refused(&mut merge(&["count-huge-empty"])).contains("… (3999999999 in all) of 4000000000 are missing"));
    edited("garbage", "{\"format\": ");
    assert!(refused(&mut merge(&["a0", "garbage"])).contains("is not JSON"));
    assert!(!out.exists(), "nothing written on refusal");
    let o = merge(&["a1", "a0"]).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

#[test]
fn mismatched_solve_shards_and_bad_solve_shard_requests_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = |name: &str| tmp.path().join(name);
    let model = common::write_file(tmp.path(), "counts.toml", POISSON);
    let shard = |spec: &str, out: &str, extra: &[&str]| {
        let out = dir(out);
        let mut a = vec!["solve", s(&model), "--shard", spec, "--out", s(&out), "--eps", "0.5,1,2"];
        a.extend_from_slice(extra);
        run(&a);
    };
    shard("0/2", "a0", &[]);
    shard("1/2", "a1", &[]);
    shard("1/2", "other-eps", &["--eps", "0.5,1"]);
    shard("1/2", "other-solver", &["--solver", "highs"]);
    let out = dir("merged");
    let merge = |dirs: &[&str]| {
        let mut c = ubapp();
        c.arg("merge").args(dirs.iter().map(|d| dir(d))).arg("--out").arg(&out);
        c
    };
    assert!(refused(&mut merge(&["a0", "other-eps"])).contains("its grid (--eps, --solver"));
    assert!(refused(&mut merge(&["a0", "other-solver"])).contains("its grid"));
    assert!(refused(&mut merge(&["a1", "a1"])).contains("both shard 1/2"));
    assert!(refused(&mut merge(&["a0"])).contains("shard(s) 1 of 2 are missing"));
    assert!(!out.exists(), "nothing written on refusal");

    // Bad requests, answered before any solve: no --out, a bad slice, --dry-run, a used directory.
    let m = s(&model);
    assert!(refused(ubapp().args(["solve", m, "--shard", "0/2"])).contains("--out"));
    assert!(refused(ubapp().args(["solve", m, "--shard", "2/2", "--out", s(&dir("x"))])).contains("0 ≤ I < N"));
    let o = ubapp().args(["solve", m, "--shard", "0/2", "--out", s(&dir("x")), "--dry-run"]).output().unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", String::from_utf8_lossy(&o.stderr));
    let used = dir("used");
    std::fs::create_dir_all(&used).unwrap();
    std::fs::write(used.join("mine.txt"), "a user's file").unwrap();
    assert!(refused(ubapp().args(["solve", m, "--shard", "0/2", "--out", s(&used)])).contains("not empty"));
    assert!(!dir("x").exists(), "nothing written on refusal");
    assert_eq!(std::fs::read_dir(&used).unwrap().count(), 1);
}

#[test]
fn every_eps_of_a_solve_sweep_is_in_exactly_one_slice_and_keeps_it_when_the_list_grows() {
    use ubapp::sweep::solve::shard_eps;
    use ubapp::sweep::Shard;
    let small = [0.1, 0.5, 1.0, 2.0];
    let big: Vec<f64> = (1..=200).map(|i| f64::from(i) * 0.05).collect();
    let mut total = 0;
    for index in 0..7 {
        let shard = Shard { index, count: 7 };
        let (before, after) = (shard_eps(&small, shard), shard_eps(&big, shard));
        assert!(before.iter().all(|e| after.contains(e)), "slice {index}: {before:?} not kept");
        // 200 ε over 7 slices, about 29 each; binomial(200, 1/7) lies in [10, 50] with
        // probability > 1 − 1e-5 per slice.
        assert!((10..=50).contains(&after.len()), "slice {index}: {}", after.len());
        total += after.len();
    }
    assert_eq!(total, big.len());
}
