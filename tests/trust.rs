//! Checking an artifact against the model the deployer trusts: a forged file whose embedded model
//! was swapped verifies on its own (its weights are private *for that model*), and is refused under
//! `--model` and `--fingerprint`; older files without a stored fingerprint still load.

mod common;

use common::{assert_input_error, stderr, stdout, ubapp_in, write_file};
use ubapp::mechanism::Release;
use ubapp::model::spec::{MatrixSource, ObservationSpec};
use ubapp::model::{Model, ModelSpec};

/// The deployer's model: K = 100 binomial trials, 16 midpoint grid points, ε = 1.
fn trusted_text() -> String {
    common::binomial_toml(100, 16, "squared", &[1.0])
}

/// The attack: the same grids and prior, but a `table` family with the binomial likelihood and a
/// single neighbour pair (0, 1); weights identical in columns 0 and 1 and a deterministic release
/// (all weight on the nearest output) in the other 99 of the 101 columns.
fn forged(trusted: &Model) -> Release {
    let q = trusted.family().likelihood_matrix(trusted.theta()); // |Y| × M
    let mut spec: ModelSpec = trusted.spec().clone();
    spec.observation = ObservationSpec::Table {
        likelihood: MatrixSource::Inline(q.t().rows().into_iter().map(|r| r.to_vec()).collect()),
        neighbours: MatrixSource::Inline(vec![vec![0.0, 1.0]]),
    };
    let model = Model::from_spec(spec).expect("the forged model validates");
    let (n_obs, n_out, total) = (101usize, 16usize, 1u64 << 52);
    let columns: Vec<Vec<u64>> = (0..n_obs)
        .map(|y| {
            let mut c = vec![0u64; n_out];
            if y < 2 {
                c.iter_mut().for_each(|w| *w = total / n_out as u64);
            } else {
                c[(y * n_out / n_obs).min(n_out - 1)] = total;
            }
            c
        })
        .collect();
    Release::from_weights(model, 1.0, total, columns).expect("private for its own embedded model")
}

