//! `[constraints]` on released integer weights: the exact check ([`check_constraints`]) and a
//! repair whose rounding keeps the inequalities exactly ([`repair_constrained`]).
//!
//! The inequalities (monotone, honest, symmetric) are checked on the integers themselves:
//! tails Σ_{k ≥ t} w\[k,i\] compared in u128, w\[h,i\] ≥ w\[k,i\], w\[k,i\] = w\[σk,σi\]. The equalities
//! (unbiased, fixed point) cannot survive rounding to a column total of 2^52 exactly; their
//! largest deviation, |Σ_k θ̃_k w\[k,i\]/T − e_i| and |Σ_i z_i w\[k,i\]/T − z_k|, is bounded from
//! above in directed rounding (every product and sum stepped outwards), recorded in the
//! certificate and re-derived by `verify`.
//!
//! The repair: clamp and normalise; average with the reflection (symmetric); mix with the
//! uniform distribution u, `Q = (1 − λ)P + λu`, which keeps every inequality (u is the same in
//! every column, puts equal mass on every output and is its own reflection) and gives every DP
//! row slack λ·u·(ρ − 1) for the rounding and the fixes below; then round *tails* (monotone:
//! the rounding of a nondecreasing sequence is nondecreasing) or entries by largest remainders,
//! and fix what rounding of a P that met the constraints only to the solver's tolerance left:
//! tails raised to their running maximum along Y (monotone), the estimate's output raised to its
//! column's maximum with the mass taken from the largest other entries (honest), columns past
//! the middle replaced by the mirror of their reflection (symmetric). The exact checks decide;
//! a failure retries with four times the margin, and the last failure is a refusal.

use ndarray::Array2;
use serde::{Deserialize, Serialize};

use super::exact::{certify_weights, next_down, next_up, RatioBound};
use super::repair::{check_input, normalise_columns, quantise, RepairMethod, RepairReport, MAX_INPUT_ERROR};
use super::{CertifyError, PrivacyCertificate};
use crate::model::{ConstraintNames, Constraints, Neighbours};

/// Largest deviation an equality constraint (unbiased, fixed point) may keep in a released
/// mechanism; beyond it the design is refused, not released.
pub(crate) const MAX_EQUALITY_ERROR: f64 = 1e-6;

/// What a released mechanism's weights were checked to carry.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConstraintCertificate {
    /// The constraints checked (the inequalities hold exactly).
    pub names: ConstraintNames,
    /// Unbiased: an upper bound on max_i |E\[θ̃ | y_i\] − e_i| of the weights.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_bias: Option<f64>,
    /// Fixed point: an upper bound on max_k |(P z)_k − z_k| of the weights.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_fixed_point_error: Option<f64>,
}

/// A constraint the weights break, in words.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ConstraintBreach {
    /// A tail decreases along Y.
    #[error("monotone: Pr(θ̃ ≥ θ̃_{threshold} | y) falls from observation {i} to {next}")]
    Monotone {
        /// The threshold's output index.
        threshold: usize,
        /// The observation.
        i: usize,
        /// The next one.
        next: usize,
    },
    /// w\[k,i\] ≠ w\[σk,σi\].
    #[error("symmetric: the weight of output {k} at observation {i} differs from its reflection's")]
    Symmetric {
        /// Output.
        k: usize,
        /// Observation.
        i: usize,
    },
    /// An output is likelier than the estimate's.
    #[error("honest: at observation {i} output {k} is likelier than the estimate's output {h}")]
    Honest {
        /// Observation.
        i: usize,
        /// The likelier output.
        k: usize,
        /// The estimate's output.
        h: usize,
    },
    /// An equality's deviation is beyond what may be released.
    #[error("{constraint}: a deviation of up to {bound:.3e} (at most {MAX_EQUALITY_ERROR:e} may be released)")]
    Equality {
        /// `unbiased` or `fixed_point`.
        constraint: &'static str,
        /// The proven bound on the deviation.
        bound: f64,
    },
}

