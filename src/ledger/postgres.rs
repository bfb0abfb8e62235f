//! The PostgreSQL ledger, for releases from several hosts: the SQLite ledger's schema (a
//! `BIGSERIAL` key), and [`Ledger::spend`] in one transaction that locks the dataset's row
//! (`SELECT … FOR UPDATE`) before reading its budget, so concurrent releases against one dataset
//! queue on that row and each sees the totals the previous one committed. A client killed
//! mid-transaction leaves nothing: the server rolls its transaction back when the connection drops.

use postgres::{Client, NoTls};

use super::{after_charge, now_utc, Budget, Charge, Composition, DatasetHistory, Entry, Ledger, LedgerError, Result};

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
    id BIGSERIAL PRIMARY KEY,
    dataset TEXT NOT NULL REFERENCES ubapp_datasets(name),
    eps DOUBLE PRECISION NOT NULL,
    delta DOUBLE PRECISION NOT NULL,
    composition TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    mechanism TEXT NOT NULL,
    released_at TEXT NOT NULL,
    value TEXT NOT NULL
);";

/// An advisory lock key that serialises schema creation (`CREATE TABLE IF NOT EXISTS` races
/// between sessions in PostgreSQL).
const SCHEMA_LOCK: i64 = 0x7562_6170_705f_6c65;

/// How long a connection may take when the URL does not say.
const CONNECT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(15);

/// A ledger in a PostgreSQL database.
pub(super) struct PostgresLedger {
    client: Client,
    location: String,
}

/// The URL as messages show it: the password replaced by `***`.
fn redact(url: &str) -> String {
    let url = &redact_query(url);
    let Some((scheme, rest)) = url.split_once("://") else { return url.to_string() };
    let (authority, tail) = rest.split_at(rest.find(['/', '?']).unwrap_or(rest.len()));
    match authority.rsplit_once('@') {
        Some((user, host)) => {
            let user = user.split_once(':').map_or(user.to_string(), |(u, _)| format!("{u}:***"));
            format!("{scheme}://{user}@{host}{tail}")
        }
        None => url.to_string(),
    }
}

/// A `password=` parameter's value replaced by `***`.
fn redact_query(url: &str) -> String {
    match url.find("password=") {
        Some(i) => {
            let start = i + "password=".len();
            let end = url[start..].find('&').map_or(url.len(), |j| start + j);
            format!("{}***{}", &url[..start], &url[end..])
        }
        None => url.to_string(),
    }
}

impl PostgresLedger {
    /// Connect to the database `url` (with `create`, create the schema if needed).
    pub(super) fn open(url: &str, create: bool) -> Result<PostgresLedger> {
        let location = redact(url);
        let mut config: postgres::Config = url.parse().map_err(|e: postgres::Error| LedgerError::NotALedger {
            ledger: location.clone(),
            problem: format!("not a PostgreSQL URL ({e})"),
        })?;
        // A host that never answers is an error after a while, not a hang (the URL's own
        // `connect_timeout` wins).
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(CONNECT_TIMEOUT);
        }
        let client =
            config.connect(NoTls).map_err(|source| LedgerError::Postgres { ledger: location.clone(), source })?;
        let mut ledger = PostgresLedger { client, location };
        ledger.prepare(create)?;
        Ok(ledger)
    }

    fn fail(location: &str) -> impl Fn(postgres::Error) -> LedgerError + '_ {
        move |source| LedgerError::Postgres { ledger: location.to_string(), source }
    }

    fn prepare(&mut self, create: bool) -> Result<()> {
        let fail = Self::fail(&self.location);
        if create {
            let mut tx = self.client.transaction().map_err(&fail)?;
            tx.execute("SELECT pg_advisory_xact_lock($1)", &[&SCHEMA_LOCK]).map_err(&fail)?;
            tx.batch_execute(SCHEMA).map_err(&fail)?;
            tx.commit().map_err(&fail)?;
        }
        let row = self
            .client
            .query_one(
                "SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema() \
                 AND table_name IN ('ubapp_datasets', 'ubapp_releases')",
                &[],
            )
            .map_err(&fail)?;
        if row.get::<_, i64>(0) != 2 {
            return Err(LedgerError::NotALedger {
                ledger: self.location.clone(),
                problem: "the database holds no ubapp ledger (create one with `ubapp ledger init`)".into(),
            });
        }
        Ok(())
    }
}

fn entry(r: &postgres::Row) -> Entry {
    Entry {
        id: r.get(0),
        dataset: r.get(1),
        eps: r.get(2),
        delta: r.get(3),
        composition: Composition::from_name(r.get(4)).unwrap_or(Composition::BasicApprox),
        fingerprint: r.get(5),
        mechanism: r.get(6),
        time: r.get(7),
        value: r.get(8),
    }
}

impl Ledger for PostgresLedger {
    fn location(&self) -> &str {
        &self.location
    }

