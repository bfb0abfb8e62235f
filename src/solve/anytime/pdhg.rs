//! Restarted, reflected Halpern PDHG on the UBaPP LP with the column simplices kept in the primal
//! (Lu & Yang, cuPDLPx 2025; Applegate et al., PDLP 2021), matrix-free:
//!
//! ```text
//! min_x max_{λ ≥ 0}  c·x + λ·Dx,    x ∈ X = ∏_i Δ(Θ̃)   (each column of P a distribution)
//! T(x, λ):  x̂ = Π_X(x − τ (c + Dᵀλ)),   λ̂ = max(0, λ + σ D(2x̂ − x))
//! z ← (j+1)/(j+2) · ((1+γ) T(z) − γ z) + 1/(j+2) · z₀        (j: iterations since the restart)
//! ```
//!
//! D is the DP map, row (e, d, k): P\[k,a\] − ρ P\[k,b\] for the ordered pair (a, b) of edge e in
//! direction d. Steps are diagonal (Pock & Chambolle 2011, α = 1): τ_i = η / (ω deg_i (1+ρ)) for
//! column i, σ = η ω / (1+ρ), with η < 1 so that the preconditioned operator has norm < 1; ω is
//! the primal weight, fixed from the scaled norms (PDLP's re-balancing at restarts ran away on
//! these problems: docs/design/anytime.md). A restart (anchor z₀ ← z, j ← 0) happens when the fixed-point residual
//! ‖z − T(z)‖ has fallen to a fifth of its value at the last restart, or to 0.8 of it and stopped
//! falling, or after a third of the iterations so far (cuPDLPx's criteria).
//!
//! Every pass is a batched loop over output rows within an observation or an edge, with no
//! per-element branching beyond max/min, in f32: nothing certified depends on these floats
//! (any λ ≥ 0 gives a valid bound, any x is repaired), and f32 halves the memory traffic that
//! bounds the iteration's speed. Passes run over observations (the primal) and edges (the
//! dual) on every core.

use rayon::prelude::*;

use crate::lp::{Incidence, Support};

/// Observations (or edges) per parallel task.
const CHUNK: usize = 256;

/// The step-size safety factor η (< 1: the preconditioned operator's norm is ≤ 1).
const ETA: f32 = 0.95;

/// The reflection coefficient γ of the Halpern step.
const REFLECTION: f32 = 1.0;

/// The iterate and everything one iteration needs. x lives on the support's slots, λ on its
/// kept DP rows (`lp::Support`).
pub(crate) struct Pdhg<'a> {
    incidence: &'a Incidence,
    support: &'a Support,
    /// e^ε (as f32).
    rho: f32,
    /// Scaled costs of the slots.
    cost: Vec<f32>,
    /// τ_i before the primal weight and η (1 where deg_i = 0).
    tau_base: Vec<f32>,
    /// σ_e before the primal weight and η, per edge.
    sigma_base: Vec<f32>,
    /// The primal weight ω.
    pub(crate) omega: f32,
    /// The Halpern iterate z = (x, λ) and its anchor z₀.
    x: Vec<f32>,
    x0: Vec<f32>,
    lam: Vec<f32>,
    lam0: Vec<f32>,
    /// x̂ of the last T(z): in X exactly (as floats), the point the repair takes.
    xh: Vec<f32>,
    /// 2x̂ − x of the last T(z) (the point the dual step reads).
    y: Vec<f32>,
    /// Slot boundaries of the column chunks, and kept-row boundaries of the edge chunks.
    column_chunks: Vec<usize>,
    row_chunks: Vec<usize>,
    /// Iterations since the restart.
    j: u64,
    /// Iterations in all.
    pub(crate) iterations: u64,
    /// Restarts so far.
    pub(crate) restarts: u64,
    /// ‖z − T(z)‖ at the last restart, and at the last iteration.
    residual_at_restart: f64,
    last_residual: f64,
    /// The iteration of the last restart.
    restart_iteration: u64,
}

/// `data` cut at the ascending offsets `bounds` (first 0, last `data.len()`).
fn split_at_bounds<'d>(mut data: &'d mut [f32], bounds: &[usize]) -> Vec<&'d mut [f32]> {
    let mut parts = Vec::with_capacity(bounds.len().saturating_sub(1));
    for w in bounds.windows(2) {
        let (head, tail) = std::mem::take(&mut data).split_at_mut(w[1] - w[0]);
        parts.push(head);
        data = tail;
    }
    parts
}

