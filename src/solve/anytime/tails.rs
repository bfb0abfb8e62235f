//! Multipliers for the DP rows beyond the support, so that the outputs the iteration leaves out
//! do not cap the proven bound.
//!
//! The support's program has no rows where output k is left out, so its multipliers leave the
//! plain cost c\[k,i\] there; where that is below the least reduced cost m̂_i over column i's kept
//! outputs, the left-out output sets the column's minimum and caps the bound (on the 4-way poll
//! of 100 at 20 hops, 2,504 of 176,851 columns held the bound 1.1 % below Σ_i m̂_i). In an
//! optimum every entry is positive, so every reduced cost meets its column's minimum: the tails
//! are priced by rows pointing inwards. A row P\[k,i\] ≤ e^ε P\[k,j\] with multiplier μ raises (k,i)'s
//! reduced cost by μ and lowers (k,j)'s by e^ε μ, so an entry short of m̂_i borrows from its
//! neighbours one hop further from k's kept observations (breadth-first layers), who may borrow
//! in turn from the next layer. What each can lend is computed first, inwards from the last
//! layer (its spare above its own m̂ and what it can borrow, over e^ε); the loans then go outwards
//! within those capacities, so no entry falls below its column's m̂ unless it was short already,
//! and the bound with the rows is at least the bound without (borrowing the whole need regardless
//! multiplies it by e^ε a layer; on the 4-way poll that drove the bound below zero). Any μ ≥ 0
//! gives a bound, so none of this needs to be exact: the bound with these rows is proven like any
//! other (`certify::exact_support_bound`).

use ndarray::Array2;
use rayon::prelude::*;

use crate::certify::TailRows;
use crate::lp::{Incidence, Support};

/// An entry borrows this much (relative) above m̂_i, so that the directed rounding of the proven
/// bound leaves it at or above m̂_i.
const MARGIN: f64 = 1e-12;

/// The rows beyond `support` that lift its left-out entries to their columns' least kept reduced
/// cost, under the support's multipliers μ = `scale`·`lam` (unscaled costs `cost`, C\[i, k\]).
pub(crate) fn tail_rows(
    cost: &Array2<f64>,
    incidence: &Incidence,
    support: &Support,
    eps: f64,
    lam: &[f32],
    scale: f64,
) -> TailRows {
    TailRows::new(cost.nrows(), &tail_row_list(cost, incidence, support, eps, lam, scale))
}

/// [`tail_rows`] as a list of rows (i, j, k, μ): P\[k,i\] ≤ e^ε P\[k,j\] with multiplier μ.
pub(crate) fn tail_row_list(
    cost: &Array2<f64>,
    incidence: &Incidence,
    support: &Support,
    eps: f64,
    lam: &[f32],
    scale: f64,
) -> Vec<(u32, u32, u32, f64)> {
    let (n_obs, n_out) = cost.dim();
    let kept_least = kept_minima(cost, incidence, support, eps, lam, scale);
    // Each output's kept observations (the support's columns transposed).
    let mut kept: Vec<Vec<u32>> = vec![Vec::new(); n_out];
    for i in 0..n_obs {
        for s in support.column(i) {
            kept[support.outputs()[s] as usize].push(i as u32);
        }
    }
    let rho = eps.exp();
    kept.par_iter()
        .enumerate()
        .map_init(
            || Scratch::new(n_obs),
            |scratch, (k, sources)| {
                let target = |o: usize| kept_least[o] + MARGIN * kept_least[o].abs();
                // What (k, o) has to spare above its column's target before it lends (negative
                // where it is short itself).
                let spare = |o: usize| cost[[o, k]] - target(o);
                let layers = scratch.layers(incidence, k as u32, sources, |o| spare(o) < 0.0);
                let depth_of = |scratch: &Scratch, o: usize| scratch.depth_of(o, k as u32);
                // Inwards: what each entry can lend in all, borrowing in turn what its outer
                // neighbours can lend it (each splits its capacity evenly among its inner ones).
                for d in (1..layers.len()).rev() {
                    for &o in &layers[d] {
                        let o = o as usize;
                        let mut can_borrow = 0.0;
                        for &(own, _) in incidence.at(o) {
                            let p = incidence.neighbour(o, own);
                            if depth_of(scratch, p) == Some(d + 1) {
                                can_borrow += scratch.lendable[p] / scratch.inner[p] as f64;
                            }
                        }
                        scratch.can_borrow[o] = can_borrow;
                        scratch.lendable[o] = (spare(o) + can_borrow).max(0.0) / rho;
                        scratch.lent[o] = 0.0;
                    }
                }
                // Outwards: each short entry borrows what it lacks, as far as its outer
                // neighbours can lend, in proportion to their shares.
                let mut rows = Vec::new();
                for (d, layer) in layers.iter().enumerate().skip(1) {
                    for &j in layer {
                        let j = j as usize;
                        let need = -(spare(j) - rho * scratch.lent[j]);
                        let can = scratch.can_borrow[j];
                        if need.is_nan() || need <= 0.0 || can <= 0.0 {
                            continue;
                        }
                        let borrow = need.min(can);
                        for &(own, _) in incidence.at(j) {
                            let p = incidence.neighbour(j, own);
                            if depth_of(scratch, p) == Some(d + 1) {
                                let mu = borrow * (scratch.lendable[p] / scratch.inner[p] as f64) / can;
                                if mu > 0.0 {
                                    rows.push((j as u32, p as u32, k as u32, mu));
                                    scratch.lent[p] += mu;
                                }
                            }
                        }
                    }
                }
                rows
            },
        )
        .flatten()
        .collect()
}

