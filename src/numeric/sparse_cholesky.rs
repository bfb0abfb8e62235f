//! Sparse Cholesky factorisation L Lᵀ = P A Pᵀ of the symmetric positive definite matrices that
//! share one pattern (the neighbour graph plus the diagonal), for the block interior point: the
//! ordering (AMD) and the pattern of L are computed once, each numeric factorisation reuses them.
//!
//! The numeric factorisation is the up-looking algorithm (Davis, *Direct Methods for Sparse Linear
//! Systems*, 2006, §4.2, `cs_chol`): row k of L is a sparse triangular solve over the rows its
//! elimination-tree reach names. The solves work on blocks of [`WIDTH`] right-hand sides stored
//! row by row, so every entry of L is loaded once per block and multiplies [`WIDTH`] contiguous
//! values (the loop the compiler vectorises).

// Index loops over parallel arrays (x, z, s, λ by output and row) read as the formulas do.
#![allow(clippy::needless_range_loop)]

use std::borrow::Cow;

use super::double_double::Real;

/// The starting relative floor of a pivot where the caller gives a lower bound (see `factorise`;
/// the interior point raises it where the linear algebra gives out). Measured on
/// the interior point's last iterations (asymmetric multinomial K = 40): 1e-14 and 1e-12 let the
/// factor's entries grow until the Schur complement overflowed at a gap of 6.7e-8; 1e-10 kept
/// it finite to convergence (gap 9.1e-12, 41 iterations); 1e-8 perturbs the system more than
/// refinement recovers.
pub(crate) const PIVOT_FLOOR: f64 = 1e-10;

/// Right-hand sides per block in [`SparseCholesky::solve_block_lower`]. Forming the Schur
/// complement of the 3-option poll of 100 (|Y| = 5151) took 9.4 s an iteration with 8, 6.3 s with
/// 16, 4.9 s with 32 and 5.8 s with 64 (the block, |Y| × 64 values, no longer stays in cache).
pub(crate) const WIDTH: usize = 32;

/// The symbolic analysis of one pattern: the ordering and the structure of L.
#[derive(Debug)]
pub(crate) struct Symbolic {
    n: usize,
    /// perm\[new\] = old.
    perm: Vec<usize>,
    /// Lower triangle of P A Pᵀ (with the diagonal) by rows: for new row k, its entries (new
    /// column j ≤ k, increasing; the position of the value in the caller's value array).
    lower_ptr: Vec<usize>,
    lower_col: Vec<usize>,
    lower_src: Vec<usize>,
    /// L by columns, diagonal first; rows below the diagonal in increasing order.
    l_ptr: Vec<usize>,
    l_row: Vec<usize>,
    /// For each row k of L, the columns j < k of its nonzeros, increasing.
    row_ptr: Vec<usize>,
    row_col: Vec<usize>,
    /// For each row k and each entry of its row pattern, the position in `l_row` of L\[k, j\].
    row_slot: Vec<usize>,
}

/// A numeric factorisation on a [`Symbolic`] pattern.
#[derive(Debug)]
pub(crate) struct SparseCholesky<'s> {
    sym: &'s Symbolic,
    l_val: Cow<'s, [f64]>,
}

/// The matrix was not numerically positive definite at `column` (in the factor's order).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct NotPositiveDefinite {
    pub(crate) column: usize,
}

