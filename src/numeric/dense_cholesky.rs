//! Dense Cholesky factorisation of the interior point's Schur complement, with the treatment of
//! tiny pivots that interior-point codes use on nearly singular normal equations (Wright, *Modified
//! Cholesky factorizations in interior-point algorithms for linear programming*, SIAM J. Optim.
//! 9, 1999): a pivot that cancels to a tiny fraction of its diagonal marks a direction the
//! constraints no longer determine, and the solution's component along it is set to 0 instead of
//! being amplified by 1/pivot. Where the right-hand side does have a part along such a direction,
//! the factor with those pivots floored ([`DenseCholesky::solve_floored`]) preconditions the
//! conjugate gradients that solve for it ([`super::conjugate_gradients`]).
//!
//! The factorisation is right-looking and blocked twice (Golub & Van Loan, *Matrix Computations*,
//! 4th ed., §4.2.9). Within a block of [`BLOCK`] columns, panel by panel of [`PANEL`]: the panel's
//! diagonal block is factorised, the rows below it are solved against that block, and the block's
//! remaining columns take the panel's update. Then the trailing matrix takes the block's
//! rank-[`BLOCK`] update, which is nearly all of the n³/3 operations. The updates run on every
//! core, through a register-tiled kernel (one column tile packed contiguously and shared by a
//! group of row tiles while it is in cache, as in GotoBLAS) compiled for AVX2 and FMA where the
//! processor has them.

// Index loops over parallel arrays (x, z, s, λ by output and row) read as the formulas do.
#![allow(clippy::needless_range_loop)]
// `!(a <= b)` is meant: it is also true when a is NaN.
#![allow(clippy::neg_cmp_op_on_partial_ord)]

use rayon::prelude::*;

use super::cpu::Avx2Fma;

/// A pivot at most this fraction of its original diagonal is dropped.
const DROP_PIVOT: f64 = 1e-13;

/// Columns per panel: the diagonal block is factorised and the rows below it solved this many
/// columns at a time.
const PANEL: usize = 64;

/// Columns per block: the trailing matrix takes one rank-[`BLOCK`] update per block (its panels
/// update only the block's own columns), so the trailing matrix is read and written n / BLOCK
/// times rather than n / PANEL.
const BLOCK: usize = 256;

/// Rows a solve takes at a time (see [`DenseCholesky::solve`]).
const SOLVE_BLOCK: usize = 256;

/// Multiply-adds a task of a solve takes at least: a task of fewer costs more to hand to another
/// thread than it saves.
const SOLVE_TASK: usize = 1 << 16;

/// Rows and columns of the update's register tile (12 vector accumulators with AVX2).
const TILE_ROWS: usize = 6;
const TILE_COLS: usize = 8;

/// Row tiles that share each packed column tile while it is in the first-level cache.
const TILE_GROUP: usize = 8;

/// The lower-triangular factor, row-major in a full n × n buffer; a dropped pivot is stored as
/// +∞ (dividing by it gives 0).
#[derive(Debug)]
pub(crate) struct DenseCholesky {
    n: usize,
    l: Vec<f64>,
    /// Pivots dropped.
    pub(crate) dropped: usize,
    /// Each dropped pivot (sorted) with the pivot [`DenseCholesky::solve_floored`] gives it:
    /// the drop threshold's, √([`DROP_PIVOT`] · its diagonal).
    floors: Vec<(usize, f64)>,
}

