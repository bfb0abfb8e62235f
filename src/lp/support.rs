//! The outputs each observation keeps in a matrix-free iteration (its *support*), and the DP rows
//! between kept entries: what the anytime route iterates on instead of every (output,
//! observation) pair.
//!
//! An ε-DP mechanism's row k decays at most by ρ = e^ε a hop (P\[k,a\] ≥ ρ^(−1) P\[k,b\]), and an
//! optimal one spends its probability near where output k is the non-private Bayes choice: a
//! distance of `reach` hops from there weighs a row by ρ^(−reach) against it. Output k is kept
//! at observation i where i is within `reach` hops of an observation whose cheapest output is k;
//! an output that is nowhere the cheapest in a component of the graph is kept throughout it. This is a choice of where to
//! iterate, not a theorem: an optimum that uses an output far from its region is approached
//! only as far as the repair's lift of the truncated tails allows, and the certified gap shows
//! it.
//! The rows kept are those of an edge whose two ends both keep k; a row with one end outside is
//! dropped (the iterate is a relaxation there, and its tails are filled in by the certification's
//! lift). Nothing certified depends on the support: the bound prices every output, the
//! mechanism is repaired over every output.
//!
//! Layout: column i's entries (slots) are `start[i]..start[i + 1]`, ascending in output; edge
//! e's kept pairs are `pair_start[e]..pair_start[e + 1]`, each (slot at a, slot at b) of one
//! output, with two DP rows: 2p bounds the slot at a (P\[k,a\] ≤ ρ P\[k,b\]), 2p + 1 the reverse.

use std::ops::Range;

use ndarray::Array2;
use rayon::prelude::*;

use super::Incidence;

/// The observations of each connected component of `incidence`'s graph.
fn components(incidence: &Incidence) -> Vec<Vec<u32>> {
    let n = incidence.n_obs();
    let mut seen = vec![false; n];
    let mut components = Vec::new();
    for root in 0..n {
        if seen[root] {
            continue;
        }
        seen[root] = true;
        let mut members = vec![root as u32];
        let mut next = 0;
        while next < members.len() {
            let i = members[next] as usize;
            next += 1;
            for &(own, _) in incidence.at(i) {
                let j = incidence.neighbour(i, own);
                if !seen[j] {
                    seen[j] = true;
                    members.push(j as u32);
                }
            }
        }
        components.push(members);
    }
    components
}

/// The non-private Bayes rule under `cost` (C\[i, k\]): each observation's output of least cost
/// (the first on ties).
pub(crate) fn non_private_rule(cost: &Array2<f64>) -> Vec<u32> {
    cost.outer_iter()
        .map(|row| row.iter().enumerate().fold(0, |b, (k, &c)| if c < row[b] { k } else { b }) as u32)
        .collect()
}

/// The hops from each observation to the nearest one next to a change of `rule` (0 there), by
/// a breadth-first search from those observations; `usize::MAX` beyond `reach` hops and where the
/// rule is constant on a component.
pub(crate) fn rule_change_distance(rule: &[u32], incidence: &Incidence, reach: usize) -> Vec<usize> {
    let n = incidence.n_obs();
    let mut distance = vec![usize::MAX; n];
    let mut frontier: Vec<usize> = (0..n)
        .filter(|&i| incidence.at(i).iter().any(|&(own, _)| rule[incidence.neighbour(i, own)] != rule[i]))
        .collect();
    for &i in &frontier {
        distance[i] = 0;
    }
    for hop in 1..=reach {
        let mut next = Vec::new();
        for &i in &frontier {
            for &(own, _) in incidence.at(i) {
                let j = incidence.neighbour(i, own);
                if distance[j] == usize::MAX {
                    distance[j] = hop;
                    next.push(j);
                }
            }
        }
        if next.is_empty() {
            break;
        }
        frontier = next;
    }
    distance
}

/// The outputs kept at each observation and the DP rows between them.
#[derive(Debug, Clone)]
pub(crate) struct Support {
    /// |Θ̃|.
    n_out: usize,
    /// Start of column i's slots (|Y| + 1 offsets).
    start: Vec<usize>,
    /// The output of each slot.
    output: Vec<u32>,
    /// Start of edge e's pairs (edges + 1 offsets).
    pair_start: Vec<usize>,
    /// (slot at a, slot at b) of each output kept at both ends of an edge (a, b).
    pairs: Vec<(u32, u32)>,
    /// Start of edge e's runs (edges + 1 offsets).
    run_start: Vec<usize>,
    /// The pairs again as runs of consecutive slots at both ends, edge by edge (the layout the
    /// iteration's batched loops read: a run's slots and rows are contiguous).
    runs: Vec<Run>,
}

/// `len` pairs of consecutive slots: (at_a + j, at_b + j) for j < len.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Run {
    pub(crate) at_a: u32,
    pub(crate) at_b: u32,
    pub(crate) len: u32,
}

