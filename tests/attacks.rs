//! Hostile inputs through the binary: each known way to abort, hang, leak or spoof answers with
//! exit code 2 (or 0 where the input is valid) within a second, never 101 (panic) or 134 (abort),
//! and leaves no file behind.

mod common;

use std::path::Path;
use std::time::{Duration, Instant};

use common::{stderr, stdout, ubapp_in, write_file};

/// Wall-clock allowance for an answer that must come "before any work" (1 s is the target; the
/// margin absorbs a loaded CI machine).
const PROMPT: Duration = Duration::from_secs(2);

fn model(observation: &str, parameter: &str, output: &str) -> String {
    format!(
        "name = \"x\"\nepsilon = [1.0]\n[parameter]\n{parameter}\nprior = {{ kind = \"uniform\" }}\n[observation]\n{observation}\n{output}[loss]\nkind = \"squared\"\n"
    )
}

/// Run in `dir`, expecting exit 2 promptly with one line containing `words` and no file created.
#[track_caller]
fn refused(dir: &Path, args: &[&str], words: &[&str]) {
    let before: Vec<_> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name()).collect();
    let start = Instant::now();
    let o = ubapp_in(dir, args);
    let took = start.elapsed();
    common::assert_input_error(&o, words);
    assert!(took < PROMPT, "{args:?} took {took:?}");
    let after: Vec<_> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(before.len(), after.len(), "{args:?} left a file: {after:?}");
}

#[test]
fn huge_sizes_are_refused_before_any_allocation() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let grid = "grid = { kind = \"midpoint\", points = 50 }";
    let cases = [
        (
            "points.toml",
            model("family = \"binomial\"\ntrials = 10", "grid = { kind = \"midpoint\", points = 4294967295 }", ""),
            "parameter.grid.points",
        ),
        (
            "output.toml",
            model(
                "family = \"binomial\"\ntrials = 10",
                grid,
                "[output]\ngrid = { kind = \"midpoint\", points = 4000000000 }\n",
            ),
            "output.grid.points",
        ),
        (
            "multi.toml",
            model(
                "family = \"multinomial\"\ncategories = 3000\nrecords = 2",
                "grid = { kind = \"simplex\", resolution = 2 }",
                "",
            ),
            "observation.categories",
        ),
    ];
    for (name, text, field) in &cases {
        write_file(d, name, text);
        refused(d, &["solve", name], &[name, field]);
        refused(d, &["solve", name, "--dry-run"], &[name]);
    }
    // A Poisson with hundreds of thousands of records: neither the exact route (its dense Schur
    // complement alone terabytes) nor the anytime route (its likelihood alone far beyond the
    // time budget) fits, and the memory guard answers before the work.
    write_file(
        d,
        "poisson.toml",
        &model("family = \"poisson\"\nrecords = 200000\ncap = 3", &format!("lower = 0.0\nupper = 10.0\n{grid}"), ""),
    );
    refused(d, &["solve", "poisson.toml"], &["poisson.toml", "observation.records"]);
    // A huge upper bound: a sentence about the input, not a solver failure.
    write_file(
        d,
        "wide.toml",
        &model("family = \"poisson\"\nrecords = 10\ncap = 2", &format!("lower = 0.0\nupper = 1e300\n{grid}"), ""),
    );
    refused(d, &["solve", "wide.toml"], &["parameter.upper", "not finite"]);
}

#[test]
fn artifacts_claiming_huge_models_are_refused_promptly() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write_file(d, "model.toml", &common::binomial_toml(8, 12, "squared", &[1.0]));
    assert!(ubapp_in(d, &["solve", "model.toml", "--eps", "1", "--out", "mech.json"]).status.success());
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(d.join("mech.json")).unwrap()).unwrap();
    for (name, edit) in [
        ("trials.json", ("observation", "trials", serde_json::json!(4_000_000_000u64))),
        ("grid.json", ("parameter", "grid", serde_json::json!({"kind": "midpoint", "points": 4294967295u64}))),
        ("mid.json", ("observation", "trials", serde_json::json!(100_000_000u64))),
    ] {
        let mut w = v.clone();
        w["model"][edit.0][edit.1] = edit.2;
        write_file(d, name, &w.to_string());
        for cmd in ["verify", "audit"] {
            refused(d, &[cmd, name], &[name]);
        }
        refused(d, &["sample", name, "--y", "1"], &[name]);
    }
}

