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
    // A Poisson with tens of thousands of records: the default time budget (or, on a small
    // machine, the memory guard) answers before the work; `--max-seconds` would run it, capped.
    write_file(
        d,
        "poisson.toml",
        &model("family = \"poisson\"\nrecords = 20000\ncap = 3", &format!("lower = 0.0\nupper = 10.0\n{grid}"), ""),
    );
    refused(d, &["solve", "poisson.toml"], &["observation.records"]);
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
    refused(d, &["solve", "model.toml", "--eps", "1", "--out", "missing/mech.json"], &["--out", "does not exist"]);
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
