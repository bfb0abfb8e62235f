//! The rows `[constraints]` adds to the LP (definitions and papers in `model::Constraints` and
//! docs/constraints.md). Every row is written `Σ a·P[k,i] ≤ b`; an equality is two such rows
//! (`≤ b` and `−… ≤ −b`), so every backend, the Lagrangian bound and its multipliers (all ≥ 0)
//! treat them like the DP rows.

use crate::model::Constraints;

/// Which constraint a row encodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ConstraintKind {
    /// Σ_{k ≥ t} P\[k,i\] − Σ_{k ≥ t} P\[k,i+1\] ≤ 0.
    Monotone,
    /// ±(P\[k,i\] − P\[σk,σi\]) ≤ 0.
    Symmetric,
    /// P\[k,i\] − P\[h,i\] ≤ 0.
    Honest,
    /// ±(Σ_k θ̃_k P\[k,i\] − e_i) ≤ 0.
    Unbiased,
    /// ±(Σ_i z_i P\[k,i\] − z_k) ≤ 0.
    FixedPoint,
}

/// One row: Σ coefficient · x\[variable\] ≤ rhs (variables as in `Problem::var`).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ConstraintRow {
    /// What it encodes.
    pub kind: ConstraintKind,
    /// (variable, coefficient), each variable once.
    pub terms: Vec<(usize, f64)>,
    /// The right-hand side.
    pub rhs: f64,
}

/// A model's constraints with the LP rows they become.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct LpConstraints {
    /// The validated constraints (the exact checks of the certified weights read these).
    pub model: Constraints,
    /// Their rows, in the order of [`constraint_rows`].
    pub rows: Vec<ConstraintRow>,
}

/// Every row of `constraints` for |Y| = `n_obs`, |Θ̃| = `n_out`, in the order monotone,
/// symmetric, honest, unbiased, fixed point.
pub(crate) fn constraint_rows(constraints: &Constraints, n_obs: usize, n_out: usize) -> Vec<ConstraintRow> {
    let var = |k: usize, i: usize| i * n_out + k;
    let mut rows = Vec::new();
    let both = |rows: &mut Vec<ConstraintRow>, kind, terms: Vec<(usize, f64)>, rhs: f64| {
        let negated = terms.iter().map(|&(v, a)| (v, -a)).collect();
        rows.push(ConstraintRow { kind, terms, rhs });
        rows.push(ConstraintRow { kind, terms: negated, rhs: -rhs });
    };
    let names = constraints.names;
    if names.monotone {
        let up = constraints.ascending();
        for i in 0..n_obs.saturating_sub(1) {
            for t in 1..n_out {
                let mut terms: Vec<(usize, f64)> =
                    up[t..].iter().flat_map(|&k| [(var(k, i), 1.0), (var(k, i + 1), -1.0)]).collect();
                terms.sort_unstable_by_key(|&(v, _)| v);
                rows.push(ConstraintRow { kind: ConstraintKind::Monotone, terms, rhs: 0.0 });
            }
        }
    }
    if let Some((sigma_y, sigma_out)) = constraints.reflection() {
        for (i, &mirror_i) in sigma_y.iter().enumerate() {
            for (k, &mirror_k) in sigma_out.iter().enumerate() {
                let (a, b) = (var(k, i), var(mirror_k, mirror_i));
                if a < b {
                    both(&mut rows, ConstraintKind::Symmetric, vec![(a, 1.0), (b, -1.0)], 0.0);
                }
            }
        }
    }
    if names.honest {
        for (i, target) in constraints.honest_target().iter().enumerate() {
            if let Some(h) = *target {
                for k in (0..n_out).filter(|&k| k != h) {
                    let mut terms = vec![(var(k, i), 1.0), (var(h, i), -1.0)];
                    terms.sort_unstable_by_key(|&(v, _)| v);
                    rows.push(ConstraintRow { kind: ConstraintKind::Honest, terms, rhs: 0.0 });
                }
            }
        }
    }
    if names.unbiased {
        let values = constraints.output_values();
        for (i, &e) in constraints.estimate().iter().enumerate() {
            let terms = (0..n_out).filter(|&k| values[k] != 0.0).map(|k| (var(k, i), values[k])).collect();
            both(&mut rows, ConstraintKind::Unbiased, terms, e);
        }
    }
    if let Some(z) = constraints.fixed() {
        for k in 0..n_out {
            let terms = (0..n_obs).filter(|&i| z[i] != 0.0).map(|i| (var(k, i), z[i])).collect();
            both(&mut rows, ConstraintKind::FixedPoint, terms, z[k]);
        }
    }
    rows
}

/// The number of rows [`constraint_rows`] makes (an upper bound where the reflection fixes
/// entries), from the sizes alone (for estimates, before anything is built).
pub(crate) fn constraint_row_count(constraints: &Constraints, n_obs: u128, n_out: u128) -> u128 {
    let names = constraints.names;
    let mut rows = 0u128;
    if names.monotone {
        rows += n_obs.saturating_sub(1) * n_out.saturating_sub(1);
    }
    if names.symmetric {
        rows += n_obs * n_out;
    }
    if names.honest {
        rows += n_obs * n_out.saturating_sub(1);
    }
    if names.unbiased {
        rows += 2 * n_obs;
    }
    if names.fixed_point {
        rows += 2 * n_out;
    }
    rows
}