#[test]
fn files_are_read_bounded_and_never_echoed() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let table = |path: &str| {
        model(
            &format!("family = \"table\"\nlikelihood = \"{path}\"\nneighbours = [[0, 1]]"),
            "grid = { kind = \"midpoint\", points = 2 }",
            "",
        )
    };
    write_file(d, "secret.csv", "password=hunter2\n");
    for (name, path) in
        [("passwd.toml", "/etc/passwd"), ("env.toml", "/proc/self/environ"), ("secret.toml", "secret.csv")]
    {
        write_file(d, name, &table(path));
        let o = ubapp_in(d, &["solve", name]);
        common::assert_input_error(&o, &[name, "is not a finite number"]);
        let err = stderr(&o);
        assert!(!err.contains("root:") && !err.contains("hunter2") && !err.contains("PATH="), "content leaked: {err}");
    }
    write_file(d, "zero.toml", &table("/dev/zero"));
    refused(d, &["solve", "zero.toml"], &["/dev/zero", "not a regular file"]);
    #[cfg(unix)]
    {
        let fifo = d.join("fifo.csv");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        write_file(d, "fifo.toml", &table("fifo.csv"));
        refused(d, &["solve", "fifo.toml"], &["fifo.csv", "not a regular file"]);
        refused(d, &["verify", "fifo.csv"], &["fifo.csv", "not a regular file"]);
    }
    // An artifact naming a CSV file is refused: artifacts are read from themselves alone.
    write_file(d, "model.toml", &common::binomial_toml(8, 12, "squared", &[1.0]));
    assert!(ubapp_in(d, &["solve", "model.toml", "--eps", "1", "--out", "mech.json"]).status.success());
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("mech.json")).unwrap()).unwrap();
    v["model"]["parameter"]["prior"] = serde_json::json!({"kind": "weights", "file": "secret.csv"});
    write_file(d, "csv-art.json", &v.to_string());
    refused(d, &["verify", "csv-art.json"], &["parameter.prior.file", "inline"]);
}

#[test]
fn escape_sequences_in_a_model_name_are_never_printed_raw() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let name = "\\u001b[2J\\u001b[1;1Hmech.json: OK, certified \\u0007";
    write_file(d, "model.toml", &common::binomial(8, 12, "squared", &[1.0]).name(name).toml());
    let o = ubapp_in(d, &["solve", "model.toml", "--eps", "1", "--out", "mech.json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!stdout(&o).contains('\u{1b}'), "solve printed a raw escape");
    for args in [vec!["verify", "mech.json"], vec!["sample", "mech.json", "--y", "99"], vec!["models", "."]] {
        let o = ubapp_in(d, &args);
        let all = format!("{}{}", stdout(&o), stderr(&o));
        assert!(!all.contains('\u{1b}') && !all.contains('\u{7}'), "{args:?} printed a raw control character: {all:?}");
        assert_ne!(o.status.code(), Some(101));
    }
    assert!(stdout(&ubapp_in(d, &["verify", "mech.json"])).contains("\\u{1b}[2J"));
}

#[test]
fn out_is_never_an_input_nor_a_missing_or_read_only_directory() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let text = common::binomial_toml(8, 12, "squared", &[1.0]);
    write_file(d, "model.toml", &text);
    refused(d, &["solve", "model.toml", "--eps", "1", "--out", "model.toml"], &["--out", "is an input"]);
    assert_eq!(std::fs::read_to_string(d.join("model.toml")).unwrap(), text, "the model was replaced");
    // A missing parent directory is created, by `solve` as by every command (tests/attacks_readers.rs).
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let ro = d.join("ro");
        std::fs::create_dir(&ro).unwrap();
        std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o555)).unwrap();
        // Root ignores directory permissions; the check is meaningful only for other users.
        if std::fs::write(ro.join("probe"), "").is_err() {
            refused(
                d,
                &["solve", "model.toml", "--eps", "1", "--out", "ro/mech.json"],
                &["--out", "cannot create a file"],
            );
        }
    }
    // A symbolic link planted where a temporary file might go is never followed: the writer's
    // temporary names are unpredictable and created exclusively; the target itself is replaced
    // by rename, so a link at the target is replaced, not written through.
    #[cfg(unix)]
    {
        write_file(d, "victim.txt", "keep");
        std::os::unix::fs::symlink(d.join("victim.txt"), d.join("mech.json")).unwrap();
        assert!(ubapp_in(d, &["solve", "model.toml", "--eps", "1", "--out", "mech.json"]).status.success());
        assert_eq!(std::fs::read_to_string(d.join("victim.txt")).unwrap(), "keep");
    }
}

