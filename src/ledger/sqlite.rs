//! The SQLite ledger: one file, SQLite compiled in. WAL journal (readers never wait for the
//! writer), `synchronous = FULL` (a committed release survives a power cut, not only a killed
//! process), a 60-second busy timeout, and [`Ledger::spend`] in one `BEGIN IMMEDIATE`
//! transaction: the write lock is taken before the budget is read, so two processes never both
//! see the same remaining budget.

use std::path::Path;
use std::time::Duration;

use rusqlite::{params, Connection, OpenFlags, OptionalExtension, TransactionBehavior};

use super::{after_charge, now_utc, Budget, Charge, Composition, DatasetHistory, Entry, Ledger, LedgerError, Result};

/// The schema (PostgreSQL's is the same, with its own integer key).
const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS ubapp_datasets (
    name TEXT PRIMARY KEY,
    eps_budget DOUBLE PRECISION NOT NULL,
    delta_budget DOUBLE PRECISION NOT NULL,
    eps_spent DOUBLE PRECISION NOT NULL,
    delta_spent DOUBLE PRECISION NOT NULL,
    created TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS ubapp_releases (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    dataset TEXT NOT NULL REFERENCES ubapp_datasets(name),
    eps DOUBLE PRECISION NOT NULL,
    delta DOUBLE PRECISION NOT NULL,
    composition TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    mechanism TEXT NOT NULL,
    released_at TEXT NOT NULL,
    value TEXT NOT NULL
);";

/// How long a process waits for another's transaction before giving up.
const BUSY_TIMEOUT: Duration = Duration::from_secs(60);

/// A ledger in an SQLite file.
pub(super) struct SqliteLedger {
    conn: Connection,
    location: String,
}

impl SqliteLedger {
    /// Open (with `create`: create if needed, with the schema) the ledger file `path`.
    pub(super) fn open(path: &Path, create: bool) -> Result<SqliteLedger> {
        let location = path.display().to_string();
        if !create && !path.exists() {
            return Err(LedgerError::NotALedger {
                ledger: location,
                problem: "no such ledger file (create it, and set a dataset's budget, with `ubapp ledger init`)".into(),
            });
        }
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX
            | if create { OpenFlags::SQLITE_OPEN_CREATE } else { OpenFlags::empty() };
        let fail = |source| LedgerError::Sqlite { ledger: location.clone(), source };
        let conn = Connection::open_with_flags(path, flags).map_err(fail)?;
        conn.busy_timeout(BUSY_TIMEOUT).map_err(fail)?;
        let ledger = SqliteLedger { conn, location };
        ledger.prepare(create)?;
        Ok(ledger)
    }

    fn fail(&self) -> impl Fn(rusqlite::Error) -> LedgerError + '_ {
        |source| match source {
            rusqlite::Error::SqliteFailure(e, _) if e.code == rusqlite::ErrorCode::NotADatabase => {
                LedgerError::NotALedger { ledger: self.location.clone(), problem: "is not an SQLite file".into() }
            }
            source => LedgerError::Sqlite { ledger: self.location.clone(), source },
        }
    }

    /// The journal mode and durability, and the schema (created when `create`, else required).
    fn prepare(&self, create: bool) -> Result<()> {
        let c = &self.conn;
        if create {
            // WAL is a property of the file: set once here, it holds for every later process.
            let mode: String = c.query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0)).map_err(self.fail())?;
            if !mode.eq_ignore_ascii_case("wal") {
                return Err(LedgerError::NotALedger {
                    ledger: self.location.clone(),
                    problem: format!("SQLite could not use its WAL journal here (journal mode {mode})"),
                });
            }
            c.execute_batch(SCHEMA).map_err(self.fail())?;
        }
        c.execute_batch("PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON;").map_err(self.fail())?;
        let tables: i64 = c
            .query_row(
                "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN ('ubapp_datasets', 'ubapp_releases')",
                [],
                |r| r.get(0),
            )
            .map_err(self.fail())?;
        if tables != 2 {
            return Err(LedgerError::NotALedger {
                ledger: self.location.clone(),
                problem: "is an SQLite file but not a ubapp ledger (create one with `ubapp ledger init`)".into(),
            });
        }
        Ok(())
    }
}

/// A dataset's row: budget, spent, created.
fn dataset_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<(Budget, Budget, String)> {
    Ok((Budget { eps: r.get(0)?, delta: r.get(1)? }, Budget { eps: r.get(2)?, delta: r.get(3)? }, r.get(4)?))
}

const DATASET_COLUMNS: &str = "eps_budget, delta_budget, eps_spent, delta_spent, created";

impl Ledger for SqliteLedger {
    fn location(&self) -> &str {
        &self.location
    }