impl<'a> Pdhg<'a> {
    /// A start from x (column-stochastic on each column's slots) and λ (≥ 0, one per kept row),
    /// with scaled slot costs `cost`; `every` is the mean and the Euclidean norm of every scaled
    /// cost, kept or not (the steps' and the primal weight's scale).
    pub(crate) fn new(
        incidence: &'a Incidence,
        support: &'a Support,
        eps: f64,
        cost: Vec<f32>,
        (mean, cost_norm): (f64, f64),
        x: Vec<f32>,
        lam: Vec<f32>,
    ) -> Self {
        let rho = eps.exp() as f32;
        let n = incidence.n_obs();
        debug_assert_eq!(x.len(), support.slots());
        debug_assert_eq!(lam.len(), support.rows());
        // Each column's weight w_i (its non-private scaled cost, floored): the multipliers near
        // column i are of its order, so the DP rows of edge (a, b) are scaled by
        // s_e = √(w_a w_b) before Pock–Chambolle's diagonal steps (α = 1) are taken:
        // σ_e = s_e/(1+ρ) for λ, τ_i = 1/((1+ρ) Σ_{e ∋ i} s_e).
        let floor = (1e-3 * mean).max(1e-30) as f32;
        let weight: Vec<f32> =
            (0..n).map(|i| cost[support.column(i)].iter().copied().fold(f32::INFINITY, f32::min).max(floor)).collect();
        let sigma_base: Vec<f32> = incidence
            .edges()
            .iter()
            .map(|&(a, b)| (weight[a as usize] * weight[b as usize]).sqrt() / (1.0 + rho))
            .collect();
        let tau_base = (0..n)
            .map(|i| {
                let s: f32 = incidence.at(i).iter().map(|&(own, _)| sigma_base[own as usize / 2] * (1.0 + rho)).sum();
                if s > 0.0 {
                    1.0 / ((1.0 + rho) * s)
                } else {
                    1.0
                }
            })
            .collect::<Vec<_>>();
        // The primal weight: PDLP's ‖c‖/‖b‖ with the start's norm for b (the DP rows' right side
        // is 0; the column sums live in X), in the scaled rows' units (divided by the mean s_e).
        let norm = |v: &[f32]| v.iter().map(|&t| (t as f64).powi(2)).sum::<f64>().sqrt();
        let mean_scale =
            sigma_base.iter().map(|&s| s as f64 * (1.0 + rho as f64)).sum::<f64>() / sigma_base.len().max(1) as f64;
        let omega = (0.1 * cost_norm / norm(&x).max(1e-30) / mean_scale.max(1e-30)).clamp(1e-4, 1e6) as f32;
        let column_chunks: Vec<usize> = (0..n).step_by(CHUNK).chain([n]).map(|i| support.column_starts()[i]).collect();
        let n_edges = incidence.n_edges();
        let row_chunks: Vec<usize> =
            (0..n_edges).step_by(CHUNK).chain([n_edges]).map(|e| 2 * support.pair_starts()[e]).collect();
        Pdhg {
            incidence,
            support,
            rho,
            cost,
            tau_base,
            sigma_base,
            omega,
            x0: x.clone(),
            xh: x.clone(),
            y: x.clone(),
            x,
            lam0: lam.clone(),
            lam,
            column_chunks,
            row_chunks,
            j: 0,
            iterations: 0,
            restarts: 0,
            residual_at_restart: f64::INFINITY,
            last_residual: f64::INFINITY,
            restart_iteration: 0,
        }
    }

    /// The last x̂ on the slots (column-stochastic, possibly not ε-DP).
    pub(crate) fn primal(&self) -> &[f32] {
        &self.xh
    }

    /// The current multipliers of the kept rows (negative entries, which a reflected step may
    /// leave, read as 0 by the bound).
    pub(crate) fn dual(&self) -> &[f32] {
        &self.lam
    }

    /// A restart at the current x with the multipliers `lam` (≥ 0, e.g. polished by the
    /// coordinate ascent): both become the anchor, and the next residual the reference for the
    /// restart criteria.
    pub(crate) fn restart_with_dual(&mut self, lam: &[f32]) {
        self.lam.copy_from_slice(lam);
        self.anchor_here();
        self.residual_at_restart = f64::INFINITY;
    }

    /// A restart's anchoring: z₀ ← z, the Halpern count from 0.
    fn anchor_here(&mut self) {
        self.x0.copy_from_slice(&self.x);
        self.lam0.par_iter_mut().zip(self.lam.par_iter()).for_each(|(a, b)| *a = *b);
        self.j = 0;
        self.restarts += 1;
        self.restart_iteration = self.iterations;
    }

