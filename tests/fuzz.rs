//! A bounded mutation fuzzer over everything that reads untrusted input, run in CI: the model
//! parser and validator, the artifact loader and the sampler, in process. Seeds are the bundled
//! models, artifacts solved from them (dense and compact) and the reproducers of known attacks
//! (a forged table model, huge grids and trial counts, escape sequences, duplicate keys, a NaN
//! written as `null`). Each input must end in a value or an input error — no panic, no abort — and
//! every artifact that loads must sample inside its output grid and survive a save/load round trip.
//!
//! One case in ten runs the binary instead: `sample` or `posterior` with mutated flags (values
//! at the edges of every type, flags added, dropped or repeated, the deployment mode on or off) on
//! a valid, mutated or wrong file. Each must exit 0 with output or 2 with one line, never panic,
//! abort or hang; a stream of releases ends by SIGPIPE when the reader goes away.
//!
//! `UBAPP_FUZZ_CASES` sets the number of mutated inputs (default 20 000; at most 150 s, and never fewer than 10 000, in release
//! mode on two cores); `UBAPP_FUZZ_SEED` the seed (default fixed, so a failure reproduces).
//! `UBAPP_FUZZ_DUMP=FILE` writes each in-process input to FILE before it is tried, so an input that
//! ends the process (a kill for memory) can be recovered.

mod common;

use std::panic::{catch_unwind, AssertUnwindSafe};

use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};
use ubapp::mechanism::Release;
use ubapp::model::{Model, ModelSpec};
use ubapp::solve::{solve_model, SolverChoice};

/// Values a mutation writes in place of a number: edges of every type the schema uses.
const EXTREMES: &[&str] = &[
    "0",
    "1",
    "2",
    "-1",
    "0.5",
    "-0.0",
    "1e308",
    "-1e308",
    "1e-320",
    "4294967295",
    "4294967296",
    "18446744073709551615",
    "9007199254740993",
    "100000",
    "nan",
    "inf",
    "-inf",
    "\"x\"",
    "\"\\u001b[2J\"",
    "[]",
    "{}",
    "true",
    "20.5",
];

/// Bytes a mutation inserts: structure, quotes, escapes, multi-byte text.
const SNIPPETS: &[&str] = &[
    "[",
    "]",
    "{",
    "}",
    ",",
    "=",
    "\"",
    "\n",
    "\u{1b}[2J",
    "\u{202e}",
    "é",
    "#",
    ".",
    "-",
    "0",
    "9",
    ":",
    "\"kind\": \"x\"",
    "kind = \"explicit\"",
    "file = \"/etc/passwd\"",
    "file = \"/dev/zero\"",
];

fn cases() -> usize {
    std::env::var("UBAPP_FUZZ_CASES").ok().and_then(|s| s.parse().ok()).unwrap_or(20_000)
}

fn rng() -> StdRng {
    StdRng::seed_from_u64(std::env::var("UBAPP_FUZZ_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(20261123))
}

/// One text mutation: replace a number, insert a snippet, delete or duplicate a span, or splice.
fn mutate(text: &str, rng: &mut StdRng) -> String {
    let chars: Vec<char> = text.chars().collect();
    if chars.is_empty() {
        return SNIPPETS[rng.random_range(0..SNIPPETS.len())].to_string();
    }
    let at = rng.random_range(0..chars.len());
    let s = |a: usize, b: usize| chars[a..b].iter().collect::<String>();
    match rng.random_range(0..5) {
        0 => {
            // The number (or word) around `at` becomes an extreme value.
            let is_word = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '+' | '_');
            let (mut a, mut b) = (at, at);
            while a > 0 && is_word(chars[a - 1]) {
                a -= 1;
            }
            while b < chars.len() && is_word(chars[b]) {
                b += 1;
            }
            format!("{}{}{}", s(0, a), EXTREMES[rng.random_range(0..EXTREMES.len())], s(b, chars.len()))
        }
        1 => format!("{}{}{}", s(0, at), SNIPPETS[rng.random_range(0..SNIPPETS.len())], s(at, chars.len())),
        2 => {
            let end = (at + rng.random_range(1..40)).min(chars.len());
            format!("{}{}", s(0, at), s(end, chars.len()))
        }
        3 => {
            let end = (at + rng.random_range(1..80)).min(chars.len());
            format!("{}{}{}", s(0, end), s(at, end), s(end, chars.len()))
        }
        _ => {
            let at2 = rng.random_range(0..chars.len());
            let (a, b) = (at.min(at2), at.max(at2));
            format!("{}{}", s(0, a), s(b, chars.len()))
        }
    }
}

/// Run `f` on `input`, turning a panic into a test failure that shows (a safe prefix of) the input.
fn no_panic<T>(what: &str, input: &str, f: impl FnOnce() -> T) -> T {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(v) => v,
        Err(_) => panic!("{what} panicked on input:\n{}", ubapp::guard::text::sanitize(input, 4000)),
    }
}

