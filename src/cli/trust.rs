//! `--model`, `--fingerprint` and `--max-eps` of `verify`, `sample`, `audit` and `posterior`: load
//! an artifact (which checks it against its own embedded model) and then against what the deployer
//! trusts; in the deployment mode (`UBAPP_REQUIRE_MODEL=1`) a release without a trusted model is
//! refused. See docs/threat-model.md.

use std::path::{Path, PathBuf};

use ubapp::mechanism::{DeploymentMode, Release};
use ubapp::model::Model;
use ubapp::{Error, Result};

/// What the deployer trusts.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct TrustArgs {
    /// The model file you trust (TOML): the artifact's embedded model must define the same problem
    /// (family, Y and its neighbours, grids, prior, loss, δ; its ε no larger), else exit 2.
    #[arg(long, value_name = "MODEL.toml")]
    pub model: Option<PathBuf>,
    /// The model fingerprint you pinned (64 hex digits, as `solve --out` and `verify` print it);
    /// needs --max-eps (the fingerprint leaves ε out).
    #[arg(long, value_name = "HEX", requires = "max_eps")]
    pub fingerprint: Option<String>,
    /// The largest ε you deploy: a file certifying more is refused (required with --fingerprint;
    /// with --model it tightens the model's largest ε).
    #[arg(long, value_name = "EPS", allow_negative_numbers = true)]
    pub max_eps: Option<f64>,
}

impl TrustArgs {
    /// Whether the deployer named a trusted model (a file or a pinned fingerprint).
    fn names_a_model(&self) -> bool {
        self.model.is_some() || self.fingerprint.is_some()
    }
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
            CheckedAgainst::EmbeddedOnly => format!("checked against the model embedded in the file only: {UNCHECKED}"),
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

/// What an unchecked file does and does not prove, and the flags that close the gap.
const UNCHECKED: &str = "it proves the weights are private for that model, not that it is the model you deploy (pass --model MODEL.toml, or --fingerprint HEX --max-eps EPS)";

/// Load and verify `file`, then check it against `trust` (for `verify` and `audit`, which only
/// check: no deployment-mode refusal).
pub fn load(file: &Path, trust: &TrustArgs) -> Result<(Release, CheckedAgainst)> {
    let origin = file.display().to_string();
    // A bad pin, bound or trusted model is the user's input: refuse it before reading the artifact.
    if let Some(e) = trust.max_eps {
        if !(e.is_finite() && e > 0.0) {
            return Err(Error::argument("--max-eps", format!("must be a finite ε > 0 (got {e})")));
        }
    }
    if let Some(f) = &trust.fingerprint {
        if !ubapp::model::is_fingerprint(f) {
            return Err(Error::argument(
                "--fingerprint",
                "must be 64 hexadecimal digits (a SHA-256, as `ubapp solve --out` and `ubapp verify` print it)",
            ));
        }
    }
    let trusted = trust.model.as_deref().map(Model::load).transpose()?;
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
    if let Some(e) = trust.max_eps {
        artifact.check_max_eps(&origin, e)?;
        what.push(format!("ε ≤ {e}"));
    }
    let checked = if trust.names_a_model() {
        CheckedAgainst::Trusted(what.join(" and "))
    } else {
        // --max-eps alone bounds ε but not the model: still the embedded model only.
        CheckedAgainst::EmbeddedOnly
    };
    Ok((artifact, checked))
}

/// [`load`] for a command that releases or interprets a value (`sample`, `posterior`): in the
/// deployment mode a file without a trusted model is refused before it is read. The command calls
/// [`warn_if_unchecked`] once every other check has passed, right before it prints.
pub fn load_for_release(file: &Path, trust: &TrustArgs, command: &str) -> Result<(Release, CheckedAgainst)> {
    let mode = DeploymentMode::from_env();
    if mode.requires_model() && !trust.names_a_model() {
        return Err(Error::argument(
            "--model",
            format!(
                "or --fingerprint with --max-eps is required: {} is set, so `{command}` releases only from a file checked against a model you trust",
                ubapp::mechanism::REQUIRE_MODEL_ENV
            ),
        ));
    }
    load(file, trust)
}

/// A file checked against its embedded model only gets a warning on stderr, as `verify` reports it.
pub fn warn_if_unchecked(file: &Path, checked: &CheckedAgainst) {
    if let CheckedAgainst::EmbeddedOnly = checked {
        eprintln!(
            "warning: {} was checked against the model embedded in it only: {UNCHECKED}",
            ubapp::guard::text::sanitize(&file.display().to_string(), ubapp::guard::text::MESSAGE_CHARS)
        );
    }
}