    fn init(&mut self, dataset: &str, budget: Budget) -> Result<()> {
        super::check_dataset(dataset)?;
        super::check_budget(budget)?;
        let fail = Self::fail(&self.location);
        let mut tx = self.client.transaction().map_err(&fail)?;
        // ON CONFLICT: two inits of one dataset at once, one wins and the other is told.
        let inserted = tx
            .execute(
                "INSERT INTO ubapp_datasets (name, eps_budget, delta_budget, eps_spent, delta_spent, created) \
                 VALUES ($1, $2, $3, 0, 0, $4) ON CONFLICT (name) DO NOTHING",
                &[&dataset, &budget.eps, &budget.delta, &now_utc()],
            )
            .map_err(&fail)?;
        if inserted == 0 {
            let row = tx
                .query_one("SELECT eps_budget, delta_budget FROM ubapp_datasets WHERE name = $1", &[&dataset])
                .map_err(&fail)?;
            let budget = Budget { eps: row.get(0), delta: row.get(1) };
            return Err(LedgerError::AlreadyInitialised {
                ledger: self.location.clone(),
                dataset: dataset.into(),
                budget,
            });
        }
        tx.commit().map_err(&fail)
    }

    fn spend(&mut self, charge: &Charge, draw: &mut dyn FnMut() -> String) -> Result<Entry> {
        let fail = Self::fail(&self.location);
        let mut tx = self.client.transaction().map_err(&fail)?;
        // The row lock first: other releases against this dataset wait here until we finish.
        let row = tx
            .query_opt(
                "SELECT eps_budget, delta_budget, eps_spent, delta_spent FROM ubapp_datasets WHERE name = $1 FOR UPDATE",
                &[&charge.dataset],
            )
            .map_err(&fail)?;
        let Some(row) = row else {
            return Err(LedgerError::NoBudget { ledger: self.location.clone(), dataset: charge.dataset.clone() });
        };
        let budget = Budget { eps: row.get(0), delta: row.get(1) };
        let spent = Budget { eps: row.get(2), delta: row.get(3) };
        let next = after_charge(&self.location, budget, spent, charge)?;
        let value = draw();
        let composition = Composition::for_delta(charge.delta);
        let time = now_utc();
        let row = tx
            .query_one(
                "INSERT INTO ubapp_releases (dataset, eps, delta, composition, fingerprint, mechanism, released_at, value) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id",
                &[
                    &charge.dataset,
                    &charge.eps,
                    &charge.delta,
                    &composition.name(),
                    &charge.fingerprint,
                    &charge.mechanism,
                    &time,
                    &value,
                ],
            )
            .map_err(&fail)?;
        let id: i64 = row.get(0);
        tx.execute(
            "UPDATE ubapp_datasets SET eps_spent = $1, delta_spent = $2 WHERE name = $3",
            &[&next.eps, &next.delta, &charge.dataset],
        )
        .map_err(&fail)?;
        tx.commit().map_err(&fail)?;
        Ok(charge.entry(id, composition, time, value))
    }

    fn history(&mut self, dataset: Option<&str>) -> Result<Vec<DatasetHistory>> {
        let fail = Self::fail(&self.location);
        // One snapshot for the totals and the releases.
        let mut tx = self
            .client
            .build_transaction()
            .read_only(true)
            .isolation_level(postgres::IsolationLevel::RepeatableRead)
            .start()
            .map_err(&fail)?;
        let mut out: Vec<DatasetHistory> = tx
            .query(
                "SELECT name, eps_budget, delta_budget, eps_spent, delta_spent, created FROM ubapp_datasets \
                 WHERE $1::TEXT IS NULL OR name = $1 ORDER BY name",
                &[&dataset],
            )
            .map_err(&fail)?
            .iter()
            .map(|r| DatasetHistory {
                dataset: r.get(0),
                budget: Budget { eps: r.get(1), delta: r.get(2) },
                spent: Budget { eps: r.get(3), delta: r.get(4) },
                created: r.get(5),
                releases: Vec::new(),
            })
            .collect();
        let rows = tx
            .query(
                "SELECT id, dataset, eps, delta, composition, fingerprint, mechanism, released_at, value \
                 FROM ubapp_releases WHERE $1::TEXT IS NULL OR dataset = $1 ORDER BY id",
                &[&dataset],
            )
            .map_err(&fail)?;
        for r in &rows {
            let e = entry(r);
            if let Some(d) = out.iter_mut().find(|d| d.dataset == e.dataset) {
                d.releases.push(e);
            }
        }
        tx.commit().map_err(&fail)?;
        if let (Some(name), true) = (dataset, out.is_empty()) {
            return Err(LedgerError::NoBudget { ledger: self.location.clone(), dataset: name.into() });
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn urls_are_shown_without_their_password() {
        assert_eq!(super::redact("postgres://u:secret@h:5432/db"), "postgres://u:***@h:5432/db");
        assert_eq!(super::redact("postgres://u@h/db"), "postgres://u@h/db");
        assert_eq!(super::redact("postgresql://h/db?password=x"), "postgresql://h/db?password=***");
    }
}
