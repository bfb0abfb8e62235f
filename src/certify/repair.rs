//! From a solver's float P to integer weights that are ε-DP exactly.
//!
//! A solver stops at tolerances: its P may violate `P[k,a] ≤ e^ε P[k,b]` by ~1e-10, its columns
//! may sum to 1 ± 1e-10 and it may hold tiny negatives. The repair:
//!
//! 1. clamp negatives to 0 and normalise each column to sum 1;
//! 2. optionally (*trim*) zero every row whose entries are all ≤ [`TRIM_LEVEL`], then
//!    (*lift*) raise each row to the smallest vector above it that satisfies the ratio
//!    constraints, `L[k,i] = max_j Q[k,j] ρ^{−d(i,j)}` (d = graph distance; a max-plus closure,
//!    costs O(violation) instead of O(violation/(ρ−1))), then normalise columns again;
//! 3. mix in a column-independent non-negative vector g (per output row k, the same for every
//!    column): `Q' = (Q + g)/(1 + Σg)`. Adding g_k to both sides of a ratio constraint adds slack
//!    `g_k(ρ − 1)`, so `g_k = max(0, max_{a~b} Q[k,a] − ρQ[k,b] + m(1+ρ)) / (ρ − 1)` removes every
//!    violation in row k and leaves an additive margin m for rounding; the common factor 1/(1+Σg)
//!    keeps every ratio. Rows that are exactly zero stay zero (edges whose two ends are zero are
//!    skipped: 0 ≤ ρ·0);
//! 4. quantise each column to integers summing to `total` by largest remainders (|w − total·Q'| < 1,
//!    zeros stay zero);
//! 5. check exactly ([`super::exact::certify_weights`]); if rounding still broke a ratio, multiply
//!    the margin by 4 and retry.
//!
//! Here ρ = [`RatioBound::for_eps`]`(ε)` — a rational lower bound of e^ε — so the float repair aims at
//! the same bound the exact check uses.
//!
//! # (ε, δ)
//!
//! For δ > 0 ([`repair_and_quantise_delta`]) the constraints are `Σ_k max(0, P[k,a] − ρP[k,b]) ≤ δ`
//! per ordered neighbour pair, and the solver's P spends δ up to its tolerance.
//! Zero-spend mixing keeps the budget: for a column-independent distribution u (every column the
//! same, so it spends nothing) and P_t = (1 − t)P + tU,
//!
//! `max(0, (1−t)(x_k − ρy_k) + t·u_k(1 − ρ)) ≤ (1−t)·max(0, x_k − ρy_k)`   (u_k(1 − ρ) ≤ 0, t ∈ [0, 1]),
//!
//! so spend(P_t) ≤ (1 − t)·spend(P), and each term is non-increasing in t (a positive term decreases
//! linearly; a non-positive one stays ≤ 0). The smallest t with float spend(P_t) ≤ δ − m is found by
//! bisection, the columns are quantised, and the exact check ([`super::exact::certify_weights_delta`])
//! decides; if it fails, the margin m is multiplied by 4. At t = 1 every column is u, the quantised
//! columns are identical and spend exactly 0, so the loop always ends certified. u is the uniform
//! distribution ([`RepairMethod::MixUniform`]: every term gains slack t·u_k(ρ − 1), which absorbs
//! rounding term by term at large ε) or the mean column of P ([`RepairMethod::MixMean`]: keeps
//! unused outputs unused and usually costs less risk).

use ndarray::Array2;
use serde::{Deserialize, Serialize};

use super::exact::{certify_weights, certify_weights_delta, next_up, RatioBound};
use super::{CertifyError, PrivacyCertificate, MAX_TOTAL};
use crate::model::Neighbours;

type Result<T> = std::result::Result<T, CertifyError>;

/// How the float P is made feasible before quantisation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RepairMethod {
    /// Mixing with a column-independent vector sized from the violation (steps 1, 3–5).
    Mix,
    /// Row-wise lift, then mixing for the rounding margin (steps 1–5).
    LiftMix,
    /// As [`RepairMethod::LiftMix`], after setting to zero every output row whose largest entry is
    /// ≤ `TRIM_LEVEL` (solver noise where the optimum has an unused output; a zero row needs no
    /// rounding margin, which matters at tiny ε where the margin costs 1/(T(e^ε − 1)) per row).
    TrimLiftMix,
    /// As [`RepairMethod::TrimLiftMix`], then each output row's blocks of tight ratios are rebuilt
    /// from their exact shape and their scales refitted so that every column sums to 1
    /// (`certify::refine`): the mixing then pays for rounding, not for the solver's tolerance.
    Refine,
    /// (ε, δ) only: P_t = (1 − t)P + t·(the mean column of P), smallest t that keeps the δ budget.
    MixMean,
    /// (ε, δ) only: P_t = (1 − t)P + t·(the uniform distribution over Θ̃).
    MixUniform,
    /// `[constraints]` (pure ε): mixing with the uniform distribution, which keeps every
    /// constraint's inequalities, then a rounding that keeps them exactly (`certify::constrained`).
    ConstrainedMixUniform,
}

impl RepairMethod {
    /// Every pure-ε method (`repair_and_quantise`), cheapest first.
    pub const ALL: [RepairMethod; 4] =
        [RepairMethod::Mix, RepairMethod::LiftMix, RepairMethod::TrimLiftMix, RepairMethod::Refine];

    /// Every (ε, δ) method (`repair_and_quantise_delta`).
    pub const ALL_DELTA: [RepairMethod; 2] = [RepairMethod::MixMean, RepairMethod::MixUniform];

    /// The methods that apply to pure ε (δ = 0) or to (ε, δ) with δ > 0.
    pub fn for_delta(delta: f64) -> &'static [RepairMethod] {
        if delta > 0.0 {
            &Self::ALL_DELTA
        } else {
            &Self::ALL
        }
    }
}

/// Rows of P whose entries are all ≤ this are treated as zero by [`RepairMethod::TrimLiftMix`].
pub(crate) const TRIM_LEVEL: f64 = 1e-9;

