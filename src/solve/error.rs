//! Errors of the solve layer.

use super::{SolverChoice, Status};
use crate::certify::CertifyError;
use crate::guard::{ArgumentError, Parameter, SizeError};
use crate::lp::LpError;
use crate::model::ModelError;

/// The solve layer's result.
pub(crate) type Result<T, E = SolveError> = std::result::Result<T, E>;

/// Why a solve produced nothing usable.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum SolveError {
    /// A caller's value out of range (an ε, a target, a limit).
    #[error(transparent)]
    Argument(#[from] ArgumentError),
    /// The problem would not fit in memory: names the fields to shrink.
    #[error(transparent)]
    TooLarge(Box<SizeError>),
    /// A model (or an ε list checked as a model's) that does not validate.
    #[error(transparent)]
    Model(Box<ModelError>),
    /// A solved point that could not be repaired and certified.
    #[error(transparent)]
    Certify(Box<CertifyError>),
    /// The backend ran but returned no usable point.
    #[error("{solver} returned no solution at ε = {eps}: {status} ({detail})")]
    NoSolution {
        /// The backend.
        solver: SolverChoice,
        /// The ε solved for.
        eps: f64,
        /// Its status.
        status: Status,
        /// Its own words.
        detail: String,
    },
    /// The backend refused the LP or failed outright.
    #[error("{solver}: {message}")]
    Backend {
        /// The library.
        solver: Library,
        /// What it said.
        message: String,
    },
    /// The chosen solver is not compiled into this build.
    #[error(
        "{} {choice}: this build has no `{feature}` feature (rebuild with --features {feature})",
        Parameter::Solver
    )]
    NotCompiled {
        /// The choice.
        choice: SolverChoice,
        /// The cargo feature it needs.
        feature: &'static str,
    },
    /// The chosen solver does not apply to this model.
    #[error("{} {choice} {requirement} (model {model} does not)", Parameter::Solver)]
    NotApplicable {
        /// The choice.
        choice: SolverChoice,
        /// What the solver needs.
        requirement: &'static str,
        /// The model's name.
        model: String,
    },
    /// Limits were asked of a backend that cannot apply them.
    #[error("{solver} cannot apply an iteration or time limit")]
    LimitUnsupported {
        /// The backend.
        solver: String,
    },
    /// The solve would take longer than the default time budget, by the estimate made before
    /// any work (a caller who states a limit gets an anytime solve instead).
    #[error("the solve would take roughly {estimated_seconds:.0} s, more than the default budget of {limit_seconds} s: pass {} S to run it for at most S seconds (it then returns the best certified mechanism found by then, with its gap), or reduce {fields}", Parameter::MaxSeconds)]
    TooSlow {
        /// The estimate.
        estimated_seconds: f64,
        /// The limit.
        limit_seconds: f64,
        /// The model fields that set the work.
        fields: String,
    },
    /// The model's costs c\[k,i\] overflow: its values are too large for its loss.
    #[error("{fields}: the costs of this model are not finite numbers (the loss overflows between its parameter and output values); use a narrower range")]
    NonFiniteCosts {
        /// The model fields to change.
        fields: String,
    },
    /// No LP backend is compiled in at all.
    #[error("no LP solver backend is compiled into this build (features highs, clarabel, good_lp)")]
    NoBackend,
    /// A mechanism was asked of a solve that has no releasable answer.
    #[error("nothing to release at ε = {eps}: the solve ended {status} and its answer could not be certified")]
    NothingToRelease {
        /// The ε.
        eps: f64,
        /// The solve's status.
        status: Status,
    },
}

boxed_from!(SolveError {
    SizeError => TooLarge,
    ModelError => Model,
    CertifyError => Certify,
});

/// The LP layer's refusals are input errors the solve layer already names: an ε or a size.
impl From<LpError> for SolveError {
    fn from(e: LpError) -> Self {
        match e {
            LpError::Epsilon { problem } => ArgumentError::new("ε", problem).into(),
            LpError::TooLarge(size) => size.into(),
        }
    }
}

impl SolveError {
    /// True when the fault lies with the caller's input: a value out of range, a model, a size,
    /// or a solver that this build or model cannot use.
    pub fn is_input(&self) -> bool {
        matches!(
            self,
            SolveError::Argument(_)
                | SolveError::TooLarge(_)
                | SolveError::Model(_)
                | SolveError::NotCompiled { .. }
                | SolveError::NotApplicable { .. }
                | SolveError::TooSlow { .. }
                | SolveError::NonFiniteCosts { .. }
        )
    }

    /// An argument error, phrased to follow the name.
    pub(crate) fn argument(name: impl Into<String>, problem: impl Into<String>) -> Self {
        ArgumentError::new(name, problem).into()
    }

    pub(crate) fn backend(solver: Library, message: impl std::fmt::Display) -> Self {
        SolveError::Backend { solver, message: message.to_string() }
    }

    /// Refuse a choice this build cannot run.
    pub(crate) fn check_available(choice: SolverChoice) -> Result<()> {
        match choice.missing_feature() {
            Some(feature) => Err(SolveError::NotCompiled { choice, feature }),
            None => Ok(()),
        }
    }
}

/// The solver library behind a backend, as its errors name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Library {
    /// HiGHS (simplex or interior point).
    Highs,
    /// Clarabel.
    Clarabel,
    /// good_lp, whatever it drives.
    GoodLp,
}

impl std::fmt::Display for Library {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Library::Highs => "highs",
            Library::Clarabel => "clarabel",
            Library::GoodLp => "good_lp",
        })
    }
}
