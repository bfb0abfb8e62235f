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
//! (any λ ≥ 0 gives a valid bound, any x is repaired). Passes run over observations (the primal)
//! and edges (the dual) on every core. Where the graph is banded in index order (the multinomial
//! lattices), the dual pass also accumulates Dᵀλ at both ends of each edge, in two waves of
//! column blocks that do not share a column ([`Waves`]), and the primal pass reads it instead of
//! gathering every row a second time from each end.

use std::ops::Range;

use rayon::prelude::*;

use crate::lp::{Incidence, Support};

/// Observations (or edges) per parallel task.
const CHUNK: usize = 256;

/// The step-size safety factor η: the steps are η over the preconditioned operator's
/// estimated norm (cuPDLPx takes 0.998 over a power iteration's). Measured on the poll of 100 at
/// 5,000 iterations (two runs each): certified gap 1.89–1.93e-3 with η = 0.95 over the Schur
/// test's bound 1, 1.65–1.67e-3 with 0.95 over the estimate 0.874, 1.57–1.60e-3 with 0.99.
const ETA: f32 = 0.99;

/// Lanczos steps of the estimate of the preconditioned operator's norm (within 0.15 % of 80
/// steps' on the polls of 40, 100 and 300).
const NORM_ITERATIONS: usize = 20;

/// Iterations between evaluations of the fixed-point residual and the restart criteria.
const RESIDUAL_EVERY: u64 = 8;

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
    /// η over the preconditioned operator's norm: τ_i = step·τ_base_i/ω, σ_e = step·ω·σ_base_e.
    step: f32,
    /// The Halpern iterate z = (x, λ) and its anchor z₀.
    x: Vec<f32>,
    x0: Vec<f32>,
    /// λ of the kept rows (rows 2p and 2p + 1 of pair p) and its anchor. (Stored run by run, a
    /// run's forward rows and then its backward ones, the dual pass's loops vectorised but ran
    /// no faster on the 4-way poll of 100: docs/design/anytime.md.)
    lam: Vec<f32>,
    lam0: Vec<f32>,
    /// x̂ of the last T(z): in X exactly (as floats), the point the repair takes.
    xh: Vec<f32>,
    /// 2x̂ − x of the last T(z) (the point the dual step reads).
    y: Vec<f32>,
    /// Slot boundaries of the column chunks, and row boundaries of the edge chunks.
    column_chunks: Vec<usize>,
    row_chunks: Vec<usize>,
    /// Where the graph is banded in index order, the column blocks whose edges the dual pass
    /// takes in two waves, accumulating Dᵀλ at both ends ([`Waves`]); `None` elsewhere.
    waves: Option<Waves>,
    /// Dᵀλ on the slots, accumulated by the last dual pass (zeroed by the primal pass that reads
    /// it); `fresh` while λ has not changed since.
    applied: Vec<f32>,
    fresh: bool,
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
fn split_at_bounds<'d, T>(mut data: &'d mut [T], bounds: &[usize]) -> Vec<&'d mut [T]> {
    let mut parts = Vec::with_capacity(bounds.len().saturating_sub(1));
    for w in bounds.windows(2) {
        let (head, tail) = std::mem::take(&mut data).split_at_mut(w[1] - w[0]);
        parts.push(head);
        data = tail;
    }
    parts
}

/// What the dual step of a range of edges reads.
struct DualStep<'s> {
    rho: f32,
    sigma_scale: f32,
    w1: f32,
    w0: f32,
    y: &'s [f32],
    lam0: &'s [f32],
    sigma_base: &'s [f32],
    support: &'s Support,
}

