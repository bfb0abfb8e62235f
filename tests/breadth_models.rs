//! The bundled model files: each is documented, listed by `ubapp models`, and solves; the
//! multinomial model solves end to end with a heat map; malformed inputs fail with one sentence.

use std::path::{Path, PathBuf};
use std::process::Command;

use ubapp::model::Model;
use ubapp::report::{default_panels, mechanism_heatmap_svg};
use ubapp::solve::{solve_model, SolverChoice, Status};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_ubapp"))
}

fn model_files() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir("models")
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    v.sort();
    v
}

/// The models added for breadth (the core's bernoulli-k100* and rare-event-beta are solved by its own tests).
const BREADTH_MODELS: &[&str] = &[
    "bernoulli-approx-dp-k30",
    "bernoulli-minimax-k30",
    "click-through-exact",
    "prevalence-asymmetric-loss",
    "prevalence-imperfect-test",
    "rare-events-poisson-cap3",
    "vote-share-3way-small",
];

#[test]
fn every_model_file_is_documented_and_listed() {
    let files = model_files();
    assert!(files.len() >= 8, "at least eight model files, found {}", files.len());
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        assert!(text.starts_with("# "), "{}: starts with a comment block saying what it answers", f.display());
        let m = Model::load(f).unwrap_or_else(|e| panic!("{e}"));
        assert!(!m.spec.description.trim().is_empty(), "{}: has a description", f.display());
    }
    let out = bin().args(["models", "models"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), files.len());
    for (line, f) in lines.iter().zip(&files) {
        let m = Model::load(f).unwrap();
        assert!(line.starts_with(&*f.file_name().unwrap().to_string_lossy()), "{line}");
        assert!(line.ends_with(&m.spec.description), "{line}");
    }
    // A directory without model files is an input error.
    let dir = tempfile::tempdir().unwrap();
    let out = bin().args(["models", dir.path().to_str().unwrap()]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn every_breadth_model_solves_and_two_backends_agree() {
    for name in BREADTH_MODELS {
        let m = Model::load(&Path::new("models").join(format!("{name}.toml"))).unwrap();
        let a = solve_model(&m, None, SolverChoice::HighsSimplex).unwrap();
        let b = solve_model(&m, None, SolverChoice::Clarabel).unwrap();
        for (x, y) in a.iter().zip(&b) {
            for s in [x, y] {
                // A backend may come back near-optimal (HiGHS's dual simplex sometimes returns duals
                // whose bound is ~1e-6 loose, e.g. click-through-exact at ε = 1 — also with a plain
                // midpoint grid); the joint certificate below is what must hold.
                assert!(s.status.has_solution(), "{name} ε = {}: {} {}", s.eps, s.solver, s.status);
                assert!(s.delta_spent <= m.delta + ubapp::solve::CHECK_TOLERANCE, "{name}: spent {}", s.delta_spent);
                assert!(s.max_column_error <= 1e-7 && s.min_entry >= -1e-7);
            }
            // Both Lagrangian bounds are valid lower bounds whoever computed the multipliers, so
            // max(bounds) ≤ optimum ≤ min(objectives): the two routes must pin it to 1e-6.
            let upper = x.objective.min(y.objective);
            let lower = x.dual_bound.unwrap().max(y.dual_bound.unwrap());
            assert!((upper - lower) / upper <= 1e-6, "{name} ε = {}: [{lower}, {upper}]", x.eps);
            assert!(((x.objective - y.objective) / upper).abs() <= 1e-6, "{name}: {} vs {}", x.objective, y.objective);
        }
    }
}

#[test]
fn multinomial_small_solves_end_to_end_with_a_heat_map() {
    let m = Model::load(Path::new("models/vote-share-3way-small.toml")).unwrap();
    let sols = solve_model(&m, Some(&[1e-7, 1.0, 20.0]), SolverChoice::HighsSimplex).unwrap();
    for s in &sols {
        assert_eq!(s.status, Status::Optimal);
    }
    // Structure: as ε → 0 the optimum is the best constant estimator, as ε → ∞ the non-private
    // Bayes estimator on the output grid; in between it lies strictly between them.
    let cost = ubapp::lp::cost_matrix(&m).unwrap();
    let (constant, free) = (ubapp::lp::best_constant_risk(&cost), ubapp::lp::non_private_risk(&cost));
    assert!((sols[0].bayes_risk - constant).abs() <= 1e-5 * constant, "{} vs {constant}", sols[0].bayes_risk);
    assert!((sols[2].bayes_risk - free).abs() <= 1e-7 * free, "{} vs {free}", sols[2].bayes_risk);
    assert!(free < sols[1].bayes_risk && sols[1].bayes_risk < constant);
    let s = &sols[1];
    let obs = m.family.observations();
    let panels = default_panels(&obs);
    assert_eq!(panels.len(), 6);
    let svg = mechanism_heatmap_svg(&m.outputs, &obs, &s.p, &panels, "test").unwrap();
    assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
    assert_eq!(svg.matches("<circle").count(), panels.len() * m.outputs.len());
    let dir = tempfile::tempdir().unwrap();
    ubapp::output::write_atomic(&dir.path().join("h.svg"), svg.as_bytes()).unwrap();
}

/// The issue's full-size 2-D multinomial (d = 3, K = 20, 66-point lattice): ~15 000 variables and
/// 83 000 rows, one ε with HiGHS's simplex (27 s on the loaded 2-core machine: the largest test in
/// the suite). Writes target/vote-share-3way.svg.
#[test]
fn multinomial_d3_k20_solves_end_to_end_with_a_heat_map() {
    let m = Model::load(Path::new("models/vote-share-3way.toml")).unwrap();
    let s = &solve_model(&m, Some(&[2.0]), SolverChoice::HighsSimplex).unwrap()[0];
    assert_eq!(s.status, Status::Optimal);
    let obs = m.family.observations();
    let svg = mechanism_heatmap_svg(&m.outputs, &obs, &s.p, &default_panels(&obs), "vote-share-3way, ε = 2").unwrap();
    ubapp::output::write_atomic(Path::new("target/vote-share-3way.svg"), svg.as_bytes()).unwrap();
}

/// A model directory with the prevalence table files, for the malformed-input cases.
fn table_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("lik.csv"), "0.5,0.5,0\n0.2,0.3,0.5\n").unwrap();
    std::fs::write(dir.path().join("nb.csv"), "0,1\n1,2\n").unwrap();
    std::fs::write(dir.path().join("w.csv"), "1\n3\n").unwrap();
    dir
}

