//! A caller's value out of range: the one error every layer returns for a bad parameter, and the
//! parameters themselves, named as the library names them ([`Parameter`]).

use std::fmt;
use std::sync::OnceLock;

/// An argument (a parameter of a library call, or the command line's flag for it) out of range,
/// phrased to follow its name: `ArgumentError::new(Parameter::Eps, "must be > 0 (got -1)")` reads
/// "eps must be > 0 (got -1)" (the command line spells parameters as its flags instead:
/// [`Parameter::set_spelling`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{name} {problem}")]
pub struct ArgumentError {
    /// The parameter as the caller spells it (`eps`; `--eps` on the command line), or a field.
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

/// A parameter the library's errors and notes name. The library names it by [`Parameter::name`]
/// (the bindings' keyword argument); a front end that spells parameters otherwise (the command
/// line: `--eps`) says so once with [`Parameter::set_spelling`], and every message follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Parameter {
    /// The privacy levels ε.
    Eps,
    /// δ of the (ε, δ) methods.
    Delta,
    /// The solver choice.
    Solver,
    /// A solve's time limit in seconds.
    MaxSeconds,
    /// The output file or directory.
    Out,
    /// A sweep's slice (`I/N`).
    Shard,
    /// The numbers of trials K.
    Trials,
    /// The methods of a comparison.
    Methods,
    /// The numbers of parties M.
    Parties,
    /// An audit's samples per pair.
    Samples,
    /// An audit's significance level.
    Alpha,
    /// The largest number of neighbouring pairs an audit tests.
    MaxPairs,
    /// A credible interval's level.
    Level,
    /// The released values a posterior is conditioned on.
    Releases,
    /// The largest ε a deployer accepts.
    MaxEps,
    /// A pinned model fingerprint.
    Fingerprint,
    /// The privacy-budget ledger (an SQLite file or a `postgres://` URL).
    Ledger,
    /// A dataset's name in the ledger.
    Dataset,
    /// A dataset's total ε.
    Budget,
    /// A dataset's total δ.
    DeltaBudget,
}

/// How the front end spells parameters, set once by [`Parameter::set_spelling`].
static SPELLING: OnceLock<fn(Parameter) -> &'static str> = OnceLock::new();

impl Parameter {
    /// The library's name of the parameter (snake case: `max_seconds`), which the bindings take as
    /// a keyword argument.
    pub const fn name(self) -> &'static str {
        match self {
            Parameter::Eps => "eps",
            Parameter::Delta => "delta",
            Parameter::Solver => "solver",
            Parameter::MaxSeconds => "max_seconds",
            Parameter::Out => "out",
            Parameter::Shard => "shard",
            Parameter::Trials => "trials",
            Parameter::Methods => "methods",
            Parameter::Parties => "parties",
            Parameter::Samples => "samples",
            Parameter::Alpha => "alpha",
            Parameter::MaxPairs => "max_pairs",
            Parameter::Level => "level",
            Parameter::Releases => "releases",
            Parameter::MaxEps => "max_eps",
            Parameter::Fingerprint => "fingerprint",
            Parameter::Ledger => "ledger",
            Parameter::Dataset => "dataset",
            Parameter::Budget => "budget",
            Parameter::DeltaBudget => "delta_budget",
        }
    }

    /// Spell every parameter in messages as `spelling` says, from now on (the command line: its
    /// flags). Only the first call counts: a process has one front end. Returns whether it did.
    pub fn set_spelling(spelling: fn(Parameter) -> &'static str) -> bool {
        SPELLING.set(spelling).is_ok()
    }

    /// The parameter as this process's messages spell it: [`Parameter::name`], unless the front
    /// end set another spelling.
    pub fn spelled(self) -> &'static str {
        SPELLING.get().map_or(self.name(), |spell| spell(self))
    }
}

impl fmt::Display for Parameter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.spelled())
    }
}

impl From<Parameter> for String {
    fn from(p: Parameter) -> String {
        p.spelled().to_string()
    }
}
