//! Sweeps split over many processes or machines: `compare --shard I/N` runs only the cases of
//! slice I, and [`merge`] joins the slices back into the [`Comparison`] of the whole sweep.
//!
//! A case is one (K, ε) cell of the grid (its UBaPP solve and every method evaluated there). It
//! belongs to slice `h(case) mod N`, with `h` a fixed 64-bit hash (FNV-1a, then the SplitMix64
//! finaliser) of the case's canonical text `K=<k>;eps=<ε>`: no seed, no order, so a case keeps
//! its slice when the grid grows. Each slice's file records the model (its full spec, and a
//! fingerprint of it), the crate version and the grid; merging refuses slices that disagree on
//! any of them, that are missing or given twice, or whose cases are not the ones their slice
//! holds.

use std::path::Path;

use ndarray::Array2;
use serde::{Deserialize, Serialize};

use super::error::Result;
use super::{check_model, compare, validate, CompareOptions, Comparison, Curves, Heatmap, Method, Row};
use crate::baselines::BaselineOptions;
use crate::model::{Model, ModelSpec};
use crate::solve::SolverChoice;

/// The file a shard writes into its output directory.
pub const SHARD_FILE: &str = "shard.json";
const FORMAT: &str = "ubapp-compare-shard";
const FORMAT_VERSION: u32 = 1;

/// What can be wrong with a shard request or with the shards given to merge (all input errors).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ShardError {
    /// `--shard` is not `I/N`, `env` or `env/N`.
    #[error("--shard must be I/N with 0 ≤ I < N (e.g. 2/8), env or env/N (got \"{given}\")")]
    Syntax {
        /// What was given.
        given: String,
    },
    /// The scheduler's environment does not say which slice this process is.
    #[error("--shard {given}: {problem}")]
    Environment {
        /// `env` or `env/N`.
        given: String,
        /// What is missing or wrong, naming the variables.
        problem: String,
    },
    /// A shard without an output directory would compute rows nobody can merge.
    #[error("--shard needs --out DIR (each shard writes {SHARD_FILE} there for `ubapp merge`)")]
    NoOutput,
    /// A directory given to merge holds no readable shard file.
    #[error("{dir}: {problem}")]
    Unreadable {
        /// The directory.
        dir: String,
        /// What is wrong with its shard file.
        problem: String,
    },
    /// Two shards come from different sweeps.
    #[error("{dir} is a shard of a different sweep than {first}: its {what} differs (merge only the shards of one `compare --shard` run)")]
    Mismatch {
        /// The directory that differs.
        dir: String,
        /// The first directory given.
        first: String,
        /// What differs: the model, the ubapp version, the grid or the number of shards.
        what: &'static str,
    },
    /// The same slice was given twice.
    #[error("{dir} and {other} are both shard {index}/{count}: give each shard once")]
    Duplicate {
        /// One directory.
        dir: String,
        /// The other.
        other: String,
        /// The slice.
        index: u32,
        /// N.
        count: u32,
    },
    /// Slices are missing.
    #[error("shard(s) {missing} of {count} are missing: merge needs every shard of the sweep")]
    Missing {
        /// The missing indices, comma-separated.
        missing: String,
        /// N.
        count: u32,
    },
    /// A shard's cases are not those its slice holds (a hand-edited or corrupted file).
    #[error("{dir}: its cases are not those of shard {index}/{count} of its grid (the file was changed after it was written)")]
    WrongCases {
        /// The directory.
        dir: String,
        /// The slice.
        index: u32,
        /// N.
        count: u32,
    },
    /// No directories were given.
    #[error("merge needs at least one shard directory")]
    NoShards,
}

/// Slice `index` of `count` (0-based: a 4-way split is 0/4, 1/4, 2/4, 3/4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shard {
    /// I, 0 ≤ I < N.
    pub index: u32,
    /// N ≥ 1.
    pub count: u32,
}

