//! Sweeps split over many processes or machines: `solve --shard I/N` and `compare --shard I/N`
//! run only the cases of slice I and write them to `DIR/shard.json`; [`merge`](SweepFile::gather)
//! joins the slices back into what the unsharded run prints and writes.
//!
//! Three kinds of sweep, one file format each (`format` names it):
//! - [`solve`] — one model over a list of ε; a case is one ε (`eps=<ε>`);
//! - [`compare`] — the single-holder comparison of a binomial model over ε and K; a case is one
//!   (K, ε) (`K=<k>;eps=<ε>`);
//! - [`parties`] — the party comparison of any family (`compare --parties`, a model with
//!   `[parties]` or outside the binomial family); a case is the one-curator row of one ε
//!   (`curator;eps=<ε>`) or the rows of one (M, ε) (`M=<m>;eps=<ε>`).
//!
//! A case belongs to slice `h(case) mod N`, with `h` a fixed 64-bit hash (FNV-1a, then the
//! SplitMix64 finaliser) of its canonical text (ε in Rust's shortest round-trip form): no seed, no
//! order, so a case keeps its slice when the grid grows. Each slice's file records the model (its
//! full spec and a fingerprint of it), the crate version, the options of the whole sweep (its
//! "grid") and the slice; merging refuses slices that disagree on any of them, that are missing or
//! given twice, or whose cases are not the ones their slice holds.

pub mod compare;
pub mod parties;
pub mod solve;

use std::collections::{HashMap, VecDeque};
use std::path::Path;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::compare::CompareError;
use crate::guard::json::{Schema, Shape, ShapeError};
use crate::guard::Parameter;
use crate::model::{Model, ModelError, ModelSpec};
use crate::output::OutputError;
use crate::solve::SolveError;

/// The sweep layer's result.
pub(crate) type Result<T, E = SweepError> = std::result::Result<T, E>;

/// Why a sweep's shard could not be run, written, read or merged.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SweepError {
    /// A `--shard` request, or shards given to `merge`, that cannot be used as given.
    #[error(transparent)]
    Shard(#[from] ShardError),
    /// A value in a shard file out of range (its solver's name).
    #[error(transparent)]
    Argument(#[from] crate::guard::ArgumentError),
    /// A shard's embedded model that does not validate.
    #[error(transparent)]
    Model(Box<ModelError>),
    /// The comparison a shard runs failed.
    #[error(transparent)]
    Compare(Box<CompareError>),
    /// The solve a shard runs failed.
    #[error(transparent)]
    Solve(Box<SolveError>),
    /// A shard file could not be written.
    #[error(transparent)]
    Output(#[from] OutputError),
}

boxed_from!(SweepError {
    ModelError => Model,
    CompareError => Compare,
    SolveError => Solve,
});

impl SweepError {
    /// True when the fault lies with the caller's input (the CLI's exit 2).
    pub fn is_input(&self) -> bool {
        match self {
            SweepError::Shard(e) => e.is_input(),
            SweepError::Argument(_) | SweepError::Model(_) => true,
            SweepError::Compare(e) => e.is_input(),
            SweepError::Solve(e) => e.is_input(),
            SweepError::Output(e) => e.is_input(),
        }
    }
}

/// The file a shard writes into its output directory.
pub const SHARD_FILE: &str = "shard.json";

/// What a scheduler's environment lacks for `--shard env` (each names the variables).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EnvProblem {
    /// A variable holds something other than a non-negative integer.
    #[error("{name} is \"{value}\", not a non-negative integer")]
    NotInteger {
        /// The variable.
        name: String,
        /// What it holds.
        value: String,
    },
    /// Slurm's task id lies below its minimum.
    #[error("SLURM_ARRAY_TASK_ID is below SLURM_ARRAY_TASK_MIN")]
    BelowMinimum,
    /// No scheduler variable gives the slice.
    #[error("none of SLURM_ARRAY_TASK_ID, JOB_COMPLETION_INDEX or HQ_TASK_ID is set (run it as a task of a job array, or give {} I/N)", Parameter::Shard)]
    NoIndex,
    /// The slice is known but not the number of slices.
    #[error(
        "{source_var} gives the slice but nothing gives the number of slices: use {} env/N or set UBAPP_SHARD_COUNT",
        Parameter::Shard
    )]
    NoCount {
        /// The variable that gave the slice.
        source_var: &'static str,
    },
    /// The slice is not below the number of slices.
    #[error("slice {index} from {source_var} is not below the number of slices {count} (number the tasks 0 to N−1, or 1 to N in Slurm, without gaps)")]
    OutOfRange {
        /// The slice.
        index: u32,
        /// The variable that gave it.
        source_var: &'static str,
        /// The number of slices.
        count: u32,
    },
}

