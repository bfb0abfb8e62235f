//! What a solve reports of its time and keeps of its budgets, through the binary: `--json`'s phase
//! breakdown covers the solve, `--max-seconds` caps the whole process on every LP backend (the
//! answer then is a certified mechanism that `verify` accepts, never `optimal`), and a memory
//! refusal names the route it priced.

mod common;

use std::time::Instant;

use common::{stderr, stdout_json, ubapp_in, write_file};

/// A poll of `records` respondents over three options, Dirichlet(1, 2, 3) (no symmetry: the block
/// interior point's route).
fn poll(records: u64) -> String {
    format!(
        "name = \"poll\"\nepsilon = [0.5]\n[parameter]\ngrid = {{ kind = \"simplex\", resolution = 10 }}\nprior = {{ kind = \"dirichlet\", alpha = [1.0, 2.0, 3.0] }}\n[observation]\nfamily = \"multinomial\"\ncategories = 3\nrecords = {records}\n[output]\ngrid = \"parameter\"\n[loss]\nkind = \"squared-euclidean\"\n"
    )
}

#[test]
fn the_phases_cover_the_solve_and_name_the_kernels() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write_file(d, "poll.toml", &poll(20));
    let o = ubapp_in(d, &["solve", "poll.toml", "--json", "--quiet"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let row = &stdout_json(&o)[0];
    let total = row["seconds"].as_f64().unwrap() + row["assembly_seconds"].as_f64().unwrap();
    let phases = row["phases"].as_array().expect("phases");
    let sum: f64 = phases.iter().map(|p| p["seconds"].as_f64().unwrap()).sum();
    let named = |what: &str| phases.iter().any(|p| p["phase"].as_str().unwrap().contains(what));
    assert!((sum - total).abs() <= 0.05 * total, "phases sum to {sum} s of {total} s: {phases:?}");
    let other: f64 = phases.iter().filter(|p| p["phase"] == "other").map(|p| p["seconds"].as_f64().unwrap()).sum();
    assert!(other <= 0.05 * total, "{other} s unaccounted of {total} s: {phases:?}");
    for kernel in ["assembly", "block-ipm", "Schur complement forming", "Schur complement factorisation", "certify"] {
        assert!(named(kernel), "no {kernel} phase: {phases:?}");
    }
    assert!(row["threads"].as_u64().unwrap() >= 1, "{row}");
}

#[test]
fn max_seconds_caps_the_whole_process_with_a_certified_answer() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write_file(d, "poll.toml", &poll(40));
    let cap = 3.0;
    for solver in ["auto", "highs-ipm"] {
        let out = format!("{solver}.json");
        let started = Instant::now();
        let args = ["solve", "poll.toml", "--solver", solver, "--max-seconds", "3", "--json", "--quiet", "--out", &out];
        let o = ubapp_in(d, &args);
        let wall = started.elapsed().as_secs_f64();
        assert!(o.status.success(), "{solver}: {}", stderr(&o));
        assert!(wall <= f64::max(1.1 * cap, cap + 2.0), "{solver}: --max-seconds 3 ended after {wall:.1} s");
        let row = &stdout_json(&o)[0];
        // Stopped early, the answer is never called optimal (a machine fast enough to finish may).
        if row["status"] != "optimal" {
            // `auto` answers by the anytime route where the exact estimate exceeds the limit.
            let stopped = ["time-limit", "certified-gap"];
            assert!(stopped.iter().any(|s| row["status"] == *s), "{solver}: {row}");
            assert!(row["relative_gap"].as_f64().unwrap() > 1e-7, "{solver}: {row}");
        }
        let v = ubapp_in(d, &["verify", &out, "--model", "poll.toml"]);
        assert!(v.status.success(), "{solver}: verify refused the capped answer: {}", stderr(&v));
    }
}

#[test]
fn a_memory_refusal_names_the_route_it_priced() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write_file(d, "poll.toml", &poll(40));
    let o = common::run_ubapp(&["solve", "poll.toml"], &[("UBAPP_MEMORY_LIMIT", "1000000")], Some(d));
    common::assert_input_error(&o, &["poll.toml", "GiB", "block-ipm", "UBAPP_MEMORY_LIMIT", "observation.records"]);
}
