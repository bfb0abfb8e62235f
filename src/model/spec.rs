//! The model file schema (`models/*.toml`), as written by users and other tools.
//!
//! These types mirror the TOML exactly and are validated into a [`crate::model::Model`] by
//! [`crate::model::Model::from_spec`]. Unknown or misspelled keys are rejected, so a typo never
//! silently falls back to a default. Every key naming a CSV file has an inline alternative; a
//! validated model keeps its spec with the files' contents inline (see [`crate::model::Model::spec`]).

use serde::{Deserialize, Serialize};
use std::path::Path;

use super::error::{ModelError, ModelErrorKind};

type Result<T> = std::result::Result<T, ModelError>;

/// A whole model file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelSpec {
    /// Short identifier, e.g. `bernoulli-k100`.
    pub name: String,
    /// One line saying what the model answers.
    #[serde(default)]
    pub description: String,
    /// Privacy levels ε; one LP per value (a single number is a list of one).
    #[serde(deserialize_with = "number_or_list")]
    pub epsilon: Vec<f64>,
    /// `"bayes"` (least Bayes risk, the paper's program) or `"minimax"` (least worst-case risk over
    /// the parameter grid).
    #[serde(default)]
    pub objective: ObjectiveSpec,
    /// δ of (ε, δ)-DP, in [0, 1); 0 (the default) is pure ε-DP.
    #[serde(default)]
    pub delta: f64,
    /// The parameter space Θ, its grid and its prior.
    pub parameter: ParameterSpec,
    /// The observation family and hence Y and its neighbour relation.
    pub observation: ObservationSpec,
    /// The output set Θ̃ released by the mechanism.
    #[serde(default)]
    pub output: OutputSpec,
    /// The loss L(θ, θ̃).
    pub loss: LossSpec,
    /// Several data holders: M parties, each holding its own records of the observation family
    /// (absent: one data holder).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parties: Option<PartiesSpec>,
    /// Shape and accuracy constraints on the mechanism (absent: none), each a set of linear rows
    /// added to the LP (docs/constraints.md).
    #[serde(default, skip_serializing_if = "ConstraintsSpec::is_empty")]
    pub constraints: ConstraintsSpec,
}

/// `[constraints]`: properties the released mechanism must have, each linear in P (Cormode,
/// Kulkarni & Srivastava, ICDE 2018; Badanidiyuru et al., NeurIPS 2023; Kohli & Laskowski,
/// PoPETs 2026). All default to off.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConstraintsSpec {
    /// Each column's release distribution stochastically increasing in y along Y's order: for
    /// every threshold t, Pr(θ̃ ≥ θ̃_t | y) is nondecreasing in y.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub monotone: bool,
    /// Invariant under the binomial family's reflection y ↦ K − y, θ̃ ↦ 1 − θ̃.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub symmetric: bool,
    /// Where y's estimate is an output, that output is y's most likely release.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub honest: bool,
    /// E[θ̃ | y] equals y's estimate for every y.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub unbiased: bool,
    /// y's estimate, one per observation in Y's order (default: the family's natural estimate,
    /// y/K for the binomial and y/N for the poisson family); used by `honest` and `unbiased`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub estimate: Option<Vec<f64>>,
    /// P z = z for a stated distribution z over Y (one weight per observation, normalised): the
    /// mechanism preserves z; needs outputs equal to the estimates of Y, in order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fixed_point: Option<FixedPointSpec>,
}

impl ConstraintsSpec {
    /// True when no constraint is asked for.
    pub fn is_empty(&self) -> bool {
        *self == ConstraintsSpec::default()
    }
}

/// `fixed_point = { file = "z.csv" }` or `{ values = [...] }`: the distribution z over Y.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FixedPointSpec {
    /// Inline weights, one per observation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub values: Option<Vec<f64>>,
    /// CSV file of weights (one per line, path relative to the model file).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
}

/// `[parties]`: M parties, each holding its own records of `[observation]`'s family (so M times
/// the records in all), each releasing with ε-DP with respect to its own records (Chen & Sung's
/// setting).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PartiesSpec {
    /// M ≥ 1, the number of parties.
    pub count: u64,
}