/// What can be wrong with a shard request or with the shards given to merge (all input errors).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ShardError {
    /// `--shard` is not `I/N`, `env` or `env/N`.
    #[error("{} must be I/N with 0 ≤ I < N (e.g. 2/8), env or env/N (got \"{given}\")", Parameter::Shard)]
    Syntax {
        /// What was given.
        given: String,
    },
    /// The scheduler's environment does not say which slice this process is.
    #[error("{} {given}: {problem}", Parameter::Shard)]
    Environment {
        /// `env` or `env/N`.
        given: String,
        /// What is missing or wrong, naming the variables.
        problem: EnvProblem,
    },
    /// A shard without an output directory would compute rows nobody can merge.
    #[error(
        "{} needs {} DIR (each shard writes {SHARD_FILE} there for `ubapp merge`)",
        Parameter::Shard,
        Parameter::Out
    )]
    NoOutput,
    /// A directory given to merge holds no readable shard file.
    #[error("{file}: {problem}")]
    Unreadable {
        /// The shard file.
        file: String,
        /// What is wrong with its shard file.
        problem: String,
    },
    /// Two shards come from different sweeps.
    #[error("{file} is a shard of a different sweep than {first}: its {what} differs (merge only the shards of one `--shard` run)")]
    Mismatch {
        /// The shard file that differs.
        file: String,
        /// The first shard file given.
        first: String,
        /// What differs: the kind of sweep, the model, the ubapp version, the grid or the number of shards.
        what: &'static str,
    },
    /// The same slice was given twice.
    #[error("{file} and {other} are both shard {index}/{count}: give each shard once")]
    Duplicate {
        /// One shard file.
        file: String,
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
    #[error("{file}: its cases are not those of shard {index}/{count} of its grid (the file was changed after it was written)")]
    WrongCases {
        /// The shard file.
        file: String,
        /// The slice.
        index: u32,
        /// N.
        count: u32,
    },
    /// No directories were given.
    #[error("merge needs at least one shard directory")]
    NoShards,
}

impl ShardError {
    /// True when the fault lies with the user's input (every variant).
    pub fn is_input(&self) -> bool {
        match self {
            ShardError::Syntax { .. }
            | ShardError::Environment { .. }
            | ShardError::NoOutput
            | ShardError::Unreadable { .. }
            | ShardError::Mismatch { .. }
            | ShardError::Duplicate { .. }
            | ShardError::Missing { .. }
            | ShardError::WrongCases { .. }
            | ShardError::NoShards => true,
        }
    }
}

/// Slice `index` of `count` (0-based: a 4-way split is 0/4, 1/4, 2/4, 3/4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
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
    fn from_env(count: Option<u32>, var: &dyn Fn(&str) -> Option<String>) -> std::result::Result<Shard, EnvProblem> {
        let number = |name: &str| -> std::result::Result<Option<u32>, EnvProblem> {
            match var(name) {
                None => Ok(None),
                Some(v) => v
                    .trim()
                    .parse::<u32>()
                    .map(Some)
                    .map_err(|_| EnvProblem::NotInteger { name: name.to_string(), value: v }),
            }
        };
        let (index, env_count, source_var) = if let Some(id) = number("SLURM_ARRAY_TASK_ID")? {
            let min = number("SLURM_ARRAY_TASK_MIN")?.unwrap_or(0);
            let index = id.checked_sub(min).ok_or(EnvProblem::BelowMinimum)?;
            (index, number("SLURM_ARRAY_TASK_COUNT")?, "SLURM_ARRAY_TASK_ID")
        } else if let Some(i) = number("JOB_COMPLETION_INDEX")? {
            (i, None, "JOB_COMPLETION_INDEX")
        } else if let Some(i) = number("HQ_TASK_ID")? {
            (i, None, "HQ_TASK_ID")
        } else {
            return Err(EnvProblem::NoIndex);
        };
        let count = match (count, env_count, number("UBAPP_SHARD_COUNT")?) {
            (Some(n), _, _) | (None, Some(n), _) | (None, None, Some(n)) => n,
            (None, None, None) => return Err(EnvProblem::NoCount { source_var }),
        };
        if count == 0 || index >= count {
            return Err(EnvProblem::OutOfRange { index, source_var, count });
        }
        Ok(Shard { index, count })
    }

    /// True when the single-holder comparison's case (K, ε) belongs to this slice.
    pub fn holds(self, trials: u64, eps: f64) -> bool {
        self.holds_key(&compare::case_key(trials, eps))
    }

    /// True when the case whose canonical text is `key` belongs to this slice.
    pub fn holds_key(self, key: &str) -> bool {
        key_hash(key) % u64::from(self.count) == u64::from(self.index)
    }
}