/// What the repair did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RepairReport {
    /// The method used.
    pub method: RepairMethod,
    /// Σ_k g_k: the mass mixed in (before the common renormalisation); for (ε, δ) the mixing weight t.
    /// `f64::MAX` when e^ε rounds to 1 in floating point (ε ≲ 1e-16) and every column was replaced
    /// by the mean column (a column-independent release, the limit of infinite mixing).
    pub mixing_mass: f64,
    /// The additive rounding margin m of the successful attempt (probability units).
    pub margin: f64,
    /// Attempts needed (1 = the first margin sufficed).
    pub attempts: u32,
    /// Largest `P[k,a]` − e^ε `P[k,b]` in the input (> 0: violated; for δ > 0 positive values are
    /// allowed and paid for from δ).
    pub input_dp_violation: f64,
    /// (ε, δ) only: the δ the input spends, max over ordered neighbour pairs of
    /// Σ_k max(0, `P[k,a]` − e^ε `P[k,b]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_delta_spent: Option<f64>,
    /// Largest |Σ_k `P[k,i]` − 1| in the input.
    pub input_column_error: f64,
    /// Smallest entry of the input.
    pub input_min_entry: f64,
}

/// Input further than this from a mechanism is refused rather than repaired: repair is for
/// solver round-off, not for hiding a wrong solution.
pub(crate) const MAX_INPUT_ERROR: f64 = 1e-6;

/// Repair and quantise `p` (|Θ̃| × |Y|, `p[k,i] = Pr(θ̃_k | y_i)`) into weights `columns[i][k]`
/// summing to `total` per column, certified ε-DP under `neighbours`. Returns the weights, the
/// certified ε (≤ eps) and a report.
pub(crate) fn repair_and_quantise(
    neighbours: &Neighbours,
    eps: f64,
    p: &Array2<f64>,
    total: u64,
    method: RepairMethod,
) -> Result<(Vec<Vec<u64>>, f64, RepairReport)> {
    if RepairMethod::for_delta(0.0).iter().all(|m| *m != method) {
        return Err(CertifyError::MethodMismatch { method, delta: 0.0 });
    }
    let input = check_input(neighbours, eps, p, total, None)?;
    let edges: Vec<(usize, usize)> = neighbours.edges().collect();
    let bound = RatioBound::for_eps(eps);
    let rho = bound.value();

    // Steps 1–2.
    let mut q = p.mapv(|v| v.max(0.0));
    if matches!(method, RepairMethod::TrimLiftMix | RepairMethod::Refine) {
        for mut row in q.rows_mut() {
            if row.iter().all(|&v| v <= TRIM_LEVEL) {
                row.fill(0.0);
            }
        }
        if q.columns().into_iter().any(|c| c.sum() <= 0.0) {
            return Err(CertifyError::TrimEmptiedColumn);
        }
    }
    normalise_columns(&mut q);
    if method != RepairMethod::Mix {
        lift_rows(&mut q, neighbours, &edges, rho);
        normalise_columns(&mut q);
    }
    if method == RepairMethod::Refine {
        super::refine::refine_column_sums(&mut q, &edges, rho)
            .map_err(|failure| CertifyError::RefineFailed { failure })?;
    }

    // Steps 3–5.
    let need = row_violations(&q, &edges, rho);
    mix_and_quantise(&q, &need, || edges.iter().copied(), eps, total, method, &input)
}

/// Each row's largest DP violation max(q\[k,a\] − ρq\[k,b\], q\[k,b\] − ρq\[k,a\], 0) over `edges`.
fn row_violations(q: &Array2<f64>, edges: &[(usize, usize)], rho: f64) -> Vec<f64> {
    use rayon::prelude::*;
    let n_obs = q.ncols();
    q.as_standard_layout()
        .as_slice()
        .expect("a standard-layout matrix")
        .par_chunks(n_obs.max(1))
        .map(|row| edges.iter().fold(0.0f64, |v, &(a, b)| v.max(row[a] - rho * row[b]).max(row[b] - rho * row[a])))
        .collect()
}

/// Steps 3–5 of the repair: mix every row k with g_k = (need_k + margin(1 + ρ))/(ρ − 1) (need:
/// the row's largest DP violation, [`row_violations`]), quantise every column to `total` and
/// check the weights exactly on `pairs`, the margin growing fourfold until they certify. Where
/// ρ − 1 underflows (ε ≲ 1e-16) no finite mixing is enough: every column becomes the mean
/// column, which certifies trivially.
fn mix_and_quantise<I: Iterator<Item = (usize, usize)>>(
    q: &Array2<f64>,
    need: &[f64],
    pairs: impl Fn() -> I,
    eps: f64,
    total: u64,
    method: RepairMethod,
    input: &InputMeasures,
) -> Result<(Vec<Vec<u64>>, f64, RepairReport)> {
    use rayon::prelude::*;
    let (n_out, n_obs) = q.dim();
    let rho = RatioBound::for_eps(eps).value();
    let has_edges = pairs().next().is_some();
    let t = total as f64;
    let mut margin = 2.0 / t;
    for attempt in 1..=16u32 {
        let g = if has_edges { mixing(q, need, rho, margin) } else { vec![0.0; n_out] };
        let mixing_mass: f64 = g.iter().sum();
        if !mixing_mass.is_finite() {
            // The limit of (Q + g)/(1 + Σg) is a column-independent release: equal columns have
            // ratio 1 ≤ e^ε exactly.
            let mean: Vec<f64> = (0..n_out).map(|k| q.row(k).sum() / n_obs as f64).collect();
            let columns = vec![quantise(&mean, total); n_obs];
            let certified = certify_weights(&columns, pairs(), eps).map_err(|_| CertifyError::QuantisationFailed {
                eps,
                delta: 0.0,
                total,
                margin,
            })?;
            return Ok((columns, certified, input.report(method, f64::MAX, 0.0, attempt)));
        }
        let columns: Vec<Vec<u64>> = (0..n_obs)
            .into_par_iter()
            .map(|i| {
                let col: Vec<f64> = (0..n_out).map(|k| q[[k, i]] + g[k]).collect();
                quantise(&col, total)
            })
            .collect();
        match certify_weights(&columns, pairs(), eps) {
            Ok(certified) => return Ok((columns, certified, input.report(method, mixing_mass, margin, attempt))),
            Err(_) => margin *= 4.0,
        }
    }
    Err(CertifyError::QuantisationFailed { eps, delta: 0.0, total, margin })
}