impl DenseCholesky {
    /// Factorise the symmetric matrix whose lower triangle is in `a` (row-major n × n; the upper
    /// triangle is not read), consuming it; the updates use `threads` threads.
    pub(crate) fn factorise(n: usize, mut a: Vec<f64>, threads: usize) -> DenseCholesky {
        debug_assert_eq!(a.len(), n * n);
        let original: Vec<f64> = (0..n).map(|i| a[i * n + i]).collect();
        let threads = threads.max(1);
        let mut dropped = Vec::new();
        let mut packed = Vec::new();
        let mut b0 = 0;
        while b0 < n {
            let b1 = (b0 + BLOCK).min(n);
            let mut p0 = b0;
            while p0 < b1 {
                let p1 = (p0 + PANEL).min(b1);
                factorise_diagonal_block(&mut a, n, p0, p1, &original, &mut dropped);
                if p1 == n {
                    break;
                }
                let (head, trailing) = a.split_at_mut(p1 * n);
                let diagonal_block = &head[p0 * n..];
                // The rows below the panel, solved against its diagonal block.
                for_row_ranges(trailing, n, p1, (p0, p1), threads, |_, rows| {
                    for row in rows.chunks_mut(n) {
                        solve_against_diagonal_block(row, diagonal_block, n, p0, p1);
                    }
                });
                // The block's remaining columns take the panel's update.
                if p1 < b1 {
                    pack_columns(trailing, n, p1, (p0, p1), (p1, b1), &mut packed);
                    let packed = &packed;
                    for_row_ranges(trailing, n, p1, (p1, b1), threads, |first_row, rows| {
                        update(
                            rows,
                            &Update {
                                n,
                                first_row: Some(first_row),
                                depth: (p0, p1),
                                columns: (p1, b1),
                                packed,
                                left: None,
                            },
                        );
                    });
                }
                p0 = p1;
            }
            if b1 == n {
                break;
            }
            // The trailing matrix takes the block's update: A[i, j] −= L[i, block] · L[j, block]
            // for b1 ≤ j ≤ i.
            let trailing = &mut a[b1 * n..];
            pack_columns(trailing, n, b1, (b0, b1), (b1, n), &mut packed);
            let packed = &packed;
            for_row_ranges(trailing, n, b1, (b1, n), threads, |first_row, rows| {
                update(
                    rows,
                    &Update { n, first_row: Some(first_row), depth: (b0, b1), columns: (b1, n), packed, left: None },
                );
            });
            b0 = b1;
        }
        let floors = dropped.iter().map(|&i| (i, (DROP_PIVOT * original[i].abs()).sqrt())).collect();
        DenseCholesky { n, l: a, dropped: dropped.len(), floors }
    }

    /// Solve L y = b in place, row by row (a dropped direction gets 0): the forward half of
    /// [`DenseCholesky::solve`], row by row (the reference the blocked row solves are checked against).
    #[cfg(test)]
    pub(crate) fn solve_lower(&self, b: &mut [f64]) {
        let (n, l) = (self.n, &self.l);
        for i in 0..n {
            let v = (b[i] - dot(&l[i * n..i * n + i], &b[..i])) / l[i * n + i];
            b[i] = if v.is_finite() { v } else { 0.0 };
        }
    }

    /// Solve L Lᵀ x = b in place (dropped directions get 0), a block of [`SOLVE_BLOCK`] rows at
    /// a time: the products of the block's rows with the part already solved (forwards) and the
    /// block's updates of the part still to solve (backwards) are shared over `threads` threads
    /// where they are large enough to pay for it (L is read from memory once a solve, and an
    /// interior point solves a dozen times an iteration); the block itself is solved in order.
    /// The back substitution makes the same operations in the same order as row by row.
    pub(crate) fn solve(&self, b: &mut [f64], threads: usize) {
        self.solve_with_pivots(b, threads, |i| self.l[i * self.n + i]);
    }

    /// Solve with the dropped pivots floored instead of dropped ([`DenseCholesky::floors`]): L Lᵀ
    /// is then positive definite and differs from A only in each dropped pivot's row and column
    /// (by a matrix of rank ≤ 2 each: what the pivot's column would have carried), so that as a
    /// preconditioner of A the conjugate gradients reach A's solution in 2·|dropped| + 1 steps
    /// in exact arithmetic.
    pub(crate) fn solve_floored(&self, b: &mut [f64], threads: usize) {
        self.solve_with_pivots(b, threads, |i| {
            let pivot = self.l[i * self.n + i];
            if pivot.is_finite() {
                return pivot;
            }
            self.floors.binary_search_by_key(&i, |&(j, _)| j).map_or(pivot, |at| self.floors[at].1)
        });
    }