#[test]
fn a_full_disk_ends_quietly_with_exit_1() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write_file(d, "model.toml", &common::binomial_toml(8, 12, "squared", &[1.0]));
    assert!(ubapp_in(d, &["solve", "model.toml", "--eps", "1", "--out", "mech.json"]).status.success());
    let Ok(full) = std::fs::OpenOptions::new().write(true).open("/dev/full") else { return };
    for args in [vec!["verify", "mech.json"], vec!["audit", "mech.json", "--samples", "1000", "--json"]] {
        let o = common::ubapp_command(&args).current_dir(d).stdout(full.try_clone().unwrap()).output().unwrap();
        assert_eq!(o.status.code(), Some(1), "{args:?}: {}", stderr(&o));
        assert!(!stderr(&o).contains("panicked"), "{}", stderr(&o));
    }
}

#[test]
fn huge_eps_writes_an_artifact_that_verifies() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write_file(d, "model.toml", &common::binomial_toml(20, 10, "squared", &[0.5, 1000.0]));
    refused(d, &["solve", "model.toml", "--out", "x.json"], &["--out", "exactly one ε"]);
    let o = ubapp_in(d, &["solve", "model.toml", "--eps", "1000", "--out", "x.json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = ubapp_in(d, &["verify", "x.json", "--model", "model.toml"]);
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn strict_json_and_toml_key_paths() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write_file(d, "model.toml", &common::binomial_toml(8, 12, "squared", &[1.0]));
    assert!(ubapp_in(d, &["solve", "model.toml", "--eps", "1", "--out", "mech.json"]).status.success());
    let text = std::fs::read_to_string(d.join("mech.json")).unwrap();
    write_file(d, "dup.json", &text.replacen("\"eps\":", "\"eps\": 5, \"eps\":", 1));
    refused(d, &["verify", "dup.json"], &["duplicate key \"eps\""]);
    write_file(
        d,
        "float.toml",
        &common::binomial_toml(8, 12, "squared", &[1.0]).replace("trials = 8", "trials = 20.5"),
    );
    refused(d, &["solve", "float.toml"], &["observation.trials: invalid type"]);
    write_file(
        d,
        "dup.toml",
        &common::binomial_toml(8, 12, "squared", &[1.0]).replace("trials = 8", "trials = 8\ntrials = 9"),
    );
    refused(d, &["solve", "dup.toml"], &["duplicate key \"trials\""]);
}

/// A genuine artifact of `model.toml` at ε = 1 (`mech.json`), one of the same model at ε = 36
/// (`wide.json`: the honest model, so the honest fingerprint), and that fingerprint.
fn honest_and_wide(d: &Path) -> String {
    write_file(d, "model.toml", &common::binomial_toml(8, 12, "squared", &[1.0]));
    for (eps, out) in [("1", "mech.json"), ("36", "wide.json")] {
        let o = ubapp_in(d, &["solve", "model.toml", "--eps", eps, "--out", out]);
        assert!(o.status.success(), "{}", stderr(&o));
    }
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(d.join("mech.json")).unwrap()).unwrap();
    v["model_fingerprint"].as_str().unwrap().to_string()
}

