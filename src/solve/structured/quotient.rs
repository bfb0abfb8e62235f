//! One output's block in a basis that separates what its stiff rows fix from what they leave
//! free: its share of the Schur complement and its Newton solves in the interior point's end game.
//!
//! A tight DP row (a, b) ties x_a = e^ε x_b, and its weight in the block M = I + D Gᵀ W G D grows
//! without bound: f64 keeps the identity under it only to weight · 1e-16, so the directions the
//! stiff rows T leave free (which decide the column sums) are lost in M's factor. The stiff rows
//! join the observations into classes along which x is proportional (x_a ∝ e^{ε h(a)}, h an
//! integer potential; a union–find). In the basis
//!
//! ```text
//! Q = [Ñ | Z],   Ñ: one column a class, ∝ e^{ε h(a)} / d_a on it (unit length),
//!                Z: one column a row i of a spanning forest F of the stiff rows, the right
//!                   inverse of G_F D on its tree (G_F D z_i = e_i; ∝ e^{ε h} / d on the subtree
//!                   beyond row i),
//! ```
//!
//! F's trees grow breadth-first from each class's centre ([`shallow_forest`]): Q then holds as few
//! entries as the class allows, and A couples each row of F with its ancestors only.
//!
//! G_T D Ñ = 0, so A = Qᵀ M Q keeps the stiff rows' weights in the Z block (row i of the forest
//! adds exactly w_i e_i e_iᵀ, each redundant row of a cycle that agrees the forest's rows along
//! its cycle), and the free directions are coordinates of their own: M⁻¹ = Q A⁻¹ Qᵀ exactly, and
//! A's sparse factor loses nothing to the weights. A class whose rows contradict each other (a
//! cycle of ratios ≠ 1) holds x = 0: it gets no Ñ column, its rows' columns are Y = D G_Fᵀ plus
//! one closing row, and its Newton solves go back to the augmented system's Woodbury form.
//!
//! The Schur complement takes the output's share D M⁻¹ D column by column from block solves with
//! A's factor; the Newton solves take x = D Q α from A and the stiff rows' multipliers from the
//! forest-sized W̃ = W_F + Eᵀ W_C E ([`Quotient::newton_solve`]), with no dense matrix on the stiff
//! rows at all. Measured on the 3-way poll of 100 (|Y| = 5 151, 66 outputs), whose end game took
//! each output's dense Woodbury matrix C to 1 700–3 000 rows: certified at 2.6e-8 in 10.5 min,
//! against 28 min through C, on the same path of iterates (`docs/design/structured-solver.md`).

use crate::numeric::double_double::{DoubleDouble, Real};
use crate::numeric::sparse_cholesky::{SparseCholesky, Symbolic};

/// The DP rows (a, b): x_a ≤ `rho` x_b, and the stiff ones among them (indices, sorted).
pub(super) struct Tight<'a> {
    pub rows: &'a [(usize, usize)],
    pub stiff: &'a [usize],
    pub rho: f64,
}

/// The block's CSC pattern (both triangles) and the Schur complement's order of the
/// observations (`perm[new] = old`).
pub(super) struct BlockPattern<'a> {
    pub col_ptr: &'a [usize],
    pub row_idx: &'a [usize],
    pub perm: &'a [usize],
}

/// One output's basis Q and A = Qᵀ M Q factorised.
pub(super) struct Quotient {
    /// Q's rows scaled by D, in the Schur complement's order: for observation r, its entries
    /// (column of A in its factor's order, d_r Q\[r, col\]) at `row_ptr[r]..row_ptr[r + 1]`.
    row_ptr: Vec<usize>,
    row_entries: Vec<(u32, f64)>,
    symbolic: Symbolic,
    /// A's factor's values (rounded to f64).
    factor: Vec<f64>,
    /// The Newton solves through the basis, where no class contradicts itself.
    solves: Option<Solves>,
}

/// Why a basis was not built.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum NotBuilt {
    /// A is not numerically positive definite.
    NotPositiveDefinite,
    /// It would take more than its room.
    OutgrowsItsRoom,
}

/// What the Newton solves through the basis keep (see [`Quotient::newton_solve`]).
struct Solves {
    /// Q by rows in the caller's order of the observations: (A's column, value); the classes' Ñ
    /// are columns 0..`classes`, the forest's Z the rest.
    q_rows: Vec<Vec<(usize, f64)>>,
    d: Vec<f64>,
    /// M_L's values on the block's pattern (the stiff rows weighing 0).
    ml: Vec<f64>,
    classes: usize,
    /// The stiff rows (sorted), each with its row of S_T = G_T D Q_Z (columns of the forest) and,
    /// for a row of the forest, its column.
    stiff: Vec<usize>,
    s_rows: Vec<Vec<(usize, f64)>>,
    forest: Vec<Option<usize>>,
    /// W̃ = W_F + Eᵀ W_C E on the forest's rows, factorised.
    w_tilde: Symbolic,
    w_tilde_factor: Vec<f64>,
}

