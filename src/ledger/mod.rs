//! The privacy-budget ledger: every release from a dataset is recorded — dataset, ε and δ spent,
//! the composition rule, the mechanism's fingerprint, the time and the released value — before
//! its value is shown, and a release that would take a dataset past its budget is refused before
//! anything is sampled.
//!
//! One trait, [`Ledger`], two backends behind it: SQLite (one file, the default; `sqlite.rs`) and
//! PostgreSQL (`postgres://…`, for several hosts; `postgres.rs`), with the same schema. [`open`]
//! picks one from the location. [`Ledger::spend`] is the one atomic step: in one transaction
//! that holds the dataset's row (SQLite's `BEGIN IMMEDIATE`, PostgreSQL's `SELECT … FOR UPDATE`)
//! it checks the budget, calls the caller's draw, inserts the release with its value, updates
//! the dataset's totals and commits — and only then returns the value for the caller to show.
//! A process killed at any point therefore leaves either nothing (the transaction rolls back: no
//! value was returned, none can have been shown) or the committed row.
//!
//! Composition: basic composition, summed per dataset — ε alone for pure-ε releases, ε and δ each
//! for (ε, δ) releases ([`Composition`], recorded with each release); sums round up, so the
//! recorded totals never understate the exact sum of what was charged. Datasets are disjoint by
//! name (parallel composition): each has its own budget.

mod error;
mod postgres;
mod sqlite;

use std::time::{SystemTime, UNIX_EPOCH};

use serde::Serialize;

use crate::guard::Parameter;

pub use error::LedgerError;

/// The ledger layer's result.
pub(crate) type Result<T, E = LedgerError> = std::result::Result<T, E>;

/// A dataset's privacy budget (or what it has spent).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Budget {
    /// ε.
    pub eps: f64,
    /// δ (0: pure-ε releases only).
    pub delta: f64,
}

/// How a release's spend adds to its dataset's total.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Composition {
    /// Basic composition of pure-ε releases: the ε add up.
    #[serde(rename = "basic-pure-eps")]
    BasicPure,
    /// Basic composition of (ε, δ) releases: the ε add up and the δ add up.
    #[serde(rename = "basic-eps-delta")]
    BasicApprox,
}

impl Composition {
    /// The rule for a release spending δ (0 for a pure-ε mechanism).
    pub fn for_delta(delta: f64) -> Composition {
        if delta > 0.0 {
            Composition::BasicApprox
        } else {
            Composition::BasicPure
        }
    }

    /// Its name in the ledger.
    pub fn name(self) -> &'static str {
        match self {
            Composition::BasicPure => "basic-pure-eps",
            Composition::BasicApprox => "basic-eps-delta",
        }
    }

    fn from_name(name: &str) -> Option<Composition> {
        [Composition::BasicPure, Composition::BasicApprox].into_iter().find(|c| c.name() == name)
    }
}

/// What one release will spend, asked of [`Ledger::spend`].
#[derive(Debug, Clone, PartialEq)]
pub struct Charge {
    /// The dataset released from.
    pub dataset: String,
    /// ε spent (the mechanism's certified ε).
    pub eps: f64,
    /// δ spent (its certified δ; 0 for pure ε).
    pub delta: f64,
    /// The mechanism's model fingerprint.
    pub fingerprint: String,
    /// The mechanism file (or other name) it came from.
    pub mechanism: String,
}

impl Charge {
    /// The entry this charge becomes once recorded as release `id` at `time`, added by
    /// `composition`, of `value`.
    pub(crate) fn entry(&self, id: i64, composition: Composition, time: String, value: String) -> Entry {
        Entry {
            id,
            dataset: self.dataset.clone(),
            eps: self.eps,
            delta: self.delta,
            composition,
            fingerprint: self.fingerprint.clone(),
            mechanism: self.mechanism.clone(),
            time,
            value,
        }
    }
}

/// One recorded release.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Entry {
    /// Its number in the ledger (increasing).
    pub id: i64,
    /// The dataset.
    pub dataset: String,
    /// ε spent.
    pub eps: f64,
    /// δ spent.
    pub delta: f64,
    /// The composition rule it was added by.
    pub composition: Composition,
    /// The mechanism's model fingerprint.
    pub fingerprint: String,
    /// The mechanism it came from.
    pub mechanism: String,
    /// When (UTC, RFC 3339).
    pub time: String,
    /// The released value, as printed (coordinates separated by commas).
    pub value: String,
}

/// A dataset's budget, what it has spent, and its releases.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DatasetHistory {
    /// The dataset's name.
    pub dataset: String,
    /// Its budget, set once.
    pub budget: Budget,
    /// What its releases have spent (rounded up).
    pub spent: Budget,
    /// When its budget was set (UTC, RFC 3339).
    pub created: String,
    /// Its releases, oldest first.
    pub releases: Vec<Entry>,
}

impl DatasetHistory {
    /// What is left: budget − spent, never below 0.
    pub fn remaining(&self) -> Budget {
        Budget {
            eps: (self.budget.eps - self.spent.eps).max(0.0),
            delta: (self.budget.delta - self.spent.delta).max(0.0),
        }
    }
}

/// A ledger: budgets set once per dataset and the releases recorded against them.
pub trait Ledger {
    /// How messages name it (a file, or a URL without its password).
    fn location(&self) -> &str;

    /// Set `dataset`'s budget; refused if it has one already (a budget is set once).
    fn init(&mut self, dataset: &str, budget: Budget) -> Result<()>;

