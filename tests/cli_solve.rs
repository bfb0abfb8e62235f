//! `ubapp solve` end to end: output formats (the JSON fields, the text table and its extra lines
//! for minimax and (ε, δ) programs), and bad input (one sentence naming the field, exit code 2, no
//! output file written, an existing file kept).

mod common;

use std::path::Path;

use common::{assert_input_error, assert_success, binomial, stderr, stdout, stdout_json, ubapp_env, ubapp_in};

/// The small model of these tests: K = 12, M = 10, ε ∈ {0.5, 2}, an explicit `[output]` table.
fn good() -> String {
    binomial(12, 10, "squared", &[0.5, 2.0]).name("small").top("description = \"test\"").output("\"parameter\"").toml()
}

/// A temp dir with `text` as m.toml.
fn model_dir(text: &str) -> (tempfile::TempDir, String) {
    let (dir, path) = common::model_file(text);
    (dir, path.to_string_lossy().into_owned())
}

/// The main table of `solve`'s text output: one map column → value per row. The header is the
/// line whose first two fields are `eps` and `bayes_risk`; rows follow it until the footnote.
fn table_rows(text: &str) -> Vec<std::collections::BTreeMap<String, String>> {
    let lines: Vec<&str> = text.lines().collect();
    let h = lines
        .iter()
        .position(|l| l.split_whitespace().take(2).eq(["eps", "bayes_risk"]))
        .unwrap_or_else(|| panic!("no table header in:\n{text}"));
    let header: Vec<&str> = lines[h].split_whitespace().collect();
    lines[h + 1..]
        .iter()
        .take_while(|l| !l.starts_with("rel_gap:"))
        .map(|l| {
            let cells: Vec<&str> = l.split_whitespace().collect();
            assert_eq!(cells.len(), header.len(), "row {l:?} does not match the header {header:?}");
            header.iter().zip(cells).map(|(h, c)| (h.to_string(), c.to_string())).collect()
        })
        .collect()
}

#[test]
fn json_output_has_the_documented_fields() {
    let (_dir, model) = model_dir(&good());
    let o = common::ubapp(&["solve", &model, "--json", "--solver", "clarabel"]);
    assert_success(&o);
    let v = stdout_json(&o);
    let rows = v.as_array().unwrap();
    assert_eq!(rows.len(), 2);
    for key in ["eps", "bayes_risk", "solver", "status", "seconds", "outputs", "observations", "max_dp_violation"] {
        assert!(rows[0].get(key).is_some(), "missing {key}");
    }
    assert_eq!(rows[0]["outputs"], 10);
    assert_eq!(rows[0]["observations"], 13);
    assert_eq!(rows[1]["eps"], 2.0);
    assert!(rows[1]["bayes_risk"].as_f64().unwrap() < rows[0]["bayes_risk"].as_f64().unwrap());
}

#[test]
fn table_output_and_eps_override() {
    let (_dir, model) = model_dir(&good());
    let o = common::ubapp(&["solve", &model, "--eps", "0.1,1,3"]);
    assert_success(&o);
    let text = stdout(&o);
    let rows = table_rows(&text);
    // One row per ε of the override, in order, each with the status column exactly "optimal"
    // (not "near-optimal", which a substring test would also accept).
    let eps: Vec<&str> = rows.iter().map(|r| r["eps"].as_str()).collect();
    assert_eq!(eps, ["0.1", "1", "3"], "{text}");
    for r in &rows {
        assert_eq!(r["status"], "optimal", "{text}");
    }
    // A plain Bayes, pure-ε model has no extra lines before the table.
    assert!(!text.contains("worst_risk") && !text.contains("delta_spent"), "{text}");
}

/// The lines between the objective line and the main table: `  eps E: …`, one per ε.
fn extra_lines(text: &str) -> (String, Vec<String>) {
    let lines: Vec<&str> = text.lines().collect();
    let h =
        lines.iter().position(|l| l.starts_with("objective ")).unwrap_or_else(|| panic!("no objective line:\n{text}"));
    let t = lines.iter().position(|l| l.split_whitespace().take(2).eq(["eps", "bayes_risk"])).unwrap();
    assert!(h < t, "the objective line comes after the table:\n{text}");
    (lines[h].to_string(), lines[h + 1..t].iter().map(|l| l.to_string()).collect())
}

