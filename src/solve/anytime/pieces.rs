//! The decomposition: the Lagrangian relaxation that fixes the multipliers of the DP rows crossing
//! a partition of the observations into pieces, and maximises over the rest exactly, piece by
//! piece.
//!
//! For any partition and any fixed multipliers λ_cut ≥ 0 on the crossing rows, the bound
//! g(λ) = Σ_i min_k (c + Dᵀλ)\[k,i\] is maximised over the pieces' own rows by solving each
//! piece's LP (its columns' simplices, its inner DP rows, the costs adjusted by λ_cut) and taking
//! its DP duals: the sum of the pieces' optima is that maximum (the relaxation decouples). Each
//! piece is small (a few hundred observations) and solved by the block interior point, one per
//! core. The bound itself is then proven over every output in directed rounding
//! (`certify::dual::exact_plain_bound`), whatever the pieces' floats.
//!
//! Where the non-private Bayes rule is constant over a neighbourhood of radius
//! [`reach`](Partition::new), the DP rows are nearly slack at the optimum (every other output's
//! row is below ρ^(−distance) there): those observations are left out of the pieces and keep the
//! non-private choice, which makes the decomposition cost grow with the length of the rule's
//! boundaries rather than with |Y|. Large surveys are this case: the posterior is sharp, and the
//! price of privacy is paid near the boundaries between outputs.
//!
//! Each piece's LP keeps only the outputs among the two cheapest (adjusted) in some column of
//! the piece; the others keep the multipliers they had on the piece's rows, and are priced in the
//! proven bound like every output.
//! The pieces' primal solutions, stitched, are ε-DP within each piece only (the route does not
//! release them: their repair across the cuts costs more than the iterations' point's).

use std::time::Instant;

use ndarray::Array2;
use rayon::prelude::*;

use crate::lp::{non_private_rule, rule_change_distance, Incidence};
use crate::solve::structured::ipm;

/// Observations per piece (the block interior point's dense Schur complement is this square).
/// Measured on the poll of 1000: pieces of 600 took 217 s a round, pieces of 150 57 s, and two
/// rounds of 150 proved more (3.499e-5) than one of 600 (3.411e-5).
pub(crate) const PIECE_SIZE: usize = 150;

/// Outputs a column nominates into its piece's LP (the cheapest, after the fixed multipliers).
/// A round's time grows with the outputs its pieces nominate, and those grow from round to round
/// as the fixed multipliers bring the costs closer (3.3 a piece in the first round on the poll of
/// 1000 with three a column, 8.2 in the fourth). Measured there: two a column took 92 s for the
/// first four rounds against 117 s; each round proved less (3.6354e-5 against 3.6411e-5 after
/// six) except the third and fourth, but more rounds fit: ten in the default 10 minutes (bound
/// 3.67175e-5) where three a column fitted nine (3.66987e-5).
const NOMINATED: usize = 2;

/// The active region reaches this far (in hops) from the rule's boundaries: where ρ^(−reach) is
/// below this, the rows dropped at its edge cost nothing measurable.
const REACH_DECAY: f64 = 1e-4;

/// Iterations of a piece's block interior point, for the estimate (measured on the polls of 100
/// and 300: 22–39).
const ESTIMATED_IPM_ITERATIONS: f64 = 30.0;

/// The largest relative gap at which a piece's LP is taken as solved.
const ACCEPTED_GAP: f64 = 1e-6;

/// Not in any piece.
const OUTSIDE: u32 = u32::MAX;

/// A partition of the active observations into connected pieces.
pub(crate) struct Partition {
    /// The piece of each observation ([`OUTSIDE`] if none).
    piece: Vec<u32>,
    /// The observations of each piece, ascending.
    members: Vec<Vec<u32>>,
    /// The non-private Bayes rule (the output of least cost per observation).
    rule: Vec<u32>,
}

