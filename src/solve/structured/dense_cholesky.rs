//! Dense Cholesky factorisation of the interior point's Schur complement, with the treatment of
//! tiny pivots that interior-point codes use on nearly singular normal equations (Wright, *Modified
//! Cholesky factorizations in interior-point algorithms for linear programming*, SIAM J. Optim.
//! 9, 1999): a pivot that cancels to a tiny fraction of its diagonal marks a direction the
//! constraints no longer determine, and the solution's component along it is set to 0 instead of
//! being amplified by 1/pivot.

// Index loops over parallel arrays (x, z, s, λ by output and row) read as the formulas do.
#![allow(clippy::needless_range_loop)]
// `!(a <= b)` is meant: it is also true when a is NaN.
#![allow(clippy::neg_cmp_op_on_partial_ord)]

/// A pivot at most this fraction of its original diagonal is dropped.
const DROP_PIVOT: f64 = 1e-13;

/// The lower-triangular factor, row-major in a full n × n buffer; a dropped pivot is stored as
/// +∞ (dividing by it gives 0).
#[derive(Debug)]
pub(crate) struct DenseCholesky {
    n: usize,
    l: Vec<f64>,
    /// Pivots dropped.
    pub(crate) dropped: usize,
}

impl DenseCholesky {
    /// Factorise the symmetric matrix whose lower triangle is in `a` (row-major n × n; the upper
    /// triangle is not read), consuming it.
    pub(crate) fn factorise(n: usize, mut a: Vec<f64>) -> DenseCholesky {
        debug_assert_eq!(a.len(), n * n);
        let mut dropped = 0;
        for i in 0..n {
            let (done, rest) = a.split_at_mut(i * n);
            let row_i = &mut rest[..n];
            for j in 0..i {
                let row_j = &done[j * n..j * n + j];
                let s = row_i[j] - dot(&row_i[..j], row_j);
                let pivot = done[j * n + j];
                row_i[j] = if pivot.is_finite() { s / pivot } else { 0.0 };
            }
            let diagonal = row_i[i];
            let s = diagonal - dot(&row_i[..i], &row_i[..i]);
            if !(s > DROP_PIVOT * diagonal.abs()) || !s.is_finite() {
                row_i[i] = f64::INFINITY;
                dropped += 1;
            } else {
                row_i[i] = s.sqrt();
            }
        }
        DenseCholesky { n, l: a, dropped }
    }

    /// Solve L Lᵀ x = b in place (dropped directions get 0).
    pub(crate) fn solve(&self, b: &mut [f64]) {
        let n = self.n;
        for i in 0..n {
            let row = &self.l[i * n..i * n + i];
            let v = (b[i] - dot(row, &b[..i])) / self.l[i * n + i];
            b[i] = if v.is_finite() { v } else { 0.0 };
        }
        for i in (0..n).rev() {
            let v = b[i] / self.l[i * n + i];
            let v = if v.is_finite() { v } else { 0.0 };
            b[i] = v;
            for (j, bj) in b.iter_mut().enumerate().take(i) {
                *bj -= self.l[i * n + j] * v;
            }
        }
    }
}

/// Σ a_i b_i with eight independent accumulators (the loop the compiler vectorises).
fn dot(a: &[f64], b: &[f64]) -> f64 {
    let mut acc = [0.0; 8];
    let chunks = a.len() / 8;
    for c in 0..chunks {
        let (x, y) = (&a[c * 8..c * 8 + 8], &b[c * 8..c * 8 + 8]);
        for w in 0..8 {
            acc[w] += x[w] * y[w];
        }
    }
    let mut sum = acc.iter().sum::<f64>();
    for i in chunks * 8..a.len() {
        sum += a[i] * b[i];
    }
    sum
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn solves_a_positive_definite_system_and_drops_a_dependent_direction() {
        let n = 20;
        // A = B Bᵀ + I with B random-ish.
        let b: Vec<f64> = (0..n * n).map(|i| ((i * 37 % 11) as f64 - 5.0) / 7.0).collect();
        let mut a = vec![0.0; n * n];
        for i in 0..n {
            for j in 0..n {
                a[i * n + j] =
                    (0..n).map(|k| b[i * n + k] * b[j * n + k]).sum::<f64>() + if i == j { 1.0 } else { 0.0 };
            }
        }
        let f = DenseCholesky::factorise(n, a.clone());
        assert_eq!(f.dropped, 0);
        let rhs: Vec<f64> = (0..n).map(|i| i as f64 - 3.0).collect();
        let mut x = rhs.clone();
        f.solve(&mut x);
        for i in 0..n {
            let ax: f64 = (0..n).map(|j| a[i * n + j] * x[j]).sum();
            assert!((ax - rhs[i]).abs() < 1e-9);
        }
        // A rank-one matrix u uᵀ: every pivot after the first cancels and is dropped.
        let u: Vec<f64> = (0..4).map(|i| 1.0 + i as f64).collect();
        let a: Vec<f64> = (0..16).map(|p| u[p / 4] * u[p % 4]).collect();
        let f = DenseCholesky::factorise(4, a);
        assert_eq!(f.dropped, 3);
        let mut x = u.clone();
        f.solve(&mut x);
        // The least-norm-like answer along u: u uᵀ x = u.
        let ux: f64 = u.iter().zip(&x).map(|(a, b)| a * b).sum();
        assert!((ux - 1.0).abs() < 1e-12);
    }
}
