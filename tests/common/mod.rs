//! Shared fixtures for the integration tests: the `ubapp` command runner, model text and model
//! files, and a few numeric helpers. Use with `mod common;`.
#![allow(dead_code)]

use std::ffi::OsStr;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use proptest::prelude::*;
use ubapp::model::{Model, ModelSpec, Neighbours};

mod model_text;
#[allow(unused_imports)] // each test crate uses its own part
pub use model_text::{binomial, binomial_toml, Binomial};

/// The bundled model files, sorted.
pub fn bundled_models() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("models");
    let mut v: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("models/ exists")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    v.sort();
    assert!(!v.is_empty(), "no bundled models found");
    v
}

/// A bundled model file by name, without `.toml` (e.g. `"rare-event-beta"`).
pub fn bundled(name: &str) -> PathBuf {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("models").join(format!("{name}.toml"));
    assert!(path.is_file(), "no bundled model {}", path.display());
    path
}

/// A model from its TOML text (panics with the error: the text is the test's own).
pub fn parse_model(text: &str) -> Model {
    Model::from_spec(ModelSpec::from_toml(text, "test").unwrap_or_else(|e| panic!("{e}\n{text}")))
        .unwrap_or_else(|e| panic!("{e}\n{text}"))
}

/// A binomial model with a uniform midpoint grid (Θ̃ = Θ) from a few numbers.
pub fn binomial_model(trials: u64, points: usize, loss: &str, eps: &[f64]) -> Model {
    binomial(trials, points, loss, eps).model()
}

impl Binomial {
    /// The model this text describes.
    pub fn model(&self) -> Model {
        parse_model(&self.toml())
    }
}

/// Write `text` to `dir/name` and return the path.
pub fn write_file(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// `small.toml` in `dir`: a binomial with 8 trials on a 12-point grid, squared loss, ε = 0.1 and 1
/// (the small model of the comparison tests).
pub fn small_binomial_file(dir: &Path) -> PathBuf {
    write_file(dir, "small.toml", &binomial(8, 12, "squared", &[0.1, 1.0]).name("small").toml())
}

/// A fresh temporary directory holding `text` as `model.toml`, and that file's path.
pub fn model_file(text: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = write_file(dir.path(), "model.toml", text);
    (dir, path)
}

/// The `ubapp` binary as a `Command` with `args` (for tests that spawn it themselves).
pub fn ubapp_command<S: AsRef<OsStr>>(args: &[S]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_ubapp"));
    c.args(args);
    c
}

/// Run the `ubapp` binary with `args`, extra environment variables `env`, and, if given, `dir` as
/// its current directory; wait for it and return its output.
pub fn run_ubapp<S: AsRef<OsStr>>(args: &[S], env: &[(&str, &str)], dir: Option<&Path>) -> Output {
    let mut c = ubapp_command(args);
    c.envs(env.iter().copied());
    if let Some(dir) = dir {
        c.current_dir(dir);
    }
    c.output().expect("run ubapp")
}

/// Run the `ubapp` binary.
pub fn ubapp<S: AsRef<OsStr>>(args: &[S]) -> Output {
    run_ubapp(args, &[], None)
}

/// Run the `ubapp` binary with extra environment variables.
pub fn ubapp_env<S: AsRef<OsStr>>(args: &[S], env: &[(&str, &str)]) -> Output {
    run_ubapp(args, env, None)
}

/// Run the `ubapp` binary in `dir`.
pub fn ubapp_in<S: AsRef<OsStr>>(dir: &Path, args: &[S]) -> Output {
    run_ubapp(args, &[], Some(dir))
}

/// stdout as text.
pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// stderr as text.
pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// stdout parsed as JSON (panics with stdout and stderr if it is not).
pub fn stdout_json(o: &Output) -> serde_json::Value {
    serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {}\nstderr: {}", stdout(o), stderr(o)))
}

/// The run succeeded (else panic with its stderr).
#[track_caller]
pub fn assert_success(o: &Output) {
    assert!(o.status.success(), "exit {:?}: {}", o.status, stderr(o));
}

/// The run failed as bad input: exit code 2, one line on stderr containing every word in `words`.
#[track_caller]
pub fn assert_input_error(o: &Output, words: &[&str]) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(2), "expected exit 2, got {:?}: {err}", o.status);
    assert_eq!(err.trim_end().lines().count(), 1, "not one line: {err}");
    for w in words {
        assert!(err.contains(w), "{w:?} not in: {err}");
    }
}