    fn init(&mut self, dataset: &str, budget: Budget) -> Result<()> {
        super::check_dataset(dataset)?;
        super::check_budget(budget)?;
        let location = self.location.clone();
        let fail = |source| LedgerError::Sqlite { ledger: location.clone(), source };
        let tx = self.conn.transaction_with_behavior(TransactionBehavior::Immediate).map_err(fail)?;
        let existing = tx
            .query_row(&format!("SELECT {DATASET_COLUMNS} FROM ubapp_datasets WHERE name = ?1"), [dataset], dataset_row)
            .optional()
            .map_err(fail)?;
        if let Some((budget, _, _)) = existing {
            return Err(LedgerError::AlreadyInitialised { ledger: location, dataset: dataset.into(), budget });
        }
        tx.execute(
            "INSERT INTO ubapp_datasets (name, eps_budget, delta_budget, eps_spent, delta_spent, created) VALUES (?1, ?2, ?3, 0, 0, ?4)",
            params![dataset, budget.eps, budget.delta, now_utc()],
        )
        .map_err(fail)?;
        tx.commit().map_err(fail)
    }

    fn spend(&mut self, charge: &Charge, draw: &mut dyn FnMut() -> String) -> Result<Entry> {
        let location = self.location.clone();
        let fail = |source| LedgerError::Sqlite { ledger: location.clone(), source };
        // The write lock first: no other process reads this budget until we commit or roll back.
        let tx = self.conn.transaction_with_behavior(TransactionBehavior::Immediate).map_err(fail)?;
        let row = tx
            .query_row(
                &format!("SELECT {DATASET_COLUMNS} FROM ubapp_datasets WHERE name = ?1"),
                [&charge.dataset],
                dataset_row,
            )
            .optional()
            .map_err(fail)?;
        let Some((budget, spent, _)) = row else {
            return Err(LedgerError::NoBudget { ledger: location, dataset: charge.dataset.clone() });
        };
        let next = after_charge(&location, budget, spent, charge)?;
        let value = draw();
        let composition = Composition::for_delta(charge.delta);
        let time = now_utc();
        tx.execute(
            "INSERT INTO ubapp_releases (dataset, eps, delta, composition, fingerprint, mechanism, released_at, value) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            params![
                charge.dataset,
                charge.eps,
                charge.delta,
                composition.name(),
                charge.fingerprint,
                charge.mechanism,
                time,
                value
            ],
        )
        .map_err(fail)?;
        let id = tx.last_insert_rowid();
        tx.execute(
            "UPDATE ubapp_datasets SET eps_spent = ?1, delta_spent = ?2 WHERE name = ?3",
            params![next.eps, next.delta, charge.dataset],
        )
        .map_err(fail)?;
        tx.commit().map_err(fail)?;
        Ok(charge.entry(id, composition, time, value))
    }

    fn history(&mut self, dataset: Option<&str>) -> Result<Vec<DatasetHistory>> {
        let location = self.location.clone();
        let fail = |source| LedgerError::Sqlite { ledger: location.clone(), source };
        // One read transaction: the totals and the releases are one snapshot.
        let tx = self.conn.transaction_with_behavior(TransactionBehavior::Deferred).map_err(fail)?;
        let mut out = Vec::new();
        {
            let mut datasets = tx
                .prepare(&format!(
                    "SELECT name, {DATASET_COLUMNS} FROM ubapp_datasets WHERE ?1 IS NULL OR name = ?1 ORDER BY name"
                ))
                .map_err(fail)?;
            let rows = datasets
                .query_map([dataset], |r| {
                    let name: String = r.get(0)?;
                    let budget = Budget { eps: r.get(1)?, delta: r.get(2)? };
                    let spent = Budget { eps: r.get(3)?, delta: r.get(4)? };
                    Ok((name, budget, spent, r.get::<_, String>(5)?))
                })
                .map_err(fail)?;
            for row in rows {
                let (name, budget, spent, created) = row.map_err(fail)?;
                out.push(DatasetHistory { dataset: name, budget, spent, created, releases: Vec::new() });
            }
            let mut releases = tx
                .prepare(
                    "SELECT id, dataset, eps, delta, composition, fingerprint, mechanism, released_at, value \
                     FROM ubapp_releases WHERE ?1 IS NULL OR dataset = ?1 ORDER BY id",
                )
                .map_err(fail)?;
            let rows = releases
                .query_map([dataset], |r| {
                    let composition: String = r.get(4)?;
                    Ok(Entry {
                        id: r.get(0)?,
                        dataset: r.get(1)?,
                        eps: r.get(2)?,
                        delta: r.get(3)?,
                        composition: Composition::from_name(&composition).unwrap_or(Composition::BasicApprox),
                        fingerprint: r.get(5)?,
                        mechanism: r.get(6)?,
                        time: r.get(7)?,
                        value: r.get(8)?,
                    })
                })
                .map_err(fail)?;
            for entry in rows {
                let entry = entry.map_err(fail)?;
                if let Some(d) = out.iter_mut().find(|d| d.dataset == entry.dataset) {
                    d.releases.push(entry);
                }
            }
        }
        tx.commit().map_err(fail)?;
        if let (Some(name), true) = (dataset, out.is_empty()) {
            return Err(LedgerError::NoBudget { ledger: location, dataset: name.into() });
        }
        Ok(out)
    }
}
