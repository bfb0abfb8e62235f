//! `ubapp plan MODEL (--target-risk X | --target-rmse X) [--for eps|trials] [--eps E]
//! [--curve DIR [--curve-range LO,HI] [--curve-points N]] [--json]`: the smallest ε (or number of
//! trials K at a given ε) whose certified optimal Bayes risk meets a target, and the risk-vs-ε curve.

use std::path::PathBuf;

use ubapp::analysis::{log_spaced, plan_eps, plan_trials, risk_vs_eps, PLAN_TARGET};
use ubapp::model::Model;
use ubapp::report::{check_report_dir, write_risk_curve, RiskCurve};
use ubapp::solve::{reference_risks, SolveOptions};
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

/// `--curve DIR` and its range and points, checked.
struct Curve {
    dir: PathBuf,
    lo: f64,
    hi: f64,
    points: usize,
}

/// A plan as asked for: the flags checked, the model loaded, the target stated as a risk.
struct Request {
    model: Model,
    /// The target risk (`--target-rmse` squared), absent for the curve alone.
    target: Option<f64>,
    target_rmse: Option<f64>,
    for_: PlanFor,
    eps: Option<f64>,
    curve: Option<Curve>,
    json: bool,
    options: SolveOptions,
}

impl Args {
    /// The flags as a checked request (the curve's before the model is read), each error naming
    /// its flag.
    fn validate(self) -> Result<Request> {
        let curve = self.curve()?;
        let model = Model::load(&self.model)?;
        let target = self.target(&model, curve.is_some())?;
        let options = SolveOptions { memory: super::solve::memory_budget(), ..SolveOptions::default() };
        Ok(Request {
            model,
            target,
            target_rmse: self.target_rmse,
            for_: self.for_,
            eps: self.eps,
            curve,
            json: self.json,
            options,
        })
    }

    /// `--curve DIR` (a directory that may be written), `--curve-range` and `--curve-points`.
    fn curve(&self) -> Result<Option<Curve>> {
        let Some(dir) = &self.curve else { return Ok(None) };
        check_report_dir(dir, "--curve", &[self.model.as_path()])?;
        let [lo, hi] = self.curve_range[..] else {
            return Err(Error::argument(
                "--curve-range",
                format!("must be two numbers LO,HI (got {})", self.curve_range.len()),
            ));
        };
        if !(lo.is_finite() && hi.is_finite() && lo > 0.0 && hi > lo) {
            return Err(Error::argument("--curve-range", format!("must be LO,HI with 0 < LO < HI (got {lo},{hi})")));
        }
        if !(2..=1000).contains(&self.curve_points) {
            return Err(Error::argument(
                "--curve-points",
                format!("must be between 2 and 1000 (got {})", self.curve_points),
            ));
        }
        Ok(Some(Curve { dir: dir.clone(), lo, hi, points: self.curve_points }))
    }

    /// The target as a risk: `--target-risk`, or `--target-rmse` squared under squared loss; none
    /// only for the curve alone.
    fn target(&self, model: &Model, curve: bool) -> Result<Option<f64>> {
        match (self.target_risk, self.target_rmse) {
            (Some(r), None) => Ok(Some(r)),
            (None, Some(r)) if model.loss().name() == "squared" => Ok(Some(r * r)),
            (None, Some(_)) => Err(Error::argument(
                "--target-rmse",
                format!("is for squared loss (this model's loss is {}): use --target-risk", model.loss().name()),
            )),
            (None, None) if curve && self.for_ == PlanFor::Eps => Ok(None),
            _ => Err(Error::argument(
                "--target-risk",
                "give exactly one of --target-risk and --target-rmse (or only --curve DIR for the curve alone)",
            )),
        }
    }
}

impl Request {
    /// The library's errors about the target name it as a risk: restate them in the flag given.
    fn stated(&self, e: impl Into<Error>) -> Error {
        match e.into() {
            Error::Argument { name, problem } if name == PLAN_TARGET => match (self.target_rmse, self.target) {
                (Some(rmse), Some(risk)) => Error::argument(
                    "--target-rmse",
                    format!("{rmse} is a target risk of {risk:e} (rmse²); that risk {problem}"),
                ),
                _ => Error::argument("--target-risk", problem),
            },
            Error::Argument { name, problem } if name == "eps" => Error::argument("--eps", problem),
            other => other,
        }
    }
}

/// Run the command: the flags checked and the model loaded, the search, then the curve (written
/// even when the target cannot be met; the error follows it).
pub fn run(args: Args) -> Result<()> {
    let r = args.validate()?;
    let mut found_eps = None;
    let mut failed = None;
    match (r.for_, r.target) {
        (PlanFor::Eps, Some(target)) => match plan_for_eps(&r, target) {
            Err(e) if r.curve.is_some() => failed = Some(e),
            Err(e) => return Err(e),
            Ok(eps) => found_eps = Some((target, eps)),
        },
        (PlanFor::Trials, Some(target)) => plan_for_trials(&r, target)?,
        (_, None) => {}
    }
    if let Some(curve) = &r.curve {
        write_curve(&r, curve, found_eps)?;
    }
    failed.map_or(Ok(()), Err)
}

/// The smallest ε meeting `target`, printed; returns it.
fn plan_for_eps(r: &Request, target: f64) -> Result<f64> {
    let plan = plan_eps(&r.model, target, r.options.clone()).map_err(|e| r.stated(e))?;
    if r.json {
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
    Ok(plan.eps)
}

/// The smallest K meeting `target` at the ε of `--eps` (or the model's only ε), printed.
fn plan_for_trials(r: &Request, target: f64) -> Result<()> {
    let eps = match (r.eps, r.model.epsilons()) {
        (Some(e), _) => e,
        (None, [e]) => *e,
        (None, list) => {
            return Err(Error::argument(
                "--eps",
                format!("--for trials needs one ε: give --eps (the model lists {})", list.len()),
            ))
        }
    };
    let plan = plan_trials(&r.model, eps, target, r.options.clone()).map_err(|e| r.stated(e))?;
    if r.json {
        outln!("{}", serde_json::to_string_pretty(&plan).expect("a plan serialises"));
        return Ok(());
    }
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
    Ok(())
}

/// The risk-vs-ε curve into `curve.dir` (with the target and the ε found, when there are).
fn write_curve(r: &Request, curve: &Curve, found_eps: Option<(f64, f64)>) -> Result<()> {
    let eps = log_spaced(curve.lo, curve.hi, curve.points);
    let points = risk_vs_eps(&r.model, &eps, r.options.clone())?;
    let plot = RiskCurve {
        model: r.model.name(),
        points: &points,
        references: reference_risks(&r.model, r.options.memory).ok(),
        target: found_eps,
        squared: r.model.loss().name() == "squared",
    };
    let files = write_risk_curve(&curve.dir, "--curve", &plot)?;
    eprintln!("wrote {} ({}): {} points", curve.dir.display(), files.join(", "), points.len());
    Ok(())
}