impl Quotient {
    /// The basis of one output's stiff rows (`tight`; `weights` the W of all its rows) and
    /// A = Qᵀ M Q from M_L's values `block` on the block's pattern (the stiff rows weighing 0),
    /// with `d` the output's D (the caller's order), factorised in double-double where `block`
    /// is. Q's columns on the forest reach as deep as its trees and A's entries grow with the
    /// product of the depths: what the basis would take is counted before it is built, and a
    /// basis that would take more than `room` bytes is not.
    pub(super) fn new<T: Real>(
        tight: Tight<'_>,
        weights: &[f64],
        d: &[f64],
        block: &[T],
        pattern: BlockPattern<'_>,
        room: u128,
    ) -> Result<Quotient, NotBuilt> {
        let Tight { rows, stiff, rho } = tight;
        let BlockPattern { col_ptr, row_idx, perm } = pattern;
        let n = d.len();
        let mut classes = Classes::new(n);
        // The rows that join classes, and one closing row a contradicted class (Y).
        let mut joining: Vec<usize> = Vec::new();
        for &e in stiff {
            let (a, b) = rows[e];
            // Tight: x_a = e^ε x_b, so h(a) = h(b) + 1.
            match classes.join(a, b, 1) {
                Joined::Forest | Joined::FirstContradiction => joining.push(e),
                Joined::Agrees | Joined::Redundant => {}
            }
        }
        // Ñ's columns: classes numbered in order of their first observation.
        let mut column_of_root = vec![u32::MAX; n];
        let mut class = vec![u32::MAX; n];
        let mut count = 0u32;
        let mut log_entry = vec![0.0; n];
        let mut potential = vec![0i64; n];
        for a in 0..n {
            let (root, h) = classes.find(a);
            potential[a] = h;
            if classes.contradicted[root] {
                continue;
            }
            if column_of_root[root] == u32::MAX {
                column_of_root[root] = count;
                count += 1;
            }
            class[a] = column_of_root[root];
            log_entry[a] = h as f64 * rho.ln() - d[a].ln();
        }
        let q = count as usize;
        // Rows of the forest (Z) where a class's ratios agree, its joining rows (Y) where not.
        let agrees = |a: usize| class[a] != u32::MAX;
        let (spanning, roots) = shallow_forest(rows, stiff, &agrees, &joining, n);
        debug_assert_eq!(q + spanning.len(), n, "the classes and the spanning rows make a basis");
        // ñ ∝ e^{ε h} / d on each class, scaled to unit length (its largest entry first brought
        // to 1, so that long classes neither overflow nor underflow).
        let mut largest = vec![f64::NEG_INFINITY; q];
        for a in (0..n).filter(|&a| class[a] != u32::MAX) {
            let c = class[a] as usize;
            largest[c] = largest[c].max(log_entry[a]);
        }
        let mut entry = vec![0.0; n];
        let mut length = vec![0.0; q];
        for a in (0..n).filter(|&a| class[a] != u32::MAX) {
            let c = class[a] as usize;
            entry[a] = (log_entry[a] - largest[c]).exp();
            length[c] += entry[a] * entry[a];
        }
        for a in (0..n).filter(|&a| class[a] != u32::MAX) {
            entry[a] /= length[class[a] as usize].sqrt();
        }
        // Q by rows (caller's order): Ñ's entry, then the spanning rows' columns q + i. In a
        // class whose ratios agree, row i's column is z_i, the right inverse of the tree's rows
        // (G_F D z_i = e_i, zero at the class's first observation): ∝ e^{ε h}/d on the subtree
        // beyond row i. In a contradicted class it is y_i = D g_i (d_a at a, −ρ d_b at b).
        let mut q_rows: Vec<Vec<(usize, f64)>> = (0..n)
            .map(|a| if class[a] == u32::MAX { Vec::new() } else { vec![(class[a] as usize, entry[a])] })
            .collect();
        let mut tree: Vec<Vec<(usize, usize)>> = vec![Vec::new(); n];
        let mut is_y = vec![false; spanning.len()];
        for (i, &e) in spanning.iter().enumerate() {
            let (a, b) = rows[e];
            if class[a] != u32::MAX {
                tree[a].push((b, i));
                tree[b].push((a, i));
            } else {
                is_y[i] = true;
                q_rows[a].push((q + i, d[a]));
                q_rows[b].push((q + i, -rho * d[b]));
            }
        }
        let mut visited = vec![false; n];
        let mut preorder: Vec<usize> = Vec::with_capacity(n);
        let (mut start, mut end) = (vec![0usize; n], vec![0usize; n]);
        let mut child = vec![usize::MAX; spanning.len()];
        for root in roots.into_iter().chain(0..n) {
            if visited[root] || tree[root].is_empty() {
                continue;
            }
            visited[root] = true;
            start[root] = preorder.len();
            preorder.push(root);
            let mut stack = vec![(root, 0usize)];
            while let Some(top) = stack.last_mut() {
                let node = top.0;
                if top.1 < tree[node].len() {
                    let (next, i) = tree[node][top.1];
                    top.1 += 1;
                    if !visited[next] {
                        visited[next] = true;
                        child[i] = next;
                        start[next] = preorder.len();
                        preorder.push(next);
                        stack.push((next, 0));
                    }
                } else {
                    end[node] = preorder.len();
                    stack.pop();
                }
            }
        }
        let z_entries: u128 =
            (0..spanning.len()).filter(|&i| !is_y[i]).map(|i| (end[child[i]] - start[child[i]]) as u128).sum();
        // Q by rows, and by columns while A is formed.
        let q_bytes = 32 * (q_rows.iter().map(|r| r.len() as u128).sum::<u128>() + z_entries);
        if q_bytes > room {
            return Err(NotBuilt::OutgrowsItsRoom);
        }
        for (i, &e) in spanning.iter().enumerate().filter(|&(i, _)| !is_y[i]) {
            let (a, b) = rows[e];
            let c = child[i];
            // d_a z[a] = 1 where the subtree hangs at a; −ρ d_b z[b] = 1 where at b.
            let (sign, h0) = if c == a { (1.0, potential[a]) } else { (-1.0, potential[b] + 1) };
            for &node in &preorder[start[c]..end[c]] {
                let value = sign * ((potential[node] - h0) as f64 * rho.ln() - d[node].ln()).exp();
                q_rows[node].push((q + i, value));
            }
        }
        // A = Qᵀ M_L Q + Σ_{t ∈ T} w_t (Qᵀ D g_t)(Qᵀ D g_t)ᵀ.
        // Qᵀ D g_t has no Ñ part (G_T D Ñ = 0), and no part on a z_i whose subtree holds both
        // ends of t (the tree's ratios agree with t's): those are left out rather than computed
        // as a difference that rounding would leave at weight · 1e-16. So row i of the tree
        // gives exactly e_i, and another stiff row the tree's rows along its cycle.
        let forest_index: std::collections::HashMap<usize, usize> =
            spanning.iter().enumerate().map(|(i, &e)| (e, i)).collect();
        let mut s_rows: Vec<Vec<(usize, f64)>> = Vec::new();
        let mut forest: Vec<Option<usize>> = Vec::new();
        for &t in stiff {
            let (a, b) = rows[t];
            // Whether column i is a tree's z_i whose subtree (an interval of the preorder) holds
            // `node` as well.
            let spans = |i: usize, node: usize| {
                i >= q && !is_y[i - q] && visited[node] && {
                    let c = child[i - q];
                    (start[c]..end[c]).contains(&start[node])
                }
            };
            let mut u: Vec<(usize, f64)> = Vec::new();
            let own = forest_index.get(&t).copied().filter(|&i| !is_y[i]);
            if let Some(i) = own {
                u.push((q + i, 1.0));
            } else {
                for &(i, qa) in q_rows[a].iter().filter(|e| e.0 >= q) {
                    if !spans(i, b) {
                        u.push((i, d[a] * qa));
                    }
                }
                for &(i, qb) in q_rows[b].iter().filter(|e| e.0 >= q) {
                    if !spans(i, a) {
                        u.push((i, -rho * d[b] * qb));
                    }
                }
            }
            s_rows.push(u.iter().map(|&(i, c)| (i - q, c)).collect());
            forest.push(own);
        }
        let any_contradicted = is_y.iter().any(|&y| y);
        // A column by column (Gustavson): Q by columns, and each stiff row's (Qᵀ D g_t) by the
        // columns it reaches; a dense accumulator and the list of rows it touched.
        let mut q_cols: Vec<Vec<(usize, f64)>> = vec![Vec::new(); n];
        for (b, row) in q_rows.iter().enumerate() {
            for &(j, qb) in row {
                q_cols[j].push((b, qb));
            }
        }
        let mut stiff_cols: Vec<Vec<(usize, f64)>> = vec![Vec::new(); n];
        for (ti, row) in s_rows.iter().enumerate() {
            for &(j, uj) in row {
                stiff_cols[q + j].push((ti, uj));
            }
        }
        let mut a_ptr = vec![0usize; n + 1];
        let mut a_idx: Vec<usize> = Vec::new();
        let mut values: Vec<DoubleDouble> = Vec::new();
        let mut accumulator = vec![T::default(); n];
        let mut touched_mark = vec![false; n];
        let mut touched: Vec<usize> = Vec::new();
        fn touch<T: Real>(i: usize, add: T, (accumulator, mark, touched): (&mut [T], &mut [bool], &mut Vec<usize>)) {
            if mark[i] {
                accumulator[i] = accumulator[i].add(add);
            } else {
                mark[i] = true;
                touched.push(i);
                accumulator[i] = add;
            }
        }
        for j in 0..n {
            for &(b, qb) in &q_cols[j] {
                for pos in col_ptr[b]..col_ptr[b + 1] {
                    let (a, v) = (row_idx[pos], block[pos]);
                    for &(i, qa) in &q_rows[a] {
                        touch(i, v.mul(T::from_f64(qa * qb)), (&mut accumulator, &mut touched_mark, &mut touched));
                    }
                }
            }
            for &(ti, uj) in &stiff_cols[j] {
                let wu = T::from_f64(weights[stiff[ti]]).mul(T::from_f64(uj));
                for &(i, ui) in &s_rows[ti] {
                    touch(q + i, wu.mul(T::from_f64(ui)), (&mut accumulator, &mut touched_mark, &mut touched));
                }
            }
            touched.sort_unstable();
            for &i in &touched {
                a_idx.push(i);
                values.push(accumulator[i].to_double_double());
            }
            a_ptr[j + 1] = touched.len();
            for &i in &touched {
                touched_mark[i] = false;
            }
            touched.clear();
        }
        drop((q_cols, stiff_cols, accumulator));
        for c in 0..n {
            a_ptr[c + 1] += a_ptr[c];
        }
        let symbolic = Symbolic::analyse(n, &a_ptr, &a_idx);
        // A has no floor of its own to its pivots (Q's columns are not unit vectors); a pivot
        // that cancels is not floored but reported, and the iteration gives out.
        if symbolic.bytes() + 8 * symbolic.factor_nonzeros() as u128 + q_bytes > room {
            return Err(NotBuilt::OutgrowsItsRoom);
        }
        let factor = if T::IS_DOUBLE_DOUBLE {
            symbolic.factorise(&values, f64::MIN_POSITIVE, 0.0)
        } else {
            let rounded: Vec<f64> = values.iter().map(|v| v.to_f64()).collect();
            symbolic.factorise(&rounded, f64::MIN_POSITIVE, 0.0)
        };
        let factor = factor.map_err(|_| NotBuilt::NotPositiveDefinite)?.into_values();
        drop(values);
        let symbolic = symbolic.for_solves();
        let mut position = vec![0u32; n];
        for (new, &old) in symbolic.perm().iter().enumerate() {
            position[old] = new as u32;
        }
        let mut row_ptr = vec![0];
        let mut row_entries = Vec::new();
        for &a in perm {
            row_entries.extend(q_rows[a].iter().map(|&(col, v)| (position[col], d[a] * v)));
            row_ptr.push(row_entries.len());
        }
        let solves = if any_contradicted {
            None
        } else {
            w_tilde(stiff, weights, &s_rows, &forest, spanning.len()).map(|(w_tilde, w_tilde_factor)| Solves {
                q_rows,
                d: d.to_vec(),
                ml: block.iter().map(|v| v.to_f64()).collect(),
                classes: q,
                stiff: stiff.to_vec(),
                s_rows,
                forest,
                w_tilde,
                w_tilde_factor,
            })
        };
        Ok(Quotient { row_ptr, row_entries, symbolic, factor, solves })
    }