impl Shard {
    /// Parse `--shard`: `I/N`; `env` (the slice and the count from the scheduler's environment,
    /// whose variables docs/cluster.md lists); or `env/N` (the slice from the environment, the
    /// count given).
    /// `var` reads an environment variable (`std::env::var(..).ok()` in the CLI).
    pub fn parse(given: &str, var: &dyn Fn(&str) -> Option<String>) -> std::result::Result<Shard, ShardError> {
        let syntax = || ShardError::Syntax { given: given.to_string() };
        let given = given.trim();
        if given == "env" {
            return Shard::from_env(None, var)
                .map_err(|problem| ShardError::Environment { given: given.into(), problem });
        }
        let (i, n) = given.split_once('/').ok_or_else(syntax)?;
        let count: u32 = n.trim().parse().map_err(|_| syntax())?;
        if count == 0 {
            return Err(syntax());
        }
        if i.trim() == "env" {
            return Shard::from_env(Some(count), var)
                .map_err(|problem| ShardError::Environment { given: given.into(), problem });
        }
        let index: u32 = i.trim().parse().map_err(|_| syntax())?;
        if index >= count {
            return Err(syntax());
        }
        Ok(Shard { index, count })
    }

    /// The slice from a scheduler's environment, first found of: a Slurm job array
    /// (`SLURM_ARRAY_TASK_ID` − `SLURM_ARRAY_TASK_MIN`, count `SLURM_ARRAY_TASK_COUNT`), a
    /// Kubernetes indexed job (`JOB_COMPLETION_INDEX`), HyperQueue (`HQ_TASK_ID`). The count is
    /// `count` when given, else `SLURM_ARRAY_TASK_COUNT` (Slurm) or `UBAPP_SHARD_COUNT`.
    fn from_env(count: Option<u32>, var: &dyn Fn(&str) -> Option<String>) -> std::result::Result<Shard, String> {
        let number = |name: &str| -> std::result::Result<Option<u32>, String> {
            match var(name) {
                None => Ok(None),
                Some(v) => v
                    .trim()
                    .parse::<u32>()
                    .map(Some)
                    .map_err(|_| format!("{name} is \"{v}\", not a non-negative integer")),
            }
        };
        let (index, env_count, source) = if let Some(id) = number("SLURM_ARRAY_TASK_ID")? {
            let min = number("SLURM_ARRAY_TASK_MIN")?.unwrap_or(0);
            let index = id.checked_sub(min).ok_or("SLURM_ARRAY_TASK_ID is below SLURM_ARRAY_TASK_MIN")?;
            (index, number("SLURM_ARRAY_TASK_COUNT")?, "SLURM_ARRAY_TASK_ID")
        } else if let Some(i) = number("JOB_COMPLETION_INDEX")? {
            (i, None, "JOB_COMPLETION_INDEX")
        } else if let Some(i) = number("HQ_TASK_ID")? {
            (i, None, "HQ_TASK_ID")
        } else {
            return Err("none of SLURM_ARRAY_TASK_ID, JOB_COMPLETION_INDEX or HQ_TASK_ID is set (run it as a task of a job array, or give --shard I/N)".to_string());
        };
        let count = match (count, env_count, number("UBAPP_SHARD_COUNT")?) {
            (Some(n), _, _) | (None, Some(n), _) | (None, None, Some(n)) => n,
            (None, None, None) => {
                return Err(format!("{source} gives the slice but nothing gives the number of slices: use --shard env/N or set UBAPP_SHARD_COUNT"))
            }
        };
        if count == 0 || index >= count {
            return Err(format!(
                "slice {index} from {source} is not below the number of slices {count} (number the tasks 0 to N−1, or 1 to N in Slurm, without gaps)"
            ));
        }
        Ok(Shard { index, count })
    }

    /// True when the case (K, ε) belongs to this slice.
    pub fn holds(self, trials: u64, eps: f64) -> bool {
        case_hash(trials, eps) % u64::from(self.count) == u64::from(self.index)
    }
}

/// The fixed hash of a case: FNV-1a (64-bit) of `K=<k>;eps=<ε>` (ε in Rust's shortest
/// round-trip form), then the SplitMix64 finaliser so nearby cases spread over the slices.
pub fn case_hash(trials: u64, eps: f64) -> u64 {
    mix(fnv1a(format!("K={trials};eps={eps}").as_bytes()))
}

fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325_u64, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3))
}

/// SplitMix64's output function (Steele, Lea & Flood 2014).
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The grid of a sweep, as recorded in each shard: everything besides the model that decides
/// its rows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepGrid {
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

