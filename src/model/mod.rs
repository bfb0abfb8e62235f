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

use std::path::Path;
use std::sync::Arc;

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
use inline::{inline_csv_files, Sources};

type Result<T> = std::result::Result<T, ModelError>;
use spec::{GridSpec, LossSpec, ObjectiveSpec, ObservationSpec, OutputGridSpec, PriorSpec};

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

/// Largest grid we accept before even estimating memory (guards `usize` arithmetic).
const MAX_POINTS: usize = 1 << 32;

/// Largest |Y| we enumerate (multinomial count vectors, clipped Poisson sums).
const MAX_OBSERVATIONS: f64 = 1e7;

/// Where the parameter lives, which decides the admissible grids and priors.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Space {
    /// An interval \[lower, upper\] (binomial: inside \[0, 1\]; Poisson: inside [0, ∞)).
    Interval,
    /// The simplex in R^d.
    Simplex(usize),
    /// Whatever a table's explicit grid says.
    Table,
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
            .map_err(|e| ModelError::new(ModelErrorKind::TooLarge(e)))?;
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

/// Build a grid of the given kind for the parameter space; `field` names it in errors.
#[allow(clippy::too_many_arguments)]
fn build_grid(
    g: &GridSpec,
    field: &str,
    beyond_interval: bool,
    space: Space,
    lower: f64,
    upper: f64,
    prior: &PriorSpec,
    src: &Sources,
) -> Result<Grid> {
    Ok(match g {
        GridSpec::Midpoint { points } => {
            if let Space::Simplex(_) = space {
                bail_field!(
                    format!("{field}"),
                    "the multinomial family needs kind = \"simplex\" (or \"explicit\"), not \"midpoint\""
                );
            }
            check_points(*points, &format!("{field}.points"))?;
            Grid::midpoint(lower, upper, *points)
        }
        GridSpec::PriorSamples { points, seed } => {
            check_points(*points, &format!("{field}.points"))?;
            match (space, prior) {
                (Space::Interval, PriorSpec::Uniform) => Grid::from_values(Prior::Uniform.samples(*points, *seed, lower, upper)),
                (Space::Interval, PriorSpec::Beta { a, b }) => {
                    check_beta(*a, *b)?;
                    Grid::from_values(Prior::Beta { a: *a, b: *b }.samples(*points, *seed, lower, upper))
                }
                (Space::Simplex(d), PriorSpec::Uniform) => prior::dirichlet_samples(*points, *seed, &vec![1.0; d]),
                (Space::Simplex(d), PriorSpec::Dirichlet { alpha }) => {
                    check_dirichlet(alpha, d)?;
                    prior::dirichlet_samples(*points, *seed, alpha)
                }
                _ => bail_field!(format!("{field}"), "kind = \"prior-samples\" needs a uniform or beta prior (interval) or a uniform or dirichlet prior (multinomial), and no table family"
                ),
            }
        }
        GridSpec::Simplex { resolution, boundary } => {
            let Space::Simplex(d) = space else {
                bail_field!(format!("{field}"), "kind = \"simplex\" applies to the multinomial family only");
            };
            let n = grid::composition_count(*resolution as u64, d);
            if n >= MAX_POINTS as f64 {
                bail_field!(format!("{field}.resolution"), "{resolution} gives {n:e} points, too many");
            }
            match (*boundary, *resolution) {
                (false, r) => Grid::simplex_lattice(d, r),
                (true, 0) => bail_field!(format!("{field}.resolution"), "must be at least 1 with boundary = true"),
                (true, r) => Grid::simplex_lattice_closed(d, r),
            }
        }
        GridSpec::Explicit { values, points, file } => {
            let (g, field) = match (values, points, file) {
                (Some(v), None, None) => {
                    let name = src.name(&format!("{field}.values"));
                    if v.is_empty() {
                        bail_field!(format!("{name}"), "must list at least one point");
                    }
                    if let Some(x) = v.iter().find(|x| !x.is_finite()) {
                        bail_field!(format!("{name}"), "must be finite numbers (got {x})");
                    }
                    (Grid::from_values(v.clone()), name)
                }
                (None, Some(rows), None) => {
                    let name = src.name(&format!("{field}.points"));
                    (Grid::new(csv::matrix_from_rows(rows, &name)?), name)
                }
                _ => bail_field!(
                    format!("{field}"),
                    "kind = \"explicit\" needs exactly one of `values`, `points` and `file`"
                ),
            };
            match space {
                Space::Interval => {
                    if g.dim() != 1 {
                        bail_field!(format!("{field}"), "expected one-dimensional points, found {} columns", g.dim());
                    }
                    if let Some(x) = g.values().into_iter().find(|&x| !beyond_interval && (x < lower || x > upper)) {
                        bail_field!(
                            format!("{field}"),
                            "point {x} lies outside [parameter.lower, parameter.upper] = [{lower}, {upper}]{}",
                            if field == "output.grid" {
                                " (only an unbiased design, constraints.unbiased = true, may release beyond it)"
                            } else {
                                ""
                            }
                        );
                    }
                }
                Space::Simplex(d) => {
                    if g.dim() != d {
                        bail_field!(
                            format!("{field}"),
                            "expected points with {d} coordinates (one per category), found {}",
                            g.dim()
                        );
                    }
                    for (j, r) in g.points().rows().into_iter().enumerate() {
                        if r.iter().any(|&x| x < 0.0) || (r.sum() - 1.0).abs() > 1e-9 {
                            bail_field!(
                                format!("{field}"),
                                "point {} is not in the simplex (coordinates ≥ 0 summing to 1)",
                                j + 1
                            );
                        }
                    }
                }
                Space::Table => {}
            }
            g
        }
        GridSpec::Exact => bail_field!(format!("{field}"), "kind = \"exact\" is handled by the caller"),
    })
}

