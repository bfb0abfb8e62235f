//! Priors on Θ and the weights π_j they put on a grid.

use rand::distr::Distribution;
use rand::{rngs::StdRng, SeedableRng};
use statrs::distribution::{Beta, Continuous};

use super::quad::Rule;

/// A prior on the interval [lower, upper].
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Prior {
    /// Uniform.
    Uniform,
    /// Beta(a, b), rescaled from [0, 1] to [lower, upper].
    Beta {
        /// First shape parameter.
        a: f64,
        /// Second shape parameter.
        b: f64,
    },
    /// Gamma(shape, rate) on the parameter's own scale, truncated to [lower, upper].
    Gamma {
        /// Shape, > 0.
        shape: f64,
        /// Rate, > 0.
        rate: f64,
    },
    /// Log-normal (ln θ ~ Normal(mu, sigma²)) on the parameter's own scale, truncated to [lower, upper].
    LogNormal {
        /// Mean of ln θ.
        mu: f64,
        /// Standard deviation of ln θ, > 0.
        sigma: f64,
    },
}

impl Prior {
    /// Density at u ∈ [0, 1] on the unit scale (unnormalised constants are fine: weights are
    /// normalised afterwards).
    fn unit_density(self, u: f64) -> f64 {
        match self {
            Prior::Uniform => 1.0,
            Prior::Beta { a, b } => Beta::new(a, b).expect("validated shape parameters").pdf(u),
            Prior::Gamma { .. } | Prior::LogNormal { .. } => {
                unreachable!("gamma and log-normal priors are weighted on their own scale (own_scale_log_density)")
            }
        }
    }

    /// ln of the density at θ on the parameter's own scale, up to its constant (gamma and
    /// log-normal); −∞ where the density is 0.
    fn own_scale_log_density(self, theta: f64) -> f64 {
        match self {
            Prior::Gamma { shape, rate } => Prior::gamma_log_density(shape, rate, theta),
            // ln[θ^(−1) exp(−(ln θ − μ)²/(2σ²))]; zero density at θ ≤ 0.
            Prior::LogNormal { mu, sigma } if theta > 0.0 => {
                let z = (theta.ln() - mu) / sigma;
                -theta.ln() - 0.5 * z * z
            }
            Prior::LogNormal { .. } => f64::NEG_INFINITY,
            Prior::Uniform | Prior::Beta { .. } => unreachable!("weighted on the unit scale"),
        }
    }

    /// ln of the Gamma density at θ up to its constant: (shape − 1) ln θ − rate·θ.
    fn gamma_log_density(shape: f64, rate: f64, theta: f64) -> f64 {
        let power = if shape == 1.0 { 0.0 } else { (shape - 1.0) * theta.ln() };
        power - rate * theta
    }

    /// Weights ∝ prior density at the (1-D) points, normalised to sum to 1.
    /// Returns `None` if the density vanishes (or is infinite) on the whole grid.
    pub fn grid_weights(self, values: &[f64], lower: f64, upper: f64) -> Option<Vec<f64>> {
        if let Prior::Gamma { .. } | Prior::LogNormal { .. } = self {
            // In logs, shifted by the largest, so large rates or shapes do not underflow.
            let logs: Vec<f64> = values.iter().map(|&v| self.own_scale_log_density(v)).collect();
            let top = logs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            if !top.is_finite() || logs.iter().any(|l| l.is_nan() || *l == f64::INFINITY) {
                return None;
            }
            let w: Vec<f64> = logs.iter().map(|l| (l - top).exp()).collect();
            let total: f64 = w.iter().sum();
            return Some(w.into_iter().map(|x| x / total).collect());
        }
        let w: Vec<f64> = values.iter().map(|&v| self.unit_density((v - lower) / (upper - lower))).collect();
        let total: f64 = w.iter().sum();
        if !(total.is_finite() && total > 0.0) || w.iter().any(|x| !x.is_finite()) {
            return None;
        }
        Some(w.into_iter().map(|x| x / total).collect())
    }