/// The fixed hash of the single-holder comparison's case (K, ε): [`key_hash`] of `K=<k>;eps=<ε>`.
pub fn case_hash(trials: u64, eps: f64) -> u64 {
    key_hash(&compare::case_key(trials, eps))
}

/// The fixed hash of a case's canonical text: FNV-1a (64-bit), then the SplitMix64 finaliser so
/// nearby cases spread over the slices.
pub fn key_hash(key: &str) -> u64 {
    mix(fnv1a(key.as_bytes()))
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

/// The model's fingerprint as shard files record it: FNV-1a (64-bit) of its spec as JSON.
pub fn model_fingerprint(model: &Model) -> String {
    spec_fingerprint(model.spec())
}

fn spec_fingerprint(spec: &ModelSpec) -> String {
    let json = serde_json::to_string(spec).expect("a spec serialises");
    format!("fnv1a64:{:016x}", fnv1a(json.as_bytes()))
}

/// The options of a whole sweep, as each of its shard files records them: everything besides the
/// model that decides its rows. Each kind of sweep has its own.
pub trait SweepGrid: Clone + PartialEq + Serialize + DeserializeOwned {
    /// The file's `format`.
    const FORMAT: &'static str;
    /// Its `format_version`.
    const FORMAT_VERSION: u32;
    /// The command whose `--shard` writes it (for messages).
    const COMMAND: &'static str;
    /// What a differing grid means, naming the flags (for the mismatch message).
    const FLAGS: &'static str;
    /// The canonical text of every case, in the order the unsharded run computes them.
    fn case_keys(&self) -> Vec<String>;
}

/// One case's results, as stored in a shard file.
pub trait SweepCase: Clone + Serialize + DeserializeOwned {
    /// The case's canonical text (as [`SweepGrid::case_keys`] lists it).
    fn key(&self) -> String;

    /// The case's values checked as read from a file: `Err` names the field (from the case, e.g.
    /// `rows[2].bayes_risk`) and what is wrong.
    fn check(&self) -> std::result::Result<(), (String, String)>;
}

/// What one shard writes (`shard.json`): the sweep it belongs to and its cases' results.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SweepFile<G, C> {
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
    pub grid: G,
    /// Which slice.
    pub shard: Shard,
    cases: Vec<C>,
}

/// The `format` of the shard file in `dir` (to tell which kind of sweep it belongs to).
pub fn format_of(dir: &Path) -> Result<String> {
    let (_, shape) = read_text(dir)?;
    Ok(shape.string("format").unwrap_or_default().to_string())
}

/// How messages name the shard file of `dir`.
fn file_name(dir: &Path) -> String {
    dir.join(SHARD_FILE).display().to_string()
}

fn unreadable(dir: &Path, problem: String) -> SweepError {
    ShardError::Unreadable { file: file_name(dir), problem }.into()
}

/// The largest shard file read (a file beyond it is refused before it is read).
const MAX_SHARD_BYTES: u64 = 1 << 30;

/// What a shard file may hold at its top level, for the pass that prices it before it is built
/// (the typed reader refuses unknown fields below it); its model and cases are buffered once
/// more where serde reads a tagged enum whole.
const SHARD_SCHEMA: Schema = Schema {
    known: &[(
        "",
        &[
            "format",
            "format_version",
            "ubapp_version",
            "model_name",
            "model_fingerprint",
            "model",
            "grid",
            "shard",
            "cases",
        ],
    )],
    max_items: &[],
    max_string: &[("format", 256), ("ubapp_version", 256), ("model_fingerprint", 256)],
    lean: &[],
    buffered: &["model", "cases"],
};