/// Σ_j a_j·w_j / total, as an interval \[lo, hi\] in directed rounding (w_j as f64 is exact).
fn weighted_mean(terms: impl Iterator<Item = (f64, u64)>, total: u64) -> (f64, f64) {
    let (mut lo, mut hi) = (0.0f64, 0.0f64);
    for (a, w) in terms {
        if w == 0 || a == 0.0 {
            continue;
        }
        let x = a * w as f64;
        lo = next_down(lo + next_down(x));
        hi = next_up(hi + next_up(x));
    }
    let t = total as f64;
    (next_down(lo / t), next_up(hi / t))
}

/// An upper bound on |x − target| for x in \[lo, hi\].
fn deviation((lo, hi): (f64, f64), target: f64) -> f64 {
    next_up(hi - target).max(next_up(target - lo)).max(0.0)
}

/// Check integer weights `columns[i][k]` (each column summing to `total`) against
/// `constraints`: the inequalities exactly, the equalities' largest deviation bounded above.
/// Errs on the first broken inequality; the equalities' bounds are returned (and not judged).
pub(crate) fn check_constraints(
    constraints: &Constraints,
    columns: &[Vec<u64>],
    total: u64,
) -> Result<ConstraintCertificate, ConstraintBreach> {
    let names = constraints.names;
    let n_obs = columns.len();
    let n_out = columns.first().map_or(0, Vec::len);
    if names.monotone {
        let up = constraints.ascending();
        let mut tails = vec![0u128; n_out + 1];
        let mut previous: Option<Vec<u128>> = None;
        for (i, col) in columns.iter().enumerate() {
            for t in (0..n_out).rev() {
                tails[t] = tails[t + 1] + col[up[t]] as u128;
            }
            if let Some(prev) = &previous {
                if let Some(t) = (1..n_out).find(|&t| prev[t] > tails[t]) {
                    return Err(ConstraintBreach::Monotone { threshold: up[t], i: i - 1, next: i });
                }
            }
            previous = Some(tails.clone());
        }
    }
    if let Some((sigma_y, sigma_out)) = constraints.reflection() {
        for (i, col) in columns.iter().enumerate() {
            for (k, &w) in col.iter().enumerate() {
                if columns[sigma_y[i]][sigma_out[k]] != w {
                    return Err(ConstraintBreach::Symmetric { k, i });
                }
            }
        }
    }
    if names.honest {
        for (i, target) in constraints.honest_target().iter().enumerate() {
            if let Some(h) = *target {
                if let Some(k) = (0..n_out).find(|&k| columns[i][k] > columns[i][h]) {
                    return Err(ConstraintBreach::Honest { i, k, h });
                }
            }
        }
    }
    let values = constraints.output_values();
    let max_bias = names.unbiased.then(|| {
        (0..n_obs)
            .map(|i| {
                let range = weighted_mean(values.iter().copied().zip(columns[i].iter().copied()), total);
                deviation(range, constraints.estimate()[i])
            })
            .fold(0.0, f64::max)
    });
    let max_fixed_point_error = constraints.fixed().map(|z| {
        (0..n_out)
            .map(|k| deviation(weighted_mean((0..n_obs).map(|i| (z[i], columns[i][k])), total), z[k]))
            .fold(0.0, f64::max)
    });
    Ok(ConstraintCertificate { names, max_bias, max_fixed_point_error })
}

/// [`check_constraints`], refusing an equality deviation beyond [`MAX_EQUALITY_ERROR`].
pub(crate) fn check_releasable(
    constraints: &Constraints,
    columns: &[Vec<u64>],
    total: u64,
) -> Result<ConstraintCertificate, ConstraintBreach> {
    let certificate = check_constraints(constraints, columns, total)?;
    for (constraint, bound) in [("unbiased", certificate.max_bias), ("fixed_point", certificate.max_fixed_point_error)]
    {
        if let Some(bound) = bound.filter(|b| b.is_nan() || *b > MAX_EQUALITY_ERROR) {
            return Err(ConstraintBreach::Equality { constraint, bound });
        }
    }
    Ok(certificate)
}

