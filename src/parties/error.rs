//! The parties layer's error.

use crate::certify::CertifyError;
use crate::guard::ArgumentError;
use crate::mechanism::MechanismError;

/// The parties layer's result.
pub(crate) type Result<T, E = PartiesError> = std::result::Result<T, E>;

/// Why a per-party mechanism could not be built.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PartiesError {
    /// A design that does not apply at this size, or a value out of range.
    #[error(transparent)]
    Argument(#[from] ArgumentError),
    /// A float release that could not be repaired and certified.
    #[error(transparent)]
    Certify(Box<CertifyError>),
    /// The single-party artifact could not be built.
    #[error(transparent)]
    Mechanism(Box<MechanismError>),
}

boxed_from!(PartiesError {
    CertifyError => Certify,
    MechanismError => Mechanism,
});

impl PartiesError {
    /// True when the fault lies with the caller's input (the CLI's exit 2).
    pub fn is_input(&self) -> bool {
        match self {
            PartiesError::Argument(_) => true,
            PartiesError::Mechanism(e) => e.is_input(),
            PartiesError::Certify(_) => false,
        }
    }
}