impl SweepGrid {
    fn of(opts: &CompareOptions) -> SweepGrid {
        SweepGrid {
            eps: opts.eps.clone(),
            trials: opts.trials.clone(),
            methods: opts.methods.clone(),
            delta: opts.baseline.delta,
            parties: opts.baseline.parties,
            seed: opts.baseline.seed,
            solver: opts.solver.to_string(),
            curve_points: opts.curve_points,
        }
    }

    fn options(&self) -> Result<CompareOptions> {
        Ok(CompareOptions {
            eps: self.eps.clone(),
            trials: self.trials.clone(),
            methods: self.methods.clone(),
            baseline: BaselineOptions { delta: self.delta, parties: self.parties, seed: self.seed },
            solver: self.solver.parse::<SolverChoice>()?,
            curve_points: self.curve_points,
        })
    }
}

/// The UBaPP heat map of one case, as stored in a shard file (P row by row).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct StoredHeatmap {
    p: Vec<Vec<f64>>,
    outputs: Vec<f64>,
}

/// One (K, ε) case's share of the comparison.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Case {
    trials: u64,
    eps: f64,
    rows: Vec<Row>,
    curves: Curves,
    heatmap: Option<StoredHeatmap>,
}

/// What one shard writes (`shard.json`): the sweep it belongs to and its cases' results.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ShardFile {
    format: String,
    format_version: u32,
    /// The ubapp version that computed it.
    pub ubapp_version: String,
    /// The model's name.
    pub model_name: String,
    /// FNV-1a of the model's spec as JSON (CSV contents inline).
    pub model_fingerprint: String,
    model: ModelSpec,
    /// The grid of the whole sweep.
    pub grid: SweepGrid,
    /// Which slice.
    pub shard: Shard,
    cases: Vec<Case>,
}

impl ShardFile {
    /// The rows of this shard's cases, in grid order.
    pub fn rows(&self) -> Vec<Row> {
        self.cases.iter().flat_map(|c| c.rows.iter().cloned()).collect()
    }

    /// Read `DIR/shard.json`.
    pub fn read(dir: &Path) -> Result<ShardFile> {
        let path = dir.join(SHARD_FILE);
        let unreadable = |problem: String| ShardError::Unreadable { dir: dir.display().to_string(), problem };
        let text = std::fs::read_to_string(&path).map_err(|e| {
            unreadable(format!("cannot read {SHARD_FILE} ({e}); is it the --out of a `compare --shard` run?"))
        })?;
        let file: ShardFile = serde_json::from_str(&text)
            .map_err(|e| unreadable(format!("{SHARD_FILE} is not a compare shard file ({e})")))?;
        if file.format != FORMAT || file.format_version != FORMAT_VERSION {
            return Err(unreadable(format!(
                "{SHARD_FILE} has format {} version {}, expected {FORMAT} version {FORMAT_VERSION}",
                file.format, file.format_version
            ))
            .into());
        }
        Ok(file)
    }

    /// Write `DIR/shard.json`, the directory whole (it must not exist, be empty or hold an
    /// earlier output of ubapp: see `output::write_dir_atomic`).
    pub fn write(&self, dir: &Path) -> Result<()> {
        let text = serde_json::to_string(self).expect("a shard serialises");
        crate::output::write_dir_atomic(dir, "--out", &mut |tmp| {
            Ok(crate::output::write_atomic(&tmp.join(SHARD_FILE), text.as_bytes())?)
        })
    }
}

/// The model's fingerprint: FNV-1a (64-bit) of its spec as JSON.
pub fn model_fingerprint(model: &Model) -> String {
    let json = serde_json::to_string(model.spec()).expect("a spec serialises");
    format!("fnv1a64:{:016x}", fnv1a(json.as_bytes()))
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
        cases.push(Case { trials: k, eps, rows: cmp.rows, curves, heatmap });
    }
    Ok(ShardFile {
        format: FORMAT.to_string(),
        format_version: FORMAT_VERSION,
        ubapp_version: env!("CARGO_PKG_VERSION").to_string(),
        model_name: model.name().to_string(),
        model_fingerprint: model_fingerprint(model),
        model: model.spec().clone(),
        grid: SweepGrid::of(opts),
        shard,
        cases,
    })
}

