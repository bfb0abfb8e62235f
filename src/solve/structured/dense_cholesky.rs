//! Dense Cholesky factorisation of the interior point's Schur complement, with the treatment of
//! tiny pivots that interior-point codes use on nearly singular normal equations (Wright, *Modified
//! Cholesky factorizations in interior-point algorithms for linear programming*, SIAM J. Optim.
//! 9, 1999): a pivot that cancels to a tiny fraction of its diagonal marks a direction the
//! constraints no longer determine, and the solution's component along it is set to 0 instead of
//! being amplified by 1/pivot.
//!
//! The factorisation is right-looking by panels of [`PANEL`] columns (Golub & Van Loan,
//! *Matrix Computations*, 4th ed., §4.2.9): the panel's diagonal block is factorised, the rows
//! below it are solved against that block, and the trailing matrix takes the panel's rank-[`PANEL`]
//! update, which is nearly all of the n³/3 operations. That update runs on every core, through a
//! register-blocked kernel compiled for AVX2 and FMA where the processor has them.

// Index loops over parallel arrays (x, z, s, λ by output and row) read as the formulas do.
#![allow(clippy::needless_range_loop)]
// `!(a <= b)` is meant: it is also true when a is NaN.
#![allow(clippy::neg_cmp_op_on_partial_ord)]

/// A pivot at most this fraction of its original diagonal is dropped.
const DROP_PIVOT: f64 = 1e-13;

/// Columns per panel.
const PANEL: usize = 64;

