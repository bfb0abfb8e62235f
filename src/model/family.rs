//! Observation families: the statistic y ∈ Y, its likelihood q_θ(y) and the neighbour relation
//! on Y that "replace one record" induces.

use std::collections::HashMap;
use std::sync::Arc;

use ndarray::{Array2, ArrayView1};
use statrs::function::gamma::{gamma_lr, ln_gamma};

use super::grid::{compositions, Grid};
use super::neighbours::Neighbours;

/// A family of distributions of the (sufficient) statistic y.
#[derive(Debug, Clone, PartialEq)]
pub enum Family {
    /// y = Σ x_r for K Bernoulli(θ) records x_r; Y = {0..K}. Replacing one record changes y by at
    /// most 1, so neighbours are |y − y'| = 1 (UBaPP paper, worked example).
    Binomial {
        /// K.
        trials: u64,
    },
    /// y = Σ_r min(x_r, c) for N records x_r ~ Poisson(λ) clipped at a public cap c; Y = {0..Nc}.
    /// Replacing one record changes its clipped value by at most c, so neighbours are
    /// 1 ≤ |y − y'| ≤ c (a band; every such pair is realised, see the tests).
    Poisson {
        /// N.
        records: u64,
        /// c ≥ 1.
        cap: u64,
    },
    /// y = the count vector of K records over d categories, θ in the simplex (a d-vector);
    /// Y = all compositions of K into d parts in the order of `compositions`. Replacing one record
    /// moves one count from one category to another: y ~ y − e_a + e_b.
    Multinomial {
        /// d ≥ 2.
        categories: usize,
        /// K ≥ 1.
        records: u64,
    },
    /// A user-supplied likelihood on a fixed parameter grid, with an explicit neighbour relation.
    Table {
        /// Q[i, j] = q_{θ_j}(y_i), |Y| × M.
        q: Arc<Array2<f64>>,
        /// The parameter grid the columns of `q` belong to.
        theta: Grid,
        /// Undirected neighbour pairs (a, b), a < b, sorted, without repeats.
        edges: Vec<(usize, usize)>,
    },
}

impl Family {
    /// |Y|.
    pub fn observation_count(&self) -> usize {
        match self {
            Family::Binomial { trials } => *trials as usize + 1,
            Family::Poisson { records, cap } => (*records * *cap) as usize + 1,
            Family::Multinomial { categories, records } => {
                super::grid::composition_count(*records, *categories) as usize
            }
            Family::Table { q, .. } => q.nrows(),
        }
    }

    /// Why `y` (with the observations' dimension) is not an observation, in words the user can act
    /// on, where the family's rule says more than its range: a multinomial's counts are whole
    /// numbers ≥ 0 that sum to the number of records.
    pub fn observation_rule(&self, y: &[f64]) -> Option<String> {
        match self {
            Family::Multinomial { categories, records } if y.len() == *categories => {
                let whole = y.iter().all(|v| *v >= 0.0 && v.fract() == 0.0);
                let sum: f64 = y.iter().sum();
                Some(if whole {
                    format!("the counts must sum to the number of records, {records} (these sum to {sum})")
                } else {
                    format!("the counts must be whole numbers ≥ 0 that sum to the number of records, {records}")
                })
            }
            _ => None,
        }
    }

    /// The observations y_i, one per row.
    pub fn observations(&self) -> Grid {
        match self {
            Family::Binomial { trials } => Grid::from_values((0..=*trials).map(|y| y as f64).collect()),
            Family::Poisson { records, cap } => Grid::from_values((0..=*records * *cap).map(|y| y as f64).collect()),
            Family::Multinomial { categories, records } => {
                let ys = compositions(*records, *categories);
                let flat: Vec<f64> = ys.iter().flatten().map(|&v| v as f64).collect();
                Grid::new(Array2::from_shape_vec((ys.len(), *categories), flat).expect("d counts per observation"))
            }
            Family::Table { q, .. } => Grid::from_values((0..q.nrows()).map(|i| i as f64).collect()),
        }
    }

    /// Parameter dimension the family expects.
    pub fn parameter_dim(&self) -> usize {
        match self {
            Family::Binomial { .. } | Family::Poisson { .. } => 1,
            Family::Multinomial { categories, .. } => *categories,
            Family::Table { theta, .. } => theta.dim(),
        }
    }