/// The number after `key` on `line`.
fn value_after(line: &str, key: &str) -> f64 {
    let rest = line.split(key).nth(1).unwrap_or_else(|| panic!("{key} not on {line:?}"));
    let v = rest.split_whitespace().next().unwrap();
    v.parse().unwrap_or_else(|_| panic!("{key} {v:?} on {line:?} is not a number"))
}

/// Issue 12, item 10: for a minimax model with δ = 0 the table shows no `delta_spent`, and what
/// its objective line says is "below" is printed below it (the worst-case risk per ε, then the
/// table), not above.
#[test]
fn minimax_table_shows_the_worst_case_below_and_no_delta_spent() {
    let (_dir, model) = model_dir(&binomial(12, 10, "squared", &[0.5, 2.0]).top("objective = \"minimax\"").toml());
    let o = common::ubapp(&["solve", &model]);
    assert_success(&o);
    let text = stdout(&o);
    assert!(!text.contains("delta_spent"), "a pure-ε model shows a δ spent:\n{text}");
    let (objective, extra) = extra_lines(&text);
    assert!(objective.starts_with("objective minimax"), "{objective}");
    assert!(objective.contains("worst_risk"), "the objective line names the column: {objective}");
    assert!(!objective.contains("above"), "{objective}");
    // "below" is true: the per-ε worst case follows the objective line directly, the table after.
    assert!(objective.contains("below"), "{objective}");
    assert_eq!(extra.len(), 2, "one line per ε right below the objective line:\n{text}");
    for (line, eps) in extra.iter().zip(["0.5", "2"]) {
        let label: Vec<&str> = line.split(':').next().unwrap().split_whitespace().collect();
        assert_eq!(label, ["eps", eps], "{line}");
        let worst = value_after(line, "worst_risk");
        assert!(worst > 0.0 && worst.is_finite(), "{line}");
    }
    // Nothing below the objective line is a column of the table above it: the table itself has
    // only its own columns.
    let rows = table_rows(&text);
    assert_eq!(rows.len(), 2);
    assert!(rows.iter().all(|r| !r.contains_key("worst_risk") && !r.contains_key("delta_spent")));
    for r in &rows {
        assert_eq!(r["status"], "optimal", "{text}");
    }
}

/// The (ε, δ) side of the same fix: δ > 0 shows the δ spent per ε (at most δ), and no worst case.
#[test]
fn epsilon_delta_table_shows_delta_spent_per_eps() {
    let (_dir, model) = model_dir(&binomial(12, 10, "squared", &[0.5, 2.0]).top("delta = 0.01").toml());
    let o = common::ubapp(&["solve", &model]);
    assert_success(&o);
    let text = stdout(&o);
    let (objective, extra) = extra_lines(&text);
    assert!(objective.starts_with("objective bayes") && objective.contains("δ = 0.01"), "{objective}");
    assert!(objective.contains("delta_spent") && !objective.contains("worst_risk"), "{objective}");
    assert!(!text.contains("worst_risk"), "a Bayes model shows a worst case:\n{text}");
    assert_eq!(extra.len(), 2, "{text}");
    for line in &extra {
        let spent = value_after(line, "delta_spent");
        assert!((0.0..=0.01 + 1e-9).contains(&spent), "{line}");
    }
    assert_eq!(table_rows(&text).len(), 2);
}

#[test]
fn out_writes_a_json_file_for_one_eps() {
    let (dir, model) = model_dir(&good());
    let out = dir.path().join("p.json");
    let o = common::ubapp(&["solve", &model, "--eps", "1", "--out", out.to_str().unwrap()]);
    assert_success(&o);
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(v["columns"].as_array().unwrap().len(), 13);
    assert_eq!(v["eps"], 1.0);
    // Only the target file: no temporary left behind.
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2);
}

/// Solve `text` written as `dir/{case}.toml` with `--out`: exit 2, one line naming the file and
/// containing every word, and no output file.
fn assert_bad_model(case: &str, text: &str, words: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let file = format!("{case}.toml");
    let model = common::write_file(dir.path(), &file, text);
    let out = dir.path().join("out.json");
    let o = common::ubapp(&["solve", model.to_str().unwrap(), "--eps", "1", "--out", out.to_str().unwrap()]);
    assert_input_error(&o, words);
    assert!(stderr(&o).contains(&file), "file not named: {}", stderr(&o));
    assert!(!out.exists(), "output written despite the error");
}

