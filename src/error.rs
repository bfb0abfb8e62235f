//! One error type for the crate. Input errors (a bad model file, flag or value) are kept apart from
//! solver and I/O failures so that the binary can map them to distinct exit codes (2 and 1).

use std::path::PathBuf;

/// Everything that can go wrong in `ubapp`.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The user's input is wrong: one sentence that names the field and what was expected.
    #[error("{0}")]
    Input(String),
    /// A file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file concerned.
        path: PathBuf,
        /// What the operating system said.
        source: std::io::Error,
    },
    /// A solver failed or returned something we cannot use.
    #[error("{0}")]
    Solver(String),
    /// A check on a result failed (e.g. an empirical DP audit contradicted the certificate).
    #[error("{0}")]
    Check(String),
    /// A comparison that cannot be run as asked (`compare`).
    #[error(transparent)]
    Compare(#[from] crate::compare::CompareError),
    /// A report that could not be drawn or encoded (`report`).
    #[error(transparent)]
    Report(#[from] crate::report::ReportError),
}

impl Error {
    /// An input error with a formatted message.
    pub fn input(msg: impl Into<String>) -> Self {
        Error::Input(msg.into())
    }

    /// True when the fault lies with the user's input (exit code 2 in the CLI).
    pub fn is_input(&self) -> bool {
        match self {
            Error::Input(_) => true,
            Error::Compare(e) => e.is_input(),
            _ => false,
        }
    }
}

/// The crate's result alias.
pub type Result<T> = std::result::Result<T, Error>;

/// Return early with an input error: `bail_input!("epsilon[{i}] must be > 0 (got {e})")`.
#[macro_export]
macro_rules! bail_input {
    ($($arg:tt)*) => { return Err($crate::Error::Input(format!($($arg)*))) };
}