    /// [`DenseCholesky::solve`] with L's diagonal entry i taken as `pivot(i)` (∞ for a dropped one).
    fn solve_with_pivots(&self, b: &mut [f64], threads: usize, pivot: impl Fn(usize) -> f64) {
        let (n, l) = (self.n, &self.l);
        let solved = |v: f64| if v.is_finite() { v } else { 0.0 };
        let mut i0 = 0;
        while i0 < n {
            let i1 = (i0 + SOLVE_BLOCK).min(n);
            let (done, rest) = b.split_at_mut(i0);
            let least = if threads <= 1 { SOLVE_BLOCK } else { SOLVE_TASK.div_ceil(i0.max(1)) };
            rest[..i1 - i0].par_iter_mut().enumerate().with_min_len(least).for_each(|(r, bi)| {
                let row = (i0 + r) * n;
                *bi -= dot(&l[row..row + i0], done);
            });
            for i in i0..i1 {
                let v = (b[i] - dot(&l[i * n + i0..i * n + i], &b[i0..i])) / pivot(i);
                b[i] = solved(v);
            }
            i0 = i1;
        }
        let mut i1 = n;
        while i1 > 0 {
            let i0 = i1.saturating_sub(SOLVE_BLOCK);
            for i in (i0..i1).rev() {
                let v = solved(b[i] / pivot(i));
                b[i] = v;
                for j in i0..i {
                    b[j] -= l[i * n + j] * v;
                }
            }
            // The block's updates of the entries before it, by column ranges: each entry takes
            // the block's rows last first, as row by row.
            let (head, block) = b.split_at_mut(i0);
            let block = &block[..i1 - i0];
            let columns = SOLVE_TASK.div_ceil(i1 - i0);
            let least = if threads <= 1 { head.len().max(1) } else { 1 };
            head.par_chunks_mut(columns).enumerate().with_min_len(least).for_each(|(c, part)| {
                let j0 = c * columns;
                for i in (i0..i1).rev() {
                    let v = block[i - i0];
                    let row = &l[i * n + j0..i * n + j0 + part.len()];
                    part.iter_mut().zip(row).for_each(|(bj, lij)| *bj -= lij * v);
                }
            });
            i1 = i0;
        }
    }
}

/// Factorise the diagonal block of the panel `p0..p1` row by row (the left-looking rule within
/// the panel), dropping cancelled pivots; returns how many were dropped.
fn factorise_diagonal_block(a: &mut [f64], n: usize, p0: usize, p1: usize, original: &[f64], dropped: &mut Vec<usize>) {
    for i in p0..p1 {
        let (done, rest) = a.split_at_mut(i * n);
        let row_i = &mut rest[..n];
        solve_against_diagonal_block(row_i, &done[p0 * n..], n, p0, i);
        let s = row_i[i] - dot(&row_i[p0..i], &row_i[p0..i]);
        if !(s > DROP_PIVOT * original[i].abs()) || !s.is_finite() {
            row_i[i] = f64::INFINITY;
            dropped.push(i);
        } else {
            row_i[i] = s.sqrt();
        }
    }
}

/// The entries p0..end of `row`, solved against the factorised diagonal block of the panel that
/// starts at p0 (`block` holds L's rows p0.., n values each): the forward substitution
/// L\[row, j\] = (A\[row, j\] − Σ_{p0 ≤ t < j} L\[row, t\] L\[j, t\]) / L\[j, j\], 0 where pivot j was
/// dropped.
fn solve_against_diagonal_block(row: &mut [f64], block: &[f64], n: usize, p0: usize, end: usize) {
    for j in p0..end {
        let block_row = &block[(j - p0) * n..(j - p0) * n + j + 1];
        let s = row[j] - dot(&row[p0..j], &block_row[p0..j]);
        let pivot = block_row[j];
        row[j] = if pivot.is_finite() { s / pivot } else { 0.0 };
    }
}