/// The largest violation of `constraints` by a float P (|Θ̃| × |Y|): tails, reflection, honesty
/// and equalities alike, in probability units.
pub(crate) fn float_violation(constraints: &Constraints, p: &Array2<f64>) -> f64 {
    let (n_out, n_obs) = p.dim();
    let mut worst = 0.0f64;
    if constraints.names.monotone {
        let up = constraints.ascending();
        let tails = |i: usize| {
            let mut t = vec![0.0; n_out + 1];
            for s in (0..n_out).rev() {
                t[s] = t[s + 1] + p[[up[s], i]];
            }
            t
        };
        for i in 1..n_obs {
            let (a, b) = (tails(i - 1), tails(i));
            worst = (1..n_out).map(|t| a[t] - b[t]).fold(worst, f64::max);
        }
    }
    if let Some((sy, so)) = constraints.reflection() {
        for i in 0..n_obs {
            for k in 0..n_out {
                worst = worst.max((p[[k, i]] - p[[so[k], sy[i]]]).abs());
            }
        }
    }
    for (i, target) in constraints.honest_target().iter().enumerate() {
        if let Some(h) = *target {
            worst = (0..n_out).map(|k| p[[k, i]] - p[[h, i]]).fold(worst, f64::max);
        }
    }
    let values = constraints.output_values();
    if constraints.names.unbiased {
        for (i, &e) in constraints.estimate().iter().enumerate() {
            let mean: f64 = (0..n_out).map(|k| values[k] * p[[k, i]]).sum();
            worst = worst.max((mean - e).abs());
        }
    }
    if let Some(z) = constraints.fixed() {
        for k in 0..n_out {
            let image: f64 = (0..n_obs).map(|i| z[i] * p[[k, i]]).sum();
            worst = worst.max((image - z[k]).abs());
        }
    }
    worst
}

/// Integer weights, their privacy certificate, the repair's report and what they carry.
pub(crate) type ConstrainedRelease = (Vec<Vec<u64>>, PrivacyCertificate, RepairReport, ConstraintCertificate);

/// Repair, quantise and certify `p` (|Θ̃| × |Y|) for pure ε-DP *and* `constraints` (module
/// docs): weights summing to `total` per column.
pub(crate) fn repair_constrained(
    neighbours: &Neighbours,
    eps: f64,
    constraints: &Constraints,
    p: &Array2<f64>,
    total: u64,
) -> Result<ConstrainedRelease, CertifyError> {
    let method = RepairMethod::ConstrainedMixUniform;
    let (n_out, n_obs) = p.dim();
    let input = check_input(neighbours, eps, p, total, None)?;
    let edges: Vec<(usize, usize)> = neighbours.edges().collect();
    let rho = RatioBound::for_eps(eps).value();
    let mut q = p.mapv(|v| v.max(0.0));
    normalise_columns(&mut q);
    let violation = float_violation(constraints, &q);
    if violation.is_nan() || violation > MAX_INPUT_ERROR {
        return Err(CertifyError::TooFarFromFeasible {
            measure: "largest [constraints] violation",
            value: violation,
            limit: MAX_INPUT_ERROR,
        });
    }
    if let Some((sy, so)) = constraints.reflection() {
        let mirrored = Array2::from_shape_fn((n_out, n_obs), |(k, i)| q[[so[k], sy[i]]]);
        q = Array2::from_shape_fn((n_out, n_obs), |(k, i)| 0.5 * (q[[k, i]] + mirrored[[k, i]]));
    }
    let dp_violation = edges
        .iter()
        .flat_map(|&(a, b)| (0..n_out).map(move |k| (k, a, b)))
        .map(|(k, a, b)| (q[[k, a]] - rho * q[[k, b]]).max(q[[k, b]] - rho * q[[k, a]]))
        .fold(0.0f64, f64::max);
    let u = 1.0 / n_out as f64;
    let t = total as f64;
    let mut margin = 2.0 / t;
    for attempt in 1..=12u32 {
        // Slack per DP row from mixing: λ·u·(ρ − 1); needed: the violation, the rounding and the
        // fixes (each moves an entry by at most about twice the constraint violation).
        let need = dp_violation + (1.0 + rho) * (margin + 2.0 * violation);
        let lambda = if edges.is_empty() { 0.0 } else { need / (dp_violation + u * (rho - 1.0)) };
        if lambda.is_nan() || lambda >= 1.0 {
            break;
        }
        let mixed = q.mapv(|v| (1.0 - lambda) * v + lambda * u);
        let mut columns = round_columns(constraints, &mixed, total);
        fix_columns(constraints, &mut columns, total);
        let private = certify_weights(&columns, edges.iter().copied(), eps);
        match (private, check_releasable(constraints, &columns, total)) {
            (Ok(certified_eps), Ok(carried)) => {
                let certificate = PrivacyCertificate { eps, delta: 0.0, certified_eps, certified_delta: 0.0 };
                return Ok((columns, certificate, input.report(method, lambda, margin, attempt), carried));
            }
            _ => margin *= 4.0,
        }
    }
    Err(CertifyError::QuantisationFailed { eps, delta: 0.0, total, margin })
}