/// One test per bad model: (model text, words the one-sentence error must contain).
macro_rules! bad_models {
    ($($name:ident: $text:expr => [$($word:expr),* $(,)?];)*) => {
        $(
            #[test]
            fn $name() {
                assert_bad_model(stringify!($name), &$text, &[$($word),*]);
            }
        )*
    };
}

bad_models! {
    bad_model_missing_epsilon: good().replace("epsilon = [0.5, 2.0]\n", "") => ["missing field", "epsilon"];
    bad_model_unknown_top_level_field: good().replace("epsilon =", "epsilonn =") => ["unknown field", "epsilonn"];
    bad_model_misspelt_trials: good().replace("trials = 12", "trails = 12") => ["observation", "trails"];
    bad_model_unknown_family: good().replace("\"binomial\"", "\"binomal\"") => ["observation", "binomal"];
    bad_model_unknown_loss: good().replace("kind = \"squared\"", "kind = \"cubic\"") => ["loss", "cubic"];
    bad_model_zero_eps: good().replace("[0.5, 2.0]", "[0.5, 0.0]") => ["epsilon[1]", "> 0"];
    bad_model_negative_eps: good().replace("[0.5, 2.0]", "[-1.0]") => ["epsilon[0]", "> 0"];
    bad_model_nan_eps: good().replace("[0.5, 2.0]", "[nan]") => ["epsilon[0]", "finite"];
    bad_model_infinite_eps: good().replace("[0.5, 2.0]", "[inf]") => ["epsilon[0]", "finite"];
    bad_model_empty_eps_list: good().replace("[0.5, 2.0]", "[]") => ["epsilon", "at least one"];
    bad_model_zero_trials: good().replace("trials = 12", "trials = 0") => ["observation.trials", "at least 1"];
    bad_model_zero_grid_points: good().replace("points = 10", "points = 0") => ["parameter.grid.points", "at least 1"];
    bad_model_zero_output_points:
        good().replace("grid = \"parameter\"", "grid = { kind = \"midpoint\", points = 0 }")
        => ["output.grid.points", "at least 1"];
    bad_model_unknown_output_grid: good().replace("grid = \"parameter\"", "grid = \"params\"") => ["output.grid", "params"];
    bad_model_beta_prior_zero_a:
        good().replace("{ kind = \"uniform\" }", "{ kind = \"beta\", a = 0.0, b = 2.0 }")
        => ["parameter.prior.a", "> 0"];
    bad_model_beta_prior_negative_b:
        good().replace("{ kind = \"uniform\" }", "{ kind = \"beta\", a = 2.0, b = -1.0 }")
        => ["parameter.prior.b", "> 0"];
    bad_model_empty_parameter_interval: good().replace("upper = 1.0", "upper = 0.0") => ["parameter.lower", "lower < upper"];
    bad_model_parameter_outside_unit_interval: good().replace("upper = 1.0", "upper = 2.0") => ["parameter", "[0, 1]"];
    bad_model_negative_grid_points: good().replace("points = 10 }", "points = -3 }") => ["parameter.grid", "-3"];
    bad_model_unknown_table: good().replace("[loss]", "[losss]") => ["losss"];
    bad_model_toml_syntax_error: "name = \"x\"\nepsilon = [1.0\n" => ["line"];
    bad_model_too_large_for_memory:
        good().replace("trials = 12", "trials = 100000000").replace("points = 10", "points = 100000")
        => ["memory", "observation.trials"];
}

/// `solve MODEL EXTRA…` (run in the model's directory): exit 2, one line `error: …` containing
/// `word`, nothing on stdout.
fn assert_bad_flag(extra: &[&str], word: &str) {
    let (dir, model) = model_dir(&good());
    let mut args = vec!["solve", model.as_str()];
    args.extend(extra);
    let o = ubapp_in(dir.path(), &args);
    assert_input_error(&o, &[word]);
    assert!(stderr(&o).starts_with("error: "), "{extra:?}: {}", stderr(&o));
    assert!(o.stdout.is_empty(), "{extra:?} printed {}", stdout(&o));
    let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(names.len(), 1, "{extra:?} wrote a file: {names:?}");
}

