//! `ubapp posterior FILE --release VALUE [--release VALUE …] [--level 0.95] [--json]
//! [--model MODEL.toml] [--fingerprint HEX]`: the exact posterior of θ on the model's grid given
//! independent releases of a verified mechanism (checked against the trusted model when given).

use std::path::{Path, PathBuf};

use super::trust::TrustArgs;
use ubapp::mechanism::{Mechanism, OutputMatch, Posterior, Release};
use ubapp::{Error, Result};

/// Flags of `posterior`.
#[derive(clap::Args)]
pub struct Args {
    /// Mechanism file written by `ubapp solve --out`.
    file: PathBuf,
    /// A released value (repeat for independent releases of the same mechanism).
    #[arg(long, required = true, allow_negative_numbers = true)]
    release: Vec<String>,
    /// Credibility level of the interval.
    #[arg(long, default_value_t = 0.95, allow_negative_numbers = true)]
    level: f64,
    /// Print the result as JSON.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    trust: TrustArgs,
}

impl Args {
    /// The flags checked before the file is read (each error names its flag).
    fn validate(self) -> Result<Args> {
        let level = self.level;
        if !(level.is_finite() && level > 0.0 && level < 1.0) {
            return Err(Error::argument("--level", format!("must lie strictly between 0 and 1 (got {level})")));
        }
        Ok(self)
    }
}

/// Run the command: the flags checked, the file loaded against the trusted model, the releases
/// matched to outputs, the posterior printed.
pub fn run(args: Args) -> Result<()> {
    let a = args.validate()?;
    let file = a.file.as_path();
    // The artifact against the deployer's model first (a forged file is refused before any output).
    let (artifact, checked) = super::trust::load_for_release(file, &a.trust, "posterior")?;
    let m = dense(artifact, file)?;
    // Notes on rounded releases are printed once the posterior stands: a refusal stays one line.
    let mut notes = Vec::new();
    let outputs = a.release.iter().map(|r| release_output(&m, r, file, &mut notes)).collect::<Result<Vec<usize>>>()?;
    let post = Posterior::of(&m, &outputs, a.level)?;
    for note in &notes {
        eprintln!("{note}");
    }
    super::trust::warn_if_unchecked(file, &checked);
    if a.json {
        outln!("{}", serde_json::to_string_pretty(&posterior_json(&post, &a.release)).expect("JSON"));
    } else {
        print_posterior(&post, &m, outputs.len());
    }
    Ok(())
}

/// The dense mechanism of a release (the posterior reads integer weights).
fn dense(artifact: Release, file: &Path) -> Result<Mechanism> {
    match artifact {
        Release::Dense(m) => Ok(m),
        Release::Compact(_) => Err(Error::argument(
            "FILE",
            format!(
                "{} is the compact geometric + remap form; `posterior` reads dense mechanism files (solve a model small enough for the dense route)",
                file.display()
            ),
        )),
    }
}

/// The output index a `--release` value names (a value within half a grid step of an output is
/// taken as it, with a note in `notes`).
fn release_output(m: &Mechanism, r: &str, file: &Path, notes: &mut Vec<String>) -> Result<usize> {
    let coords = super::sample::parse_numbers(r, "--release")?;
    let refuse = |problem: String| Err(Error::argument("--release", problem));
    match m.match_output(&coords) {
        OutputMatch::Exact(k) => Ok(k),
        OutputMatch::Rounded(k) => {
            notes.push(format!(
                "note: --release {r} taken as the output {} (the nearest; within half a grid step)",
                output_text(m, k)
            ));
            Ok(k)
        }
        OutputMatch::Outside { nearest } => refuse(format!(
            "{r} is not an output of the mechanism in {} (|Θ̃| = {}); the nearest output is {}",
            file.display(),
            m.n_outputs(),
            output_text(m, nearest)
        )),
        OutputMatch::WrongDimension { expected } => refuse(format!(
            "{r} has {} coordinate(s); the outputs of the mechanism in {} have {expected}",
            coords.len(),
            file.display()
        )),
    }
}

/// `--json`'s object: the posterior, plain numbers for a one-dimensional θ, and the releases.
fn posterior_json(post: &Posterior, releases: &[String]) -> serde_json::Value {
    let mut v = serde_json::to_value(post).expect("a posterior serialises");
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
    v.as_object_mut().expect("an object").insert("releases".into(), serde_json::to_value(releases).expect("strings"));
    v
}

/// The posterior in words.
fn print_posterior(post: &Posterior, m: &Mechanism, n_releases: usize) {
    let fmt = |v: &[f64]| v.iter().map(|x| format!("{x:.6}")).collect::<Vec<_>>().join(", ");
    outln!(
        "posterior of θ over the {} grid points of model {} given {} release(s) at certified ε = {} each",
        post.theta.len(),
        ubapp::guard::text::sanitize(m.model().name(), ubapp::guard::text::QUOTE_CHARS),
        n_releases,
        m.certified_eps()
    );
    outln!("posterior_mean {}", fmt(&post.posterior_mean));
    for (d, [lo, hi]) in post.interval.iter().enumerate() {
        let coord = if post.interval.len() > 1 { format!(" (coordinate {})", d + 1) } else { String::new() };
        outln!("interval{coord} [{lo:.6}, {hi:.6}] (equal-tailed, level {})", post.level);
    }
    outln!("mass inside the interval {:.6}", post.interval_mass);
}

/// Output `k` as `sample` prints it (coordinates joined by commas).
fn output_text(m: &Mechanism, k: usize) -> String {
    m.model().outputs().point(k).iter().map(|v| v.to_string()).collect::<Vec<_>>().join(",")
}