/// With `UBAPP_FUZZ_DUMP=FILE`, write `text` to FILE (the input about to be tried).
fn dump(text: &str) {
    if let Ok(file) = std::env::var("UBAPP_FUZZ_DUMP") {
        std::fs::write(file, text).unwrap();
    }
}

/// Parse and validate a model text (CSV paths relative to `dir`); errors are `ModelError`s, so
/// input errors by type. Returns the model when it validates.
fn load_model(text: &str, dir: &std::path::Path) -> Option<Model> {
    let spec = ModelSpec::from_toml(text, "fuzz.toml").ok()?;
    Model::from_spec_in(spec, dir).ok()
}

/// Load an artifact; an error must be an input error; a loaded one must sample inside its output
/// grid, and save and load again unchanged in what it certifies.
fn check_artifact(text: &str, rng: &mut StdRng, dir: &std::path::Path) -> bool {
    match Release::from_json_str(text, "fuzz.json") {
        Err(e) => {
            assert!(e.is_input(), "an artifact error that is not an input error: {e}");
            false
        }
        Ok(a) => {
            let n = a.n_observations();
            if n > 0 {
                let i = rng.random_range(0..n);
                for k in a.sample_batch(i, 4, rng) {
                    assert!(k < a.n_outputs(), "sampled output {k} outside |Θ̃| = {}", a.n_outputs());
                }
            }
            let path = dir.join("round-trip.json");
            a.save(&path).expect("an artifact that loaded saves");
            let back = Release::load(&path).expect("a saved artifact loads");
            assert_eq!(back.certified_eps(), a.certified_eps());
            assert_eq!(back.fingerprint(), a.fingerprint());
            true
        }
    }
}

/// The seeds: every bundled model's text, and artifacts solved from small ones.
fn seeds() -> (Vec<String>, Vec<String>) {
    let mut models: Vec<String> =
        common::bundled_models().iter().map(|p| std::fs::read_to_string(p).unwrap()).collect();
    // Reproducers: a huge grid and trial count, an escape sequence in the name, a duplicate key,
    // a CSV path to a device and to /etc/passwd, a float where an integer belongs.
    let base = common::binomial_toml(8, 12, "squared", &[1.0]);
    models.push(base.replace("points = 12", "points = 4294967295"));
    models.push(base.replace("trials = 8", "trials = 10000000000"));
    models.push(base.replace("name = \"t\"", "name = \"\u{1b}[2J\u{1b}[1;1HOK\""));
    models.push(base.replace("name = \"t\"", "name = \"t\"\nname = \"u\""));
    models.push(base.replace("trials = 8", "trials = 20.5"));
    models.push(
        "name = \"t\"\nepsilon = [1.0]\n[parameter]\ngrid = { kind = \"midpoint\", points = 2 }\nprior = { kind = \"uniform\" }\n\
         [observation]\nfamily = \"table\"\nlikelihood = \"/etc/passwd\"\nneighbours = \"/dev/zero\"\n[loss]\nkind = \"squared\"\n"
            .to_string(),
    );
    let mut artifacts = Vec::new();
    for (trials, points, eps) in [(8, 12, 1.0), (5, 4, 0.3), (20, 10, 1000.0)] {
        let model = common::binomial_model(trials, points, "squared", &[eps]);
        let s = solve_model(&model, None, SolverChoice::Auto).unwrap().remove(0);
        artifacts.push(Release::certify(&model, &s).unwrap().to_json().to_string());
    }
    let delta = common::parse_model(&common::binomial(6, 8, "absolute", &[1.0]).top("delta = 0.01").toml());
    let s = solve_model(&delta, None, SolverChoice::Auto).unwrap().remove(0);
    artifacts.push(Release::certify(&delta, &s).unwrap().to_json().to_string());
    // A compact artifact: a chain model large enough for the compact route.
    let big = common::binomial_model(20_000, 40, "squared", &[0.5]);
    let s = solve_model(&big, None, SolverChoice::Auto).unwrap().remove(0);
    artifacts.push(Release::certify(&big, &s).unwrap().to_json().to_string());
    // The forged-model attack and a duplicate key.
    let mut v: serde_json::Value = serde_json::from_str(&artifacts[0]).unwrap();
    v["model"]["observation"] =
        serde_json::json!({"family": "table", "likelihood": [[0.5, 0.5]], "neighbours": [[0, 1]]});
    artifacts.push(v.to_string());
    artifacts.push(artifacts[0].replacen("\"eps\":", "\"eps\": 5, \"eps\":", 1));
    (models, artifacts)
}

