//! Hostile files and targets through the binary, third round: the memory budget binds every reader
//! of a mechanism or shard file (peak resident memory of the child process measured), `merge`
//! reads shards as every other reader does, `--out` never replaces what ubapp did not write, bad
//! targets and bad output grids are refused before the work, and every user string on a page is
//! escaped. Each case runs in seconds and bounded memory.

#![cfg(target_os = "linux")]

mod common;

use std::path::Path;
use std::time::{Duration, Instant};

use common::{stderr, ubapp_in, write_file};
use serde_json::Value;

/// Wall-clock allowance for an answer that must come before any work.
const PROMPT: Duration = Duration::from_secs(3);

/// Set in a copy of this test binary that only measures one run of ubapp (see [`measure_one`]).
const MEASURE_ENV: &str = "UBAPP_TEST_MEASURE";

/// Exit code, stderr and peak resident memory (bytes) of `ubapp ARGS` in `dir` with `env` added.
///
/// The peak is wait4's rusage of the child, whose maximum resident set starts at that of the
/// process it was spawned from (spawning shares its memory until exec). This test process holds
/// whatever the other tests built, so the run is spawned from a fresh copy of this test binary,
/// which holds a few megabytes, by [`measure_one`].
fn run_measured(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> (Option<i32>, String, u64) {
    let report = dir.join(".measured");
    let mut cmd = std::process::Command::new(std::env::current_exe().unwrap());
    cmd.args(["--exact", "measure_one", "--nocapture", "--test-threads", "1"])
        .env(MEASURE_ENV, args.join("\u{1f}"))
        .env("UBAPP_TEST_MEASURE_DIR", dir)
        .env("UBAPP_TEST_MEASURE_REPORT", &report)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    for (k, v) in env {
        cmd.env(k, v);
    }
    assert!(cmd.status().unwrap().success(), "the measuring copy failed");
    let text = std::fs::read_to_string(&report).unwrap();
    std::fs::remove_file(&report).unwrap();
    let (head, err) = text.split_once('\n').unwrap();
    let (code, peak) = head.split_once(' ').unwrap();
    (code.parse().ok(), err.to_string(), peak.parse().unwrap())
}

/// In the measuring copy (with [`MEASURE_ENV`] set): run ubapp once and write its exit code, peak
/// resident memory and stderr to the report file. Elsewhere: nothing.
// The child is reaped by wait4 (which also reports its peak), not by `Child::wait`.
#[allow(clippy::zombie_processes)]
#[test]
fn measure_one() {
    let Ok(args) = std::env::var(MEASURE_ENV) else { return };
    let args: Vec<&str> = args.split('\u{1f}').collect();
    let dir = std::env::var("UBAPP_TEST_MEASURE_DIR").unwrap();
    let mut child = common::ubapp_command(&args)
        .current_dir(dir)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = String::new();
    use std::io::Read;
    child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
    let mut status = 0;
    // SAFETY: a zeroed rusage is valid for wait4 to fill; we wait for our own child by its id.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let pid = unsafe { libc::wait4(child.id() as libc::pid_t, &mut status, 0, &mut usage) };
    assert_eq!(pid, child.id() as libc::pid_t, "wait4 failed");
    let code = if libc::WIFEXITED(status) { libc::WEXITSTATUS(status) } else { -1 };
    let peak = usage.ru_maxrss as u64 * 1024;
    std::fs::write(std::env::var("UBAPP_TEST_MEASURE_REPORT").unwrap(), format!("{code} {peak}\n{err}")).unwrap();
}

/// Exit 2 with one line naming every one of `words`, within [`PROMPT`].
#[track_caller]
fn refused(dir: &Path, args: &[&str], words: &[&str]) {
    let start = Instant::now();
    let o = ubapp_in(dir, args);
    common::assert_input_error(&o, words);
    assert!(start.elapsed() < PROMPT, "{args:?} took {:?}", start.elapsed());
}

/// `model.toml` (binomial, 8 trials, 12 points) and its artifact at ε = 1, `mech.json`, parsed.
fn solved(d: &Path) -> Value {
    write_file(d, "model.toml", &common::binomial_toml(8, 12, "squared", &[1.0]));
    let o = ubapp_in(d, &["solve", "model.toml", "--eps", "1", "--out", "mech.json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    serde_json::from_str(&std::fs::read_to_string(d.join("mech.json")).unwrap()).unwrap()
}

/// Every reader of a mechanism file, on `file`.
fn readers(file: &str) -> Vec<Vec<&str>> {
    vec![
        vec!["verify", file],
        vec!["sample", file, "--y", "1"],
        vec!["posterior", file, "--release", "0.375"],
        vec!["audit", file, "--samples", "1000"],
    ]
}

#[test]
fn the_memory_budget_binds_every_reader_of_a_mechanism_file() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let v = solved(d);
    // A forged provenance: the repair candidates repeated to 20 MB. Refused by the reader's
    // schema before any of it is built: memory stays near the text's own size.
    let mut w = v.clone();
    let one = w["provenance"]["repair_candidates"][0].clone();
    w["provenance"]["repair_candidates"] = Value::Array(vec![one; 400_000]);
    write_file(d, "candidates.json", &w.to_string());
    // Nested outputs, 10 MB of small arrays: priced above a 64 MB budget before it is built.
    let mut w = v.clone();
    w["outputs"] = serde_json::json!(vec![vec![vec![0.5; 10]; 10]; 20_000]);
    write_file(d, "nested.json", &w.to_string());
    let budget: u64 = 64 << 20;
    let limit = budget.to_string();
    let env = [("UBAPP_MEMORY_LIMIT", limit.as_str())];
    for (file, words) in [
        ("candidates.json", &["candidates.json", "provenance.repair_candidates"][..]),
        ("nested.json", &["nested.json", "UBAPP_MEMORY_LIMIT", "outputs"][..]),
    ] {
        for args in readers(file) {
            let start = Instant::now();
            let (code, err, peak) = run_measured(d, &args, &env);
            assert_eq!(code, Some(2), "{args:?}: {err}");
            assert!(words.iter().all(|w| err.contains(w)) && err.trim().lines().count() == 1, "{args:?}: {err}");
            assert!(peak < budget, "{args:?}: peak {peak} bytes, over the {budget}-byte budget");
            assert!(start.elapsed() < PROMPT, "{args:?} took {:?}", start.elapsed());
            eprintln!("{args:?}: exit 2, peak {:.1} MB", peak as f64 / 1e6);
        }
    }
    // The honest file still reads under the same budget.
    for args in readers("mech.json") {
        let (code, err, peak) = run_measured(d, &args, &env);
        assert_eq!(code, Some(0), "{args:?}: {err}");
        assert!(peak < budget, "{args:?}: peak {peak} bytes");
    }
    // Unknown fields are refused, at the top and in the provenance, naming them.
    let mut w = v.clone();
    w["extra"] = Value::from(1);
    write_file(d, "extra.json", &w.to_string());
    let mut w = v.clone();
    w["provenance"]["note"] = Value::from("x");
    write_file(d, "pextra.json", &w.to_string());
    let mut w = v.clone();
    w["provenance"]["repair"]["note"] = Value::from("x");
    write_file(d, "rextra.json", &w.to_string());
    for (file, field) in [("extra.json", "extra"), ("pextra.json", "provenance.note"), ("rextra.json", "note")] {
        for args in readers(file) {
            refused(d, &args, &[file, field]);
        }
    }
}

#[test]
fn a_wrong_type_names_the_full_key_and_the_versions_come_from_the_reader() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let v = solved(d);
    let mut w = v.clone();
    w["model"]["observation"]["trials"] = Value::from("100");
    write_file(d, "trials.json", &w.to_string());
    refused(d, &["verify", "trials.json"], &["trials.json", "model.observation.trials"]);
    let mut w = v.clone();
    w["format_version"] = Value::from(9);
    write_file(d, "nine.json", &w.to_string());
    refused(d, &["verify", "nine.json"], &["format_version is 9", "reads versions 1 to 4"]);
}

/// Two shards of a small comparison, `s0` (both cases) and `s1` (none), and s0's file parsed.
fn shards(d: &Path) -> Value {
    common::small_binomial_file(d);
    for i in 0..2 {
        let (shard, out) = (format!("{i}/2"), format!("s{i}"));
        let args = [
            "compare",
            "small.toml",
            "--methods",
            "ubapp,geometric",
            "--eps",
            "0.1,1",
            "--shard",
            &shard,
            "--out",
            &out,
        ];
        let o = ubapp_in(d, &args);
        assert!(o.status.success(), "{}", stderr(&o));
    }
    let text = std::fs::read_to_string(d.join("s0/shard.json")).unwrap();
    let v: Value = serde_json::from_str(&text).unwrap();
    if v["cases"].as_array().unwrap().is_empty() {
        std::fs::rename(d.join("s0"), d.join("tmp")).unwrap();
        std::fs::rename(d.join("s1"), d.join("s0")).unwrap();
        std::fs::rename(d.join("tmp"), d.join("s1")).unwrap();
        return serde_json::from_str(&std::fs::read_to_string(d.join("s0/shard.json")).unwrap()).unwrap();
    }
    v
}

#[test]
fn merge_reads_shards_as_every_reader_does() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let v = shards(d);
    assert!(!v["cases"][0]["rows"].as_array().unwrap().is_empty(), "s0 holds rows");
    // A FIFO or a link to /dev/zero: refused at once, never read.
    std::fs::create_dir(d.join("fifo")).unwrap();
    let c = std::ffi::CString::new(d.join("fifo/shard.json").to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    std::fs::create_dir(d.join("zero")).unwrap();
    std::os::unix::fs::symlink("/dev/zero", d.join("zero/shard.json")).unwrap();
    for bad in ["fifo", "zero"] {
        refused(d, &["merge", "s1", bad, "--out", "merged"], &[&format!("{bad}/shard.json"), "not a regular file"]);
    }
    // Every row validated: a risk that is a string, null or negative, an unknown key.
    let forged = |name: &str, edit: &dyn Fn(&mut Value)| {
        let mut w = v.clone();
        edit(&mut w);
        std::fs::create_dir(d.join(name)).unwrap();
        write_file(&d.join(name), "shard.json", &w.to_string());
    };
    forged("string", &|w| w["cases"][0]["rows"][0]["bayes_risk"] = Value::from("0.1"));
    forged("null", &|w| w["cases"][0]["rows"][0]["bayes_risk"] = Value::Null);
    forged("negative", &|w| w["cases"][0]["rows"][0]["true_risk"] = Value::from(-1.0));
    forged("key", &|w| w["cases"][0]["rows"][0]["extra"] = Value::from(1));
    forged("top", &|w| w["extra"] = Value::from(1));
    for (name, field) in [
        ("string", "cases[0].rows[0].bayes_risk"),
        ("null", "cases[0].rows[0].bayes_risk"),
        ("negative", "cases[0].rows[0].true_risk"),
        ("key", "cases[0].rows[0].extra"),
        ("top", "extra"),
    ] {
        refused(d, &["merge", name, "s1", "--out", "merged"], &[&format!("{name}/shard.json"), field]);
    }
    assert!(!d.join("merged").exists());
    // A shard of 20 MB (its cases repeated) under a 64 MB budget: priced and refused, the peak
    // below the budget.
    let mut w = v.clone();
    let case = w["cases"][0].clone();
    w["cases"] = Value::Array(vec![case; 4000]);
    std::fs::create_dir(d.join("big")).unwrap();
    write_file(&d.join("big"), "shard.json", &w.to_string());
    let budget: u64 = 64 << 20;
    let limit = budget.to_string();
    let (code, err, peak) =
        run_measured(d, &["merge", "big", "s1", "--out", "merged"], &[("UBAPP_MEMORY_LIMIT", limit.as_str())]);
    assert!(std::fs::metadata(d.join("big/shard.json")).unwrap().len() > 10 << 20);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("big/shard.json") && err.contains("UBAPP_MEMORY_LIMIT"), "{err}");
    assert!(peak < budget, "merge peaked at {peak} bytes, over the {budget}-byte budget");
    eprintln!("merge of a 20 MB shard: exit 2, peak {:.1} MB", peak as f64 / 1e6);
    // The honest shards merge under the same budget.
    let (code, err, _) = run_measured(d, &["merge", "s0", "s1", "--out", "merged"], &[("UBAPP_MEMORY_LIMIT", &limit)]);
    assert_eq!(code, Some(0), "{err}");
}