/// What the LP minimises.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ObjectiveSpec {
    /// Bayes risk Σ_j π_j R(θ_j) (UBaPP).
    #[default]
    Bayes,
    /// Worst-case risk max_j R(θ_j) over the parameter grid (epigraph form).
    Minimax,
}

/// `[parameter]`: Θ = [lower, upper], discretised by `grid`, weighted by `prior`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ParameterSpec {
    /// Lower end of Θ (default 0; must be 0 for the multinomial family).
    #[serde(default = "default_lower")]
    pub lower: f64,
    /// Upper end of Θ (default 1; must be 1 for the multinomial family).
    #[serde(default = "default_upper")]
    pub upper: f64,
    /// How Θ is discretised.
    pub grid: GridSpec,
    /// The prior π on Θ.
    pub prior: PriorSpec,
}

fn default_lower() -> f64 {
    0.0
}

fn default_upper() -> f64 {
    1.0
}

/// A grid on an interval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum GridSpec {
    /// θ_j = lower + (j − ½)(upper − lower)/M, j = 1..M; weights ∝ prior density at θ_j.
    Midpoint {
        /// M, the number of points.
        points: usize,
    },
    /// The UBaPP paper's construction: θ_j drawn i.i.d. from the prior, each with weight 1/M.
    PriorSamples {
        /// M, the number of draws.
        points: usize,
        /// Seed of the draws, so the grid is reproducible.
        seed: u64,
    },
    /// Simplex lattice (multinomial family): θ = (n + ½)/(R + d/2) for every composition n of R
    /// into d parts; C(R + d − 1, d − 1) interior points (for d = 2, the midpoint grid with R + 1 points).
    /// With `boundary = true`, θ = n/R: the same count of points, the vertices and edges included
    /// (an output grid that can release a unanimous share).
    Simplex {
        /// R, the lattice resolution.
        resolution: usize,
        /// Points on the simplex's faces too (θ = n/R).
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        boundary: bool,
    },
    /// Points given explicitly: `values` inline (one-dimensional), `points` inline (one array of
    /// coordinates per point) or `file` (CSV, one point per line, one column per coordinate; path
    /// relative to the model file).
    Explicit {
        /// Inline one-dimensional points.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        values: Option<Vec<f64>>,
        /// Inline points of any dimension, one row of coordinates each.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        points: Option<Vec<Vec<f64>>>,
        /// CSV file of points.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        file: Option<String>,
    },
    /// No parameter grid: costs integrated in closed form against the continuous conjugate prior
    /// (binomial family with a uniform or Beta prior on [0, 1]); only the output set is discretised.
    Exact,
}

/// A prior on the parameter.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum PriorSpec {
    /// Uniform on [lower, upper].
    Uniform,
    /// Beta(a, b) on [lower, upper] (rescaled from [0, 1]).
    Beta {
        /// First shape parameter, > 0.
        a: f64,
        /// Second shape parameter, > 0.
        b: f64,
    },
    /// Gamma(shape, rate) — density ∝ θ^(shape−1) e^(−rate·θ) — truncated to [lower, upper]
    /// and renormalised on the grid (for rates, e.g. the Poisson family).
    Gamma {
        /// Shape, > 0.
        shape: f64,
        /// Rate (inverse scale), > 0.
        rate: f64,
    },
    /// Log-normal: ln θ ~ Normal(mu, sigma²), density ∝ θ^(−1) exp(−(ln θ − mu)²/(2 sigma²)) for
    /// θ > 0, truncated to [lower, upper] and renormalised on the grid (for positive quantities
    /// spread over orders of magnitude).
    LogNormal {
        /// Mean of ln θ.
        mu: f64,
        /// Standard deviation of ln θ, > 0.
        sigma: f64,
    },
    /// A mixture Σ_c weights\[c\] · components\[c\] of one-dimensional priors (uniform, beta,
    /// gamma, log-normal): each component is truncated to [lower, upper] and normalised (on the
    /// grid for the grid weights), then mixed, so the weights are the components' probabilities.
    Mixture {
        /// Mixing weights, ≥ 0 with a positive sum (normalised), one per component.
        weights: Vec<f64>,
        /// The components.
        components: Vec<PriorSpec>,
    },
    /// Dirichlet(α_1..α_d) on the simplex (multinomial family).
    Dirichlet {
        /// Concentrations, one per category, each > 0.
        alpha: Vec<f64>,
    },
    /// Explicit weights on the parameter grid (normalised to sum 1): `values` inline or `file`
    /// (CSV, one weight per line, path relative to the model file).
    Weights {
        /// Inline weights, one per grid point.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        values: Option<Vec<f64>>,
        /// CSV file of weights.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        file: Option<String>,
    },
}

