//! One module per subcommand: validate flags, call the library, print.

pub mod audit;
pub mod bench;
pub mod bench_cases;
pub mod bench_models;
pub mod common;
pub mod compare;
pub mod compare_parties;
pub mod ledger;
pub mod merge;
pub mod models;
pub mod params;
pub mod plan;
pub mod posterior;
pub mod progress;
pub mod release;
pub mod report;
pub mod sample;
pub mod solve;
pub mod trust;
pub mod verify;

/// What a subcommand can fail with: the library's errors, or the binary's own (a benchmark's child
/// process).
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// From the library; its variant decides the exit code.
    #[error(transparent)]
    Ubapp(#[from] ubapp::Error),
    /// A benchmark case could not be run or read.
    #[error("{0}")]
    Bench(String),
}

impl CliError {
    /// 2 for input errors, 1 otherwise.
    pub fn exit_code(&self) -> u8 {
        match self {
            CliError::Ubapp(e) => e.exit_code(),
            CliError::Bench(_) => 1,
        }
    }
}

/// A subcommand's result.
pub type CliResult<T> = Result<T, CliError>;