#[test]
fn out_never_replaces_what_ubapp_did_not_write() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let text = common::binomial_toml(8, 12, "squared", &[1.0]);
    write_file(d, "model.toml", &text);
    // A FIFO (and, where we may create one, a character device) as --out: refused, left as it was.
    let fifo = d.join("fifo");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let null = d.join("null");
    let c = std::ffi::CString::new(null.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path; the device numbers are /dev/null's (1, 3).
    let device = unsafe { libc::mknod(c.as_ptr(), libc::S_IFCHR | 0o600, libc::makedev(1, 3)) } == 0;
    for target in ["fifo", "null"].into_iter().filter(|t| *t == "fifo" || device) {
        refused(d, &["solve", "model.toml", "--eps", "1", "--out", target], &["--out", target, "not a regular file"]);
        use std::os::unix::fs::FileTypeExt;
        let kind = std::fs::symlink_metadata(d.join(target)).unwrap().file_type();
        assert!(kind.is_fifo() || kind.is_char_device(), "{target} was replaced");
    }
    // An earlier output holding an input of the run, or a user's file: refused, nothing deleted.
    let cmp = ["compare", "--methods", "ubapp,geometric", "--eps", "1"];
    let run = |model: &str, out: &str| {
        let mut args = vec![cmp[0], model];
        args.extend_from_slice(&cmp[1..]);
        args.extend(["--out", out]);
        ubapp_in(d, &args)
    };
    assert!(run("model.toml", "out").status.success());
    write_file(&d.join("out"), "model.toml", &text);
    let start = Instant::now();
    common::assert_input_error(&run("out/model.toml", "out"), &["--out", "out/model.toml", "an input"]);
    assert!(start.elapsed() < PROMPT);
    assert_eq!(std::fs::read_to_string(d.join("out/model.toml")).unwrap(), text, "the input was deleted");
    std::fs::remove_file(d.join("out/model.toml")).unwrap();
    write_file(&d.join("out"), "notes.txt", "mine");
    common::assert_input_error(&run("model.toml", "out"), &["--out", "notes.txt", "did not write"]);
    assert_eq!(std::fs::read_to_string(d.join("out/notes.txt")).unwrap(), "mine");
    std::fs::remove_file(d.join("out/notes.txt")).unwrap();
    assert!(run("model.toml", "out").status.success(), "an earlier output of ours is replaced");
    // Shards inside the directory they are merged into: refused, the shards kept.
    for i in 0..2 {
        let (shard, out) = (format!("{i}/2"), format!("out/s{i}"));
        let o = ubapp_in(d, &["compare", "model.toml", "--eps", "0.5,1", "--shard", &shard, "--out", &out]);
        assert!(o.status.success(), "{}", stderr(&o));
    }
    refused(d, &["merge", "out/s0", "out/s1", "--out", "out"], &["--out", "out/s0", "an input"]);
    assert!(d.join("out/s0/shard.json").is_file() && d.join("out/s1/shard.json").is_file());
}