/// Flags of `sample` and `posterior` and the values a mutation gives them.
const SAMPLE_FLAGS: &[&str] =
    &["--y", "--n", "--seed", "--budget", "--allow-composition", "--json", "--model", "--fingerprint", "--max-eps"];
const POSTERIOR_FLAGS: &[&str] = &["--release", "--level", "--json", "--model", "--fingerprint", "--max-eps"];
/// Flags that take no value.
const SWITCHES: &[&str] = &["--allow-composition", "--json"];
const FLAG_VALUES: &[&str] = &[
    "4",
    "0",
    "8",
    "9",
    "-1",
    "0.375",
    "0.5",
    "3,5",
    "4,",
    ",",
    "",
    " ",
    "-",
    "--json",
    "1e3",
    "1e10",
    "1e30",
    "1.5",
    "4294967296",
    "18446744073709551615",
    "18446744073709551616",
    "nan",
    "inf",
    "-inf",
    "1e-320",
    "5e-324",
    "0.95",
    "1",
    "model.toml",
    "mech.json",
    "missing.toml",
    ".",
    "/dev/zero",
    "\u{1b}[2J",
    "é",
];

/// The files a flag case reads, written once into `dir`: a dense, a compact and an (ε, δ)
/// artifact, the model they were solved from, and (per case) a mutated artifact `mutated.json`.
fn flag_files(dir: &std::path::Path, artifacts: &[String]) -> String {
    let model = common::binomial_toml(8, 12, "squared", &[1.0]);
    std::fs::write(dir.join("model.toml"), &model).unwrap();
    std::fs::write(dir.join("mech.json"), &artifacts[0]).unwrap();
    std::fs::write(dir.join("delta.json"), &artifacts[3]).unwrap();
    std::fs::write(dir.join("compact.json"), &artifacts[4]).unwrap();
    common::parse_model(&model).fingerprint()
}

/// Values a flag takes in a valid request (`FP`: the model's fingerprint).
fn valid_values(flag: &str) -> &'static [&'static str] {
    match flag {
        "--y" => &["4", "0", "8"],
        "--n" => &["1", "3", "1e3", "18446744073709551615", "4294967296"],
        "--seed" => &["7", "0", "18446744073709551615"],
        "--budget" => &["5", "1e30", "2000"],
        "--model" => &["model.toml"],
        "--fingerprint" => &["FP"],
        "--max-eps" => &["1", "1000", "0.5"],
        "--release" => &["0.375", "0.041666666666666664", "0.9583333333333333", "0.125"],
        "--level" => &["0.9", "0.5", "0.999"],
        _ => &[""],
    }
}