/// Pack the factor's columns `depth` of the rows `columns` (held in `rows` from row `first`)
/// as column tiles: tile c holds, for each t in `depth`, the [`TILE_COLS`] values
/// L[columns.0 + c·TILE_COLS + w, depth.0 + t], zero past the last column.
fn pack_columns(
    rows: &[f64],
    n: usize,
    first: usize,
    depth: (usize, usize),
    columns: (usize, usize),
    packed: &mut Vec<f64>,
) {
    let k = depth.1 - depth.0;
    let tiles = (columns.1 - columns.0).div_ceil(TILE_COLS);
    packed.clear();
    packed.resize(tiles * k * TILE_COLS, 0.0);
    for j in columns.0..columns.1 {
        let (tile, w) = ((j - columns.0) / TILE_COLS, (j - columns.0) % TILE_COLS);
        let row = &rows[(j - first) * n + depth.0..(j - first) * n + depth.1];
        let out = &mut packed[tile * k * TILE_COLS..(tile + 1) * k * TILE_COLS];
        for t in 0..k {
            out[t * TILE_COLS + w] = row[t];
        }
    }
}

/// Run `work(first_row, rows)` on up to `threads` contiguous slices of the rows `first..n`
/// (`rows` holds them, n values each), on rayon's pool, cut so that each slice has about the same
/// share of the work where row i works on the columns `columns` up to its own (j ≤ i): the same
/// for every row below them (a panel's solves and update), growing along them (the trailing
/// triangle).
fn for_row_ranges<F>(rows: &mut [f64], n: usize, first: usize, columns: (usize, usize), threads: usize, work: F)
where
    F: Fn(usize, &mut [f64]) + Sync,
{
    let count = n - first;
    let threads = threads.min(count.div_ceil(TILE_ROWS * TILE_GROUP)).max(1);
    if threads == 1 {
        work(first, rows);
        return;
    }
    let row_cost = |i: usize| (i + 1).clamp(columns.0, columns.1) - columns.0;
    let total: usize = (first..n).map(row_cost).sum();
    // Cut after whole register tiles, each slice's cumulative work reaching its share.
    let mut cuts = vec![0];
    let mut done = 0;
    for r in 0..count {
        done += row_cost(first + r);
        let next = cuts.len();
        if next < threads && done * threads >= total * next && (r + 1) % TILE_ROWS == 0 {
            cuts.push(r + 1);
        }
    }
    cuts.push(count);
    rayon::scope(|scope| {
        let mut rest = rows;
        let work = &work;
        for t in cuts.windows(2) {
            let (mine, tail) = std::mem::take(&mut rest).split_at_mut((t[1] - t[0]) * n);
            rest = tail;
            let start = first + t[0];
            if !mine.is_empty() {
                scope.spawn(move |_| work(start, mine));
            }
        }
    });
}

/// One update of a slice of rows (n values a row): for each of its rows i and each column j in
/// `columns` (with j ≤ i where `first_row` places the slice in a symmetric matrix),
/// A\[i\]\[j\] −= Σ_t B\[i\]\[depth.0 + t\] · L\[j, depth.0 + t\], the second factor from
/// [`pack_columns`] and B the rows themselves (a factorisation's own columns) or `left`.
struct Update<'a> {
    n: usize,
    /// The slice's first row's index in a symmetric matrix of which only the lower triangle is
    /// updated; `None`: every column of `columns`.
    first_row: Option<usize>,
    depth: (usize, usize),
    columns: (usize, usize),
    packed: &'a [f64],
    /// The rows' left factors, row r of the slice in `values[r · stride..]`; `None`: the rows'
    /// own values.
    left: Option<Left<'a>>,
}

/// Left factors held apart from the rows they update.
#[derive(Clone, Copy)]
struct Left<'a> {
    values: &'a [f64],
    stride: usize,
}

/// Apply `job` to `rows`, with the processor's best kernel.
fn update(rows: &mut [f64], job: &Update<'_>) {
    #[cfg(target_arch = "x86_64")]
    {
        if let Some(cpu) = Avx2Fma::detect() {
            /// The kernel compiled for AVX2 and FMA (reachable only here, behind the check).
            ///
            /// # Safety
            ///
            /// The processor must have AVX2 and FMA: `cpu` proves it.
            #[target_feature(enable = "avx2,fma")]
            unsafe fn update_avx2_fma(cpu: Avx2Fma, rows: &mut [f64], job: &Update<'_>) {
                update_kernel(rows, job, Some(cpu));
            }
            // SAFETY: `cpu` was made by `Avx2Fma::detect`, which found both features.
            unsafe { update_avx2_fma(cpu, rows, job) };
            return;
        }
    }
    update_kernel(rows, job, None);
}

