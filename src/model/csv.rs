//! Numeric CSV files referenced from model files (likelihood tables, neighbour lists, grids,
//! weights, loss matrices). Format: numbers separated by commas; blank lines and lines starting
//! with `#` are ignored; no header. Every error is one sentence naming the file and the model field.

use std::path::{Path, PathBuf};

use ndarray::Array2;

use crate::{bail_input, Result};

/// A CSV path from a model file, resolved against the model file's directory.
pub fn resolve(base: &Path, rel: &str) -> PathBuf {
    base.join(rel)
}

/// Read a numeric matrix (all rows of equal length, at least one row). `field` is the model key
/// that named the file.
pub fn read_matrix(path: &Path, field: &str) -> Result<Array2<f64>> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) => bail_input!("{} ({field}): cannot read the file: {e}", path.display()),
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
                _ => bail_input!(
                    "{} ({field}): line {}, column {}: \"{tok}\" is not a finite number",
                    path.display(),
                    n + 1,
                    c + 1
                ),
            }
        }
        if let Some(r0) = rows.first() {
            if r0.len() != row.len() {
                bail_input!(
                    "{} ({field}): line {} has {} values but line {} has {}; every row must have the same length",
                    path.display(),
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
        bail_input!("{} ({field}): the file has no data rows", path.display());
    }
    let (r, c) = (rows.len(), rows[0].len());
    Ok(Array2::from_shape_vec((r, c), rows.into_iter().flatten().collect()).expect("rows of equal length"))
}

/// Read a matrix and require its shape to be `rows × cols`; `what` says what rows and columns mean.
pub fn read_matrix_shaped(path: &Path, field: &str, rows: usize, cols: usize, what: &str) -> Result<Array2<f64>> {
    let m = read_matrix(path, field)?;
    if m.dim() != (rows, cols) {
        bail_input!(
            "{} ({field}): expected {rows} rows × {cols} columns ({what}), found {} × {}",
            path.display(),
            m.nrows(),
            m.ncols()
        );
    }
    Ok(m)
}

/// Read a vector: one value per line, or a single row.
pub fn read_vector(path: &Path, field: &str) -> Result<Vec<f64>> {
    let m = read_matrix(path, field)?;
    if m.ncols() == 1 || m.nrows() == 1 {
        Ok(m.iter().copied().collect())
    } else {
        bail_input!(
            "{} ({field}): expected one value per line (or one row), found {} × {}",
            path.display(),
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
        let e = read_matrix_shaped(&p, "loss.file", 3, 2, "θ by θ̃").unwrap_err().to_string();
        assert!(e.contains("m.csv (loss.file): expected 3 rows × 2 columns"), "{e}");
        std::fs::write(&p, "1,2\n3\n").unwrap();
        let e = read_matrix(&p, "loss.file").unwrap_err().to_string();
        assert!(e.contains("line 2 has 1 values but line 1 has 2"), "{e}");
        std::fs::write(&p, "1,x\n").unwrap();
        let e = read_matrix(&p, "f").unwrap_err().to_string();
        assert!(e.contains("line 1, column 2: \"x\" is not a finite number"), "{e}");
    }
}
