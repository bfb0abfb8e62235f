//! How a design behaves away from the prior: the risk R(θ_j) of a mechanism P at each parameter
//! grid point, its worst case, the range of values it releases, and the one-line warning `solve`
//! prints when a Bayes design is fragile (see `docs/statistics.md`).
//!
//! R(θ_j) = Σ_i q_{θ_j}(y_i) Σ_k P\[k,i\] L(θ_j, θ̃_k), computed one θ_j at a time (one likelihood
//! column and one loss row), never as the dense |Θ| × |Y||Θ̃| matrix of the minimax program.

use ndarray::{Array2, ArrayView1};
use serde::Serialize;

use crate::model::{Loss, Model};
use crate::solve::ReferenceRisks;

/// Largest |Θ|·|Y|·|Θ̃| for which [`risk_profile`] runs (about a second of multiply-adds).
pub const MAX_PROFILE_WORK: f64 = 1e9;

/// Mass below which an output does not count as released (for the released range).
const RELEASED_MASS: f64 = 1e-6;

/// The risk of P at every point of the parameter grid, or `None` when |Θ|·|Y|·|Θ̃| exceeds
/// [`MAX_PROFILE_WORK`] (or P's shape does not match the model).
pub fn risk_profile(model: &Model, p: &Array2<f64>) -> Option<Vec<f64>> {
    let (theta, outputs) = (model.theta(), model.outputs());
    let n_obs = model.family().observation_count();
    if p.dim() != (outputs.len(), n_obs) {
        return None;
    }
    if theta.len() as f64 * n_obs as f64 * outputs.len() as f64 > MAX_PROFILE_WORK {
        return None;
    }
    Some(
        (0..theta.len())
            .map(|j| {
                let q = model.family().likelihood(theta.point(j));
                let l = loss_row(model.loss(), theta.point(j), j, model);
                q.iter()
                    .enumerate()
                    .filter(|(_, &qi)| qi > 0.0)
                    .map(|(i, &qi)| qi * p.column(i).iter().zip(&l).map(|(pk, lk)| pk * lk).sum::<f64>())
                    .sum()
            })
            .collect(),
    )
}

/// L(θ_j, θ̃_k) for every k (a matrix loss reads its row; every other loss is evaluated).
fn loss_row(loss: &Loss, theta: ArrayView1<'_, f64>, j: usize, model: &Model) -> Vec<f64> {
    let outputs = model.outputs();
    if let Loss::Matrix { values, theta: tg, outputs: og } = loss {
        if tg == model.theta() && og == outputs {
            return values.row(j).to_vec();
        }
    }
    (0..outputs.len()).map(|k| loss.eval(theta, outputs.point(k))).collect()
}

/// A design's behaviour away from the prior.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Robustness {
    /// max_j R(θ_j) over the parameter grid.
    pub worst_case_risk: f64,
    /// The θ_j where it is attained (coordinates); among points tied within [`WORST_CASE_TIE`]
    /// (mirrored points of a symmetric model), the first of the grid.
    pub worst_case_theta: Vec<f64>,
    /// Per coordinate, \[smallest, largest\] value released with probability ≥ 1e-6 from some y.
    pub released_range: Vec<[f64; 2]>,
    /// The smallest, over coordinates, of (released range's width)/(parameter grid's width).
    pub range_coverage: f64,
}

/// Risks within this relative distance of the largest are ties for the worst case.
pub const WORST_CASE_TIE: f64 = 1e-9;

/// The worst case of a risk profile: its largest value, at the *first* grid point whose risk is
/// within [`WORST_CASE_TIE`] (relative) of it. A symmetric model has its worst case at mirrored
/// points (θ and 1 − θ) whose risks differ only by round-off; the first of them (the smallest θ on
/// a one-dimensional grid) is reported, whatever the round-off, so the answer is reproducible.
fn worst_point(profile: &[f64]) -> Option<(usize, f64)> {
    let worst = profile
        .iter()
        .copied()
        .filter(|r| !r.is_nan())
        .fold(None, |m: Option<f64>, r| Some(m.map_or(r, |m| m.max(r))))?;
    let j = profile.iter().position(|&r| r >= worst - WORST_CASE_TIE * worst.abs())?;
    Some((j, worst))
}