impl Symbolic {
    /// Analyse the symmetric pattern given by its upper and lower triangle: `col_ptr`/`row_idx` in
    /// CSC with both triangles and the diagonal present, rows sorted within each column.
    pub(crate) fn analyse(n: usize, col_ptr: &[usize], row_idx: &[usize]) -> Symbolic {
        let perm = amd_order(n, col_ptr, row_idx);
        let mut inv = vec![0; n];
        for (new, &old) in perm.iter().enumerate() {
            inv[old] = new;
        }
        // Lower triangle of the permuted matrix, by rows, remembering where each value lives.
        let mut entries: Vec<(usize, usize, usize)> = Vec::with_capacity(col_ptr[n]);
        for old_col in 0..n {
            for (p, &old_row) in row_idx.iter().enumerate().take(col_ptr[old_col + 1]).skip(col_ptr[old_col]) {
                let (r, c) = (inv[old_row], inv[old_col]);
                if r >= c {
                    entries.push((r, c, p));
                }
            }
        }
        entries.sort_unstable();
        let mut lower_ptr = vec![0; n + 1];
        for &(r, _, _) in &entries {
            lower_ptr[r + 1] += 1;
        }
        for k in 0..n {
            lower_ptr[k + 1] += lower_ptr[k];
        }
        let lower_col: Vec<usize> = entries.iter().map(|e| e.1).collect();
        let lower_src: Vec<usize> = entries.iter().map(|e| e.2).collect();

        // Elimination tree and the row patterns of L (Davis §4.1: ereach over the upper triangle,
        // i.e. over the lower triangle's transpose — for row k, the entries A[k, j] with j < k).
        let upper_by_row: Vec<Vec<usize>> = (0..n)
            .map(|k| lower_col[lower_ptr[k]..lower_ptr[k + 1]].iter().copied().filter(|&j| j < k).collect())
            .collect();
        let mut parent = vec![usize::MAX; n];
        let mut ancestor = vec![usize::MAX; n];
        for k in 0..n {
            for &j0 in &upper_by_row[k] {
                let mut j = j0;
                while j != usize::MAX && j < k {
                    let next = ancestor[j];
                    ancestor[j] = k;
                    if next == usize::MAX {
                        parent[j] = k;
                        break;
                    }
                    j = next;
                }
            }
        }
        let mut mark = vec![usize::MAX; n];
        let mut row_ptr = vec![0; n + 1];
        let mut row_col = Vec::new();
        let mut col_count = vec![1usize; n];
        for k in 0..n {
            mark[k] = k;
            let start = row_col.len();
            for &j0 in &upper_by_row[k] {
                let mut j = j0;
                while mark[j] != k {
                    row_col.push(j);
                    col_count[j] += 1;
                    mark[j] = k;
                    j = parent[j];
                }
            }
            row_col[start..].sort_unstable();
            row_ptr[k + 1] = row_col.len();
        }
        row_col.shrink_to_fit();
        let mut l_ptr = vec![0; n + 1];
        for j in 0..n {
            l_ptr[j + 1] = l_ptr[j] + col_count[j];
        }
        let mut l_row = vec![0; l_ptr[n]];
        let mut next = l_ptr.clone();
        for j in 0..n {
            l_row[next[j]] = j;
            next[j] += 1;
        }
        let mut row_slot = vec![0; row_col.len()];
        for k in 0..n {
            for p in row_ptr[k]..row_ptr[k + 1] {
                let j = row_col[p];
                l_row[next[j]] = k;
                row_slot[p] = next[j];
                next[j] += 1;
            }
        }
        Symbolic { n, perm, lower_ptr, lower_col, lower_src, l_ptr, l_row, row_ptr, row_col, row_slot }
    }

    /// Order of the matrix.
    pub(crate) fn n(&self) -> usize {
        self.n
    }

    /// Bytes the analysis holds (its arrays' capacities): about 24 a nonzero of L and 16 an
    /// entry of the lower triangle, three times a factor's values.
    pub(crate) fn bytes(&self) -> u128 {
        [
            &self.perm,
            &self.lower_ptr,
            &self.lower_col,
            &self.lower_src,
            &self.l_ptr,
            &self.l_row,
            &self.row_ptr,
            &self.row_col,
            &self.row_slot,
        ]
        .iter()
        .map(|v| (v.capacity() * std::mem::size_of::<usize>()) as u128)
        .sum()
    }

    /// The analysis with only what the solves read (the order and L's pattern): the maps a
    /// factorisation reads are freed, about two thirds of [`Symbolic::bytes`]. For a factor solved
    /// with many times and never factorised again (the interior point's end game keeps one an
    /// output, [`crate::solve`]'s structured solver).
    pub(crate) fn for_solves(self) -> Symbolic {
        Symbolic {
            lower_ptr: Vec::new(),
            lower_col: Vec::new(),
            lower_src: Vec::new(),
            row_ptr: Vec::new(),
            row_col: Vec::new(),
            row_slot: Vec::new(),
            ..self
        }
    }