    /// The neighbour relation on Y.
    pub fn neighbours(&self) -> Neighbours {
        match self {
            Family::Binomial { .. } => Neighbours::Chain { len: self.observation_count() },
            Family::Poisson { cap: 1, .. } => Neighbours::Chain { len: self.observation_count() },
            Family::Poisson { cap, .. } => Neighbours::Band { len: self.observation_count(), width: *cap as usize },
            Family::Multinomial { categories, records } => {
                Neighbours::Graph { len: self.observation_count(), edges: multinomial_edges(*records, *categories) }
            }
            Family::Table { q, edges, .. } => Neighbours::Graph { len: q.nrows(), edges: edges.clone() },
        }
    }

    /// q_θ(y_i) for every i.
    ///
    /// # Panics
    /// For a `Table` family when θ is not a point of its grid (the table defines nothing else).
    pub fn likelihood(&self, theta: ArrayView1<'_, f64>) -> Vec<f64> {
        match self {
            Family::Binomial { trials } => binomial_pmf_all(*trials, theta[0]),
            Family::Poisson { records, cap } => clipped_poisson_sum_pmf(*records, *cap, theta[0]),
            Family::Multinomial { records, .. } => {
                let ys = compositions(*records, theta.len());
                ys.iter().map(|y| multinomial_pmf(*records, y, theta)).collect()
            }
            Family::Table { q, theta: grid, .. } => {
                let j = (0..grid.len())
                    .find(|&j| grid.point(j) == theta)
                    .expect("a table family's likelihood is defined only at its own grid points");
                q.column(j).to_vec()
            }
        }
    }

    /// Q[i, j] = q_{θ_j}(y_i), |Y| × M.
    pub fn likelihood_matrix(&self, theta: &Grid) -> Array2<f64> {
        if let Family::Table { q, theta: grid, .. } = self {
            if grid == theta {
                return q.as_ref().clone();
            }
        }
        let mut q = Array2::zeros((self.observation_count(), theta.len()));
        if let Family::Binomial { trials } = self {
            let ln_choose = ln_binomial_coefficients(*trials);
            for j in 0..theta.len() {
                for (i, p) in binomial_pmf_with(&ln_choose, theta.point(j)[0]).into_iter().enumerate() {
                    q[[i, j]] = p;
                }
            }
            return q;
        }
        for j in 0..theta.len() {
            for (i, p) in self.likelihood(theta.point(j)).into_iter().enumerate() {
                q[[i, j]] = p;
            }
        }
        q
    }

    /// Its name in model files.
    pub fn name(&self) -> &'static str {
        match self {
            Family::Binomial { .. } => "binomial",
            Family::Poisson { .. } => "poisson",
            Family::Multinomial { .. } => "multinomial",
            Family::Table { .. } => "table",
        }
    }
}

/// pmf of min(X, c) for X ~ Poisson(λ), at 0..=c: e^{−λ} λ^x / x! below the cap and
/// P(X ≥ c) = P(c, λ) (regularised lower incomplete gamma) at the cap.
pub(crate) fn clipped_poisson_pmf(cap: u64, lambda: f64) -> Vec<f64> {
    let c = cap as usize;
    let mut p = vec![0.0; c + 1];
    if lambda <= 0.0 {
        p[0] = 1.0;
        return p;
    }
    let ll = lambda.ln();
    for (x, px) in p.iter_mut().enumerate().take(c) {
        *px = (-lambda + x as f64 * ll - ln_gamma(x as f64 + 1.0)).exp();
    }
    p[c] = gamma_lr(cap as f64, lambda);
    p
}

/// pmf of y = Σ_{r=1..N} min(x_r, c), x_r i.i.d. Poisson(λ), at y = 0..=Nc: the N-fold convolution
/// of the clipped pmf, by direct convolution (O(N² c²)).
pub(crate) fn clipped_poisson_sum_pmf(records: u64, cap: u64, lambda: f64) -> Vec<f64> {
    let base = clipped_poisson_pmf(cap, lambda);
    let mut acc = vec![1.0];
    for _ in 0..records {
        let mut next = vec![0.0; acc.len() + base.len() - 1];
        for (a, &pa) in acc.iter().enumerate() {
            if pa == 0.0 {
                continue;
            }
            for (b, &pb) in base.iter().enumerate() {
                next[a + b] += pa * pb;
            }
        }
        acc = next;
    }
    acc
}

