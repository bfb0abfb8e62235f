//! The DP rows met at each observation, in compressed form: what a matrix-free pass over the LP's
//! operator needs (`solve::anytime`, the proven bound of `certify::dual`), without the LP.
//!
//! DP rows come in blocks of |Θ̃| (one per output k), two blocks per undirected edge e = (a, b):
//! block 2e bounds P\[k,a\] ≤ e^ε P\[k,b\], block 2e + 1 the reverse — the order of
//! [`super::Problem`]'s DP rows, so a multiplier vector means the same in both.

use crate::model::Neighbours;

/// For each observation i, the DP-row blocks of the edges at i as (own, other): `own` bounds
/// P\[·,i\] above, `other` bounds the neighbour by P\[·,i\].
#[derive(Debug, Clone)]
pub(crate) struct Incidence {
    /// Start of observation i's entries in `blocks` (|Y| + 1 offsets).
    offsets: Vec<usize>,
    /// (own, other) block indices, grouped by observation.
    blocks: Vec<(u32, u32)>,
    /// The undirected edges (a, b), in block order.
    edges: Vec<(u32, u32)>,
}

impl Incidence {
    /// The incidence of `neighbours`, or `None` when its blocks cannot be indexed by 32 bits (2^31
    /// edges: far beyond what any memory budget prices as solvable).
    pub(crate) fn new(neighbours: &Neighbours) -> Option<Incidence> {
        let n = neighbours.len();
        let n_edges = neighbours.edge_count();
        if 2 * n_edges as u64 >= u32::MAX as u64 || n as u64 >= u32::MAX as u64 {
            return None;
        }
        let edges: Vec<(u32, u32)> = neighbours.edges().map(|(a, b)| (a as u32, b as u32)).collect();
        let mut degree = vec![0usize; n + 1];
        for &(a, b) in &edges {
            degree[a as usize + 1] += 1;
            degree[b as usize + 1] += 1;
        }
        for i in 0..n {
            degree[i + 1] += degree[i];
        }
        let offsets = degree;
        let mut fill = offsets.clone();
        let mut blocks = vec![(0u32, 0u32); offsets[n]];
        for (e, &(a, b)) in edges.iter().enumerate() {
            let e = e as u32;
            blocks[fill[a as usize]] = (2 * e, 2 * e + 1);
            fill[a as usize] += 1;
            blocks[fill[b as usize]] = (2 * e + 1, 2 * e);
            fill[b as usize] += 1;
        }
        Some(Incidence { offsets, blocks, edges })
    }

    /// |Y|.
    pub(crate) fn n_obs(&self) -> usize {
        self.offsets.len() - 1
    }

    /// The number of undirected edges.
    pub(crate) fn n_edges(&self) -> usize {
        self.edges.len()
    }

    /// The (own, other) blocks at observation i.
    pub(crate) fn at(&self, i: usize) -> &[(u32, u32)] {
        &self.blocks[self.offsets[i]..self.offsets[i + 1]]
    }

    /// The other end of the edge of DP-row block `block` at observation `i`.
    pub(crate) fn neighbour(&self, i: usize, block: u32) -> usize {
        let (a, b) = self.edges[block as usize / 2];
        if a as usize == i {
            b as usize
        } else {
            a as usize
        }
    }

    /// The undirected edges (a, b) in block order.
    pub(crate) fn edges(&self) -> &[(u32, u32)] {
        &self.edges
    }

    /// Bytes held.
    pub(crate) fn bytes(n_obs: usize, n_edges: usize) -> u128 {
        (n_obs as u128 + 1) * 8 + n_edges as u128 * 8 * 2
    }
}