    /// Bytes the basis and its factors take.
    pub(super) fn bytes(&self) -> u128 {
        fn held<T>(v: &Vec<T>) -> u128 {
            (v.capacity() * std::mem::size_of::<T>()) as u128
        }
        let pairs = |rows: &Vec<Vec<(usize, f64)>>| held(rows) + rows.iter().map(held).sum::<u128>();
        let solves = self.solves.as_ref().map_or(0, |s| {
            pairs(&s.q_rows)
                + pairs(&s.s_rows)
                + held(&s.d)
                + held(&s.ml)
                + held(&s.stiff)
                + held(&s.forest)
                + held(&s.w_tilde_factor)
                + s.w_tilde.bytes()
        });
        held(&self.factor) + held(&self.row_entries) + held(&self.row_ptr) + self.symbolic.bytes() + solves
    }

    /// A's factor.
    pub(super) fn factor(&self) -> SparseCholesky<'_> {
        SparseCholesky::borrowed(&self.symbolic, &self.factor)
    }

    /// Order of A (the observations).
    pub(super) fn order(&self) -> usize {
        self.symbolic.n()
    }

    /// Observation `r`'s (in the Schur complement's order) row of D Q: (A's column in its
    /// factor's order, value).
    pub(super) fn row(&self, r: usize) -> &[(u32, f64)] {
        &self.row_entries[self.row_ptr[r]..self.row_ptr[r + 1]]
    }

    /// Whether the Newton solves can go through the basis ([`Quotient::newton_solve`]): no class
    /// contradicts itself, and W̃ is positive definite.
    pub(super) fn solves_newton(&self) -> bool {
        self.solves.is_some()
    }

    /// The stiff rows whose multipliers [`Quotient::newton_solve`] returns.
    pub(super) fn stiff_rows(&self) -> &[usize] {
        self.solves.as_ref().map_or(&[], |s| &s.stiff)
    }

    /// The augmented system [H_L, G_Tᵀ; G_T, −W_T⁻¹][x; t] = [v; b_T] through the basis, with no
    /// Schur complement on the stiff rows (`b` the right-hand side of all the output's DP rows,
    /// `None` for 0; `weights` their W): x = D Q α with A α = Qᵀ D v + [0; S_Tᵀ W_T b_T], and the
    /// multipliers t = W_T(G_T x − b_T) from S_Tᵀ t = ρ = Q_Zᵀ(D v − M_L Q α). The forest's rows F
    /// fix S_T's rank; each redundant row C is E times them (S_C = E S_F, along its cycle), so
    /// with c₀ = E b_F − b_C, (W_F + Eᵀ W_C E) s = ρ − Eᵀ W_C c₀, t_F = W_F s and
    /// t_C = W_C(c₀ + E s). No weight multiplies the rounding of a solve: the stiff rows'
    /// weights enter A only in the forest's block, and t only through W̃'s own factor.
    ///
    /// Only where [`Quotient::solves_newton`].
    pub(super) fn newton_solve(
        &self,
        pattern: &BlockPattern<'_>,
        weights: &[f64],
        v: &[f64],
        b: Option<&[f64]>,
    ) -> (Vec<f64>, Vec<f64>) {
        let s = self.solves.as_ref().expect("called only where the basis solves the Newton system");
        let (n, q, d) = (s.d.len(), s.classes, &s.d);
        let r = n - q;
        let mut rhs = vec![0.0; n];
        for a in 0..n {
            for &(col, qv) in &s.q_rows[a] {
                rhs[col] += qv * d[a] * v[a];
            }
        }
        let b_stiff: Vec<f64> = s.stiff.iter().map(|&e| b.map_or(0.0, |b| b[e])).collect();
        for (ti, &e) in s.stiff.iter().enumerate() {
            let wb = weights[e] * b_stiff[ti];
            for &(i, c) in &s.s_rows[ti] {
                rhs[q + i] += c * wb;
            }
        }
        let alpha = self.factor().solve(&rhs);
        let u: Vec<f64> = (0..n).map(|a| s.q_rows[a].iter().map(|&(col, qv)| qv * alpha[col]).sum()).collect();
        let x: Vec<f64> = (0..n).map(|a| d[a] * u[a]).collect();
        // M_L u on the block's pattern (both triangles, by columns).
        let mut ml_u = vec![0.0; n];
        for (col, &u_col) in u.iter().enumerate() {
            for pos in pattern.col_ptr[col]..pattern.col_ptr[col + 1] {
                ml_u[pattern.row_idx[pos]] += s.ml[pos] * u_col;
            }
        }
        let mut rho = vec![0.0; r];
        for a in 0..n {
            for &(col, qv) in s.q_rows[a].iter().filter(|&&(col, _)| col >= q) {
                rho[col - q] += qv * (d[a] * v[a] - ml_u[a]);
            }
        }
        // c₀ on the redundant rows, moved to W̃'s right-hand side.
        let mut b_forest = vec![0.0; r];
        for (ti, f) in s.forest.iter().enumerate() {
            if let Some(i) = f {
                b_forest[*i] = b_stiff[ti];
            }
        }
        let mut c0 = vec![0.0; s.stiff.len()];
        for (ti, &e) in s.stiff.iter().enumerate().filter(|&(ti, _)| s.forest[ti].is_none()) {
            c0[ti] = s.s_rows[ti].iter().map(|&(i, c)| c * b_forest[i]).sum::<f64>() - b_stiff[ti];
            for &(i, c) in &s.s_rows[ti] {
                rho[i] -= c * weights[e] * c0[ti];
            }
        }
        let sv = SparseCholesky::borrowed(&s.w_tilde, &s.w_tilde_factor).solve(&rho);
        let t: Vec<f64> = s
            .stiff
            .iter()
            .enumerate()
            .map(|(ti, &e)| match s.forest[ti] {
                Some(i) => weights[e] * sv[i],
                None => weights[e] * (c0[ti] + s.s_rows[ti].iter().map(|&(i, c)| c * sv[i]).sum::<f64>()),
            })
            .collect();
        (x, t)
    }
}

