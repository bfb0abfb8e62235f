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
}