impl Support {
    /// Every output at every observation (the whole program's rows).
    #[cfg(test)]
    pub(crate) fn full(incidence: &Incidence, n_out: usize) -> Option<Support> {
        let n = incidence.n_obs();
        let lists: Vec<Vec<u32>> = vec![(0..n_out as u32).collect(); n];
        Support::from_lists(incidence, n_out, &lists)
    }

    /// Output k kept at the observations within `reach` hops (over `incidence`) of one whose
    /// cheapest output under `cost` (C\[i, k\]) is k (throughout a component where it is nowhere the cheapest); `None` when the slots cannot be indexed by
    /// 32 bits.
    pub(crate) fn near_rule(cost: &Array2<f64>, incidence: &Incidence, reach: usize) -> Option<Support> {
        let (n, n_out) = cost.dim();
        let rule = non_private_rule(cost);
        let mut sources: Vec<Vec<u32>> = vec![Vec::new(); n_out];
        for (i, &k) in rule.iter().enumerate() {
            sources[k as usize].push(i as u32);
        }
        // An output that is nowhere the cheapest in a component of the graph (a compromise a
        // private mechanism may still use throughout it) is kept throughout that component.
        let components = components(incidence);
        let mut present = vec![false; n_out];
        for members in &components {
            present.fill(false);
            for &i in members {
                present[rule[i as usize] as usize] = true;
            }
            for (k, _) in present.iter().enumerate().filter(|(_, &p)| !p) {
                sources[k].extend_from_slice(members);
            }
        }
        // Breadth first from each output's region, `reach` hops (a stamp per observation, one
        // array per worker).
        let reached: Vec<Vec<u32>> = sources
            .par_iter()
            .enumerate()
            .map_init(
                || vec![u32::MAX; n],
                |stamp, (k, region)| {
                    let mut seen: Vec<u32> = region.clone();
                    for &i in region {
                        stamp[i as usize] = k as u32;
                    }
                    let mut frontier = region.clone();
                    for _ in 0..reach {
                        let mut next = Vec::new();
                        for &i in &frontier {
                            for &(own, _) in incidence.at(i as usize) {
                                let j = incidence.neighbour(i as usize, own);
                                if stamp[j] != k as u32 {
                                    stamp[j] = k as u32;
                                    next.push(j as u32);
                                }
                            }
                        }
                        if next.is_empty() {
                            break;
                        }
                        seen.extend_from_slice(&next);
                        frontier = next;
                    }
                    seen
                },
            )
            .collect();
        let mut lists: Vec<Vec<u32>> = vec![Vec::new(); n];
        for (k, seen) in reached.iter().enumerate() {
            for &i in seen {
                lists[i as usize].push(k as u32);
            }
        }
        Support::from_lists(incidence, n_out, &lists)
    }

    /// The non-private rule's depth under `cost` (C\[i, k\]): the most hops from an observation
    /// to the nearest one whose cheapest output differs (a multi-source breadth-first search from
    /// the rule's boundaries; 0 where the rule is constant on a component). About half the width
    /// of the rule's widest region.
    pub(crate) fn rule_depth(cost: &Array2<f64>, incidence: &Incidence) -> usize {
        let distance = rule_change_distance(&non_private_rule(cost), incidence, incidence.n_obs());
        distance.into_iter().filter(|&d| d != usize::MAX).max().unwrap_or(0)
    }

    /// The support of the (ascending) output lists of the columns.
    fn from_lists(incidence: &Incidence, n_out: usize, lists: &[Vec<u32>]) -> Option<Support> {
        let slots: usize = lists.iter().map(Vec::len).sum();
        if slots >= u32::MAX as usize {
            return None;
        }
        let mut start = Vec::with_capacity(lists.len() + 1);
        start.push(0);
        let mut output = Vec::with_capacity(slots);
        for list in lists {
            output.extend_from_slice(list);
            start.push(output.len());
        }
        let per_edge: Vec<Vec<(u32, u32)>> = incidence
            .edges()
            .par_iter()
            .map(|&(a, b)| {
                let (ra, rb) = (start[a as usize]..start[a as usize + 1], start[b as usize]..start[b as usize + 1]);
                let (oa, ob) = (&output[ra.clone()], &output[rb.clone()]);
                let (mut s, mut t) = (0, 0);
                let mut common = Vec::new();
                while s < oa.len() && t < ob.len() {
                    match oa[s].cmp(&ob[t]) {
                        std::cmp::Ordering::Less => s += 1,
                        std::cmp::Ordering::Greater => t += 1,
                        std::cmp::Ordering::Equal => {
                            common.push(((ra.start + s) as u32, (rb.start + t) as u32));
                            s += 1;
                            t += 1;
                        }
                    }
                }
                common
            })
            .collect();
        let mut pair_start = Vec::with_capacity(per_edge.len() + 1);
        let mut run_start = Vec::with_capacity(per_edge.len() + 1);
        pair_start.push(0);
        run_start.push(0);
        let mut pairs = Vec::with_capacity(per_edge.iter().map(Vec::len).sum());
        let mut runs: Vec<Run> = Vec::new();
        for common in per_edge {
            pairs.extend_from_slice(&common);
            pair_start.push(pairs.len());
            for (j, &(a, b)) in common.iter().enumerate() {
                match runs.last_mut() {
                    Some(r) if j > 0 && r.at_a + r.len == a && r.at_b + r.len == b => r.len += 1,
                    _ => runs.push(Run { at_a: a, at_b: b, len: 1 }),
                }
            }
            run_start.push(runs.len());
        }
        if 2 * pairs.len() >= u32::MAX as usize {
            return None;
        }
        runs.shrink_to_fit();
        Some(Support { n_out, start, output, pair_start, pairs, run_start, runs })
    }

