//! Errors of the mechanism layer: building, saving and loading a release, its files and audits.

use crate::certify::CertifyError;
use crate::data::DataError;
use crate::guard::{ArgumentError, Parameter, SizeError};
use crate::ledger::LedgerError;
use crate::model::ModelError;
use crate::output::OutputError;
use crate::solve::SolveError;

/// The mechanism layer's result.
pub(crate) type Result<T, E = MechanismError> = std::result::Result<T, E>;

/// Why a release could not be built, saved, loaded or trusted.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MechanismError {
    /// A caller's value out of range (an ε bound, a level, a released value).
    #[error(transparent)]
    Argument(#[from] ArgumentError),
    /// A mechanism file that is malformed, fails its certificate or is not the one trusted.
    #[error(transparent)]
    Artifact(#[from] ArtifactError),
    /// A file too large to read within the memory budget.
    #[error(transparent)]
    TooLarge(Box<SizeError>),
    /// A float mechanism that could not be repaired and certified.
    #[error(transparent)]
    Certify(Box<CertifyError>),
    /// A solution with nothing to release, or not of the form asked for.
    #[error(transparent)]
    Solve(Box<SolveError>),
    /// A file that could not be written.
    #[error(transparent)]
    Output(#[from] OutputError),
    /// Records that give no observation of the model (`release --data`).
    #[error(transparent)]
    Data(Box<DataError>),
    /// The ledger refused the release or failed.
    #[error(transparent)]
    Ledger(Box<LedgerError>),
}

boxed_from!(MechanismError {
    SizeError => TooLarge,
    CertifyError => Certify,
    SolveError => Solve,
    DataError => Data,
    LedgerError => Ledger,
});

impl MechanismError {
    /// True when the fault lies with the caller's input (a value, a file, a size): the CLI's exit 2.
    pub fn is_input(&self) -> bool {
        match self {
            MechanismError::Argument(_) | MechanismError::Artifact(_) | MechanismError::TooLarge(_) => true,
            MechanismError::Solve(e) => e.is_input(),
            MechanismError::Output(e) => e.is_input(),
            MechanismError::Data(e) => e.is_input(),
            MechanismError::Ledger(e) => e.is_input(),
            MechanismError::Certify(_) => false,
        }
    }

    /// An argument error, phrased to follow the name.
    pub(crate) fn argument(name: impl Into<String>, problem: impl Into<String>) -> Self {
        ArgumentError::new(name, problem).into()
    }
}

/// A mechanism file that cannot be read, is malformed, or fails its certificate. Always names the
/// file.
#[derive(Debug, thiserror::Error)]
#[error("{origin}: {kind}")]
pub struct ArtifactError {
    /// The file (or other source).
    pub origin: String,
    /// What is wrong.
    pub kind: ArtifactErrorKind,
}

/// What is wrong with a mechanism file.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ArtifactErrorKind {
    /// The file could not be read.
    #[error("cannot read mechanism file: {reason}")]
    Unreadable {
        /// What the operating system said.
        reason: String,
    },
    /// Not JSON, or not UTF-8, or truncated.
    #[error("{reason}")]
    NotJson {
        /// What the parser said.
        reason: String,
    },
    /// JSON, but not a ubapp mechanism (of a version this build reads).
    #[error("{reason}")]
    NotAMechanism {
        /// Why not.
        reason: String,
    },
    /// A field does not match the schema (missing, mistyped, unknown).
    #[error("{field}: {problem}")]
    Schema {
        /// The field path.
        field: String,
        /// What the parser said.
        problem: String,
    },
    /// A field's value is out of range or inconsistent with the rest of the file.
    #[error("{field} {problem}")]
    Field {
        /// The field path.
        field: String,
        /// What is wrong.
        problem: String,
    },
    /// The embedded model does not validate.
    #[error("model: {0}")]
    Model(Box<ModelError>),
    /// The weights fail the exact privacy check at the file's target.
    #[error("{0}")]
    NotPrivate(String),
    /// The embedded model defines a different problem from the model the deployer trusts.
    #[error("its embedded model is not the trusted model {trusted}: {difference}")]
    NotTrustedModel {
        /// The trusted model's file (or name).
        trusted: String,
        /// The first difference, naming the model field.
        difference: String,
    },
    /// The embedded model's fingerprint is not the one the deployer pinned.
    #[error("its model fingerprint {found} is not the pinned fingerprint {expected}")]
    FingerprintMismatch {
        /// The pinned fingerprint.
        expected: String,
        /// The embedded model's.
        found: String,
    },
    /// The file's target or certified ε is larger than the deployer's bound.
    #[error(
        "it is a mechanism for ε = {eps} (certified {certified}), more than the bound --max-eps {bound} you deploy"
    )]
    AboveEpsBound {
        /// The file's target ε.
        eps: f64,
        /// The ε the weights certify.
        certified: f64,
        /// The deployer's bound.
        bound: f64,
    },
}

impl ArtifactError {
    /// An error about `origin`.
    pub fn new(origin: impl Into<String>, kind: ArtifactErrorKind) -> Self {
        ArtifactError { origin: origin.into(), kind }
    }
}

/// An audit that could not run, or whose empirical bound contradicts the certificate.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AuditError {
    /// An option out of range.
    #[error("{name}: {problem}")]
    InvalidOption {
        /// The parameter, e.g. [`Parameter::Samples`].
        name: Parameter,
        /// What is wrong.
        problem: String,
    },
    /// The empirical lower bound exceeds the certified value.
    #[error(
        "audit of {origin}: the empirical {what} lower bound {found:.6} exceeds the certified {what} {certified} (probability ≤ α = {alpha} if the mechanism is correct)"
    )]
    Contradiction {
        /// The file audited.
        origin: String,
        /// `ε` or `δ`.
        what: &'static str,
        /// The empirical lower bound.
        found: f64,
        /// The certificate.
        certified: f64,
        /// The audit's α.
        alpha: f64,
    },
}

impl AuditError {
    /// True for bad options (exit 2); a contradiction is not the user's input error.
    pub fn is_input(&self) -> bool {
        matches!(self, AuditError::InvalidOption { .. })
    }
}