/// Run `ubapp ARGS` (in `dir` if given) with stdout into a pipe whose reader goes away early: once
/// before the child writes anything (`ubapp … | true`) and once after the first line
/// (`ubapp … | head -1`). Either way the child must end quietly: no panic, no exit code 101, no
/// "Broken pipe" message (ending by SIGPIPE, as command-line tools do, is fine).
#[track_caller]
pub fn assert_quiet_on_closed_pipe(args: &[&str], dir: Option<&Path>) {
    for lines in [0, 1] {
        let mut c = ubapp_command(args);
        c.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
        if let Some(dir) = dir {
            c.current_dir(dir);
        }
        let mut child = c.spawn().expect("spawn ubapp");
        let out = child.stdout.take().unwrap();
        let mut err = child.stderr.take().unwrap();
        // stderr drains on its own thread so that progress output can never block the child.
        let err = std::thread::spawn(move || {
            let mut s = String::new();
            err.read_to_string(&mut s).unwrap();
            s
        });
        let mut first = String::new();
        if lines > 0 {
            let mut reader = BufReader::new(out);
            reader.read_line(&mut first).unwrap();
            assert!(!first.is_empty(), "{args:?}: no first line");
        } else {
            drop(out);
        }
        // The reading end is closed now: `out` was dropped, or `reader` (which owned it) went out of scope.
        let status = child.wait().unwrap();
        let err = err.join().unwrap();
        let what = format!("{args:?} with the pipe closed after {lines} line(s)");
        assert_ne!(status.code(), Some(101), "{what}: exit 101: {err}");
        assert!(!err.contains("panicked"), "{what}: {err}");
        assert!(!err.contains("Broken pipe"), "{what}: {err}");
    }
}

/// Relative difference |a − b| / max(|a|, |b|).
pub fn rel_diff(a: f64, b: f64) -> f64 {
    (a - b).abs() / a.abs().max(b.abs()).max(f64::MIN_POSITIVE)
}

/// A random neighbour relation on n observations: a chain, or a random graph (possibly
/// disconnected) built from a list of candidate edges.
pub fn neighbours_strategy() -> impl Strategy<Value = Neighbours> {
    (2usize..7).prop_flat_map(|n| {
        prop_oneof![
            Just(Neighbours::Chain { len: n }),
            proptest::collection::vec((0..n, 0..n), 1..12).prop_map(move |pairs| {
                let mut edges: Vec<(usize, usize)> =
                    pairs.into_iter().filter(|(a, b)| a != b).map(|(a, b)| (a.min(b), a.max(b))).collect();
                edges.sort_unstable();
                edges.dedup();
                Neighbours::Graph { len: n, edges }
            }),
        ]
    })
}

/// Every file under `dir` (sub-folders included) by its path relative to `dir`, with its bytes,
/// sorted: two output folders are equal file for file when these are equal.
pub fn files_under(dir: &Path) -> Vec<(String, Vec<u8>)> {
    fn walk(root: &Path, dir: &Path, v: &mut Vec<(String, Vec<u8>)>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let path = e.unwrap().path();
            if path.is_dir() {
                walk(root, &path, v);
            } else {
                let rel = path.strip_prefix(root).unwrap().to_string_lossy().into_owned();
                v.push((rel, std::fs::read(&path).unwrap()));
            }
        }
    }
    let mut v = Vec::new();
    walk(dir, dir, &mut v);
    v.sort();
    v
}

/// `solve --json` text with the wall-clock fields (`seconds`, `assembly_seconds`; the phase
/// breakdown `phases` and `threads`, which only an unsharded `solve` reports) blanked: they
/// time the run, so no two runs share them. Everything else is compared byte for byte.
pub fn without_timings(json: &[u8]) -> String {
    let mut rows: serde_json::Value = serde_json::from_slice(json).expect("solve --json");
    for row in rows.as_array_mut().expect("rows") {
        let row = row.as_object_mut().expect("a row");
        row.remove("phases");
        row.remove("threads");
    }
    serde_json::to_string_pretty(&rows)
        .unwrap()
        .lines()
        .map(|l| match l.split_once("seconds\": ") {
            Some((key, _)) => format!("{key}seconds\": <time>"),
            None => l.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}
