//! What can go wrong in a comparison: a request the user can fix (an input error, exit code 2 in
//! the CLI, with the flag or model it concerns as a field), or a lower layer's error on the way.

use crate::guard::{ArgumentError, Parameter, SizeError};
use crate::mechanism::MechanismError;
use crate::model::ModelError;
use crate::output::OutputError;
use crate::parties::PartiesError;
use crate::solve::SolveError;

/// The compare layer's result.
pub(crate) type Result<T, E = CompareError> = std::result::Result<T, E>;

/// A comparison that cannot be run as asked, or whose solve, release or files failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CompareError {
    /// A list parameter (`eps`, `trials`, `methods`, `parties`) is empty.
    #[error("{parameter} must list at least one {what}")]
    EmptyList {
        /// The parameter, e.g. [`Parameter::Eps`].
        parameter: Parameter,
        /// What each item is, e.g. `privacy level ε > 0`.
        what: &'static str,
    },
    /// A privacy level is not a finite number > 0.
    #[error("{}[{index}] must be a finite number > 0 (got {value})", Parameter::Eps)]
    NonPositiveEps {
        /// Its position in the list.
        index: usize,
        /// The value given.
        value: f64,
    },
    /// A number of trials K is 0.
    #[error("{} must be at least 1 (got 0)", Parameter::Trials)]
    ZeroTrials,
    /// δ of the (ε, δ) baselines is not in (0, 1).
    #[error("{} must be a number in (0, 1) (got {value})", Parameter::Delta)]
    DeltaOutOfRange {
        /// The value given.
        value: f64,
    },
    /// The number of parties is 0.
    #[error("{} must be at least 1 (got 0)", Parameter::Parties)]
    ZeroParties,
    /// The number of parties does not divide a K of the sweep.
    #[error("{} {parties} does not divide K = {trials}: each party must hold K/M records", Parameter::Parties)]
    PartiesDoNotDivide {
        /// M.
        parties: u64,
        /// The K it does not divide.
        trials: u64,
    },
    /// The risk(θ) curves were asked for fewer than 2 points.
    #[error("the risk curves need at least 2 points (got {points})")]
    TooFewCurvePoints {
        /// The number asked for.
        points: usize,
    },
    /// The model's family is one the baselines do not cover.
    #[error("{model}: compare supports the binomial family only (this model is {family})")]
    UnsupportedFamily {
        /// The model: its file, or its name when no file is known.
        model: String,
        /// Its family, as named in model files.
        family: &'static str,
    },
    /// The model's loss is one the baselines do not evaluate.
    #[error("{model}: compare supports squared and absolute loss only (this model uses {loss} loss)")]
    UnsupportedLoss {
        /// The model: its file, or its name when no file is known.
        model: String,
        /// Its loss, as named in model files.
        loss: &'static str,
    },
    /// UBaPP designs handed to [`compare_solved`](super::compare_solved) that are not the
    /// model's at the sweep's ε: the calling code's mistake, not the user's input.
    #[error("the UBaPP designs given to the comparison do not fit it: {problem}")]
    DesignsMismatch {
        /// How they differ.
        problem: String,
    },
    /// A caller's value out of range.
    #[error(transparent)]
    Argument(#[from] ArgumentError),
    /// A model (a shard's embedded one, or a party split) that does not validate.
    #[error(transparent)]
    Model(Box<ModelError>),
    /// A reference computation that would not fit in memory.
    #[error(transparent)]
    TooLarge(Box<SizeError>),
    /// The UBaPP solve failed.
    #[error(transparent)]
    Solve(Box<SolveError>),
    /// The certified release could not be built.
    #[error(transparent)]
    Mechanism(Box<MechanismError>),
    /// A per-party mechanism could not be built.
    #[error(transparent)]
    Parties(Box<PartiesError>),
    /// A file could not be written.
    #[error(transparent)]
    Output(#[from] OutputError),
}

boxed_from!(CompareError {
    ModelError => Model,
    SizeError => TooLarge,
    SolveError => Solve,
    MechanismError => Mechanism,
    PartiesError => Parties,
});

impl CompareError {
    /// An argument error, phrased to follow the name.
    pub(crate) fn argument(name: impl Into<String>, problem: impl Into<String>) -> Self {
        ArgumentError::new(name, problem).into()
    }

    /// True when the fault lies with the user's input (decided by variant).
    pub fn is_input(&self) -> bool {
        match self {
            CompareError::EmptyList { .. }
            | CompareError::NonPositiveEps { .. }
            | CompareError::ZeroTrials
            | CompareError::DeltaOutOfRange { .. }
            | CompareError::ZeroParties
            | CompareError::PartiesDoNotDivide { .. }
            | CompareError::TooFewCurvePoints { .. }
            | CompareError::UnsupportedFamily { .. }
            | CompareError::UnsupportedLoss { .. }
            | CompareError::Argument(_)
            | CompareError::Model(_)
            | CompareError::TooLarge(_) => true,
            CompareError::DesignsMismatch { .. } => false,
            CompareError::Solve(e) => e.is_input(),
            CompareError::Mechanism(e) => e.is_input(),
            CompareError::Parties(e) => e.is_input(),
            CompareError::Output(e) => e.is_input(),
        }
    }
}