impl Partition {
    /// The partition of the observations within `reach` hops of an edge where the non-private rule
    /// changes (reach = ln(1/[`REACH_DECAY`])/ε), grown breadth first to at most `piece_size` from
    /// seeds taken in an order that `variant` shifts (successive variants cut in different
    /// places).
    pub(crate) fn new(
        cost: &Array2<f64>,
        incidence: &Incidence,
        eps: f64,
        variant: usize,
        piece_size: usize,
    ) -> Partition {
        let n = incidence.n_obs();
        let rule = non_private_rule(cost);
        let reach = ((1.0 / REACH_DECAY).ln() / eps.max(1e-9)).ceil().min(n as f64) as usize;
        let distance = rule_change_distance(&rule, incidence, reach);
        let active: Vec<bool> = distance.iter().map(|&d| d != usize::MAX).collect();
        let (piece, members) = grow(incidence, &active, shifted(n, variant), piece_size);
        Partition { piece, members, rule }
    }

    /// A partition of the same observations whose pieces are grown first from the ends of this
    /// one's cut edges (in the order `variant` shifts): each new piece straddles an old cut, and
    /// the next round of the block-coordinate ascent frees the rows this one fixed there.
    pub(crate) fn across(&self, incidence: &Incidence, variant: usize, piece_size: usize) -> Partition {
        let n = incidence.n_obs();
        let active: Vec<bool> = self.piece.iter().map(|&p| p != OUTSIDE).collect();
        let mut on_cut = vec![false; n];
        for &(a, b) in incidence.edges() {
            if self.between_pieces(a, b) {
                on_cut[a as usize] = true;
                on_cut[b as usize] = true;
            }
        }
        let order = shifted(n, variant).filter(|&i| on_cut[i]).chain(shifted(n, variant).filter(|&i| !on_cut[i]));
        let (piece, members) = grow(incidence, &active, order, piece_size);
        Partition { piece, members, rule: self.rule.clone() }
    }

    /// Whether the edge (a, b) joins two different pieces (a row a round fixes between them).
    fn between_pieces(&self, a: u32, b: u32) -> bool {
        let (pa, pb) = (self.piece[a as usize], self.piece[b as usize]);
        pa != pb && pa != OUTSIDE && pb != OUTSIDE
    }

    /// The number of pieces.
    pub(crate) fn len(&self) -> usize {
        self.members.len()
    }

    /// The observations of each piece, ascending.
    #[cfg(test)]
    pub(crate) fn pieces(&self) -> &[Vec<u32>] {
        &self.members
    }

    /// The share of the edges touching a piece that cross between pieces or leave them (their
    /// rows' multipliers are fixed in a round).
    pub(crate) fn cut_share(&self, incidence: &Incidence) -> f64 {
        let (mut touching, mut cut) = (0usize, 0usize);
        for &(a, b) in incidence.edges() {
            let (pa, pb) = (self.piece[a as usize], self.piece[b as usize]);
            if pa == OUTSIDE && pb == OUTSIDE {
                continue;
            }
            touching += 1;
            cut += (pa != pb) as usize;
        }
        cut as f64 / touching.max(1) as f64
    }

    /// Observations in some piece.
    pub(crate) fn active(&self) -> usize {
        self.members.iter().map(Vec::len).sum()
    }

    /// The expected seconds of the first round on this partition (zero multipliers) on the
    /// machine's cores: a 2-core machine's block interior point iterations
    /// (`structured::block_ipm_iteration_seconds`), [`ESTIMATED_IPM_ITERATIONS`] per piece, each
    /// piece with the outputs its columns nominate.
    pub(crate) fn round_seconds(&self, cost: &Array2<f64>) -> f64 {
        let threads = std::thread::available_parallelism().map_or(1, |t| t.get()) as f64;
        let m = cost.ncols();
        let work: f64 = self
            .members
            .par_iter()
            .map(|piece| {
                let mut nominated = vec![false; m];
                for &i in piece {
                    let row = cost.row(i as usize);
                    let mut order: Vec<usize> = (0..m).collect();
                    order.sort_by(|&a, &b| row[a].total_cmp(&row[b]));
                    for &k in order.iter().take(NOMINATED) {
                        nominated[k] = true;
                    }
                }
                let outputs = nominated.iter().filter(|&&n| n).count() as f64;
                crate::solve::structured::block_ipm_iteration_seconds(piece.len() as f64, outputs, None)
            })
            .sum();
        ESTIMATED_IPM_ITERATIONS * work / threads
    }
}

