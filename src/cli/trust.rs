//! `--model` and `--fingerprint` of `verify`, `sample`, `audit` and `posterior`: load an artifact
//! (which checks it against its own embedded model) and then against what the deployer trusts.

use std::path::{Path, PathBuf};

use ubapp::mechanism::Release;
use ubapp::model::Model;
use ubapp::Result;

/// What the deployer trusts.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct TrustArgs {
    /// The model file you trust (TOML): the artifact's embedded model must define the same problem
    /// (family, Y and its neighbours, grids, prior, loss, δ; its ε no larger), else exit 2.
    #[arg(long, value_name = "MODEL.toml")]
    pub model: Option<PathBuf>,
    /// The model fingerprint you pinned (64 hex digits, as `solve --out` and `verify` print it).
    #[arg(long, value_name = "HEX")]
    pub fingerprint: Option<String>,
}

/// What an artifact was checked against, for the report.
pub enum CheckedAgainst {
    /// Its own embedded model only.
    EmbeddedOnly,
    /// A trusted model file and/or a pinned fingerprint.
    Trusted(String),
}

impl CheckedAgainst {
    /// One line for people.
    pub fn sentence(&self) -> String {
        match self {
            CheckedAgainst::EmbeddedOnly => "checked against the model embedded in the file only: it proves the weights are private for that model, not that it is the model you deploy (pass --model MODEL.toml or --fingerprint HEX)".to_string(),
            CheckedAgainst::Trusted(what) => format!("checked against {what}"),
        }
    }

    /// The JSON value of `checked_against`.
    pub fn json(&self) -> String {
        match self {
            CheckedAgainst::EmbeddedOnly => "embedded model only".to_string(),
            CheckedAgainst::Trusted(what) => what.clone(),
        }
    }
}

/// Load and verify `file`, then check it against `trust`.
pub fn load(file: &Path, trust: &TrustArgs) -> Result<(Release, CheckedAgainst)> {
    let origin = file.display().to_string();
    // A bad pin or trusted model is the user's input: refuse it before reading the artifact.
    let trusted = trust.model.as_deref().map(Model::load).transpose()?;
    if let Some(f) = &trust.fingerprint {
        if !ubapp::model::is_fingerprint(f) {
            return Err(ubapp::Error::argument(
                "--fingerprint",
                "must be 64 hexadecimal digits (a SHA-256, as `ubapp solve --out` and `ubapp verify` print it)",
            ));
        }
    }
    let artifact = Release::load(file)?;
    let mut what = Vec::new();
    if let (Some(m), Some(path)) = (&trusted, &trust.model) {
        let name = path.display().to_string();
        artifact.check_model(&origin, m, &name)?;
        what.push(format!("the trusted model {name}"));
    }
    if let Some(f) = &trust.fingerprint {
        artifact.check_fingerprint(&origin, f)?;
        what.push("the pinned fingerprint".to_string());
    }
    let checked =
        if what.is_empty() { CheckedAgainst::EmbeddedOnly } else { CheckedAgainst::Trusted(what.join(" and ")) };
    Ok((artifact, checked))
}