#[test]
fn targets_are_checked_before_the_work_with_one_rule_for_parents() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write_file(d, "model.toml", &common::binomial_toml(8, 12, "squared", &[0.5, 1.0]));
    // A parent no one may create a file in (/proc refuses even root): refused up front, exit 2.
    refused(d, &["compare", "model.toml", "--out", "/proc/ubapp-cmp"], &["--out", "/proc", "cannot create"]);
    refused(d, &["report", "model.toml", "--out", "/proc/ubapp-rep"], &["--out", "/proc", "cannot create"]);
    refused(d, &["solve", "model.toml", "--eps", "1", "--out", "/proc/ubapp.json"], &["--out", "cannot create"]);
    // A file where a parent directory should be.
    write_file(d, "plain", "x");
    refused(d, &["compare", "model.toml", "--out", "plain/cmp"], &["--out", "plain", "not a directory"]);
    refused(d, &["solve", "model.toml", "--eps", "1", "--out", "plain/m.json"], &["--out", "not a directory"]);
    // Missing parents are created, by every command alike.
    let o = ubapp_in(d, &["solve", "model.toml", "--eps", "1", "--out", "new/a/mech.json"]);
    assert!(o.status.success() && d.join("new/a/mech.json").is_file(), "{}", stderr(&o));
    let o = ubapp_in(d, &["compare", "model.toml", "--methods", "ubapp", "--eps", "1", "--out", "new/b/cmp"]);
    assert!(o.status.success() && d.join("new/b/cmp/risk.csv").is_file(), "{}", stderr(&o));
}