/// W̃ = W_F + Eᵀ W_C E on the `forest_rows` rows of the forest (sparse: the forest's rows coupled
/// along each redundant row's cycle), analysed and factorised; `None` where rounding leaves it
/// not positive definite.
fn w_tilde(
    stiff: &[usize],
    weights: &[f64],
    s_rows: &[Vec<(usize, f64)>],
    forest: &[Option<usize>],
    forest_rows: usize,
) -> Option<(Symbolic, Vec<f64>)> {
    let r = forest_rows;
    let mut entries: Vec<(usize, usize, f64)> = Vec::new();
    for (ti, &t) in stiff.iter().enumerate() {
        if let Some(i) = forest[ti] {
            entries.push((i, i, weights[t]));
        } else {
            for &(i, ci) in &s_rows[ti] {
                for &(j, cj) in &s_rows[ti] {
                    entries.push((j, i, weights[t] * ci * cj));
                }
            }
        }
    }
    entries.sort_unstable_by_key(|&(j, i, _)| (j, i));
    let mut ptr = vec![0usize; r + 1];
    let mut idx = Vec::new();
    let mut values: Vec<f64> = Vec::new();
    for (k, &(j, i, v)) in entries.iter().enumerate() {
        if k > 0 && (entries[k - 1].0, entries[k - 1].1) == (j, i) {
            *values.last_mut().expect("a value was pushed for this entry") += v;
        } else {
            idx.push(i);
            values.push(v);
            ptr[j + 1] += 1;
        }
    }
    for c in 0..r {
        ptr[c + 1] += ptr[c];
    }
    let symbolic = Symbolic::analyse(r, &ptr, &idx);
    let factor = symbolic.factorise(&values, f64::MIN_POSITIVE, 0.0).ok()?.into_values();
    Some((symbolic.for_solves(), factor))
}

