//! Validation: each part of a [`ModelSpec`] checked and built — the grids, the prior's weights
//! and density, the observation family, the loss, the privacy program, the parties — every error
//! naming the model file's own field. [`super::Model::validate`] calls these in order.

use std::sync::Arc;

use super::error::bail_field;
use super::inline::Sources;
use super::spec::{GridSpec, LossSpec, ModelSpec, ObjectiveSpec, ObservationSpec, OutputGridSpec, PriorSpec};
use super::{csv, grid, prior, ExactBetaBinomial, Family, Grid, Loss, ModelError, Objective, Prior, PriorDensity};

type Result<T> = std::result::Result<T, ModelError>;

/// Largest grid we accept before even estimating memory (guards `usize` arithmetic).
const MAX_POINTS: usize = 1 << 32;

/// Largest |Y| we enumerate (multinomial count vectors, clipped Poisson sums).
const MAX_OBSERVATIONS: f64 = 1e7;

/// Where the parameter lives, which decides the admissible grids and priors.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Space {
    /// An interval \[lower, upper\] (binomial: inside \[0, 1\]; Poisson: inside [0, ∞)).
    Interval,
    /// The simplex in R^d.
    Simplex(usize),
    /// Whatever a table's explicit grid says.
    Table,
}

/// Build a grid of the given kind for the parameter space; `field` names it in errors.
#[allow(clippy::too_many_arguments)]
pub(super) fn build_grid(
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

/// How far beyond the parameter range an output may lie, in multiples of the range's width: an
/// unbiased design releases a little beyond it; an output much farther makes its losses so much
/// larger than the rest that the LP and the exact certificate cannot resolve them in floating
/// point (an output at 10^5 widths made quantisation fail, at 2^53 the LP solver refuse).
pub(super) const MAX_OUTPUT_SPREAD: f64 = 100.0;

/// Every output within [`MAX_OUTPUT_SPREAD`] widths of the parameter range `[lo, hi]`, refused
/// before any solve, naming `field`.
fn check_output_spread(outputs: &Grid, (lo, hi): (f64, f64), field: &str) -> Result<()> {
    let width = if hi > lo { hi - lo } else { lo.abs().max(hi.abs()).max(1.0) };
    let (min, max) = (lo - MAX_OUTPUT_SPREAD * width, hi + MAX_OUTPUT_SPREAD * width);
    if let Some(x) = outputs.values().into_iter().find(|x| !(min..=max).contains(x)) {
        bail_field!(
            format!("{field}"),
            "point {x} lies more than {MAX_OUTPUT_SPREAD} times the parameter range's width beyond [{lo}, {hi}]: \
             keep the outputs within [{min}, {max}] (a release that far has losses no solve can certify beside the others)"
        );
    }
    Ok(())
}

/// The `kind` of a prior spec, as written in a model file.
pub(super) fn prior_kind(prior: &PriorSpec) -> &'static str {
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
pub(super) fn scalar_prior(prior: &PriorSpec, field: &str) -> Result<Option<Prior>> {
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
pub(super) fn prior_density(prior: &PriorSpec, lower: f64, upper: f64) -> Result<Option<PriorDensity>> {
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
pub(super) fn prior_weights(
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
pub(super) fn privacy_and_objective(spec: &ModelSpec) -> Result<Objective> {
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
pub(super) fn parameter_space(spec: &ModelSpec) -> Result<Space> {
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
pub(super) fn grids(
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
        OutputGridSpec::Parameter => match constrained_default_outputs(spec) {
            Some(values) => Grid::from_values(values),
            None => theta.clone().expect("exact grids have their own output grid"),
        },
        OutputGridSpec::Own(GridSpec::Exact) => {
            bail_field!("output.grid", "kind = \"exact\" applies to the parameter grid only")
        }
        OutputGridSpec::Own(g) => {
            build_grid(g, "output.grid", spec.constraints.unbiased, space, p.lower, p.upper, &p.prior, src)?
        }
    };
    let theta = theta.unwrap_or_else(|| outputs.clone());
    let value_loss = matches!(spec.loss, LossSpec::Squared | LossSpec::Absolute);
    let range = match space {
        Space::Interval if spec.constraints.unbiased => Some((p.lower, p.upper)),
        Space::Table if value_loss && theta.dim() == 1 && outputs.dim() == 1 => {
            let v = theta.values();
            Some((v.iter().copied().fold(f64::INFINITY, f64::min), v.iter().copied().fold(f64::NEG_INFINITY, f64::max)))
        }
        _ => None,
    };
    if let (Some(range), OutputGridSpec::Own(g)) = (range, &spec.output.grid) {
        let field = match g {
            GridSpec::Explicit { values: Some(_), .. } => src.name("output.grid.values"),
            GridSpec::Explicit { points: Some(_), .. } => src.name("output.grid.points"),
            _ => "output.grid".to_string(),
        };
        check_output_spread(&outputs, range, &field)?;
    }
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

/// The output grid an unbiased or fixed-point design gets when the model names none (the
/// parameter grid cannot serve: unbiasedness needs outputs beyond the estimates, a fixed point the
/// estimates themselves), for a binomial or clipped Poisson count with the family's estimate y/n
/// (n = K or N): a fixed point Y's estimates in order; unbiased the estimates' lattice, step 1/n,
/// reaching their range again on each side (−1 … 2 for y/K), so every estimate is an output.
/// `None` otherwise (a stated `estimate`, another family, no such constraint).
pub(crate) fn constrained_default_outputs(spec: &ModelSpec) -> Option<Vec<f64>> {
    let (first, last, n) = constrained_default_range(spec)?;
    // The same arithmetic as the estimates' (y as f64 / n as f64), so each is an output exactly.
    Some((first..=last).map(|j| j as f64 / n as f64).collect())
}

/// [`constrained_default_outputs`] as j/n for j = first..=last: (first, last, n), computed without
/// allocating (the size guard prices it).
pub(crate) fn constrained_default_range(spec: &ModelSpec) -> Option<(i64, i64, u64)> {
    let c = &spec.constraints;
    if c.estimate.is_some() || !(c.unbiased || c.fixed_point.is_some()) {
        return None;
    }
    let (n, count) = match spec.observation {
        ObservationSpec::Binomial { trials } => (trials, trials),
        ObservationSpec::Poisson { records, cap } => (records, records.saturating_mul(cap)),
        _ => return None,
    };
    let count = i64::try_from(count).ok().filter(|&c| c <= i64::MAX / 3)?;
    Some(if c.fixed_point.is_some() { (0, count, n) } else { (-count, 2 * count, n) })
}

/// `[observation]`: the family, hence Y and its neighbour relation.
pub(super) fn family(observation: &ObservationSpec, theta: &Grid, src: &Sources) -> Result<Family> {
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
pub(super) fn parties(spec: &ModelSpec) -> Result<u64> {
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
pub(super) fn loss(spec: &LossSpec, exact: bool, theta: &Grid, outputs: &Grid, src: &Sources) -> Result<Loss> {
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

pub(super) fn check_beta(a: f64, b: f64) -> Result<()> {
    for (name, v) in [("a", a), ("b", b)] {
        if !(v.is_finite() && v > 0.0) {
            bail_field!(format!("parameter.prior.{name}"), "must be a finite number > 0 (got {v})");
        }
    }
    Ok(())
}

pub(super) fn check_dirichlet(alpha: &[f64], d: usize) -> Result<()> {
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

pub(super) fn check_points(points: usize, field: &str) -> Result<()> {
    if points == 0 {
        bail_field!(format!("{field}"), "must be at least 1 (got 0)");
    }
    if points >= MAX_POINTS {
        bail_field!(format!("{field}"), "{points} is too large (at most {})", MAX_POINTS - 1);
    }
    Ok(())
}