    /// perm\[new\] = old.
    pub(crate) fn perm(&self) -> &[usize] {
        &self.perm
    }

    /// Entries of L (the diagonal included).
    pub(crate) fn factor_nonzeros(&self) -> usize {
        self.l_ptr[self.n]
    }

    /// Factorise the matrix whose values are `values` (indexed like the `row_idx` the pattern was
    /// analysed from), in the precision of `R` (f64, or double-double where the matrix's entries
    /// span more than f64 holds; the factor is rounded to f64 either way).
    ///
    /// `min_pivot`: a lower bound on every pivot that the caller knows to hold in exact arithmetic
    /// (for I + B with B positive semidefinite every pivot is ≥ 1); a pivot that rounding pulls
    /// below it is raised to it, or to `relative_floor` of its diagonal where that is larger.
    /// With 0, a pivot ≤ 0 is an error.
    pub(crate) fn factorise<R: Real>(
        &self,
        values: &[R],
        min_pivot: f64,
        relative_floor: f64,
    ) -> Result<SparseCholesky<'_>, NotPositiveDefinite> {
        let n = self.n;
        assert_eq!(self.lower_ptr.len(), n + 1, "an analysis kept for solves only is not factorised again");
        let mut l_val = vec![R::default(); self.l_ptr[n]];
        let mut x = vec![R::default(); n];
        // cursor[j]: one past the last entry of column j filled so far.
        let mut cursor: Vec<usize> = (0..n).map(|j| self.l_ptr[j] + 1).collect();
        for k in 0..n {
            // Scatter row k of the lower triangle, then solve for row k of L.
            let mut diagonal = R::default();
            let mut original = 0.0;
            for p in self.lower_ptr[k]..self.lower_ptr[k + 1] {
                let (j, v) = (self.lower_col[p], values[self.lower_src[p]]);
                if j == k {
                    diagonal = v;
                    original = v.to_f64().abs();
                } else {
                    x[j] = v;
                }
            }
            for p in self.row_ptr[k]..self.row_ptr[k + 1] {
                let j = self.row_col[p];
                let lkj = x[j].div(l_val[self.l_ptr[j]]);
                x[j] = R::default();
                for q in self.l_ptr[j] + 1..cursor[j] {
                    let r = self.l_row[q];
                    x[r] = x[r].sub(l_val[q].mul(lkj));
                }
                diagonal = diagonal.sub(lkj.mul(lkj));
                l_val[self.row_slot[p]] = lkj;
                cursor[j] += 1;
            }
            // A pivot that cancels below `relative_floor` of its diagonal is raised to that level:
            // growth stays bounded, and the caller refines against the true system.
            let floor = min_pivot.max(relative_floor * original);
            // (Like f64::max: a NaN pivot becomes the floor too.)
            let mut pivot = diagonal.to_f64();
            if min_pivot > 0.0 && (pivot.is_nan() || pivot < floor) {
                diagonal = R::from_f64(floor);
                pivot = floor;
            }
            if pivot.is_nan() || pivot <= 0.0 {
                return Err(NotPositiveDefinite { column: k });
            }
            l_val[self.l_ptr[k]] = diagonal.sqrt();
        }
        Ok(SparseCholesky { sym: self, l_val: Cow::Owned(l_val.into_iter().map(R::to_f64).collect()) })
    }
}

impl<'s> SparseCholesky<'s> {
    /// The factor whose values (in `sym`'s order, as [`SparseCholesky::into_values`] gave them)
    /// are borrowed from `l_val`: a factor kept beside the analysis it belongs to.
    pub(crate) fn borrowed(sym: &'s Symbolic, l_val: &'s [f64]) -> SparseCholesky<'s> {
        debug_assert_eq!(l_val.len(), sym.factor_nonzeros());
        SparseCholesky { sym, l_val: Cow::Borrowed(l_val) }
    }

    /// The factor's values, to keep apart from its analysis.
    pub(crate) fn into_values(self) -> Vec<f64> {
        self.l_val.into_owned()
    }

    /// The fill-reducing order: `perm[new] = old`.
    pub(crate) fn perm(&self) -> &[usize] {
        self.sym.perm()
    }

    /// Entries of L.
    pub(crate) fn nonzeros(&self) -> usize {
        self.l_val.len()
    }
}