fn table_model(lik: &str, nb: &str, prior: &str, loss: &str) -> String {
    format!(
        r#"
name = "bad"
epsilon = [1.0]
[parameter]
grid = {{ kind = "explicit", values = [0.25, 0.75] }}
prior = {prior}
[observation]
family = "table"
likelihood = "{lik}"
neighbours = "{nb}"
[loss]
{loss}
"#
    )
}

/// Run `ubapp solve` on `text` written as `dir/model.toml`; expect exit 2 and one line of stderr
/// containing every string in `want`.
fn expect_input_error(dir: &Path, text: &str, want: &[&str]) {
    let path = dir.join("model.toml");
    std::fs::write(&path, text).unwrap();
    let out = bin().args(["solve", path.to_str().unwrap(), "--solver", "highs"]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "exit code for {want:?}: stderr {err}");
    assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
    for w in want {
        assert!(err.contains(w), "stderr lacks {w:?}: {err}");
    }
    assert!(out.stdout.is_empty(), "nothing printed on stdout");
}

#[test]
fn malformed_inputs_fail_with_one_sentence_naming_file_and_field() {
    let d = table_dir();
    let dir = d.path();
    let sq = r#"kind = "squared""#;
    let uni = r#"{ kind = "uniform" }"#;
    // Sanity: the well-formed table model solves.
    let ok = dir.join("ok.toml");
    std::fs::write(&ok, table_model("lik.csv", "nb.csv", r#"{ kind = "weights", file = "w.csv" }"#, sq)).unwrap();
    let out = bin().args(["solve", ok.to_str().unwrap(), "--solver", "highs"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));

    // CSV of the wrong shape: a likelihood with three rows for a two-point grid.
    std::fs::write(dir.join("lik3.csv"), "0.5,0.5,0\n0.2,0.3,0.5\n1,0,0\n").unwrap();
    expect_input_error(
        dir,
        &table_model("lik3.csv", "nb.csv", uni, sq),
        &["lik3.csv", "observation.likelihood", "3 rows"],
    );
    // Ragged CSV.
    std::fs::write(dir.join("ragged.csv"), "0.5,0.5,0\n0.2,0.8\n").unwrap();
    expect_input_error(
        dir,
        &table_model("ragged.csv", "nb.csv", uni, sq),
        &["ragged.csv", "observation.likelihood", "line 2"],
    );
    // A likelihood row that is not a distribution.
    std::fs::write(dir.join("sum.csv"), "0.5,0.4,0\n0.2,0.3,0.5\n").unwrap();
    expect_input_error(
        dir,
        &table_model("sum.csv", "nb.csv", uni, sq),
        &["sum.csv", "observation.likelihood", "row 1 sums to"],
    );
    // Missing file.
    expect_input_error(
        dir,
        &table_model("nope.csv", "nb.csv", uni, sq),
        &["nope.csv", "observation.likelihood", "cannot read"],
    );
    // Neighbour index out of range.
    std::fs::write(dir.join("nb_oor.csv"), "0,1\n1,3\n").unwrap();
    expect_input_error(
        dir,
        &table_model("lik.csv", "nb_oor.csv", uni, sq),
        &["nb_oor.csv", "observation.neighbours", "index 3"],
    );
    // Neighbour list with three columns, and a self-loop.
    std::fs::write(dir.join("nb3.csv"), "0,1,2\n").unwrap();
    expect_input_error(
        dir,
        &table_model("lik.csv", "nb3.csv", uni, sq),
        &["nb3.csv", "observation.neighbours", "2 columns"],
    );
    std::fs::write(dir.join("nbself.csv"), "1,1\n").unwrap();
    expect_input_error(
        dir,
        &table_model("lik.csv", "nbself.csv", uni, sq),
        &["nbself.csv", "observation.neighbours", "own neighbour"],
    );
    // Negative weights, inline and in a CSV; wrong count.
    expect_input_error(
        dir,
        &table_model("lik.csv", "nb.csv", r#"{ kind = "weights", values = [1.0, -2.0] }"#, sq),
        &["model.toml", "parameter.prior.values", "-2"],
    );
    std::fs::write(dir.join("wneg.csv"), "1\n-0.5\n").unwrap();
    expect_input_error(
        dir,
        &table_model("lik.csv", "nb.csv", r#"{ kind = "weights", file = "wneg.csv" }"#, sq),
        &["wneg.csv", "parameter.prior.file", "-0.5"],
    );
    expect_input_error(
        dir,
        &table_model("lik.csv", "nb.csv", r#"{ kind = "weights", values = [1.0] }"#, sq),
        &["parameter.prior.values", "expected 2 weights"],
    );
    // Loss matrix of the wrong shape and with a negative entry.
    std::fs::write(dir.join("loss.csv"), "0,1\n1,0\n0,0\n").unwrap();
    expect_input_error(
        dir,
        &table_model("lik.csv", "nb.csv", uni, "kind = \"matrix\"\nfile = \"loss.csv\""),
        &["loss.csv", "loss.file", "expected 2 rows × 2 columns"],
    );
    std::fs::write(dir.join("lossneg.csv"), "0,1\n-1,0\n").unwrap();
    expect_input_error(
        dir,
        &table_model("lik.csv", "nb.csv", uni, "kind = \"matrix\"\nfile = \"lossneg.csv\""),
        &["lossneg.csv", "loss.file", "negative"],
    );
    // The same data inline (the form artifacts embed): errors name the field instead of a file.
    let inline =
        |lik: &str, nb: &str, loss: &str| table_model("X", "Y", uni, loss).replace("\"X\"", lik).replace("\"Y\"", nb);
    let (lik, nb) = ("[[0.5, 0.5, 0.0], [0.2, 0.3, 0.5]]", "[[0, 1], [1, 2]]");
    expect_input_error(
        dir,
        &inline("[[0.5, 0.4, 0.0], [0.2, 0.3, 0.5]]", nb, sq),
        &["model.toml", "observation.likelihood: row 1 sums to"],
    );
    expect_input_error(
        dir,
        &inline("[[0.5, 0.5], [0.2, 0.3, 0.5]]", nb, sq),
        &["observation.likelihood: row 2 has 3 values but row 1 has 2"],
    );
    expect_input_error(dir, &inline(lik, "[[0, 1], [1, 3]]", sq), &["observation.neighbours: row 2: index 3"]);
    expect_input_error(dir, &inline("3", nb, sq), &["model.toml", "a CSV file path (a string) or an inline matrix"]);
    expect_input_error(
        dir,
        &inline(lik, nb, "kind = \"matrix\"\nvalues = [[0.0, 1.0]]"),
        &["loss.values: expected 2 rows × 2 columns"],
    );
    expect_input_error(
        dir,
        &inline(lik, nb, "kind = \"matrix\"\nvalues = [[0.0, 1.0]]\nfile = \"loss.csv\""),
        &["loss", "exactly one of `values` and `file`"],
    );
    let grid_both =
        inline(lik, nb, sq).replace("values = [0.25, 0.75] }", "values = [0.25, 0.75], points = [[0.25], [0.75]] }");
    expect_input_error(dir, &grid_both, &["parameter.grid", "exactly one of `values`, `points` and `file`"]);
    let ragged = inline(lik, nb, sq).replace("values = [0.25, 0.75] }", "points = [[0.25], [0.75, 0.1]] }");
    expect_input_error(dir, &ragged, &["parameter.grid.points: row 2 has 2 values but row 1 has 1"]);
    // Zero-one loss with a negative tolerance.
    expect_input_error(
        dir,
        &table_model("lik.csv", "nb.csv", uni, "kind = \"zero-one\"\ntolerance = -0.1"),
        &["model.toml", "loss.tolerance"],
    );

    let multinomial = |alpha: &str, grid: &str| {
        format!(
            "name = \"m\"\nepsilon = [1.0]\n[parameter]\ngrid = {grid}\nprior = {{ kind = \"dirichlet\", alpha = {alpha} }}\n[observation]\nfamily = \"multinomial\"\ncategories = 3\nrecords = 4\n[loss]\nkind = \"squared\"\n"
        )
    };
    let simplex = r#"{ kind = "simplex", resolution = 4 }"#;
    // Dirichlet with a non-positive α, and with the wrong length.
    expect_input_error(
        dir,
        &multinomial("[1.0, 0.0, 2.0]", simplex),
        &["model.toml", "parameter.prior.alpha[1]", "> 0"],
    );
    expect_input_error(dir, &multinomial("[1.0, -1.0, 2.0]", simplex), &["parameter.prior.alpha[1]"]);
    expect_input_error(
        dir,
        &multinomial("[1.0, 2.0]", simplex),
        &["parameter.prior.alpha", "one entry per category (3)"],
    );
    // An explicit grid file whose point is off the simplex.
    std::fs::write(dir.join("pts.csv"), "0.2,0.3,0.5\n0.5,0.5,0.5\n").unwrap();
    expect_input_error(
        dir,
        &multinomial("[1.0, 1.0, 1.0]", r#"{ kind = "explicit", file = "pts.csv" }"#),
        &["pts.csv", "parameter.grid.file", "point 2 is not in the simplex"],
    );
    // A 1-D grid for the multinomial.
    expect_input_error(
        dir,
        &multinomial("[1.0, 1.0, 1.0]", r#"{ kind = "midpoint", points = 5 }"#),
        &["parameter.grid", "simplex"],
    );

    let poisson = |cap: u64, extra: &str| {
        format!(
            "name = \"p\"\nepsilon = [1.0]\n{extra}\n[parameter]\nlower = 0.0\nupper = 3.0\ngrid = {{ kind = \"midpoint\", points = 5 }}\nprior = {{ kind = \"uniform\" }}\n[observation]\nfamily = \"poisson\"\nrecords = 4\ncap = {cap}\n[loss]\nkind = \"squared\"\n"
        )
    };
    // A cap c = 0.
    expect_input_error(dir, &poisson(0, ""), &["model.toml", "observation.cap", "at least 1"]);
    // δ out of range.
    expect_input_error(dir, &poisson(2, "delta = 1.5"), &["model.toml", "delta", "[0, 1)"]);
    expect_input_error(dir, &poisson(2, "delta = -0.1"), &["delta"]);
    // Unknown objective.
    expect_input_error(dir, &poisson(2, "objective = \"median\""), &["model.toml", "objective"]);
    // Exact costs: only with binomial + conjugate prior, own output grid, Bayes objective.
    let exact = |extra: &str, output: &str| {
        format!(
            "name = \"e\"\nepsilon = [1.0]\n{extra}\n[parameter]\ngrid = {{ kind = \"exact\" }}\nprior = {{ kind = \"beta\", a = 2.0, b = 2.0 }}\n[observation]\nfamily = \"binomial\"\ntrials = 5\n{output}\n[loss]\nkind = \"squared\"\n"
        )
    };
    expect_input_error(dir, &exact("", ""), &["model.toml", "output.grid", "exact"]);
    expect_input_error(
        dir,
        &exact("objective = \"minimax\"", "[output]\ngrid = { kind = \"midpoint\", points = 5 }"),
        &["minimax", "parameter.grid.kind"],
    );
}

#[test]
fn every_model_spec_round_trips_through_toml() {
    for f in model_files() {
        let spec = ubapp::model::ModelSpec::from_file(&f).unwrap();
        let again = ubapp::model::ModelSpec::from_toml(&spec.to_toml(), "round trip").unwrap();
        assert_eq!(spec, again, "{}", f.display());
    }
}

#[test]
fn the_core_models_solve_at_one_eps() {
    // The four models that predate this file's set, each at its first ε (the full lists are
    // `make demo`'s job); the vote-share-3way model has its own test above.
    for f in model_files() {
        let name = f.file_stem().unwrap().to_string_lossy().into_owned();
        if BREADTH_MODELS.contains(&name.as_str()) || name == "vote-share-3way" {
            continue;
        }
        let m = Model::load(&f).unwrap();
        let s = &solve_model(&m, Some(&m.epsilons[..1]), SolverChoice::HighsSimplex).unwrap()[0];
        assert!(s.status.has_solution(), "{name}: {}", s.status);
        let gap = s.relative_gap.unwrap();
        assert!((-1e-9..=1e-6).contains(&gap), "{name}: gap {gap}");
    }
}