#[test]
fn releases_say_what_they_trust_and_the_deployment_mode_refuses_unchecked_files() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let fp = honest_and_wide(d);
    // Without --model or --fingerprint: released, with the same warning `verify` gives.
    for args in
        [vec!["sample", "mech.json", "--y", "4", "--seed", "1"], vec!["posterior", "mech.json", "--release", "0.375"]]
    {
        let o = ubapp_in(d, &args);
        assert!(o.status.success(), "{args:?}: {}", stderr(&o));
        assert!(
            stderr(&o).contains("warning: mech.json was checked against the model embedded in it only"),
            "{args:?}: {}",
            stderr(&o)
        );
        // With a trusted model: no warning.
        let mut trusted = args.clone();
        trusted.extend(["--model", "model.toml"]);
        let o = ubapp_in(d, &trusted);
        assert!(o.status.success() && !stderr(&o).contains("warning"), "{trusted:?}: {}", stderr(&o));
        // The deployment mode refuses the unchecked release before reading the file.
        let o = common::run_ubapp(&args, &[("UBAPP_REQUIRE_MODEL", "1")], Some(d));
        common::assert_input_error(&o, &["UBAPP_REQUIRE_MODEL", "--model"]);
        assert!(stdout(&o).is_empty(), "{args:?} released under the deployment mode: {}", stdout(&o));
        let o = common::run_ubapp(&trusted, &[("UBAPP_REQUIRE_MODEL", "1")], Some(d));
        assert!(o.status.success(), "{trusted:?}: {}", stderr(&o));
    }
    // The fingerprint leaves ε out: the ε = 36 file carries the honest fingerprint, so a pin needs
    // the deployer's ε bound, and the bound refuses the wide file.
    refused(d, &["sample", "wide.json", "--y", "4", "--fingerprint", &fp], &["--max-eps"]);
    refused(
        d,
        &["sample", "wide.json", "--y", "4", "--fingerprint", &fp, "--max-eps", "1"],
        &["wide.json", "for ε = 36", "--max-eps 1"],
    );
    refused(
        d,
        &["posterior", "wide.json", "--release", "0.375", "--fingerprint", &fp, "--max-eps", "1"],
        &["wide.json", "--max-eps 1"],
    );
    refused(d, &["verify", "wide.json", "--fingerprint", &fp, "--max-eps", "1"], &["wide.json", "--max-eps 1"]);
    for bad in ["0", "-1", "nan", "inf"] {
        refused(d, &["sample", "mech.json", "--y", "4", "--fingerprint", &fp, "--max-eps", bad], &["--max-eps"]);
    }
    let o = common::run_ubapp(
        &["sample", "mech.json", "--y", "4", "--fingerprint", &fp, "--max-eps", "1"],
        &[("UBAPP_REQUIRE_MODEL", "1")],
        Some(d),
    );
    assert!(o.status.success() && !stderr(&o).contains("warning"), "{}", stderr(&o));
    let o = ubapp_in(d, &["verify", "mech.json", "--fingerprint", &fp, "--max-eps", "1"]);
    assert!(stdout(&o).contains("checked against the pinned fingerprint and ε ≤ 1"), "{}", stdout(&o));
}