impl SparseCholesky<'_> {
    /// Solve (P A Pᵀ) X = B in place for a block of [`WIDTH`] right-hand sides in the factor's
    /// order, stored row by row (`b[i * WIDTH + w]`), where rows before `first` of B are zero, and
    /// return rows `first..` of X only (the rows above are left unspecified).
    ///
    /// Both halves are cut to what that needs: the forward solve starts at `first` and passes
    /// over the columns its right-hand sides have not reached (for unit vectors, all but the
    /// elimination-tree path above them), and the back substitution, which fills row j from the
    /// rows below it, stops at `first`. Forming the inverse's lower triangle this way costs about
    /// half of full solves.
    pub(crate) fn solve_block_lower(&self, b: &mut [f64], first: usize) {
        debug_assert_eq!(b.len(), self.sym.n * WIDTH);
        #[cfg(target_arch = "x86_64")]
        {
            use super::cpu::{Avx2Fma, Avx512Fma};
            /// The loops compiled for 512-bit vectors (reachable only here, behind the check):
            /// each row of a block (32 values) is four registers instead of eight. Forming the
            /// Schur complement of the asymmetric multinomial K = 60 took 12.3 s over the solve
            /// against 14.4 s with AVX2, on identical iterates (each value's arithmetic is the
            /// same fused multiply-adds in the same order).
            ///
            /// # Safety
            ///
            /// The processor must have AVX-512F, AVX2 and FMA: `_cpu` proves it.
            #[target_feature(enable = "avx512f,avx2,fma")]
            unsafe fn avx512(_cpu: Avx512Fma, factor: &SparseCholesky, b: &mut [f64], first: usize) {
                factor.solve_block_lower_kernel::<true>(b, first);
            }
            /// The loops compiled for AVX2 and FMA (reachable only here, behind the check).
            ///
            /// # Safety
            ///
            /// The processor must have AVX2 and FMA: `_cpu` proves it.
            #[target_feature(enable = "avx2,fma")]
            unsafe fn avx2_fma(_cpu: Avx2Fma, factor: &SparseCholesky, b: &mut [f64], first: usize) {
                factor.solve_block_lower_kernel::<true>(b, first);
            }
            if let Some(cpu) = Avx512Fma::detect() {
                // SAFETY: `cpu` was made by `Avx512Fma::detect`, which found the features.
                unsafe { avx512(cpu, self, b, first) };
                return;
            }
            if let Some(cpu) = Avx2Fma::detect() {
                // SAFETY: `cpu` was made by `Avx2Fma::detect`, which found both features.
                unsafe { avx2_fma(cpu, self, b, first) };
                return;
            }
        }
        self.solve_block_lower_kernel::<false>(b, first);
    }

    /// The loops of [`Self::solve_block_lower`], inlined into each instruction set's entry so
    /// that the compiler vectorises them for it; `FUSED` uses fused multiply-adds (only where the
    /// processor has them: elsewhere `mul_add` is a library call).
    #[inline(always)]
    fn solve_block_lower_kernel<const FUSED: bool>(&self, b: &mut [f64], first: usize) {
        let (n, s) = (self.sym.n, self.sym);
        for j in first..n {
            let row_j = &mut b[j * WIDTH..j * WIDTH + WIDTH];
            if row_j.iter().all(|&v| v == 0.0) {
                continue;
            }
            let d = self.l_val[s.l_ptr[j]];
            let mut yj = [0.0; WIDTH];
            for w in 0..WIDTH {
                yj[w] = row_j[w] / d;
                row_j[w] = yj[w];
            }
            for q in s.l_ptr[j] + 1..s.l_ptr[j + 1] {
                let (l, r) = (-self.l_val[q], s.l_row[q]);
                let row: &mut [f64; WIDTH] = (&mut b[r * WIDTH..r * WIDTH + WIDTH]).try_into().expect("a row");
                for w in 0..WIDTH {
                    row[w] = if FUSED { l.mul_add(yj[w], row[w]) } else { row[w] + l * yj[w] };
                }
            }
        }
        for j in (first..n).rev() {
            let mut acc = [0.0; WIDTH];
            acc.copy_from_slice(&b[j * WIDTH..j * WIDTH + WIDTH]);
            for q in s.l_ptr[j] + 1..s.l_ptr[j + 1] {
                let (l, r) = (-self.l_val[q], s.l_row[q]);
                let row: &[f64; WIDTH] = (&b[r * WIDTH..r * WIDTH + WIDTH]).try_into().expect("a row");
                for w in 0..WIDTH {
                    acc[w] = if FUSED { l.mul_add(row[w], acc[w]) } else { acc[w] + l * row[w] };
                }
            }
            let d = self.l_val[s.l_ptr[j]];
            for w in 0..WIDTH {
                b[j * WIDTH + w] = acc[w] / d;
            }
        }
    }

    /// Solve A x = b for one right-hand side in the caller's (original) order.
    pub(crate) fn solve(&self, b: &[f64]) -> Vec<f64> {
        let s = self.sym;
        let mut y: Vec<f64> = s.perm.iter().map(|&old| b[old]).collect();
        for j in 0..s.n {
            y[j] /= self.l_val[s.l_ptr[j]];
            let yj = y[j];
            for q in s.l_ptr[j] + 1..s.l_ptr[j + 1] {
                y[s.l_row[q]] -= self.l_val[q] * yj;
            }
        }
        for j in (0..s.n).rev() {
            let mut acc = y[j];
            for q in s.l_ptr[j] + 1..s.l_ptr[j + 1] {
                acc -= self.l_val[q] * y[s.l_row[q]];
            }
            y[j] = acc / self.l_val[s.l_ptr[j]];
        }
        let mut x = vec![0.0; s.n];
        for (new, &old) in s.perm.iter().enumerate() {
            x[old] = y[new];
        }
        x
    }
}

