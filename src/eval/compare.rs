//! The comparison engine behind `ubapp compare`: sweep ε and K, solve UBaPP, build every baseline,
//! and evaluate each one's Bayes risk (discretised prior, like-for-like with the LP), true risk
//! (continuous prior, quadrature) and risk(θ) curve.

use ndarray::Array2;
use serde::Serialize;

use super::{bayes_risk, risk_curve, true_risk, Estimator, GridMechanism, Setting};
use crate::baselines::{build, default_parties, BaselineOptions, Method};
use crate::model::Model;
use crate::solve::{solve_model, SolverChoice};
use crate::Result;

macro_rules! bail_input {
    ($($arg:tt)*) => { return Err(crate::Error::argument("input", format!($($arg)*))) };
}

/// What to compare.
#[derive(Debug, Clone)]
pub struct CompareOptions {
    /// Privacy levels ε (each finite and > 0).
    pub eps: Vec<f64>,
    /// Numbers of trials K (each ≥ 1).
    pub trials: Vec<u64>,
    /// Methods, in table order.
    pub methods: Vec<Method>,
    /// Baseline settings (δ, parties, seed).
    pub baseline: BaselineOptions,
    /// LP solver for UBaPP.
    pub solver: SolverChoice,
    /// Points of the risk(θ) curves.
    pub curve_points: usize,
}

/// One row of `risk.csv`.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    /// Method id.
    pub method: String,
    /// `pure-eps` or `eps-delta`.
    pub privacy: String,
    /// ε.
    pub eps: f64,
    /// δ (0 for pure ε-DP).
    pub delta: f64,
    /// K.
    pub trials: u64,
    /// Parties / sites for the distributed methods (empty otherwise).
    pub parties: Option<u64>,
    /// Σ_j π_j risk(θ_j) under the model's discretised prior.
    pub bayes_risk: f64,
    /// Its standard error (0 unless Monte Carlo).
    pub bayes_risk_se: f64,
    /// ∫ risk(θ) π(θ) dθ under the continuous prior.
    pub true_risk: f64,
    /// Its standard error.
    pub true_risk_se: f64,
    /// `exact`, `numerical-integration` or `monte-carlo`.
    pub risk_method: String,
    /// UBaPP only: the solver status after our checks, and the largest DP violation of its P.
    pub note: String,
}

/// risk(θ) curves of every method at one (ε, K).
#[derive(Debug, Clone)]
pub struct Curves {
    /// ε.
    pub eps: f64,
    /// K.
    pub trials: u64,
    /// The θ values.
    pub thetas: Vec<f64>,
    /// (method id, is (ε, δ), risk at each θ).
    pub series: Vec<(String, bool, Vec<f64>)>,
}

/// The UBaPP mechanism at one (ε, K), for heat maps.
#[derive(Debug, Clone)]
pub struct Heatmap {
    /// ε.
    pub eps: f64,
    /// K.
    pub trials: u64,
    /// P, |Θ̃| × |Y|.
    pub p: Array2<f64>,
    /// The output grid.
    pub outputs: Vec<f64>,
}

/// Everything `compare` produces.
#[derive(Debug, Clone, Default)]
pub struct Comparison {
    /// Table rows.
    pub rows: Vec<Row>,
    /// risk(θ) curves.
    pub curves: Vec<Curves>,
    /// UBaPP heat maps.
    pub heatmaps: Vec<Heatmap>,
    /// The loss's name (for axis labels).
    pub loss: String,
}

/// Check the options (input errors name the flag).
pub fn validate(opts: &CompareOptions) -> Result<()> {
    crate::model::validate_epsilons(&opts.eps, "--eps")?;
    if opts.trials.is_empty() {
        bail_input!("--trials must list at least one number of trials K ≥ 1");
    }
    if let Some(&0) = opts.trials.iter().find(|&&k| k == 0) {
        bail_input!("--trials must be at least 1 (got 0)");
    }
    if opts.methods.is_empty() {
        bail_input!("--methods must name at least one method");
    }
    let d = opts.baseline.delta;
    if !(d.is_finite() && d > 0.0 && d < 1.0) {
        bail_input!("--delta must be a number in (0, 1) (got {d})");
    }
    if opts.baseline.parties == Some(0) {
        bail_input!("--parties must be at least 1 (got 0)");
    }
    if let Some(m) = opts.baseline.parties {
        if let Some(k) = opts.trials.iter().find(|&&k| k % m != 0) {
            bail_input!("--parties {m} does not divide K = {k}: each party must hold K/M records");
        }
    }
    if opts.curve_points < 2 {
        bail_input!("the risk curves need at least 2 points");
    }
    Ok(())
}

