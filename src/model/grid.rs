//! Point sets: the parameter grid Θ and the output grid Θ̃. Points are rows of a matrix so that
//! multi-dimensional parameters (e.g. a simplex) fit without a change of type.

use ndarray::{Array2, ArrayView1};

/// A finite set of points in R^dim, one per row.
#[derive(Debug, Clone, PartialEq)]
pub struct Grid {
    points: Array2<f64>,
}

impl Grid {
    /// A grid from a matrix whose rows are points.
    pub fn new(points: Array2<f64>) -> Self {
        Grid { points }
    }

    /// A one-dimensional grid from its values.
    pub fn from_values(values: Vec<f64>) -> Self {
        let n = values.len();
        Grid { points: Array2::from_shape_vec((n, 1), values).expect("n × 1 matches n values") }
    }

    /// Midpoint grid on [lower, upper]: x_j = lower + (j − ½)(upper − lower)/M, j = 1..M.
    pub fn midpoint(lower: f64, upper: f64, points: usize) -> Self {
        let h = (upper - lower) / points as f64;
        Grid::from_values((0..points).map(|j| lower + (j as f64 + 0.5) * h).collect())
    }

    /// Number of points.
    pub fn len(&self) -> usize {
        self.points.nrows()
    }

    /// True when the grid has no points.
    pub fn is_empty(&self) -> bool {
        self.points.nrows() == 0
    }

    /// Dimension of each point.
    pub fn dim(&self) -> usize {
        self.points.ncols()
    }

    /// Point `j`.
    pub fn point(&self, j: usize) -> ArrayView1<'_, f64> {
        self.points.row(j)
    }

    /// All points, one per row.
    pub fn points(&self) -> &Array2<f64> {
        &self.points
    }

    /// The first coordinate of every point (the values, for a one-dimensional grid).
    pub fn values(&self) -> Vec<f64> {
        self.points.column(0).to_vec()
    }

    /// Simplex lattice in d dimensions: θ = (n + ½)/(R + d/2) for every composition n of R into d
    /// parts, in the order of `compositions`. All points are interior; for d = 2 the first
    /// coordinates form the midpoint grid with R + 1 points.
    pub fn simplex_lattice(dim: usize, resolution: usize) -> Self {
        Grid::simplex(dim, resolution, 0.5)
    }

    /// Simplex lattice with its boundary: θ = n/R for every composition n of R into d parts,
    /// the vertices (1, 0, …) and the edges included. R ≥ 1.
    pub fn simplex_lattice_closed(dim: usize, resolution: usize) -> Self {
        Grid::simplex(dim, resolution, 0.0)
    }

    /// θ = (n + offset)/(R + d·offset).
    fn simplex(dim: usize, resolution: usize, offset: f64) -> Self {
        let comps = compositions(resolution as u64, dim);
        let denom = resolution as f64 + dim as f64 * offset;
        let mut points = Array2::zeros((comps.len(), dim));
        for (j, n) in comps.iter().enumerate() {
            for (d, &nd) in n.iter().enumerate() {
                points[[j, d]] = (nd as f64 + offset) / denom;
            }
        }
        Grid { points }
    }
}

/// All vectors of `parts` non-negative integers summing to `total`, in lexicographic order
/// (first coordinate slowest, ascending). There are C(total + parts − 1, parts − 1) of them.
pub(super) fn compositions(total: u64, parts: usize) -> Vec<Vec<u64>> {
    fn rec(total: u64, parts: usize, prefix: &mut Vec<u64>, out: &mut Vec<Vec<u64>>) {
        if parts == 1 {
            prefix.push(total);
            out.push(prefix.clone());
            prefix.pop();
            return;
        }
        for first in 0..=total {
            prefix.push(first);
            rec(total - first, parts - 1, prefix, out);
            prefix.pop();
        }
    }
    let mut out = Vec::new();
    if parts > 0 {
        rec(total, parts, &mut Vec::with_capacity(parts), &mut out);
    }
    out
}

/// C(total + parts − 1, parts − 1), the number of compositions, as f64 (no overflow).
pub(crate) fn composition_count(total: u64, parts: usize) -> f64 {
    use statrs::function::gamma::ln_gamma;
    if parts == 0 {
        return 0.0;
    }
    let (n, k) = (total as f64 + parts as f64 - 1.0, parts as f64 - 1.0);
    (ln_gamma(n + 1.0) - ln_gamma(k + 1.0) - ln_gamma(n - k + 1.0)).exp().round()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compositions_count_and_order() {
        let c = compositions(2, 3);
        assert_eq!(c.len(), 6);
        assert_eq!(c[0], vec![0, 0, 2]);
        assert_eq!(c[5], vec![2, 0, 0]);
        assert_eq!(composition_count(20, 3), 231.0);
        assert_eq!(compositions(20, 3).len(), 231);
    }

    #[test]
    fn simplex_lattice_in_two_dimensions_is_the_midpoint_grid() {
        let s = Grid::simplex_lattice(2, 9);
        let m = Grid::midpoint(0.0, 1.0, 10);
        let mut first: Vec<f64> = s.points().column(0).to_vec();
        first.sort_by(f64::total_cmp);
        for (a, b) in first.iter().zip(m.values()) {
            assert!((a - b).abs() < 1e-15);
        }
        for r in s.points().rows() {
            assert!((r.sum() - 1.0).abs() < 1e-15);
        }
    }
}
