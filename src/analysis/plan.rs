//! The smallest ε whose certified optimal Bayes risk meets a target (`ubapp plan`).
//!
//! The optimal risk is non-increasing in ε (an ε-DP mechanism is ε'-DP for every ε' ≥ ε), so a
//! bracket [lo, hi] with risk(lo) > target ≥ risk(hi) is narrowed by bisection in log ε until
//! hi/lo ≤ 1.01; hi is returned, so 0.99·hi < lo does not meet the target.

use serde::Serialize;

use crate::solve::{reference_risks, solve_model, SolveError, SolveOptions};

/// A plan's result: its failures are the solves' own.
type Result<T> = std::result::Result<T, SolveError>;
use crate::model::{Model, Objective};

/// The answer of [`plan_eps`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Plan {
    /// The target Bayes risk.
    pub target_risk: f64,
    /// The smallest ε found (to 1 % relative) whose optimum meets the target.
    pub eps: f64,
    /// The optimal risk at `eps` (of the certified mechanism when the solve built one).
    pub bayes_risk: f64,
    /// The largest ε tried that does not meet it (eps/1.01 ≤ eps_below < eps).
    pub eps_below: f64,
    /// Its optimal risk (> target).
    pub bayes_risk_below: f64,
    /// Prior risk (ε → 0) and non-private risk (ε → ∞), the bounds of any target.
    pub prior_risk: f64,
    /// See `prior_risk`.
    pub non_private_risk: f64,
    /// Solves run.
    pub solves: usize,
}

/// The name errors about the target give (a caller that took the target in another form, say an
/// RMSE, restates it).
pub const PLAN_TARGET: &str = "target risk";
const TARGET: &str = PLAN_TARGET;

/// What both searches need: a Bayes design (the risk they bisect is the Bayes risk) and a
/// positive target.
fn check_target(model: &Model, target: f64) -> Result<()> {
    if model.objective() != Objective::Bayes {
        return Err(SolveError::argument(TARGET, "plan works on Bayes designs (this model's objective is minimax)"));
    }
    if !(target.is_finite() && target > 0.0) {
        return Err(SolveError::argument(TARGET, format!("must be a positive number (got {target})")));
    }
    Ok(())
}

/// Largest ε the search tries.
pub const PLAN_MAX_EPS: f64 = 1e3;

/// The smallest ε (to 1 % relative) whose certified optimal Bayes risk is ≤ `target`.
pub fn plan_eps(model: &Model, target: f64, options: SolveOptions) -> Result<Plan> {
    check_target(model, target)?;
    let refs = reference_risks(model, options.memory)?;
    if target >= refs.prior_risk {
        return Err(SolveError::argument(
            TARGET,
            format!(
                "{target:e} is already met as ε → 0: the prior alone (the best constant release) has risk {:e}; any ε meets it",
                refs.prior_risk
            ),
        ));
    }
    if target <= refs.non_private_risk {
        return Err(SolveError::argument(
            TARGET,
            format!(
                "{target:e} is at or below the non-private risk {:e} (the best estimator without privacy, on this output grid): no ε reaches it; only more data (trials) lowers that floor, a finer output grid only the part due to rounding to the grid",
                refs.non_private_risk
            ),
        ));
    }
    let mut solves = 0;
    let mut risk = |eps: f64| -> Result<f64> {
        solves += 1;
        let s = solve_model(model, Some(&[eps]), options.clone())?.remove(0);
        if !s.status.has_solution() {
            return Err(SolveError::argument(
                TARGET,
                format!("the solve at ε = {eps} returned no solution ({})", s.status),
            ));
        }
        Ok(s.checks.certified_objective.unwrap_or(s.bayes_risk))
    };
    // Bracket: hi meets the target, lo does not.
    let (mut lo, mut r_lo): (f64, f64);
    let (mut hi, mut r_hi) = (1.0, risk(1.0)?);
    if r_hi <= target {
        loop {
            lo = hi / 2.0;
            r_lo = risk(lo)?;
            if r_lo > target {
                break;
            }
            if lo < 1e-9 {
                // Cannot happen when target < prior_risk and the risk is continuous at 0.
                return Err(SolveError::argument(TARGET, "no ε above 1e-9 fails the target"));
            }
            (hi, r_hi) = (lo, r_lo);
        }
    } else {
        loop {
            (lo, r_lo) = (hi, r_hi);
            hi *= 2.0;
            if hi > PLAN_MAX_EPS {
                return Err(SolveError::argument(
                    TARGET,
                    format!("not met at ε = {PLAN_MAX_EPS} (risk {r_lo:e}); the target is too close to the non-private risk"),
                ));
            }
            r_hi = risk(hi)?;
            if r_hi <= target {
                break;
            }
        }
    }
    while hi / lo > 1.01 {
        let mid = (lo * hi).sqrt();
        let r = risk(mid)?;
        if r <= target {
            (hi, r_hi) = (mid, r);
        } else {
            (lo, r_lo) = (mid, r);
        }
    }
    Ok(Plan {
        target_risk: target,
        eps: hi,
        bayes_risk: r_hi,
        eps_below: lo,
        bayes_risk_below: r_lo,
        prior_risk: refs.prior_risk,
        non_private_risk: refs.non_private_risk,
        solves,
    })
}