/// Run the comparison. `progress` receives one line per step (the CLI prints it to stderr).
pub fn compare(model: &Model, opts: &CompareOptions, progress: &mut dyn FnMut(&str)) -> Result<Comparison> {
    validate(opts)?;
    if Setting::of(model).is_none() {
        bail_input!(
            "compare: the baselines cover the binomial family only (model {} uses {})",
            model.name(),
            model.family.name()
        );
    }
    let mut out = Comparison { loss: model.loss.name().to_string(), ..Default::default() };
    let steps = opts.trials.len() * opts.eps.len();
    let mut step = 0;
    for &k in &opts.trials {
        let m = model.with_trials(k)?;
        let setting = Setting::of(&m).expect("binomial checked above");
        let parties = opts.baseline.parties.unwrap_or_else(|| default_parties(k));
        let (lo, hi) = (setting.lower, setting.upper);
        let thetas: Vec<f64> =
            (0..opts.curve_points).map(|i| lo + (hi - lo) * i as f64 / (opts.curve_points - 1) as f64).collect();
        let solutions = if opts.methods.contains(&Method::Ubapp) {
            progress(&format!("K = {k}: solving UBaPP for {} value(s) of ε", opts.eps.len()));
            solve_model(&m, Some(&opts.eps), opts.solver)?
        } else {
            Vec::new()
        };
        for (ei, &eps) in opts.eps.iter().enumerate() {
            step += 1;
            progress(&format!("[{step}/{steps}] K = {k}, ε = {eps}: evaluating {} method(s)", opts.methods.len()));
            let mut curves = Curves { eps, trials: k, thetas: thetas.clone(), series: Vec::new() };
            for &method in &opts.methods {
                let (est, note): (Box<dyn Estimator>, String) = if method == Method::Ubapp {
                    let s = &solutions[ei];
                    let g = GridMechanism::from_solution(&m, s, setting);
                    out.heatmaps.push(Heatmap { eps, trials: k, p: g.p.clone(), outputs: g.outputs.clone() });
                    (Box::new(g), format!("status {}; max DP violation {:.1e}", s.status, s.checks.max_dp_violation))
                } else {
                    match build(method, &m, eps, &opts.baseline)? {
                        Some(e) => (e, String::new()),
                        None => continue,
                    }
                };
                let b = bayes_risk(est.as_ref(), &m);
                let t = true_risk(est.as_ref(), &m);
                let privacy = est.privacy();
                out.rows.push(Row {
                    method: method.id().to_string(),
                    privacy: privacy.label().to_string(),
                    eps,
                    delta: privacy.delta(),
                    trials: k,
                    parties: method.uses_parties().then_some(parties),
                    bayes_risk: b.value,
                    bayes_risk_se: b.se,
                    true_risk: t.value,
                    true_risk_se: t.se,
                    risk_method: b.method.max(t.method).to_string(),
                    note,
                });
                let curve = risk_curve(est.as_ref(), &thetas).into_iter().map(|r| r.value).collect();
                curves.series.push((method.id().to_string(), !privacy.is_pure(), curve));
            }
            out.curves.push(curves);
        }
    }
    Ok(out)
}

/// The rows as CSV text (header first).
pub fn rows_csv(rows: &[Row]) -> String {
    let mut s = String::from(
        "method,privacy,eps,delta,trials,parties,bayes_risk,bayes_risk_se,true_risk,true_risk_se,risk_method,note\n",
    );
    for r in rows {
        s.push_str(&format!(
            "{},{},{},{},{},{},{:.10e},{:.3e},{:.10e},{:.3e},{},\"{}\"\n",
            r.method,
            r.privacy,
            r.eps,
            r.delta,
            r.trials,
            r.parties.map_or(String::new(), |p| p.to_string()),
            r.bayes_risk,
            r.bayes_risk_se,
            r.true_risk,
            r.true_risk_se,
            r.risk_method,
            r.note.replace('"', "'")
        ));
    }
    s
}
