//! `ubapp bench` and `ubapp solve --solver chain` from the command line.

use std::process::Command;

fn ubapp(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_ubapp")).args(args).output().unwrap()
}

#[test]
fn bench_quick_chain_only_reports_certified_rows() {
    let out = ubapp(&["bench", "--quick", "--no-lp", "--repeat", "1", "--json"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let rows: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let rows = rows.as_array().unwrap();
    assert_eq!(rows.len(), 2);
    for r in rows {
        assert_eq!(r["path"], "chain");
        assert_eq!(r["status"], "optimal");
        assert!(r["relative_gap"].as_f64().unwrap() <= 1e-9);
        assert!(r["peak_kib"].as_u64().unwrap() > 0);
    }
}

#[test]
fn bench_rejects_bad_flags_with_exit_code_2() {
    for args in [
        &["bench", "--eps", "-1"][..],
        &["bench", "--repeat", "0"],
        &["bench", "--lp-solver", "nope"],
        &["bench", "--single", "1,2"],
    ] {
        let out = ubapp(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.starts_with("error: ") && err.lines().count() == 1, "{err}");
    }
}

#[test]
fn solve_with_chain_solver_prints_certified_rows() {
    let model = concat!(env!("CARGO_MANIFEST_DIR"), "/models/rare-event-beta.toml");
    let out = ubapp(&["solve", model, "--solver", "chain", "--json"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let sols: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    for s in sols.as_array().unwrap() {
        assert_eq!(s["solver"], "chain");
        assert_eq!(s["status"], "optimal");
        assert!(s["relative_gap"].as_f64().unwrap() <= 1e-9);
    }
}