/// The mixing g_k = (need_k + margin(1 + ρ))⁺/(ρ − 1) of every row k of `q` that has mass (0 for
/// an empty row), `need` the rows' largest DP violations.
fn mixing(q: &Array2<f64>, need: &[f64], rho: f64, margin: f64) -> Vec<f64> {
    need.iter()
        .zip(q.outer_iter())
        .map(
            |(&v, row)| {
                if row.iter().any(|&x| x > 0.0) {
                    (v + margin * (1.0 + rho)).max(0.0) / (rho - 1.0)
                } else {
                    0.0
                }
            },
        )
        .collect()
}

/// Repair and quantise `p` at (eps, delta) with `method`: [`repair_and_quantise`] for δ = 0,
/// [`repair_and_quantise_delta`] for δ > 0. Returns the weights, what they certify and a report.
pub(crate) fn repair_and_quantise_for(
    neighbours: &Neighbours,
    eps: f64,
    delta: f64,
    p: &Array2<f64>,
    total: u64,
    method: RepairMethod,
) -> Result<(Vec<Vec<u64>>, PrivacyCertificate, RepairReport)> {
    if delta > 0.0 {
        repair_and_quantise_delta(neighbours, eps, delta, p, total, method).map(|(w, certified_delta, r)| {
            (w, PrivacyCertificate { eps, delta, certified_eps: eps, certified_delta }, r)
        })
    } else {
        repair_and_quantise(neighbours, eps, p, total, method)
            .map(|(w, certified_eps, r)| (w, PrivacyCertificate { eps, delta, certified_eps, certified_delta: 0.0 }, r))
    }
}

/// Repair and quantise `p` for (ε, δ)-DP with δ ∈ (0, 1) (see the module docs, "(ε, δ)"): weights
/// `columns[i][k]` summing to `total` per column whose exact δ spend at ε is ≤ `delta`. Returns the
/// weights, the certified δ (≤ delta) and a report.
pub(crate) fn repair_and_quantise_delta(
    neighbours: &Neighbours,
    eps: f64,
    delta: f64,
    p: &Array2<f64>,
    total: u64,
    method: RepairMethod,
) -> Result<(Vec<Vec<u64>>, f64, RepairReport)> {
    if !(delta > 0.0 && delta < 1.0) {
        return Err(CertifyError::InvalidArgument {
            name: "delta",
            problem: format!("must lie in (0, 1) for an (ε, δ) repair (got {delta})"),
        });
    }
    if RepairMethod::for_delta(delta).iter().all(|m| *m != method) {
        return Err(CertifyError::MethodMismatch { method, delta });
    }
    let (n_out, n_obs) = p.dim();
    let input = check_input(neighbours, eps, p, total, Some(delta))?;
    let edges: Vec<(usize, usize)> = neighbours.edges().collect();
    let rho = RatioBound::for_eps(eps).value();
    let mut q = p.mapv(|v| v.max(0.0));
    normalise_columns(&mut q);
    let u: Vec<f64> = match method {
        RepairMethod::MixUniform => vec![1.0 / n_out as f64; n_out],
        _ => {
            let mean: Vec<f64> = q.rows().into_iter().map(|r| r.sum() / n_obs as f64).collect();
            let s: f64 = mean.iter().sum();
            mean.iter().map(|v| v / s).collect()
        }
    };
    let mix = |t: f64| Array2::from_shape_fn((n_out, n_obs), |(k, i)| (1.0 - t) * q[[k, i]] + t * u[k]);
    // The float spend at ratio ρ (= e^{ln ρ} to a few ulps): a guide for t; the exact check decides.
    let spend = |t: f64| crate::lp::delta_spent(&mix(t), neighbours, rho.ln());
    let s0 = spend(0.0);
    // Quantisation moves each weight by < 1 unit, so each term of a pair's spend by < (1 + ρ)/T:
    // the first margin covers that for every output; larger ones are tried if the exact check fails.
    let t_units = total as f64;
    let mut margin = n_out as f64 * (1.0 + rho) / t_units;
    for attempt in 1..=40u32 {
        let target = delta - margin;
        let t = if target <= 0.0 {
            1.0
        } else if s0 <= target {
            0.0
        } else {
            // spend(t) ≤ (1 − t)·s0, so t_hi = 1 − target/s0 suffices in exact arithmetic; check it in
            // floats (else fall back to 1), then bisect down to the smallest passing t.
            let mut hi = (1.0 - target / s0).min(1.0);
            if spend(hi) > target {
                hi = 1.0;
            }
            let mut lo = 0.0;
            for _ in 0..60 {
                let mid = 0.5 * (lo + hi);
                if mid <= lo || mid >= hi {
                    break;
                }
                if spend(mid) <= target {
                    hi = mid;
                } else {
                    lo = mid;
                }
            }
            hi
        };
        let m = mix(t);
        let columns: Vec<Vec<u64>> = m.columns().into_iter().map(|c| quantise(&c.to_vec(), total)).collect();
        match certify_weights_delta(&columns, edges.iter().copied(), eps, delta, total) {
            Ok(certified) => return Ok((columns, certified, input.report(method, t, margin, attempt))),
            // At t = 1 the columns are identical and spend 0, so this cannot fail; say so if it did.
            Err(e) if t >= 1.0 => return Err(CertifyError::ConstantMechanismFailed { violation: e }),
            Err(_) => margin *= 4.0,
        }
    }
    Err(CertifyError::QuantisationFailed { eps, delta, total, margin })
}

/// What the input checks measured.
pub(super) struct InputMeasures {
    input_dp_violation: f64,
    input_delta_spent: Option<f64>,
    input_column_error: f64,
    input_min_entry: f64,
}

impl InputMeasures {
    pub(super) fn report(&self, method: RepairMethod, mixing_mass: f64, margin: f64, attempts: u32) -> RepairReport {
        RepairReport {
            method,
            mixing_mass,
            margin,
            attempts,
            input_dp_violation: self.input_dp_violation,
            input_delta_spent: self.input_delta_spent,
            input_column_error: self.input_column_error,
            input_min_entry: self.input_min_entry,
        }
    }
}

