//! `[constraints]` validated: which shape and accuracy properties the mechanism must have, with
//! everything the LP rows and the exact checks need (the outputs' order, each observation's
//! estimate, the reflection, the honest targets, the fixed distribution). Definitions, with the
//! papers they come from, in docs/constraints.md.
//!
//! - monotone (Cormode, Kulkarni & Srivastava, ICDE 2018, "row/column monotonicity"): for every
//!   threshold t in the outputs' ascending order, Σ_{k ≥ t} P\[k,i\] is nondecreasing in i along
//!   Y's order (each column's release distribution stochastically increasing in y);
//! - symmetric (ibid., "symmetry"): P\[k,i\] = P\[σk, σi\] for the binomial reflection
//!   σ: y ↦ K − y, θ̃ ↦ 1 − θ̃ (lower + upper − θ̃ on the outputs);
//! - honest (ibid., "honesty"): for every y_i whose estimate e_i is an output θ̃_h (to 1e-9),
//!   P\[h,i\] ≥ P\[k,i\] for every k — the true value is the most likely release;
//! - unbiased (Badanidiyuru et al., NeurIPS 2023): Σ_k θ̃_k P\[k,i\] = e_i for every i;
//! - fixed point (Kohli & Laskowski, PoPETs 2026): Σ_i P\[k,i\] z_i = z_k for every k, with the
//!   outputs equal to the estimates of Y in order (θ̃_k = e_k).

use serde::{Deserialize, Serialize};

use super::error::bail_field;
use super::spec::ModelSpec;
use super::{Family, Grid, Objective, Result};

/// Two numbers are "the same point" of a grid within this (relative to max(1, |x|)).
const SAME_POINT: f64 = 1e-9;

/// The names of the constraints a mechanism carries, as recorded in an artifact.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConstraintNames {
    /// Stochastically increasing columns.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub monotone: bool,
    /// Invariant under the family's reflection.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub symmetric: bool,
    /// The true value's output is the most likely release.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub honest: bool,
    /// E\[θ̃ | y\] = y's estimate.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub unbiased: bool,
    /// P z = z.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub fixed_point: bool,
}

impl ConstraintNames {
    /// True when no constraint is carried.
    pub fn is_empty(&self) -> bool {
        *self == ConstraintNames::default()
    }

    /// The names that are on, in the model file's words (`monotone, unbiased`), or `none`.
    pub fn label(&self) -> String {
        let on: Vec<&str> = [
            (self.monotone, "monotone"),
            (self.symmetric, "symmetric"),
            (self.honest, "honest"),
            (self.unbiased, "unbiased"),
            (self.fixed_point, "fixed_point"),
        ]
        .into_iter()
        .filter_map(|(on, name)| on.then_some(name))
        .collect();
        if on.is_empty() {
            "none".into()
        } else {
            on.join(", ")
        }
    }
}

/// A model's constraints, validated against its family and grids.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Constraints {
    /// Which are on.
    pub names: ConstraintNames,
    /// Output indices in ascending order of their value (monotone's thresholds).
    pub(crate) ascending: Vec<usize>,
    /// The output values θ̃_k (one-dimensional outputs; empty when no constraint is on).
    pub(crate) output_values: Vec<f64>,
    /// e_i, each observation's estimate (honest, unbiased, fixed point; else empty).
    pub(crate) estimate: Vec<f64>,
    /// (σ on Y, σ on Θ̃) when symmetric.
    pub(crate) reflection: Option<(Vec<usize>, Vec<usize>)>,
    /// For each observation, the output equal to its estimate, if any (honest).
    pub(crate) honest_target: Vec<Option<usize>>,
    /// z, normalised (fixed point).
    pub(crate) fixed: Option<Vec<f64>>,
}

impl Constraints {
    /// True when no constraint is asked for.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// The output values θ̃_k.
    pub fn output_values(&self) -> &[f64] {
        &self.output_values
    }

    /// Each observation's estimate e_i (empty unless honest, unbiased or fixed point is on).
    pub fn estimate(&self) -> &[f64] {
        &self.estimate
    }

    /// Output indices in ascending order of value.
    pub fn ascending(&self) -> &[usize] {
        &self.ascending
    }

    /// (σ on Y, σ on Θ̃) when symmetric.
    pub fn reflection(&self) -> Option<(&[usize], &[usize])> {
        self.reflection.as_ref().map(|(y, o)| (y.as_slice(), o.as_slice()))
    }

    /// For each observation, the output equal to its estimate (honest).
    pub fn honest_target(&self) -> &[Option<usize>] {
        &self.honest_target
    }

    /// z (fixed point).
    pub fn fixed(&self) -> Option<&[f64]> {
        self.fixed.as_deref()
    }
}

fn same(a: f64, b: f64) -> bool {
    (a - b).abs() <= SAME_POINT * a.abs().max(b.abs()).max(1.0)
}