/// The `kind` of a prior spec, as written in a model file.
fn prior_kind(prior: &PriorSpec) -> &'static str {
    match prior {
        PriorSpec::Uniform => "uniform",
        PriorSpec::Beta { .. } => "beta",
        PriorSpec::Gamma { .. } => "gamma",
        PriorSpec::LogNormal { .. } => "log-normal",
        PriorSpec::Mixture { .. } => "mixture",
        PriorSpec::Dirichlet { .. } => "dirichlet",
        PriorSpec::Weights { .. } => "weights",
    }
}

/// The one-dimensional density a spec names, its parameters checked (errors name `field`); `None`
/// for the priors that are not one (dirichlet, weights, mixture).
fn scalar_prior(prior: &PriorSpec, field: &str) -> Result<Option<Prior>> {
    let positive = |name: &str, v: f64| -> Result<()> {
        if !(v.is_finite() && v > 0.0) {
            bail_field!(format!("{field}.{name}"), "must be a finite number > 0 (got {v})");
        }
        Ok(())
    };
    Ok(match *prior {
        PriorSpec::Uniform => Some(Prior::Uniform),
        PriorSpec::Beta { a, b } => {
            positive("a", a)?;
            positive("b", b)?;
            Some(Prior::Beta { a, b })
        }
        PriorSpec::Gamma { shape, rate } => {
            positive("shape", shape)?;
            positive("rate", rate)?;
            Some(Prior::Gamma { shape, rate })
        }
        PriorSpec::LogNormal { mu, sigma } => {
            if !mu.is_finite() {
                bail_field!(format!("{field}.mu"), "must be a finite number (got {mu})");
            }
            positive("sigma", sigma)?;
            Some(Prior::LogNormal { mu, sigma })
        }
        PriorSpec::Mixture { .. } | PriorSpec::Dirichlet { .. } | PriorSpec::Weights { .. } => None,
    })
}

/// The prior's density on [lower, upper] (validated by [`prior_weights`] before this is called):
/// `None` for Dirichlet and explicit weights.
fn prior_density(prior: &PriorSpec, lower: f64, upper: f64) -> Result<Option<PriorDensity>> {
    Ok(match prior {
        PriorSpec::Mixture { weights, components } => {
            let mut parts = Vec::with_capacity(components.len());
            for (c, (component, &w)) in components.iter().zip(weights).enumerate() {
                if let Some(scalar) = scalar_prior(component, &format!("parameter.prior.components[{c}]"))? {
                    parts.push((w, scalar));
                }
            }
            Some(PriorDensity::mixture(&parts, lower, upper))
        }
        PriorSpec::Dirichlet { .. } | PriorSpec::Weights { .. } => None,
        _ => scalar_prior(prior, "parameter.prior")?.map(|p| PriorDensity::scalar(p, lower, upper)),
    })
}