/// Integer columns from Q: tails rounded (monotone), else entries by largest remainders.
fn round_columns(constraints: &Constraints, q: &Array2<f64>, total: u64) -> Vec<Vec<u64>> {
    let (n_out, n_obs) = q.dim();
    let t = total as f64;
    (0..n_obs)
        .map(|i| {
            if !constraints.names.monotone {
                return quantise(&q.column(i).to_vec(), total);
            }
            let up = constraints.ascending();
            let sum: f64 = q.column(i).sum();
            let mut tails = vec![0u64; n_out + 1];
            let mut acc = 0.0f64;
            for s in (1..n_out).rev() {
                acc += q[[up[s], i]];
                tails[s] = ((acc / sum * t).round().clamp(0.0, t) as u64).max(tails[s + 1]);
            }
            tails[0] = total;
            let mut col = vec![0u64; n_out];
            for s in 0..n_out {
                col[up[s]] = tails[s] - tails[s + 1].min(tails[s]);
            }
            col
        })
        .collect()
}

/// The integer fixes of the module docs: monotone tails raised to their running maximum, the
/// honest output raised to its column's maximum, columns past the middle mirrored.
fn fix_columns(constraints: &Constraints, columns: &mut [Vec<u64>], total: u64) {
    let n_obs = columns.len();
    let n_out = columns.first().map_or(0, Vec::len);
    if constraints.names.monotone {
        let up = constraints.ascending();
        let mut floor = vec![0u64; n_out + 1];
        for col in columns.iter_mut() {
            let mut tails = vec![0u64; n_out + 1];
            for s in (0..n_out).rev() {
                tails[s] = tails[s + 1] + col[up[s]];
            }
            for s in 0..=n_out {
                tails[s] = tails[s].max(floor[s]).min(total);
            }
            // Running maxima of nonincreasing sequences are nonincreasing.
            for s in 0..n_out {
                col[up[s]] = tails[s] - tails[s + 1];
            }
            floor = tails;
        }
    }
    let half = |i: usize| constraints.reflection().is_none_or(|(sy, _)| i <= sy[i]);
    for (i, target) in constraints.honest_target().iter().enumerate() {
        let (Some(h), true) = (*target, half(i)) else { continue };
        let col = &mut columns[i];
        let top = *col.iter().max().unwrap_or(&0);
        let mut deficit = top - col[h];
        col[h] = top;
        while deficit > 0 {
            let (k, &w) =
                col.iter().enumerate().filter(|&(k, _)| k != h).max_by_key(|&(_, w)| *w).expect("two outputs");
            let take = deficit.min(w.div_ceil(2)).max(1).min(w);
            col[k] -= take;
            deficit -= take;
        }
    }
    if let Some((sy, so)) = constraints.reflection() {
        for i in 0..n_obs {
            if sy[i] < i {
                let source = columns[sy[i]].clone();
                for k in 0..n_out {
                    columns[i][so[k]] = source[k];
                }
            }
        }
    }
}
