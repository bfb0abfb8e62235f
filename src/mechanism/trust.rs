//! Checking an artifact against what the deployer trusts, not only against itself.
//!
//! Loading an artifact proves that its weights are ε-DP *for the model embedded in the same
//! file*: whoever can edit the file can also replace that model (a neighbour relation with one
//! pair makes almost any weights "private"). [`Release::check_model`] compares the embedded model
//! with a model the deployer trusts, field by field ([`Model::first_difference`]), and
//! [`Release::check_fingerprint`] with a pinned [`Model::fingerprint`].

use super::{ArtifactError, ArtifactErrorKind, Release};
use crate::model::{is_fingerprint, Model};
use crate::{Error, Result};

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
        let refuse = |difference: String| -> Error {
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

    /// Refuse the artifact (`origin` names it) unless its embedded model's fingerprint is `pinned`
    /// (64 hexadecimal digits, either case; anything else is an argument error).
    pub fn check_fingerprint(&self, origin: &str, pinned: &str) -> Result<()> {
        if !is_fingerprint(pinned) {
            return Err(Error::argument(
                "--fingerprint",
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