/// Prior weights π_j on the parameter grid.
fn prior_weights(
    prior: &PriorSpec,
    grid: &GridSpec,
    theta: &Grid,
    space: Space,
    lower: f64,
    upper: f64,
    src: &Sources,
) -> Result<Vec<f64>> {
    let m = theta.len();
    let uniform = || vec![1.0 / m as f64; m];
    if let GridSpec::PriorSamples { .. } = grid {
        if let PriorSpec::Weights { .. } = prior {
            bail_field!(
                "parameter.prior",
                "kind = \"weights\" cannot be combined with a prior-samples grid (its weights are 1/M by construction)"
            );
        }
        return Ok(uniform());
    }
    let none = || ModelError::invalid("parameter.prior", "puts no finite positive mass on the parameter grid");
    match prior {
        PriorSpec::Uniform => match space {
            Space::Interval => Prior::Uniform.grid_weights(&theta.values(), lower, upper).ok_or_else(none),
            _ => Ok(uniform()),
        },
        PriorSpec::Beta { .. } | PriorSpec::Gamma { .. } | PriorSpec::LogNormal { .. } => {
            let scalar = scalar_prior(prior, "parameter.prior")?.expect("a one-dimensional prior");
            if space != Space::Interval {
                bail_field!(
                    "parameter.prior",
                    "kind = \"{}\" applies to one-dimensional parameters (binomial, poisson); use \"dirichlet\" or \"weights\"",
                    prior_kind(prior)
                );
            }
            scalar.grid_weights(&theta.values(), lower, upper).ok_or_else(none)
        }
        PriorSpec::Mixture { weights, components } => {
            if space != Space::Interval {
                bail_field!(
                    "parameter.prior",
                    "kind = \"mixture\" applies to one-dimensional parameters (binomial, poisson)"
                );
            }
            if weights.len() != components.len() || components.is_empty() {
                bail_field!(
                    "parameter.prior.weights",
                    "needs one weight per component ({} components, {} weights; at least one)",
                    components.len(),
                    weights.len()
                );
            }
            if let Some((c, w)) = weights.iter().enumerate().find(|(_, w)| !(w.is_finite() && **w >= 0.0)) {
                bail_field!(format!("parameter.prior.weights[{c}]"), "must be a finite number ≥ 0 (got {w})");
            }
            let total: f64 = weights.iter().sum();
            if !(total > 0.0 && total.is_finite()) {
                bail_field!("parameter.prior.weights", "sum to {total}; they must have a positive finite sum");
            }
            // Each component normalised on the grid, then mixed: Pr(component c) = weights[c]/Σ.
            let mut mixed = vec![0.0; m];
            for (c, (component, &w)) in components.iter().zip(weights).enumerate() {
                let field = format!("parameter.prior.components[{c}]");
                let Some(scalar) = scalar_prior(component, &field)? else {
                    bail_field!(
                        field,
                        "must be a uniform, beta, gamma or log-normal prior (got \"{}\")",
                        prior_kind(component)
                    );
                };
                let wc = scalar.grid_weights(&theta.values(), lower, upper).ok_or_else(|| {
                    ModelError::invalid(field.clone(), "puts no finite positive mass on the parameter grid")
                })?;
                for (x, y) in mixed.iter_mut().zip(wc) {
                    *x += w / total * y;
                }
            }
            Ok(mixed)
        }
        PriorSpec::Dirichlet { alpha } => {
            let Space::Simplex(d) = space else {
                bail_field!("parameter.prior", "kind = \"dirichlet\" applies to the multinomial family only");
            };
            check_dirichlet(alpha, d)?;
            prior::dirichlet_weights(theta, alpha).ok_or_else(none)
        }
        PriorSpec::Weights { values, file } => {
            let (Some(w), None) = (values, file) else {
                bail_field!("parameter.prior", "kind = \"weights\" needs exactly one of `values` and `file`");
            };
            let (w, origin) = (w.clone(), src.name("parameter.prior.values"));
            if w.len() != m {
                bail_field!(
                    format!("{origin}"),
                    "expected {m} weights (one per parameter grid point), found {}",
                    w.len()
                );
            }
            if let Some((j, x)) = w.iter().enumerate().find(|(_, x)| !(x.is_finite() && **x >= 0.0)) {
                bail_field!(format!("{origin}"), "weight {} is {x}; weights must be finite and ≥ 0", j + 1);
            }
            let total: f64 = w.iter().sum();
            if !(total > 0.0 && total.is_finite()) {
                bail_field!(format!("{origin}"), "the weights sum to {total}; they must have a positive finite sum");
            }
            Ok(w.into_iter().map(|x| x / total).collect())
        }
    }
}