/// The update's loops, inlined into each instruction set's entry so that the compiler vectorises
/// them for it; with `fused` (the proof that the processor has them) the tiles use AVX2 fused
/// multiply-adds. Row tiles are taken [`TILE_GROUP`] at a time, and each packed
/// column tile serves the whole group before the next is loaded.
#[inline(always)]
fn update_kernel(rows: &mut [f64], job: &Update<'_>, fused: Option<Avx2Fma>) {
    let Update { n, first_row, depth, columns, packed, left } = *job;
    let k = depth.1 - depth.0;
    let count = rows.len() / n;
    // The group's row values over `depth`, t-major within each tile: lhs[g][t·TILE_ROWS + r].
    let mut lhs = vec![0.0; TILE_GROUP * k * TILE_ROWS];
    let mut g0 = 0;
    while g0 < count {
        let group_rows = (TILE_ROWS * TILE_GROUP).min(count - g0);
        let tiles = group_rows.div_ceil(TILE_ROWS);
        for g in 0..tiles {
            let tile = &mut lhs[g * k * TILE_ROWS..(g + 1) * k * TILE_ROWS];
            for r in 0..TILE_ROWS {
                let row = g0 + g * TILE_ROWS + r;
                if row < g0 + group_rows {
                    let values = match left {
                        None => &rows[row * n + depth.0..row * n + depth.1],
                        Some(Left { values, stride }) => &values[row * stride + depth.0..row * stride + depth.1],
                    };
                    for t in 0..k {
                        tile[t * TILE_ROWS + r] = values[t];
                    }
                } else {
                    for t in 0..k {
                        tile[t * TILE_ROWS + r] = 0.0;
                    }
                }
            }
        }
        // Columns up to the group's last row's diagonal (and inside `columns`); the entries above
        // the diagonal of a tile's first rows are written too, and never read.
        let last = first_row.map_or(columns.1 - 1, |first| (first + g0 + group_rows - 1).min(columns.1 - 1));
        let mut j0 = columns.0;
        while j0 <= last {
            let cols = TILE_COLS.min(columns.1 - j0);
            let column_tile = (j0 - columns.0) / TILE_COLS;
            let b = &packed[column_tile * k * TILE_COLS..(column_tile + 1) * k * TILE_COLS];
            for g in 0..tiles {
                let tile_first = g0 + g * TILE_ROWS;
                let tile_rows = TILE_ROWS.min(g0 + group_rows - tile_first);
                if first_row.is_some_and(|first| first + tile_first + tile_rows - 1 < j0) {
                    // The whole tile lies above the diagonal.
                    continue;
                }
                let a = &lhs[g * k * TILE_ROWS..(g + 1) * k * TILE_ROWS];
                let acc = match fused {
                    Some(cpu) => tile_fused(cpu, a, b, k),
                    None => tile_plain(a, b, k),
                };
                for r in 0..tile_rows {
                    let out = &mut rows[(tile_first + r) * n + j0..(tile_first + r) * n + j0 + cols];
                    for c in 0..cols {
                        out[c] -= acc[r][c];
                    }
                }
            }
            j0 += TILE_COLS;
        }
        g0 += group_rows;
    }
}

/// Σ_t a\[t\]\[r\] · b\[t\]\[c\] for a [`TILE_ROWS`] × [`TILE_COLS`] tile (a and b t-major).
#[inline(always)]
fn tile_plain(a: &[f64], b: &[f64], k: usize) -> [[f64; TILE_COLS]; TILE_ROWS] {
    let mut acc = [[0.0; TILE_COLS]; TILE_ROWS];
    for t in 0..k {
        for r in 0..TILE_ROWS {
            let l = a[t * TILE_ROWS + r];
            for c in 0..TILE_COLS {
                acc[r][c] += l * b[t * TILE_COLS + c];
            }
        }
    }
    acc
}