#[test]
fn eight_concurrent_comparisons_into_one_directory_end_with_0_or_2() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write_file(d, "model.toml", &common::binomial_toml(8, 12, "squared", &[1.0]));
    let args = ["compare", "model.toml", "--methods", "ubapp", "--eps", "1", "--out", "same"];
    for round in 0..3 {
        let _ = std::fs::remove_dir_all(d.join("same"));
        let children: Vec<_> = (0..8)
            .map(|_| {
                common::ubapp_command(&args)
                    .current_dir(d)
                    .stdout(std::process::Stdio::null())
                    .stderr(std::process::Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        for child in children {
            let o = child.wait_with_output().unwrap();
            let err = String::from_utf8_lossy(&o.stderr);
            match o.status.code() {
                Some(0) => {}
                Some(2) => {
                    let last = err.trim().lines().last().unwrap_or_default();
                    assert!(last.starts_with("error: --out same"), "round {round}: {err}");
                }
                other => panic!("round {round}: exit {other:?}: {err}"),
            }
        }
        assert!(d.join("same/risk.csv").is_file(), "round {round}: no output");
        let hidden: Vec<_> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with('.'))
            .collect();
        assert!(hidden.is_empty(), "round {round} left {hidden:?}");
    }
}

#[test]
fn outputs_far_beyond_the_parameter_range_are_refused_before_the_solve() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let text = std::fs::read_to_string(common::bundled("count-unbiased-k10")).unwrap();
    assert!(text.contains("3.5, 4.0]"));
    for (name, value) in [("far.toml", "1e9"), ("huge.toml", "9007199254740993.0")] {
        write_file(d, name, &text.replace("3.5, 4.0]", &format!("3.5, {value}]")));
        refused(d, &["solve", name, "--eps", "0.5", "--out", "q.json"], &[name, "output.grid.values"]);
        assert!(!d.join("q.json").exists());
    }
    // Within the bound the artifact is written.
    write_file(d, "near.toml", &text.replace("3.5, 4.0]", "3.5, 100.0]"));
    let o = ubapp_in(d, &["solve", "near.toml", "--eps", "0.5", "--out", "q.json"]);
    assert!(o.status.success(), "{}", stderr(&o));
}

