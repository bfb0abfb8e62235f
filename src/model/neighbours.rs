//! The neighbour relation on the observation space Y, induced by "replace one record".

/// Which observations y_i, y_i' come from neighbouring datasets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Neighbours {
    /// The path 0 ~ 1 ~ … ~ n−1 (binomial counts: one record moves y by at most 1).
    Chain {
        /// |Y|.
        len: usize,
    },
    /// An explicit undirected graph: each edge (a, b) with a < b, listed once.
    Graph {
        /// |Y|.
        len: usize,
        /// The undirected edges.
        edges: Vec<(usize, usize)>,
    },
}

impl Neighbours {
    /// |Y|.
    pub fn len(&self) -> usize {
        match self {
            Neighbours::Chain { len } | Neighbours::Graph { len, .. } => *len,
        }
    }

    /// True when Y is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Number of undirected edges.
    pub fn edge_count(&self) -> usize {
        match self {
            Neighbours::Chain { len } => len.saturating_sub(1),
            Neighbours::Graph { edges, .. } => edges.len(),
        }
    }

    /// The undirected edges (a, b), a < b, in a fixed order.
    pub fn edges(&self) -> Box<dyn Iterator<Item = (usize, usize)> + '_> {
        match self {
            Neighbours::Chain { len } => Box::new((1..*len).map(|i| (i - 1, i))),
            Neighbours::Graph { edges, .. } => Box::new(edges.iter().copied()),
        }
    }

    /// True when the relation is the path y ~ y ± 1 (structured solvers apply).
    pub fn is_chain(&self) -> bool {
        match self {
            Neighbours::Chain { .. } => true,
            Neighbours::Graph { len, edges } => {
                edges.len() + 1 == *len && edges.iter().enumerate().all(|(e, &(a, b))| a == e && b == e + 1)
            }
        }
    }
}