    /// `points` i.i.d. draws from the prior on [lower, upper], sorted (the UBaPP paper's grid).
    pub fn samples(self, points: usize, seed: u64, lower: f64, upper: f64) -> Vec<f64> {
        let mut rng = StdRng::seed_from_u64(seed);
        let mut draws: Vec<f64> = match self {
            Prior::Uniform => (0..points).map(|_| rand::RngExt::random::<f64>(&mut rng)).collect(),
            Prior::Beta { a, b } => {
                let d = Beta::new(a, b).expect("validated shape parameters");
                (0..points).map(|_| d.sample(&mut rng)).collect()
            }
            Prior::Gamma { .. } | Prior::LogNormal { .. } => {
                unreachable!("prior-samples grids are refused for gamma and log-normal priors")
            }
        };
        draws.sort_by(f64::total_cmp);
        draws.into_iter().map(|u| lower + u * (upper - lower)).collect()
    }
}

impl Prior {
    /// The density at x = lower + u·(upper − lower) for u ∈ [0, 1], up to a constant: Beta on the
    /// unit scale, gamma and log-normal on the parameter's own scale (truncated to the interval).
    fn density_at_unit(self, u: f64, lower: f64, upper: f64) -> f64 {
        let x = lower + u * (upper - lower);
        match self {
            Prior::Uniform => 1.0,
            Prior::Gamma { shape, rate } => x.powf(shape - 1.0) * (-rate * x).exp(),
            Prior::LogNormal { mu, sigma } => {
                if x > 0.0 {
                    (-0.5 * ((x.ln() - mu) / sigma).powi(2)).exp() / x
                } else {
                    0.0
                }
            }
            Prior::Beta { a, b } => Beta::new(a, b).expect("validated shape parameters").pdf(u),
        }
    }
}

/// A continuous prior on the interval [lower, upper] as a density (up to a constant): what the
/// true risk integrates against and what plots shade. A mixture's components are each truncated
/// to the interval and normalised (Z_c = ∫ f_c by Gauss–Legendre, 4 × 24 nodes on the unit
/// scale), then mixed, as on the grid. Built once when the model is validated.
#[derive(Debug, Clone, PartialEq)]
pub struct PriorDensity {
    lower: f64,
    upper: f64,
    /// (weight / Σ weights, component, Z_c); one component of weight 1 and Z = 1 for a plain prior.
    components: Vec<(f64, Prior, f64)>,
    mixture: bool,
}

impl PriorDensity {
    /// A single scalar prior.
    pub(crate) fn scalar(prior: Prior, lower: f64, upper: f64) -> PriorDensity {
        PriorDensity { lower, upper, components: vec![(1.0, prior, 1.0)], mixture: false }
    }

    /// Σ_c w_c f_c / Z_c over `(weight, component)` pairs (weights validated ≥ 0, positive sum).
    pub(crate) fn mixture(parts: &[(f64, Prior)], lower: f64, upper: f64) -> PriorDensity {
        let rule = Rule::new(24);
        let total: f64 = parts.iter().map(|p| p.0).sum();
        let components = parts
            .iter()
            .map(|&(w, c)| {
                let z: f64 = (0..4)
                    .flat_map(|p| rule.on(p as f64 / 4.0, (p + 1) as f64 / 4.0).collect::<Vec<_>>())
                    .map(|(v, wv)| wv * c.density_at_unit(v, lower, upper))
                    .sum();
                (w / total, c, z)
            })
            .collect();
        PriorDensity { lower, upper, components, mixture: true }
    }

    /// [lower, upper].
    pub fn interval(&self) -> (f64, f64) {
        (self.lower, self.upper)
    }

    /// The density at lower + u·(upper − lower), up to a constant.
    pub fn at_unit(&self, u: f64) -> f64 {
        let (lo, hi) = (self.lower, self.upper);
        if !self.mixture {
            return self.components[0].1.density_at_unit(u, lo, hi);
        }
        let mut d = 0.0;
        for &(w, c, z) in &self.components {
            if z > 0.0 {
                d += w * c.density_at_unit(u, lo, hi) / z;
            }
        }
        d
    }
}

