//! `ubapp bench` and `ubapp solve --solver chain` from the command line.

mod common;

use common::{assert_success, bundled, stderr, stdout_json, ubapp};

#[test]
fn bench_quick_chain_only_reports_certified_rows() {
    let out = ubapp(&["bench", "--quick", "--no-lp", "--repeat", "1", "--json"]);
    assert_success(&out);
    let rows = stdout_json(&out);
    let rows = rows.as_array().expect("a JSON array");
    // The two smallest sizes of the table, chain path only, in order.
    let sizes: Vec<(u64, u64)> =
        rows.iter().map(|r| (r["trials"].as_u64().unwrap(), r["points"].as_u64().unwrap())).collect();
    assert_eq!(sizes, [(100, 100), (300, 300)], "{rows:?}");
    for r in rows {
        assert_eq!(r["path"], "chain");
        assert_eq!(r["status"], "optimal");
        assert!(r["relative_gap"].as_f64().unwrap() <= 1e-9);
        assert!(r["peak_kib"].as_u64().unwrap() > 0);
    }
}

/// `ubapp ARGS` fails as a usage error: exit code 2 and exactly one line on stderr, `error: …`.
fn assert_bad_flag(args: &[&str]) {
    let out = ubapp(args);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert!(err.starts_with("error: ") && err.lines().count() == 1, "{args:?}: {err}");
    assert!(out.stdout.is_empty(), "{args:?} printed to stdout");
}

/// One test per bad command line: each must fail on its own.
macro_rules! bad_flags {
    ($($name:ident: [$($arg:expr),* $(,)?];)*) => {
        $(
            #[test]
            fn $name() {
                assert_bad_flag(&[$($arg),*]);
            }
        )*
    };
}

bad_flags! {
    bench_rejects_a_negative_eps_with_exit_code_2: ["bench", "--eps", "-1"];
    bench_rejects_zero_repeats_with_exit_code_2: ["bench", "--repeat", "0"];
    bench_rejects_an_unknown_lp_solver_with_exit_code_2: ["bench", "--lp-solver", "nope"];
    bench_rejects_a_single_case_without_a_path_with_exit_code_2: ["bench", "--single", "1,2"];
    bench_model_rejects_a_missing_model_file_with_exit_code_2: ["bench", "--model", "/nonexistent/model.toml"];
    bench_model_rejects_zero_repeats_with_exit_code_2:
        ["bench", "--model", concat!(env!("CARGO_MANIFEST_DIR"), "/models/vote-share-3way-small.toml"), "--repeat", "0"];
    solve_rejects_an_unknown_solver_with_one_line_and_exit_code_2:
        ["solve", concat!(env!("CARGO_MANIFEST_DIR"), "/models/rare-event-beta.toml"), "--solver", "nope"];
    solve_rejects_a_negative_eps_with_one_line_and_exit_code_2:
        ["solve", concat!(env!("CARGO_MANIFEST_DIR"), "/models/rare-event-beta.toml"), "--eps", "-1"];
}

#[test]
fn solve_with_chain_solver_prints_certified_rows() {
    let model = bundled("rare-event-beta");
    let n_eps = ubapp::model::Model::load(&model).unwrap().epsilons().len();
    assert!(n_eps > 0);
    let out = ubapp(&["solve", model.to_str().unwrap(), "--solver", "chain", "--json"]);
    assert_success(&out);
    let sols = stdout_json(&out);
    let sols = sols.as_array().expect("a JSON array");
    assert_eq!(sols.len(), n_eps, "one row per ε of the model: {sols:?}");
    for s in sols {
        assert_eq!(s["solver"], "chain");
        assert_eq!(s["status"], "optimal");
        assert!(s["relative_gap"].as_f64().unwrap() <= 1e-9);
    }
}

#[test]
fn bench_model_times_solve_and_reports_its_certified_rows() {
    let model = bundled("vote-share-3way-small");
    let out = ubapp(&["bench", "--model", model.to_str().unwrap(), "--repeat", "1", "--json"]);
    assert_success(&out);
    let rows = stdout_json(&out);
    let rows = rows.as_array().expect("a JSON array");
    // One row per ε of the model, each the solve's own optimum, certified.
    assert_eq!(rows.len(), 2, "{rows:?}");
    for r in rows {
        assert_eq!(r["status"], "optimal");
        assert!(r["relative_gap"].as_f64().unwrap() <= 1e-9);
        assert!(r["wall_seconds"].as_f64().unwrap() >= r["solve_seconds"].as_f64().unwrap());
        assert_eq!(r["variables"].as_u64(), Some(45 * 28));
        assert!(r["solver_detail"].as_str().unwrap().contains("orbit LP"), "{r}");
    }
}

#[test]
fn bench_model_names_the_missing_file() {
    let out = ubapp(&["bench", "--model", "/nonexistent/model.toml"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("/nonexistent/model.toml"), "{}", stderr(&out));
}