/// [`tile_plain`] with AVX2 fused multiply-adds, the twelve accumulators held in registers.
#[inline(always)]
fn tile_fused(_cpu: Avx2Fma, a: &[f64], b: &[f64], k: usize) -> [[f64; TILE_COLS]; TILE_ROWS] {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::*;
        assert!(a.len() >= k * TILE_ROWS && b.len() >= k * TILE_COLS);
        // SAFETY: `_cpu` proves the processor has AVX2 and FMA; every load is inside `a` or `b`
        // (asserted above).
        unsafe {
            let (pa, pb) = (a.as_ptr(), b.as_ptr());
            let mut c = [_mm256_setzero_pd(); 2 * TILE_ROWS];
            for t in 0..k {
                let b0 = _mm256_loadu_pd(pb.add(t * TILE_COLS));
                let b1 = _mm256_loadu_pd(pb.add(t * TILE_COLS + 4));
                let row = pa.add(t * TILE_ROWS);
                for r in 0..TILE_ROWS {
                    let l = _mm256_broadcast_sd(&*row.add(r));
                    c[2 * r] = _mm256_fmadd_pd(l, b0, c[2 * r]);
                    c[2 * r + 1] = _mm256_fmadd_pd(l, b1, c[2 * r + 1]);
                }
            }
            let mut acc = [[0.0; TILE_COLS]; TILE_ROWS];
            for r in 0..TILE_ROWS {
                _mm256_storeu_pd(acc[r].as_mut_ptr(), c[2 * r]);
                _mm256_storeu_pd(acc[r].as_mut_ptr().add(4), c[2 * r + 1]);
            }
            acc
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    tile_plain(a, b, k)
}

/// Σ a_i b_i with eight independent accumulators (the loop the compiler vectorises).
/// a · b with eight running sums (vectorised; the sums' order is fixed).
pub(crate) fn dot(a: &[f64], b: &[f64]) -> f64 {
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
        // 20: one partial panel; 203: three panels and a ragged last tile; 521: two full blocks
        // and a ragged third (a column tile and a row tile of one).
        for (n, threads) in [(20, 1), (203, 1), (203, 2), (203, 3), (521, 1), (521, 2)] {
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

    #[test]
    fn the_forward_half_is_the_factor_s_lower_solve() {
        // y = L⁻¹b gives yᵀy = bᵀA⁻¹b, and a full solve is the back substitution of y.
        let n = 203;
        let a = positive_definite(n);
        let f = DenseCholesky::factorise(n, a.clone(), 1);
        let b: Vec<f64> = (0..n).map(|i| (i % 11) as f64 - 4.0).collect();
        let mut y = b.clone();
        f.solve_lower(&mut y);
        let mut x = b.clone();
        f.solve(&mut x, 1);
        let (yy, bx) = (dot(&y, &y), dot(&b, &x));
        assert!((yy - bx).abs() <= 1e-12 * bx.abs(), "yᵀy {yy} against bᵀA⁻¹b {bx}");
        // Row i of L y equals b_i.
        for i in [0, 1, 100, n - 1] {
            let li: f64 = (0..=i).map(|j| f.l[i * n + j] * y[j]).sum();
            assert!((li - b[i]).abs() <= 1e-10, "row {i}: {li} against {}", b[i]);
        }
    }

    #[test]
    fn a_solve_on_several_threads_makes_the_same_floats_as_on_one() {
        // 1100: five blocks of rows, the later ones large enough to be shared.
        let n = 1100;
        let mut a = vec![0.0; n * n];
        for i in 0..n {
            for j in 0..i {
                a[i * n + j] = ((i * 7 + j * 13) % 17) as f64 / (17.0 * n as f64) - 0.5 / n as f64;
            }
            a[i * n + i] = 2.0;
        }
        let f = DenseCholesky::factorise(n, a, 1);
        let rhs: Vec<f64> = (0..n).map(|i| (i % 11) as f64 - 5.0).collect();
        let mut one = rhs.clone();
        f.solve(&mut one, 1);
        for threads in [2, 4] {
            let mut several = rhs.clone();
            f.solve(&mut several, threads);
            assert_eq!(one, several, "{threads} threads");
        }
    }

    fn assert_solves(f: &DenseCholesky, a: &[f64], b: &[f64], tolerance: f64) {
        let n = b.len();
        let mut x = b.to_vec();
        f.solve(&mut x, 2);
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
        f.solve(&mut x, 1);
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