/// Weights ∝ Dirichlet(α) density at the simplex points (rows of `points`, each summing to 1),
/// normalised to sum to 1. Returns `None` if the density vanishes or is infinite somewhere on the grid
/// in a way that leaves no finite positive total.
pub(super) fn dirichlet_weights(points: &crate::model::Grid, alpha: &[f64]) -> Option<Vec<f64>> {
    // log density up to the normalising constant: Σ_d (α_d − 1) ln θ_d.
    let logs: Vec<f64> = points
        .points()
        .rows()
        .into_iter()
        .map(|p| p.iter().zip(alpha).map(|(&t, &a)| if a == 1.0 { 0.0 } else { (a - 1.0) * t.ln() }).sum())
        .collect();
    let top = logs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if !top.is_finite() {
        return None;
    }
    let w: Vec<f64> = logs.iter().map(|l| (l - top).exp()).collect();
    let total: f64 = w.iter().sum();
    if !(total.is_finite() && total > 0.0) {
        return None;
    }
    Some(w.into_iter().map(|x| x / total).collect())
}

/// `points` i.i.d. draws from Dirichlet(α) (normalised Gamma(α_d, 1) draws), one per row.
pub(super) fn dirichlet_samples(points: usize, seed: u64, alpha: &[f64]) -> crate::model::Grid {
    let mut rng = StdRng::seed_from_u64(seed);
    let gammas: Vec<statrs::distribution::Gamma> =
        alpha.iter().map(|&a| statrs::distribution::Gamma::new(a, 1.0).expect("validated α > 0")).collect();
    let d = alpha.len();
    let mut out = ndarray::Array2::zeros((points, d));
    for mut row in out.rows_mut() {
        loop {
            let g: Vec<f64> = gammas.iter().map(|g| g.sample(&mut rng)).collect();
            let s: f64 = g.iter().sum();
            if s > 0.0 && s.is_finite() {
                for (x, v) in row.iter_mut().zip(g) {
                    *x = v / s;
                }
                break;
            }
        }
    }
    crate::model::Grid::new(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dirichlet_samples_lie_on_the_simplex_with_the_right_mean() {
        let alpha = [1.0, 2.0, 5.0];
        let g = dirichlet_samples(20_000, 11, &alpha);
        let mut mean = [0.0; 3];
        for r in g.points().rows() {
            assert!((r.sum() - 1.0).abs() < 1e-12 && r.iter().all(|&x| x >= 0.0));
            for d in 0..3 {
                mean[d] += r[d] / 20_000.0;
            }
        }
        // E θ_d = α_d / Σα; sd of each coordinate ≤ 0.5, so 5 sd of the mean is ≤ 0.018.
        for d in 0..3 {
            assert!((mean[d] - alpha[d] / 8.0).abs() < 0.018, "{mean:?}");
        }
    }

    #[test]
    fn gamma_weights_are_the_normalised_truncated_density() {
        let values = [0.25, 0.75, 1.5, 3.0, 6.0];
        let w = Prior::Gamma { shape: 2.5, rate: 0.8 }.grid_weights(&values, 0.0, 8.0).unwrap();
        let dens = |x: f64| x.powf(1.5) * (-0.8 * x).exp();
        let total: f64 = values.iter().map(|&x| dens(x)).sum();
        for (x, wx) in values.iter().zip(&w) {
            assert!((wx - dens(*x) / total).abs() < 1e-15, "{x}: {wx}");
        }
        // shape = 1 is the exponential; a huge rate does not underflow to "no mass".
        let w = Prior::Gamma { shape: 1.0, rate: 2000.0 }.grid_weights(&[1.0, 2.0], 0.0, 3.0).unwrap();
        assert!(w[0] > 0.999_999 && (w.iter().sum::<f64>() - 1.0).abs() < 1e-15);
        // shape < 1 has an infinite density at 0: a grid point at 0 has no finite weight.
        assert!(Prior::Gamma { shape: 0.5, rate: 1.0 }.grid_weights(&[0.0, 1.0], 0.0, 1.0).is_none());
    }

    #[test]
    fn dirichlet_weights_are_the_normalised_density() {
        let g = crate::model::Grid::simplex_lattice(3, 4);
        let w = dirichlet_weights(&g, &[1.0, 1.0, 1.0]).unwrap();
        assert!(w.iter().all(|&x| (x - 1.0 / 15.0).abs() < 1e-15));
        let w = dirichlet_weights(&g, &[2.0, 3.0, 0.5]).unwrap();
        let dens = |p: ndarray::ArrayView1<f64>| p[0] * p[1].powi(2) * p[2].powf(-0.5);
        let total: f64 = g.points().rows().into_iter().map(dens).sum();
        for (j, r) in g.points().rows().into_iter().enumerate() {
            assert!((w[j] - dens(r) / total).abs() < 1e-14);
        }
    }
}