/// Shapes, ε, total and finiteness; then refuse input further than [`MAX_INPUT_ERROR`] from a
/// mechanism: its ratio violation (pure ε) or its δ spend beyond `delta` ((ε, δ)), column sums and
/// negative entries.
pub(super) fn check_input(
    neighbours: &Neighbours,
    eps: f64,
    p: &Array2<f64>,
    total: u64,
    delta: Option<f64>,
) -> Result<InputMeasures> {
    let (n_out, n_obs) = p.dim();
    if n_obs != neighbours.len() {
        return Err(CertifyError::Shape { found: (n_out, n_obs), expected: (n_out, neighbours.len()) });
    }
    if n_out == 0 || n_obs == 0 {
        return Err(CertifyError::Shape { found: (n_out, n_obs), expected: (n_out.max(1), neighbours.len()) });
    }
    if !(eps.is_finite() && eps > 0.0) {
        return Err(CertifyError::InvalidArgument {
            name: "eps",
            problem: format!("must be a finite number > 0 (got {eps})"),
        });
    }
    if !total.is_power_of_two() || !(2..=MAX_TOTAL).contains(&total) {
        return Err(CertifyError::InvalidArgument {
            name: "total",
            problem: format!("must be a power of two in [2, 2^52] (got {total})"),
        });
    }
    if let Some(bad) = p.iter().find(|v| !v.is_finite()) {
        return Err(CertifyError::NonFinite { value: *bad });
    }
    let input_dp_violation = crate::lp::max_dp_violation(p, neighbours, eps);
    let input_column_error = p.columns().into_iter().map(|c| (c.sum() - 1.0).abs()).fold(0.0, f64::max);
    let input_min_entry = p.iter().copied().fold(f64::INFINITY, f64::min);
    let input_delta_spent = delta.map(|_| crate::lp::delta_spent(p, neighbours, eps));
    let dp_excess = match (delta, input_delta_spent) {
        (Some(d), Some(s)) => s - d,
        _ => input_dp_violation,
    };
    let dp_what = if delta.is_some() { "δ spent beyond delta" } else { "largest DP violation" };
    for (what, v) in [
        (dp_what, dp_excess),
        ("largest column-sum error", input_column_error),
        ("most negative entry", -input_min_entry),
    ] {
        if v > MAX_INPUT_ERROR {
            return Err(CertifyError::TooFarFromFeasible { measure: what, value: v, limit: MAX_INPUT_ERROR });
        }
    }
    Ok(InputMeasures { input_dp_violation, input_delta_spent, input_column_error, input_min_entry })
}

/// Divide each column by its sum (columns summing to 0 are left alone; they cannot occur after the
/// input checks).
pub(super) fn normalise_columns(q: &mut Array2<f64>) {
    for mut c in q.columns_mut() {
        let s = c.sum();
        if s > 0.0 {
            c /= s;
        }
    }
}

/// Row-wise max-plus closure: `L[k,i] = max_j Q[k,j] ρ^{−d(i,j)}`, the smallest row ≥ `Q[k,·]` with
/// `L[k,a] ≤ ρ L[k,b]` for all neighbours (d = graph distance). A chain takes one forward and one
/// backward pass; a general graph a Dijkstra-like sweep from the largest values down.
fn lift_rows(q: &mut Array2<f64>, neighbours: &Neighbours, edges: &[(usize, usize)], rho: f64) {
    let n = neighbours.len();
    if neighbours.is_chain() {
        for mut row in q.rows_mut() {
            for i in 1..n {
                row[i] = row[i].max(row[i - 1] / rho);
            }
            for i in (0..n.saturating_sub(1)).rev() {
                row[i] = row[i].max(row[i + 1] / rho);
            }
        }
        return;
    }
    let mut adj: Vec<Vec<usize>> = vec![Vec::new(); n];
    for &(a, b) in edges {
        adj[a].push(b);
        adj[b].push(a);
    }
    for mut row in q.rows_mut() {
        let row = row.as_slice_mut().expect("a standard-layout matrix");
        close_row(row, rho, |i| adj[i].iter().copied());
    }
}

/// The max-plus closure of one row on a graph (`adjacent(i)`: the neighbours of vertex i):
/// `row[i] ← max_j row[j] ρ^{−d(i,j)}`, vertices taken in decreasing order of their final value,
/// each raising its neighbours to its value / ρ (Dijkstra on −ln values, every edge of length
/// ln ρ). No heap is needed: a vertex passes on its own value / ρ and vertices are taken in
/// decreasing order, so the values passed on arrive in decreasing order too and a FIFO queue of
/// them stays sorted; merged with the starting values, sorted once, the two streams give that
/// order in O(n log n + E). Only the vertices that raise a neighbour start (one that raises none
/// is final unless raised itself, and then it is queued), so a nearly feasible row costs one pass
/// over its edges. Dividing by ρ is multiplying by the least float ≥ 1/ρ, as in
/// [`close_row_by_sweeps`], so that both compute the same floats.
fn close_row<I: Iterator<Item = usize>>(row: &mut [f64], rho: f64, adjacent: impl Fn(usize) -> I) {
    let shrink = reciprocal_above(rho);
    let mut starts: Vec<(f64, usize)> =
        (0..row.len()).filter(|&i| adjacent(i).any(|j| row[j] < row[i] * shrink)).map(|i| (row[i], i)).collect();
    starts.sort_unstable_by(|a, b| b.0.total_cmp(&a.0));
    let mut passed: Vec<(f64, usize)> = Vec::new();
    let mut done = vec![false; row.len()];
    let (mut next_start, mut next_passed) = (0, 0);
    loop {
        let from_starts = match (starts.get(next_start), passed.get(next_passed)) {
            (None, None) => break,
            (Some(s), Some(p)) => s.0 >= p.0,
            (s, _) => s.is_some(),
        };
        let (v, i) = if from_starts {
            next_start += 1;
            starts[next_start - 1]
        } else {
            next_passed += 1;
            passed[next_passed - 1]
        };
        // A stale entry: the vertex was taken already, or raised above this value since.
        if done[i] || v < row[i] {
            continue;
        }
        done[i] = true;
        let w = v * shrink;
        for j in adjacent(i) {
            if !done[j] && w > row[j] {
                row[j] = w;
                passed.push((w, j));
            }
        }
    }
}

