//! The neighbour relation on the observation space Y, induced by "replace one record".

/// Which observations y_i, y_i' come from neighbouring datasets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Neighbours {
    /// The path 0 ~ 1 ~ … ~ n−1 (binomial counts: one record moves y by at most 1).
    Chain {
        /// |Y|.
        len: usize,
    },
    /// The band y ~ y' for 1 ≤ |y − y'| ≤ width (clipped sums: one record moves y by at most its cap).
    Band {
        /// |Y|.
        len: usize,
        /// The largest change of y by one record (≥ 1; 1 is the chain).
        width: usize,
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
            Neighbours::Chain { len } | Neighbours::Band { len, .. } | Neighbours::Graph { len, .. } => *len,
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
            Neighbours::Band { len, width } => {
                // Σ_{d=1..w} (len − d) with w = min(width, len − 1).
                let w = (*width).min(len.saturating_sub(1));
                w * len - w * (w + 1) / 2
            }
            Neighbours::Graph { edges, .. } => edges.len(),
        }
    }

    /// The undirected edges (a, b), a < b, in a fixed order.
    pub fn edges(&self) -> Box<dyn Iterator<Item = (usize, usize)> + '_> {
        match self {
            Neighbours::Chain { len } => Box::new((1..*len).map(|i| (i - 1, i))),
            Neighbours::Band { len, width } => {
                let (len, width) = (*len, *width);
                Box::new((0..len).flat_map(move |a| (a + 1..len.min(a + width + 1)).map(move |b| (a, b))))
            }
            Neighbours::Graph { edges, .. } => Box::new(edges.iter().copied()),
        }
    }

    /// True when the relation is the path y ~ y ± 1 (structured solvers apply).
    pub fn is_chain(&self) -> bool {
        match self {
            Neighbours::Chain { .. } => true,
            Neighbours::Band { len, width } => *width == 1 || *len <= 2,
            Neighbours::Graph { len, edges } => {
                edges.len() + 1 == *len && edges.iter().enumerate().all(|(e, &(a, b))| a == e && b == e + 1)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn band_edges_match_their_count_and_definition() {
        for len in 0..8 {
            for width in 1..5 {
                let n = Neighbours::Band { len, width };
                let e: Vec<_> = n.edges().collect();
                assert_eq!(e.len(), n.edge_count(), "len {len} width {width}");
                let want: Vec<_> = (0..len)
                    .flat_map(|a| (0..len).map(move |b| (a, b)))
                    .filter(|&(a, b)| a < b && b - a <= width)
                    .collect();
                assert_eq!(e, want);
            }
        }
        assert!(Neighbours::Band { len: 5, width: 1 }.is_chain());
        assert!(!Neighbours::Band { len: 5, width: 2 }.is_chain());
    }
}