impl DualStep<'_> {
    /// The dual step on `edges`, whose rows are `lam` (starting at row `row_offset`); with
    /// `ACCUMULATE`, the new rows' Dᵀλ added into `applied` (its slots starting at
    /// `slot_offset`). Returns the dual part of ‖z − T(z)‖² with `RESIDUAL`.
    #[inline(always)]
    fn edges<const RESIDUAL: bool, const ACCUMULATE: bool>(
        &self,
        edges: Range<usize>,
        (lam, row_offset): (&mut [f32], usize),
        (applied, slot_offset): (&mut [f32], usize),
    ) -> f64 {
        let (rho, w1, w0) = (self.rho, self.w1, self.w0);
        let mut res = 0f64;
        for (e, &base) in edges.clone().zip(&self.sigma_base[edges]) {
            let sigma = self.sigma_scale * base;
            let (mut p, runs) = self.support.runs_of(e);
            let mut d = 0f32;
            for run in runs {
                let len = run.len as usize;
                let (ya, yb) = (&self.y[run.at_a as usize..][..len], &self.y[run.at_b as usize..][..len]);
                let rows = &mut lam[2 * p - row_offset..][..2 * len];
                let anchors = &self.lam0[2 * p..][..2 * len];
                for (((l, l0), &ya), &yb) in rows.chunks_exact_mut(2).zip(anchors.chunks_exact(2)).zip(ya).zip(yb) {
                    let (fwd, bwd) = (l[0], l[1]);
                    let h0 = (fwd + sigma * (ya - rho * yb)).max(0.0);
                    let h1 = (bwd + sigma * (yb - rho * ya)).max(0.0);
                    if RESIDUAL {
                        d += (fwd - h0) * (fwd - h0) + (bwd - h1) * (bwd - h1);
                    }
                    l[0] = flush(w1 * ((1.0 + REFLECTION) * h0 - REFLECTION * fwd) + w0 * l0[0]);
                    l[1] = flush(w1 * ((1.0 + REFLECTION) * h1 - REFLECTION * bwd) + w0 * l0[1]);
                }
                if ACCUMULATE {
                    let (at_a, at_b) = (run.at_a as usize - slot_offset, run.at_b as usize - slot_offset);
                    let (applied_a, applied_b) = if at_a < at_b {
                        let (head, tail) = applied.split_at_mut(at_b);
                        (&mut head[at_a..at_a + len], &mut tail[..len])
                    } else {
                        let (head, tail) = applied.split_at_mut(at_a);
                        (&mut tail[..len], &mut head[at_b..at_b + len])
                    };
                    for ((l, da), db) in rows.chunks_exact(2).zip(applied_a.iter_mut()).zip(applied_b.iter_mut()) {
                        *da += l[0] - rho * l[1];
                        *db += l[1] - rho * l[0];
                    }
                }
                p += len;
            }
            if RESIDUAL {
                res += d as f64 / sigma as f64;
            }
        }
        res
    }
}

/// Blocks of consecutive columns for the dual pass's accumulation of Dᵀλ, on a graph whose
/// edges are sorted by their lower end and span fewer columns than a block: an edge belongs to
/// the block of its lower end, so its two ends lie in that block or the next, and blocks two
/// apart write disjoint columns. The lattices of the multinomial families are such graphs (a
/// d-category poll of K records spans about the points of a (d − 2)-dimensional layer).
struct Waves {
    /// Block k holds the edges [edge_bounds\[k\], edge_bounds\[k + 1\]) ...
    edge_bounds: Vec<usize>,
    /// ... their kept rows from row_bounds\[k\] ...
    row_bounds: Vec<usize>,
    /// ... and the slots of its columns from slot_bounds\[k\] (one past the last at the end).
    slot_bounds: Vec<usize>,
}

/// Waves are used where the graph cuts into at least this many blocks (fewer leave cores idle).
const MIN_BLOCKS: usize = 8;

impl Waves {
    /// The blocks of `incidence`'s graph, or `None` where it is not banded enough.
    fn of(incidence: &Incidence, support: &Support) -> Option<Waves> {
        let n = incidence.n_obs();
        let edges = incidence.edges();
        let lower = |&(a, b): &(u32, u32)| a.min(b) as usize;
        if edges.is_empty() || edges.windows(2).any(|w| lower(&w[0]) > lower(&w[1])) {
            return None;
        }
        let width = edges.iter().map(|&(a, b)| a.abs_diff(b) as usize).max().unwrap_or(0) + 1;
        let blocks = n.div_ceil(width);
        if blocks < MIN_BLOCKS || support.slots() == 0 {
            return None;
        }
        let column_bounds = (0..=blocks).map(|k| (k * width).min(n));
        let edge_bounds: Vec<usize> = column_bounds.clone().map(|c| edges.partition_point(|e| lower(e) < c)).collect();
        let row_bounds = edge_bounds.iter().map(|&e| 2 * support.pair_starts()[e]).collect();
        let slot_bounds = column_bounds.map(|c| support.column_starts()[c]).collect();
        Some(Waves { edge_bounds, row_bounds, slot_bounds })
    }