/// Approximate minimum degree ordering (Amestoy, Davis & Duff 1996) of a symmetric pattern;
/// the identity where AMD refuses the pattern (it cannot for a valid CSC with a diagonal).
fn amd_order(n: usize, col_ptr: &[usize], row_idx: &[usize]) -> Vec<usize> {
    let control = amd::Control::default();
    let ap: Vec<i64> = col_ptr.iter().map(|&p| p as i64).collect();
    let ai: Vec<i64> = row_idx.iter().map(|&i| i as i64).collect();
    match amd::order::<i64>(n as i64, &ap, &ai, &control) {
        Ok((p, _, _)) => p.into_iter().map(|i| i as usize).collect(),
        Err(_) => (0..n).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A random SPD matrix on a random graph's pattern: L Lᵀ x = b is checked against A x.
    #[test]
    fn solves_match_the_matrix_they_factorise() {
        use rand::{RngExt, SeedableRng};
        let mut rng = rand::rngs::StdRng::seed_from_u64(7);
        let n = 60;
        let mut adj = vec![vec![false; n]; n];
        for _ in 0..150 {
            let (a, b) = (rng.random_range(0..n), rng.random_range(0..n));
            if a != b {
                adj[a][b] = true;
                adj[b][a] = true;
            }
        }
        let mut col_ptr = vec![0];
        let mut row_idx = Vec::new();
        let mut values = Vec::new();
        for j in 0..n {
            for i in 0..n {
                if i == j || adj[i][j] {
                    row_idx.push(i);
                    let off = if i == j { 0.0 } else { -(((i * 7 + j * 7) % 5) as f64) / 10.0 - 0.1 };
                    values.push(off);
                }
            }
            col_ptr.push(row_idx.len());
        }
        // Diagonal dominance makes it SPD.
        for j in 0..n {
            let sum: f64 = (col_ptr[j]..col_ptr[j + 1]).map(|p| values[p].abs()).sum();
            let d = (col_ptr[j]..col_ptr[j + 1]).find(|&p| row_idx[p] == j).unwrap();
            values[d] = sum + 1.0 + (j % 3) as f64;
        }
        let sym = Symbolic::analyse(n, &col_ptr, &row_idx);
        let f = sym.factorise(&values, 0.0, PIVOT_FLOOR).unwrap();
        let b: Vec<f64> = (0..n).map(|i| (i as f64).sin()).collect();
        let x = f.solve(&b);
        let mut ax = vec![0.0; n];
        for j in 0..n {
            for p in col_ptr[j]..col_ptr[j + 1] {
                ax[row_idx[p]] += values[p] * x[j];
            }
        }
        for i in 0..n {
            assert!((ax[i] - b[i]).abs() < 1e-10, "row {i}: {} vs {}", ax[i], b[i]);
        }
        // The block solve agrees with the single one on permuted unit vectors, from `first` down.
        let first = 5;
        let mut block = vec![0.0; n * WIDTH];
        for w in 0..WIDTH {
            block[(first + w) * WIDTH + w] = 1.0;
        }
        f.solve_block_lower(&mut block, first);
        for w in 0..WIDTH {
            let mut e = vec![0.0; n];
            e[sym.perm()[first + w]] = 1.0;
            let x = f.solve(&e);
            for new in first..n {
                assert!((block[new * WIDTH + w] - x[sym.perm()[new]]).abs() < 1e-12);
            }
        }
        // Kept for solves only: the same solves, bit for bit, in less than half the bytes.
        let values_of_l = f.into_values();
        let full = sym.bytes();
        let kept = sym.for_solves();
        assert!(kept.bytes() * 2 < full, "{} of {full} bytes", kept.bytes());
        let again = SparseCholesky::borrowed(&kept, &values_of_l).solve(&b);
        assert!(again.iter().zip(&x).all(|(a, b)| a.to_bits() == b.to_bits()));
    }

    /// I + t·(a chain's Laplacian), the shape of a block whose DP rows are all tight: its inverse
    /// maps the all-ones vector (the Laplacian's null direction) to itself. At t = 1e10 the f64
    /// factor keeps that direction only to 3e-7 (the entries 1 + 2t lose the identity's last
    /// digits, and the elimination cancels the rest); factorised in double-double and rounded to
    /// f64, to 1e-15. (From t ≈ 1e12 on, the f64 solves with the rounded factor lose it too.)
    #[test]
    fn double_double_keeps_the_direction_stiff_rows_leave_free() {
        use crate::numeric::double_double::DoubleDouble;
        let (n, t): (usize, f64) = (40, 1e10);
        let mut col_ptr = vec![0];
        let mut row_idx = Vec::new();
        // Entries as (1 + degree·t, −t): the identity part kept apart until the precision is chosen.
        let mut entries: Vec<(f64, f64)> = Vec::new();
        for j in 0..n {
            for i in j.saturating_sub(1)..(j + 2).min(n) {
                row_idx.push(i);
                let degree = if j == 0 || j == n - 1 { 1.0 } else { 2.0 };
                entries.push(if i == j { (1.0, degree * t) } else { (0.0, -t) });
            }
            col_ptr.push(row_idx.len());
        }
        let sym = Symbolic::analyse(n, &col_ptr, &row_idx);
        let ones = vec![1.0; n];
        let error = |x: Vec<f64>| x.iter().map(|v| (v - 1.0).abs()).fold(0.0, f64::max);

        let in_f64: Vec<f64> = entries.iter().map(|&(a, b)| a + b).collect();
        let f64_error = match sym.factorise(&in_f64, 1.0, PIVOT_FLOOR) {
            Ok(f) => error(f.solve(&ones)),
            Err(_) => f64::INFINITY,
        };
        assert!(f64_error.is_nan() || f64_error >= 1e-8, "f64 was expected to lose the direction: error {f64_error}");

        let in_dd: Vec<DoubleDouble> =
            entries.iter().map(|&(a, b)| DoubleDouble::from_f64(a).add(DoubleDouble::from_f64(b))).collect();
        let f = sym.factorise(&in_dd, 1.0, PIVOT_FLOOR).unwrap();
        let dd_error = error(f.solve(&ones));
        assert!(dd_error < 1e-12, "double-double: error {dd_error}");
    }
}