/// The text of `DIR/shard.json` and its shape, read as every file is: a regular file only (a
/// FIFO or a device is refused at once), its size capped, its keys unrepeated, its top-level
/// fields known, what parsing it builds priced against the memory budget first.
fn read_text(dir: &Path) -> Result<(String, Shape)> {
    let path = dir.join(SHARD_FILE);
    let budget = crate::guard::MemoryBudget::from_env();
    let cap = MAX_SHARD_BYTES.min(budget.in_bytes());
    let bytes = crate::guard::read::read_bounded(&path, cap).map_err(|reason| {
        unreadable(dir, format!("cannot be read ({reason}); is {} the --out of a `--shard` run?", dir.display()))
    })?;
    let text = String::from_utf8(bytes).map_err(|_| unreadable(dir, "is not JSON (it is not UTF-8 text)".into()))?;
    let shape = crate::guard::json::price(&text, &SHARD_SCHEMA).map_err(|e| match e {
        ShapeError::Syntax(m) => unreadable(dir, format!("is not JSON ({m})")),
        other => unreadable(dir, other.to_string()),
    })?;
    let needed = text.len() as u128 + shape.bytes;
    if needed > budget.in_bytes() as u128 {
        let e = crate::guard::SizeError {
            origin: None,
            needed_bytes: needed,
            available_bytes: budget.in_bytes(),
            fields: "the shards (merge fewer cases at once)".into(),
            route: None,
        };
        return Err(unreadable(dir, format!("is too large to read: {e}")));
    }
    Ok((text, shape))
}

/// Every row of a case checked ([`crate::compare::Row`]'s own check), the first bad one named
/// `rows[N].FIELD`.
fn check_rows(rows: &[crate::compare::Row]) -> std::result::Result<(), (String, String)> {
    for (j, row) in rows.iter().enumerate() {
        row.check().map_err(|(field, problem)| (format!("rows[{j}].{field}"), problem))?;
    }
    Ok(())
}

/// The cases of `grid` slice `shard` holds, in grid order.
pub fn cases_of<G: SweepGrid>(grid: &G, shard: Shard) -> Vec<String> {
    grid.case_keys().into_iter().filter(|k| shard.holds_key(k)).collect()
}

impl<G: SweepGrid, C: SweepCase> SweepFile<G, C> {
    /// The shard file of slice `shard` of the sweep `grid` of `model`, holding `cases`.
    pub(crate) fn new(model: &Model, grid: G, shard: Shard, cases: Vec<C>) -> Self {
        SweepFile {
            format: G::FORMAT.to_string(),
            format_version: G::FORMAT_VERSION,
            ubapp_version: env!("CARGO_PKG_VERSION").to_string(),
            model_name: model.name().to_string(),
            model_fingerprint: model_fingerprint(model),
            model: model.spec().clone(),
            grid,
            shard,
            cases,
        }
    }

    /// The cases this shard holds, in grid order.
    pub fn cases(&self) -> &[C] {
        &self.cases
    }

    /// The model the sweep runs, rebuilt from its recorded spec.
    pub fn model(&self) -> Result<Model> {
        Ok(Model::from_spec(self.model.clone())?)
    }

    /// Read `DIR/shard.json`, refusing a file of another kind of sweep or one whose model does not
    /// match its fingerprint.
    pub fn read(dir: &Path) -> Result<Self> {
        let (text, shape) = read_text(dir)?;
        let format = crate::guard::text::sanitize(shape.string("format").unwrap_or_default(), 40);
        let version = shape.number("format_version").unwrap_or_default();
        if format != G::FORMAT || version != u64::from(G::FORMAT_VERSION) {
            return Err(unreadable(
                dir,
                format!(
                    "format is \"{format}\" version {version}, expected {} version {} (a shard of `{}`)",
                    G::FORMAT,
                    G::FORMAT_VERSION,
                    G::COMMAND
                ),
            ));
        }
        let mut de = serde_json::Deserializer::from_str(&text);
        let file: Self = serde_path_to_error::deserialize(&mut de).map_err(|e| {
            let (field, problem) = (
                crate::guard::text::parser_message(&e.path().to_string()),
                crate::guard::text::parser_message(&e.inner().to_string()),
            );
            unreadable(dir, format!("{field}: {problem} (not a `{}` shard file as written)", G::COMMAND))
        })?;
        drop(text);
        for (i, case) in file.cases.iter().enumerate() {
            case.check().map_err(|(field, problem)| unreadable(dir, format!("cases[{i}].{field} {problem}")))?;
        }
        let Shard { index, count } = file.shard;
        if count == 0 || index >= count {
            return Err(unreadable(dir, format!("its slice is {index}/{count}, not I/N with 0 ≤ I < N")));
        }
        if spec_fingerprint(&file.model) != file.model_fingerprint {
            return Err(unreadable(
                dir,
                "model_fingerprint does not match its model (the file was changed after it was written)".to_string(),
            ));
        }
        Ok(file)
    }