/// `[observation]`: the sufficient statistic y and its distribution q_θ(y).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "family", rename_all = "kebab-case", deny_unknown_fields)]
pub enum ObservationSpec {
    /// y = number of successes in K Bernoulli(θ) trials; Y = {0..K}; neighbours |y − y'| = 1.
    Binomial {
        /// K, the number of trials (records).
        trials: u64,
    },
    /// y = Σ_r min(x_r, c) for N records x_r ~ Poisson(λ) clipped at a public cap c;
    /// Y = {0..Nc}; neighbours |y − y'| ≤ c (a band). The parameter is λ on [lower, upper].
    Poisson {
        /// N, the number of records.
        records: u64,
        /// c ≥ 1, the per-record cap.
        cap: u64,
    },
    /// y = the count vector of K records over d categories with probabilities θ in the simplex;
    /// neighbours move one record between two categories.
    Multinomial {
        /// d ≥ 2, the number of categories.
        categories: usize,
        /// K ≥ 1, the number of records.
        records: u64,
    },
    /// Anything else: a likelihood matrix (one row per parameter grid point, one column per
    /// observation, rows summing to 1) and a neighbour list (one pair `a, b` of 0-based observation
    /// indices per row), each a CSV file (path relative to the model file) or inline rows.
    Table {
        /// q_θ(y): row j = θ_j, column i = y_i.
        likelihood: MatrixSource,
        /// Neighbouring observation pairs.
        neighbours: MatrixSource,
    },
}

/// `[output]`: the release set Θ̃.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OutputSpec {
    /// `"parameter"` (Θ̃ = Θ) or `{ kind = "midpoint", points = N }` on [lower, upper].
    #[serde(default = "default_output_grid")]
    pub grid: OutputGridSpec,
}

fn default_output_grid() -> OutputGridSpec {
    OutputGridSpec::Parameter
}

/// The output grid: the parameter grid itself or a grid of its own.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum OutputGridSpec {
    /// Θ̃ = Θ (the paper's choice).
    #[default]
    Parameter,
    /// Θ̃ = its own grid on [lower, upper].
    Own(GridSpec),
}

impl Serialize for OutputGridSpec {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        match self {
            OutputGridSpec::Parameter => s.serialize_str("parameter"),
            OutputGridSpec::Own(g) => g.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for OutputGridSpec {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Name(String),
            Table(toml::Table),
        }
        let expected = "expected \"parameter\" or a table like { kind = \"midpoint\", points = 400 }";
        match Raw::deserialize(d).map_err(|_| serde::de::Error::custom(expected))? {
            Raw::Name(n) if n == "parameter" => Ok(OutputGridSpec::Parameter),
            Raw::Name(n) => Err(serde::de::Error::custom(format!("got \"{n}\", {expected}"))),
            Raw::Table(t) => GridSpec::deserialize(toml::Value::Table(t))
                .map(OutputGridSpec::Own)
                .map_err(|e| serde::de::Error::custom(e.message().to_string())),
        }
    }
}

/// `[loss]`: L(θ, θ̃).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum LossSpec {
    /// (θ − θ̃)², summed over coordinates for vectors (squared Euclidean); alias `squared-euclidean`.
    #[serde(alias = "squared-euclidean")]
    Squared,
    /// |θ − θ̃| (summed over coordinates for vectors).
    Absolute,
    /// 1 when ‖θ − θ̃‖₂ > tolerance, else 0.
    ZeroOne {
        /// Tolerance ≥ 0.
        tolerance: f64,
    },
    /// A custom matrix L[j, k] (one row per parameter grid point, one column per output point):
    /// `values` inline or `file` (CSV, path relative to the model file).
    Matrix {
        /// Inline rows of losses.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        values: Option<Vec<Vec<f64>>>,
        /// CSV file of losses.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        file: Option<String>,
    },
}

