//! Checking an artifact against what the deployer trusts, not only against itself.
//!
//! Loading an artifact proves that its weights are ε-DP *for the model embedded in the same
//! file*: whoever can edit the file can also replace that model (a neighbour relation with one
//! pair makes almost any weights "private"). [`Release::check_model`] compares the embedded model
//! with a model the deployer trusts, field by field ([`Model::first_difference`]), and
//! [`Release::check_fingerprint`] with a pinned [`Model::fingerprint`]. The fingerprint leaves ε
//! out (one model serves every ε of its list), so a pin comes with the deployer's ε bound,
//! [`Release::check_max_eps`]. [`DeploymentMode`] is the switch that refuses a release without
//! any of this (docs/threat-model.md).

use super::error::Result;
use super::MechanismError;
use super::{ArtifactError, ArtifactErrorKind, Release};
use crate::guard::Parameter;
use crate::model::{is_fingerprint, Model};

/// The environment variable that turns the deployment mode on (`1`, `true` or `yes`).
pub const REQUIRE_MODEL_ENV: &str = "UBAPP_REQUIRE_MODEL";

/// Whether a release (`sample`, `posterior`, Python's `Mechanism.sample`) may come from a file
/// checked only against the model embedded in it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeploymentMode {
    /// Allowed, with a warning (the default).
    WarnUnchecked,
    /// Refused: a trusted model file, or a pinned fingerprint with an ε bound, is required.
    RequireModel,
}

impl DeploymentMode {
    /// The mode [`REQUIRE_MODEL_ENV`] sets: `1`, `true` or `yes` (any case) require a trusted
    /// model; unset, empty, `0`, `false` or `no` do not. Any other value requires it too: a
    /// misspelt switch must fail closed.
    pub fn from_env() -> DeploymentMode {
        DeploymentMode::from_value(std::env::var(REQUIRE_MODEL_ENV).ok().as_deref())
    }

    /// The mode for the variable's value (`None`: unset).
    pub fn from_value(value: Option<&str>) -> DeploymentMode {
        match value.map(|v| v.trim().to_ascii_lowercase()) {
            None => DeploymentMode::WarnUnchecked,
            Some(v) if matches!(v.as_str(), "" | "0" | "false" | "no") => DeploymentMode::WarnUnchecked,
            Some(_) => DeploymentMode::RequireModel,
        }
    }

    /// Whether a release needs a trusted model.
    pub fn requires_model(self) -> bool {
        self == DeploymentMode::RequireModel
    }
}

/// A stored `model_fingerprint` must be the embedded model's (absent in files written before it
/// existed: then nothing to compare).
pub(super) fn check_stored_fingerprint(
    model: &Model,
    stored: Option<&str>,
) -> std::result::Result<(), ArtifactErrorKind> {
    let Some(stored) = stored else { return Ok(()) };
    let actual = model.fingerprint();
    if !stored.eq_ignore_ascii_case(&actual) {
        return Err(ArtifactErrorKind::Field {
            field: "model_fingerprint".to_string(),
            problem: format!(
                "does not match the embedded model (whose fingerprint is {actual}): the model was edited after the file was written"
            ),
        });
    }
    Ok(())
}

impl Release {
    /// The fingerprint of the embedded model ([`Model::fingerprint`]).
    pub fn fingerprint(&self) -> String {
        self.model().fingerprint()
    }

    /// Refuse the artifact (`origin` names it) unless its embedded model defines the same problem
    /// as `trusted` (`trusted_name` names that model's file) and its target ε is no larger than the
    /// largest ε the trusted model lists: ε may differ only downward.
    pub fn check_model(&self, origin: &str, trusted: &Model, trusted_name: &str) -> Result<()> {
        let refuse = |difference: String| -> MechanismError {
            ArtifactError::new(
                origin,
                ArtifactErrorKind::NotTrustedModel { trusted: trusted_name.to_string(), difference },
            )
            .into()
        };
        if let Some(d) = self.model().first_difference(trusted) {
            return Err(refuse(d));
        }
        let most = trusted.epsilons().iter().copied().fold(f64::NEG_INFINITY, f64::max);
        if self.eps() > most {
            return Err(refuse(format!(
                "eps: the file's ε = {} is larger than every ε the trusted model lists (largest {most})",
                self.eps()
            )));
        }
        Ok(())
    }

    /// Refuse the artifact (`origin` names it) when its weights certify a larger ε than `bound`,
    /// the deployer's (a fingerprint does not cover ε: an edited file at ε = 36 keeps the honest
    /// model's fingerprint). `bound` must be a finite ε > 0 (else an argument error).
    pub fn check_max_eps(&self, origin: &str, bound: f64) -> Result<()> {
        if !(bound.is_finite() && bound > 0.0) {
            return Err(MechanismError::argument(Parameter::MaxEps, format!("must be a finite ε > 0 (got {bound})")));
        }
        // The target ε bounds the certified one; either above the bound is refused.
        let (eps, certified) = (self.eps(), self.certified_eps());
        if eps.max(certified) > bound {
            return Err(ArtifactError::new(origin, ArtifactErrorKind::AboveEpsBound { eps, certified, bound }).into());
        }
        Ok(())
    }

    /// Refuse the artifact (`origin` names it) unless its embedded model's fingerprint is `pinned`
    /// (64 hexadecimal digits, either case; anything else is an argument error).
    pub fn check_fingerprint(&self, origin: &str, pinned: &str) -> Result<()> {
        if !is_fingerprint(pinned) {
            return Err(MechanismError::argument(
                Parameter::Fingerprint,
                "must be 64 hexadecimal digits (a SHA-256, as `ubapp solve --out` and `ubapp verify` print it)",
            ));
        }
        let found = self.fingerprint();
        if !found.eq_ignore_ascii_case(pinned) {
            return Err(ArtifactError::new(
                origin,
                ArtifactErrorKind::FingerprintMismatch { expected: pinned.to_ascii_lowercase(), found },
            )
            .into());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::DeploymentMode;

    #[test]
    fn the_deployment_switch_fails_closed() {
        for off in [None, Some(""), Some("0"), Some("false"), Some(" No ")] {
            assert_eq!(DeploymentMode::from_value(off), DeploymentMode::WarnUnchecked, "{off:?}");
        }
        for on in [Some("1"), Some("true"), Some("YES"), Some("on"), Some("ture")] {
            assert!(DeploymentMode::from_value(on).requires_model(), "{on:?}");
        }
    }
}