/// Repair any column-stochastic P (|Θ̃| × |Y|, entries ≥ 0, each column summing to 1 in floats)
/// however far from ε-DP — a first-order method's iterate, not a vertex — into weights summing to
/// `total` per column, certified ε-DP exactly on the edges of `incidence` (no input limit: the
/// price of a far point is paid in risk, which the caller measures). Two candidates, the one of
/// lower risk under `cost` (C\[i, k\]) kept (the second tried only where the first leaves more
/// than [`HALF_RATIO_MIXING`] to mix):
///
/// - **rounds:** the lift of every row at ratio ρ = e^ε and the columns normalised, in turn; the
///   normalisation breaks the rows' ratios by the ratio of neighbouring column sums, which shrinks
///   round by round, and the mixing pays for what is left. Rounds after the first start only
///   while one more, as long as the last, ends before `deadline`.
/// - **half-ratio:** every row lifted once at ratio √ρ and the columns normalised: then
///   q\[k,a\] ≤ √ρ q\[k,b\] and the column sums s_a ≤ √ρ s_b for neighbours (a sum of √ρ-Lipschitz
///   rows), so q\[k,a\]/s_a ≤ ρ q\[k,b\]/s_b: ε-DP in one pass (the exponential mechanism's
///   argument, McSherry & Talwar 2007), with mixing only for the float rounding. Coarser than
///   the rounds near a DP point, far better than their mixing far from one.
///
/// The kept candidate is mixed and quantised as in [`repair_and_quantise`] (steps 3–5). Returns
/// the weights, the certified ε and a report ([`RepairMethod::LiftMix`]).
pub(crate) fn repair_far(
    incidence: &crate::lp::Incidence,
    eps: f64,
    p: Array2<f64>,
    cost: &Array2<f64>,
    total: u64,
    deadline: Option<std::time::Instant>,
) -> Result<(Vec<Vec<u64>>, f64, RepairReport)> {
    use rayon::prelude::*;
    let (n_out, n_obs) = p.dim();
    if n_obs != incidence.n_obs() || n_out == 0 || p.iter().any(|v| !v.is_finite() || *v < 0.0) {
        return Err(CertifyError::InvalidArgument {
            name: "p",
            problem: format!("must be a finite, non-negative {n_out} × {} matrix", incidence.n_obs()),
        });
    }
    if cost.dim() != (n_obs, n_out) {
        return Err(CertifyError::InvalidArgument {
            name: "cost",
            problem: format!("must be a {n_obs} × {n_out} matrix (got {:?})", cost.dim()),
        });
    }
    let bound = RatioBound::for_eps(eps);
    let rho = bound.value();
    let mut q = p;
    let column_error = q.columns().into_iter().map(|c| (c.sum() - 1.0).abs()).fold(0.0, f64::max);
    let min_entry = q.iter().copied().fold(f64::INFINITY, f64::min);
    let edges = incidence.edges();
    let violation = |q: &Array2<f64>| {
        q.as_slice()
            .expect("a standard-layout matrix")
            .par_chunks(n_obs)
            .map(|row| {
                // Eight running maxima by plain comparisons (the entries are finite): no chain
                // of dependent NaN-aware maxima.
                let mut most = [0.0f64; 8];
                let excess = |&(a, b): &(u32, u32)| {
                    let (qa, qb) = (row[a as usize], row[b as usize]);
                    let (up, down) = (qa - rho * qb, qb - rho * qa);
                    if up > down {
                        up
                    } else {
                        down
                    }
                };
                let mut chunks = edges.chunks_exact(8);
                for chunk in &mut chunks {
                    for (m, edge) in most.iter_mut().zip(chunk) {
                        let v = excess(edge);
                        *m = if v > *m { v } else { *m };
                    }
                }
                chunks.remainder().iter().map(excess).chain(most).fold(0.0, f64::max)
            })
            .collect::<Vec<f64>>()
    };
    let graph = SplitAdjacency::of(incidence);
    let lift_all = |q: &mut Array2<f64>, ratio: f64| {
        q.as_slice_mut().expect("a standard-layout matrix").par_chunks_mut(n_obs).for_each(|row| {
            close_row_by_sweeps(row, ratio, &graph);
        });
        normalise_columns(q);
    };
    let input_dp_violation = violation(&q).into_iter().fold(0.0, f64::max);
    normalise_columns(&mut q);

    // The normalised input, for the half-ratio candidate.
    let normalised = q.clone();
    let mut need = violation(&q);
    let mut round_took = std::time::Duration::ZERO;
    for _ in 0..LIFT_ROUNDS {
        let round_started = std::time::Instant::now();
        let too_late = deadline.is_some_and(|d| round_started + round_took > d);
        if need.iter().all(|&v| v <= 0.0) || (too_late && !round_took.is_zero()) {
            break;
        }
        lift_all(&mut q, rho);
        need = violation(&q);
        round_took = round_started.elapsed();
    }
    let margin = 2.0 / total as f64;
    // The half-ratio candidate only where the rounds leave much to mix: near a DP point it is
    // never the better one, and it costs a lift of every row.
    if mixing(&q, &need, rho, margin).iter().sum::<f64>() > HALF_RATIO_MIXING {
        let mut half = normalised;
        lift_all(&mut half, rho.sqrt());
        let half_need = violation(&half);
        if mixed_risk(&half, &half_need, cost, rho, margin) < mixed_risk(&q, &need, cost, rho, margin) {
            (q, need) = (half, half_need);
        }
    }
    let input = InputMeasures {
        input_dp_violation,
        input_delta_spent: None,
        input_column_error: column_error,
        input_min_entry: min_entry,
    };
    let pairs = || edges.iter().map(|&(a, b)| (a as usize, b as usize));
    mix_and_quantise(&q, &need, pairs, eps, total, RepairMethod::LiftMix, &input)
}