/// A numeric matrix given as a CSV file path (a string, relative to the model file) or inline as
/// an array of rows, e.g. `[[0.9, 0.1], [0.2, 0.8]]`.
#[derive(Debug, Clone, PartialEq)]
pub enum MatrixSource {
    /// A CSV file.
    File(String),
    /// Rows of numbers.
    Inline(Vec<Vec<f64>>),
}

impl Serialize for MatrixSource {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        match self {
            MatrixSource::File(f) => s.serialize_str(f),
            MatrixSource::Inline(rows) => rows.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for MatrixSource {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            File(String),
            Inline(Vec<Vec<f64>>),
        }
        match Raw::deserialize(d) {
            Ok(Raw::File(f)) => Ok(MatrixSource::File(f)),
            Ok(Raw::Inline(rows)) => Ok(MatrixSource::Inline(rows)),
            Err(_) => Err(serde::de::Error::custom(
                "expected a CSV file path (a string) or an inline matrix (an array of rows of numbers)",
            )),
        }
    }
}

impl ModelSpec {
    /// Parse a model from TOML text; `origin` names the source in error messages.
    pub fn from_toml(text: &str, origin: &str) -> Result<Self> {
        let de = toml::de::Deserializer::parse(text).map_err(|e| toml_error(origin, text, "", &e))?;
        serde_path_to_error::deserialize(de).map_err(|e| {
            let path = e.path().to_string();
            toml_error(origin, text, &path, e.inner())
        })
    }

    /// Read and parse a model file.
    pub fn from_file(path: &Path) -> Result<Self> {
        let origin = path.display().to_string();
        let text = crate::guard::read::read_text(path, crate::guard::read::MODEL_FILE_BYTES)
            .map_err(|e| ModelError::new(ModelErrorKind::Unreadable { reason: e.to_string() }).in_origin(&origin))?;
        Self::from_toml(&text, &origin)
    }

    /// The model as TOML text (round-trips through [`ModelSpec::from_toml`]).
    pub fn to_toml(&self) -> String {
        toml::to_string(self).expect("a model spec always serialises to TOML")
    }
}

/// One sentence: `file: field: what is wrong (line N)`. The field is the full key path: where the
/// deserialiser stops at a table (the tagged tables `observation`, `parameter.grid`, `loss`, … are
/// read whole), the key is taken from the text the parser's span points into (`trials = 20.5` →
/// `observation.trials`); a duplicate key is named from its span.
fn toml_error(origin: &str, text: &str, path: &str, e: &toml::de::Error) -> ModelError {
    let start = e.span().map(|s| s.start.min(text.len()));
    let mut line = start.map(|s| text[..s].matches('\n').count() + 1);
    let mut message = plain_expectation(&crate::guard::text::parser_message(e.message().trim().trim_end_matches('.')));
    let mut field = (!path.is_empty() && path != ".").then(|| path.to_string());
    if field.is_none() {
        // A syntax error: a key with nothing after its `=` gets its full path and a plain
        // sentence (the parser's own is about quoting strings).
        if let Some(key) = start.and_then(|s| empty_value_at(text, s)) {
            field = Some(key);
            message = "has no value after `=` (write a number, a quoted string, a list or a table)".to_string();
        }
    }
    if let Some(span) = e.span().filter(|s| s.end <= text.len() && s.start <= s.end) {
        let spanned = text.get(span.clone()).unwrap_or("").trim();
        if message.starts_with("duplicate key") && !spanned.is_empty() && !message.contains(spanned) {
            message = format!("duplicate key {}", crate::guard::text::quote(spanned.trim_matches('"')));
        } else if let Some(f) = &field {
            let last = f.rsplit('.').next();
            let key = start
                .and_then(|s| key_before(text, s))
                .filter(|k| last != Some(*k))
                .map(str::to_string)
                .or_else(|| key_holding(text, f, e.message()));
            if let Some(key) = key.filter(|k| last != Some(k.as_str())) {
                // The span covers the whole table: the line is the key's own.
                if let Some(l) = start.and_then(|s| key_line(text, s, &key)) {
                    line = Some(l);
                }
                field = Some(format!("{f}.{key}"));
            }
        }
    }
    ModelError::new(ModelErrorKind::Syntax { field, line, message }).in_origin(origin)
}