    /// Write `DIR/shard.json`, the directory whole (it must not exist, be empty or hold an
    /// earlier output of ubapp: see `output::write_dir_atomic`).
    pub fn write(&self, dir: &Path) -> Result<()> {
        let text = serde_json::to_string(self).expect("a shard serialises");
        crate::output::write_dir_atomic(dir, Parameter::Out.spelled(), &mut |tmp| {
            Ok(crate::output::write_atomic(&tmp.join(SHARD_FILE), text.as_bytes())?)
        })
    }

    /// Read the shards of one sweep from `dirs` (in any order) and return the first with every
    /// case of the sweep in grid order. Refuses shards of another kind of sweep, of different
    /// models, versions, grids or counts, a slice given twice or missing, and a slice holding the
    /// wrong cases.
    pub fn gather(dirs: &[&Path]) -> Result<(Self, Vec<C>)> {
        let Some(first_dir) = dirs.first() else { return Err(ShardError::NoShards.into()) };
        let name = |d: &Path| file_name(d);
        let first_format = format_of(first_dir)?;
        for dir in &dirs[1..] {
            if format_of(dir)? != first_format {
                let what = "kind of sweep (solve, compare or compare --parties)";
                return Err(ShardError::Mismatch { file: name(dir), first: name(first_dir), what }.into());
            }
        }
        let shards = dirs.iter().map(|d| Self::read(d)).collect::<Result<Vec<_>>>()?;
        let first = &shards[0];
        // Which directory gave each slice (a map: a forged count must not size an allocation).
        let mut seen: HashMap<u32, &Path> = HashMap::new();
        for (dir, s) in dirs.iter().zip(&shards) {
            let what = if s.model_fingerprint != first.model_fingerprint || s.model != first.model {
                Some("model")
            } else if s.ubapp_version != first.ubapp_version {
                Some("ubapp version")
            } else if s.grid != first.grid {
                Some(G::FLAGS)
            } else if s.shard.count != first.shard.count {
                Some("number of shards")
            } else {
                None
            };
            if let Some(what) = what {
                return Err(ShardError::Mismatch { file: name(dir), first: name(first_dir), what }.into());
            }
            if let Some(other) = seen.insert(s.shard.index, dir) {
                return Err(ShardError::Duplicate {
                    file: name(dir),
                    other: name(other),
                    index: s.shard.index,
                    count: s.shard.count,
                }
                .into());
            }
            let has: Vec<String> = s.cases.iter().map(SweepCase::key).collect();
            if has != cases_of(&first.grid, s.shard) {
                return Err(
                    ShardError::WrongCases { file: name(dir), index: s.shard.index, count: s.shard.count }.into()
                );
            }
        }
        let count = first.shard.count;
        if seen.len() < count as usize {
            // The first few missing slices, and how many in all.
            let absent = count as usize - seen.len();
            let mut missing: Vec<String> =
                (0..count).filter(|i| !seen.contains_key(i)).take(10).map(|i| i.to_string()).collect();
            if absent > missing.len() {
                missing.push(format!("… ({absent} in all)"));
            }
            return Err(ShardError::Missing { missing: missing.join(", "), count }.into());
        }
        // Every case once per listing in the grid (a value listed twice is two cases of one key).
        let mut by_key: HashMap<String, VecDeque<C>> = HashMap::new();
        for c in shards.iter().flat_map(|s| &s.cases) {
            by_key.entry(c.key()).or_default().push_back(c.clone());
        }
        let ordered = first
            .grid
            .case_keys()
            .iter()
            .map(|k| by_key.get_mut(k).and_then(VecDeque::pop_front).expect("every case checked present above"))
            .collect();
        let mut shards = shards;
        Ok((shards.swap_remove(0), ordered))
    }
}