/// Rows and columns of the trailing update's register tile.
const TILE_ROWS: usize = 4;
const TILE_COLS: usize = 8;

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
    /// triangle is not read), consuming it; the trailing updates use `threads` threads.
    pub(crate) fn factorise(n: usize, mut a: Vec<f64>, threads: usize) -> DenseCholesky {
        debug_assert_eq!(a.len(), n * n);
        let original: Vec<f64> = (0..n).map(|i| a[i * n + i]).collect();
        let threads = threads.max(1);
        let mut dropped = 0;
        // The panel's columns of the rows below it, transposed: packed[t * n + j] = L[j, p0 + t].
        let mut packed = vec![0.0; PANEL * n];
        let mut p0 = 0;
        while p0 < n {
            let p1 = (p0 + PANEL).min(n);
            // The diagonal block, row by row (the left-looking rule within the panel).
            for i in p0..p1 {
                let (done, rest) = a.split_at_mut(i * n);
                let row_i = &mut rest[..n];
                for j in p0..i {
                    let s = row_i[j] - dot(&row_i[p0..j], &done[j * n + p0..j * n + j]);
                    let pivot = done[j * n + j];
                    row_i[j] = if pivot.is_finite() { s / pivot } else { 0.0 };
                }
                let s = row_i[i] - dot(&row_i[p0..i], &row_i[p0..i]);
                if !(s > DROP_PIVOT * original[i].abs()) || !s.is_finite() {
                    row_i[i] = f64::INFINITY;
                    dropped += 1;
                } else {
                    row_i[i] = s.sqrt();
                }
            }
            if p1 == n {
                break;
            }
            let (head, trailing) = a.split_at_mut(p1 * n);
            let diagonal_block = &head[p0 * n..];
            // The rows below the panel, solved against its diagonal block.
            for_row_ranges(trailing, n, p1, threads, |_, rows| {
                for row in rows.chunks_mut(n) {
                    for j in p0..p1 {
                        let s = row[j] - dot(&row[p0..j], &diagonal_block[(j - p0) * n + p0..(j - p0) * n + j]);
                        let pivot = diagonal_block[(j - p0) * n + j];
                        row[j] = if pivot.is_finite() { s / pivot } else { 0.0 };
                    }
                }
            });
            for (r, row) in trailing.chunks(n).enumerate() {
                for t in 0..p1 - p0 {
                    packed[t * n + p1 + r] = row[p0 + t];
                }
            }
            // The trailing matrix's update: A[i, j] −= L[i, panel] · L[j, panel] for p1 ≤ j ≤ i.
            let packed = &packed;
            for_row_ranges(trailing, n, p1, threads, |first_row, rows| {
                update(rows, n, first_row, p0, p1, packed);
            });
            p0 = p1;
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

/// Run `work(first_row, rows)` on `threads` contiguous slices of the rows `first..n` (`rows`
/// holds them, n values each), cut so that each slice has about the same share of a lower
/// triangle's work (row i costs ∝ i − first).
fn for_row_ranges<F>(rows: &mut [f64], n: usize, first: usize, threads: usize, work: F)
where
    F: Fn(usize, &mut [f64]) + Sync,
{
    let count = n - first;
    let threads = threads.min(count.div_ceil(TILE_ROWS)).max(1);
    if threads == 1 {
        work(first, rows);
        return;
    }
    // Row r's cumulative work ∝ r²: the t-th cut at count·√(t / threads).
    let mut cuts: Vec<usize> = (0..=threads)
        .map(|t| ((count as f64) * (t as f64 / threads as f64).sqrt()).round() as usize)
        .map(|r| r.div_ceil(TILE_ROWS) * TILE_ROWS)
        .map(|r| r.min(count))
        .collect();
    cuts[threads] = count;
    std::thread::scope(|scope| {
        let mut rest = rows;
        let work = &work;
        for t in 0..threads {
            let (mine, tail) = rest.split_at_mut((cuts[t + 1] - cuts[t]) * n);
            rest = tail;
            let start = first + cuts[t];
            if !mine.is_empty() {
                scope.spawn(move || work(start, mine));
            }
        }
    });
}

/// The trailing update for the rows `first_row..` held in `rows`: for each row i and column
/// p1 ≤ j ≤ i, rows[i][j] −= Σ_t rows[i][p0 + t] · packed[t·n + j].
fn update(rows: &mut [f64], n: usize, first_row: usize, p0: usize, p1: usize, packed: &[f64]) {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma") {
            // SAFETY: the processor has AVX2 and FMA (checked just above).
            unsafe { update_avx2_fma(rows, n, first_row, p0, p1, packed) };
            return;
        }
    }
    update_kernel::<false>(rows, n, first_row, p0, p1, packed);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn update_avx2_fma(rows: &mut [f64], n: usize, first_row: usize, p0: usize, p1: usize, packed: &[f64]) {
    update_kernel::<true>(rows, n, first_row, p0, p1, packed);
}

/// The update's loops, inlined into each instruction set's entry so that the compiler vectorises
/// them for it; `FUSED` uses fused multiply-adds (only where the processor has them: elsewhere
/// `mul_add` is a library call).
#[inline(always)]
fn update_kernel<const FUSED: bool>(
    rows: &mut [f64],
    n: usize,
    first_row: usize,
    p0: usize,
    p1: usize,
    packed: &[f64],
) {
    let width = p1 - p0;
    let count = rows.len() / n;
    let mut r0 = 0;
    while r0 < count {
        let tile_rows = TILE_ROWS.min(count - r0);
        // Row i's panel values, copied so that the tile's rows can be written below.
        let mut lhs = [[0.0; PANEL]; TILE_ROWS];
        for r in 0..tile_rows {
            lhs[r][..width].copy_from_slice(&rows[(r0 + r) * n + p0..(r0 + r) * n + p1]);
        }
        // Columns up to the tile's last row's diagonal; the entries above the diagonal of its
        // first rows are written too, and never read.
        let last = first_row + r0 + tile_rows - 1;
        let mut j0 = p1;
        while j0 <= last {
            let cols = TILE_COLS.min(last + 1 - j0);
            let mut acc = [[0.0; TILE_COLS]; TILE_ROWS];
            if cols == TILE_COLS {
                for t in 0..width {
                    let column: &[f64; TILE_COLS] =
                        packed[t * n + j0..t * n + j0 + TILE_COLS].try_into().expect("a full tile");
                    for r in 0..TILE_ROWS {
                        let l = lhs[r][t];
                        for c in 0..TILE_COLS {
                            acc[r][c] = if FUSED { l.mul_add(column[c], acc[r][c]) } else { acc[r][c] + l * column[c] };
                        }
                    }
                }
            } else {
                for t in 0..width {
                    for r in 0..TILE_ROWS {
                        let l = lhs[r][t];
                        for c in 0..cols {
                            acc[r][c] += l * packed[t * n + j0 + c];
                        }
                    }
                }
            }
            for r in 0..tile_rows {
                let out = &mut rows[(r0 + r) * n + j0..(r0 + r) * n + j0 + cols];
                for c in 0..cols {
                    out[c] -= acc[r][c];
                }
            }
            j0 += cols;
        }
        r0 += tile_rows;
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

    /// A = B Bᵀ + I, row-major.
    fn positive_definite(n: usize) -> Vec<f64> {
        let b: Vec<f64> = (0..n * n).map(|i| ((i * 37 % 11) as f64 - 5.0) / 7.0).collect();
        let mut a = vec![0.0; n * n];
        for i in 0..n {
            for j in 0..n {
                a[i * n + j] =
                    (0..n).map(|k| b[i * n + k] * b[j * n + k]).sum::<f64>() + if i == j { 1.0 } else { 0.0 };
            }
        }
        a
    }

    #[test]
    fn solves_positive_definite_systems_across_panels_and_threads() {
        // 20: one partial panel; 203: three panels and a ragged last tile.
        for (n, threads) in [(20, 1), (203, 1), (203, 2), (203, 3)] {
            let a = positive_definite(n);
            // Garbage above the diagonal must not be read.
            let mut lower = a.clone();
            for i in 0..n {
                for j in i + 1..n {
                    lower[i * n + j] = f64::NAN;
                }
            }
            let f = DenseCholesky::factorise(n, lower, threads);
            assert_eq!(f.dropped, 0);
            let rhs: Vec<f64> = (0..n).map(|i| i as f64 - 3.0).collect();
            assert_solves(&f, &a, &rhs, 1e-9);
        }
    }

    /// `f` solves A x = b to `tolerance` relative to max |b|, row by row.
    fn assert_solves(f: &DenseCholesky, a: &[f64], b: &[f64], tolerance: f64) {
        let n = b.len();
        let mut x = b.to_vec();
        f.solve(&mut x);
        let scale = b.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        for i in 0..n {
            let ax: f64 = (0..n).map(|j| a[i * n + j] * x[j]).sum();
            assert!((ax - b[i]).abs() < tolerance * scale, "n {n}, row {i}: {ax} vs {}", b[i]);
        }
    }

    #[test]
    fn drops_the_directions_a_singular_matrix_leaves_undetermined() {
        // A rank-one matrix u uᵀ: every pivot after the first cancels and is dropped.
        let u: Vec<f64> = (0..4).map(|i| 1.0 + i as f64).collect();
        let a: Vec<f64> = (0..16).map(|p| u[p / 4] * u[p % 4]).collect();
        let f = DenseCholesky::factorise(4, a, 1);
        assert_eq!(f.dropped, 3);
        let mut x = u.clone();
        f.solve(&mut x);
        // The least-norm-like answer along u: u uᵀ x = u.
        let ux: f64 = u.iter().zip(&x).map(|(a, b)| a * b).sum();
        assert!((ux - 1.0).abs() < 1e-12);
        // Rank 70 of 140 across panels: u_r u_rᵀ summed over 70 independent vectors.
        let (n, rank) = (140, 70);
        let mut state = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 11) as f64 / (1u64 << 53) as f64 - 0.5
        };
        let vectors: Vec<Vec<f64>> = (0..rank).map(|_| (0..n).map(|_| next()).collect()).collect();
        let mut a = vec![0.0; n * n];
        for v in &vectors {
            for i in 0..n {
                for j in 0..n {
                    a[i * n + j] += v[i] * v[j];
                }
            }
        }
        let f = DenseCholesky::factorise(n, a.clone(), 2);
        // Rounding may leave a cancelled pivot just above the threshold.
        assert!((n - rank - 2..=n - rank).contains(&f.dropped), "dropped {}", f.dropped);
        // A consistent system is still solved.
        let y: Vec<f64> = (0..n).map(|_| next()).collect();
        let b: Vec<f64> = (0..n).map(|i| (0..n).map(|j| a[i * n + j] * y[j]).sum()).collect();
        assert_solves(&f, &a, &b, 1e-6);
    }
}
