//! The party comparison (every family, several parties) split into slices: `compare --shard I/N`
//! on a model the party comparison runs ([`party_shard`]), joined by [`merge_parties`].
//!
//! A case is the one-curator `ubapp` row of one ε (`curator;eps=<ε>`) or the rows of one
//! (M, ε) (`M=<m>;eps=<ε>`), each computed as [`compare_parties`](crate::compare::parties::compare_parties)
//! computes it within the whole sweep; the notes, which depend on every row, are rebuilt at merge.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::Result;
use super::{cases_of, Shard, SweepCase, SweepFile, SweepGrid};
use crate::compare::parties::{PartyComparison, PartyOptions, PartyPlan};
use crate::compare::{Method, Row};
use crate::model::Model;
use crate::parties::RiskOptions;
use crate::solve::SolveOptions;

/// The options of a party sweep, as each shard records them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PartyGrid {
    /// ε values, in table order.
    pub eps: Vec<f64>,
    /// Numbers of parties M, in table order.
    pub parties: Vec<u64>,
    /// δ of the (ε, δ) baselines.
    pub delta: f64,
    /// Seed of the baselines' Monte-Carlo fallbacks.
    pub seed: u64,
    /// UBaPP's solver, by its `--solver` name.
    pub solver: String,
    /// Seed of the party risks' Monte-Carlo fallback.
    pub risk_seed: u64,
    /// Monte-Carlo draws of the party risks.
    pub risk_draws: usize,
    /// Largest exact sum of the party risks.
    pub risk_exact_budget: f64,
    /// Whether the party risks always use Monte Carlo.
    pub risk_force_monte_carlo: bool,
    /// `--methods`: the rows kept at merge (`None`: every method).
    pub methods: Option<Vec<Method>>,
}

impl PartyGrid {
    /// The grid of the sweep `opts` whose table keeps the rows of `methods` (`None`: all).
    pub fn of(opts: &PartyOptions, methods: Option<&[Method]>) -> PartyGrid {
        PartyGrid {
            eps: opts.eps.clone(),
            parties: opts.parties.clone(),
            delta: opts.delta,
            seed: opts.seed,
            solver: opts.solve.solver.to_string(),
            risk_seed: opts.risk.seed,
            risk_draws: opts.risk.draws,
            risk_exact_budget: opts.risk.exact_budget,
            risk_force_monte_carlo: opts.risk.force_monte_carlo,
            methods: methods.map(<[Method]>::to_vec),
        }
    }

    /// The options the shards ran with.
    pub fn options(&self) -> Result<PartyOptions> {
        Ok(PartyOptions {
            eps: self.eps.clone(),
            parties: self.parties.clone(),
            delta: self.delta,
            seed: self.seed,
            solve: SolveOptions { solver: self.solver.parse()?, ..SolveOptions::default() },
            risk: RiskOptions {
                seed: self.risk_seed,
                draws: self.risk_draws,
                exact_budget: self.risk_exact_budget,
                force_monte_carlo: self.risk_force_monte_carlo,
            },
        })
    }
}

/// The canonical text of a case: `curator;eps=<ε>` (`parties` = `None`) or `M=<m>;eps=<ε>`.
pub fn party_case_key(parties: Option<u64>, eps: f64) -> String {
    match parties {
        None => format!("curator;eps={eps}"),
        Some(m) => format!("M={m};eps={eps}"),
    }
}

impl SweepGrid for PartyGrid {
    const FORMAT: &'static str = "ubapp-party-compare-shard";
    const FORMAT_VERSION: u32 = 1;
    const COMMAND: &'static str = "compare --shard (a party comparison)";
    const FLAGS: &'static str = "grid (--eps, --parties, --methods, --delta, --seed, --solver)";

    fn case_keys(&self) -> Vec<String> {
        let curator = self.eps.iter().map(|&e| party_case_key(None, e));
        let split = self.parties.iter().flat_map(|&m| self.eps.iter().map(move |&e| party_case_key(Some(m), e)));
        curator.chain(split).collect()
    }
}

/// One case's rows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PartyCase {
    /// M (`None`: the one-curator row).
    parties: Option<u64>,
    /// ε.
    eps: f64,
    rows: Vec<Row>,
}

impl SweepCase for PartyCase {
    fn key(&self) -> String {
        party_case_key(self.parties, self.eps)
    }

    fn check(&self) -> std::result::Result<(), (String, String)> {
        super::check_rows(&self.rows)
    }
}

/// What one shard of a party comparison writes (`shard.json`).
pub type PartyShardFile = SweepFile<PartyGrid, PartyCase>;

impl PartyShardFile {
    /// The rows of this shard's cases, in grid order.
    pub fn rows(&self) -> Vec<Row> {
        self.cases().iter().flat_map(|c| c.rows.iter().cloned()).collect()
    }
}

/// Run the cases of slice `shard` of the party comparison `opts` of `model` (whose table keeps
/// the rows of `methods`, `None`: all) and return the shard file to write. Every option is
/// checked before any work; `progress` receives one line per case.
pub fn party_shard(
    model: &Model,
    opts: &PartyOptions,
    methods: Option<&[Method]>,
    shard: Shard,
    progress: &mut dyn FnMut(&str),
) -> Result<PartyShardFile> {
    let plan = PartyPlan::new(model, opts)?;
    let grid = PartyGrid::of(opts, methods);
    let mine = cases_of(&grid, shard);
    progress(&format!(
        "shard {}/{}: {} of the sweep's {} case(s)",
        shard.index,
        shard.count,
        mine.len(),
        grid.case_keys().len()
    ));
    let mut cases = Vec::with_capacity(mine.len());
    let mut done = 0;
    let mut step = |what: String| {
        done += 1;
        progress(&format!("[{done}/{}] {what}", mine.len()));
    };
    for &eps in &opts.eps {
        if shard.holds_key(&party_case_key(None, eps)) {
            step(format!("one curator, ε = {eps}"));
            let rows = if plan.has_curator() {
                let central = plan.solve_curator(&[eps], opts.solve.clone())?;
                plan.curator_rows(&[eps], &central, &opts.risk)?
            } else {
                Vec::new()
            };
            cases.push(PartyCase { parties: None, eps, rows });
        }
    }
    for (mi, &m) in opts.parties.iter().enumerate() {
        for &eps in &opts.eps {
            if shard.holds_key(&party_case_key(Some(m), eps)) {
                step(format!("M = {m}, ε = {eps}"));
                let local = plan.solve_party(mi, &[eps], opts.solve.clone(), &[])?;
                let rows = plan.party_rows(opts, mi, &[eps], &local)?;
                cases.push(PartyCase { parties: Some(m), eps, rows });
            }
        }
    }
    Ok(PartyShardFile::new(model, grid, shard, cases))
}

/// Join the shards of one party sweep, read from `dirs`, into the comparison an unsharded run
/// gives (rows in the same order, the notes rebuilt from them, the rows of `--methods` kept): see [`SweepFile::gather`] for what
/// is refused. Returns it with the model the shards ran.
pub fn merge_parties(dirs: &[&Path]) -> Result<(PartyComparison, Model)> {
    let (first, cases) = PartyShardFile::gather(dirs)?;
    let model = first.model()?;
    let plan = PartyPlan::new(&model, &first.grid.options()?)?;
    let rows = cases.into_iter().flat_map(|c| c.rows).collect();
    let mut cmp = plan.finish(rows);
    if let Some(methods) = &first.grid.methods {
        cmp.keep_methods(methods, &model);
    }
    Ok((cmp, model))
}
