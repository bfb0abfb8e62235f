//! The model file's CSV data read into its spec: every file a spec names is read once (relative to
//! the model file) and written inline in its place, so that a model — and an artifact embedding it —
//! is self-contained; [`Sources`] remembers where each inlined field came from for messages.

use std::collections::HashMap;
use std::path::Path;

use ndarray::Array2;

use super::error::bail_field;
use super::spec::{GridSpec, LossSpec, MatrixSource, ModelSpec, ObservationSpec, OutputGridSpec, PriorSpec};
use super::{csv, ModelError, Result};

/// For messages about inline data: the CSV file (and its field) it was read from, keyed by the
/// inline field (`parameter.grid.values`, `observation.likelihood`, …), and the files in the order
/// read.
#[derive(Default)]
pub(super) struct Sources(pub(super) HashMap<String, String>, pub(super) Vec<std::path::PathBuf>);

impl Sources {
    /// How to name `field` in a message: its file and field if it was read from a file, else itself.
    pub(super) fn name(&self, field: &str) -> String {
        self.0.get(field).cloned().unwrap_or_else(|| field.to_string())
    }

    /// The matrix of an inlined [`MatrixSource`] (file sources are inlined before validation).
    pub(super) fn matrix(&self, m: &MatrixSource, name: &str) -> Result<Array2<f64>> {
        match m {
            MatrixSource::Inline(rows) => csv::matrix_from_rows(rows, name),
            MatrixSource::File(f) => bail_field!(format!("{name}"), "the file {f} was not read (internal error)"),
        }
    }
}

/// Read every CSV file the spec names (relative to `base`) and write its contents inline in its
/// place, so the spec is self-contained: an explicit grid's `file` becomes `values` (one column)
/// or `points`, prior weights' `file` becomes `values`, a table's paths become inline rows and a
/// loss matrix's `file` becomes `values`. A `file` next to an inline key is left for validation to
/// refuse. Returns where each inlined field came from.
pub(super) fn inline_csv_files(spec: &mut ModelSpec, base: Option<&Path>) -> Result<Sources> {
    let mut src = Sources::default();
    let resolve = |rel: &str, file_field: &str| -> Result<std::path::PathBuf> {
        match base {
            Some(base) => Ok(csv::resolve(base, rel)),
            None => Err(ModelError::invalid(
                file_field,
                "names a file, but this model must hold its data inline (a model embedded in a mechanism file is read from that file alone)",
            )),
        }
    };
    let mut origin = |inline_field: String, path: &Path, file_field: &str| {
        src.0.insert(inline_field, format!("{} ({file_field})", path.display()));
        src.1.push(path.to_path_buf());
    };
    let mut grids = vec![(&mut spec.parameter.grid, "parameter.grid")];
    if let OutputGridSpec::Own(g) = &mut spec.output.grid {
        grids.push((g, "output.grid"));
    }
    for (g, field) in grids {
        if let GridSpec::Explicit { values: values @ None, points: points @ None, file } = g {
            if let Some(f) = file.take() {
                let file_field = format!("{field}.file");
                let path = resolve(&f, &file_field)?;
                let m = csv::read_matrix(&path, &file_field)?;
                if m.ncols() == 1 {
                    *values = Some(m.column(0).to_vec());
                    origin(format!("{field}.values"), &path, &file_field);
                } else {
                    *points = Some(csv::rows_of(&m));
                    origin(format!("{field}.points"), &path, &file_field);
                }
            }
        }
    }
    if let PriorSpec::Weights { values: values @ None, file } = &mut spec.parameter.prior {
        if let Some(f) = file.take() {
            let path = resolve(&f, "parameter.prior.file")?;
            *values = Some(csv::read_vector(&path, "parameter.prior.file")?);
            origin("parameter.prior.values".into(), &path, "parameter.prior.file");
        }
    }
    if let ObservationSpec::Table { likelihood, neighbours } = &mut spec.observation {
        for (m, field) in [(likelihood, "observation.likelihood"), (neighbours, "observation.neighbours")] {
            if let MatrixSource::File(f) = m {
                let path = resolve(f, field)?;
                *m = MatrixSource::Inline(csv::rows_of(&csv::read_matrix(&path, field)?));
                origin(field.into(), &path, field);
            }
        }
    }
    if let Some(super::spec::FixedPointSpec { values: values @ None, file }) = &mut spec.constraints.fixed_point {
        if let Some(f) = file.take() {
            let path = resolve(&f, "constraints.fixed_point.file")?;
            *values = Some(csv::read_vector(&path, "constraints.fixed_point.file")?);
            origin("constraints.fixed_point.values".into(), &path, "constraints.fixed_point.file");
        }
    }
    if let LossSpec::Matrix { values: values @ None, file } = &mut spec.loss {
        if let Some(f) = file.take() {
            let path = resolve(&f, "loss.file")?;
            *values = Some(csv::rows_of(&csv::read_matrix(&path, "loss.file")?));
            origin("loss.values".into(), &path, "loss.file");
        }
    }
    Ok(src)
}