/// For "invalid type: … `v`, expected …" reported at the table `path`: the one key of that table
/// whose value is `v` (a tagged table is read whole, so the parser names only the table).
fn key_holding(text: &str, path: &str, message: &str) -> Option<String> {
    let rest = message.strip_prefix("invalid type: ").or_else(|| message.strip_prefix("invalid value: "))?;
    let quoted = rest.split_once(['`', '"'])?.1;
    let token = quoted.split_once(['`', '"'])?.0;
    let mut value = &toml::Value::Table(text.parse::<toml::Table>().ok()?);
    for part in path.split('.') {
        value = value.get(part)?;
    }
    let found: Vec<&String> = value
        .as_table()?
        .iter()
        .filter(|(_, v)| match v {
            toml::Value::String(s) => s == token,
            toml::Value::Table(_) | toml::Value::Array(_) => false,
            other => other.to_string() == token,
        })
        .map(|(k, _)| k)
        .collect();
    (found.len() == 1).then(|| found[0].clone())
}

/// The line number of the first `key =` at or after byte `from`.
fn key_line(text: &str, from: usize, key: &str) -> Option<usize> {
    let first = text.get(..from)?.matches('\n').count() + 1;
    text.get(from..)?
        .lines()
        .position(|l| l.trim_start().strip_prefix(key).is_some_and(|rest| rest.trim_start().starts_with('=')))
        .map(|i| first + i)
        .filter(|_| !key.is_empty())
}

/// Serde's names of integer types in "expected u64" as words a model's author reads.
fn plain_expectation(message: &str) -> String {
    let mut m = message.to_string();
    for (rust, plain) in [
        ("expected u64", "expected a whole number ≥ 0"),
        ("expected usize", "expected a whole number ≥ 0"),
        ("expected u32", "expected a whole number ≥ 0"),
        ("expected f64", "expected a number"),
    ] {
        if m.ends_with(rust) {
            m = format!("{}{plain}", &m[..m.len() - rust.len()]);
        }
    }
    m
}

/// When the text at byte `at` is a `key =` with nothing after it on its line, the key's full path
/// (`observation.trials`, from the last `[table]` header above it).
fn empty_value_at(text: &str, at: usize) -> Option<String> {
    let line_start = text.get(..at)?.rfind('\n').map_or(0, |i| i + 1);
    let line_end = text.get(at..)?.find('\n').map_or(text.len(), |i| at + i);
    let line = text.get(line_start..line_end)?;
    let (key, value) = line.split_once('=')?;
    let value = value.split('#').next().unwrap_or("").trim();
    let key = key.trim();
    let plain_key = !key.is_empty() && key.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'));
    if !value.is_empty() || !plain_key {
        return None;
    }
    let table = text[..line_start]
        .lines()
        .rev()
        .map(str::trim)
        .find(|l| l.starts_with('['))
        .map(|h| h.trim_start_matches('[').split(']').next().unwrap_or("").trim().to_string());
    Some(match table {
        Some(t) if !t.is_empty() => format!("{t}.{key}"),
        _ => key.to_string(),
    })
}

/// The key of the `key = ` right before byte `at` on its line (a value's span starts after it).
fn key_before(text: &str, at: usize) -> Option<&str> {
    let line_start = text.get(..at)?.rfind('\n').map_or(0, |i| i + 1);
    let before = text.get(line_start..at)?.trim_end().strip_suffix('=')?.trim_end();
    let key_start = before
        .char_indices()
        .rev()
        .take_while(|(_, c)| c.is_ascii_alphanumeric() || *c == '_' || *c == '-')
        .last()
        .map(|(i, _)| i)?;
    Some(&before[key_start..])
}

/// `epsilon = 0.5` or `epsilon = [0.5, 2.0]`: a single number is a list of one.
fn number_or_list<'de, D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Vec<f64>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged, expecting = "a number or a list of numbers")]
    enum OneOrMany {
        One(f64),
        Many(Vec<f64>),
    }
    Ok(match OneOrMany::deserialize(d)? {
        OneOrMany::One(x) => vec![x],
        OneOrMany::Many(v) => v,
    })
}
