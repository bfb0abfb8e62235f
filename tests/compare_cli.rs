//! `ubapp compare` end to end: files written, columns present, bad input refused with one sentence
//! and exit code 2, nothing written on failure.

use std::process::Command;

fn ubapp() -> Command {
    Command::new(env!("CARGO_BIN_EXE_ubapp"))
}

fn small_model(dir: &std::path::Path) -> std::path::PathBuf {
    let path = dir.join("small.toml");
    std::fs::write(
        &path,
        "name = \"small\"\nepsilon = [0.1, 1.0]\n[parameter]\nlower = 0.0\nupper = 1.0\n\
         grid = { kind = \"midpoint\", points = 12 }\nprior = { kind = \"uniform\" }\n\
         [observation]\nfamily = \"binomial\"\ntrials = 8\n[loss]\nkind = \"squared\"\n",
    )
    .unwrap();
    path
}

#[test]
fn compare_writes_csv_and_plots() {
    let tmp = tempfile::tempdir().unwrap();
    let model = small_model(tmp.path());
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
    for f in [
        "risk_vs_eps_K8.png",
        "risk_vs_eps_K12.svg",
        "risk_vs_trials_eps0.1.png",
        "mse_theta_eps1_K12.png",
        "heatmap_ubapp_eps0.1_K8.svg",
    ] {
        let meta = std::fs::metadata(out.join(f)).unwrap_or_else(|_| panic!("{f} was not written"));
        assert!(meta.len() > 1000, "{f} is too small");
    }
    let png = std::fs::read(out.join("risk_vs_eps_K8.png")).unwrap();
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    // No temporary files are left behind.
    assert!(std::fs::read_dir(&out).unwrap().all(|e| !e.unwrap().file_name().to_string_lossy().ends_with(".tmp")));
}

#[test]
fn compare_refuses_bad_input_with_one_sentence_and_exit_2() {
    let tmp = tempfile::tempdir().unwrap();
    let model = small_model(tmp.path());
    let out = tmp.path().join("never");
    for (args, needle) in [
        (vec!["--methods", "ubapp,nonsense"], "unknown method \"nonsense\""),
        (vec!["--eps", ""], "--eps must list at least one"),
        (vec!["--eps", "0.1,-2"], "--eps[1] must be a finite number > 0"),
        (vec!["--eps", "0.1,abc"], "\"abc\" is not a number"),
        (vec!["--trials", "8,0"], "--trials must be at least 1"),
        (vec!["--parties", "3"], "--parties 3 does not divide K = 8"),
        (vec!["--delta", "0"], "--delta must be a number in (0, 1)"),
    ] {
        let o = ubapp()
            .args(["compare", model.to_str().unwrap(), "--out", out.to_str().unwrap()])
            .args(&args)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: one sentence expected, got {err}");
        assert!(!out.exists(), "{args:?}: nothing may be written on bad input");
    }
}
