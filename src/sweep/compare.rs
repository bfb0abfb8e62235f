//! The single-holder comparison of a binomial model over ε and K, split into slices: `compare
//! --shard I/N` runs only the (K, ε) cases of slice I ([`compare_shard`]), and [`merge`] joins
//! the slices back into the [`Comparison`] of the whole sweep.
//!
//! A case is one (K, ε) cell of the grid (its UBaPP solve and every method evaluated there, as
//! [`compare`] runs it alone), keyed `K=<k>;eps=<ε>`.

use std::path::Path;

use ndarray::Array2;
use serde::{Deserialize, Serialize};

use super::Result;
use super::{Shard, SweepCase, SweepFile, SweepGrid};
use crate::baselines::BaselineOptions;
use crate::compare::{check_model, compare, validate, CompareOptions, Comparison, Curves, Heatmap, Method, Row};
use crate::model::Model;
use crate::solve::{SolveOptions, SolverChoice};

/// The canonical text of the case (K, ε): `K=<k>;eps=<ε>` (ε in Rust's shortest round-trip form).
pub fn case_key(trials: u64, eps: f64) -> String {
    format!("K={trials};eps={eps}")
}

/// The grid of a sweep, as recorded in each shard: everything besides the model that decides
/// its rows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CompareGrid {
    /// ε values, in table order.
    pub eps: Vec<f64>,
    /// K values, in table order.
    pub trials: Vec<u64>,
    /// Methods, in table order.
    pub methods: Vec<Method>,
    /// δ of the (ε, δ) baselines.
    pub delta: f64,
    /// Parties (`None`: the default per K).
    pub parties: Option<u64>,
    /// Monte-Carlo seed.
    pub seed: u64,
    /// UBaPP's solver, by its `--solver` name.
    pub solver: String,
    /// Points of the risk(θ) curves.
    pub curve_points: usize,
}

impl CompareGrid {
    fn of(opts: &CompareOptions) -> CompareGrid {
        CompareGrid {
            eps: opts.eps.clone(),
            trials: opts.trials.clone(),
            methods: opts.methods.clone(),
            delta: opts.baseline.delta,
            parties: opts.baseline.parties,
            seed: opts.baseline.seed,
            solver: opts.solve.solver.to_string(),
            curve_points: opts.curve_points,
        }
    }

    fn options(&self) -> Result<CompareOptions> {
        Ok(CompareOptions {
            eps: self.eps.clone(),
            trials: self.trials.clone(),
            methods: self.methods.clone(),
            baseline: BaselineOptions { delta: self.delta, parties: self.parties, seed: self.seed },
            solve: SolveOptions { solver: self.solver.parse::<SolverChoice>()?, ..SolveOptions::default() },
            curve_points: self.curve_points,
        })
    }
}

/// The UBaPP heat map of one case, as stored in a shard file (P row by row).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct StoredHeatmap {
    p: Vec<Vec<f64>>,
    outputs: Vec<f64>,
}

/// One (K, ε) case's share of the comparison.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CompareCase {
    trials: u64,
    eps: f64,
    rows: Vec<Row>,
    curves: Curves,
    heatmap: Option<StoredHeatmap>,
}

impl SweepGrid for CompareGrid {
    const FORMAT: &'static str = "ubapp-compare-shard";
    const FORMAT_VERSION: u32 = 1;
    const COMMAND: &'static str = "compare --shard";
    const FLAGS: &'static str = "grid (--eps, --trials, --methods, --delta, --parties, --seed, --solver)";

    fn case_keys(&self) -> Vec<String> {
        self.trials.iter().flat_map(|&k| self.eps.iter().map(move |&e| case_key(k, e))).collect()
    }
}

impl SweepCase for CompareCase {
    fn key(&self) -> String {
        case_key(self.trials, self.eps)
    }