/// The observations 0..n in an order that `variant` shifts (by the golden ratio, and reversed
/// at odd variants), the order in which pieces are seeded.
fn shifted(n: usize, variant: usize) -> impl Iterator<Item = usize> {
    let offset = (variant as f64 * 0.618_033_988_75 * n as f64) as usize % n.max(1);
    (0..n).map(move |s| if variant % 2 == 0 { (s + offset) % n } else { n - 1 - (s + offset) % n })
}

/// Pieces of the `active` observations: breadth-first balls of at most `piece_size`, each grown
/// from the first observation of `seeds` not yet in a piece. Returns each observation's piece
/// ([`OUTSIDE`] if none) and each piece's observations, ascending.
fn grow(
    incidence: &Incidence,
    active: &[bool],
    seeds: impl Iterator<Item = usize>,
    piece_size: usize,
) -> (Vec<u32>, Vec<Vec<u32>>) {
    let mut piece = vec![OUTSIDE; incidence.n_obs()];
    let mut members: Vec<Vec<u32>> = Vec::new();
    let mut queue = std::collections::VecDeque::new();
    for seed in seeds {
        if !active[seed] || piece[seed] != OUTSIDE {
            continue;
        }
        let id = members.len() as u32;
        let mut these = vec![seed as u32];
        piece[seed] = id;
        queue.clear();
        queue.push_back(seed);
        'grow: while let Some(i) = queue.pop_front() {
            for &(own, _) in incidence.at(i) {
                let j = incidence.neighbour(i, own);
                if active[j] && piece[j] == OUTSIDE {
                    if these.len() == piece_size {
                        break 'grow;
                    }
                    piece[j] = id;
                    these.push(j as u32);
                    queue.push_back(j);
                }
            }
        }
        these.sort_unstable();
        members.push(these);
    }
    (piece, members)
}

/// The number of hops across the graph (a double sweep of breadth-first searches from
/// observation 0: a lower bound of the diameter of its component, exact on paths and lattices).
pub(crate) fn hops_across(incidence: &Incidence) -> usize {
    let n = incidence.n_obs();
    if n == 0 {
        return 0;
    }
    let sweep = |from: usize| -> (usize, usize) {
        let mut distance = vec![usize::MAX; n];
        distance[from] = 0;
        let mut queue = std::collections::VecDeque::from([from]);
        let mut last = (from, 0);
        while let Some(i) = queue.pop_front() {
            last = (i, distance[i]);
            for &(own, _) in incidence.at(i) {
                let j = incidence.neighbour(i, own);
                if distance[j] == usize::MAX {
                    distance[j] = distance[i] + 1;
                    queue.push_back(j);
                }
            }
        }
        last
    };
    let (far, _) = sweep(0);
    sweep(far).1
}

/// One piece's answer: its inner DP rows' multipliers (block, values for every output) and its
/// columns of the primal.
struct PieceAnswer {
    rows: Vec<(u32, Vec<f32>)>,
    columns: Vec<(u32, Vec<f32>)>,
}