/// `epsilon`, `delta` and `objective`.
fn privacy_and_objective(spec: &ModelSpec) -> Result<Objective> {
    validate_epsilons(&spec.epsilon, "epsilon")?;
    if !(spec.delta.is_finite() && (0.0..1.0).contains(&spec.delta)) {
        bail_field!("delta", "must be a number in [0, 1) (got {})", spec.delta);
    }
    Ok(match spec.objective {
        ObjectiveSpec::Bayes => Objective::Bayes,
        ObjectiveSpec::Minimax => Objective::Minimax,
    })
}

/// `[parameter]`'s bounds against the family, and the space the parameter lives in.
fn parameter_space(spec: &ModelSpec) -> Result<Space> {
    let p = &spec.parameter;
    if !(p.lower.is_finite() && p.upper.is_finite() && p.lower < p.upper) {
        bail_field!(
            "parameter.lower, parameter.upper",
            "must be finite with lower < upper (got {} and {})",
            p.lower,
            p.upper
        );
    }
    let space = match &spec.observation {
        ObservationSpec::Binomial { .. } | ObservationSpec::Poisson { .. } => Space::Interval,
        ObservationSpec::Multinomial { categories, .. } => {
            if *categories < 2 {
                bail_field!("observation.categories", "must be at least 2 (got {categories})");
            }
            Space::Simplex(*categories)
        }
        ObservationSpec::Table { .. } => Space::Table,
    };
    match &spec.observation {
        ObservationSpec::Binomial { .. } if p.lower < 0.0 || p.upper > 1.0 => bail_field!(
            "parameter.lower, parameter.upper",
            "must lie in [0, 1] for the binomial family (got {} and {})",
            p.lower,
            p.upper
        ),
        ObservationSpec::Poisson { .. } if p.lower < 0.0 => {
            bail_field!("parameter.lower", "must be ≥ 0 for the poisson family (a rate; got {})", p.lower)
        }
        ObservationSpec::Multinomial { .. } if p.lower != 0.0 || p.upper != 1.0 => bail_field!(
            "parameter.lower, parameter.upper",
            "must be 0 and 1 (or omitted) for the multinomial family (got {} and {})",
            p.lower,
            p.upper
        ),
        _ => {}
    }
    Ok(space)
}

/// The parameter grid, the output grid and, for `grid = { kind = "exact" }`, the closed-form
/// conjugate costs (the parameter grid is then the output grid, for reports only).
fn grids(
    spec: &ModelSpec,
    space: Space,
    objective: Objective,
    src: &Sources,
) -> Result<(Grid, Grid, Option<ExactBetaBinomial>)> {
    let p = &spec.parameter;
    // The parameter grid.
    let mut exact = None;
    let theta = match &p.grid {
        GridSpec::Exact => {
            let ObservationSpec::Binomial { trials } = spec.observation else {
                bail_field!(
                    "parameter.grid",
                    "kind = \"exact\" needs the binomial family (closed-form Beta–binomial costs)"
                );
            };
            let (a, b) = match &p.prior {
                PriorSpec::Uniform => (1.0, 1.0),
                PriorSpec::Beta { a, b } => (*a, *b),
                _ => bail_field!("parameter.grid", "kind = \"exact\" needs a uniform or beta prior"),
            };
            if p.lower != 0.0 || p.upper != 1.0 {
                bail_field!("parameter.grid", "kind = \"exact\" needs parameter.lower = 0 and parameter.upper = 1");
            }
            if objective == Objective::Minimax {
                bail_field!(
                    "objective",
                    "\"minimax\" needs a finite parameter grid, not parameter.grid.kind = \"exact\""
                );
            }
            if matches!(spec.output.grid, OutputGridSpec::Parameter) {
                bail_field!("output.grid", "must be a grid of its own (e.g. {{ kind = \"midpoint\", points = 100 }}) when parameter.grid.kind = \"exact\"");
            }
            exact = Some(ExactBetaBinomial { a, b, trials });
            None
        }
        g => Some(build_grid(g, "parameter.grid", false, space, p.lower, p.upper, &p.prior, src)?),
    };
    // The output grid.
    let outputs = match &spec.output.grid {
        OutputGridSpec::Parameter => theta.clone().expect("exact grids have their own output grid"),
        OutputGridSpec::Own(GridSpec::Exact) => {
            bail_field!("output.grid", "kind = \"exact\" applies to the parameter grid only")
        }
        OutputGridSpec::Own(g) => {
            build_grid(g, "output.grid", spec.constraints.unbiased, space, p.lower, p.upper, &p.prior, src)?
        }
    };
    let theta = theta.unwrap_or_else(|| outputs.clone());
    if let (Space::Table, ObservationSpec::Table { .. }) = (space, &spec.observation) {
        if outputs.dim() != theta.dim() {
            bail_field!(
                "output.grid",
                "has points of dimension {} but parameter.grid has dimension {}",
                outputs.dim(),
                theta.dim()
            );
        }
    }
    Ok((theta, outputs, exact))
}

