//! A caller's value out of range: the one error every layer returns for a bad flag or parameter.

/// An argument (a flag's value, or a library call's parameter) out of range, phrased to follow its
/// name: `ArgumentError::new("--eps", "must be > 0 (got -1)")` reads "--eps must be > 0 (got -1)".
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{name} {problem}")]
pub struct ArgumentError {
    /// The flag or parameter, e.g. `--eps`.
    pub name: String,
    /// What is wrong and what was expected, phrased to follow the name.
    pub problem: String,
}

impl ArgumentError {
    /// The error for `name`, with `problem` phrased to follow it.
    pub fn new(name: impl Into<String>, problem: impl Into<String>) -> Self {
        ArgumentError { name: name.into(), problem: problem.into() }
    }
}