/// How many layers past the last one with a short entry the capacities are drawn from (each
/// layer's loan reaches the one inside it divided by e^ε).
const LAYERS_PAST_SHORT: usize = 6;

/// One worker's marks, by observation: the breadth-first depth from the output's kept
/// observations (valid where `stamp` names the output), the inner neighbours (one depth less),
/// what it can lend inwards in all, what its outer neighbours can lend it, and what it has lent.
struct Scratch {
    stamp: Vec<u32>,
    depth: Vec<u32>,
    inner: Vec<u32>,
    lendable: Vec<f64>,
    can_borrow: Vec<f64>,
    lent: Vec<f64>,
}

impl Scratch {
    fn new(n: usize) -> Scratch {
        Scratch {
            stamp: vec![u32::MAX; n],
            depth: vec![0; n],
            inner: vec![0; n],
            lendable: vec![0.0; n],
            can_borrow: vec![0.0; n],
            lent: vec![0.0; n],
        }
    }

    fn depth_of(&self, o: usize, k: u32) -> Option<usize> {
        (self.stamp[o] == k).then_some(self.depth[o] as usize)
    }

    /// The layers of output `k`'s left-out observations by hops from `sources` (layer 0), up to
    /// [`LAYERS_PAST_SHORT`] past the last with an entry `short`; each marked with its depth and
    /// its inner neighbours' count.
    fn layers(
        &mut self,
        incidence: &Incidence,
        k: u32,
        sources: &[u32],
        short: impl Fn(usize) -> bool,
    ) -> Vec<Vec<u32>> {
        for &i in sources {
            self.stamp[i as usize] = k;
            self.depth[i as usize] = 0;
        }
        let mut layers = vec![sources.to_vec()];
        let mut last_short = 0;
        while layers.len() <= last_short + LAYERS_PAST_SHORT {
            let d = layers.len() as u32;
            let mut next = Vec::new();
            for &i in &layers[d as usize - 1] {
                for &(own, _) in incidence.at(i as usize) {
                    let j = incidence.neighbour(i as usize, own);
                    if self.stamp[j] != k {
                        self.stamp[j] = k;
                        self.depth[j] = d;
                        self.inner[j] = 0;
                        next.push(j as u32);
                    }
                    if self.depth[j] == d {
                        self.inner[j] += 1;
                    }
                }
            }
            if next.is_empty() {
                break;
            }
            if next.iter().any(|&j| short(j as usize)) {
                last_short = d as usize;
            }
            layers.push(next);
        }
        // The last layer's outer neighbours are unmarked: it borrows nothing.
        layers
    }
}

/// The least reduced cost over each column's kept outputs under the support's multipliers
/// μ = `scale`·`lam` (floats, unproven: a target only).
fn kept_minima(
    cost: &Array2<f64>,
    incidence: &Incidence,
    support: &Support,
    eps: f64,
    lam: &[f32],
    scale: f64,
) -> Vec<f64> {
    let slot =
        super::ascent::slot_reduced_costs(cost, incidence, support, eps.exp(), |r| (lam[r] as f64).max(0.0) * scale);
    (0..cost.nrows()).map(|i| support.column(i).map(|s| slot[s]).fold(f64::INFINITY, f64::min)).collect()
}