/// Multinomial(K, θ) pmf at the count vector y, via log-gamma; 0^0 = 1.
pub(crate) fn multinomial_pmf(k: u64, y: &[u64], theta: ArrayView1<'_, f64>) -> f64 {
    let mut l = ln_gamma(k as f64 + 1.0);
    for (&yj, &tj) in y.iter().zip(theta.iter()) {
        l -= ln_gamma(yj as f64 + 1.0);
        if yj > 0 {
            if tj <= 0.0 {
                return 0.0;
            }
            l += yj as f64 * tj.ln();
        }
    }
    l.exp()
}

/// Neighbour pairs of count vectors: y ~ y − e_a + e_b (one record changes category), as sorted
/// undirected edges between indices in the order of [`compositions`].
pub(crate) fn multinomial_edges(records: u64, categories: usize) -> Vec<(usize, usize)> {
    let ys = compositions(records, categories);
    let index: HashMap<&[u64], usize> = ys.iter().enumerate().map(|(i, y)| (y.as_slice(), i)).collect();
    let mut edges = Vec::new();
    let mut z = vec![0u64; categories];
    for (i, y) in ys.iter().enumerate() {
        for a in 0..categories {
            if y[a] == 0 {
                continue;
            }
            for b in 0..categories {
                if b == a {
                    continue;
                }
                z.copy_from_slice(y);
                z[a] -= 1;
                z[b] += 1;
                let j = index[z.as_slice()];
                if i < j {
                    edges.push((i, j));
                }
            }
        }
    }
    edges.sort_unstable();
    edges.dedup();
    edges
}

/// Binomial(K, θ) pmf at y = 0..K, via log-gamma (stable for large K; exact at θ ∈ {0, 1}).
pub(crate) fn binomial_pmf_all(k: u64, theta: f64) -> Vec<f64> {
    binomial_pmf_with(&ln_binomial_coefficients(k), theta)
}

/// ln C(K, y) for y = 0..=K (shared by every θ of a likelihood matrix).
fn ln_binomial_coefficients(k: u64) -> Vec<f64> {
    let kf = k as f64;
    let lk = ln_gamma(kf + 1.0);
    (0..=k).map(|y| y as f64).map(|y| lk - ln_gamma(y + 1.0) - ln_gamma(kf - y + 1.0)).collect()
}

/// Binomial(K, θ) pmf at every y from ln C(K, y) (K = `ln_choose.len()` − 1).
fn binomial_pmf_with(ln_choose: &[f64], theta: f64) -> Vec<f64> {
    let n = ln_choose.len();
    if theta <= 0.0 || theta >= 1.0 {
        let mut p = vec![0.0; n];
        p[if theta <= 0.0 { 0 } else { n - 1 }] = 1.0;
        return p;
    }
    let kf = (n - 1) as f64;
    let (lt, l1t) = (theta.ln(), (-theta).ln_1p());
    ln_choose.iter().enumerate().map(|(y, &c)| (c + y as f64 * lt + (kf - y as f64) * l1t).exp()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binomial_pmf_sums_to_one_and_matches_small_case() {
        let p = binomial_pmf_all(3, 0.25);
        let want = [27.0 / 64.0, 27.0 / 64.0, 9.0 / 64.0, 1.0 / 64.0];
        for (a, b) in p.iter().zip(want) {
            assert!((a - b).abs() < 1e-14, "{a} vs {b}");
        }
        for &t in &[1e-6, 0.3, 0.5, 0.999] {
            let s: f64 = binomial_pmf_all(1000, t).iter().sum();
            assert!((s - 1.0).abs() < 1e-11, "sum {s} at θ = {t}");
        }
        assert_eq!(binomial_pmf_all(4, 0.0), vec![1.0, 0.0, 0.0, 0.0, 0.0]);
        assert_eq!(binomial_pmf_all(4, 1.0), vec![0.0, 0.0, 0.0, 0.0, 1.0]);
    }
}
