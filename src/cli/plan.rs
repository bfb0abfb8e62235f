//! `ubapp plan MODEL (--target-risk X | --target-rmse X) [--for eps|trials] [--eps E]
//! [--curve DIR [--curve-range LO,HI] [--curve-points N]] [--json]`: the smallest ε (or number of
//! trials K at a given ε) whose certified optimal Bayes risk meets a target, and the risk-vs-ε curve.

use std::path::PathBuf;

use ubapp::model::Model;
use ubapp::report::{check_report_dir, write_risk_curve, RiskCurve};
use ubapp::solve::{log_spaced, plan_eps, plan_trials, reference_risks, risk_vs_eps, SolveOptions, PLAN_TARGET};
use ubapp::{Error, Result};

/// What `plan` searches for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum PlanFor {
    /// The smallest ε (to 1 %).
    Eps,
    /// The smallest number of trials K at a given ε (binomial family).
    Trials,
}

/// Flags of `plan`.
#[derive(clap::Args)]
pub struct Args {
    /// Model file (TOML).
    model: PathBuf,
    /// Target Bayes risk.
    #[arg(long)]
    target_risk: Option<f64>,
    /// Target root mean squared error (squared loss: target risk = rmse²).
    #[arg(long)]
    target_rmse: Option<f64>,
    /// What to find: the smallest ε, or the smallest K at the ε of --eps.
    #[arg(long = "for", value_enum, default_value_t = PlanFor::Eps)]
    for_: PlanFor,
    /// The ε held fixed by `--for trials` (default: the model's, when it lists exactly one).
    #[arg(long, allow_negative_numbers = true)]
    eps: Option<f64>,
    /// Write the optimal risk against ε into this directory: risk_vs_eps.csv, .png, .svg (with
    /// the reference risks and, given a target, the target and the ε found).
    #[arg(long)]
    curve: Option<PathBuf>,
    /// The curve's ε range, LO,HI (log-spaced).
    #[arg(long, value_delimiter = ',', default_values_t = [0.01, 10.0])]
    curve_range: Vec<f64>,
    /// Points on the curve.
    #[arg(long, default_value_t = 25)]
    curve_points: usize,
    /// Print the result as JSON.
    #[arg(long)]
    json: bool,
}

/// Run the command.
pub fn run(a: Args) -> Result<()> {
    if let Some(dir) = &a.curve {
        check_report_dir(dir, "--curve")?;
        let [lo, hi] = a.curve_range[..] else {
            return Err(Error::argument(
                "--curve-range",
                format!("must be two numbers LO,HI (got {})", a.curve_range.len()),
            ));
        };
        if !(lo.is_finite() && hi.is_finite() && lo > 0.0 && hi > lo) {
            return Err(Error::argument("--curve-range", format!("must be LO,HI with 0 < LO < HI (got {lo},{hi})")));
        }
        if !(2..=1000).contains(&a.curve_points) {
            return Err(Error::argument(
                "--curve-points",
                format!("must be between 2 and 1000 (got {})", a.curve_points),
            ));
        }
    }
    let model = Model::load(&a.model)?;
    let squared = model.loss().name() == "squared";
    let target = match (a.target_risk, a.target_rmse) {
        (Some(r), None) => Some(r),
        (None, Some(r)) if squared => Some(r * r),
        (None, Some(_)) => {
            return Err(Error::argument(
                "--target-rmse",
                format!("is for squared loss (this model's loss is {}): use --target-risk", model.loss().name()),
            ))
        }
        (None, None) if a.curve.is_some() && a.for_ == PlanFor::Eps => None,
        _ => {
            return Err(Error::argument(
                "--target-risk",
                "give exactly one of --target-risk and --target-rmse (or only --curve DIR for the curve alone)",
            ))
        }
    };
    let options = SolveOptions { memory: super::solve::memory_budget(), ..SolveOptions::default() };
    // The library's errors about the target name it as a risk: restate them in the flag given.
    let stated = |e: Error| match e {
        Error::Argument { name, problem } if name == PLAN_TARGET => match (a.target_rmse, target) {
            (Some(rmse), Some(risk)) => Error::argument(
                "--target-rmse",
                format!("{rmse} is a target risk of {risk:e} (rmse²); that risk {problem}"),
            ),
            _ => Error::argument("--target-risk", problem),
        },
        Error::Argument { name, problem } if name == "eps" => Error::argument("--eps", problem),
        other => other,
    };
    let mut found_eps = None;
    // With --curve, the curve is written even when the target cannot be met (the error follows).
    let mut failed = None;
    match (a.for_, target) {
        (PlanFor::Eps, Some(target)) => {
            match plan_eps(&model, target, options.clone()).map_err(Error::from).map_err(stated) {
                Err(e) if a.curve.is_some() => failed = Some(e),
                Err(e) => return Err(e),
                Ok(plan) => {
                    found_eps = Some((target, plan.eps));
                    if a.json {
                        outln!("{}", serde_json::to_string_pretty(&plan).expect("a plan serialises"));
                    } else {
                        outln!(
                    "eps {:.6} (to 1 %): bayes_risk {:.6e} ≤ target {:.6e}; at eps {:.6} the risk is {:.6e} (above the target)",
                    plan.eps, plan.bayes_risk, plan.target_risk, plan.eps_below, plan.bayes_risk_below
                );
                        outln!(
                            "references: prior_risk {:.6e} (ε → 0), non_private_risk {:.6e} (ε → ∞); {} solves",
                            plan.prior_risk,
                            plan.non_private_risk,
                            plan.solves
                        );
                    }
                }
            }
        }
        (PlanFor::Trials, Some(target)) => {
            let eps = match (a.eps, model.epsilons()) {
                (Some(e), _) => e,
                (None, [e]) => *e,
                (None, list) => {
                    return Err(Error::argument(
                        "--eps",
                        format!("--for trials needs one ε: give --eps (the model lists {})", list.len()),
                    ))
                }
            };
            let plan = plan_trials(&model, eps, target, options.clone()).map_err(Error::from).map_err(stated)?;
            if a.json {
                outln!("{}", serde_json::to_string_pretty(&plan).expect("a plan serialises"));
            } else {
                let below = match (plan.trials_below, plan.bayes_risk_below) {
                    (Some(k), Some(r)) => format!("; with K = {k} the risk is {r:.6e} (above the target)"),
                    _ => "; K = 1 already meets it".to_string(),
                };
                outln!(
                    "trials {} at eps {}: bayes_risk {:.6e} ≤ target {:.6e}{below}",
                    plan.trials,
                    plan.eps,
                    plan.bayes_risk,
                    plan.target_risk
                );
                outln!("references: prior_risk {:.6e} (ε → 0, any K); {} solves", plan.prior_risk, plan.solves);
            }
        }
        (_, None) => {}
    }
    if let Some(dir) = &a.curve {
        let eps = log_spaced(a.curve_range[0], a.curve_range[1], a.curve_points);
        let points = risk_vs_eps(&model, &eps, options.clone())?;
        let curve = RiskCurve {
            model: model.name(),
            points: &points,
            references: reference_risks(&model, options.memory).ok(),
            target: found_eps,
            squared,
        };
        let files = write_risk_curve(dir, "--curve", &curve)?;
        eprintln!("wrote {} ({}): {} points", dir.display(), files.join(", "), points.len());
    }
    failed.map_or(Ok(()), Err)
}