    /// The slots (kept entries) in all.
    pub(crate) fn slots(&self) -> usize {
        self.output.len()
    }

    /// The DP rows kept (two per pair).
    pub(crate) fn rows(&self) -> usize {
        2 * self.pairs.len()
    }

    /// Column i's slots.
    pub(crate) fn column(&self, i: usize) -> Range<usize> {
        self.start[i]..self.start[i + 1]
    }

    /// The output of each slot.
    pub(crate) fn outputs(&self) -> &[u32] {
        &self.output
    }

    /// The first slot of each column, and one past the last.
    pub(crate) fn column_starts(&self) -> &[usize] {
        &self.start
    }

    /// Edge e's first pair index (its rows start at twice this), and one past the last edge's.
    pub(crate) fn pair_starts(&self) -> &[usize] {
        &self.pair_start
    }

    /// Every pair (slot at a, slot at b), edge by edge.
    #[cfg(test)]
    pub(crate) fn pairs(&self) -> &[(u32, u32)] {
        &self.pairs
    }

    /// The pairs of edge e, with the index of the first.
    pub(crate) fn pairs_of(&self, e: usize) -> (usize, &[(u32, u32)]) {
        let r = self.pair_start[e]..self.pair_start[e + 1];
        (r.start, &self.pairs[r])
    }

    /// The kept DP rows that bound column i, edge by edge and pair by pair: each pair's slot at i,
    /// the row whose own side is i (x_i ≤ e^ε x_other) and the reverse row (pair p's rows are 2p,
    /// a over b, and 2p + 1).
    pub(crate) fn rows_at<'a>(
        &'a self,
        incidence: &'a Incidence,
        i: usize,
    ) -> impl Iterator<Item = (u32, usize, usize)> + 'a {
        let edges = incidence.edges();
        incidence.at(i).iter().flat_map(move |&(own, _)| {
            let e = own as usize / 2;
            let at_a = edges[e].0 as usize == i;
            let (first, pairs) = self.pairs_of(e);
            (first..)
                .zip(pairs)
                .map(move |(p, &(sa, sb))| if at_a { (sa, 2 * p, 2 * p + 1) } else { (sb, 2 * p + 1, 2 * p) })
        })
    }

    /// Edge e's first pair index and its pairs as runs of consecutive slots (in pair order).
    pub(crate) fn runs_of(&self, e: usize) -> (usize, &[Run]) {
        (self.pair_start[e], &self.runs[self.run_start[e]..self.run_start[e + 1]])
    }

    /// The slot values `values` spread over every output (column i contiguous: out\[i·|Θ̃| + k\]),
    /// zero where nothing is kept.
    pub(crate) fn spread(&self, values: &[f32], out: &mut [f32]) {
        let m = self.n_out;
        out.par_chunks_mut(m).enumerate().for_each(|(i, column)| {
            column.fill(0.0);
            for s in self.column(i) {
                column[self.output[s] as usize] = values[s];
            }
        });
    }

    /// The kept rows' values `values` spread over every DP row (block-major with |Θ̃| per block,
    /// the incidence's order), zero where nothing is kept.
    #[cfg(test)]
    pub(crate) fn spread_rows(&self, incidence: &Incidence, values: &[f32], out: &mut [f32]) {
        let m = self.n_out;
        out.par_chunks_mut(2 * m).enumerate().for_each(|(e, blocks)| {
            blocks.fill(0.0);
            let (first, kept) = self.pairs_of(e);
            let a = incidence.edges()[e].0 as usize;
            for (p, &(sa, _)) in (first..).zip(kept) {
                let k = self.output[sa as usize] as usize;
                debug_assert!(self.column(a).contains(&(sa as usize)));
                blocks[k] = values[2 * p];
                blocks[m + k] = values[2 * p + 1];
            }
        });
    }

    /// Bytes a support of `slots` entries and `pairs` pairs holds over `n_obs` observations and
    /// `n_edges` edges.
    pub(crate) fn bytes(n_obs: u128, n_edges: u128, slots: u128, pairs: u128) -> u128 {
        // Offsets, outputs, pair offsets and pairs, run offsets and runs (one a pair at most).
        8 * (n_obs + 1) + 4 * slots + 8 * (n_edges + 1) + 8 * pairs + 8 * (n_edges + 1) + 12 * pairs
    }
}