/// Lines of Markdown outside fenced code blocks (where text is shown literally anyway).
fn markdown_prose(md: &str) -> String {
    let mut fence: Option<String> = None;
    let mut out = String::new();
    for line in md.lines() {
        let ticks: String = line.chars().take_while(|&c| c == '`').collect();
        match &fence {
            Some(f) if ticks.len() >= f.len() && line.trim() == ticks => fence = None,
            Some(_) => {}
            None if ticks.len() >= 3 => fence = Some(ticks),
            None => {
                out.push_str(line);
                out.push('\n');
            }
        }
    }
    out
}

#[test]
fn user_strings_reach_no_page_raw() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let name = "evil<script>alert(1)</script>\\u202e\\u001b[2J";
    let model = common::binomial(8, 12, "squared", &[1.0])
        .name(name)
        .top("description = \"<script>x</script> \\u202e \\u001b]0;t\\u0007 [a](javascript:alert(1))\"")
        .toml();
    write_file(d, "model.toml", &model);
    let o = ubapp_in(d, &["report", "model.toml", "--out", "rep"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = ubapp_in(d, &["compare", "model.toml", "--methods", "ubapp,geometric", "--out", "cmp"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let mut pages = 0;
    for root in ["rep", "cmp"] {
        for (file, bytes) in common::files_under(&d.join(root)) {
            let ext = Path::new(&file).extension().and_then(|e| e.to_str()).unwrap_or_default().to_string();
            if !["html", "md", "svg"].contains(&ext.as_str()) {
                continue;
            }
            pages += 1;
            let text = String::from_utf8(bytes).unwrap();
            assert!(!text.contains('\u{1b}') && !text.contains('\u{202e}') && !text.contains('\u{7}'), "{file}: raw");
            let prose = if ext == "md" { markdown_prose(&text) } else { text.clone() };
            assert!(!prose.contains("<script"), "{root}/{file} carries a raw <script>");
            assert!(ext != "md" || !prose.replace("\\]", "").contains("](javascript"), "{root}/{file} carries a link");
        }
    }
    assert!(pages >= 3, "only {pages} pages checked");
    let md = std::fs::read_to_string(d.join("rep/report.md")).unwrap();
    assert!(md.starts_with("# ubapp report: evil&lt;script&gt;"), "{}", &md[..80.min(md.len())]);
    assert!(md.contains("\\u{202e}"), "the override is shown, not dropped");
}