/// One mutated `sample` or `posterior` command line (and whether the deployment mode is on):
/// a valid request, then up to three edits — a value replaced (by a valid one or an edge of any
/// type), a flag dropped, a flag added (rarely one already there).
fn flag_case(rng: &mut StdRng, fingerprint: &str) -> (Vec<String>, bool) {
    let sample = rng.random_bool(0.5);
    let files =
        ["mech.json", "mech.json", "mech.json", "delta.json", "compact.json", "mutated.json", "model.toml", "."];
    let file = files[rng.random_range(0..files.len())];
    let mut args: Vec<String> = if sample {
        vec![
            "sample".into(),
            file.into(),
            "--y".into(),
            "4".into(),
            "--seed".into(),
            rng.random_range(0..100u64).to_string(),
        ]
    } else {
        vec!["posterior".into(), file.into(), "--release".into(), "0.375".into()]
    };
    let flags = if sample { SAMPLE_FLAGS } else { POSTERIOR_FLAGS };
    let value = |rng: &mut StdRng, flag: &str| -> String {
        let v = if rng.random_bool(0.6) {
            let valid = valid_values(flag);
            valid[rng.random_range(0..valid.len())].to_string()
        } else if rng.random_bool(0.5) {
            EXTREMES[rng.random_range(0..EXTREMES.len())].trim_matches('"').to_string()
        } else {
            FLAG_VALUES[rng.random_range(0..FLAG_VALUES.len())].to_string()
        };
        if v == "FP" {
            fingerprint.to_string()
        } else {
            v
        }
    };
    for _ in 0..rng.random_range(0..4) {
        // Positions of the flags (from 2 on: not the command or the file).
        let positions: Vec<usize> = (2..args.len()).filter(|&i| args[i].starts_with("--")).collect();
        match rng.random_range(0..4) {
            0 if !positions.is_empty() => {
                let at = positions[rng.random_range(0..positions.len())];
                if at + 1 < args.len() && !args[at + 1].starts_with("--") {
                    let flag = args[at].clone();
                    args[at + 1] = value(rng, &flag);
                }
            }
            1 if !positions.is_empty() => {
                let at = positions[rng.random_range(0..positions.len())];
                let takes_value = !SWITCHES.contains(&args[at].as_str());
                args.drain(at..(at + 1 + usize::from(takes_value)).min(args.len()));
            }
            _ => {
                let flag = flags[rng.random_range(0..flags.len())];
                if args.iter().any(|a| a == flag) && !rng.random_bool(0.1) {
                    continue;
                }
                args.push(flag.to_string());
                if !SWITCHES.contains(&flag) {
                    args.push(value(rng, flag));
                }
            }
        }
    }
    (args, rng.random_bool(0.15))
}

/// Run one flag case in `dir`: exit 0 with output, or exit 2 with one line, or (a stream cut
/// short by the reader) SIGPIPE; never a panic, an abort or a hang. Returns the exit code (`None`:
/// ended by SIGPIPE).
fn check_flag_case(dir: &std::path::Path, args: &[String], require_model: bool) -> Option<i32> {
    use std::io::Read;
    let mut c = common::ubapp_command(args);
    c.current_dir(dir).stdin(std::process::Stdio::null()).stdout(std::process::Stdio::piped());
    c.stderr(std::process::Stdio::piped());
    if require_model {
        c.env("UBAPP_REQUIRE_MODEL", "1");
    } else {
        c.env_remove("UBAPP_REQUIRE_MODEL");
    }
    let mut child = c.spawn().expect("spawn ubapp");
    let mut err = child.stderr.take().unwrap();
    let err = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = err.read_to_string(&mut s);
        s
    });
    // At most 256 KB of releases are read; a longer stream then meets a closed pipe.
    let mut out = Vec::new();
    let mut stdout = child.stdout.take().unwrap();
    let _ = (&mut stdout).take(256 << 10).read_to_end(&mut out);
    let cut = out.len() >= 256 << 10;
    drop(stdout);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            panic!("ubapp {args:?} hung");
        }
        std::thread::sleep(std::time::Duration::from_millis(2));
    };
    let err = err.join().unwrap();
    let shown = ubapp::guard::text::sanitize(&format!("{args:?}: {status:?}: {err}"), 2000);
    assert!(!err.contains("panicked"), "{shown}");
    match status.code() {
        Some(0) => assert!(!out.is_empty(), "exit 0 without output: {shown}"),
        Some(2) => {
            let lines: Vec<&str> = err.lines().filter(|l| !l.trim().is_empty()).collect();
            assert_eq!(lines.len(), 1, "exit 2 without exactly one line: {shown}");
        }
        _ => {
            #[cfg(unix)]
            {
                use std::os::unix::process::ExitStatusExt;
                assert!(cut && status.signal() == Some(libc::SIGPIPE), "{shown}");
            }
            #[cfg(not(unix))]
            panic!("{shown}");
        }
    }
    status.code()
}