/// Union–find of observations with an integer potential h relative to each class's root.
struct Classes {
    parent: Vec<usize>,
    /// h(a) − h(parent(a)).
    offset: Vec<i64>,
    /// At a root: the class's rows contradict each other.
    contradicted: Vec<bool>,
}

impl Classes {
    fn new(n: usize) -> Classes {
        Classes { parent: (0..n).collect(), offset: vec![0; n], contradicted: vec![false; n] }
    }

    /// The root of `a`'s class and h(a) − h(root), with the path compressed.
    fn find(&mut self, a: usize) -> (usize, i64) {
        let mut root = a;
        let mut h = 0;
        while self.parent[root] != root {
            h += self.offset[root];
            root = self.parent[root];
        }
        // Compress: every node on the path points at the root with its whole offset.
        let (mut node, mut left) = (a, h);
        while self.parent[node] != root && node != root {
            let (next, step) = (self.parent[node], self.offset[node]);
            self.parent[node] = root;
            self.offset[node] = left;
            left -= step;
            node = next;
        }
        (root, h)
    }

    /// Record h(a) = h(b) + `step`, and say what the row adds to the classes' rows.
    fn join(&mut self, a: usize, b: usize, step: i64) -> Joined {
        let ((ra, ha), (rb, hb)) = (self.find(a), self.find(b));
        if ra == rb {
            return if self.contradicted[ra] {
                Joined::Redundant
            } else if ha != hb + step {
                self.contradicted[ra] = true;
                Joined::FirstContradiction
            } else {
                Joined::Agrees
            };
        }
        let both_contradicted = self.contradicted[ra] && self.contradicted[rb];
        // h(ra) = h(a) − ha = h(b) + step − ha = h(rb) + hb + step − ha.
        self.parent[ra] = rb;
        self.offset[ra] = hb + step - ha;
        self.contradicted[rb] |= self.contradicted[ra];
        // Two classes that each fix all their values already fix the union's.
        if both_contradicted {
            Joined::Redundant
        } else {
            Joined::Forest
        }
    }
}