    fn check(&self) -> std::result::Result<(), (String, String)> {
        super::check_rows(&self.rows)?;
        if let Some(h) = &self.heatmap {
            let bad = h.p.iter().flatten().any(|p| !(0.0..=1.0).contains(p));
            if bad {
                return Err(("heatmap.p".into(), "must hold probabilities in [0, 1]".into()));
            }
        }
        Ok(())
    }
}

/// What one shard of a single-holder comparison writes (`shard.json`).
pub type ShardFile = SweepFile<CompareGrid, CompareCase>;

impl ShardFile {
    /// The rows of this shard's cases, in grid order.
    pub fn rows(&self) -> Vec<Row> {
        self.cases().iter().flat_map(|c| c.rows.iter().cloned()).collect()
    }
}

/// Run the cases of slice `shard` of the sweep `opts` (each (K, ε) as [`compare`] runs it alone)
/// and return the shard file to write. `progress` receives one line per case.
pub fn compare_shard(
    model: &Model,
    opts: &CompareOptions,
    shard: Shard,
    progress: &mut dyn FnMut(&str),
) -> Result<ShardFile> {
    check_model(model, &format!("model \"{}\"", model.name()))?;
    validate(opts)?;
    let mine: Vec<(u64, f64)> = opts
        .trials
        .iter()
        .flat_map(|&k| opts.eps.iter().map(move |&e| (k, e)))
        .filter(|&(k, e)| shard.holds(k, e))
        .collect();
    let total = opts.trials.len() * opts.eps.len();
    progress(&format!("shard {}/{}: {} of the sweep's {total} (K, ε) case(s)", shard.index, shard.count, mine.len()));
    let mut cases = Vec::with_capacity(mine.len());
    for (n, &(k, eps)) in mine.iter().enumerate() {
        progress(&format!("[{}/{}] K = {k}, ε = {eps}", n + 1, mine.len()));
        let one = CompareOptions { eps: vec![eps], trials: vec![k], ..opts.clone() };
        let mut cmp = compare(model, &one, &mut |_| {})?;
        let heatmap = cmp
            .heatmaps
            .pop()
            .map(|h| StoredHeatmap { p: h.p.rows().into_iter().map(|r| r.to_vec()).collect(), outputs: h.outputs });
        let curves = cmp.curves.pop().expect("one case gives one set of curves");
        cases.push(CompareCase { trials: k, eps, rows: cmp.rows, curves, heatmap });
    }
    Ok(ShardFile::new(model, CompareGrid::of(opts), shard, cases))
}

/// Join the shards of one sweep, read from `dirs`, into the comparison an unsharded run gives
/// (rows, curves and heat maps in the same order): see [`SweepFile::gather`] for what is refused.
/// Returns the comparison with the model the shards ran (for the page that names it).
pub fn merge(dirs: &[&Path]) -> Result<(Comparison, Model)> {
    let (first, cases) = ShardFile::gather(dirs)?;
    // The model and options the shards ran with decide the comparison's loss and objective.
    let model = first.model()?;
    let setting = check_model(&model, &format!("model \"{}\"", model.name()))?;
    first.grid.options()?;
    let mut out = Comparison::empty(&model, setting.loss);
    // Not in the shards: recomputed from the model, as `compare` computes them.
    out.references = first
        .grid
        .trials
        .iter()
        .filter_map(|&k| crate::compare::TrialsReference::of(&model.with_trials(k).ok()?, k))
        .collect();
    for c in cases {
        out.rows.extend(c.rows);
        out.curves.push(c.curves);
        if let Some(h) = c.heatmap {
            let (rows, cols) = (h.p.len(), h.p.first().map_or(0, Vec::len));
            let p = Array2::from_shape_vec((rows, cols), h.p.concat()).map_err(|_| super::ShardError::Unreadable {
                file: "a shard file".to_string(),
                problem: format!("the heat map of K = {}, ε = {} is not a rectangular matrix", c.trials, c.eps),
            })?;
            out.heatmaps.push(Heatmap { eps: c.eps, trials: c.trials, p, outputs: h.outputs });
        }
    }
    Ok((out, model))
}