/// The worst case and released range of P, or `None` when the risk profile is too large to compute.
pub fn robustness(model: &Model, p: &Array2<f64>) -> Option<Robustness> {
    let profile = risk_profile(model, p)?;
    let (j, worst) = worst_point(&profile)?;
    let (theta, outputs) = (model.theta(), model.outputs());
    let released: Vec<usize> = (0..outputs.len()).filter(|&k| p.row(k).iter().any(|&x| x >= RELEASED_MASS)).collect();
    let mut range = Vec::new();
    let mut coverage = f64::INFINITY;
    for d in 0..outputs.dim() {
        let span = |pts: &mut dyn Iterator<Item = f64>| {
            pts.fold([f64::INFINITY, f64::NEG_INFINITY], |[lo, hi], v| [lo.min(v), hi.max(v)])
        };
        let r = span(&mut released.iter().map(|&k| outputs.point(k)[d]));
        let t = span(&mut (0..theta.len()).map(|j| theta.point(j)[d]));
        if t[1] > t[0] {
            coverage = coverage.min(((r[1] - r[0]) / (t[1] - t[0])).max(0.0));
        }
        range.push(r);
    }
    Some(Robustness {
        worst_case_risk: worst,
        worst_case_theta: theta.point(j).to_vec(),
        released_range: range,
        range_coverage: if coverage.is_finite() { coverage } else { 1.0 },
    })
}

/// The one-line warning for a fragile Bayes design, or `None`. It fires when the design uses the
/// data (its Bayes risk is below 90 % of the prior risk: a design at the ε → 0 limit is the
/// prior's constant and its worst case says nothing about the design) and either its worst case
/// exceeds the prior risk by more than [`WORST_CASE_FACTOR`], or the values it releases cover
/// less than half of the parameter range.
pub fn robustness_warning(eps: f64, bayes_risk: f64, refs: &ReferenceRisks, r: &Robustness) -> Option<String> {
    let informative = bayes_risk < 0.9 * refs.prior_risk;
    let worst = r.worst_case_risk > WORST_CASE_FACTOR * refs.prior_risk;
    let narrow = r.range_coverage < 0.5;
    if !(informative && (worst || narrow)) {
        return None;
    }
    let theta: Vec<String> = r.worst_case_theta.iter().map(|v| format!("{v:.4}")).collect();
    let range: Vec<String> = r.released_range.iter().map(|[a, b]| format!("[{a:.4}, {b:.4}]")).collect();
    Some(format!(
        "warning: at ε = {eps} this Bayes design's worst-case risk {:.3e} (at θ = {}) is {:.1}× the prior risk {:.3e}, and it releases only {} ({:.0} % of Θ's range); it is good only where the prior puts its mass — for a guarantee at every θ use objective = \"minimax\"",
        r.worst_case_risk,
        theta.join(","),
        r.worst_case_risk / refs.prior_risk,
        refs.prior_risk,
        range.join(" × "),
        100.0 * r.range_coverage
    ))
}

/// How far above the prior risk the worst case may go before [`robustness_warning`] fires.
pub const WORST_CASE_FACTOR: f64 = 10.0;

#[cfg(test)]
mod tests {
    use super::worst_point;

    #[test]
    fn ties_for_the_worst_case_go_to_the_first_grid_point() {
        // Mirrored points whose risks differ by round-off: the first wins, whichever is larger.
        let r = 0.25;
        assert_eq!(worst_point(&[0.1, r, 0.2, r * (1.0 + 1e-15)]), Some((1, r * (1.0 + 1e-15))));
        assert_eq!(worst_point(&[0.1, r * (1.0 + 1e-15), 0.2, r]), Some((1, r * (1.0 + 1e-15))));
        // A real difference is not a tie.
        assert_eq!(worst_point(&[0.1, r, 0.2, r * (1.0 + 1e-6)]).map(|w| w.0), Some(3));
        assert_eq!(worst_point(&[f64::NAN, 0.5, 0.5]).map(|w| w.0), Some(1));
        assert_eq!(worst_point(&[]), None);
    }
}