    fn blocks(&self) -> usize {
        self.edge_bounds.len() - 1
    }
}

/// ‖Σ^{1/2} D T^{1/2}‖ at η = ω = 1 (the primal weight cancels in the product of the steps): the
/// square root of the largest Ritz value of `iterations` Lanczos steps on the Gram operator
/// (Paige's form, no reorthogonalisation: the largest Ritz value needs none), from a fixed
/// pseudo-random start. Ritz values lie within the spectrum, so this is an estimate from below
/// that converges to the norm far faster than the power iteration where the spectrum is dense
/// at its top (a lattice's).
fn preconditioned_norm(
    incidence: &Incidence,
    support: &Support,
    rho: f64,
    (tau_base, sigma_base): (&[f32], &[f32]),
    (column_chunks, row_chunks): (&[usize], &[usize]),
    iterations: usize,
) -> f64 {
    let n = incidence.n_obs();
    let starts = support.column_starts();
    let edges = incidence.edges();
    let n_edges = incidence.n_edges();
    let mut u = vec![0f64; support.rows()];
    // w = AᵀA v, A = Σ^{1/2} D T^{1/2}: u = A v edge by edge, then Aᵀu column by column.
    let mut gram = |v: &[f64], w: &mut [f64]| {
        split_at_bounds(&mut u, row_chunks).into_par_iter().enumerate().for_each(|(chunk, u_chunk)| {
            let offset = row_chunks[chunk];
            for e in chunk * CHUNK..((chunk + 1) * CHUNK).min(n_edges) {
                let (a, b) = (edges[e].0 as usize, edges[e].1 as usize);
                let (ta, tb) = ((tau_base[a] as f64).sqrt(), (tau_base[b] as f64).sqrt());
                let s = (sigma_base[e] as f64).sqrt();
                let (p0, kept) = support.pairs_of(e);
                let rows = &mut u_chunk[2 * p0 - offset..2 * (p0 + kept.len()) - offset];
                for (&(sa, sb), r) in kept.iter().zip(rows.chunks_exact_mut(2)) {
                    let (va, vb) = (ta * v[sa as usize], tb * v[sb as usize]);
                    r[0] = s * (va - rho * vb);
                    r[1] = s * (vb - rho * va);
                }
            }
        });
        let u = &u;
        split_at_bounds(w, column_chunks).into_par_iter().enumerate().for_each(|(chunk, w_chunk)| {
            let offset = starts[chunk * CHUNK];
            for i in chunk * CHUNK..((chunk + 1) * CHUNK).min(n) {
                let lo = starts[i];
                let column = &mut w_chunk[lo - offset..starts[i + 1] - offset];
                column.fill(0.0);
                let t = (tau_base[i] as f64).sqrt();
                for &(own, _) in incidence.at(i) {
                    let e = own as usize / 2;
                    let s = t * (sigma_base[e] as f64).sqrt();
                    let (p0, kept) = support.pairs_of(e);
                    let rows = &u[2 * p0..2 * (p0 + kept.len())];
                    let at_a = edges[e].0 as usize == i;
                    for (&(sa, sb), r) in kept.iter().zip(rows.chunks_exact(2)) {
                        if at_a {
                            column[sa as usize - lo] += s * (r[0] - rho * r[1]);
                        } else {
                            column[sb as usize - lo] += s * (r[1] - rho * r[0]);
                        }
                    }
                }
            }
        });
    };
    let dot = |a: &[f64], b: &[f64]| a.par_iter().zip(b).map(|(x, y)| x * y).sum::<f64>();
    let slots = support.slots() as u64;
    let mut v: Vec<f64> = (0..slots)
        .map(|s| 0.5 + ((s.wrapping_add(1).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 11) as f64) / (1u64 << 53) as f64)
        .collect();
    let norm = dot(&v, &v).sqrt();
    v.par_iter_mut().for_each(|t| *t /= norm);
    let mut v_prev = vec![0f64; v.len()];
    let mut w = vec![0f64; v.len()];
    let (mut alphas, mut betas) = (Vec::new(), Vec::new());
    let mut beta = 0.0;
    for _ in 0..iterations {
        gram(&v, &mut w);
        let alpha = dot(&w, &v);
        w.par_iter_mut().zip(&v).zip(&v_prev).for_each(|((w, &v), &p)| *w -= alpha * v + beta * p);
        alphas.push(alpha);
        beta = dot(&w, &w).sqrt();
        if beta <= 1e-12 * alpha.abs().max(1e-300) {
            break;
        }
        betas.push(beta);
        std::mem::swap(&mut v_prev, &mut v);
        v.par_iter_mut().zip(&w).for_each(|(v, &w)| *v = w / beta);
    }
    betas.truncate(alphas.len().saturating_sub(1));
    largest_eigenvalue(&alphas, &betas).max(0.0).sqrt()
}

