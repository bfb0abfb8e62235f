//! The smallest ε whose certified optimal Bayes risk meets a target (`ubapp plan`).
//!
//! The optimal risk is non-increasing in ε (an ε-DP mechanism is ε'-DP for every ε' ≥ ε), so a
//! bracket [lo, hi] with risk(lo) > target ≥ risk(hi) is narrowed by bisection in log ε until
//! hi/lo ≤ 1.01; hi is returned, so 0.99·hi < lo does not meet the target.

use serde::Serialize;

use super::{reference_risks, solve_model, SolveOptions};
use crate::model::{Model, Objective};
use crate::{Error, Result};

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

/// Largest ε the search tries.
pub const PLAN_MAX_EPS: f64 = 1e3;

/// The smallest ε (to 1 % relative) whose certified optimal Bayes risk is ≤ `target`.
pub fn plan_eps(model: &Model, target: f64, options: SolveOptions) -> Result<Plan> {
    if model.objective() != Objective::Bayes {
        return Err(Error::argument(
            "--target-risk",
            "plan works on Bayes designs (this model's objective is minimax)",
        ));
    }
    if !(target.is_finite() && target > 0.0) {
        return Err(Error::argument("--target-risk", format!("must be a positive number (got {target})")));
    }
    let refs = reference_risks(model, options.memory)?;
    if target >= refs.prior_risk {
        return Err(Error::argument(
            "--target-risk",
            format!(
                "{target:e} is already met as ε → 0: the prior alone (the best constant release) has risk {:e}; any ε meets it",
                refs.prior_risk
            ),
        ));
    }
    if target <= refs.non_private_risk {
        return Err(Error::argument(
            "--target-risk",
            format!(
                "{target:e} is at or below the non-private risk {:e} on this output grid: no ε reaches it (refine the output grid or add trials)",
                refs.non_private_risk
            ),
        ));
    }
    let mut solves = 0;
    let mut risk = |eps: f64| -> Result<f64> {
        solves += 1;
        let s = solve_model(model, Some(&[eps]), options)?.remove(0);
        if !s.status.has_solution() {
            return Err(Error::argument(
                "--target-risk",
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
                return Err(Error::argument("--target-risk", "no ε above 1e-9 fails the target"));
            }
            (hi, r_hi) = (lo, r_lo);
        }
    } else {
        loop {
            (lo, r_lo) = (hi, r_hi);
            hi *= 2.0;
            if hi > PLAN_MAX_EPS {
                return Err(Error::argument(
                    "--target-risk",
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