#[test]
fn mutated_models_and_artifacts_end_in_a_value_or_an_input_error() {
    let (models, artifacts) = seeds();
    let dir = tempfile::tempdir().unwrap();
    let flags_dir = tempfile::tempdir().unwrap();
    let fingerprint = flag_files(flags_dir.path(), &artifacts);
    let mut rng = rng();
    let n = cases();
    let (mut models_ok, mut artifacts_ok) = (0usize, 0usize);
    // Flag cases by outcome: released (0), refused (2), a stream ended by the closed pipe.
    let (mut released, mut refused, mut piped) = (0usize, 0usize, 0usize);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(150);
    let mut n = n;
    for case in 0..n {
        if case >= 10_000 && std::time::Instant::now() > deadline {
            n = case;
            break;
        }
        if case % 10 == 9 {
            // The binary: mutated flags of `sample` and `posterior`, on a mutated file at times.
            let seed = &artifacts[rng.random_range(0..artifacts.len())];
            std::fs::write(flags_dir.path().join("mutated.json"), mutate(seed, &mut rng)).unwrap();
            let (args, require_model) = flag_case(&mut rng, &fingerprint);
            match check_flag_case(flags_dir.path(), &args, require_model) {
                Some(0) => released += 1,
                Some(_) => refused += 1,
                None => piped += 1,
            }
        } else if case % 2 == 0 {
            let seed = &models[rng.random_range(0..models.len())];
            let mut text = mutate(seed, &mut rng);
            if rng.random_bool(0.3) {
                text = mutate(&text, &mut rng);
            }
            dump(&text);
            if no_panic("the model loader", &text, || load_model(&text, dir.path())).is_some() {
                models_ok += 1;
            }
        } else {
            let seed = &artifacts[rng.random_range(0..artifacts.len())];
            let mut text = mutate(seed, &mut rng);
            if rng.random_bool(0.3) {
                text = mutate(&text, &mut rng);
            }
            let mut local = StdRng::seed_from_u64(case as u64);
            dump(&text);
            if no_panic("the artifact loader", &text, || check_artifact(&text, &mut local, dir.path())) {
                artifacts_ok += 1;
            }
        }
    }
    // The mutations must leave some inputs valid, or the loaders' success paths go untested.
    assert!(
        models_ok > n / 50 && artifacts_ok > n / 200,
        "{models_ok} models and {artifacts_ok} artifacts of {n} loaded"
    );
    // Both answers must occur, or the mutations test only one side of the flags.
    let flag_cases = released + refused + piped;
    assert!(
        flag_cases >= n / 10 - 1 && released > flag_cases / 20 && refused > flag_cases / 20,
        "{flag_cases} flag cases of {n}: {released} released, {refused} refused, {piped} cut by the reader"
    );
    eprintln!("flag cases: {released} released, {refused} refused, {piped} streams cut by the reader");
    eprintln!("{n} cases: {models_ok} models and {artifacts_ok} artifacts loaded, {flag_cases} flag cases");
    // Nothing left behind but the round-trip file.
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert!(left.iter().all(|f| f == "round-trip.json"), "{left:?}");
}

/// Random valid models × ε: every artifact `solve --out` would write verifies (including ε far
/// beyond e^ε's range, whose provenance once held a NaN).
#[test]
fn every_written_artifact_verifies() {
    let dir = tempfile::tempdir().unwrap();
    let mut rng = rng();
    let losses = ["squared", "absolute"];
    for case in 0..40 {
        let trials = rng.random_range(1..30u64);
        let points = rng.random_range(1..16usize);
        let eps = [1e-4, 0.01, 0.3, 1.0, 5.0, 50.0, 800.0, 1e6][rng.random_range(0..8)];
        let loss = losses[rng.random_range(0..2)];
        let mut b = common::binomial(trials, points, loss, &[eps]);
        if rng.random_bool(0.25) {
            b = b.top("delta = 0.001");
        }
        if rng.random_bool(0.3) {
            b = b.output(&format!("{{ kind = \"midpoint\", points = {} }}", rng.random_range(1..20)));
        }
        let model = common::parse_model(&b.toml());
        let Ok(mut solutions) = solve_model(&model, None, SolverChoice::Auto) else { continue };
        let s = solutions.remove(0);
        let Ok(m) = Release::certify(&model, &s) else { continue };
        let path = dir.path().join(format!("case{case}.json"));
        m.save(&path).unwrap_or_else(|e| panic!("case {case} (K = {trials}, M = {points}, ε = {eps}, {loss}): {e}"));
        let back = Release::load(&path).unwrap_or_else(|e| panic!("case {case} does not verify: {e}"));
        assert_eq!(back.certified_eps(), m.certified_eps());
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(!text.contains("null") && !text.contains("NaN"), "case {case}: a non-number was written");
    }
}