/// Join the shards of one sweep, read from `dirs`, into the comparison an unsharded run gives
/// (rows, curves and heat maps in the same order). Refuses shards of different models, versions,
/// grids or counts, a slice given twice or missing, and a slice holding the wrong cases. Returns
/// the comparison with the model the shards ran (for the page that names it).
pub fn merge(dirs: &[&Path]) -> Result<(Comparison, Model)> {
    let Some(first_dir) = dirs.first() else { return Err(ShardError::NoShards.into()) };
    let shards = dirs.iter().map(|d| ShardFile::read(d)).collect::<Result<Vec<_>>>()?;
    let first = &shards[0];
    let name = |d: &Path| d.display().to_string();
    let mut seen: Vec<Option<&Path>> = vec![None; first.shard.count as usize];
    for (dir, s) in dirs.iter().zip(&shards) {
        let what = if s.model_fingerprint != first.model_fingerprint || s.model != first.model {
            Some("model")
        } else if s.ubapp_version != first.ubapp_version {
            Some("ubapp version")
        } else if s.grid != first.grid {
            Some("grid (--eps, --trials, --methods, --delta, --parties, --seed, --solver)")
        } else if s.shard.count != first.shard.count {
            Some("number of shards")
        } else {
            None
        };
        if let Some(what) = what {
            return Err(ShardError::Mismatch { dir: name(dir), first: name(first_dir), what }.into());
        }
        let slot = seen.get_mut(s.shard.index as usize).ok_or(ShardError::WrongCases {
            dir: name(dir),
            index: s.shard.index,
            count: s.shard.count,
        })?;
        if let Some(other) = slot {
            return Err(ShardError::Duplicate {
                dir: name(dir),
                other: name(other),
                index: s.shard.index,
                count: s.shard.count,
            }
            .into());
        }
        *slot = Some(dir);
        let expected: Vec<(u64, f64)> = first
            .grid
            .trials
            .iter()
            .flat_map(|&k| first.grid.eps.iter().map(move |&e| (k, e)))
            .filter(|&(k, e)| s.shard.holds(k, e))
            .collect();
        let has: Vec<(u64, f64)> = s.cases.iter().map(|c| (c.trials, c.eps)).collect();
        if has != expected {
            return Err(ShardError::WrongCases { dir: name(dir), index: s.shard.index, count: s.shard.count }.into());
        }
    }
    let missing: Vec<String> =
        seen.iter().enumerate().filter(|(_, d)| d.is_none()).map(|(i, _)| i.to_string()).collect();
    if !missing.is_empty() {
        return Err(ShardError::Missing { missing: missing.join(", "), count: first.shard.count }.into());
    }
    // The model and options the shards ran with decide the comparison's loss and objective.
    let model = Model::from_spec(first.model.clone())?;
    let setting = check_model(&model, &format!("model \"{}\"", model.name()))?;
    first.grid.options()?;
    let mut out = Comparison::empty(&model, setting.loss);
    // Not in the shards: recomputed from the model, as `compare` computes them.
    out.references =
        first.grid.trials.iter().filter_map(|&k| super::TrialsReference::of(&model.with_trials(k).ok()?, k)).collect();
    let mut cases: Vec<&Case> = shards.iter().flat_map(|s| &s.cases).collect();
    let position = |c: &Case| {
        let k = first.grid.trials.iter().position(|&k| k == c.trials).unwrap_or(usize::MAX);
        let e = first.grid.eps.iter().position(|&e| e.to_bits() == c.eps.to_bits()).unwrap_or(usize::MAX);
        (k, e)
    };
    cases.sort_by_key(|c| position(c));
    for c in cases {
        out.rows.extend(c.rows.iter().cloned());
        out.curves.push(c.curves.clone());
        if let Some(h) = &c.heatmap {
            let (rows, cols) = (h.p.len(), h.p.first().map_or(0, Vec::len));
            let p = Array2::from_shape_vec((rows, cols), h.p.concat()).map_err(|_| ShardError::WrongCases {
                dir: "a shard".to_string(),
                index: 0,
                count: first.shard.count,
            })?;
            out.heatmaps.push(Heatmap { eps: c.eps, trials: c.trials, p, outputs: h.outputs.clone() });
        }
    }
    Ok((out, model))
}
