//! The chain mechanism in its compact form: truncated geometric(ε) on Y, then a remap table
//! z → output index. No |Θ̃| × |Y| matrix is needed to store it. Clamping y + D folds exactly
//! the tails of [`kernel`]'s G. The released form and its exact sampler (at a dyadic
//! ε' ≤ ε) are `mechanism::CompactMechanism`'s. Data below the solvers: the chain solver
//! (`super::chain`) builds it, a [`super::Solution`] carries it.

pub(crate) mod kernel;

use ndarray::Array2;

pub(crate) use kernel::Kernel;

/// Geometric(ε) on Y = {0..n−1} followed by a deterministic remap to output indices.
#[derive(Debug, Clone, PartialEq)]
pub struct GeometricRemap {
    /// The privacy level the geometric kernel was solved for.
    pub eps: f64,
    /// remap\[z\] = index of the output released when the geometric mechanism gives z.
    pub remap: Vec<u32>,
    /// |Θ̃| (outputs may be unused by the remap).
    pub n_outputs: usize,
}

impl GeometricRemap {
    /// |Y|.
    pub fn n_obs(&self) -> usize {
        self.remap.len()
    }

    /// The dense P\[k, y\] = Σ_{z: remap z = k} G\[z|y\] at the solved ε (moderate sizes only).
    pub fn to_dense(&self) -> Array2<f64> {
        self.to_dense_at(self.eps)
    }

    /// The dense P of geometric(`eps`) + this remap (e.g. at the sampler's ε').
    pub fn to_dense_at(&self, eps: f64) -> Array2<f64> {
        let n = self.n_obs();
        let kernel = Kernel::new(n, eps);
        let pw: Vec<f64> = (0..n).map(|d| (-eps * d as f64).exp()).collect();
        let mut p = Array2::zeros((self.n_outputs, n));
        for (z, &k) in self.remap.iter().enumerate() {
            let scale = kernel.entry(z, z);
            let mut row = p.row_mut(k as usize);
            for (y, v) in row.iter_mut().enumerate() {
                *v += scale * pw[z.abs_diff(y)];
            }
        }
        p
    }

    /// The remap as runs `(first z, output index)`, in increasing z, each run the longest stretch
    /// of equal outputs (a squared-loss remap is monotone: about |Θ̃| runs whatever |Y| is).
    pub fn runs(&self) -> Vec<(usize, u32)> {
        let mut runs: Vec<(usize, u32)> = Vec::new();
        for (z, &k) in self.remap.iter().enumerate() {
            if runs.last().is_none_or(|&(_, last)| last != k) {
                runs.push((z, k));
            }
        }
        runs
    }

    /// The dense P at `eps` in O(runs · |Y|) (not O(|Y|²) as [`GeometricRemap::to_dense_at`]):
    /// each run [a, b] of the remap adds Pr(a ≤ clamp(y + D) ≤ b) to its output's row, from the
    /// closed-form tails of the two-sided geometric D (no cancellation: the mass outside the
    /// run is subtracted only when y lies inside it).
    pub fn to_dense_by_runs(&self, eps: f64) -> Array2<f64> {
        let n = self.n_obs();
        let mut p = Array2::zeros((self.n_outputs, n));
        if n == 0 {
            return p;
        }
        let alpha = (-eps).exp();
        // Pr(D ≥ d) = Pr(D ≤ −d) for d ≥ 1, tabulated once (the same values as computed inline).
        let tails: Vec<f64> = (0..=n).map(|d| (-eps * d as f64).exp() / (1.0 + alpha)).collect();
        let tail = |d: usize| tails[d];
        let runs = self.runs();
        for (r, &(a, k)) in runs.iter().enumerate() {
            let b = runs.get(r + 1).map_or(n - 1, |&(next, _)| next - 1);
            let mut row = p.row_mut(k as usize);
            for (y, v) in row.iter_mut().enumerate() {
                // Pr(Z < a) = Pr(D ≤ a − 1 − y), Pr(Z > b) = Pr(D ≥ b + 1 − y) (0 at the ends).
                let mass = if b < y {
                    tail(y - b) - if a == 0 { 0.0 } else { tail(y - a + 1) }
                } else if a > y {
                    tail(a - y) - if b == n - 1 { 0.0 } else { tail(b + 1 - y) }
                } else {
                    let below = if a == 0 { 0.0 } else { tail(y - a + 1) };
                    let above = if b == n - 1 { 0.0 } else { tail(b + 1 - y) };
                    1.0 - below - above
                };
                *v += mass;
            }
        }
        p
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dense_by_runs_matches_dense() {
        let mech = GeometricRemap { eps: 0.7, remap: vec![0, 1, 1, 2, 3, 4, 5, 6, 8, 8, 8], n_outputs: 9 };
        let a = mech.to_dense();
        let b = mech.to_dense_by_runs(0.7);
        let worst = a.iter().zip(b.iter()).map(|(x, y)| (x - y).abs() / x.max(1e-300)).fold(0.0, f64::max);
        assert!(worst < 1e-12, "{worst}");
        assert_eq!(mech.runs(), vec![(0, 0), (1, 1), (3, 2), (4, 3), (5, 4), (6, 5), (7, 6), (8, 8)]);
    }
}
