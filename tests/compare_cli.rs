//! `ubapp compare` end to end: files written, columns present, bad input refused with exit code 2
//! (one sentence for the library's checks), nothing written on failure; the UBaPP row of an
//! (ε, δ) model labelled so; a minimax model's table saying what it ranks on. (Other families
//! and several parties: tests/parties_cli.rs.)

mod common;

use std::process::{Command, Output};

fn ubapp() -> Command {
    Command::new(env!("CARGO_BIN_EXE_ubapp"))
}

fn shipped(model: &str) -> String {
    format!("{}/models/{model}", env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn compare_writes_csv_and_plots() {
    let tmp = tempfile::tempdir().unwrap();
    let model = common::small_binomial_file(tmp.path());
    let out = tmp.path().join("out");
    let o = ubapp()
        .args(["compare", model.to_str().unwrap(), "--trials", "8,12", "--methods", "ubapp,lbapp,geometric,cape,dsaa"])
        .args(["--out", out.to_str().unwrap(), "--json", "--seed", "3"])
        .output()
        .unwrap();
    assert!(o.status.success(), "stderr: {}", String::from_utf8_lossy(&o.stderr));
    let rows: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    // 2 K × 2 ε × 5 methods.
    assert_eq!(rows.as_array().unwrap().len(), 20);
    let csv = std::fs::read_to_string(out.join("risk.csv")).unwrap();
    let header = csv.lines().next().unwrap();
    for col in ["method", "eps", "delta", "trials", "bayes_risk", "true_risk", "privacy", "risk_method"] {
        assert!(header.split(',').any(|c| c == col), "column {col} missing from {header}");
    }
    assert!(csv.lines().any(|l| l.starts_with("cape,eps-delta,")), "CAPE is labelled (ε, δ)");
    let plots = [
        "plots/risk_vs_eps_K8.png",
        "plots/risk_vs_eps_K12.svg",
        "plots/risk_vs_trials_eps0.1.png",
        "mse_theta/mse_theta_eps1_K12.png",
        "heatmaps/heatmap_ubapp_eps0.1_K8.svg",
    ];
    for f in plots.iter().chain(&["data/mse_theta.csv", "index.html"]) {
        let meta = std::fs::metadata(out.join(f)).unwrap_or_else(|_| panic!("{f} was not written"));
        assert!(meta.len() > 1000, "{f} is too small");
    }
    let png = std::fs::read(out.join("plots/risk_vs_eps_K8.png")).unwrap();
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    // The top level holds the table, the index and sub-folders only (and the marker that lets the
    // next run replace the directory whole).
    let mut top: Vec<String> =
        std::fs::read_dir(&out).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    top.sort();
    assert_eq!(top, [".ubapp-output", "data", "heatmaps", "index.html", "mse_theta", "plots", "risk.csv"]);
    // The index links every plot and the table, and shows every row.
    let index = std::fs::read_to_string(out.join("index.html")).unwrap();
    for f in plots.iter().filter(|f| f.ends_with(".png")).chain(&["risk.csv", "data/mse_theta.csv"]) {
        assert!(index.contains(&format!("\"{f}\"")), "index.html does not link {f}");
    }
    let ranked = &index[index.find("<h2>Every method, ranked</h2>").expect("the full table")..];
    assert_eq!(ranked.matches("<tr><td").count(), 20);
    // The summary: one row per (K, ε).
    let summary = &index[index.find("<h2>Best method per K and ε</h2>").expect("the summary")..];
    assert_eq!(summary[..summary.find("</table>").unwrap()].matches("<tr><td").count(), 4);
    // The curve data: one line per (ε, K, method, θ), 101 θ each.
    let curves = std::fs::read_to_string(out.join("data/mse_theta.csv")).unwrap();
    assert_eq!(curves.lines().count(), 1 + 20 * 101);
    // No temporary files are left behind.
    for d in ["", "plots", "mse_theta", "heatmaps", "data"] {
        assert!(std::fs::read_dir(out.join(d)).unwrap().all(|e| !e
            .unwrap()
            .file_name()
            .to_string_lossy()
            .ends_with(".tmp")));
    }
}

/// Run `compare` on the small model with `args` and `--out` into a directory that must stay absent;
/// asserts exit code 2 and that nothing was written, and returns stderr.
fn refused(args: &[&str]) -> String {
    let tmp = tempfile::tempdir().unwrap();
    let model = common::small_binomial_file(tmp.path());
    let out = tmp.path().join("never");
    let o: Output =
        ubapp().args(["compare", model.to_str().unwrap(), "--out", out.to_str().unwrap()]).args(args).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
    assert!(!out.exists(), "{args:?}: nothing may be written on bad input");
    err
}

/// A refusal by the library's checks: one sentence containing `needle`.
fn refused_in_one_sentence(args: &[&str], needle: &str) {
    let err = refused(args);
    assert!(err.contains(needle), "{args:?}: {err}");
    assert_eq!(err.trim().lines().count(), 1, "{args:?}: one sentence expected, got {err}");
}

/// A refusal by clap while parsing a flag: its first line names the flag and the bad value.
fn refused_by_the_parser(args: &[&str], flag: &str, value: &str) {
    let err = refused(args);
    let first = err.lines().next().unwrap_or_default();
    assert!(first.starts_with("error: "), "{args:?}: {err}");
    assert!(first.contains(flag) && first.contains(&format!("'{value}'")), "{args:?}: {err}");
}

#[test]
fn an_unknown_method_is_refused_naming_it() {
    refused_by_the_parser(&["--methods", "ubapp,nonsense"], "--methods", "nonsense");
}

#[test]
fn an_empty_eps_list_is_refused() {
    refused_by_the_parser(&["--eps", ""], "--eps", "");
}

#[test]
fn a_negative_eps_is_refused_naming_its_index() {
    refused_in_one_sentence(&["--eps", "0.1,-2"], "--eps[1] must be a finite number > 0");
}

#[test]
fn a_non_number_eps_is_refused_naming_it() {
    refused_by_the_parser(&["--eps", "0.1,abc"], "--eps", "abc");
}

#[test]
fn zero_trials_are_refused() {
    refused_in_one_sentence(&["--trials", "8,0"], "--trials must be at least 1");
}

#[test]
fn parties_that_do_not_divide_k_are_refused() {
    refused_in_one_sentence(&["--parties", "3"], "--parties 3 does not divide K = 8");
}

#[test]
fn a_delta_outside_zero_one_is_refused() {
    refused_in_one_sentence(&["--delta", "0"], "--delta must be a number in (0, 1)");
}

#[test]
fn compare_labels_the_ubapp_row_of_an_eps_delta_model_eps_delta() {
    let o = ubapp()
        .args(["compare", &shipped("bernoulli-approx-dp-k30.toml"), "--methods", "ubapp", "--eps", "0.5", "--json"])
        .output()
        .unwrap();
    assert!(o.status.success(), "stderr: {}", String::from_utf8_lossy(&o.stderr));
    let rows: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(rows[0]["method"], "ubapp");
    assert_eq!(rows[0]["privacy"], "eps-delta", "{rows}");
    assert_eq!(rows[0]["delta"], 0.001, "the model's δ: {rows}");
}

#[test]
fn compare_on_a_minimax_model_says_it_ranks_on_bayes_risk() {
    let o = ubapp()
        .args(["compare", &shipped("bernoulli-minimax-k30.toml"), "--methods", "ubapp,lbapp", "--eps", "2"])
        .output()
        .unwrap();
    assert!(o.status.success(), "stderr: {}", String::from_utf8_lossy(&o.stderr));
    let table = String::from_utf8_lossy(&o.stdout);
    let note = table.lines().find(|l| l.starts_with("note: ")).unwrap_or_else(|| panic!("no note in\n{table}"));
    assert!(note.contains("minimax") && note.contains("ranked on Bayes risk"), "{note}");
}

#[test]
fn compare_on_a_minimax_model_gives_the_ubapp_rows_worst_case_risk() {
    let o = ubapp()
        .args(["compare", &shipped("bernoulli-minimax-k30.toml"), "--methods", "ubapp", "--eps", "2", "--json"])
        .output()
        .unwrap();
    assert!(o.status.success(), "stderr: {}", String::from_utf8_lossy(&o.stderr));
    let rows: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    // The note's fields are typed in JSON: the worst case is a number beside the solver's status.
    let note = &rows[0]["note"];
    let worst = note["minimax_worst_case"].as_f64().unwrap_or_else(|| panic!("no worst case in {note}"));
    assert!(worst > 0.0 && worst >= rows[0]["bayes_risk"].as_f64().unwrap() * (1.0 - 1e-9), "{note}");
    assert_eq!(note["solve"]["status"], "optimal", "{note}");
}

/// The page names its model (name, description, the model in words, K and ε), puts the best
/// method per ε first, captions every plot with what it shows (not its file name) and ranks
/// every row.
#[test]
fn the_index_names_the_model_and_ranks_the_methods() {
    let tmp = tempfile::tempdir().unwrap();
    let model = common::small_binomial_file(tmp.path());
    let out = tmp.path().join("out");
    let o = ubapp()
        .args(["compare", model.to_str().unwrap(), "--methods", "ubapp,lbapp,geometric,cape"])
        .args(["--out", out.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(o.status.success(), "stderr: {}", String::from_utf8_lossy(&o.stderr));
    let page = std::fs::read_to_string(out.join("index.html")).unwrap();
    assert!(page.contains("<title>small: UBaPP against the literature"), "{page}");
    assert!(page.contains("<h1>small: "), "{page}");
    assert!(page.contains("Data: the binomial family (trials = 8)"), "the model in words");
    assert!(page.contains("Compared at ε = 0.1 and 1, K = 8"), "ε and K");
    let best = page.find("<h2>Best method per ε</h2>").expect("a summary");
    let plots = page.find("<h2>Risk vs ε and vs K</h2>").expect("the plots");
    let table = page.find("<h2>Every method, ranked</h2>").expect("the full table");
    assert!(best < plots && plots < table, "summary, plots, then the table");
    // Every figure's caption says what it shows.
    let captions: Vec<&str> = page.split("<figcaption>").skip(1).map(|c| c.split(" (<a").next().unwrap()).collect();
    assert!(captions.len() >= 3, "{page}");
    for c in &captions {
        assert!(!c.ends_with(".png") && c.len() > 40, "caption {c:?}");
    }
    assert!(captions.iter().any(|c| c.contains("colour is √P")), "the heat map's caption: {captions:?}");
    // Ranks 1..4 in each ε's block.
    assert_eq!(page.matches("<td>4</td><td class=\"l\">").count(), 2, "{page}");
}

/// Every method of the binomial table at ε = 0.01, 0.1, 1 and 5: the risk-vs-ε plot draws UBaPP
/// and the 7 lowest of the 15 others, labels every ε on its axis, and both the legend and the
/// index's caption say that risk.csv has them all.
#[test]
fn a_crowded_comparison_plots_the_best_few_and_labels_every_eps() {
    let tmp = tempfile::tempdir().unwrap();
    let model = common::small_binomial_file(tmp.path());
    let out = tmp.path().join("out");
    let o = ubapp()
        .args(["compare", model.to_str().unwrap(), "--eps", "0.01,0.1,1,5", "--trials", "12"])
        .args(["--out", out.to_str().unwrap(), "-q"])
        .output()
        .unwrap();
    assert!(o.status.success(), "stderr: {}", String::from_utf8_lossy(&o.stderr));
    let csv = std::fs::read_to_string(out.join("risk.csv")).unwrap();
    let methods: std::collections::BTreeSet<&str> = csv.lines().skip(1).map(|l| l.split(',').next().unwrap()).collect();
    assert_eq!(methods.len(), 16, "{methods:?}");
    let svg = std::fs::read_to_string(out.join("plots/risk_vs_eps_K12.svg")).unwrap();
    let text: Vec<&str> = svg.lines().map(str::trim).collect();
    for label in ["0.01", "0.1", "1", "5"] {
        assert!(text.contains(&label), "no ε tick {label}");
    }
    assert!(svg.contains("7 of the 15 other"), "no note of the curves left out");
    // Raw Laplace noise on the count is far above the others at small ε: left out.
    assert!(!text.contains(&"laplace-count"), "the raw laplace-count is drawn");
    let index = std::fs::read_to_string(out.join("index.html")).unwrap();
    assert!(index.contains("7 of the 15 other methods shown (the lowest on average); risk.csv has all"));
}