#[test]
fn tiny_eps_gives_a_verifiable_artifact_not_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write_file(d, "model.toml", &common::binomial_toml(8, 12, "squared", &[1.0]));
    for eps in ["1e-16", "1e-300", "5e-324"] {
        let o = ubapp_in(d, &["solve", "model.toml", "--eps", eps, "--out", "tiny.json"]);
        assert!(o.status.success(), "ε = {eps}: exit {:?}: {}", o.status, stderr(&o));
        let o = ubapp_in(d, &["verify", "tiny.json", "--model", "model.toml", "--json"]);
        assert!(o.status.success(), "ε = {eps}: {}", stderr(&o));
        let v = common::stdout_json(&o);
        assert!(v["certified_eps"].as_f64().unwrap() <= eps.parse::<f64>().unwrap(), "{v}");
        // At e^ε = 1 in floating point the release cannot depend on y: every column is the same.
        let art: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(d.join("tiny.json")).unwrap()).unwrap();
        let columns = art["columns"].as_array().unwrap();
        assert!(columns.iter().all(|c| c == &columns[0]), "ε = {eps}: the columns differ");
    }
}

#[test]
fn sample_streams_any_count_in_constant_memory() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    honest_and_wide(d);
    let all = "18446744073709551615";
    // Every count is a number of releases or a clear refusal.
    for bad in ["0", "-1", "1.5", "1e30", "nan", "x", ""] {
        refused(d, &["sample", "mech.json", "--y", "4", "--n", bad, "--allow-composition"], &["--n"]);
    }
    for (n, lines) in [("1e3", 1000), ("3", 3)] {
        let o =
            ubapp_in(d, &["sample", "mech.json", "--y", "4", "--n", n, "--allow-composition", "--model", "model.toml"]);
        assert!(o.status.success(), "{}", stderr(&o));
        assert_eq!(stdout(&o).lines().count(), lines);
    }
    let o = ubapp_in(d, &["sample", "mech.json", "--y", "4", "--n", "5", "--budget", "5", "--json", "--seed", "3"]);
    assert_eq!(common::stdout_json(&o).as_array().map(Vec::len), Some(5), "{}", stdout(&o));
    // 2^64 − 1 and 2^32 releases: the first lines come at once, memory stays small, and a closed
    // pipe ends the process quietly.
    for n in [all, "4294967296", "1e10"] {
        for json in [false, true] {
            let mut args = vec!["sample", "mech.json", "--y", "4", "--n", n, "--allow-composition", "--seed", "1"];
            if json {
                args.push("--json");
            }
            let mut child = common::ubapp_command(&args)
                .current_dir(d)
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::null())
                .spawn()
                .unwrap();
            let mut out = child.stdout.take().unwrap();
            let mut buf = vec![0u8; 1 << 20];
            let mut read = 0usize;
            use std::io::Read;
            while read < 8 << 20 {
                let k = out.read(&mut buf).unwrap();
                assert!(k > 0, "{args:?} ended early: {:?}", child.wait());
                read += k;
            }
            // 8 MB of releases (over a million values) read: the process still holds little memory.
            let status = std::fs::read_to_string(format!("/proc/{}/status", child.id())).unwrap_or_default();
            let hwm_kb: u64 = status
                .lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
                .unwrap_or(0);
            assert!(hwm_kb < 64 << 10, "{args:?}: peak memory {hwm_kb} kB after 8 MB of releases");
            drop(out);
            let status = child.wait().unwrap();
            assert_ne!(status.code(), Some(101), "{args:?}: {status:?}");
            assert_ne!(status.code(), Some(134), "{args:?}: {status:?}");
            #[cfg(unix)]
            {
                use std::os::unix::process::ExitStatusExt;
                assert_eq!(status.signal(), Some(libc::SIGPIPE), "{args:?}: {status:?}");
            }
        }
    }
}