/// The spanning rows of one output's stiff rows (sorted, as `stiff` is) and the roots their
/// trees hang from. In a class whose ratios agree: a breadth-first tree from the class's centre
/// (two sweeps: the farthest node from any, the farthest from that, the middle of the path
/// between), so that the subtrees beyond its rows, Z's columns, are as shallow as the class
/// allows. Q holds Σ depth entries and A couples every row with its ancestors: on a band (a
/// clipped Poisson sum's staircase, the tight rows joining neighbouring steps) the first
/// forest union–find met ran the length of the class. In a contradicted class: the rows that
/// joined it (`joining`, union–find's forest and closing row).
fn shallow_forest(
    rows: &[(usize, usize)],
    stiff: &[usize],
    agrees: &dyn Fn(usize) -> bool,
    joining: &[usize],
    n: usize,
) -> (Vec<usize>, Vec<usize>) {
    // The agreeing classes' stiff rows by node (CSR): (neighbour, row).
    let mut degree = vec![0usize; n + 1];
    for &e in stiff {
        let (a, b) = rows[e];
        if agrees(a) {
            degree[a + 1] += 1;
            degree[b + 1] += 1;
        }
    }
    for a in 0..n {
        degree[a + 1] += degree[a];
    }
    let start = degree;
    let mut fill = start.clone();
    let mut adjacent = vec![(0usize, 0usize); start[n]];
    for &e in stiff {
        let (a, b) = rows[e];
        if agrees(a) {
            adjacent[fill[a]] = (b, e);
            fill[a] += 1;
            adjacent[fill[b]] = (a, e);
            fill[b] += 1;
        }
    }
    // Breadth-first from `from`: the nodes in order of distance, each with the row it was
    // reached by (`via`, stamped with the sweep's number in `seen`).
    let mut seen = vec![0u32; n];
    let mut via = vec![usize::MAX; n];
    let mut order: Vec<usize> = Vec::new();
    let mut sweep = 0u32;
    let mut breadth_first = |from: usize, seen: &mut [u32], via: &mut [usize], order: &mut Vec<usize>| {
        sweep += 1;
        order.clear();
        order.push(from);
        seen[from] = sweep;
        via[from] = usize::MAX;
        let mut head = 0;
        while head < order.len() {
            let node = order[head];
            head += 1;
            for &(next, e) in &adjacent[start[node]..start[node + 1]] {
                if seen[next] != sweep {
                    seen[next] = sweep;
                    via[next] = e;
                    order.push(next);
                }
            }
        }
    };
    let mut in_tree = vec![false; rows.len()];
    let mut done = vec![false; n];
    let mut roots = Vec::new();
    for first in 0..n {
        if done[first] || start[first] == start[first + 1] {
            continue;
        }
        breadth_first(first, &mut seen, &mut via, &mut order);
        let far = *order.last().expect("the sweep holds its start");
        breadth_first(far, &mut seen, &mut via, &mut order);
        // The path back from the farthest node; its middle is the centre.
        let mut path = vec![*order.last().expect("the sweep holds its start")];
        while let Some(&node) = path.last() {
            let e = via[node];
            if e == usize::MAX {
                break;
            }
            let (a, b) = rows[e];
            path.push(if a == node { b } else { a });
        }
        let centre = path[path.len() / 2];
        breadth_first(centre, &mut seen, &mut via, &mut order);
        for &node in &order {
            done[node] = true;
            if via[node] != usize::MAX {
                in_tree[via[node]] = true;
            }
        }
        roots.push(centre);
    }
    let spanning = stiff
        .iter()
        .copied()
        .filter(|&e| in_tree[e] || (!agrees(rows[e].0) && joining.binary_search(&e).is_ok()))
        .collect();
    (spanning, roots)
}