#[test]
fn a_forged_artifact_verifies_alone_and_is_refused_against_the_trusted_model() {
    let trusted = common::parse_model(&trusted_text());
    let forged = forged(&trusted);
    let text = forged.to_json().to_string();
    let artifact = Release::from_json_str(&text, "forged.json").expect("it verifies against itself");
    assert_ne!(artifact.fingerprint(), trusted.fingerprint(), "the fingerprints must differ");
    let e = artifact.check_model("forged.json", &trusted, "model.toml").unwrap_err();
    assert!(e.is_input(), "{e}");
    let msg = e.to_string();
    assert!(msg.contains("forged.json") && msg.contains("observation.family: table here, binomial"), "{msg}");
    let e = artifact.check_fingerprint("forged.json", &trusted.fingerprint()).unwrap_err();
    assert!(e.is_input() && e.to_string().contains("is not the pinned fingerprint"), "{e}");

    // Through the binary: verify alone says what it checked; --model and --fingerprint refuse.
    let dir = tempfile::tempdir().unwrap();
    write_file(dir.path(), "model.toml", &trusted_text());
    write_file(dir.path(), "forged.json", &text);
    let o = ubapp_in(dir.path(), &["verify", "forged.json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("embedded in the file only"), "{}", stdout(&o));
    let o = ubapp_in(dir.path(), &["verify", "forged.json", "--model", "model.toml"]);
    assert_input_error(&o, &["forged.json", "not the trusted model model.toml", "observation.family"]);
    let fp = trusted.fingerprint();
    for cmd in [
        vec!["verify", "forged.json", "--fingerprint", fp.as_str(), "--max-eps", "1"],
        vec!["sample", "forged.json", "--y", "50", "--seed", "1", "--model", "model.toml"],
        vec!["audit", "forged.json", "--samples", "100", "--model", "model.toml"],
        vec!["posterior", "forged.json", "--release", "0.505", "--model", "model.toml"],
    ] {
        let o = ubapp_in(dir.path(), &cmd);
        assert_input_error(&o, &["forged.json"]);
        assert!(stdout(&o).is_empty(), "{cmd:?} released or printed something: {}", stdout(&o));
    }
}

#[test]
fn a_genuine_artifact_passes_its_trusted_model_and_fingerprint() {
    let dir = tempfile::tempdir().unwrap();
    write_file(dir.path(), "model.toml", &common::binomial_toml(8, 12, "squared", &[0.5, 1.0]));
    let o = ubapp_in(dir.path(), &["solve", "model.toml", "--eps", "1", "--out", "mech.json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let trusted = Model::load(&dir.path().join("model.toml")).unwrap();
    let fp = trusted.fingerprint();
    assert!(stdout(&o).contains(&fp), "solve --out prints the fingerprint: {}", stdout(&o));
    let o =
        ubapp_in(dir.path(), &["verify", "mech.json", "--model", "model.toml", "--fingerprint", &fp, "--max-eps", "1"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("checked against the trusted model model.toml and the pinned fingerprint and ε ≤ 1"),
        "{}",
        stdout(&o)
    );

    // The posterior of a release drawn from the file, both checked against the same trusted model.
    let o = ubapp_in(dir.path(), &["sample", "mech.json", "--y", "4", "--seed", "1", "--model", "model.toml"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let released = stdout(&o).lines().next().unwrap_or_default().trim().to_string();
    let o = ubapp_in(dir.path(), &["posterior", "mech.json", "--release", &released, "--model", "model.toml"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("posterior"), "{}", stdout(&o));

    // ε may differ only downward: a trusted model listing only ε = 0.5 refuses the ε = 1 file.
    write_file(dir.path(), "strict.toml", &common::binomial_toml(8, 12, "squared", &[0.5]));
    let o = ubapp_in(dir.path(), &["verify", "mech.json", "--model", "strict.toml"]);
    assert_input_error(&o, &["eps", "larger than every ε the trusted model lists"]);
    // Another prior is another problem.
    let other = common::binomial(8, 12, "squared", &[1.0]).prior("{ kind = \"beta\", a = 2.0, b = 2.0 }").toml();
    write_file(dir.path(), "other.toml", &other);
    let o = ubapp_in(dir.path(), &["verify", "mech.json", "--model", "other.toml"]);
    assert_input_error(&o, &["parameter.prior"]);
    let o = ubapp_in(dir.path(), &["verify", "mech.json", "--fingerprint", "abc", "--max-eps", "1"]);
    assert_input_error(&o, &["--fingerprint", "64 hexadecimal digits"]);

    // A file written before fingerprints existed (no `model_fingerprint`) still loads and gets one.
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("mech.json")).unwrap()).unwrap();
    assert_eq!(v["model_fingerprint"].as_str(), Some(fp.as_str()));
    v.as_object_mut().unwrap().remove("model_fingerprint");
    let old = Release::from_json_str(&v.to_string(), "old.json").unwrap();
    assert_eq!(old.fingerprint(), fp);
    // A stored fingerprint that does not match the embedded model is refused.
    v["model_fingerprint"] = "0".repeat(64).into();
    let e = Release::from_json_str(&v.to_string(), "edited.json").unwrap_err().to_string();
    assert!(e.contains("model_fingerprint does not match the embedded model"), "{e}");
}

#[test]
fn the_fingerprint_ignores_names_and_eps_and_sees_csv_data_inline() {
    let a = common::parse_model(&common::binomial_toml(8, 12, "squared", &[1.0]));
    let b = common::parse_model(&common::binomial(8, 12, "squared", &[0.1, 3.0]).name("renamed").toml());
    assert_eq!(a.fingerprint(), b.fingerprint());
    assert_eq!(a.first_difference(&b), None);
    let c = common::parse_model(&common::binomial_toml(9, 12, "squared", &[1.0]));
    assert_ne!(a.fingerprint(), c.fingerprint());
    assert!(a.first_difference(&c).unwrap().starts_with("the observation space"), "{:?}", a.first_difference(&c));
    // Known answer: the canonical form is stable (a change of form must change the tag).
    assert!(a.canonical_form().starts_with("ubapp-model-v1\n{"));
    assert_eq!(a.fingerprint().len(), 64);
}