/// One test per bad flag: (extra arguments, a word the error must contain).
macro_rules! bad_flags {
    ($($name:ident: [$($arg:expr),*] => $word:expr;)*) => {
        $(
            #[test]
            fn $name() {
                assert_bad_flag(&[$($arg),*], $word);
            }
        )*
    };
}

bad_flags! {
    bad_flag_negative_eps: ["--eps", "-1"] => "--eps[0]";
    bad_flag_nan_eps: ["--eps", "nan"] => "--eps[0]";
    bad_flag_zero_second_eps: ["--eps", "0.5,0"] => "--eps[1]";
    bad_flag_unknown_solver: ["--solver", "gurobi"] => "gurobi";
    bad_flag_unknown_solver_nope: ["--solver", "nope"] => "nope";
    bad_flag_eps_too_large_for_the_lp_path: ["--eps", "45", "--solver", "clarabel"] => "too large for the LP path";
    bad_flag_out_with_two_eps: ["--out", "x.json"] => "exactly one";
}

#[test]
fn a_missing_model_file_is_named_with_exit_code_2() {
    let o = common::ubapp(&["solve", "/nonexistent/model.toml"]);
    assert_input_error(&o, &["/nonexistent/model.toml"]);
}

#[test]
fn a_problem_too_large_for_memory_is_refused_before_allocation() {
    let (dir, model) = model_dir(&good());
    let out = dir.path().join("out.json");
    std::fs::write(&out, "precious").unwrap();
    // The LP path (the chain solver would need only O(|Θ̃|·|Y|) memory here).
    let o = ubapp_env(
        &["solve", &model, "--eps", "1", "--solver", "clarabel", "--out", out.to_str().unwrap()],
        &[("UBAPP_MEMORY_LIMIT", "20000")],
    );
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("memory") && err.contains("observation.trials"), "{err}");
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "precious", "an existing file was touched");
}

/// Issue 12, item 10: `ubapp solve MODEL | head -1` and `ubapp models | head -1` end quietly when
/// the reader goes away (no panic, no exit code 101).
#[test]
fn solve_into_a_closed_pipe_does_not_panic() {
    let (dir, model) = model_dir(&good());
    common::assert_quiet_on_closed_pipe(&["solve", model.as_str()], Some(dir.path()));
    common::assert_quiet_on_closed_pipe(&["solve", model.as_str(), "--json"], Some(dir.path()));
}

#[test]
fn models_into_a_closed_pipe_does_not_panic() {
    let models = Path::new(env!("CARGO_MANIFEST_DIR")).join("models");
    common::assert_quiet_on_closed_pipe(&["models", models.to_str().unwrap()], None);
}

/// The README's worked example is what `solve` prints for the bundled model, line for line, apart
/// from the timings and the round-off-sized columns (rel_gap, max_dp_viol); in particular the
/// worst-case θ, whose ties between mirrored points are broken deterministically (the first grid
/// point).
#[test]
fn the_readme_demo_is_what_solve_prints() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let command = "$ ./target/release/ubapp solve models/bernoulli-k100.toml\n";
    let at = readme.find(command).expect("the README shows the demo") + command.len();
    let shown: Vec<&str> = readme[at..].lines().take_while(|l| !l.starts_with("```")).collect();
    let o = ubapp_in(root, &["solve", "models/bernoulli-k100.toml"]);
    assert_success(&o);
    let printed = stdout(&o);
    let printed: Vec<&str> = printed.lines().collect();
    assert_eq!(shown.len(), printed.len(), "README:\n{}\nprinted:\n{}", shown.join("\n"), printed.join("\n"));
    for (s, p) in shown.iter().zip(&printed) {
        let (sf, pf): (Vec<&str>, Vec<&str>) = (s.split_whitespace().collect(), p.split_whitespace().collect());
        let is_row = sf.len() == 8 && pf.len() == 8 && sf[4] == "optimal";
        if is_row {
            // eps, bayes_risk, dual_bound, status, solver; not rel_gap, seconds, max_dp_viol.
            for i in [0, 1, 2, 4, 7] {
                assert_eq!(sf[i], pf[i], "README row {s:?} vs printed {p:?}");
            }
        } else {
            assert_eq!(s.trim_end(), p.trim_end());
        }
    }
}
