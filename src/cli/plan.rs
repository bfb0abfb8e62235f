//! `ubapp plan MODEL (--target-risk X | --target-rmse X) [--json]`: the smallest ε whose certified
//! optimal Bayes risk meets a target.

use std::path::Path;

use ubapp::model::Model;
use ubapp::solve::{plan_eps, SolveOptions};
use ubapp::{Error, Result};

/// Run the command.
pub fn run(model_path: &Path, target_risk: Option<f64>, target_rmse: Option<f64>, json: bool) -> Result<()> {
    let model = Model::load(model_path)?;
    let target = match (target_risk, target_rmse) {
        (Some(r), None) => r,
        (None, Some(r)) if model.loss().name() == "squared" => r * r,
        (None, Some(_)) => {
            return Err(Error::argument(
                "--target-rmse",
                format!("is for squared loss (this model's loss is {}): use --target-risk", model.loss().name()),
            ))
        }
        _ => return Err(Error::argument("--target-risk", "give exactly one of --target-risk and --target-rmse")),
    };
    let options = SolveOptions { memory: super::solve::memory_budget(), ..SolveOptions::default() };
    let plan = plan_eps(&model, target, options)?;
    if json {
        outln!("{}", serde_json::to_string_pretty(&plan).expect("a plan serialises"));
    } else {
        outln!(
            "eps {:.6} (to 1 %): bayes_risk {:.6e} ≤ target {:.6e}; at eps {:.6} the risk is {:.6e} (above the target)",
            plan.eps,
            plan.bayes_risk,
            plan.target_risk,
            plan.eps_below,
            plan.bayes_risk_below
        );
        outln!(
            "references: prior_risk {:.6e} (ε → 0), non_private_risk {:.6e} (ε → ∞); {} solves",
            plan.prior_risk,
            plan.non_private_risk,
            plan.solves
        );
    }
    Ok(())
}
