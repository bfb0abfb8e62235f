//! The crate's error: each layer returns its own `thiserror` type ([`ModelError`],
//! [`SolveError`], [`MechanismError`], [`CompareError`], …), joined here by `From`, so `?` turns
//! any of them into an [`Error`]. The variants layers share (an argument, a size, a model, a
//! certification, a file) become the crate's own.
//!
//! Whom to blame is a property of the variant, never of a message's text: [`Error::is_input`]
//! is true for anything the user can fix (a model file, a flag, an artifact, a size), and the
//! binary maps that to exit code 2 ([`Error::exit_code`]).
//!
//! ```
//! use ubapp::model::{Model, ModelSpec};
//! use ubapp::solve::{solve_model, SolveError, SolverChoice};
//!
//! let text = "name = \"coin\"\nepsilon = [1.0]\n[parameter]\ngrid = { kind = \"midpoint\", points = 5 }\n\
//!             prior = { kind = \"uniform\" }\n[observation]\nfamily = \"binomial\"\ntrials = 4\n\
//!             [loss]\nkind = \"squared\"\n";
//! let model = Model::from_spec(ModelSpec::from_toml(text, "coin").unwrap()).unwrap();
//! // The solve layer's own error names the parameter…
//! let e = solve_model(&model, Some(&[-1.0]), SolverChoice::Auto).unwrap_err();
//! assert!(matches!(e, SolveError::Argument(_)) && e.is_input());
//! // …and joined into the crate's error it is the same argument error, exit code 2.
//! let e = ubapp::Error::from(e);
//! assert!(matches!(e, ubapp::Error::Argument { .. }));
//! assert_eq!(e.exit_code(), 2);
//! assert_eq!(e.to_string(), "eps[0] must be a finite number > 0 (got -1)");
//! ```

use std::path::PathBuf;

pub use crate::certify::{CertifyError, RefineFailure};
pub use crate::compare::CompareError;
pub use crate::data::DataError;
pub use crate::guard::ArgumentError;
pub use crate::ledger::LedgerError;
pub use crate::lp::{LpError, SizeError};
pub use crate::mechanism::{ArtifactError, AuditError, MechanismError};
pub use crate::model::ModelError;
pub use crate::output::OutputError;
pub use crate::parties::PartiesError;
pub use crate::report::ReportError;
pub use crate::solve::SolveError;

