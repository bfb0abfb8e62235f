//! What the user specifies: a model file parsed ([`spec`]) and validated into a [`Model`] whose
//! grids, prior weights, observation family, loss and neighbour relation are ready to use.

mod constraints;
pub(crate) mod csv;
mod error;
pub(crate) mod exact;
pub(crate) mod family;
mod fingerprint;
mod grid;
mod inline;
mod loss;
mod neighbours;
mod prior;
pub(crate) mod quad;
mod size;
pub mod spec;
mod validate;

use std::path::Path;

use ndarray::Array2;

pub use constraints::{ConstraintNames, Constraints};
pub use exact::ExactBetaBinomial;
pub use family::Family;
pub use fingerprint::is_fingerprint;
pub(crate) use grid::composition_count;
pub use grid::Grid;
pub use loss::Loss;
pub use neighbours::Neighbours;
pub use prior::{Prior, PriorDensity};
pub(crate) use size::size_fields;
pub use spec::ModelSpec;

pub use error::{ModelError, ModelErrorKind};

use error::bail_field;
use inline::inline_csv_files;
pub use validate::validate_epsilons;
use validate::{family, grids, loss, parameter_space, parties, prior_density, prior_weights, privacy_and_objective};

type Result<T> = std::result::Result<T, ModelError>;
use spec::{GridSpec, ObservationSpec, OutputGridSpec};

/// What the LP minimises.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Objective {
    /// Bayes risk Σ_j π_j R(θ_j) (the UBaPP program).
    Bayes,
    /// Worst-case risk max_j R(θ_j) over the parameter grid.
    Minimax,
}

/// A validated model: everything needed to build the UBaPP linear program.
#[derive(Debug, Clone)]
pub struct Model {
    /// The spec it came from, with the contents of every CSV file it names written inline (as
    /// read and used), so that it is self-contained: artifacts record it and it validates again
    /// from any directory.
    pub(crate) spec: ModelSpec,
    /// Privacy levels ε to solve for, each finite and > 0.
    pub(crate) epsilons: Vec<f64>,
    /// Parameter grid θ_1..θ_M. With exact costs (`grid = { kind = "exact" }`) this is the output
    /// grid, kept for reports only: the costs do not use it.
    pub(crate) theta: Grid,
    /// Prior weights π_j on the parameter grid (sum to 1).
    pub(crate) prior: Vec<f64>,
    /// The prior as a density on [lower, upper], for a continuous prior on an interval.
    pub(crate) density: Option<PriorDensity>,
    /// The observation family (hence Y and its neighbours).
    pub(crate) family: Family,
    /// The output grid Θ̃.
    pub(crate) outputs: Grid,
    /// The loss.
    pub(crate) loss: Loss,
    /// Bayes or minimax.
    pub(crate) objective: Objective,
    /// δ of (ε, δ)-DP (0: pure ε-DP).
    pub(crate) delta: f64,
    /// Closed-form costs against a continuous conjugate prior, when the grid kind is `exact`.
    pub(crate) exact: Option<ExactBetaBinomial>,
    /// The CSV files read into the spec (none for an inline spec).
    pub(crate) files: Vec<std::path::PathBuf>,
    /// M, the number of parties (1: one data holder); `family` describes one party's records.
    pub(crate) parties: u64,
    /// `[constraints]`: rows the LP carries beyond the paper's program.
    pub(crate) constraints: Constraints,
}

impl Model {
    /// Read, parse and validate a model file; CSV paths in it are relative to its directory.
    pub fn load(path: &Path) -> Result<Model> {
        let spec = ModelSpec::from_file(path)?;
        let base = path.parent().unwrap_or(Path::new(""));
        Model::from_spec_in(spec, base).map_err(|e| e.in_origin(&path.display().to_string()))
    }

    /// Validate a spec (CSV paths relative to the current directory). Every error names the
    /// offending field.
    pub fn from_spec(spec: ModelSpec) -> Result<Model> {
        Model::from_spec_in(spec, Path::new(""))
    }

    /// Validate a spec whose CSV paths are relative to `base`. Every error names the offending
    /// field (and the file, for CSV contents). The files are read once, into the spec
    /// ([`Model::spec`]); validation then sees inline data only.
    pub fn from_spec_in(spec: ModelSpec, base: &Path) -> Result<Model> {
        Model::validate(spec, Some(base))
    }

    /// Validate a spec that must hold all its data inline, as a model embedded in an artifact
    /// does: a spec naming a CSV file is refused, and nothing on the filesystem is read.
    pub fn from_inline_spec(spec: ModelSpec) -> Result<Model> {
        Model::validate(spec, None)
    }

