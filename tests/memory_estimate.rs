//! The memory `solve --dry-run` estimates against the peak a solve really reaches (the child
//! process's maximum resident set, as `ubapp bench` reads VmHWM), on small models of the LP route:
//! the estimate must never be below the measured peak (it is what the size guard refuses on), and
//! on whole-LP solves not more than 2.5× above it. Each case runs in a few seconds.

#![cfg(target_os = "linux")]

mod common;

use std::path::Path;

use common::{stdout_json, ubapp_in, write_file};

/// Peak resident memory (bytes) of `ubapp ARGS` run in `dir`, from wait4's rusage of that child.
// The child is reaped by wait4 (which also reports its peak), not by `Child::wait`.
#[allow(clippy::zombie_processes)]
fn peak_bytes(dir: &Path, args: &[&str]) -> u64 {
    let child = common::ubapp_command(args)
        .current_dir(dir)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut status = 0;
    // SAFETY: a zeroed rusage is valid for wait4 to fill; we wait for our own child by its id.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let pid = unsafe { libc::wait4(child.id() as libc::pid_t, &mut status, 0, &mut usage) };
    assert_eq!(pid, child.id() as libc::pid_t, "wait4 failed");
    assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0, "{args:?} failed: {status}");
    usage.ru_maxrss as u64 * 1024 // kilobytes on Linux
}

/// What the process holds before any problem (the binary, its libraries, the allocator): the
/// peak of a 2 × 2 binomial's solve in `dir`.
fn baseline_bytes(dir: &Path) -> u64 {
    write_file(dir, "tiny.toml", &common::binomial_toml(2, 2, "squared", &[1.0]));
    peak_bytes(dir, &["solve", "tiny.toml", "--json"])
}

/// `ubapp ARGS --dry-run --json`'s estimate (the JSON and its `memory_bytes`) and the peak of
/// `ubapp ARGS --json EXTRA` less `baseline`, with a line reporting both.
fn estimate_and_peak(
    dir: &Path,
    args: &[&str],
    extra: &[&str],
    baseline: u64,
) -> (serde_json::Value, f64, f64, String) {
    let est = stdout_json(&ubapp_in(dir, &[args, &["--dry-run", "--json"]].concat()));
    let estimate = est["memory_bytes"].as_u64().unwrap() as f64;
    let peak = peak_bytes(dir, &[args, &["--json"], extra].concat()).saturating_sub(baseline) as f64;
    let report = format!("estimate {:.1} MB, measured {:.1} MB", estimate / 1e6, peak / 1e6);
    (est, estimate, peak, report)
}

/// (file, model text, whether the route solves the whole LP rather than by output generation).
fn cases() -> Vec<(&'static str, String, bool)> {
    let multinomial = |records: u64, resolution: u64, top: &str| {
        format!(
            "name = \"m\"\nepsilon = [1.0]\n{top}\n[parameter]\ngrid = {{ kind = \"simplex\", resolution = {resolution} }}\nprior = {{ kind = \"uniform\" }}\n[observation]\nfamily = \"multinomial\"\ncategories = 3\nrecords = {records}\n[output]\ngrid = \"parameter\"\n[loss]\nkind = \"squared-euclidean\"\n"
        )
    };
    vec![
        // (ε, δ): no output generation, a banded LP (Clarabel, then HiGHS).
        ("band-delta.toml", common::binomial(200, 30, "squared", &[0.5]).top("delta = 0.001").toml(), true),
        // (ε, δ) on the multinomial's neighbour graph (HiGHS interior point).
        ("graph-delta.toml", multinomial(10, 6, "delta = 0.001"), true),
        // The plain program by output generation (graph, band).
        ("graph.toml", multinomial(20, 8, ""), false),
        ("band.toml", std::fs::read_to_string(common::bundled("rare-events-poisson-cap3")).unwrap(), false),
    ]
}

#[test]
fn the_memory_estimate_covers_the_measured_peak() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let baseline = baseline_bytes(d);
    let mut report = Vec::new();
    for (file, text, whole_lp) in cases() {
        write_file(d, file, &text);
        let (est, estimate, peak, line) = estimate_and_peak(d, &["solve", file], &[], baseline);
        assert_eq!(est["path"], "LP", "{file}: {est}");
        assert_eq!(est["output_generation"].as_bool(), Some(!whole_lp), "{file}: {est}");
        report.push(format!("{file}: {line}"));
        assert!(estimate >= peak, "{file}: the estimate is below the measured peak: {}", report.join("; "));
        if whole_lp {
            assert!(estimate <= 2.5 * peak, "{file}: the estimate is far above the peak: {}", report.join("; "));
        }
    }
    eprintln!("{}", report.join("\n"));
}

/// The anytime route's estimate against its measured peak: never below it, within 3× above it
/// (a poll of 60 respondents, |Y| = 1891, 66 outputs, stopped at a loose gap).
#[test]
fn the_anytime_estimate_covers_the_measured_peak() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let baseline = baseline_bytes(d);
    let model = "name = \"poll\"\nepsilon = [0.5]\n[parameter]\ngrid = { kind = \"simplex\", resolution = 10 }\nprior = { kind = \"dirichlet\", alpha = [1.0, 2.0, 3.0] }\n[observation]\nfamily = \"multinomial\"\ncategories = 3\nrecords = 60\n[output]\ngrid = \"parameter\"\n[loss]\nkind = \"squared-euclidean\"\n";
    write_file(d, "poll.toml", model);
    let args = ["solve", "poll.toml", "--solver", "anytime", "--gap", "0.05", "--max-seconds", "20"];
    let (est, estimate, peak, report) = estimate_and_peak(d, &args, &[], baseline);
    assert_eq!(est["solvers"][0], "anytime", "{est}");
    assert!(estimate >= peak, "the anytime estimate is below the measured peak: {report}");
    assert!(estimate <= 3.0 * peak, "the anytime estimate is far above the measured peak: {report}");
    eprintln!("anytime: {report}");
}

/// The poll of 100 (`benches/models/multinomial-d3-k100-r10-a123.toml`, |Y| = 5151): the block
/// interior point's end game splits every output's stiff rows off, the one bench model that
/// gets that far; its estimate prices the room they may take. About 4 minutes on 2 cores:
/// `cargo test --release --test memory_estimate -- --ignored`.
#[test]
#[ignore = "about 4 minutes: cargo test --release --test memory_estimate -- --ignored"]
fn the_estimate_covers_the_block_interior_points_end_game() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let baseline = baseline_bytes(d);
    let model = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/models/multinomial-d3-k100-r10-a123.toml");
    let model = model.to_str().unwrap();
    let (est, estimate, peak, report) = estimate_and_peak(d, &["solve", model], &["--out", "poll.json"], baseline);
    assert_eq!(est["priced"], "block-ipm", "{est}");
    assert!(estimate >= peak, "the estimate is below the measured peak: {report}");
    assert!(estimate <= 3.0 * peak, "the estimate is far above the measured peak: {report}");
    let verified = ubapp_in(d, &["verify", "poll.json", "--model", model]);
    common::assert_success(&verified);
    eprintln!("poll of 100: {report}");
}