/// Solve every piece of `partition` with the multipliers of the rows that cross pieces (and of
/// the rows outside every piece) fixed at `lam` (per DP row, block-major with |Θ̃| per block, in
/// the costs' units); write each piece's multipliers into `lam` and the stitched primal point into
/// `x` (column i contiguous: x\[i·m + k\]; the observations outside every piece take the
/// non-private rule). Pieces still running at `deadline` give their best iterate.
pub(crate) fn solve_pieces(
    cost: &Array2<f64>,
    incidence: &Incidence,
    eps: f64,
    partition: &Partition,
    lam: &mut [f32],
    x: &mut [f32],
    deadline: Option<Instant>,
) {
    let (n, m) = cost.dim();
    let rho = eps.exp();
    let fixed: &[f32] = lam;
    let answers: Vec<PieceAnswer> = (0..partition.len())
        .into_par_iter()
        .map(|p| solve_piece(cost, incidence, rho, partition, p, fixed, deadline))
        .collect();
    for answer in answers {
        for (block, values) in answer.rows {
            let start = block as usize * m;
            lam[start..start + m].copy_from_slice(&values);
        }
        for (i, values) in answer.columns {
            let start = i as usize * m;
            x[start..start + m].copy_from_slice(&values);
        }
    }
    for i in 0..n {
        if partition.piece[i] == OUTSIDE {
            let column = &mut x[i * m..(i + 1) * m];
            column.fill(0.0);
            column[partition.rule[i] as usize] = 1.0;
        }
    }
}

/// The LP of piece `p` (costs adjusted by the fixed multipliers of its crossing rows, the
/// nominated outputs, its inner DP rows), solved; its multipliers in the costs' units.
fn solve_piece(
    cost: &Array2<f64>,
    incidence: &Incidence,
    rho: f64,
    partition: &Partition,
    p: usize,
    lam: &[f32],
    deadline: Option<Instant>,
) -> PieceAnswer {
    let m = cost.ncols();
    let sorted = &partition.members[p];
    let n = sorted.len();
    let local_of = |i: usize| -> Option<usize> {
        if partition.piece[i] == p as u32 {
            sorted.binary_search(&(i as u32)).ok()
        } else {
            None
        }
    };
    // Adjusted costs of the piece's columns (in sorted order), the crossing rows fixed.
    let mut adjusted = vec![0.0f64; n * m];
    let mut nominated = vec![false; m];
    let mut inner: Vec<(usize, usize, u32)> = Vec::new();
    for (li, &i) in sorted.iter().enumerate() {
        let i = i as usize;
        let column = &mut adjusted[li * m..(li + 1) * m];
        column.copy_from_slice(cost.row(i).as_slice().expect("a standard-layout cost matrix"));
        for &(own, other) in incidence.at(i) {
            let j = incidence.neighbour(i, own);
            if let Some(lj) = local_of(j) {
                inner.push((li, lj, own));
                continue;
            }
            let (own, other) = (own as usize * m, other as usize * m);
            for k in 0..m {
                column[k] += lam[own + k].max(0.0) as f64 - rho * lam[other + k].max(0.0) as f64;
            }
        }
        let mut order: Vec<usize> = (0..m).collect();
        order.sort_by(|&a, &b| column[a].total_cmp(&column[b]));
        for &k in order.iter().take(NOMINATED) {
            nominated[k] = true;
        }
    }
    let outputs: Vec<usize> = (0..m).filter(|&k| nominated[k]).collect();
    let mk = outputs.len();
    let c_max = outputs
        .iter()
        .flat_map(|&k| (0..n).map(move |li| (li, k)))
        .fold(0.0f64, |a, (li, k)| a.max(adjusted[li * m + k].abs()))
        .max(f64::MIN_POSITIVE);
    let mut c = vec![0.0; mk * n];
    for (kk, &k) in outputs.iter().enumerate() {
        for li in 0..n {
            c[kk * n + li] = adjusted[li * m + k] / c_max;
        }
    }
    let lp = ipm::BlockLp { m: mk, n, c, rows: inner.iter().map(|&(a, b, _)| (a, b)).collect(), rho };
    let settings = ipm::Settings {
        gap_tolerance: 1e-9,
        feasibility_tolerance: 1e-9,
        end_game_gap: 1e-9,
        end_game_feasibility: 1e-9,
        max_iterations: 200,
        deadline,
        first_iteration_seconds: 0.0,
        on_iteration: Box::new(|_| {}),
        threads: 1,
        stiff_allowance: ipm::stiff_allowance(n, mk, None),
        end_game_above: ipm::stiff_allowance(n, mk, None),
    };
    let result = ipm::solve(&lp, &settings);
    let ne = lp.rows.len();
    // An LP stopped short of its optimum (the deadline) keeps the multipliers it had: an early
    // interior iterate's are far from any useful direction.
    let solved = matches!(result.ending, ipm::Ending::Converged | ipm::Ending::Stalled | ipm::Ending::EndGame)
        && result.gap <= ACCEPTED_GAP;
    let rows = if !solved {
        Vec::new()
    } else {
        inner
            .iter()
            .enumerate()
            .map(|(e, &(_, _, block))| {
                let start = block as usize * m;
                let mut values = lam[start..start + m].to_vec();
                for (kk, &k) in outputs.iter().enumerate() {
                    let l = result.lambda[kk * ne + e] * c_max;
                    values[k] = if l.is_finite() && l > 0.0 { l as f32 } else { 0.0 };
                }
                (block, values)
            })
            .collect()
    };
    let columns = sorted
        .iter()
        .enumerate()
        .map(|(li, &i)| {
            let mut values = vec![0f32; m];
            for (kk, &k) in outputs.iter().enumerate() {
                let v = result.x[kk * n + li];
                values[k] = if v.is_finite() && v > 0.0 { v as f32 } else { 0.0 };
            }
            (i, values)
        })
        .collect();
    PieceAnswer { rows, columns }
}

