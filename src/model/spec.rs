//! The model file schema (`models/*.toml`), as written by users and other tools.
//!
//! These types mirror the TOML exactly and are validated into a [`crate::model::Model`] by
//! [`crate::model::Model::from_spec`]. Unknown or misspelled keys are rejected, so a typo never
//! silently falls back to a default.

use serde::{Deserialize, Serialize};
use std::path::Path;

use crate::{Error, Result};

/// A whole model file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelSpec {
    /// Short identifier, e.g. `bernoulli-k100`.
    pub name: String,
    /// One line saying what the model answers.
    #[serde(default)]
    pub description: String,
    /// Privacy levels ε; one LP per value.
    pub epsilon: Vec<f64>,
    /// The parameter space Θ, its grid and its prior.
    pub parameter: ParameterSpec,
    /// The observation family and hence Y and its neighbour relation.
    pub observation: ObservationSpec,
    /// The output set Θ̃ released by the mechanism.
    #[serde(default)]
    pub output: OutputSpec,
    /// The loss L(θ, θ̃).
    pub loss: LossSpec,
}

/// `[parameter]`: Θ = [lower, upper], discretised by `grid`, weighted by `prior`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ParameterSpec {
    /// Lower end of Θ.
    pub lower: f64,
    /// Upper end of Θ.
    pub upper: f64,
    /// How Θ is discretised.
    pub grid: GridSpec,
    /// The prior π on Θ.
    pub prior: PriorSpec,
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
    /// (θ − θ̃)².
    Squared,
    /// |θ − θ̃|.
    Absolute,
}

impl ModelSpec {
    /// Parse a model from TOML text; `origin` names the source in error messages.
    pub fn from_toml(text: &str, origin: &str) -> Result<Self> {
        let de = toml::de::Deserializer::parse(text)
            .map_err(|e| Error::input(describe_toml_error(origin, text, "", &e)))?;
        serde_path_to_error::deserialize(de).map_err(|e| {
            let path = e.path().to_string();
            Error::input(describe_toml_error(origin, text, &path, e.inner()))
        })
    }

    /// Read and parse a model file.
    pub fn from_file(path: &Path) -> Result<Self> {
        let text = std::fs::read_to_string(path).map_err(|e| {
            Error::input(format!("cannot read model file {}: {e}", path.display()))
        })?;
        Self::from_toml(&text, &path.display().to_string())
    }

    /// The model as TOML text (round-trips through [`ModelSpec::from_toml`]).
    pub fn to_toml(&self) -> String {
        toml::to_string(self).expect("a model spec always serialises to TOML")
    }
}

/// One sentence: `file: field: what is wrong (line N)`.
fn describe_toml_error(origin: &str, text: &str, path: &str, e: &toml::de::Error) -> String {
    let line = e.span().map(|s| text[..s.start.min(text.len())].lines().count().max(1));
    let msg = e.message().trim().trim_end_matches('.').replace('\n', " ");
    let field = if path.is_empty() || path == "." { String::new() } else { format!("{path}: ") };
    match line {
        Some(l) => format!("{origin}: {field}{msg} (line {l})"),
        None => format!("{origin}: {field}{msg}"),
    }
}
