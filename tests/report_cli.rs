//! `ubapp report`: the page's sections and numbers (equal to `solve --json`), its self-containment,
//! the artifacts it certifies, and the output-directory rule (a new, empty or earlier-report
//! directory, replaced whole; anything else refused with nothing written).

mod common;

use common::{assert_input_error, assert_success, binomial, model_file, stdout_json, ubapp};

/// A click-through-like model small enough for a quick test: K = 20, Beta(2, 30) prior, two ε.
fn model_text() -> String {
    binomial(20, 60, "squared", &[0.5, 2.0]).name("ctr-small").prior("{ kind = \"beta\", a = 2.0, b = 30.0 }").toml()
}

fn e6(v: &serde_json::Value) -> String {
    format!("{:.6e}", v.as_f64().unwrap_or_else(|| panic!("not a number: {v}")))
}

#[test]
fn report_holds_every_section_and_the_numbers_of_solve_json() {
    let (dir, model) = model_file(&model_text());
    let out = dir.path().join("report");
    let o = ubapp(&["report", model.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert_success(&o);
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    for section in
        ["The model", "Privacy", "Optimal risks", "Worst case", "Figures", "Baselines", "Certificates", "Reproduce"]
    {
        assert!(html.contains(&format!("<h2>{section}</h2>")), "report.html lacks {section}");
        assert!(md.contains(&format!("## {section}\n")), "report.md lacks {section}");
    }
    // Every number of `solve --json` is on both pages, printed the same way.
    let solve = ubapp(&["solve", model.to_str().unwrap(), "--json"]);
    assert_success(&solve);
    let rows = stdout_json(&solve);
    for row in rows.as_array().unwrap() {
        for key in ["bayes_risk", "prior_risk", "non_private_risk", "rmse", "worst_case_risk"] {
            let v = e6(&row[key]);
            assert!(html.contains(&v) && md.contains(&v), "{key} = {v} missing at ε = {}", row["eps"]);
        }
        let theta = format!("{:.4}", row["worst_case_theta"][0].as_f64().unwrap());
        assert!(html.contains(&theta), "worst-case θ {theta} missing");
    }
    // The robustness warning of this design is on the page.
    assert!(html.contains("class=\"warn\"") && html.contains("minimax"));
    // Self-contained: styles inline, plots as inline SVG, nothing fetched.
    assert!(html.matches("<svg").count() >= 3, "too few inline plots");
    assert!(!html.contains("<img") && !html.contains("<link") && !html.contains("<script"));
    let without_ns = html.replace("http://www.w3.org/2000/svg", "").replace("http://www.w3.org/1999/xlink", "");
    assert!(!without_ns.contains("http://") && !without_ns.contains("https://"), "external reference in report.html");
    // The baselines table is compare's, with its rows.
    let csv = std::fs::read_to_string(out.join("risk.csv")).unwrap();
    let geometric = csv.lines().find(|l| l.starts_with("geometric,")).expect("a geometric row");
    let risk: f64 = geometric.split(',').nth(6).unwrap().parse().unwrap();
    assert!(html.contains(&format!("{risk:.6e}")));
    // Each artifact verifies, and its certificate is the one on the page.
    for eps in ["0.5", "2"] {
        let file = out.join(format!("artifacts/mechanism-eps{eps}.json"));
        let v = ubapp(&["verify", file.to_str().unwrap(), "--json"]);
        assert_success(&v);
        let cert = stdout_json(&v)["certified_eps"].as_f64().unwrap();
        assert!(html.contains(&format!("<td>{cert}</td>")), "certified ε {cert} not on the page");
    }
    // The commands that reproduce the numbers.
    assert!(html.contains(&format!("ubapp solve {} --eps 0.5,2 --json", model.display())));
    // The artifact is checked against the model, as a deployer would.
    assert!(md.contains(&format!("ubapp verify mechanism-eps0.5.json --model {}", model.display())), "{md}");
    // The Markdown links the plots it shows.
    for line in md.lines().filter(|l| l.starts_with("![")) {
        let file = line.rsplit('(').next().unwrap().trim_end_matches(')');
        assert!(out.join(file).is_file(), "{file} is linked but missing");
    }
}

#[test]
fn report_directory_rule() {
    let (dir, model) = model_file(&binomial(6, 12, "squared", &[1.0]).toml());
    let m = model.to_str().unwrap();
    // A directory with someone's files is refused before any work, and left alone.
    let theirs = dir.path().join("theirs");
    std::fs::create_dir(&theirs).unwrap();
    std::fs::write(theirs.join("notes.txt"), "keep me").unwrap();
    assert_input_error(&ubapp(&["report", m, "--out", theirs.to_str().unwrap()]), &["--out", "not empty"]);
    assert_eq!(std::fs::read_to_string(theirs.join("notes.txt")).unwrap(), "keep me");
    assert_eq!(std::fs::read_dir(&theirs).unwrap().count(), 1);
    // A new directory is written; running again replaces it whole, but a file added to it since
    // (not ubapp's) is never deleted: the run is refused until it is moved away.
    let out = dir.path().join("r");
    assert_success(&ubapp(&["report", m, "--out", out.to_str().unwrap()]));
    std::fs::write(out.join("stray.txt"), "x").unwrap();
    assert_input_error(&ubapp(&["report", m, "--out", out.to_str().unwrap(), "--eps", "2"]), &["stray.txt"]);
    assert_eq!(std::fs::read_to_string(out.join("stray.txt")).unwrap(), "x");
    std::fs::remove_file(out.join("stray.txt")).unwrap();
    assert_success(&ubapp(&["report", m, "--out", out.to_str().unwrap(), "--eps", "2"]));
    assert!(out.join("artifacts/mechanism-eps2.json").is_file() && !out.join("artifacts/mechanism-eps1.json").exists());
    // No temporary directory is left beside it.
    let names: Vec<String> =
        std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    assert!(names.iter().all(|n| !n.ends_with(".tmp") && !n.ends_with(".old")), "{names:?}");
    // A bad model is refused with nothing written.
    let bad = dir.path().join("bad.toml");
    std::fs::write(&bad, "name = \"x\"\n").unwrap();
    let never = dir.path().join("never");
    let o = ubapp(&["report", bad.to_str().unwrap(), "--out", never.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(!never.exists());
}

#[test]
fn report_on_a_model_compare_does_not_handle_explains_the_missing_baselines() {
    let out_dir = tempfile::tempdir().unwrap();
    let out = out_dir.path().join("r");
    let model = common::bundled("vote-share-3way-small");
    let o = ubapp(&["report", model.to_str().unwrap(), "--out", out.to_str().unwrap(), "--eps", "1"]);
    assert_success(&o);
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(html.contains("No baselines:"), "the reason is given");
    assert!(html.contains("<svg"), "the simplex heat map is drawn");
}

/// `report`'s flags are checked before the model is read or anything solved: a bad --eps is named
/// (exit 2, one line) even when the model file does not exist, and nothing is written.
#[test]
fn report_checks_its_eps_before_reading_the_model() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("report");
    let o = ubapp(&["report", "missing.toml", "--out", out.to_str().unwrap(), "--eps", "0.5,-1"]);
    assert_input_error(&o, &["--eps", "-1"]);
    assert!(!out.exists(), "a refused report writes nothing");
}

/// A party model's report compares the parties' releases (the numbers `compare` gives for it, by
/// the command the page names), says the optimal risks are one party's, and names its own
/// directory in the command that reproduces it.
#[test]
fn a_party_models_report_shows_the_party_comparison_and_reproduces_it() {
    let text = binomial(4, 12, "squared", &[0.5]).name("p").toml() + "[parties]\ncount = 3\n";
    let (dir, model) = model_file(&text);
    let out = dir.path().join("my-report");
    let o = ubapp(&["report", model.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert_success(&o);
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(html.contains("<h2>Several data holders</h2>"), "no party section");
    assert!(html.contains("The model has 3 parties: these are one party&#39;s optimal mechanism"), "{html}");
    assert!(html.contains(&format!("--out {}", out.display())), "the report's own directory");
    // The page's table is risk.csv, and `compare` on the model gives the same rows.
    let csv = std::fs::read_to_string(out.join("risk.csv")).unwrap();
    assert!(csv.lines().any(|l| l.starts_with("geometric-shares,")), "{csv}");
    let c = ubapp(&["compare", model.to_str().unwrap(), "--eps", "0.5", "--seed", "0", "--json"]);
    assert_success(&c);
    let rows = stdout_json(&c)["rows"].as_array().unwrap().clone();
    assert_eq!(rows.len(), csv.lines().count() - 1);
    for r in &rows {
        let risk = e6(&r["bayes_risk"]);
        let method = r["method"].as_str().unwrap();
        assert!(html.contains(&format!("<td>{risk}</td>")), "{method}'s risk {risk} from compare is not on the page");
    }
}