/// The answer of [`plan_trials`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TrialsPlan {
    /// The target Bayes risk.
    pub target_risk: f64,
    /// The privacy level the search holds fixed.
    pub eps: f64,
    /// The smallest number of trials K whose optimum at `eps` meets the target.
    pub trials: u64,
    /// The optimal risk at `trials`.
    pub bayes_risk: f64,
    /// `trials − 1` and its optimal risk (> target), when `trials` > 1.
    pub trials_below: Option<u64>,
    /// See `trials_below`.
    pub bayes_risk_below: Option<f64>,
    /// Prior risk (the ε → 0 limit, the same at every K).
    pub prior_risk: f64,
    /// Solves run.
    pub solves: usize,
}

/// Largest K the search tries.
pub const PLAN_MAX_TRIALS: u64 = 1 << 20;

/// The smallest number of trials K (binomial family) whose certified optimal Bayes risk at `eps`
/// is ≤ `target`. The optimum is non-increasing in K: an ε-DP mechanism for K records applied to
/// the first K of K + 1 records is ε-DP for K + 1 (neighbours stay neighbours or become equal) and
/// has the same risk, so K = 1, 2, 4, … brackets the answer and integer bisection finds it.
pub fn plan_trials(model: &Model, eps: f64, target: f64, options: SolveOptions) -> Result<TrialsPlan> {
    check_target(model, target)?;
    if !(eps.is_finite() && eps > 0.0) {
        return Err(SolveError::argument("eps", format!("must be a finite number > 0 (got {eps})")));
    }
    // The family check (binomial only) comes from `with_trials` before any solve.
    let at_one = model.with_trials(1)?;
    let prior_risk = reference_risks(&at_one, options.memory)?.prior_risk;
    let mut solves = 0;
    let mut risk = |k: u64| -> Result<f64> {
        solves += 1;
        let m = model.with_trials(k)?;
        let s = solve_model(&m, Some(&[eps]), options.clone())?.remove(0);
        if !s.status.has_solution() {
            return Err(SolveError::argument(
                TARGET,
                format!("the solve at K = {k}, ε = {eps} returned no solution ({})", s.status),
            ));
        }
        Ok(s.checks.certified_objective.unwrap_or(s.bayes_risk))
    };
    let (mut hi, mut r_hi) = (1u64, risk(1)?);
    let mut below: Option<(u64, f64)> = None;
    while r_hi > target {
        below = Some((hi, r_hi));
        if hi >= PLAN_MAX_TRIALS {
            return Err(SolveError::argument(
                TARGET,
                format!(
                    "not met with K = {PLAN_MAX_TRIALS} trials at ε = {eps} (risk {r_hi:e}): raise ε or the target"
                ),
            ));
        }
        hi = (hi * 2).min(PLAN_MAX_TRIALS);
        r_hi = risk(hi)?;
    }
    if let Some((mut lo, mut r_lo)) = below {
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            let r = risk(mid)?;
            if r <= target {
                (hi, r_hi) = (mid, r);
            } else {
                (lo, r_lo) = (mid, r);
            }
        }
        below = Some((lo, r_lo));
    }
    Ok(TrialsPlan {
        target_risk: target,
        eps,
        trials: hi,
        bayes_risk: r_hi,
        trials_below: below.map(|b| b.0),
        bayes_risk_below: below.map(|b| b.1),
        prior_risk,
        solves,
    })
}

/// One point of a risk-vs-ε curve.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct CurvePoint {
    /// ε.
    pub eps: f64,
    /// The certified optimal Bayes risk at ε.
    pub bayes_risk: f64,
}

/// `points` values of ε spaced evenly in log ε over [lo, hi].
pub fn log_spaced(lo: f64, hi: f64, points: usize) -> Vec<f64> {
    if points <= 1 {
        return vec![lo];
    }
    (0..points).map(|i| (lo.ln() + (hi.ln() - lo.ln()) * i as f64 / (points - 1) as f64).exp()).collect()
}

/// The certified optimal Bayes risk at each ε (as [`plan_eps`] measures it).
pub fn risk_vs_eps(model: &Model, eps: &[f64], options: SolveOptions) -> Result<Vec<CurvePoint>> {
    let solutions = solve_model(model, Some(eps), options)?;
    Ok(solutions
        .iter()
        .filter(|s| s.status.has_solution())
        .map(|s| CurvePoint { eps: s.eps, bayes_risk: s.checks.certified_objective.unwrap_or(s.bayes_risk) })
        .collect())
}