    fn validate(mut spec: ModelSpec, base: Option<&Path>) -> Result<Model> {
        let src = inline_csv_files(&mut spec, base)?;
        // The size guard: what validation builds, priced from the spec before it is built.
        size::check_spec(&spec, crate::guard::MemoryBudget::from_env())
            .map_err(|e| ModelError::new(ModelErrorKind::TooLarge(Box::new(e))))?;
        let objective = privacy_and_objective(&spec)?;
        let space = parameter_space(&spec)?;
        let (theta, outputs, mut exact) = grids(&spec, space, objective, &src)?;
        let p = &spec.parameter;
        let weights = prior_weights(&p.prior, &p.grid, &theta, space, p.lower, p.upper, &src)?;
        let density = prior_density(&p.prior, p.lower, p.upper)?;
        let family = family(&spec.observation, &theta, &src)?;
        if let (Some(e), Family::Binomial { trials }) = (exact.as_mut(), &family) {
            e.trials = *trials;
        }
        let loss = loss(&spec.loss, exact.is_some(), &theta, &outputs, &src)?;
        let parties = parties(&spec)?;
        let constraints = constraints::constraints(&spec, &family, &outputs, objective, (p.lower, p.upper))?;
        Ok(Model {
            constraints,
            parties,
            epsilons: spec.epsilon.clone(),
            theta,
            prior: weights,
            density,
            family,
            outputs,
            loss,
            objective,
            delta: spec.delta,
            exact,
            files: src.1.clone(),
            spec,
        })
    }

    /// The spec it came from, with every CSV file's contents written inline (as read and used),
    /// so that it is self-contained: artifacts record it and it validates again anywhere.
    pub fn spec(&self) -> &ModelSpec {
        &self.spec
    }

    /// Privacy levels ε to solve for, each finite and > 0.
    pub fn epsilons(&self) -> &[f64] {
        &self.epsilons
    }

    /// Parameter grid θ_1..θ_M (with exact costs: the output grid, for reports only).
    pub fn theta(&self) -> &Grid {
        &self.theta
    }

    /// The prior as a density on [lower, upper] (up to a constant), or `None` for a prior with
    /// none on an interval (explicit weights: the prior *is* the discrete one; Dirichlet).
    pub fn prior_density(&self) -> Option<&PriorDensity> {
        self.density.as_ref()
    }

    /// The parameter's interval [lower, upper] as the model file states it.
    pub fn interval(&self) -> (f64, f64) {
        (self.spec.parameter.lower, self.spec.parameter.upper)
    }

    /// Prior weights π_j on the parameter grid (sum to 1).
    pub fn prior(&self) -> &[f64] {
        &self.prior
    }

    /// The observation family (hence Y and its neighbours).
    pub fn family(&self) -> &Family {
        &self.family
    }

    /// The output grid Θ̃.
    pub fn outputs(&self) -> &Grid {
        &self.outputs
    }

    /// The loss.
    pub fn loss(&self) -> &Loss {
        &self.loss
    }

    /// When the output grid stops short of the parameter's extremes (by more than 2 % of the
    /// range in some coordinate), one sentence saying so: data at an extreme (a unanimous poll)
    /// can then never be released as such. `None` when the releases reach them.
    pub fn release_reach(&self) -> Option<String> {
        let (lo, hi) = (self.spec.parameter.lower, self.spec.parameter.upper);
        let slack = 0.02 * (hi - lo);
        let out = self.outputs.points();
        let mut short = Vec::new();
        for (d, column) in out.columns().into_iter().enumerate() {
            let min = column.iter().copied().fold(f64::INFINITY, f64::min);
            let max = column.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            if min > lo + slack || max < hi - slack {
                let which = if out.ncols() > 1 { format!("θ_{}", d + 1) } else { "θ".to_string() };
                short.push(format!("{which} in [{min:.4}, {max:.4}]"));
            }
        }
        if short.is_empty() {
            return None;
        }
        let fix = match &self.spec.output.grid {
            spec::OutputGridSpec::Parameter if matches!(self.spec.parameter.grid, GridSpec::Simplex { .. }) => {
                "; an output grid with the simplex's boundary reaches them ([output] grid = { kind = \"simplex\", resolution = R, boundary = true })"
            }
            spec::OutputGridSpec::Own(GridSpec::Simplex { .. }) => {
                "; output.grid with boundary = true reaches them"
            }
            _ => "; an output grid that includes them reaches them",
        };
        Some(format!(
            "the releases never reach the parameter's extremes [{lo}, {hi}]: the output grid holds {}{fix}",
            short.join(", ")
        ))
    }