/// `[observation]`: the family, hence Y and its neighbour relation.
fn family(observation: &ObservationSpec, theta: &Grid, src: &Sources) -> Result<Family> {
    // The family.
    Ok(match observation {
        ObservationSpec::Binomial { trials } => {
            if *trials == 0 {
                bail_field!("observation.trials", "must be at least 1 (got 0)");
            }
            if *trials as u128 >= MAX_POINTS as u128 {
                bail_field!("observation.trials", "{trials} is too large (at most {})", MAX_POINTS - 1);
            }
            Family::Binomial { trials: *trials }
        }
        ObservationSpec::Poisson { records, cap } => {
            if *records == 0 {
                bail_field!("observation.records", "must be at least 1 (got 0)");
            }
            if *cap == 0 {
                bail_field!("observation.cap", "must be at least 1 (got 0): a cap of 0 clips every record to 0");
            }
            if (*records as f64) * (*cap as f64) >= MAX_OBSERVATIONS {
                bail_field!(
                    "observation",
                    "records × cap = {} is too large (|Y| = N·c + 1 must stay below {MAX_OBSERVATIONS:e})",
                    *records as u128 * *cap as u128
                );
            }
            Family::Poisson { records: *records, cap: *cap }
        }
        ObservationSpec::Multinomial { categories, records } => {
            if *records == 0 {
                bail_field!("observation.records", "must be at least 1 (got 0)");
            }
            let n = grid::composition_count(*records, *categories);
            if n >= MAX_OBSERVATIONS {
                bail_field!("observation", "{categories} categories and {records} records give {n:e} count vectors, too many (at most {MAX_OBSERVATIONS:e})"
                );
            }
            Family::Multinomial { categories: *categories, records: *records }
        }
        ObservationSpec::Table { likelihood, neighbours } => {
            let lname = src.name("observation.likelihood");
            let rows = src.matrix(likelihood, &lname)?;
            if rows.nrows() != theta.len() {
                bail_field!(
                    format!("{lname}"),
                    "expected one row per parameter grid point ({}), found {} rows",
                    theta.len(),
                    rows.nrows()
                );
            }
            for (j, r) in rows.rows().into_iter().enumerate() {
                if let Some(c) = r.iter().position(|&v| v < 0.0) {
                    bail_field!(
                        format!("{lname}"),
                        "row {}, column {} is negative ({}); probabilities must be ≥ 0",
                        j + 1,
                        c + 1,
                        r[c]
                    );
                }
                let s = r.sum();
                if (s - 1.0).abs() > 1e-9 {
                    bail_field!(
                        format!("{lname}"),
                        "row {} sums to {s}, not 1 (each row is q_θ(·) for one grid point)",
                        j + 1
                    );
                }
            }
            let n_obs = rows.ncols();
            let nname = src.name("observation.neighbours");
            let pairs = src.matrix(neighbours, &nname)?;
            if pairs.ncols() != 2 {
                bail_field!(format!("{nname}"), "expected 2 columns (a, b) per line, found {}", pairs.ncols());
            }
            let mut edges = Vec::with_capacity(pairs.nrows());
            for (line, r) in pairs.rows().into_iter().enumerate() {
                let (a, b) = (r[0], r[1]);
                for v in [a, b] {
                    if v.fract() != 0.0 || v < 0.0 || v >= n_obs as f64 {
                        bail_field!(format!("{nname}"), "row {}: index {v} is not an observation index in 0..{} (|Y| = {n_obs} from the likelihood's columns)",
                            line + 1,
                            n_obs - 1
                        );
                    }
                }
                let (a, b) = (a as usize, b as usize);
                if a == b {
                    bail_field!(
                        format!("{nname}"),
                        "row {}: an observation ({a}) cannot be its own neighbour",
                        line + 1
                    );
                }
                edges.push((a.min(b), a.max(b)));
            }
            edges.sort_unstable();
            edges.dedup();
            Family::Table { q: Arc::new(rows.t().to_owned()), theta: theta.clone(), edges }
        }
    })
}

/// Largest number of parties (guards products like M·K in `u64` and the party risks' sizes).
const MAX_PARTIES: u64 = 1 << 20;