/// Everything that can go wrong in `ubapp`.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A model (file or spec) that does not validate: names the file and the field.
    #[error(transparent)]
    Model(#[from] ModelError),
    /// An argument (a flag's value, or a library call's parameter) out of range.
    #[error("{name} {problem}")]
    Argument {
        /// The parameter as the caller spells it (`eps`; the command line: `--eps`), or a field.
        name: String,
        /// What is wrong and what was expected, phrased to follow the name.
        problem: String,
    },
    /// The problem would not fit in memory: names the fields to shrink.
    #[error(transparent)]
    TooLarge(#[from] SizeError),
    /// A solver failed or returned nothing usable.
    #[error(transparent)]
    Solve(SolveError),
    /// A float mechanism could not be repaired and certified.
    #[error(transparent)]
    Certify(#[from] CertifyError),
    /// A mechanism file that is malformed or fails its certificate.
    #[error(transparent)]
    Artifact(#[from] ArtifactError),
    /// An empirical audit contradicted a certificate, or was asked for with bad options.
    #[error(transparent)]
    Audit(#[from] AuditError),
    /// A file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file concerned.
        path: PathBuf,
        /// What the operating system said.
        source: std::io::Error,
    },
    /// A comparison that cannot be run as asked (`compare`).
    #[error(transparent)]
    Compare(CompareError),
    /// A `--shard` request, or shards given to `merge`, that cannot be used as given.
    #[error(transparent)]
    Sweep(crate::sweep::ShardError),
    /// A report that could not be drawn or encoded (`report`).
    #[error(transparent)]
    Report(ReportError),
    /// Records that give no observation of the model (`release --data`): names the source, the
    /// record and the column.
    #[error(transparent)]
    Data(#[from] DataError),
    /// The privacy-budget ledger refused a release (over budget, no budget) or failed.
    #[error(transparent)]
    Ledger(LedgerError),
}

impl From<LedgerError> for Error {
    fn from(e: LedgerError) -> Self {
        match e {
            LedgerError::Argument(e) => e.into(),
            other => Error::Ledger(other),
        }
    }
}

impl From<ArgumentError> for Error {
    fn from(e: ArgumentError) -> Self {
        Error::Argument { name: e.name, problem: e.problem }
    }
}

impl From<OutputError> for Error {
    fn from(e: OutputError) -> Self {
        match e {
            OutputError::Argument(e) => e.into(),
            OutputError::Io { path, source } => Error::Io { path, source },
        }
    }
}

/// The solve layer's errors, joined: the variants it shares with the crate (an argument, a size, a
/// model, a certification) become the crate's own, so whom an error blames never depends on the
/// layer that raised it.
impl From<SolveError> for Error {
    fn from(e: SolveError) -> Self {
        match e {
            SolveError::Argument(e) => e.into(),
            SolveError::TooLarge(size) => Error::TooLarge(*size),
            SolveError::Model(e) => Error::Model(*e),
            SolveError::Certify(e) => Error::Certify(*e),
            other => Error::Solve(other),
        }
    }
}

impl From<MechanismError> for Error {
    fn from(e: MechanismError) -> Self {
        match e {
            MechanismError::Argument(e) => e.into(),
            MechanismError::Artifact(e) => Error::Artifact(e),
            MechanismError::TooLarge(size) => Error::TooLarge(*size),
            MechanismError::Certify(e) => Error::Certify(*e),
            MechanismError::Solve(e) => (*e).into(),
            MechanismError::Output(e) => e.into(),
            MechanismError::Data(e) => Error::Data(*e),
            MechanismError::Ledger(e) => (*e).into(),
        }
    }
}

impl From<PartiesError> for Error {
    fn from(e: PartiesError) -> Self {
        match e {
            PartiesError::Argument(e) => e.into(),
            PartiesError::Certify(e) => Error::Certify(*e),
            PartiesError::Mechanism(e) => (*e).into(),
        }
    }
}

impl From<CompareError> for Error {
    fn from(e: CompareError) -> Self {
        match e {
            CompareError::Argument(e) => e.into(),
            CompareError::Model(e) => Error::Model(*e),
            CompareError::TooLarge(size) => Error::TooLarge(*size),
            CompareError::Solve(e) => (*e).into(),
            CompareError::Mechanism(e) => (*e).into(),
            CompareError::Parties(e) => (*e).into(),
            CompareError::Output(e) => e.into(),
            other => Error::Compare(other),
        }
    }
}

impl From<crate::sweep::ShardError> for Error {
    fn from(e: crate::sweep::ShardError) -> Self {
        Error::Sweep(e)
    }
}

impl From<crate::sweep::SweepError> for Error {
    fn from(e: crate::sweep::SweepError) -> Self {
        use crate::sweep::SweepError;
        match e {
            SweepError::Shard(e) => Error::Sweep(e),
            SweepError::Argument(e) => e.into(),
            SweepError::Model(e) => Error::Model(*e),
            SweepError::Compare(e) => (*e).into(),
            SweepError::Solve(e) => (*e).into(),
            SweepError::Output(e) => e.into(),
        }
    }
}

impl From<ReportError> for Error {
    fn from(e: ReportError) -> Self {
        match e {
            ReportError::Argument(e) => e.into(),
            ReportError::Model(e) => Error::Model(*e),
            ReportError::TooLarge(size) => Error::TooLarge(*size),
            ReportError::Solve(e) => (*e).into(),
            ReportError::Mechanism(e) => (*e).into(),
            ReportError::Compare(e) => (*e).into(),
            ReportError::Output(e) => e.into(),
            other => Error::Report(other),
        }
    }
}

/// The LP layer's refusals are input errors the crate already names: an ε (argument) or a size.
impl From<LpError> for Error {
    fn from(e: LpError) -> Self {
        match e {
            LpError::Epsilon { problem } => Error::argument("ε", problem),
            LpError::TooLarge(size) => Error::TooLarge(size),
        }
    }
}

impl Error {
    /// An argument error, phrased to follow the name: `Error::argument("eps", "must be > 0 (got -1)")`.
    pub fn argument(name: impl Into<String>, problem: impl Into<String>) -> Self {
        Error::Argument { name: name.into(), problem: problem.into() }
    }

    /// True when the fault lies with the user's input (exit code 2 in the CLI).
    pub fn is_input(&self) -> bool {
        match self {
            Error::Model(_) | Error::Argument { .. } | Error::TooLarge(_) | Error::Artifact(_) => true,
            Error::Solve(e) => e.is_input(),
            Error::Audit(e) => e.is_input(),
            Error::Compare(e) => e.is_input(),
            Error::Sweep(e) => e.is_input(),
            Error::Data(e) => e.is_input(),
            Error::Ledger(e) => e.is_input(),
            Error::Certify(_) | Error::Report(_) | Error::Io { .. } => false,
        }
    }

    /// The process exit code the CLI uses: 2 for input errors, 1 for everything else.
    pub fn exit_code(&self) -> u8 {
        if self.is_input() {
            2
        } else {
            1
        }
    }
}

/// The crate's result alias.
pub type Result<T> = std::result::Result<T, Error>;
