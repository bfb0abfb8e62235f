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

use crate::lp::Incidence;

/// Observations per parallel task (a task's work is about this many columns of |Θ̃| outputs).
const CHUNK: usize = 256;

/// The step-size safety factor η (< 1: the preconditioned operator's norm is ≤ 1).
const ETA: f32 = 0.95;

/// The reflection coefficient γ of the Halpern step.
const REFLECTION: f32 = 1.0;

/// The iterate and everything one iteration needs.
pub(crate) struct Pdhg<'a> {
    incidence: &'a Incidence,
    /// |Θ̃|.
    m: usize,
    /// e^ε (as f32).
    rho: f32,
    /// Scaled costs, x's layout (column i contiguous).
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

impl<'a> Pdhg<'a> {
    /// A start from x (column-stochastic, x's layout) and λ (DP-row layout, ≥ 0), with scaled
    /// costs `cost` (x's layout).
    pub(crate) fn new(
        incidence: &'a Incidence,
        m: usize,
        eps: f64,
        cost: Vec<f32>,
        x: Vec<f32>,
        lam: Vec<f32>,
    ) -> Self {
        let rho = eps.exp() as f32;
        let n = incidence.n_obs();
        debug_assert_eq!(x.len(), n * m);
        debug_assert_eq!(lam.len(), 2 * incidence.n_edges() * m);
        // Each column's weight w_i (its non-private scaled cost, floored): the multipliers near
        // column i are of its order, so the DP rows of edge (a, b) are scaled by
        // s_e = √(w_a w_b) before Pock–Chambolle's diagonal steps (α = 1) are taken:
        // σ_e = s_e/(1+ρ) for λ, τ_i = 1/((1+ρ) Σ_{e ∋ i} s_e).
        let mean = cost.iter().map(|&c| c as f64).sum::<f64>() / cost.len().max(1) as f64;
        let floor = (1e-3 * mean).max(1e-30) as f32;
        let weight: Vec<f32> =
            cost.chunks(m).map(|col| col.iter().copied().fold(f32::INFINITY, f32::min).max(floor)).collect();
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
        let omega = (0.1 * norm(&cost) / norm(&x).max(1e-30) / mean_scale.max(1e-30)).clamp(1e-4, 1e6) as f32;
        Pdhg {
            incidence,
            m,
            rho,
            cost,
            tau_base,
            sigma_base,
            omega,
            x0: x.clone(),
            xh: x.clone(),
            x,
            lam0: lam.clone(),
            lam,
            j: 0,
            iterations: 0,
            restarts: 0,
            residual_at_restart: f64::INFINITY,
            last_residual: f64::INFINITY,
            restart_iteration: 0,
        }
    }

    /// The last x̂ (column-stochastic, possibly not ε-DP).
    pub(crate) fn primal(&self) -> &[f32] {
        &self.xh
    }

    /// The current multipliers (negative entries, which a reflected step may leave, read as 0 by
    /// the bound).
    pub(crate) fn dual(&self) -> &[f32] {
        &self.lam
    }

    /// One iteration; returns the fixed-point residual ‖z − T(z)‖ (diagonal-weighted norm).
    pub(crate) fn step(&mut self) -> f64 {
        let m = self.m;
        let rho = self.rho;
        let tau_scale = ETA / self.omega;
        let sigma_scale = ETA * self.omega;
        let w1 = (self.j + 1) as f32 / (self.j + 2) as f32;
        let w0 = 1.0 / (self.j + 2) as f32;
        let inc = self.incidence;

        // Pass A: x̂ = Π_X(x − τ(c + Dᵀλ)), column by column.
        let lam = &self.lam;
        let (x, cost, tau_base) = (&self.x, &self.cost, &self.tau_base);
        let primal_res: f64 = self
            .xh
            .par_chunks_mut(CHUNK * m)
            .enumerate()
            .map(|(chunk, xh_chunk)| {
                let mut g = vec![0f32; m];
                let mut res = 0f64;
                for (local, xh_col) in xh_chunk.chunks_mut(m).enumerate() {
                    let i = chunk * CHUNK + local;
                    let base = i * m;
                    g.copy_from_slice(&cost[base..base + m]);
                    for &(own, other) in inc.at(i) {
                        let (lo, lt) = (&lam[own as usize * m..][..m], &lam[other as usize * m..][..m]);
                        for k in 0..m {
                            g[k] += lo[k] - rho * lt[k];
                        }
                    }
                    let tau = tau_scale * tau_base[i];
                    let xc = &x[base..base + m];
                    for k in 0..m {
                        xh_col[k] = xc[k] - tau * g[k];
                    }
                    project_simplex(xh_col);
                    let mut d = 0f32;
                    for k in 0..m {
                        let t = xc[k] - xh_col[k];
                        d += t * t;
                    }
                    res += d as f64 / tau as f64;
                }
                res
            })
            .sum();

        // Pass B: λ̂ = max(0, λ + σ D(2x̂ − x)), then the Halpern step on λ, edge by edge.
        let (xh, x) = (&self.xh, &self.x);
        let lam0 = &self.lam0;
        let edges = inc.edges();
        let sigma_base = &self.sigma_base;
        let dual_res: f64 = self
            .lam
            .par_chunks_mut(2 * m * CHUNK)
            .enumerate()
            .map(|(chunk, lam_chunk)| {
                let mut res = 0f64;
                for (local, pair) in lam_chunk.chunks_mut(2 * m).enumerate() {
                    let e = chunk * CHUNK + local;
                    let sigma = sigma_scale * sigma_base[e];
                    let (a, b) = (edges[e].0 as usize * m, edges[e].1 as usize * m);
                    let anchor = &lam0[2 * e * m..][..2 * m];
                    let (xa, xha, xb, xhb) = (&x[a..a + m], &xh[a..a + m], &x[b..b + m], &xh[b..b + m]);
                    let (fwd, bwd) = pair.split_at_mut(m);
                    let mut d = 0f32;
                    for k in 0..m {
                        let (ya, yb) = (2.0 * xha[k] - xa[k], 2.0 * xhb[k] - xb[k]);
                        let h0 = (fwd[k] + sigma * (ya - rho * yb)).max(0.0);
                        let h1 = (bwd[k] + sigma * (yb - rho * ya)).max(0.0);
                        let (t0, t1) = (fwd[k] - h0, bwd[k] - h1);
                        d += t0 * t0 + t1 * t1;
                        fwd[k] = w1 * ((1.0 + REFLECTION) * h0 - REFLECTION * fwd[k]) + w0 * anchor[k];
                        bwd[k] = w1 * ((1.0 + REFLECTION) * h1 - REFLECTION * bwd[k]) + w0 * anchor[m + k];
                    }
                    res += d as f64 / sigma as f64;
                }
                res
            })
            .sum();

        // Pass C: the Halpern step on x.
        let (xh, x0) = (&self.xh, &self.x0);
        self.x.par_chunks_mut(CHUNK * m).enumerate().for_each(|(chunk, x_chunk)| {
            let base = chunk * CHUNK * m;
            for (t, v) in x_chunk.iter_mut().enumerate() {
                *v = w1 * ((1.0 + REFLECTION) * xh[base + t] - REFLECTION * *v) + w0 * x0[base + t];
            }
        });

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
        self.x0.copy_from_slice(&self.x);
        self.lam.par_iter_mut().for_each(|v| *v = v.max(0.0));
        self.lam0.par_iter_mut().zip(self.lam.par_iter()).for_each(|(a, b)| *a = *b);
        self.j = 0;
        self.restarts += 1;
        self.restart_iteration = self.iterations;
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
        *x = (*x - theta).max(0.0);
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