#[test]
fn directories_of_the_user_are_never_overwritten() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    common::small_binomial_file(d);
    let mine = d.join("mine");
    std::fs::create_dir(&mine).unwrap();
    write_file(&mine, "risk.csv", "my own numbers\n");
    write_file(&mine, "index.html", "<p>my page</p>\n");
    let cmp = ["compare", "small.toml", "--methods", "ubapp,geometric", "--eps", "1"];
    for out in ["mine", "small.toml"] {
        let mut args = cmp.to_vec();
        args.extend(["--out", out]);
        refused(d, &args, &["--out", out]);
        // The party comparison writes a directory too.
        let mut party = args.clone();
        party.extend(["--parties", "2"]);
        refused(d, &party, &["--out", out]);
        refused(d, &["compare", "small.toml", "--eps", "1", "--shard", "0/2", "--out", out], &["--out", out]);
    }
    assert_eq!(std::fs::read_to_string(mine.join("risk.csv")).unwrap(), "my own numbers\n");
    assert_eq!(std::fs::read_to_string(mine.join("index.html")).unwrap(), "<p>my page</p>\n");
    // An earlier output of ubapp is replaced whole; a new directory is created.
    let mut args = cmp.to_vec();
    args.extend(["--out", "fresh"]);
    assert!(ubapp_in(d, &args).status.success());
    // … but not when a file it did not write was added to it: that file is never deleted.
    write_file(&d.join("fresh"), "stale.txt", "from before");
    refused(d, &args, &["--out", "stale.txt"]);
    assert_eq!(std::fs::read_to_string(d.join("fresh/stale.txt")).unwrap(), "from before");
    std::fs::remove_file(d.join("fresh/stale.txt")).unwrap();
    let o = ubapp_in(d, &args);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(d.join("fresh/risk.csv").is_file());
    // merge: the same rule, and never onto a shard it reads.
    for i in 0..2 {
        let shard = format!("{i}/2");
        let out = format!("shard{i}");
        let o = ubapp_in(
            d,
            &["compare", "small.toml", "--methods", "ubapp", "--eps", "0.1,1", "--shard", &shard, "--out", &out],
        );
        assert!(o.status.success(), "{}", stderr(&o));
    }
    refused(d, &["merge", "shard0", "shard1", "--out", "mine"], &["--out", "mine"]);
    refused(d, &["merge", "shard0", "shard1", "--out", "shard1"], &["--out", "shard1"]);
    let o = ubapp_in(d, &["merge", "shard0", "shard1", "--out", "merged"]);
    assert!(o.status.success() && d.join("merged/risk.csv").is_file(), "{}", stderr(&o));
}

/// Names in `dir` that a run could have left behind: anything hidden.
fn hidden_files(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.'))
        .collect()
}