    /// One iteration; returns the fixed-point residual ‖z − T(z)‖ (diagonal-weighted norm).
    pub(crate) fn step(&mut self) -> f64 {
        let rho = self.rho;
        let tau_scale = ETA / self.omega;
        let sigma_scale = ETA * self.omega;
        let w1 = (self.j + 1) as f32 / (self.j + 2) as f32;
        let w0 = 1.0 / (self.j + 2) as f32;
        let (inc, support) = (self.incidence, self.support);
        let n = inc.n_obs();
        let edges = inc.edges();
        let starts = support.column_starts();

        // Pass A, column by column: x̂ = Π_X(x − τ(c + Dᵀλ)), y = 2x̂ − x for the dual step, and
        // the Halpern step on x (which needs nothing but the column).
        let lam = &self.lam;
        let (cost, tau_base, x0) = (&self.cost, &self.tau_base, &self.x0);
        let columns = split_at_bounds(&mut self.x, &self.column_chunks)
            .into_iter()
            .zip(split_at_bounds(&mut self.xh, &self.column_chunks))
            .zip(split_at_bounds(&mut self.y, &self.column_chunks));
        let primal_res: f64 = columns
            .collect::<Vec<_>>()
            .into_par_iter()
            .enumerate()
            .map(|(chunk, ((x_chunk, xh_chunk), y_chunk))| {
                let mut g = Vec::new();
                let mut res = 0f64;
                let first_column = chunk * CHUNK;
                let offset = starts[first_column];
                for i in first_column..(first_column + CHUNK).min(n) {
                    let (lo, hi) = (starts[i], starts[i + 1]);
                    g.clear();
                    g.extend_from_slice(&cost[lo..hi]);
                    for &(own, _) in inc.at(i) {
                        let e = own as usize / 2;
                        let (p0, kept) = support.pairs_of(e);
                        let rows = &lam[2 * p0..2 * (p0 + kept.len())];
                        if edges[e].0 as usize == i {
                            for (&(sa, _), l) in kept.iter().zip(rows.chunks_exact(2)) {
                                g[sa as usize - lo] += l[0] - rho * l[1];
                            }
                        } else {
                            for (&(_, sb), l) in kept.iter().zip(rows.chunks_exact(2)) {
                                g[sb as usize - lo] += l[1] - rho * l[0];
                            }
                        }
                    }
                    let tau = tau_scale * tau_base[i];
                    let (a, b) = (lo - offset, hi - offset);
                    let (xc, xh_col, y_col) = (&mut x_chunk[a..b], &mut xh_chunk[a..b], &mut y_chunk[a..b]);
                    for k in 0..hi - lo {
                        xh_col[k] = xc[k] - tau * g[k];
                    }
                    project_simplex(xh_col);
                    let mut d = 0f32;
                    for (k, x_old) in xc.iter_mut().enumerate() {
                        let t = *x_old - xh_col[k];
                        d += t * t;
                        y_col[k] = flush(2.0 * xh_col[k] - *x_old);
                        *x_old = flush(w1 * ((1.0 + REFLECTION) * xh_col[k] - REFLECTION * *x_old) + w0 * x0[lo + k]);
                    }
                    res += d as f64 / tau as f64;
                }
                res
            })
            .sum();

        // Pass B: λ̂ = max(0, λ + σ D y), then the Halpern step on λ, edge by edge.
        let y = &self.y;
        let lam0 = &self.lam0;
        let sigma_base = &self.sigma_base;
        let n_edges = inc.n_edges();
        let dual_res: f64 = split_at_bounds(&mut self.lam, &self.row_chunks)
            .into_par_iter()
            .enumerate()
            .map(|(chunk, lam_chunk)| {
                let mut res = 0f64;
                let first_edge = chunk * CHUNK;
                let offset = self.row_chunks[chunk];
                let last_edge = (first_edge + CHUNK).min(n_edges);
                for (e, &base) in (first_edge..last_edge).zip(&sigma_base[first_edge..last_edge]) {
                    let sigma = sigma_scale * base;
                    let (p0, kept) = support.pairs_of(e);
                    let rows = &mut lam_chunk[2 * p0 - offset..2 * (p0 + kept.len()) - offset];
                    let anchors = &lam0[2 * p0..2 * (p0 + kept.len())];
                    let mut d = 0f32;
                    for ((&(sa, sb), l), l0) in kept.iter().zip(rows.chunks_exact_mut(2)).zip(anchors.chunks_exact(2)) {
                        let (ya, yb) = (y[sa as usize], y[sb as usize]);
                        let (fwd, bwd) = (l[0], l[1]);
                        let h0 = (fwd + sigma * (ya - rho * yb)).max(0.0);
                        let h1 = (bwd + sigma * (yb - rho * ya)).max(0.0);
                        let (t0, t1) = (fwd - h0, bwd - h1);
                        d += t0 * t0 + t1 * t1;
                        l[0] = flush(w1 * ((1.0 + REFLECTION) * h0 - REFLECTION * fwd) + w0 * l0[0]);
                        l[1] = flush(w1 * ((1.0 + REFLECTION) * h1 - REFLECTION * bwd) + w0 * l0[1]);
                    }
                    res += d as f64 / sigma as f64;
                }
                res
            })
            .sum();

        self.j += 1;
        self.iterations += 1;
        let residual = (primal_res + dual_res).sqrt();
        self.maybe_restart(residual);
        self.last_residual = residual;
        residual
    }