/// `[parties]`: M ≥ 1; each party's records follow `[observation]`, and the aggregate is the
/// exact posterior of the parties' releases, which needs a finite parameter grid and Bayes risk.
fn parties(spec: &ModelSpec) -> Result<u64> {
    let Some(p) = &spec.parties else { return Ok(1) };
    if p.count == 0 {
        bail_field!("parties.count", "must be at least 1 (got 0)");
    }
    if p.count > MAX_PARTIES {
        bail_field!("parties.count", "{} is too large (at most {MAX_PARTIES})", p.count);
    }
    if p.count > 1 {
        if let GridSpec::Exact = spec.parameter.grid {
            bail_field!(
                "parties.count",
                "several parties need a finite parameter grid (the aggregate is a posterior over it), not parameter.grid.kind = \"exact\""
            );
        }
        if spec.delta != 0.0 {
            bail_field!(
                "parties.count",
                "several parties are supported for pure ε-DP only (delta = 0), got delta = {}",
                spec.delta
            );
        }
        if spec.objective == ObjectiveSpec::Minimax {
            bail_field!(
                "parties.count",
                "several parties are supported for objective = \"bayes\" only (the aggregate is a Bayes posterior)"
            );
        }
    }
    Ok(p.count)
}

/// `[loss]`.
fn loss(spec: &LossSpec, exact: bool, theta: &Grid, outputs: &Grid, src: &Sources) -> Result<Loss> {
    Ok(match spec {
        LossSpec::Squared => Loss::Squared,
        LossSpec::Absolute => Loss::Absolute,
        LossSpec::ZeroOne { tolerance } => {
            if !(tolerance.is_finite() && *tolerance >= 0.0) {
                bail_field!("loss.tolerance", "must be a finite number ≥ 0 (got {tolerance})");
            }
            Loss::ZeroOne { tolerance: *tolerance }
        }
        LossSpec::Matrix { values, file } => {
            if exact {
                bail_field!(
                    "loss.kind",
                    "\"matrix\" needs a finite parameter grid, not parameter.grid.kind = \"exact\""
                );
            }
            let (Some(rows), None) = (values, file) else {
                bail_field!("loss", "kind = \"matrix\" needs exactly one of `values` and `file`");
            };
            let name = src.name("loss.values");
            let values = csv::matrix_from_rows(rows, &name)?;
            let what = "one row per parameter grid point, one column per output point";
            csv::check_shape(&values, &name, theta.len(), outputs.len(), what)?;
            if let Some(((j, k), v)) = values.indexed_iter().find(|(_, v)| **v < 0.0) {
                bail_field!(format!("{name}"), "row {}, column {} is negative ({v}); losses must be ≥ 0", j + 1, k + 1);
            }
            Loss::Matrix { values: Arc::new(values), theta: theta.clone(), outputs: outputs.clone() }
        }
    })
}

fn check_beta(a: f64, b: f64) -> Result<()> {
    for (name, v) in [("a", a), ("b", b)] {
        if !(v.is_finite() && v > 0.0) {
            bail_field!(format!("parameter.prior.{name}"), "must be a finite number > 0 (got {v})");
        }
    }
    Ok(())
}

fn check_dirichlet(alpha: &[f64], d: usize) -> Result<()> {
    if alpha.len() != d {
        bail_field!("parameter.prior.alpha", "must have one entry per category ({d}), found {}", alpha.len());
    }
    if let Some((j, a)) = alpha.iter().enumerate().find(|(_, a)| !(a.is_finite() && **a > 0.0)) {
        bail_field!(format!("parameter.prior.alpha[{j}]"), "must be a finite number > 0 (got {a})");
    }
    Ok(())
}

/// Every ε must be finite and > 0; `field` names the list in the message.
pub fn validate_epsilons(eps: &[f64], field: &str) -> Result<()> {
    if eps.is_empty() {
        bail_field!(format!("{field}"), "must list at least one privacy level ε > 0");
    }
    for (i, &e) in eps.iter().enumerate() {
        if !(e.is_finite() && e > 0.0) {
            bail_field!(format!("{field}[{i}]"), "must be a finite number > 0 (got {e})");
        }
    }
    Ok(())
}

fn check_points(points: usize, field: &str) -> Result<()> {
    if points == 0 {
        bail_field!(format!("{field}"), "must be at least 1 (got 0)");
    }
    if points >= MAX_POINTS {
        bail_field!(format!("{field}"), "{points} is too large (at most {})", MAX_POINTS - 1);
    }
    Ok(())
}