#[cfg(test)]
mod tests {
    use super::Partition;
    use crate::lp::Incidence;
    use crate::model::Neighbours;

    /// The share of `previous`'s cut edges (between two of its pieces) that lie inside one piece
    /// of `next`.
    fn freed(previous: &Partition, next: &Partition, incidence: &Incidence) -> f64 {
        let (mut cut, mut inside) = (0, 0);
        for &(a, b) in incidence.edges() {
            if previous.between_pieces(a, b) {
                cut += 1;
                inside += usize::from(next.piece[a as usize] == next.piece[b as usize]);
            }
        }
        inside as f64 / f64::from(cut.max(1))
    }

    #[test]
    fn a_partition_across_the_last_covers_the_same_observations_and_frees_most_of_its_cut_rows() {
        // A 100 × 100 lattice whose non-private rule changes along both diagonals (three outputs).
        let side = 100;
        let mut edges = Vec::new();
        for r in 0..side {
            for c in 0..side {
                let i = r * side + c;
                if c + 1 < side {
                    edges.push((i, i + 1));
                }
                if r + 1 < side {
                    edges.push((i, i + side));
                }
            }
        }
        let incidence = Incidence::new(&Neighbours::Graph { len: side * side, edges }).unwrap();
        let cost = ndarray::Array2::from_shape_fn((side * side, 3), |(i, k)| {
            let (r, c) = ((i / side) as f64, (i % side) as f64);
            [(r - c).abs(), (r + c - side as f64).abs(), 20.0][k]
        });
        let first = Partition::new(&cost, &incidence, 0.5, 0, 150);
        let across = first.across(&incidence, 1, 150);
        assert_eq!(across.active(), first.active());
        assert!(across.members.iter().all(|p| !p.is_empty() && p.len() <= 150));
        // Most rows the last round fixed are inside a piece of the next (as with seeds in a
        // shifted order: 0.88 on this lattice; the two differ in where the new cuts fall).
        let by_across = freed(&first, &across, &incidence);
        assert!(by_across >= 0.8, "freed {by_across}");
    }
}
