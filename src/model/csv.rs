//! Numeric CSV files referenced from model files (likelihood tables, neighbour lists, grids,
//! weights, loss matrices). Format: numbers separated by commas; blank lines and lines starting
//! with `#` are ignored; no header. Every error is one sentence naming the file and the model field.

use std::path::{Path, PathBuf};

use ndarray::Array2;

use super::error::{bail_csv, bail_field};
use super::ModelError;

type Result<T> = std::result::Result<T, ModelError>;

/// A CSV path from a model file, resolved against the model file's directory.
pub(crate) fn resolve(base: &Path, rel: &str) -> PathBuf {
    base.join(rel)
}

/// Read a numeric matrix (all rows of equal length, at least one row). `field` is the model key
/// that named the file.
pub(crate) fn read_matrix(path: &Path, field: &str) -> Result<Array2<f64>> {
    let text = match crate::guard::read::read_text(path, crate::guard::read::CSV_FILE_BYTES) {
        Ok(t) => t,
        Err(reason) => bail_csv!(path.display(), field, "cannot read the file: {reason}",),
    };
    let mut rows: Vec<Vec<f64>> = Vec::new();
    let mut first_line = 0;
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let mut row = Vec::new();
        for (c, tok) in line.split(',').enumerate() {
            let tok = tok.trim();
            match tok.parse::<f64>() {
                Ok(v) if v.is_finite() => row.push(v),
                _ => bail_csv!(
                    path.display(),
                    field,
                    "line {}, column {} is not a finite number (the file is not a numeric CSV)",
                    n + 1,
                    c + 1
                ),
            }
        }
        if let Some(r0) = rows.first() {
            if r0.len() != row.len() {
                bail_csv!(
                    path.display(),
                    field,
                    "line {} has {} values but line {} has {}; every row must have the same length",
                    n + 1,
                    row.len(),
                    first_line + 1,
                    r0.len()
                );
            }
        } else {
            first_line = n;
        }
        rows.push(row);
    }
    if rows.is_empty() {
        bail_csv!(path.display(), field, "the file has no data rows",);
    }
    let (r, c) = (rows.len(), rows[0].len());
    Ok(Array2::from_shape_vec((r, c), rows.into_iter().flatten().collect()).expect("rows of equal length"))
}

/// Require `m` to be `rows × cols`; `origin` names the data (a file and field, or a field) and
/// `what` says what rows and columns mean.
pub(crate) fn check_shape(m: &Array2<f64>, origin: &str, rows: usize, cols: usize, what: &str) -> Result<()> {
    if m.dim() != (rows, cols) {
        bail_field!(origin, "expected {rows} rows × {cols} columns ({what}), found {} × {}", m.nrows(), m.ncols());
    }
    Ok(())
}

/// An inline matrix (rows of numbers from a model file) with the checks [`read_matrix`] applies:
/// at least one row, rows of equal non-zero length, finite numbers. `origin` names it.
pub(crate) fn matrix_from_rows(rows: &[Vec<f64>], origin: &str) -> Result<Array2<f64>> {
    let Some(r0) = rows.first() else {
        bail_field!(origin, "the matrix has no rows");
    };
    if r0.is_empty() {
        bail_field!(origin, "row 1 is empty");
    }
    for (n, r) in rows.iter().enumerate() {
        if r.len() != r0.len() {
            bail_field!(
                origin,
                "row {} has {} values but row 1 has {}; every row must have the same length",
                n + 1,
                r.len(),
                r0.len()
            );
        }
        if let Some(c) = r.iter().position(|v| !v.is_finite()) {
            bail_field!(origin, "row {}, column {}: {} is not a finite number", n + 1, c + 1, r[c]);
        }
    }
    Ok(Array2::from_shape_vec((rows.len(), r0.len()), rows.concat()).expect("rows of equal length"))
}

/// The rows of a matrix, for writing it inline.
pub(crate) fn rows_of(m: &Array2<f64>) -> Vec<Vec<f64>> {
    m.rows().into_iter().map(|r| r.to_vec()).collect()
}

/// Read a vector: one value per line, or a single row.
pub(crate) fn read_vector(path: &Path, field: &str) -> Result<Vec<f64>> {
    let m = read_matrix(path, field)?;
    if m.ncols() == 1 || m.nrows() == 1 {
        Ok(m.iter().copied().collect())
    } else {
        bail_csv!(
            path.display(),
            field,
            "expected one value per line (or one row), found {} × {}",
            m.nrows(),
            m.ncols()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_comments_and_reports_bad_shapes() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("m.csv");
        std::fs::write(&p, "# header comment\n1, 2\n\n3,4\n").unwrap();
        let m = read_matrix(&p, "loss.file").unwrap();
        assert_eq!(m, ndarray::array![[1.0, 2.0], [3.0, 4.0]]);
        let e = check_shape(&m, "m.csv (loss.file)", 3, 2, "θ by θ̃").unwrap_err().to_string();
        assert!(e.contains("m.csv (loss.file): expected 3 rows × 2 columns"), "{e}");
        assert_eq!(matrix_from_rows(&rows_of(&m), "loss.values").unwrap(), m);
        let e = matrix_from_rows(&[vec![1.0, 2.0], vec![3.0]], "loss.values").unwrap_err().to_string();
        assert!(e.contains("loss.values: row 2 has 1 values but row 1 has 2"), "{e}");
        let e = matrix_from_rows(&[vec![1.0, f64::INFINITY]], "loss.values").unwrap_err().to_string();
        assert!(e.contains("row 1, column 2: inf is not a finite number"), "{e}");
        std::fs::write(&p, "1,2\n3\n").unwrap();
        let e = read_matrix(&p, "loss.file").unwrap_err().to_string();
        assert!(e.contains("line 2 has 1 values but line 1 has 2"), "{e}");
        std::fs::write(&p, "1,x\n").unwrap();
        let e = read_matrix(&p, "f").unwrap_err().to_string();
        assert!(e.contains("line 1, column 2 is not a finite number") && !e.contains("\"x\""), "{e}");
    }
}
