//! What the user specifies: a model file parsed ([`spec`]) and validated into a [`Model`] whose
//! grids, prior weights, observation family, loss and neighbour relation are ready to use.

pub mod family;
pub mod grid;
pub mod loss;
pub mod neighbours;
pub mod prior;
pub mod spec;

use std::path::Path;

pub use family::Family;
pub use grid::Grid;
pub use loss::Loss;
pub use neighbours::Neighbours;
pub use prior::Prior;
pub use spec::ModelSpec;

use crate::{bail_input, Result};
use spec::{GridSpec, LossSpec, ObservationSpec, OutputGridSpec, PriorSpec};

/// A validated model: everything needed to build the UBaPP linear program.
#[derive(Debug, Clone)]
pub struct Model {
    /// The spec it came from (kept so artifacts can record it).
    pub spec: ModelSpec,
    /// Privacy levels ε to solve for, each finite and > 0.
    pub epsilons: Vec<f64>,
    /// Parameter grid θ_1..θ_M.
    pub theta: Grid,
    /// Prior weights π_j on the parameter grid (sum to 1).
    pub prior: Vec<f64>,
    /// The observation family (hence Y and its neighbours).
    pub family: Family,
    /// The output grid Θ̃.
    pub outputs: Grid,
    /// The loss.
    pub loss: Loss,
}

/// Largest grid we accept before even estimating memory (guards `usize` arithmetic).
const MAX_POINTS: usize = 1 << 32;

impl Model {
    /// Read, parse and validate a model file.
    pub fn load(path: &Path) -> Result<Model> {
        let spec = ModelSpec::from_file(path)?;
        Model::from_spec(spec).map_err(|e| match e {
            crate::Error::Input(m) => crate::Error::Input(format!("{}: {m}", path.display())),
            other => other,
        })
    }

    /// Validate a spec. Every error names the offending field.
    pub fn from_spec(spec: ModelSpec) -> Result<Model> {
        validate_epsilons(&spec.epsilon, "epsilon")?;
        let p = &spec.parameter;
        if !(p.lower.is_finite() && p.upper.is_finite() && p.lower < p.upper) {
            bail_input!(
                "parameter.lower and parameter.upper must be finite with lower < upper (got {} and {})",
                p.lower,
                p.upper
            );
        }
        let prior = match p.prior {
            PriorSpec::Uniform => Prior::Uniform,
            PriorSpec::Beta { a, b } => {
                for (name, v) in [("a", a), ("b", b)] {
                    if !(v.is_finite() && v > 0.0) {
                        bail_input!("parameter.prior.{name} must be a finite number > 0 (got {v})");
                    }
                }
                Prior::Beta { a, b }
            }
        };
        let family = match spec.observation {
            ObservationSpec::Binomial { trials } => {
                if trials == 0 {
                    bail_input!("observation.trials must be at least 1 (got 0)");
                }
                if trials as u128 >= MAX_POINTS as u128 {
                    bail_input!("observation.trials = {trials} is too large (at most {})", MAX_POINTS - 1);
                }
                Family::Binomial { trials }
            }
        };
        if family.parameter_dim() == 1 && matches!(family, Family::Binomial { .. }) && (p.lower < 0.0 || p.upper > 1.0) {
            bail_input!(
                "parameter.lower and parameter.upper must lie in [0, 1] for the binomial family (got {} and {})",
                p.lower,
                p.upper
            );
        }
        let (theta, weights) = match p.grid {
            GridSpec::Midpoint { points } => {
                check_points(points, "parameter.grid.points")?;
                let theta = Grid::midpoint(p.lower, p.upper, points);
                let Some(w) = prior.grid_weights(&theta.values(), p.lower, p.upper) else {
                    bail_input!("parameter.prior puts no finite positive mass on the parameter grid");
                };
                (theta, w)
            }
            GridSpec::PriorSamples { points, seed } => {
                check_points(points, "parameter.grid.points")?;
                let theta = Grid::from_values(prior.samples(points, seed, p.lower, p.upper));
                (theta, vec![1.0 / points as f64; points])
            }
        };
        let outputs = match &spec.output.grid {
            OutputGridSpec::Parameter => theta.clone(),
            OutputGridSpec::Own(GridSpec::Midpoint { points }) => {
                check_points(*points, "output.grid.points")?;
                Grid::midpoint(p.lower, p.upper, *points)
            }
            OutputGridSpec::Own(GridSpec::PriorSamples { points, seed }) => {
                check_points(*points, "output.grid.points")?;
                Grid::from_values(prior.samples(*points, *seed, p.lower, p.upper))
            }
        };
        let loss = match spec.loss {
            LossSpec::Squared => Loss::Squared,
            LossSpec::Absolute => Loss::Absolute,
        };
        Ok(Model { epsilons: spec.epsilon.clone(), theta, prior: weights, family, outputs, loss, spec })
    }

    /// The model's name.
    pub fn name(&self) -> &str {
        &self.spec.name
    }

    /// The same model with another number of trials (for sweeps over K).
    pub fn with_trials(&self, trials: u64) -> Result<Model> {
        let mut spec = self.spec.clone();
        match &mut spec.observation {
            ObservationSpec::Binomial { trials: t } => *t = trials,
        }
        Model::from_spec(spec)
    }
}

/// Every ε must be finite and > 0; `field` names the list in the message.
pub fn validate_epsilons(eps: &[f64], field: &str) -> Result<()> {
    if eps.is_empty() {
        bail_input!("{field} must list at least one privacy level ε > 0");
    }
    for (i, &e) in eps.iter().enumerate() {
        if !(e.is_finite() && e > 0.0) {
            bail_input!("{field}[{i}] must be a finite number > 0 (got {e})");
        }
    }
    Ok(())
}

fn check_points(points: usize, field: &str) -> Result<()> {
    if points == 0 {
        bail_input!("{field} must be at least 1 (got 0)");
    }
    if points >= MAX_POINTS {
        bail_input!("{field} = {points} is too large (at most {})", MAX_POINTS - 1);
    }
    Ok(())
}
