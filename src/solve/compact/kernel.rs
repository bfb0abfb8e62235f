//! The truncated geometric mechanism on Y = {0..n−1} (Ghosh, Roughgarden & Sundararajan 2009,
//! "Universally utility-maximizing privacy mechanisms", §2) and the linear-time operations on it.
//!
//! With α = e^{−ε} and κ = (1 − α)/(1 + α), the mechanism releases z ∈ {0..n−1} given y with
//!
//! ```text
//! G[z|y] = κ · α^{|z−y|}           for 0 < z < n−1      (two-sided geometric, y + D)
//! G[0|y] = α^{y} / (1 + α)                             (the tail z ≤ 0 folded into 0)
//! G[n−1|y] = α^{n−1−y} / (1 + α)                       (the tail z ≥ n−1 folded into n−1)
//! ```
//!
//! (n = 1: G = \[1\].) Each column sums to 1: Σ_{z∈ℤ} κ α^{|z−y|} = 1 and Σ_{z≤0} κ α^{y−z} = α^y/(1+α).
//! Each row z is, as a function of y, an extreme ray of the DP cone: G\[z|y+1\]/G\[z|y\] = α^{±1},
//! so the DP constraint P\[z,y\] ≤ e^ε P\[z,y±1\] holds with equality on every edge.
//!
//! The operations here never build G: applying G to a vector costs two linear recursions
//! (forward L_z = c_z + α L_{z−1}, backward R_z = c_z + α R_{z+1}), and G⁻¹ is tridiagonal
//! (G is a rescaled Kac–Murdock–Szegő matrix, whose inverse is
//! (1 − α²)⁻¹ · tridiag(−α, (1, 1+α², …, 1+α², 1), −α)).

/// Parameters of the truncated geometric kernel at one ε.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Kernel {
    /// |Y| = n.
    pub n: usize,
    /// ε.
    pub eps: f64,
    /// α = e^{−ε}.
    pub alpha: f64,
    /// 1 − α, computed without cancellation.
    pub one_minus_alpha: f64,
}

impl Kernel {
    /// The kernel on {0..n−1} at privacy level ε > 0.
    pub(crate) fn new(n: usize, eps: f64) -> Kernel {
        assert!(n >= 1 && eps > 0.0 && eps.is_finite(), "kernel needs n ≥ 1 and finite ε > 0");
        Kernel { n, eps, alpha: (-eps).exp(), one_minus_alpha: -(-eps).exp_m1() }
    }

    /// κ = (1 − α)/(1 + α), the interior rows' normalising constant.
    pub(crate) fn kappa(&self) -> f64 {
        self.one_minus_alpha / (1.0 + self.alpha)
    }

    /// Weight of the ray z at distance 0: κ inside, 1/(1+α) at the ends, 1 when n = 1.
    fn row_scale(&self, z: usize) -> f64 {
        if self.n == 1 {
            1.0
        } else if z == 0 || z == self.n - 1 {
            1.0 / (1.0 + self.alpha)
        } else {
            self.kappa()
        }
    }

    /// G\[z|y\], from α^d = e^{−εd} evaluated directly (no accumulated powers).
    pub(crate) fn entry(&self, z: usize, y: usize) -> f64 {
        self.row_scale(z) * (-self.eps * z.abs_diff(y) as f64).exp()
    }

    /// u = G c, u_z = Σ_y G\[z|y\] c_y, in O(n) with two recursions. `work` is scratch of length n.
    pub(crate) fn smooth(&self, c: &[f64], u: &mut [f64], work: &mut [f64]) {
        let n = self.n;
        debug_assert!(c.len() == n && u.len() == n && work.len() == n);
        if n == 1 {
            u[0] = c[0];
            return;
        }
        let a = self.alpha;
        // work = L (forward), then u_z = L_z + R_z − c_z with R accumulated backwards.
        let mut acc = 0.0;
        for z in 0..n {
            acc = c[z] + a * acc;
            work[z] = acc;
        }
        let mut r = 0.0;
        for z in (0..n).rev() {
            r = c[z] + a * r;
            u[z] = work[z] + r - c[z];
        }
        let (kappa, end) = (self.kappa(), 1.0 / (1.0 + a));
        u[0] *= end;
        u[n - 1] *= end;
        for v in &mut u[1..n - 1] {
            *v *= kappa;
        }
    }