#[cfg(unix)]
#[test]
fn an_interrupted_solve_out_leaves_nothing_behind() {
    use rand::{RngExt, SeedableRng};
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // Large enough that writing the artifact (~2 MB) takes a few milliseconds of the run.
    write_file(d, "model.toml", &common::binomial_toml(600, 200, "squared", &[1.0]));
    let start = Instant::now();
    let o = ubapp_in(d, &["solve", "model.toml", "--eps", "1", "--out", "mech.json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let whole = start.elapsed().as_micros() as u64;
    std::fs::remove_file(d.join("mech.json")).unwrap();
    let mut rng = rand::rngs::StdRng::seed_from_u64(27);
    let (mut interrupted, mut while_writing) = (0, 0);
    for round in 0..60 {
        let sig = if round % 2 == 0 { libc::SIGINT } else { libc::SIGTERM };
        let mut child = common::ubapp_command(&["solve", "model.toml", "--eps", "1", "--out", "mech.json"])
            .current_dir(d)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        if round % 2 == 0 {
            // Anywhere in the run.
            std::thread::sleep(Duration::from_micros(rng.random_range(0..whole)));
        } else {
            // While a temporary exists (the probe of --out, then the artifact being written):
            // before the handler existed, nearly every such interrupt left one behind.
            while child.try_wait().unwrap().is_none() && hidden_files(d).is_empty() {}
            if child.try_wait().unwrap().is_none() {
                while_writing += 1;
                std::thread::sleep(Duration::from_micros(rng.random_range(0..2000)));
            }
        }
        // SAFETY: signalling our own child by its id (a no-op if it has ended).
        unsafe { libc::kill(child.id() as libc::pid_t, sig) };
        let status = child.wait().unwrap();
        let left = hidden_files(d);
        assert!(left.is_empty(), "round {round} ({status:?}) left {left:?}");
        if !status.success() {
            interrupted += 1;
        }
        // A file that is there is whole: it verifies.
        if d.join("mech.json").exists() {
            let o = ubapp_in(d, &["verify", "mech.json", "--model", "model.toml"]);
            assert!(o.status.success(), "round {round}: a partial artifact: {}", stderr(&o));
            std::fs::remove_file(d.join("mech.json")).unwrap();
        }
    }
    assert!(
        interrupted > 10 && while_writing > 10,
        "{interrupted} of 60 runs interrupted, {while_writing} while writing"
    );
}

#[test]
fn a_default_memory_budget_refuses_huge_artifacts_and_models_before_allocating() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write_file(d, "model.toml", &common::binomial_toml(8, 12, "squared", &[1.0]));
    assert!(ubapp_in(d, &["solve", "model.toml", "--eps", "1", "--out", "mech.json"]).status.success());
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(d.join("mech.json")).unwrap()).unwrap();
    // A 1.4 KB file claiming a 400-million-point grid (about 12 GiB to build) on a machine that may
    // well have 12 GiB free: the default budget (4 GiB) refuses it within a second.
    let mut w = v.clone();
    w["model"]["parameter"]["grid"] = serde_json::json!({"kind": "midpoint", "points": 400_000_000u64});
    write_file(d, "grid.json", &w.to_string());
    for cmd in ["verify", "audit"] {
        refused(d, &[cmd, "grid.json"], &["grid.json", "parameter.grid.points", "UBAPP_MEMORY_LIMIT"]);
    }
    refused(d, &["sample", "grid.json", "--y", "1"], &["grid.json", "UBAPP_MEMORY_LIMIT"]);
    write_file(d, "big.toml", &common::binomial_toml(8, 400_000_000, "squared", &[1.0]));
    refused(d, &["solve", "big.toml", "--dry-run"], &["big.toml", "parameter.grid.points"]);
    // An (ε, δ) binomial with 3 000 000 trials needs about 600 GiB (its interior point's factor):
    // refused up front by the default budget (a share of the memory available), not started.
    write_file(d, "delta.toml", &common::binomial(3_000_000, 30, "squared", &[0.5]).top("delta = 0.001").toml());
    refused(d, &["solve", "delta.toml"], &["delta.toml", "GiB", "UBAPP_MEMORY_LIMIT", "observation.trials"]);
    // UBAPP_MEMORY_LIMIT sets the budget: a small one refuses even the honest file, naming it.
    let o = common::run_ubapp(&["verify", "mech.json"], &[("UBAPP_MEMORY_LIMIT", "1000")], Some(d));
    common::assert_input_error(&o, &["mech.json", "UBAPP_MEMORY_LIMIT"]);
}

#[test]
fn model_messages_name_the_file_the_field_and_the_problem() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let base = common::binomial_toml(8, 12, "squared", &[1.0]);
    write_file(d, "empty.toml", &base.replace("trials = 8", "trials = "));
    refused(d, &["solve", "empty.toml"], &["empty.toml", "observation.trials", "no value"]);
    write_file(d, "negative.toml", &base.replace("trials = 8", "trials = -5"));
    refused(d, &["solve", "negative.toml"], &["negative.toml", "observation.trials", "-5", "whole number"]);
    // A Poisson whose squared costs overflow: the file, the fields, the problem.
    write_file(
        d,
        "overflow.toml",
        &model(
            "family = \"poisson\"\nrecords = 2\ncap = 2",
            "lower = 0.0\nupper = 1e200\ngrid = { kind = \"midpoint\", points = 4 }",
            "",
        ),
    );
    refused(d, &["solve", "overflow.toml"], &["overflow.toml", "parameter", "not finite"]);
}
