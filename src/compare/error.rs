//! What can go wrong in a comparison that the user can fix: every variant is an input error
//! (exit code 2 in the CLI), with the flag or model it concerns as a field.

/// A comparison the user asked for that cannot be run as asked.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CompareError {
    /// A list option (`--eps`, `--trials`, `--methods`) is empty.
    #[error("{flag} must list at least one {what}")]
    EmptyList {
        /// The flag, e.g. `--eps`.
        flag: &'static str,
        /// What each item is, e.g. `privacy level ε > 0`.
        what: &'static str,
    },
    /// A privacy level is not a finite number > 0.
    #[error("--eps[{index}] must be a finite number > 0 (got {value})")]
    NonPositiveEps {
        /// Its position in the list.
        index: usize,
        /// The value given.
        value: f64,
    },
    /// A number of trials K is 0.
    #[error("--trials must be at least 1 (got 0)")]
    ZeroTrials,
    /// δ of the (ε, δ) baselines is not in (0, 1).
    #[error("--delta must be a number in (0, 1) (got {value})")]
    DeltaOutOfRange {
        /// The value given.
        value: f64,
    },
    /// The number of parties is 0.
    #[error("--parties must be at least 1 (got 0)")]
    ZeroParties,
    /// The number of parties does not divide a K of the sweep.
    #[error("--parties {parties} does not divide K = {trials}: each party must hold K/M records")]
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
}

impl CompareError {
    /// True when the fault lies with the user's input (every variant today; decided by variant).
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
            | CompareError::UnsupportedLoss { .. } => true,
        }
    }
}