    /// Bayes or minimax.
    pub fn objective(&self) -> Objective {
        self.objective
    }

    /// δ of (ε, δ)-DP (0: pure ε-DP).
    pub fn delta(&self) -> f64 {
        self.delta
    }

    /// Closed-form costs against a continuous conjugate prior, when the grid kind is `exact`.
    pub fn exact(&self) -> Option<&ExactBetaBinomial> {
        self.exact.as_ref()
    }

    /// M, the number of parties (1 without a `[parties]` section). Each party holds records of
    /// [`Model::family`] and releases with ε-DP with respect to its own records; the LP designs
    /// one party's mechanism.
    pub fn parties(&self) -> u64 {
        self.parties
    }

    /// The same model with another number of parties (1 removes the `[parties]` section).
    pub fn with_parties(&self, count: u64) -> Result<Model> {
        let mut spec = self.spec.clone();
        spec.parties = (count != 1).then_some(spec::PartiesSpec { count });
        Model::from_spec(spec)
    }

    /// True for the paper's program: Bayes risk, pure ε (no δ, not minimax). Cheap: it reads
    /// the model's settings and builds nothing.
    pub fn is_plain_program(&self) -> bool {
        self.delta == 0.0 && self.objective == Objective::Bayes && self.constraints.is_empty()
    }

    /// The same model without `[constraints]`, its output grid clamped to [lower, upper] (an
    /// unbiased design may list outputs beyond it). For a loss that grows with |θ − θ̃| (squared,
    /// absolute) clamping a release never raises its loss, so the unconstrained optimum is the
    /// same on the clamped grid as on the original one. `None` when the model has no constraints.
    pub fn without_constraints(&self) -> Option<Result<Model>> {
        if self.constraints.is_empty() {
            return None;
        }
        let mut spec = self.spec.clone();
        if let (OutputGridSpec::Parameter, Some(values)) =
            (&spec.output.grid, validate::constrained_default_outputs(&spec))
        {
            // The constrained design's default outputs, named, so the unconstrained one shares them.
            spec.output.grid =
                OutputGridSpec::Own(GridSpec::Explicit { values: Some(values), points: None, file: None });
        }
        spec.constraints = spec::ConstraintsSpec::default();
        let (lo, hi) = (spec.parameter.lower, spec.parameter.upper);
        if let OutputGridSpec::Own(GridSpec::Explicit { values: Some(values), .. }) = &mut spec.output.grid {
            let mut clamped: Vec<f64> = values.iter().map(|v| v.clamp(lo, hi)).collect();
            clamped.sort_by(f64::total_cmp);
            clamped.dedup();
            *values = clamped;
        }
        Some(Model::from_inline_spec(spec))
    }

    /// `[constraints]`, validated (empty when the model has none).
    pub fn constraints(&self) -> &Constraints {
        &self.constraints
    }

    /// The CSV files its spec named, as read (empty for a spec with its data inline).
    pub fn csv_files(&self) -> &[std::path::PathBuf] {
        &self.files
    }

    /// The model's name.
    pub fn name(&self) -> &str {
        &self.spec.name
    }

    /// The same model with another number of trials (for sweeps over K; binomial family only).
    pub fn with_trials(&self, trials: u64) -> Result<Model> {
        let mut spec = self.spec.clone();
        match &mut spec.observation {
            ObservationSpec::Binomial { trials: t } => *t = trials,
            _ => bail_field!(
                "observation.trials",
                "exists only for the binomial family (this model is {})",
                self.family.name()
            ),
        }
        Model::from_spec(spec)
    }

    /// W\[j, i·|Θ̃| + k\] = q_{θ_j}(y_i) L(θ_j, θ̃_k): the risk R(θ_j) of a mechanism P is
    /// Σ_{k,i} W\[j, i·|Θ̃|+k\] P\[k,i\] (rows of the minimax program).
    pub fn risk_matrix(&self) -> Array2<f64> {
        let q = self.family.likelihood_matrix(&self.theta);
        let l = self.loss.matrix(&self.theta, &self.outputs);
        let (n_obs, n_out) = (q.nrows(), l.ncols());
        let mut w = Array2::zeros((self.theta.len(), n_obs * n_out));
        for j in 0..self.theta.len() {
            for i in 0..n_obs {
                let qi = q[[i, j]];
                if qi == 0.0 {
                    continue;
                }
                for k in 0..n_out {
                    w[[j, i * n_out + k]] = qi * l[[j, k]];
                }
            }
        }
        w
    }
}