    /// The atomic release: check that `charge` fits its dataset's budget (else
    /// [`LedgerError::OverBudget`], before `draw` is called), call `draw` for the value, record
    /// the release with it and commit; the entry comes back only once committed.
    fn spend(&mut self, charge: &Charge, draw: &mut dyn FnMut() -> String) -> Result<Entry>;

    /// Every dataset's history (or only `dataset`'s), datasets by name.
    fn history(&mut self, dataset: Option<&str>) -> Result<Vec<DatasetHistory>>;
}

/// Open the ledger at `location`: `postgres://…` or `postgresql://…` a PostgreSQL database, anything
/// else an SQLite file. With `create`, an SQLite file that does not exist is created and either
/// database gets the schema; without it (a release, `show`) a ledger that was never initialised is
/// refused.
pub fn open(location: &str, create: bool) -> Result<Box<dyn Ledger>> {
    if location.trim().is_empty() {
        return Err(LedgerError::argument(Parameter::Ledger, "is empty: give an SQLite file or a postgres:// URL"));
    }
    if location.starts_with("postgres://") || location.starts_with("postgresql://") {
        Ok(Box::new(postgres::PostgresLedger::open(location, create)?))
    } else {
        Ok(Box::new(sqlite::SqliteLedger::open(std::path::Path::new(location), create)?))
    }
}

/// A budget's number as messages print it: shortest round-trip digits, in exponent form below
/// 1e-4 (a remaining ε of 5.6e-15 rather than 0.0000000000000056).
pub fn show_number(x: f64) -> String {
    if x != 0.0 && x.abs() < 1e-4 {
        format!("{x:e}")
    } else {
        x.to_string()
    }
}

/// A dataset name: 1 to 200 characters, none of them a control character.
pub fn check_dataset(name: &str) -> Result<()> {
    if name.is_empty() || name.chars().count() > 200 || name.chars().any(char::is_control) {
        return Err(LedgerError::argument(
            Parameter::Dataset,
            format!("must be 1 to 200 characters without control characters (got {})", crate::guard::text::quote(name)),
        ));
    }
    Ok(())
}

/// A budget to set: ε finite and > 0, δ finite in [0, 1).
pub fn check_budget(budget: Budget) -> Result<()> {
    if !(budget.eps.is_finite() && budget.eps > 0.0) {
        return Err(LedgerError::argument(Parameter::Budget, format!("must be a finite ε > 0 (got {})", budget.eps)));
    }
    if !(budget.delta.is_finite() && (0.0..1.0).contains(&budget.delta)) {
        return Err(LedgerError::argument(
            Parameter::DeltaBudget,
            format!("must be a δ in [0, 1) (got {})", budget.delta),
        ));
    }
    Ok(())
}

/// What `dataset` will have spent after `charge`, or the refusal naming what it has spent and what
/// remains. Sums round up (a total never understates the exact sum).
fn after_charge(location: &str, budget: Budget, spent: Budget, charge: &Charge) -> Result<Budget> {
    let next = Budget { eps: add_up(spent.eps, charge.eps), delta: add_up(spent.delta, charge.delta) };
    if next.eps > budget.eps || next.delta > budget.delta {
        return Err(LedgerError::OverBudget {
            ledger: location.to_string(),
            dataset: charge.dataset.clone(),
            asked: Budget { eps: charge.eps, delta: charge.delta },
            spent,
            budget,
        });
    }
    Ok(next)
}

/// a + b rounded up: the float sum, one step up when it fell below the exact sum (TwoSum gives the
/// rounding error exactly).
fn add_up(a: f64, b: f64) -> f64 {
    let s = a + b;
    let bb = s - a;
    let err = (a - (s - bb)) + (b - bb);
    if err > 0.0 {
        crate::certify::exact::next_up(s)
    } else {
        s
    }
}

/// Now, UTC, as RFC 3339 to the microsecond (`2026-05-01T12:00:00.000000Z`).
fn now_utc() -> String {
    let since = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = since.as_secs() as i64;
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Civil date from days since 1970-01-01 (Howard Hinnant's days_from_civil, inverted).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:06}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        since.subsec_micros()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_round_up_and_budgets_refuse() {
        assert_eq!(add_up(0.5, 0.5), 1.0);
        let mut s = 0.0;
        for _ in 0..10 {
            s = add_up(s, 0.1);
        }
        // Ten times the double nearest 0.1 is more than 1 exactly: the rounded-up sum says so.
        assert!(s > 1.0);
        let charge =
            Charge { dataset: "d".into(), eps: 0.5, delta: 0.0, fingerprint: String::new(), mechanism: String::new() };
        let budget = Budget { eps: 1.0, delta: 0.0 };
        assert_eq!(after_charge("l", budget, Budget { eps: 0.5, delta: 0.0 }, &charge).unwrap().eps, 1.0);
        let e = after_charge("l", budget, Budget { eps: 1.0, delta: 0.0 }, &charge).unwrap_err();
        assert_eq!(
            e.to_string(),
            "ledger l refuses the release: dataset \"d\" has spent ε = 1 of its budget 1 (remaining ε = 0), and this release would spend ε = 0.5"
        );
        let approx = Charge { delta: 1e-6, ..charge };
        assert!(after_charge("l", budget, Budget { eps: 0.0, delta: 0.0 }, &approx).is_err());
    }

    #[test]
    fn the_clock_reads_as_rfc_3339() {
        let t = now_utc();
        assert_eq!(t.len(), 27, "{t}");
        assert!(t.starts_with("20") && t.ends_with('Z') && &t[10..11] == "T", "{t}");
    }
}
