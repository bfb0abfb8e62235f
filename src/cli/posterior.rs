//! `ubapp posterior FILE --release VALUE [--release VALUE …] [--level 0.95] [--json]
//! [--model MODEL.toml] [--fingerprint HEX]`: the exact posterior of θ on the model's grid given
//! independent releases of a verified mechanism (checked against the trusted model when given).

use std::path::Path;

use super::trust::TrustArgs;
use ubapp::mechanism::{Mechanism, OutputMatch, Posterior, Release};
use ubapp::{Error, Result};

/// Run the command.
pub fn run(file: &Path, releases: &[String], level: f64, json: bool, trust: &TrustArgs) -> Result<()> {
    if !(level.is_finite() && level > 0.0 && level < 1.0) {
        return Err(Error::argument("--level", format!("must lie strictly between 0 and 1 (got {level})")));
    }
    // The artifact against the deployer's model first (a forged file is refused before any output).
    let (artifact, checked) = super::trust::load_for_release(file, trust, "posterior")?;
    let m = match artifact {
        Release::Dense(m) => m,
        Release::Compact(_) => {
            return Err(Error::argument(
                "FILE",
                format!(
                    "{} is the compact geometric + remap form; `posterior` reads dense mechanism files (solve a model small enough for the dense route)",
                    file.display()
                ),
            ))
        }
    };
    // Notes on rounded releases are printed once the posterior stands: a refusal stays one line.
    let mut notes = Vec::new();
    let outputs = releases
        .iter()
        .map(|r| {
            let coords = super::sample::parse_numbers(r, "--release")?;
            let refuse = |problem: String| Err(Error::argument("--release", problem));
            match m.match_output(&coords) {
                OutputMatch::Exact(k) => Ok(k),
                OutputMatch::Rounded(k) => {
                    notes.push(format!(
                        "note: --release {r} taken as the output {} (the nearest; within half a grid step)",
                        output_text(&m, k)
                    ));
                    Ok(k)
                }
                OutputMatch::Outside { nearest } => refuse(format!(
                    "{r} is not an output of the mechanism in {} (|Θ̃| = {}); the nearest output is {}",
                    file.display(),
                    m.n_outputs(),
                    output_text(&m, nearest)
                )),
                OutputMatch::WrongDimension { expected } => refuse(format!(
                    "{r} has {} coordinate(s); the outputs of the mechanism in {} have {expected}",
                    coords.len(),
                    file.display()
                )),
            }
        })
        .collect::<Result<Vec<usize>>>()?;
    let post = Posterior::of(&m, &outputs, level)?;
    for note in &notes {
        eprintln!("{note}");
    }
    super::trust::warn_if_unchecked(file, &checked);
    if json {
        let mut v = serde_json::to_value(&post).expect("a posterior serialises");
        if post.posterior_mean.len() == 1 {
            // One-dimensional θ: plain numbers, not one-element lists.
            let o = v.as_object_mut().expect("an object");
            o.insert("posterior_mean".into(), post.posterior_mean[0].into());
            o.insert("interval".into(), serde_json::to_value(post.interval[0]).expect("floats"));
            o.insert(
                "theta".into(),
                serde_json::to_value(post.theta.iter().map(|t| t[0]).collect::<Vec<_>>()).expect("floats"),
            );
        }
        v.as_object_mut()
            .expect("an object")
            .insert("releases".into(), serde_json::to_value(releases).expect("strings"));
        outln!("{}", serde_json::to_string_pretty(&v).expect("JSON"));
        return Ok(());
    }
    let fmt = |v: &[f64]| v.iter().map(|x| format!("{x:.6}")).collect::<Vec<_>>().join(", ");
    outln!(
        "posterior of θ over the {} grid points of model {} given {} release(s) at certified ε = {} each",
        post.theta.len(),
        ubapp::guard::text::sanitize(m.model().name(), ubapp::guard::text::QUOTE_CHARS),
        outputs.len(),
        m.certified_eps()
    );
    outln!("posterior_mean {}", fmt(&post.posterior_mean));
    for (d, [lo, hi]) in post.interval.iter().enumerate() {
        let coord = if post.interval.len() > 1 { format!(" (coordinate {})", d + 1) } else { String::new() };
        outln!("interval{coord} [{lo:.6}, {hi:.6}] (equal-tailed, level {})", post.level);
    }
    outln!("mass inside the interval {:.6}", post.interval_mass);
    Ok(())
}

/// Output `k` as `sample` prints it (coordinates joined by commas).
fn output_text(m: &Mechanism, k: usize) -> String {
    m.model().outputs().point(k).iter().map(|v| v.to_string()).collect::<Vec<_>>().join(",")
}