/// The Bayes risk (in floats, for choosing between candidates) of `q` (|Θ̃| × |Y|, columns
/// summing to 1) after the first mixing of [`mix_and_quantise`] for row violations `need`:
/// (Σ C·q + Σ_k g_k Σ_i C\[i,k\]) / (1 + Σ_k g_k).
fn mixed_risk(q: &Array2<f64>, need: &[f64], cost: &Array2<f64>, rho: f64, margin: f64) -> f64 {
    let g = mixing(q, need, rho, margin);
    let risk: f64 = q.outer_iter().enumerate().map(|(k, row)| row.dot(&cost.column(k))).sum();
    let mixed: f64 = g.iter().enumerate().map(|(k, &gk)| gk * cost.column(k).sum()).sum();
    (risk + mixed) / (1.0 + g.iter().sum::<f64>())
}

/// [`repair_far`] tries the half-ratio candidate only where the rounds' mixing would add more
/// than this mass to each column (measured on the poll of 100: from the first checkpoint on,
/// the rounds left under 10⁻⁴ and the half-ratio candidate's risk was 1.6–1.8× theirs).
const HALF_RATIO_MIXING: f64 = 0.01;

/// Rounds of lift and normalisation in [`repair_far`].
const LIFT_ROUNDS: usize = 12;

/// The neighbours of every observation in index order, split into those below and those above
/// it: what the sweeps of [`close_row_by_sweeps`] read, streaming.
struct SplitAdjacency {
    /// Start of observation i's neighbours in `neighbours` (|Y| + 1 offsets).
    offsets: Vec<usize>,
    /// Where observation i's neighbours above it begin.
    above: Vec<usize>,
    /// The neighbours, ascending within each observation.
    neighbours: Vec<u32>,
}

impl SplitAdjacency {
    fn of(incidence: &crate::lp::Incidence) -> SplitAdjacency {
        let edges = incidence.edges();
        let n = incidence.n_obs();
        let mut offsets = Vec::with_capacity(n + 1);
        let mut above = Vec::with_capacity(n);
        let mut neighbours = Vec::with_capacity(2 * edges.len());
        offsets.push(0);
        for i in 0..n {
            let start = neighbours.len();
            neighbours.extend(incidence.at(i).iter().map(|&(own, _)| incidence.neighbour(i, own) as u32));
            neighbours[start..].sort_unstable();
            above.push(start + neighbours[start..].partition_point(|&j| (j as usize) < i));
            offsets.push(neighbours.len());
        }
        SplitAdjacency { offsets, above, neighbours }
    }
}

/// The least float ≥ 1/ρ (ρ > 0 finite): 1/ρ rounded to nearest, and one step up where that fell
/// below (the fused r·ρ − 1 is exact in sign).
pub(crate) fn reciprocal_above(rho: f64) -> f64 {
    let r = 1.0 / rho;
    if r.mul_add(rho, -1.0) < 0.0 {
        next_up(r)
    } else {
        r
    }
}

/// The largest of `row` at `at` (0 where `at` is empty; the entries are finite and ≥ 0).
#[inline(always)]
fn largest(row: &[f64], at: &[u32]) -> f64 {
    at.iter().fold(0.0, |m, &j| {
        let v = row[j as usize];
        if v > m {
            v
        } else {
            m
        }
    })
}

/// Sweep pairs [`close_row_by_sweeps`] tries before it hands the row to [`close_row`].
const MAX_SWEEP_PAIRS: usize = 4;

/// The max-plus closure of one row ([`close_row`]) by relaxation sweeps: ascending, each vertex
/// raised to its neighbours below / ρ, then descending with those above, until a pair of sweeps
/// changes nothing. Every pass streams the row. On the multinomial lattice in its index order
/// one pair is exact (moving a record from category a to b < a raises the index, and the moves
/// of a shortest path can be taken in any order, since every count only rises or only falls
/// along it: those that raise the index first), so a second pair confirms; on a graph that has
/// not converged after [`MAX_SWEEP_PAIRS`], the sweeps' row (between the input and its closure,
/// so with the same closure) goes to [`close_row`]. Returns the pairs of sweeps that raised a
/// value (`MAX_SWEEP_PAIRS` where the fallback ran).
fn close_row_by_sweeps(row: &mut [f64], rho: f64, graph: &SplitAdjacency) -> usize {
    let n = row.len();
    // 1/ρ rounded up: fl(v·shrink) ≥ fl(v/ρ) for v ≥ 0 (rounding is monotone), so a vertex is
    // raised at least as far as by the division; and the largest neighbour times it is the
    // largest of the products.
    let shrink = reciprocal_above(rho);
    for pair in 0..MAX_SWEEP_PAIRS {
        let mut changed = false;
        for i in 0..n {
            let below = &graph.neighbours[graph.offsets[i]..graph.above[i]];
            let v = largest(row, below) * shrink;
            if v > row[i] {
                row[i] = v;
                changed = true;
            }
        }
        for i in (0..n).rev() {
            let above = &graph.neighbours[graph.above[i]..graph.offsets[i + 1]];
            let v = largest(row, above) * shrink;
            if v > row[i] {
                row[i] = v;
                changed = true;
            }
        }
        if !changed {
            return pair;
        }
    }
    close_row(row, rho, |i| graph.neighbours[graph.offsets[i]..graph.offsets[i + 1]].iter().map(|&j| j as usize));
    MAX_SWEEP_PAIRS
}

