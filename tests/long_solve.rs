//! A long solve as a newcomer meets it: the header at once on any stdout, progress lines in a
//! log, `--quiet`, an anytime `--max-seconds` that returns a certified, verifiable mechanism with
//! its gap, and the default time budget that refuses a solve estimated far beyond it.
//!
//! The long model is `benches/models/multinomial-d3-k40-r10-a123.toml` (an asymmetric multinomial
//! LP of 56 826 variables; minutes to solve whole): the tests stop it, they never wait for it.

mod common;

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use common::{assert_input_error, assert_success, stderr, stdout, stdout_json, ubapp, ubapp_command, ubapp_env};

fn long_model() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("benches/models/multinomial-d3-k40-r10-a123.toml")
}

/// Lines of a child's pipe, sent as they arrive.
fn lines_of(pipe: impl std::io::Read + Send + 'static) -> mpsc::Receiver<String> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(pipe).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}

/// Issue: `solve poll.toml > out.txt` printed nothing for 93 minutes. Piped, the header is out
/// within a second, and stderr (not a terminal) gets progress lines naming the phase and the time.
#[test]
fn a_piped_long_solve_prints_its_header_at_once_and_progress_lines() {
    let started = Instant::now();
    let mut child = ubapp_command(&["solve".as_ref(), long_model().as_os_str()])
        .env("UBAPP_PROGRESS_SECONDS", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn ubapp");
    let out = lines_of(child.stdout.take().unwrap());
    let err = lines_of(child.stderr.take().unwrap());
    let header = out.recv_timeout(Duration::from_secs(1));
    let header_after = started.elapsed();
    let progress = err.recv_timeout(Duration::from_secs(20));
    let _ = child.kill();
    let _ = child.wait();
    let header = header.expect("the header within a second of the start");
    assert!(header.starts_with("model peer-multinomial-d3-k40-r10-a1-2-3:"), "{header}");
    assert!(header.contains("LP 56826 variables"), "{header}");
    assert!(header_after < Duration::from_secs(1), "header after {header_after:?}");
    let progress = progress.expect("a progress line on stderr");
    assert!(progress.starts_with("progress: ε = 0.5 (1 of 1)"), "{progress}");
    assert!(progress.contains("elapsed"), "{progress}");
    // Its share done and when it should end, from the estimate until the gap closes.
    assert!(progress.contains(" % done"), "{progress}");
    assert!(progress.contains("ETA ~") || progress.contains("past the estimate"), "{progress}");
    assert!(
        ["assembling", "output generation round", "whole LP"].iter().any(|phase| progress.contains(phase)),
        "no phase in {progress}"
    );
}

/// Issue: `--max-seconds 400` was refused up front for a 6 s solve. Now the limit caps: the solve
/// stops, exits 0 with status `time-limit` and a stated certified gap, and the artifact it writes
/// verifies against the model. Its interval [dual_bound, bayes_risk] is a true statement about
/// the optimum: the optimum of this LP is at least the non-private risk (the dual bound used when
/// no solver answered) and at most the certified mechanism's risk.
#[test]
fn max_seconds_stops_the_solve_with_a_certified_mechanism_and_its_gap() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("m.json");
    let model = long_model();
    let started = Instant::now();
    let o = ubapp(&[
        "solve".as_ref(),
        model.as_os_str(),
        "--max-seconds".as_ref(),
        "2".as_ref(),
        "--json".as_ref(),
        "--out".as_ref(),
        out.as_os_str(),
    ]);
    let took = started.elapsed();
    assert_success(&o);
    // Two seconds of solving, then the certification of what it returns: far from the minutes
    // of the whole solve.
    assert!(took < Duration::from_secs(30), "took {took:?}");
    let rows = stdout_json(&o);
    let row = &rows[0];
    // `auto` takes the anytime route where the exact route's estimate exceeds the limit; an
    // exact route stopped by the limit says time-limit. Both state a certified gap.
    let status = row["status"].as_str().unwrap();
    assert!(status == "certified-gap" || status == "time-limit", "{row}");
    let gap = row["relative_gap"].as_f64().expect("a stated gap");
    let (risk, bound) = (row["bayes_risk"].as_f64().unwrap(), row["dual_bound"].as_f64().unwrap());
    assert!(gap > 0.0 && gap < 1.0, "gap {gap}");
    assert!(bound > 0.0 && bound < risk, "bound {bound}, risk {risk}");
    let note = stderr(&o);
    assert!(note.contains(&format!("{status}: within a certified gap of")), "{note}");
    if status == "time-limit" {
        assert!(note.contains("--max-seconds 2"), "{note}");
    }
    let v = ubapp(&["verify".as_ref(), out.as_os_str(), "--model".as_ref(), model.as_os_str()]);
    assert_success(&v);
    assert!(stdout(&v).contains(": OK, certified ε = "), "{}", stdout(&v));
    // The artifact's risk is the row's.
    let artifact: serde_json::Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    let saved = artifact["bayes_risk"].as_f64().unwrap();
    assert!((saved - risk).abs() <= 1e-12 * risk, "artifact {saved}, row {risk}");
}

/// Progress lines go to a log unless `--quiet`; the results are printed either way.
#[test]
fn quiet_silences_progress_only() {
    let model = long_model();
    let args = |quiet: bool| {
        let mut a = vec!["solve".to_string(), model.display().to_string(), "--max-seconds".into(), "1".into()];
        if quiet {
            a.push("--quiet".into());
        }
        a
    };
    let env = [("UBAPP_PROGRESS_SECONDS", "0.2")];
    let loud = ubapp_env(&args(false), &env);
    let quiet = ubapp_env(&args(true), &env);
    for o in [&loud, &quiet] {
        assert_success(o);
        assert!(stdout(o).contains("time-limit") || stdout(o).contains("certified-gap"), "{}", stdout(o));
    }
    assert!(stderr(&loud).lines().any(|l| l.starts_with("progress: ")), "{}", stderr(&loud));
    assert!(!stderr(&quiet).contains("progress: "), "{}", stderr(&quiet));
}

/// Without `--max-seconds`, a solve estimated at over ten minutes (a 3-option poll of 130 with
/// Dirichlet(1, 2, 3): about 14 minutes) takes the anytime route under `auto` where the program
/// is the plain one; with an exact solver named, the solve is refused before any work, with the
/// estimate, the flag to pass and the file; nothing goes to stdout.
#[test]
fn the_default_budget_refuses_a_solve_estimated_beyond_it() {
    let text = std::fs::read_to_string(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("benches/models/multinomial-d3-k100-r10-a123.toml"),
    )
    .unwrap()
    .replace("records = 100", "records = 130");
    let (_dir, plain) = common::model_file(&text);
    let planned = ubapp(&["solve".as_ref(), plain.as_os_str(), "--dry-run".as_ref()]);
    assert_success(&planned);
    let said = stdout(&planned);
    assert!(said.contains("route: anytime") && said.contains("time estimate exceeds the time budget"), "{said}");

    let model = plain;
    let started = Instant::now();
    let o = ubapp(&["solve".as_ref(), model.as_os_str(), "--solver".as_ref(), "block-ipm".as_ref()]);
    assert!(started.elapsed() < Duration::from_secs(5), "answered after {:?}", started.elapsed());
    let file = model.display().to_string();
    assert_input_error(&o, &["roughly", "default budget of 600 s", "--max-seconds S", &file]);
    assert!(o.stdout.is_empty(), "{}", stdout(&o));
}

/// The library's side: a sink in `SolveOptions` hears which ε is solved, the phase, Clarabel's
/// iterations (through its callback) and each solved ε, in that order; a solve without one is the
/// same solve.
#[test]
fn a_progress_sink_hears_the_route_and_the_backend() {
    use std::sync::{Arc, Mutex};
    use ubapp::solve::{solve_model, Event, Phase, Progress, ProgressSink, SolveOptions, SolverChoice};

    #[derive(Default)]
    struct Recorder(Mutex<Vec<String>>);
    impl ProgressSink for Recorder {
        fn report(&self, event: Event<'_>) {
            let line = match event {
                Event::Eps { eps, index, count } => format!("eps {eps} {index}/{count}"),
                Event::Phase(Phase::WholeLp) => "whole".to_string(),
                Event::Phase(p) => format!("phase {p}"),
                Event::Iteration { solver, iteration } => format!("{solver} {iteration}"),
                Event::Gap(_) => "gap".to_string(),
                Event::Solved { eps, status, .. } => format!("solved {eps} {status}"),
                _ => "other".to_string(),
            };
            self.0.lock().unwrap().push(line);
        }
    }
    if !SolverChoice::Clarabel.is_available() {
        return;
    }
    let model = common::binomial(6, 5, "squared", &[0.5, 2.0]).model();
    let recorder = Arc::new(Recorder::default());
    let options =
        SolveOptions { progress: Progress::to(recorder.clone()), ..SolveOptions::from(SolverChoice::Clarabel) };
    let heard = solve_model(&model, None, options).unwrap();
    let silent = solve_model(&model, None, SolverChoice::Clarabel).unwrap();
    for (a, b) in heard.iter().zip(&silent) {
        assert_eq!(a.bayes_risk, b.bayes_risk);
    }
    let events = recorder.0.lock().unwrap().clone();
    let at = |e: &str| events.iter().position(|x| x == e).unwrap_or_else(|| panic!("no {e} in {events:?}"));
    assert_eq!(events[0], "eps 0.5 0/2");
    assert!(at("phase assembling the LP") < at("whole"));
    assert!(at("whole") < at("clarabel 1"), "{events:?}");
    assert!(at("clarabel 2") < at("solved 0.5 optimal"), "{events:?}");
    assert!(at("solved 0.5 optimal") < at("eps 2 1/2"));
    assert_eq!(events.last().unwrap(), "solved 2 optimal");
}
