//! The model's share of the size guard ([`crate::guard::MemoryBudget`]): what a model file asks to
//! be built — grids, prior weights, the observation space and its neighbour list — priced from the
//! spec alone, before any of it is allocated, and the fields of the file that set those sizes.

use super::grid::composition_count;
use super::spec::{GridSpec, ModelSpec, ObservationSpec, OutputGridSpec, PriorSpec};
use super::Model;
use crate::guard::{MemoryBudget, SizeError};

/// What a spec asks validation to build, as floats (no overflow; nothing is built).
#[derive(Debug, Clone, Copy)]
pub(crate) struct SpecSize {
    /// Bytes that validating the model allocates (grids, weights, Y and its neighbours).
    pub bytes: f64,
}

fn grid_points(g: &GridSpec, dim: usize) -> f64 {
    match g {
        GridSpec::Midpoint { points } | GridSpec::PriorSamples { points, .. } => *points as f64,
        GridSpec::Simplex { resolution, .. } => composition_count(*resolution as u64, dim.max(1)),
        GridSpec::Explicit { values: Some(v), .. } => v.len() as f64,
        GridSpec::Explicit { points: Some(p), .. } => p.len() as f64,
        GridSpec::Explicit { .. } | GridSpec::Exact => 0.0,
    }
}

/// The sizes of `spec` (CSV data already inline).
pub(crate) fn spec_size(spec: &ModelSpec) -> SpecSize {
    let dim = match &spec.observation {
        ObservationSpec::Multinomial { categories, .. } => *categories,
        ObservationSpec::Table { .. } => match &spec.parameter.grid {
            GridSpec::Explicit { points: Some(p), .. } => p.first().map_or(1, Vec::len),
            _ => 1,
        },
        _ => 1,
    };
    let theta = grid_points(&spec.parameter.grid, dim);
    let outputs = match &spec.output.grid {
        OutputGridSpec::Parameter => super::validate::constrained_default_range(spec)
            .map_or(theta, |(first, last, _)| (last - first) as f64 + 1.0),
        OutputGridSpec::Own(g) => grid_points(g, dim),
    };
    let y_bytes = match &spec.observation {
        ObservationSpec::Binomial { trials } => {
            let n = *trials as f64 + 1.0;
            16.0 * n
        }
        ObservationSpec::Poisson { records, cap } => {
            let n = *records as f64 * *cap as f64 + 1.0;
            16.0 * n
        }
        ObservationSpec::Multinomial { categories, records } => {
            let n = composition_count(*records, *categories);
            let d = *categories as f64;
            // The count vectors (twice: a list and the grid), an index of them, and the edges:
            // each a composition of K − 1 and a pair of categories.
            let edges = composition_count(records.saturating_sub(1), *categories) * d * (d - 1.0) / 2.0;
            n * (2.0 * 8.0 * d + 24.0 + 48.0) + 16.0 * edges
        }
        ObservationSpec::Table { .. } => 0.0, // read into memory already (bounded reads)
    };
    let prior = match &spec.parameter.prior {
        PriorSpec::Weights { values: Some(v), .. } => v.len() as f64,
        _ => theta,
    };
    // Each grid as points (and a copy while it is built), the prior weights.
    let bytes = 16.0 * dim as f64 * (theta + outputs) + 8.0 * prior + y_bytes;
    SpecSize { bytes }
}

/// Refuse a spec whose validation would not fit in `budget`, before anything is allocated.
pub(crate) fn check_spec(spec: &ModelSpec, budget: MemoryBudget) -> Result<(), SizeError> {
    let size = spec_size(spec);
    if size.bytes > budget.in_bytes() as f64 {
        return Err(SizeError {
            origin: None,
            needed_bytes: size.bytes.min(u128::MAX as f64) as u128,
            available_bytes: budget.in_bytes(),
            fields: spec_size_fields(spec).into(),
            route: None,
        });
    }
    Ok(())
}

/// The fields of `model`'s file that set the LP's size, in its own terms ([`spec_size_fields`]).
pub(crate) fn size_fields(model: &Model) -> String {
    spec_size_fields(model.spec())
}

/// The fields of a model file that set its sizes, in its own terms: `observation.trials` for
/// a binomial, `observation.records` and `observation.cap` for a Poisson count,
/// `observation.records` and `observation.categories` for a multinomial, the parameter grid's
/// `points` or `resolution`, and the output grid's when it has its own.
pub(crate) fn spec_size_fields(spec: &ModelSpec) -> String {
    let mut fields: Vec<&str> = match &spec.observation {
        ObservationSpec::Binomial { .. } => vec!["observation.trials"],
        ObservationSpec::Poisson { .. } => vec!["observation.records", "observation.cap"],
        ObservationSpec::Multinomial { .. } => vec!["observation.records", "observation.categories"],
        ObservationSpec::Table { .. } => vec!["observation.likelihood (its columns)"],
    };
    let grid = |g: &GridSpec, prefix: &'static str| -> &'static str {
        match (g, prefix) {
            (GridSpec::Simplex { .. }, "parameter") => "parameter.grid.resolution",
            (GridSpec::Simplex { .. }, _) => "output.grid.resolution",
            (GridSpec::Explicit { .. }, "parameter") => "parameter.grid (its points)",
            (GridSpec::Explicit { .. }, _) => "output.grid (its points)",
            (_, "parameter") => "parameter.grid.points",
            _ => "output.grid.points",
        }
    };
    if !matches!(spec.parameter.grid, GridSpec::Exact) {
        fields.push(grid(&spec.parameter.grid, "parameter"));
    }
    if let OutputGridSpec::Own(g) = &spec.output.grid {
        fields.push(grid(g, "output"));
    }
    match fields.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        _ => fields.join(""),
    }
}