/// Largest-remainder rounding of the non-negative vector `x` (any positive sum) to integers summing
/// to `total`: floors of `total·x/Σx`, then one unit each to the largest remainders (only entries
/// with x > 0 ever receive units, so zeros stay zero).
pub(crate) fn quantise(x: &[f64], total: u64) -> Vec<u64> {
    let s: f64 = x.iter().sum();
    assert!(s > 0.0 && s.is_finite(), "quantise needs a positive finite sum");
    let t = total as f64;
    let targets: Vec<f64> = x.iter().map(|&v| (v / s * t).min(t)).collect();
    let mut w: Vec<u64> = targets.iter().map(|&v| v.floor() as u64).collect();
    let assigned: u128 = w.iter().map(|&v| v as u128).sum();
    let mut order: Vec<usize> = (0..x.len()).filter(|&k| x[k] > 0.0).collect();
    if assigned <= total as u128 {
        // Hand out the deficit to the largest remainders (ties: lower index first).
        order.sort_by(|&a, &b| {
            let (ra, rb) = (targets[a] - targets[a].floor(), targets[b] - targets[b].floor());
            rb.total_cmp(&ra).then(a.cmp(&b))
        });
        let mut deficit = total as u128 - assigned;
        while deficit > 0 {
            for &k in &order {
                if deficit == 0 {
                    break;
                }
                w[k] += 1;
                deficit -= 1;
            }
        }
    } else {
        // Float round-off overshot: take units back from the smallest remainders of non-zero weights.
        order.sort_by(|&a, &b| {
            let (ra, rb) = (targets[a] - targets[a].floor(), targets[b] - targets[b].floor());
            ra.total_cmp(&rb).then(a.cmp(&b))
        });
        let mut excess = assigned - total as u128;
        while excess > 0 {
            for &k in &order {
                if excess > 0 && w[k] > 0 {
                    w[k] -= 1;
                    excess -= 1;
                }
            }
        }
    }
    w
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantise_sums_to_total_keeps_zeros_and_rounds_closely() {
        let x = [0.5, 0.0, 0.25, 0.125, 0.125 + 1e-17, 0.0];
        let w = quantise(&x, 1 << 20);
        assert_eq!(w.iter().sum::<u64>(), 1 << 20);
        assert_eq!((w[1], w[5]), (0, 0));
        for (k, &v) in x.iter().enumerate() {
            assert!((w[k] as f64 - v * (1 << 20) as f64).abs() < 1.0);
        }
        let w = quantise(&[1.0, 1.0, 1.0], 8);
        assert_eq!(w, vec![3, 3, 2]);
    }

    #[test]
    fn the_reciprocal_above_is_the_least_float_at_or_above_one_over_rho() {
        for rho in [2.0, 3.0, 1.6487212707001282, 10.0, 1.0 + 1e-12, 7.0e5] {
            let r = reciprocal_above(rho);
            // r·ρ ≥ 1 exactly, and the float below r is below 1/ρ.
            assert!(r.mul_add(rho, -1.0) >= 0.0, "{rho}");
            assert!(super::super::exact::next_down(r).mul_add(rho, -1.0) < 0.0, "{rho}");
        }
        assert_eq!(reciprocal_above(2.0), 0.5);
    }

    #[test]
    fn lift_is_the_smallest_feasible_row_above() {
        let rho = 2.0;
        let chain = Neighbours::Chain { len: 4 };
        let mut q = Array2::from_shape_vec((1, 4), vec![8.0, 1.0, 0.0, 1.0]).unwrap();
        lift_rows(&mut q, &chain, &chain.edges().collect::<Vec<_>>(), rho);
        assert_eq!(q.row(0).to_vec(), vec![8.0, 4.0, 2.0, 1.0]);
        // The same on a graph given explicitly (a star centred at 1, with 3 a leaf of 2).
        let graph = Neighbours::Graph { len: 4, edges: vec![(0, 1), (1, 2), (2, 3)] };
        let mut q = Array2::from_shape_vec((1, 4), vec![8.0, 1.0, 0.0, 1.0]).unwrap();
        let mut as_graph = Neighbours::Graph { len: 4, edges: vec![(0, 1), (1, 3), (1, 2)] };
        lift_rows(&mut q, &graph, &graph.edges().collect::<Vec<_>>(), rho);
        assert_eq!(q.row(0).to_vec(), vec![8.0, 4.0, 2.0, 1.0]);
        let mut q = Array2::from_shape_vec((1, 4), vec![8.0, 1.0, 0.0, 1.0]).unwrap();
        let e: Vec<_> = as_graph.edges().collect();
        lift_rows(&mut q, &as_graph, &e, rho);
        assert_eq!(q.row(0).to_vec(), vec![8.0, 4.0, 2.0, 2.0]);
        as_graph = Neighbours::Graph { len: 2, edges: vec![] };
        let mut q = Array2::from_shape_vec((1, 2), vec![8.0, 1.0]).unwrap();
        lift_rows(&mut q, &as_graph, &[], rho);
        assert_eq!(q.row(0).to_vec(), vec![8.0, 1.0]);
    }

    #[test]
    fn the_closure_is_the_max_plus_product_with_the_distance_kernel() {
        // close_row against its definition, row[i] = max_j row[j] ρ^(−d(i,j)), on random graphs
        // (disconnected ones included) with ties and zeros among the values.
        use rand::{RngExt, SeedableRng};
        let mut rng = rand::rngs::StdRng::seed_from_u64(7);
        for trial in 0..40 {
            let n = rng.random_range(1..40usize);
            let rho: f64 = 1.0 + rng.random_range(0.05..3.0);
            let edges: Vec<(usize, usize)> = (0..rng.random_range(0..3 * n))
                .map(|_| (rng.random_range(0..n), rng.random_range(0..n)))
                .filter(|(a, b)| a != b)
                .collect();
            let mut adj = vec![Vec::new(); n];
            for &(a, b) in &edges {
                adj[a].push(b);
                adj[b].push(a);
            }
            let row: Vec<f64> =
                (0..n).map(|_| [0.0, 1.0, rng.random_range(0.0..10.0)][rng.random_range(0..3)]).collect();
            let mut closed = row.clone();
            close_row(&mut closed, rho, |i| adj[i].iter().copied());
            for i in 0..n {
                // Breadth-first distances from i.
                let mut dist = vec![usize::MAX; n];
                dist[i] = 0;
                let mut queue = std::collections::VecDeque::from([i]);
                while let Some(a) = queue.pop_front() {
                    for &b in &adj[a] {
                        if dist[b] == usize::MAX {
                            dist[b] = dist[a] + 1;
                            queue.push_back(b);
                        }
                    }
                }
                let want = (0..n)
                    .filter(|&j| dist[j] != usize::MAX)
                    .map(|j| (0..dist[j]).fold(row[j], |v, _| v * reciprocal_above(rho)))
                    .fold(0.0, f64::max);
                assert_eq!(closed[i], want, "trial {trial}, vertex {i}");
            }
        }
    }

    #[test]
    fn the_sweeps_reach_the_closure_on_lattices_and_random_graphs() {
        // close_row_by_sweeps against close_row: multinomial lattices and a band (where one pair
        // of sweeps is exact) and random graphs (where the fallback finishes the job).
        use crate::model::Model;
        use rand::{RngExt, SeedableRng};
        let mut rng = rand::rngs::StdRng::seed_from_u64(11);
        let lattice = |d: usize, records: usize| {
            let spec = format!(
                "name = \"lattice\"\nepsilon = [0.5]\n[parameter]\ngrid = {{ kind = \"simplex\", resolution = 2 }}\nprior = {{ kind = \"dirichlet\", alpha = {:?} }}\n[observation]\nfamily = \"multinomial\"\ncategories = {d}\nrecords = {records}\n[output]\ngrid = \"parameter\"\n[loss]\nkind = \"squared-euclidean\"\n",
                vec![1.0; d]
            );
            Model::from_spec(crate::model::ModelSpec::from_toml(&spec, "lattice.toml").unwrap())
                .unwrap()
                .family
                .neighbours()
        };
        // (graph, whether one pair of sweeps is exact on it)
        let mut graphs = vec![
            (lattice(3, 12), true),
            (lattice(4, 6), true),
            (lattice(5, 4), true),
            (Neighbours::Band { len: 30, width: 4 }, true),
        ];
        for _ in 0..10 {
            let n = rng.random_range(2..60usize);
            let edges: Vec<(usize, usize)> = (0..rng.random_range(0..3 * n))
                .map(|_| (rng.random_range(0..n), rng.random_range(0..n)))
                .filter(|(a, b)| a != b)
                .collect();
            graphs.push((Neighbours::Graph { len: n, edges }, false));
        }
        for (neighbours, one_pair) in &graphs {
            let incidence = crate::lp::Incidence::new(neighbours).unwrap();
            let split = SplitAdjacency::of(&incidence);
            let adj = |i: usize| split.neighbours[split.offsets[i]..split.offsets[i + 1]].iter().map(|&j| j as usize);
            for _ in 0..5 {
                let rho: f64 = 1.0 + rng.random_range(0.05..3.0);
                let row: Vec<f64> = (0..neighbours.len())
                    .map(|_| if rng.random_range(0..4) == 0 { rng.random_range(0.0..10.0) } else { 0.0 })
                    .collect();
                let (mut by_sweeps, mut by_queue) = (row.clone(), row);
                let pairs = close_row_by_sweeps(&mut by_sweeps, rho, &split);
                close_row(&mut by_queue, rho, adj);
                assert_eq!(by_sweeps, by_queue);
                assert!(!one_pair || pairs <= 1, "{pairs} pairs of sweeps on {neighbours:?}");
            }
        }
    }

    #[test]
    fn at_an_eps_whose_exponential_rounds_to_one_every_column_is_the_mean() {
        // ε ≤ 1e-16: ρ − 1 = 0 in floating point, so no finite mixing suffices; the repair returns
        // the column-independent release (the mean column) instead of panicking in `quantise`.
        let chain = Neighbours::Chain { len: 3 };
        let p = Array2::from_shape_vec((2, 3), vec![0.5, 0.5, 0.5 + 1e-12, 0.5, 0.5, 0.5 - 1e-12]).unwrap();
        for eps in [1e-16, 1e-300, 5e-324] {
            for method in RepairMethod::ALL {
                let (w, certified, report) = repair_and_quantise(&chain, eps, &p, 1 << 52, method).unwrap();
                assert!(w.iter().all(|c| c == &w[0]), "ε = {eps}, {method:?}: {w:?}");
                assert_eq!(w[0].iter().sum::<u64>(), 1 << 52);
                assert!(certified <= eps, "{certified}");
                assert_eq!(report.mixing_mass, f64::MAX);
            }
        }
    }

    #[test]
    fn repair_refuses_far_from_feasible_input() {
        let chain = Neighbours::Chain { len: 2 };
        let p = Array2::from_shape_vec((2, 2), vec![1.0, 0.0, 0.0, 1.0]).unwrap();
        let e = repair_and_quantise(&chain, 1.0, &p, 1 << 52, RepairMethod::Mix).unwrap_err();
        assert!(e.to_string().contains("DP violation"), "{e}");
    }

    #[test]
    fn repair_fixes_slightly_violated_input_exactly() {
        // Two observations, two outputs, ε = 1: the optimal randomised response has
        // P = [[e/(1+e), 1/(1+e)], [1/(1+e), e/(1+e)]]; perturb it by 1e-10 towards infeasibility.
        let e = 1f64.exp();
        let (hi, lo) = (e / (1.0 + e) + 1e-10, 1.0 / (1.0 + e) - 1e-10);
        let p = Array2::from_shape_vec((2, 2), vec![hi, lo, lo, hi]).unwrap();
        let chain = Neighbours::Chain { len: 2 };
        for method in [RepairMethod::Mix, RepairMethod::LiftMix, RepairMethod::TrimLiftMix] {
            let (w, certified, report) = repair_and_quantise(&chain, 1.0, &p, 1 << 52, method).unwrap();
            assert!(certified <= 1.0 && certified > 1.0 - 1e-6, "{certified}");
            assert!(report.input_dp_violation > 0.0);
            for col in &w {
                assert_eq!(col.iter().sum::<u64>(), 1 << 52);
            }
        }
    }

    #[test]
    fn repair_handles_huge_and_tiny_eps() {
        // Randomised response on two observations at ε = 50 (e^ε beyond the 2^60 cap) and 1e-7.
        let chain = Neighbours::Chain { len: 2 };
        for eps in [50.0f64, 1e-7] {
            let e = eps.exp();
            let (hi, lo) = (e / (1.0 + e), 1.0 / (1.0 + e));
            let p = Array2::from_shape_vec((2, 2), vec![hi, lo, lo, hi]).unwrap();
            for method in [RepairMethod::Mix, RepairMethod::LiftMix, RepairMethod::TrimLiftMix] {
                let (w, certified, _) = repair_and_quantise(&chain, eps, &p, 1 << 52, method).unwrap();
                assert!(certified <= eps, "{method:?}: {certified} > {eps}");
                assert!(w.iter().all(|c| c.iter().all(|&v| v > 0)), "{method:?}: {w:?}");
                let moved = (w[0][0] as f64 / (1u64 << 52) as f64 - hi).abs();
                assert!(moved < 1e-6, "{method:?} at ε = {eps}: moved {moved:e}");
            }
        }
    }
}