/// Validate `[constraints]` against the family and the output grid; every refusal is one
/// sentence naming the field, before anything is solved.
pub(super) fn constraints(
    spec: &ModelSpec,
    family: &Family,
    outputs: &Grid,
    objective: Objective,
    interval: (f64, f64),
) -> Result<Constraints> {
    let c = &spec.constraints;
    let names = ConstraintNames {
        monotone: c.monotone,
        symmetric: c.symmetric,
        honest: c.honest,
        unbiased: c.unbiased,
        fixed_point: c.fixed_point.is_some(),
    };
    if names.is_empty() {
        if c.estimate.is_some() {
            bail_field!("constraints.estimate", "is used by honest, unbiased and fixed_point, and none is on");
        }
        return Ok(Constraints::default());
    }
    if objective != Objective::Bayes || spec.delta != 0.0 {
        bail_field!("constraints", "apply to the Bayes program with pure ε-DP only (objective = \"bayes\", delta = 0)");
    }
    if spec.parties.is_some_and(|p| p.count > 1) {
        bail_field!("constraints", "apply to one data holder only (no [parties])");
    }
    if outputs.dim() != 1 {
        bail_field!("constraints", "need one-dimensional outputs (the output grid has {} coordinates)", outputs.dim());
    }
    let n_obs = family.observation_count();
    let output_values = outputs.values();
    let mut ascending: Vec<usize> = (0..output_values.len()).collect();
    ascending.sort_by(|&a, &b| output_values[a].total_cmp(&output_values[b]));
    if matches!(family, Family::Multinomial { categories, .. } if *categories > 2) {
        bail_field!(
            "constraints",
            "need an ordered Y (binomial, poisson or table), not a multinomial with more than 2 categories"
        );
    }
    // The estimate e_i: stated, or the family's natural one.
    let needs_estimate = names.honest || names.unbiased || names.fixed_point;
    let estimate = match (&c.estimate, family) {
        (Some(e), _) => {
            if e.len() != n_obs {
                bail_field!("constraints.estimate", "has {} values but Y has {n_obs} observations", e.len());
            }
            if let Some(x) = e.iter().find(|x| !x.is_finite()) {
                bail_field!("constraints.estimate", "must be finite numbers (got {x})");
            }
            e.clone()
        }
        (None, _) if !needs_estimate => Vec::new(),
        (None, Family::Binomial { trials }) => (0..n_obs).map(|y| y as f64 / *trials as f64).collect(),
        (None, Family::Multinomial { records, .. }) => (0..n_obs).map(|y| y as f64 / *records as f64).collect(),
        (None, Family::Poisson { records, .. }) => (0..n_obs).map(|y| y as f64 / *records as f64).collect(),
        (None, Family::Table { .. }) => bail_field!(
            "constraints.estimate",
            "is needed with a table family for honest, unbiased or fixed_point (one estimate per observation)"
        ),
    };
    let reflection = if names.symmetric {
        let Family::Binomial { .. } = family else {
            bail_field!("constraints.symmetric", "needs the binomial family (its reflection y ↦ K − y, θ ↦ 1 − θ)");
        };
        let sigma_y: Vec<usize> = (0..n_obs).rev().collect();
        let mut sigma_out = Vec::with_capacity(output_values.len());
        for &v in &output_values {
            let mirror = 1.0 - v;
            match output_values.iter().position(|&w| same(w, mirror)) {
                Some(k) => sigma_out.push(k),
                None => bail_field!(
                    "constraints.symmetric",
                    "needs an output grid closed under θ̃ ↦ 1 − θ̃, but {v} has no mirror {mirror} among the outputs"
                ),
            }
        }
        if c.estimate.is_some() && (0..n_obs).any(|i| !same(estimate[i], 1.0 - estimate[n_obs - 1 - i])) {
            bail_field!("constraints.estimate", "must be symmetric (e_(K−y) = 1 − e_y) with symmetric = true");
        }
        Some((sigma_y, sigma_out))
    } else {
        None
    };
    let honest_target: Vec<Option<usize>> = if names.honest {
        estimate.iter().map(|&e| output_values.iter().position(|&w| same(w, e))).collect()
    } else {
        Vec::new()
    };
    if names.honest && honest_target.iter().all(Option::is_none) {
        bail_field!("constraints.honest", "constrains nothing: no observation's estimate is one of the outputs");
    }
    if names.unbiased {
        let (lo, hi) = (output_values[ascending[0]], output_values[*ascending.last().expect("outputs")]);
        let e_lo = estimate.iter().copied().fold(f64::INFINITY, f64::min);
        let e_hi = estimate.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        // Under ε-DP every column has the same support (Y is connected), so a column whose
        // estimate is an end of the outputs' range would be a point mass there, and so would all.
        if e_lo < e_hi && !(lo < e_lo && hi > e_hi) {
            bail_field!(
                "constraints.unbiased",
                "needs outputs strictly beyond the estimates on both sides: the outputs span [{lo}, {hi}] and the \
                 estimates [{e_lo}, {e_hi}] (list wider outputs, e.g. output.grid = {{ kind = \"explicit\", values = [...] }}; \
                 they may lie outside [parameter.lower, parameter.upper] = [{}, {}])",
                interval.0,
                interval.1
            );
        }
    }
    let fixed = match &c.fixed_point {
        None => None,
        Some(fp) => {
            let Some(z) = &fp.values else {
                bail_field!("constraints.fixed_point", "needs `values` or `file`");
            };
            if fp.file.is_some() {
                bail_field!("constraints.fixed_point", "takes one of `values` and `file`, not both");
            }
            if z.len() != n_obs {
                bail_field!("constraints.fixed_point.values", "has {} weights but Y has {n_obs} observations", z.len());
            }
            if let Some(x) = z.iter().find(|x| !(x.is_finite() && **x >= 0.0)) {
                bail_field!("constraints.fixed_point.values", "must be finite weights ≥ 0 (got {x})");
            }
            let total: f64 = z.iter().sum();
            if total <= 0.0 {
                bail_field!("constraints.fixed_point.values", "must have a positive sum");
            }
            if output_values.len() != n_obs || (0..n_obs).any(|k| !same(output_values[k], estimate[k])) {
                bail_field!(
                    "constraints.fixed_point",
                    "needs the output grid equal to Y's estimates in order ({n_obs} outputs, the k-th = e_k), so that P maps a distribution of counts to one"
                );
            }
            Some(z.iter().map(|x| x / total).collect())
        }
    };
    Ok(Constraints { names, ascending, output_values, estimate, reflection, honest_target, fixed })
}