    /// cuPDLPx's restart criteria on the fixed-point residual (the primal weight stays fixed).
    fn maybe_restart(&mut self, residual: f64) {
        if !self.residual_at_restart.is_finite() {
            self.residual_at_restart = residual;
            return;
        }
        let since = self.iterations - self.restart_iteration;
        let sufficient = residual <= 0.2 * self.residual_at_restart;
        let necessary = residual <= 0.8 * self.residual_at_restart && residual > self.last_residual;
        let artificial = since as f64 >= 0.36 * self.iterations as f64 && since >= 16;
        if !(sufficient || necessary || artificial) {
            return;
        }
        self.lam.par_iter_mut().for_each(|v| *v = v.max(0.0));
        self.anchor_here();
        self.residual_at_restart = residual;
    }
}

/// Euclidean projection of v onto the probability simplex, in place (Michelot's fixed point from
/// below: θ ← (Σ_{v_k > θ} v_k − 1)/#{v_k > θ} from θ₀ = (Σv − 1)/m increases to the threshold
/// in a few masked passes).
pub(crate) fn project_simplex(v: &mut [f32]) {
    let m = v.len();
    let mut theta = (v.iter().sum::<f32>() - 1.0) / m as f32;
    for _ in 0..64 {
        let (mut s, mut c) = (0f32, 0f32);
        for &x in v.iter() {
            let on = (x > theta) as u8 as f32;
            s += on * x;
            c += on;
        }
        let next = (s - 1.0) / c.max(1.0);
        if next <= theta {
            break;
        }
        theta = next;
    }
    for x in v.iter_mut() {
        *x = flush((*x - theta).max(0.0));
    }
}

/// Below this magnitude an iterate's entry is stored as 0.
const FLUSH_BELOW: f32 = 1e-30;

/// `v`, or 0 where |v| < [`FLUSH_BELOW`] (a select, not a branch). The Halpern steps shrink the
/// entries of inactive slots and rows towards 0 without reaching it; once they are subnormal
/// every operation on them takes a slow path on many CPUs (measured on the poll of 100: 3,700
/// iterations in 30 s instead of 6,900). Nothing certified depends on these floats.
#[inline(always)]
fn flush(v: f32) -> f32 {
    if v.abs() < FLUSH_BELOW {
        0.0
    } else {
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn simplex_projection_matches_the_sorting_rule() {
        let cases: [&[f32]; 4] =
            [&[0.2, 0.3, 0.5], &[2.0, -1.0, 0.5, 0.4], &[-3.0, -3.0, -3.0], &[10.0, 9.9, -5.0, 0.0]];
        for case in cases {
            let mut v = case.to_vec();
            project_simplex(&mut v);
            // Reference: sort, find the threshold.
            let mut u = case.to_vec();
            u.sort_by(|a, b| b.total_cmp(a));
            let (mut cum, mut theta) = (0f32, 0f32);
            for (j, &x) in u.iter().enumerate() {
                cum += x;
                let t = (cum - 1.0) / (j + 1) as f32;
                if x - t > 0.0 {
                    theta = t;
                }
            }
            for (a, &b) in v.iter().zip(case) {
                assert!((a - (b - theta).max(0.0)).abs() < 1e-6, "{case:?}: {v:?}");
            }
            assert!((v.iter().sum::<f32>() - 1.0).abs() < 1e-6);
        }
    }
}
