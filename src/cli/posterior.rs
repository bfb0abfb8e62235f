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
    let m = dense(&artifact, file)?;
    // Notes on rounded releases are printed once the posterior stands: a refusal stays one line.
    let mut notes = Vec::new();
    let outputs = a.release.iter().map(|r| release_output(m, r, file, &mut notes)).collect::<Result<Vec<usize>>>()?;
    let post = Posterior::of(m, &outputs, a.level)?;
    for note in &notes {
        eprintln!("{note}");
    }
    super::trust::warn_if_unchecked(file, &checked);
    if a.json {
        outln!("{}", serde_json::to_string_pretty(&posterior_json(&post, &a.release)).expect("JSON"));
    } else {
        print_posterior(&post, m, outputs.len());
    }
    Ok(())
}

/// The dense mechanism of a release (the posterior reads integer weights).
fn dense<'a>(artifact: &'a Release, file: &Path) -> Result<&'a Mechanism> {
    match artifact.dense() {
        Some(m) => Ok(m),
        None => Err(Error::argument(
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
    let matched = m.match_output(&coords);
    match matched {
        OutputMatch::Outside { nearest } => refuse(format!(
            "{r} is not an output of the mechanism in {} (|Θ̃| = {}); the nearest output is {}",
            file.display(),
            m.n_outputs(),
            m.output_text(nearest)
        )),
        OutputMatch::WrongDimension { expected } => refuse(format!(
            "{r} has {} coordinate(s); the outputs of the mechanism in {} have {expected}",
            coords.len(),
            file.display()
        )),
        OutputMatch::Exact(k) | OutputMatch::Rounded(k) | OutputMatch::Halfway { nearest: k, .. } => {
            match m.release_words("--release", r, matched) {
                Ok(note) => {
                    notes.extend(note);
                    Ok(k)
                }
                Err(problem) => refuse(problem.to_string()),
            }
        }
    }
}

/// `--json`'s object: the posterior, plain numbers for a one-dimensional θ, and the releases.
fn posterior_json(post: &Posterior, releases: &[String]) -> serde_json::Value {
    let mut v = serde_json::to_value(post).expect("a posterior serialises");
    let o = v.as_object_mut().expect("an object");
    if post.posterior_mean.len() == 1 {
        // One-dimensional θ: plain numbers, not one-element lists.
        for key in ["posterior_mean", "posterior_median", "posterior_mode", "interval", "interval_mass"] {
            let first = o[key][0].clone();
            o.insert(key.into(), first);
        }
        let value = o["bayes_estimate"]["value"][0].clone();
        o["bayes_estimate"]["value"] = value;
        o.insert(
            "theta".into(),
            serde_json::to_value(post.theta.iter().map(|t| t[0]).collect::<Vec<_>>()).expect("floats"),
        );
    }
    o.insert("releases".into(), serde_json::to_value(releases).expect("strings"));
    v
}

/// The posterior in words: the estimates (the Bayes estimate for the model's loss named), the
/// marginal intervals and, for a vector θ, the joint mass of their box and the joint region.
fn print_posterior(post: &Posterior, m: &Mechanism, n_releases: usize) {
    let fmt = |v: &[f64]| v.iter().map(|x| format!("{x:.6}")).collect::<Vec<_>>().join(", ");
    outln!(
        "posterior of θ over the {} grid points of model {} given {} release(s) at certified ε = {} each",
        post.theta.len(),
        ubapp::guard::text::sanitize(m.model().name(), ubapp::guard::text::QUOTE_CHARS),
        n_releases,
        m.certified_eps()
    );
    let b = &post.bayes_estimate;
    let named = format!(" (the Bayes estimate under {} loss)", b.loss);
    let (mean, median, mode) = match b.rule {
        "posterior mean" => (named.as_str(), None, None),
        r if r.starts_with("posterior median") => ("", Some(named.as_str()), None),
        "posterior mode" => ("", None, Some(named.as_str())),
        _ => ("", None, None),
    };
    outln!("posterior_mean {}{mean}", fmt(&post.posterior_mean));
    if let Some(note) = median {
        outln!("posterior_median {}{note}", fmt(&post.posterior_median));
    }
    if let Some(note) = mode {
        outln!("posterior_mode {}{note}", fmt(&post.posterior_mode));
    }
    if mean.is_empty() && median.is_none() && mode.is_none() {
        outln!("bayes_estimate {} ({}: the Bayes estimate under {} loss)", fmt(&b.value), b.rule, b.loss);
    }
    if post.interval.len() == 1 {
        let [lo, hi] = post.interval[0];
        outln!("interval [{lo:.6}, {hi:.6}] (equal-tailed, level {})", post.level);
        outln!("mass inside the interval {:.6}", post.interval_mass[0]);
        return;
    }
    for (d, ([lo, hi], mass)) in post.interval.iter().zip(&post.interval_mass).enumerate() {
        outln!(
            "marginal interval (coordinate {}) [{lo:.6}, {hi:.6}] (equal-tailed, level {}): marginal mass {mass:.6}",
            d + 1,
            post.level
        );
    }
    outln!("joint mass of the box of the marginal intervals {:.6}", post.box_mass);
    let r = &post.region;
    outln!(
        "joint credible region: the {} grid point(s) of highest posterior probability, joint mass {:.6} ≥ level {}",
        r.points.len(),
        r.mass,
        post.level
    );
    const SHOWN: usize = 12;
    for &j in r.points.iter().take(SHOWN) {
        outln!("  ({})  {:.6}", fmt(&post.theta[j]), post.probabilities[j]);
    }
    if r.points.len() > SHOWN {
        outln!("  … and {} more (--json lists them all)", r.points.len() - SHOWN);
    }
}