/// What one stiff row adds to the rows its classes already have.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Joined {
    /// It joins two classes: a row of the spanning forest.
    Forest,
    /// It closes a cycle whose ratios multiply to 1: its direction is already spanned.
    Agrees,
    /// It closes the first cycle of its class whose ratios do not: the class's values are all
    /// fixed (at 0), and it is the row that completes them.
    FirstContradiction,
    /// Its classes' values are all fixed already.
    Redundant,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_keep_the_potentials_of_their_rows_and_mark_contradictions() {
        let mut c = Classes::new(6);
        // 0 → 1 → 2 and 3 → 2: h(0) = 2, h(1) = 1, h(3) = 1 relative to h(2).
        assert_eq!(c.join(0, 1, 1), Joined::Forest);
        assert_eq!(c.join(1, 2, 1), Joined::Forest);
        assert_eq!(c.join(3, 2, 1), Joined::Forest);
        // A cycle whose ratios agree: 0 → 3 (h(0) = h(3) + 1).
        assert_eq!(c.join(0, 3, 1), Joined::Agrees);
        let (r, h0) = c.find(0);
        let (r2, h2) = c.find(2);
        let (r3, h3) = c.find(3);
        assert_eq!((r, r2, r3), (r, r, r));
        assert_eq!((h0 - h2, h3 - h2), (2, 1));
        assert!(!c.contradicted[r]);
        // 1 → 3 contradicts (h(1) = h(3) would need h(1) = h(3) + 1).
        assert_eq!(c.join(1, 3, 1), Joined::FirstContradiction);
        assert_eq!(c.join(0, 2, 1), Joined::Redundant);
        // 4 → 5 and 5 → 4 contradict each other (x_4 = e^ε x_5 = e^{2ε} x_4); joined to the
        // first contradicted class, the row adds nothing.
        assert_eq!(c.join(4, 5, 1), Joined::Forest);
        assert_eq!(c.join(5, 4, 1), Joined::FirstContradiction);
        assert_eq!(c.join(5, 0, 1), Joined::Redundant);
        let root = c.find(4).0;
        assert!(c.contradicted[root]);
    }

    /// A block with its DP rows (a, b): x_a ≤ ρ x_b, their weights, the stiff ones among them
    /// and D; dense and on its CSC pattern.
    struct Fixture {
        rows: Vec<(usize, usize)>,
        stiff: Vec<usize>,
        weights: Vec<f64>,
        rho: f64,
        d: Vec<f64>,
        col_ptr: Vec<usize>,
        row_idx: Vec<usize>,
    }

    impl Fixture {
        fn new(rows: &[(usize, usize)], stiff: &[usize], weights: &[f64], d: &[f64]) -> Fixture {
            let n = d.len();
            let mut cols: Vec<Vec<usize>> = (0..n).map(|j| vec![j]).collect();
            for &(a, b) in rows {
                cols[a].push(b);
                cols[b].push(a);
            }
            cols.iter_mut().for_each(|c| {
                c.sort_unstable();
                c.dedup()
            });
            let mut col_ptr = vec![0];
            col_ptr.extend(cols.iter().scan(0, |total, c| {
                *total += c.len();
                Some(*total)
            }));
            Fixture {
                rows: rows.to_vec(),
                stiff: stiff.to_vec(),
                weights: weights.to_vec(),
                rho: 1.5,
                d: d.to_vec(),
                col_ptr,
                row_idx: cols.concat(),
            }
        }

        /// M = I + D Gᵀ W G D (row-major), or M_L without the stiff rows.
        fn dense(&self, with_stiff: bool) -> Vec<f64> {
            let (n, d) = (self.d.len(), &self.d);
            let mut m = vec![0.0; n * n];
            for i in 0..n {
                m[i * n + i] = 1.0;
            }
            for (e, &(a, b)) in self.rows.iter().enumerate() {
                if !with_stiff && self.stiff.contains(&e) {
                    continue;
                }
                let (ga, gb, w) = (d[a], -self.rho * d[b], self.weights[e]);
                m[a * n + a] += w * ga * ga;
                m[b * n + b] += w * gb * gb;
                m[a * n + b] += w * ga * gb;
                m[b * n + a] += w * ga * gb;
            }
            m
        }

        /// The basis, with the Schur complement's order `perm`.
        fn quotient(&self, perm: &[usize]) -> Quotient {
            self.within(perm, u128::MAX).expect("positive definite")
        }

        /// The basis in `room` bytes.
        fn within(&self, perm: &[usize], room: u128) -> Result<Quotient, NotBuilt> {
            let n = self.d.len();
            let loose = self.dense(false);
            let block: Vec<f64> = (0..n)
                .flat_map(|b| (self.col_ptr[b]..self.col_ptr[b + 1]).map(move |pos| (pos, b)))
                .map(|(pos, b)| loose[self.row_idx[pos] * n + b])
                .collect();
            let tight = Tight { rows: &self.rows, stiff: &self.stiff, rho: self.rho };
            Quotient::new(tight, &self.weights, &self.d, &block, self.pattern(perm), room)
        }

        fn pattern<'a>(&'a self, perm: &'a [usize]) -> BlockPattern<'a> {
            BlockPattern { col_ptr: &self.col_ptr, row_idx: &self.row_idx, perm }
        }
    }

    /// D Q A⁻¹ Qᵀ D against D M⁻¹ D inverted densely, on a graph whose stiff rows make a class
    /// with a cycle that agrees, a class that contradicts itself, and loose rows between them.
    #[test]
    fn the_basis_gives_the_block_inverse_exactly() {
        let fixture = Fixture::new(
            &[(0, 1), (1, 2), (3, 2), (0, 3), (4, 5), (5, 4), (2, 4), (1, 3), (5, 6)],
            &[0, 1, 2, 3, 4, 5],
            &[3e4, 5e3, 2e4, 7e3, 4e4, 1e4, 0.8, 2.5, 0.3],
            &[0.7, 1.3, 2.0, 0.4, 1.1, 0.9, 1.7],
        );
        // The Schur complement's order: reversed, to check that the rows follow it.
        let perm: Vec<usize> = (0..fixture.d.len()).rev().collect();
        let quotient = fixture.quotient(&perm);
        assert!(!quotient.solves_newton(), "a class contradicts itself");
        assert_gives_the_block_inverse(&fixture, &quotient, &perm);
    }

    /// A staircase (a band's tight rows: five steps of two observations, every observation tied
    /// to both of the next step's, loose rows within each step): its forest grows from the middle
    /// step, and the basis still gives the block inverse exactly.
    #[test]
    fn a_staircase_is_spanned_from_its_middle_step() {
        let mut rows = Vec::new();
        for step in 0..4 {
            for a in [2 * step, 2 * step + 1] {
                rows.extend([(a, 2 * step + 2), (a, 2 * step + 3)]);
            }
        }
        let stiff: Vec<usize> = (0..rows.len()).collect();
        rows.extend((0..5).map(|step| (2 * step, 2 * step + 1)));
        let weights: Vec<f64> =
            (0..rows.len()).map(|e| if e < stiff.len() { 1e4 * (1.0 + e as f64) } else { 0.7 }).collect();
        let d: Vec<f64> = (0..10).map(|a| 0.5 + 0.1 * a as f64).collect();
        let fixture = Fixture::new(&rows, &stiff, &weights, &d);
        let (spanning, roots) = shallow_forest(&rows, &stiff, &|_| true, &[], 10);
        assert_eq!(spanning.len(), 9, "a spanning tree of the ten observations");
        assert!(roots.len() == 1 && (4..6).contains(&roots[0]), "rooted in the middle step: {roots:?}");
        let perm: Vec<usize> = (0..10).collect();
        let quotient = fixture.quotient(&perm);
        assert!(quotient.solves_newton());
        assert_gives_the_block_inverse(&fixture, &quotient, &perm);
    }

    /// The forest keeps a contradicted class's joining rows and spans an agreeing path from its
    /// middle observation.
    #[test]
    fn the_forest_keeps_contradicted_classes_and_roots_paths_in_their_middle() {
        // 0 → 1 → … → 8 agree; 9 → 10 → 9 contradict each other.
        let mut rows: Vec<(usize, usize)> = (0..8).map(|a| (a, a + 1)).collect();
        rows.extend([(9, 10), (10, 9)]);
        let stiff: Vec<usize> = (0..rows.len()).collect();
        let (spanning, roots) = shallow_forest(&rows, &stiff, &|a| a < 9, &stiff, 11);
        assert_eq!(roots, vec![4]);
        assert_eq!(spanning, stiff);
        // Only the rows union–find joined by count in a contradicted class.
        let (spanning, _) = shallow_forest(&rows, &stiff, &|a| a < 9, &[9], 11);
        assert_eq!(spanning, (0..8).chain([9]).collect::<Vec<_>>());
    }

    /// D Q A⁻¹ Qᵀ D against D M⁻¹ D inverted densely, with the Schur complement's order `perm`.
    fn assert_gives_the_block_inverse(fixture: &Fixture, quotient: &Quotient, perm: &[usize]) {
        use crate::numeric::sparse_cholesky::WIDTH;
        let (n, d) = (fixture.d.len(), &fixture.d);
        let inverse = invert(&fixture.dense(true), n);
        let factor = quotient.factor();
        let (rows_of, order): (Vec<&[(u32, f64)]>, usize) =
            ((0..n).map(|r| quotient.row(r)).collect(), quotient.order());
        for r in 0..n {
            let mut b = vec![0.0; order * WIDTH];
            for &(p, v) in rows_of[r] {
                b[p as usize * WIDTH] = v;
            }
            factor.solve_block_lower(&mut b, 0);
            for s in 0..n {
                let got: f64 = rows_of[s].iter().map(|&(p, v)| v * b[p as usize * WIDTH]).sum();
                let (a, c) = (perm[r], perm[s]);
                let exact = d[a] * inverse[a * n + c] * d[c];
                assert!((got - exact).abs() <= 1e-9 * exact.abs().max(1e-6), "({a}, {c}): {got} against {exact}");
            }
        }
    }

    /// The Newton solve through the basis against the augmented system solved densely:
    /// x = H⁻¹(v + G_Tᵀ W_T b_T) with H = D⁻¹ M D⁻¹, t = W_T(G_T x − b_T); two classes, one with a
    /// cycle whose ratios agree (a redundant row), and loose rows between them.
    #[test]
    fn the_basis_solves_the_augmented_system() {
        let fixture = Fixture::new(
            &[(0, 1), (1, 2), (3, 2), (0, 3), (4, 5), (6, 4), (2, 4), (1, 3), (5, 6), (6, 0)],
            &[0, 1, 2, 3, 4, 5],
            &[3e4, 5e3, 2e4, 7e3, 4e4, 1e4, 0.8, 2.5, 0.3, 1.2],
            &[0.7, 1.3, 2.0, 0.4, 1.1, 0.9, 1.7],
        );
        let (n, d, rho) = (fixture.d.len(), &fixture.d, fixture.rho);
        let perm: Vec<usize> = (0..n).collect();
        let quotient = fixture.quotient(&perm);
        assert!(quotient.solves_newton());
        // What it takes is counted before it is made: in less room it is not.
        assert_eq!(fixture.within(&perm, quotient.bytes() / 4).err(), Some(NotBuilt::OutgrowsItsRoom));
        assert_eq!(quotient.stiff_rows(), &fixture.stiff[..]);
        let v: Vec<f64> = (0..n).map(|i| (i as f64 * 0.37).sin() + 0.2).collect();
        let b: Vec<f64> = (0..fixture.rows.len()).map(|e| (e as f64 * 0.53).cos() * 1e-3).collect();
        let (x, t) = quotient.newton_solve(&fixture.pattern(&perm), &fixture.weights, &v, Some(&b));
        // H = D⁻¹ M D⁻¹, so x = D M⁻¹ D (v + G_Tᵀ W_T b_T).
        let mut rhs = v.clone();
        for &e in &fixture.stiff {
            let (a, c) = fixture.rows[e];
            rhs[a] += fixture.weights[e] * b[e];
            rhs[c] -= rho * fixture.weights[e] * b[e];
        }
        let inverse = invert(&fixture.dense(true), n);
        let exact: Vec<f64> =
            (0..n).map(|a| d[a] * (0..n).map(|c| inverse[a * n + c] * d[c] * rhs[c]).sum::<f64>()).collect();
        let scale = exact.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        for (a, (got, want)) in x.iter().zip(&exact).enumerate() {
            assert!((got - want).abs() <= 1e-9 * scale, "x[{a}]: {got} against {want}");
        }
        for (i, &e) in fixture.stiff.iter().enumerate() {
            let (a, c) = fixture.rows[e];
            let want = fixture.weights[e] * (exact[a] - rho * exact[c] - b[e]);
            assert!((t[i] - want).abs() <= 1e-6 * want.abs().max(1.0), "t[{e}]: {} against {want}", t[i]);
        }
    }

    fn invert(m: &[f64], n: usize) -> Vec<f64> {
        let mut a = m.to_vec();
        let mut inv = vec![0.0; n * n];
        for i in 0..n {
            inv[i * n + i] = 1.0;
        }
        for c in 0..n {
            let p = a[c * n + c];
            for j in 0..n {
                a[c * n + j] /= p;
                inv[c * n + j] /= p;
            }
            for r in (0..n).filter(|&r| r != c) {
                let f = a[r * n + c];
                for j in 0..n {
                    a[r * n + j] -= f * a[c * n + j];
                    inv[r * n + j] -= f * inv[c * n + j];
                }
            }
        }
        inv
    }
}
