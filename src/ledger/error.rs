//! The ledger's error: a refusal (over budget, no budget, a budget set twice), a bad location or
//! value, or the database's own failure.

use super::Budget;
use crate::guard::ArgumentError;

/// Why a ledger refused or failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LedgerError {
    /// A caller's value out of range (a budget, a dataset name, a location).
    #[error(transparent)]
    Argument(#[from] ArgumentError),
    /// The release would take the dataset past its budget: refused before sampling.
    #[error(
        "ledger {ledger} refuses the release: dataset \"{dataset}\" has spent {} of its budget {} (remaining {}), and this release would spend {}",
        show_eps_delta(*.spent, "ε = "),
        show_eps_delta(*.budget, ""),
        show_eps_delta(remaining(*.budget, *.spent), "ε = "),
        show_eps_delta(*.asked, "ε = ")
    )]
    OverBudget {
        /// The ledger.
        ledger: String,
        /// The dataset.
        dataset: String,
        /// What the release asked to spend.
        asked: Budget,
        /// What the dataset has spent.
        spent: Budget,
        /// Its budget.
        budget: Budget,
    },
    /// The dataset has no budget in this ledger.
    #[error("ledger {ledger} has no budget for dataset \"{dataset}\": set it once with `ubapp ledger init --ledger {ledger} --dataset {dataset} --budget EPS`")]
    NoBudget {
        /// The ledger.
        ledger: String,
        /// The dataset.
        dataset: String,
    },
    /// A budget is set once per dataset.
    #[error("ledger {ledger}: dataset \"{dataset}\" has a budget already (ε = {}, δ = {}); a budget is set once", .budget.eps, .budget.delta)]
    AlreadyInitialised {
        /// The ledger.
        ledger: String,
        /// The dataset.
        dataset: String,
        /// Its budget.
        budget: Budget,
    },
    /// No ledger at that location (never initialised), or not a ledger.
    #[error("{ledger}: {problem}")]
    NotALedger {
        /// The location.
        ledger: String,
        /// What was found instead, and what to do.
        problem: String,
    },
    /// The SQLite database failed.
    #[error("ledger {ledger}: SQLite: {source}")]
    Sqlite {
        /// The file.
        ledger: String,
        /// SQLite's error.
        source: rusqlite::Error,
    },
    /// The PostgreSQL server failed or could not be reached.
    #[error("ledger {ledger}: PostgreSQL: {source}")]
    Postgres {
        /// The URL, without its password.
        ledger: String,
        /// The client's error.
        source: postgres::Error,
    },
}

impl LedgerError {
    /// True when the caller can fix it (exit 2): a refusal, a bad value, a ledger that is not one.
    pub fn is_input(&self) -> bool {
        match self {
            LedgerError::Argument(_)
            | LedgerError::OverBudget { .. }
            | LedgerError::NoBudget { .. }
            | LedgerError::AlreadyInitialised { .. }
            | LedgerError::NotALedger { .. } => true,
            LedgerError::Sqlite { .. } | LedgerError::Postgres { .. } => false,
        }
    }

    /// An argument error, phrased to follow the name.
    pub(crate) fn argument(name: impl Into<String>, problem: impl Into<String>) -> Self {
        ArgumentError::new(name, problem).into()
    }
}

/// budget − spent, never below 0.
fn remaining(budget: Budget, spent: Budget) -> Budget {
    Budget { eps: (budget.eps - spent.eps).max(0.0), delta: (budget.delta - spent.delta).max(0.0) }
}

/// `ε = 1` for pure ε, `(ε, δ) = (1, 1e-6)` when δ is not 0; `prefix` before a pure ε.
fn show_eps_delta(b: Budget, prefix: &str) -> String {
    let eps = super::show_number(b.eps);
    if b.delta > 0.0 {
        format!("(ε, δ) = ({eps}, {:e})", b.delta)
    } else {
        format!("{prefix}{eps}")
    }
}