    /// u_z = Σ_y G\[z|y\] c_y at one point z, summing only |z − y| ≤ `reach` (the rest is below
    /// α^{reach+1}/(1 − α) · max|c| in absolute value).
    pub(crate) fn smooth_at(&self, c: impl Fn(usize) -> f64, z: usize, reach: usize) -> f64 {
        let lo = z.saturating_sub(reach);
        let hi = (z + reach).min(self.n - 1);
        let a = self.alpha;
        // Horner outwards from z on each side.
        let mut left = 0.0;
        for y in lo..z {
            left = c(y) + a * left;
        }
        let mut right = 0.0;
        for y in (z + 1..=hi).rev() {
            right = c(y) + a * right;
        }
        self.row_scale(z) * (c(z) + a * (left + right))
    }

    /// How far |z − y| must reach for α^{d} to fall below 1e-20 (capped at n).
    pub(crate) fn reach(&self) -> usize {
        let d = (46.1 / self.eps).ceil();
        if d >= self.n as f64 {
            self.n
        } else {
            d as usize
        }
    }

    /// The (z, z') entry of G⁻¹ for |z − z'| = 1: −α/(1−α)² when z' is interior, −α/(1−α) when z'
    /// is an end (from the KMS inverse and the row scales κ and 1/(1+α)).
    pub(crate) fn inverse_offdiag(&self, z_prime: usize) -> f64 {
        let oma = self.one_minus_alpha;
        if z_prime == 0 || z_prime == self.n - 1 {
            -self.alpha / oma
        } else {
            -self.alpha / (oma * oma)
        }
    }

    /// The dense |Y| × |Y| matrix G\[z, y\] (tests and small cases only).
    #[cfg(test)]
    pub(crate) fn dense(&self) -> ndarray::Array2<f64> {
        ndarray::Array2::from_shape_fn((self.n, self.n), |(z, y)| self.entry(z, y))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_sum_to_one_and_rows_are_extreme_rays() {
        for &(n, eps) in &[(1usize, 0.3f64), (2, 0.5), (7, 0.1), (50, 2.0), (30, 1e-4)] {
            let k = Kernel::new(n, eps);
            let g = k.dense();
            for y in 0..n {
                let s: f64 = g.column(y).sum();
                assert!((s - 1.0).abs() < 1e-13, "n={n} ε={eps}: column {y} sums to {s}");
            }
            // DP ratio: G[z|y] ≤ e^ε G[z|y±1], tight on every edge, up to rounding.
            let e = eps.exp();
            for z in 0..n {
                for y in 1..n {
                    let (p, q) = (g[[z, y - 1]], g[[z, y]]);
                    let r = if p > q { p / q } else { q / p };
                    assert!((r - e).abs() <= 8.0 * f64::EPSILON * e, "ratio {r} vs e^ε {e}");
                }
            }
        }
    }

    #[test]
    fn smooth_and_inverse_match_dense_algebra() {
        for &(n, eps) in &[(1usize, 0.7), (2, 0.5), (3, 1.3), (9, 0.2), (40, 3.0)] {
            let k = Kernel::new(n, eps);
            let g = k.dense();
            let c: Vec<f64> = (0..n).map(|i| ((i * 7 + 3) % 5) as f64 - 1.5).collect();
            let mut u = vec![0.0; n];
            let mut w = vec![0.0; n];
            k.smooth(&c, &mut u, &mut w);
            for z in 0..n {
                let want: f64 = (0..n).map(|y| g[[z, y]] * c[y]).sum();
                assert!((u[z] - want).abs() < 1e-12, "smooth z={z}: {} vs {want}", u[z]);
                let at = k.smooth_at(|y| c[y], z, n);
                assert!((at - want).abs() < 1e-12, "smooth_at z={z}: {at} vs {want}");
            }
            // G⁻¹ is tridiagonal with the stated off-diagonal: (G⁻¹ G)[z, z+1] = 0 reconstructs it.
            if n >= 2 {
                for z in 0..n - 1 {
                    // Row z of G⁻¹ applied to column y of G gives δ_{zy}; check via G's rows.
                    let off_r = k.inverse_offdiag(z + 1);
                    let off_l = if z > 0 { k.inverse_offdiag(z - 1) } else { 0.0 };
                    // diagonal from the identity at column z: d·G[z,z] + off_l·G[z−1,z] + off_r·G[z+1,z] = 1
                    let left = if z > 0 { off_l * g[[z - 1, z]] } else { 0.0 };
                    let d = (1.0 - left - off_r * g[[z + 1, z]]) / g[[z, z]];
                    for y in 0..n {
                        let mut v = d * g[[z, y]] + off_r * g[[z + 1, y]];
                        if z > 0 {
                            v += off_l * g[[z - 1, y]];
                        }
                        let want = if y == z { 1.0 } else { 0.0 };
                        assert!((v - want).abs() < 1e-9, "n={n} ε={eps} (G⁻¹G)[{z},{y}] = {v}");
                    }
                }
            }
        }
    }
}