/// The largest eigenvalue of the symmetric tridiagonal matrix with diagonal `alpha` and
/// off-diagonal `beta`, by bisection on Sturm counts within the Gershgorin interval.
fn largest_eigenvalue(alpha: &[f64], beta: &[f64]) -> f64 {
    if alpha.is_empty() {
        return 0.0;
    }
    let radius = |i: usize| beta.get(i).map_or(0.0, |b| b.abs()) + if i > 0 { beta[i - 1].abs() } else { 0.0 };
    let (mut lo, mut hi) = (0..alpha.len()).fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), i| {
        (l.min(alpha[i] - radius(i)), h.max(alpha[i] + radius(i)))
    });
    // Eigenvalues above x: the sign changes of the LDLᵀ pivots of T − x.
    let above = |x: f64| {
        let (mut d, mut count) = (1.0f64, 0);
        for i in 0..alpha.len() {
            let b2 = if i > 0 { beta[i - 1] * beta[i - 1] } else { 0.0 };
            d = alpha[i] - x - if i > 0 { b2 / d } else { 0.0 };
            if d == 0.0 {
                d = -1e-300;
            }
            if d > 0.0 {
                count += 1;
            }
        }
        count
    };
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if mid <= lo || mid >= hi {
            break;
        }
        if above(mid) > 0 {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    hi
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
        let norm = preconditioned_norm(
            incidence,
            support,
            rho as f64,
            (&tau_base, &sigma_base),
            (&column_chunks, &row_chunks),
            NORM_ITERATIONS,
        );
        // A Ritz value is at most the norm; the floor keeps a failed estimate from inflating the
        // steps past twice the Schur test's.
        let step = if norm.is_finite() && norm > 0.0 { (ETA as f64 / norm.max(0.5)) as f32 } else { ETA };
        Pdhg {
            incidence,
            support,
            rho,
            cost,
            tau_base,
            sigma_base,
            omega,
            step,
            x0: x.clone(),
            xh: x.clone(),
            y: x.clone(),
            x,
            lam0: lam.clone(),
            lam,
            column_chunks,
            row_chunks,
            waves: Waves::of(incidence, support),
            applied: vec![0f32; support.slots()],
            fresh: false,
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
        self.fresh = false;
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

    /// One iteration. The fixed-point residual ‖z − T(z)‖ (diagonal-weighted norm) that the
    /// restart criteria read is computed at every [`RESIDUAL_EVERY`]th iteration only (as
    /// cuPDLPx evaluates them): without it the passes' loops have no reduction and vectorise.
    pub(crate) fn step(&mut self) {
        self.j += 1;
        self.iterations += 1;
        if self.iterations % RESIDUAL_EVERY == 0 {
            let residual = self.pass::<true>();
            self.maybe_restart(residual);
            self.last_residual = residual;
        } else {
            self.pass::<false>();
        }
    }

    /// The passes of one iteration (the Halpern weights of iteration j − 1 since the restart);
    /// with `RESIDUAL`, ‖z − T(z)‖, else 0.
    fn pass<const RESIDUAL: bool>(&mut self) -> f64 {
        let primal_res = self.primal_pass::<RESIDUAL>();
        let dual_res = match self.waves.is_some() {
            true => self.dual_pass_in_waves::<RESIDUAL>(),
            false => self.dual_pass::<RESIDUAL>(),
        };
        (primal_res + dual_res).sqrt()
    }

    /// The primal pass, column by column: x̂ = Π_X(x − τ(c + Dᵀλ)), y = 2x̂ − x for the dual
    /// step, and the Halpern step on x (which needs nothing but the column). Dᵀλ is the last dual
    /// pass's accumulation where it is fresh (then zeroed for the next), else gathered from the
    /// rows at the column's edges. Returns the primal part of ‖z − T(z)‖² with `RESIDUAL`.
    fn primal_pass<const RESIDUAL: bool>(&mut self) -> f64 {
        let rho = self.rho;
        let tau_scale = self.step / self.omega;
        let (w1, w0) = self.halpern_weights();
        let (inc, support) = (self.incidence, self.support);
        let n = inc.n_obs();
        let edges = inc.edges();
        let starts = support.column_starts();
        let lam = &self.lam;
        let accumulated = self.fresh;
        let (cost, tau_base, x0) = (&self.cost, &self.tau_base, &self.x0);
        let columns = split_at_bounds(&mut self.x, &self.column_chunks)
            .into_iter()
            .zip(split_at_bounds(&mut self.xh, &self.column_chunks))
            .zip(split_at_bounds(&mut self.y, &self.column_chunks))
            .zip(split_at_bounds(&mut self.applied, &self.column_chunks));
        columns
            .collect::<Vec<_>>()
            .into_par_iter()
            .enumerate()
            .map(|(chunk, (((x_chunk, xh_chunk), y_chunk), applied_chunk))| {
                let mut g = Vec::new();
                let mut res = 0f64;
                let first_column = chunk * CHUNK;
                let offset = starts[first_column];
                for i in first_column..(first_column + CHUNK).min(n) {
                    let (lo, hi) = (starts[i], starts[i + 1]);
                    let (a, b) = (lo - offset, hi - offset);
                    g.clear();
                    g.extend_from_slice(&cost[lo..hi]);
                    let applied = &mut applied_chunk[a..b];
                    if accumulated {
                        for (gk, d) in g.iter_mut().zip(applied.iter_mut()) {
                            *gk += *d;
                            *d = 0.0;
                        }
                    } else {
                        applied.fill(0.0);
                        for &(own, _) in inc.at(i) {
                            let e = own as usize / 2;
                            let (mut p, runs) = support.runs_of(e);
                            let at_a = edges[e].0 as usize == i;
                            for run in runs {
                                let len = run.len as usize;
                                // At a: forward − ρ·backward; at b: backward − ρ·forward.
                                let rows = &lam[2 * p..2 * (p + len)];
                                let first = if at_a { run.at_a } else { run.at_b } as usize - lo;
                                let g_run = &mut g[first..first + len];
                                if at_a {
                                    for (gk, l) in g_run.iter_mut().zip(rows.chunks_exact(2)) {
                                        *gk += l[0] - rho * l[1];
                                    }
                                } else {
                                    for (gk, l) in g_run.iter_mut().zip(rows.chunks_exact(2)) {
                                        *gk += l[1] - rho * l[0];
                                    }
                                }
                                p += len;
                            }
                        }
                    }
                    let tau = tau_scale * tau_base[i];
                    let (xc, xh_col, y_col) = (&mut x_chunk[a..b], &mut xh_chunk[a..b], &mut y_chunk[a..b]);
                    for ((xh, &x), &gk) in xh_col.iter_mut().zip(xc.iter()).zip(&g) {
                        *xh = x - tau * gk;
                    }
                    project_simplex(xh_col);
                    if RESIDUAL {
                        let d: f32 = xc.iter().zip(xh_col.iter()).map(|(&x, &h)| (x - h) * (x - h)).sum();
                        res += d as f64 / tau as f64;
                    }
                    for (((x, &h), yk), &anchor) in
                        xc.iter_mut().zip(xh_col.iter()).zip(y_col.iter_mut()).zip(&x0[lo..hi])
                    {
                        *yk = flush(2.0 * h - *x);
                        *x = flush(w1 * ((1.0 + REFLECTION) * h - REFLECTION * *x) + w0 * anchor);
                    }
                }
                res
            })
            .sum()
    }

    /// The dual pass, edge by edge: λ̂ = max(0, λ + σ D y), then the Halpern step on λ. Returns
    /// the dual part of ‖z − T(z)‖² with `RESIDUAL`.
    fn dual_pass<const RESIDUAL: bool>(&mut self) -> f64 {
        let n_edges = self.incidence.n_edges();
        let (w1, w0) = self.halpern_weights();
        let (y, lam0, sigma_base, support) = (&self.y, &self.lam0, &self.sigma_base, self.support);
        let step =
            DualStep { rho: self.rho, sigma_scale: self.step * self.omega, w1, w0, y, lam0, sigma_base, support };
        let row_chunks = &self.row_chunks;
        self.fresh = false;
        split_at_bounds(&mut self.lam, row_chunks)
            .into_par_iter()
            .enumerate()
            .map(|(chunk, lam_chunk)| {
                let first_edge = chunk * CHUNK;
                let edges = first_edge..(first_edge + CHUNK).min(n_edges);
                step.edges::<RESIDUAL, false>(edges, (lam_chunk, row_chunks[chunk]), (&mut [], 0))
            })
            .sum()
    }

    /// The dual pass by [`Waves`]: the blocks of even index in parallel, then the odd ones; each
    /// block steps its edges' multipliers and adds their Dᵀλ at both ends into `applied`, which
    /// no other block of its wave touches.
    fn dual_pass_in_waves<const RESIDUAL: bool>(&mut self) -> f64 {
        let (w1, w0) = self.halpern_weights();
        let (y, lam0, sigma_base, support) = (&self.y, &self.lam0, &self.sigma_base, self.support);
        let step =
            DualStep { rho: self.rho, sigma_scale: self.step * self.omega, w1, w0, y, lam0, sigma_base, support };
        let waves = self.waves.as_ref().expect("the waves of a banded graph");
        let mut row_blocks = split_at_bounds(&mut self.lam, &waves.row_bounds);
        let mut res = 0.0;
        for parity in 0..2 {
            // Block k writes `applied` on the slots of its columns and the next block's: cut it
            // where the blocks of this wave start.
            let blocks: Vec<usize> = (parity..waves.blocks()).step_by(2).collect();
            let mut cuts: Vec<usize> = blocks.iter().map(|&k| waves.slot_bounds[k]).collect();
            cuts.push(support.slots());
            let head = cuts[0];
            let (_, tail) = self.applied.split_at_mut(head);
            let shifted: Vec<usize> = cuts.iter().map(|&c| c - head).collect();
            let segments = split_at_bounds(tail, &shifted);
            res += row_blocks
                .iter_mut()
                .skip(parity)
                .step_by(2)
                .zip(segments)
                .zip(blocks)
                .collect::<Vec<_>>()
                .into_par_iter()
                .map(|((lam_block, applied), k)| {
                    let edges = waves.edge_bounds[k]..waves.edge_bounds[k + 1];
                    let rows = (&mut **lam_block, waves.row_bounds[k]);
                    step.edges::<RESIDUAL, true>(edges, rows, (applied, waves.slot_bounds[k]))
                })
                .sum::<f64>();
        }
        self.fresh = true;
        res
    }

    /// The Halpern weights of this iteration, j/(j + 1) on the step and 1/(j + 1) on the anchor.
    fn halpern_weights(&self) -> (f32, f32) {
        (self.j as f32 / (self.j + 1) as f32, 1.0 / (self.j + 1) as f32)
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
        self.fresh = false;
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
    use crate::model::Neighbours;
    use ndarray::Array2;

    #[test]
    fn the_tridiagonal_eigenvalue_is_the_known_one() {
        // diag 2, off-diagonal −1 (n × n): eigenvalues 2 − 2 cos(jπ/(n+1)), the largest 2 + 2 cos(π/(n+1)).
        for n in [1usize, 2, 5, 40] {
            let (alpha, beta) = (vec![2.0; n], vec![-1.0; n - 1]);
            let expected = 2.0 + 2.0 * (std::f64::consts::PI / (n + 1) as f64).cos();
            let expected = if n == 1 { 2.0 } else { expected };
            assert!((largest_eigenvalue(&alpha, &beta) - expected).abs() < 1e-12, "n = {n}");
        }
    }

    #[test]
    fn the_norm_estimate_is_the_dense_operators_largest_singular_value_and_within_the_schur_bound() {
        // Small random graphs (a tree and chords), random positive weights for the rows' scales,
        // supports at reach 1 and the whole: the Lanczos estimate against the power iteration on the dense operator built from the support's pairs,
        // and below the Schur test's bound 1 that the diagonal steps are built on.
        let mut seed = 12345u64;
        let mut rnd = move || {
            seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            (seed >> 11) as f64 / (1u64 << 53) as f64
        };
        for case in 0..6 {
            let n = 8 + (rnd() * 10.0) as usize;
            let m = 3 + (rnd() * 4.0) as usize;
            let mut edges: Vec<(usize, usize)> = (1..n).map(|j| ((rnd() * j as f64) as usize, j)).collect();
            for _ in 0..n / 2 {
                let (a, b) = ((rnd() * n as f64) as usize, (rnd() * n as f64) as usize);
                if a != b && !edges.contains(&(a.min(b), a.max(b))) && !edges.contains(&(a.max(b), a.min(b))) {
                    edges.push((a.min(b), a.max(b)));
                }
            }
            let incidence = Incidence::new(&Neighbours::Graph { len: n, edges }).unwrap();
            let cost = Array2::from_shape_fn((n, m), |_| 0.1 + rnd());
            let rho = [1.2f64, 1.65, 3.0][case % 3];
            let weight: Vec<f64> = (0..n).map(|_| 0.05 + rnd()).collect();
            let sigma_base: Vec<f32> = incidence
                .edges()
                .iter()
                .map(|&(a, b)| ((weight[a as usize] * weight[b as usize]).sqrt() / (1.0 + rho)) as f32)
                .collect();
            let tau_base: Vec<f32> = (0..n)
                .map(|i| {
                    let s: f64 =
                        incidence.at(i).iter().map(|&(own, _)| sigma_base[own as usize / 2] as f64 * (1.0 + rho)).sum();
                    if s > 0.0 {
                        (1.0 / ((1.0 + rho) * s)) as f32
                    } else {
                        1.0
                    }
                })
                .collect();
            for reach in [1, n] {
                let support = Support::near_rule(&cost, &incidence, reach).unwrap();
                let columns = [0, support.slots()];
                let rows = [0, support.rows()];
                let estimate =
                    preconditioned_norm(&incidence, &support, rho, (&tau_base, &sigma_base), (&columns, &rows), 60);
                // The dense operator A = Σ^{1/2} D T^{1/2}, row by row from the pairs.
                let column_of = |slot: usize| (0..n).find(|&i| support.column(i).contains(&slot)).unwrap();
                let mut a = Array2::<f64>::zeros((support.rows(), support.slots()));
                for (e, &base) in sigma_base.iter().enumerate() {
                    let (p0, kept) = support.pairs_of(e);
                    let s = (base as f64).sqrt();
                    for (p, &(sa, sb)) in (p0..).zip(kept) {
                        let (sa, sb) = (sa as usize, sb as usize);
                        let (ta, tb) =
                            ((tau_base[column_of(sa)] as f64).sqrt(), (tau_base[column_of(sb)] as f64).sqrt());
                        a[[2 * p, sa]] += s * ta;
                        a[[2 * p, sb]] -= s * rho * tb;
                        a[[2 * p + 1, sb]] += s * tb;
                        a[[2 * p + 1, sa]] -= s * rho * ta;
                    }
                }
                let gram = a.t().dot(&a);
                let mut v = ndarray::Array1::from_shape_fn(support.slots(), |j| 1.0 + 0.1 * (j as f64).sin());
                let mut power = 0.0;
                for _ in 0..5000 {
                    let w = gram.dot(&v);
                    power = w.dot(&v) / v.dot(&v);
                    v = &w / w.dot(&w).sqrt();
                }
                let power = power.sqrt();
                assert!((estimate - power).abs() <= 1e-6 * power, "case {case}, reach {reach}: {estimate} vs {power}");
                assert!(estimate <= 1.0 + 1e-9, "case {case}, reach {reach}: {estimate} above the Schur test's 1");
            }
        }
    }

    #[test]
    fn the_dual_pass_in_waves_steps_as_the_gathering_one_does() {
        // A 3-way poll of 40 (861 observations in a band of about 41 columns) with random
        // costs: the iteration with Dᵀλ accumulated in waves and the one gathering it from the
        // rows stay together through restarts and a restart from outside multipliers.
        let spec = "name = \"lattice\"\nepsilon = [0.5]\n[parameter]\ngrid = { kind = \"simplex\", resolution = 3 }\nprior = { kind = \"dirichlet\", alpha = [1.0, 2.0, 3.0] }\n[observation]\nfamily = \"multinomial\"\ncategories = 3\nrecords = 40\n[output]\ngrid = \"parameter\"\n[loss]\nkind = \"squared-euclidean\"\n";
        let model =
            crate::model::Model::from_spec(crate::model::ModelSpec::from_toml(spec, "lattice.toml").unwrap()).unwrap();
        let incidence = Incidence::new(&model.family.neighbours()).unwrap();
        let n = incidence.n_obs();
        let mut seed = 99u64;
        let mut rnd = move || {
            seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            (seed >> 11) as f64 / (1u64 << 53) as f64
        };
        let cost = Array2::from_shape_fn((n, 10), |_| 0.01 + rnd());
        let support = Support::near_rule(&cost, &incidence, 6).unwrap();
        assert!(Waves::of(&incidence, &support).is_some_and(|w| w.blocks() >= MIN_BLOCKS));
        let start = || {
            let (cost_scaled, x) = super::super::start_point(&cost, &support, 1.0);
            let lam = vec![0f32; support.rows()];
            Pdhg::new(&incidence, &support, 0.5, cost_scaled, (0.5, 10.0), x, lam)
        };
        let (mut in_waves, mut gathering) = (start(), start());
        gathering.waves = None;
        let close = |a: &[f32], b: &[f32]| {
            let scale = a.iter().fold(1e-6f32, |m, v| m.max(v.abs()));
            a.iter().zip(b).all(|(u, v)| (u - v).abs() <= 1e-4 * scale)
        };
        for round in 0..3 {
            for _ in 0..150 {
                in_waves.step();
                gathering.step();
            }
            assert!(in_waves.restarts > 0 && in_waves.restarts == gathering.restarts, "round {round}");
            assert!(close(in_waves.primal(), gathering.primal()), "round {round}: the primal points differ");
            assert!(close(in_waves.dual(), gathering.dual()), "round {round}: the multipliers differ");
            let outside: Vec<f32> = in_waves.dual().iter().map(|&l| 1.1 * l.max(0.0)).collect();
            in_waves.restart_with_dual(&outside);
            gathering.restart_with_dual(&outside);
        }
        // A graph whose edges are not sorted by their lower end gathers.
        let shuffled = Incidence::new(&Neighbours::Graph { len: 4, edges: vec![(2, 3), (0, 1), (1, 2)] }).unwrap();
        let small = Array2::from_shape_fn((4, 2), |(i, k)| (i + k) as f64);
        assert!(Waves::of(&shuffled, &Support::near_rule(&small, &shuffled, 4).unwrap()).is_none());
    }

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
