//! What a solve reports of its time and keeps of its budgets, through the binary: `--json`'s phase
//! breakdown covers the solve, `--max-seconds` caps the whole process on every LP backend (the
//! answer then is a certified mechanism that `verify` accepts, never `optimal`), and a memory
//! refusal names the route it priced; the default budget follows the machine, and a limit that
//! is not a number of bytes is refused.

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
        assert_verifies(d, solver, &out);
    }
}

/// `verify --model poll.toml` accepts the artifact `out` that `solver` wrote under a cap.
fn assert_verifies(d: &std::path::Path, solver: &str, out: &str) {
    let v = ubapp_in(d, &["verify", out, "--model", "poll.toml"]);
    assert!(v.status.success(), "{solver}: verify refused the capped answer: {}", stderr(&v));
}

#[test]
fn a_memory_refusal_names_the_route_it_priced() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write_file(d, "poll.toml", &poll(40));
    let o = common::run_ubapp(&["solve", "poll.toml"], &[("UBAPP_MEMORY_LIMIT", "1000000")], Some(d));
    common::assert_input_error(&o, &["poll.toml", "GiB", "block-ipm", "UBAPP_MEMORY_LIMIT", "observation.records"]);
}

/// The backends whose setup outlasted the limit before it was respected (good_lp driving Clarabel
/// ran 204 s past a 5 s limit on the poll of 40; HiGHS's setup is not under its own limit): a 3 s
/// cap ends well within 30 s (the tight bound is a measurement, docs/benchmarks.md), never
/// `optimal` above the tolerance, with an artifact `verify` accepts.
#[test]
fn a_cap_holds_on_good_lp_and_highs() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write_file(d, "poll.toml", &poll(40));
    for solver in ["good-lp-clarabel", "good-lp-highs", "highs", "clarabel", "block-ipm"] {
        let out = format!("{solver}.json");
        let started = Instant::now();
        let args = ["solve", "poll.toml", "--solver", solver, "--max-seconds", "3", "--json", "--quiet", "--out", &out];
        let o = ubapp_in(d, &args);
        let wall = started.elapsed().as_secs_f64();
        assert!(o.status.success(), "{solver}: {}", stderr(&o));
        assert!(wall < 30.0, "{solver}: --max-seconds 3 ended after {wall:.1} s");
        let row = &stdout_json(&o)[0];
        let gap = row["relative_gap"].as_f64().unwrap();
        assert!(row["status"] != "optimal" || gap <= 1e-7, "{solver}: {row}");
        assert_verifies(d, solver, &out);
    }
}

/// A binomial of 300 trials on a 300-point grid through Clarabel: priced on Clarabel's own
/// factorisation (about 0.4 GiB; its measured peak is 0.17 GB), so the default budget of any
/// machine with a gigabyte free takes it (it said 5.1 GiB, "does NOT fit", before).
#[test]
fn clarabel_on_a_band_of_300_by_300_fits_the_default_budget() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write_file(d, "b.toml", &common::binomial_toml(300, 300, "squared", &[1.0]));
    let est = stdout_json(&ubapp_in(d, &["solve", "b.toml", "--solver", "clarabel", "--dry-run", "--json"]));
    assert_eq!(est["priced"], "clarabel", "{est}");
    assert!(est["memory_bytes"].as_f64().unwrap() < 0.6 * 2f64.powi(30), "{est}");
    assert_eq!(est["fits"], true, "{est}");
    let text = common::stdout(&ubapp_in(d, &["solve", "b.toml", "--solver", "clarabel", "--dry-run"]));
    assert!(text.contains("on clarabel, the route that runs"), "{text}");
}

/// Under a budget that holds the route's first backend but not its fallbacks, the dry run says
/// which fallbacks will not be started, and the solve is not refused for them.
#[test]
fn a_fallback_over_the_budget_is_named_not_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write_file(d, "poll.toml", &poll(40));
    let env = [("UBAPP_MEMORY_LIMIT", "400000000")];
    let o = common::run_ubapp(&["solve", "poll.toml", "--solver", "auto", "--dry-run", "--json"], &env, Some(d));
    let est = stdout_json(&o);
    assert_eq!(est["priced"], "block-ipm", "{est}");
    assert_eq!(est["fits"], true, "{est}");
    let skipped = est["not_started"].as_array().unwrap();
    assert!(skipped.iter().any(|s| s.as_str().unwrap().starts_with("highs-ipm")), "{est}");
    let o = common::run_ubapp(&["solve", "poll.toml", "--dry-run"], &env, Some(d));
    assert!(common::stdout(&o).contains("not started as fallbacks"), "{}", common::stdout(&o));
}

/// `UBAPP_MEMORY_LIMIT` that is not a whole number of bytes: one sentence naming it, exit 2,
/// before any work (it was ignored, and the default budget used).
#[test]
fn a_memory_limit_that_is_not_bytes_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write_file(d, "poll.toml", &poll(20));
    for bad in ["abc", "4GiB", "0", "-1"] {
        let o = common::run_ubapp(&["solve", "poll.toml", "--dry-run"], &[("UBAPP_MEMORY_LIMIT", bad)], Some(d));
        common::assert_input_error(&o, &["UBAPP_MEMORY_LIMIT", "bytes"]);
        assert_eq!(stderr(&o).trim().lines().count(), 1, "{}", stderr(&o));
    }
}
