//! The comparison behind `ubapp compare`: sweep ε and K, solve UBaPP, build every baseline, and
//! evaluate each one's Bayes risk (discretised prior, like-for-like with the LP), true risk
//! (continuous prior, quadrature) and risk(θ) curve.
//!
//! Sits above `eval` (the [`Estimator`] trait and the risks), `baselines` (the estimators of the
//! literature), `solve` (UBaPP) and `model`; `report` writes what it produces. Which comparison a
//! model gets, this one or the party comparison ([`parties`]), is [`CompareRoute::for_model`]'s
//! decision.
//!
//! ```
//! use ubapp::compare::{compare, CompareOptions, Method};
//! use ubapp::model::{Model, ModelSpec};
//!
//! let spec = ModelSpec::from_toml(r#"
//!     name = "tiny"
//!     epsilon = [1.0]
//!     [parameter]
//!     grid = { kind = "midpoint", points = 6 }
//!     prior = { kind = "uniform" }
//!     [observation]
//!     family = "binomial"
//!     trials = 5
//!     [loss]
//!     kind = "squared"
//! "#, "example").unwrap();
//! let model = Model::from_spec(spec).unwrap();
//! let opts = CompareOptions { methods: vec![Method::Ubapp, Method::Lbapp], ..CompareOptions::for_model(&model) };
//! let cmp = compare(&model, &opts, &mut |_| {}).unwrap();
//! // UBaPP is the Bayes-optimal ε-DP estimator on its grids: no worse than LBaPP.
//! assert!(cmp.rows[0].bayes_risk <= cmp.rows[1].bayes_risk);
//! ```

mod error;
mod method;
pub mod parties;
mod route;
mod rows;
#[cfg(test)]
mod tests;

pub use error::CompareError;
pub use method::{build, Method};
pub use route::CompareRoute;
pub use rows::{
    curves_csv, rows_csv, Comparison, ConstraintsNote, CurveSeries, Curves, DpCheck, Heatmap, Note, PartyNote, Row,
    SolveNote, TrialsReference,
};

pub use crate::baselines::BaselineOptions;

use crate::eval::{bayes_risk, prior_shape, risk_curve, true_risk, Estimator, ScalarLoss, Setting};
use crate::guard::{MemoryBudget, Parameter};
use crate::mechanism::Release;
use crate::model::{Family, Model, Objective};
use crate::solve::{reference_risks, Solution, SolveOptions, SolvePlan};
use error::Result;

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
    /// How UBaPP is solved: the solver, the memory budget, the limits of each solve (one per K,
    /// and one more for `ubapp-unconstrained`), the anytime route's gap and where progress goes.
    pub solve: SolveOptions,
    /// Points of the risk(θ) curves.
    pub curve_points: usize,
}

impl CompareOptions {
    /// The defaults for `model` (what `ubapp compare MODEL` runs): the model's ε list and K, every
    /// method, default baseline settings, the default solve (`auto`, no time limit of its own) and
    /// 101-point curves. A model outside the binomial family gets no K here; [`compare`] then says
    /// why it cannot compare it.
    pub fn for_model(model: &Model) -> CompareOptions {
        CompareOptions {
            eps: model.epsilons.clone(),
            trials: Setting::of(model).map(|s| vec![s.trials]).unwrap_or_default(),
            methods: Method::ALL.to_vec(),
            baseline: BaselineOptions::default(),
            solve: SolveOptions::default(),
            curve_points: 101,
        }
    }
}

/// UBaPP's design at one ε, solved by a caller of [`compare_solved`]: the solution and, where the
/// caller has certified it already, its release (else the comparison certifies it, as it does the
/// designs it solves itself).
#[derive(Debug, Clone, Copy)]
pub struct Design<'a> {
    /// The solve's answer.
    pub solution: &'a Solution,
    /// Its certified release ([`Release::certify`] of the model and `solution`).
    pub release: Option<&'a Release>,
}

/// Check the options (each error names the parameter).
pub fn validate(opts: &CompareOptions) -> std::result::Result<(), CompareError> {
    if opts.eps.is_empty() {
        return Err(CompareError::EmptyList { parameter: Parameter::Eps, what: "privacy level ε > 0" });
    }
    if let Some((index, &value)) = opts.eps.iter().enumerate().find(|(_, e)| !(e.is_finite() && **e > 0.0)) {
        return Err(CompareError::NonPositiveEps { index, value });
    }
    if opts.trials.is_empty() {
        return Err(CompareError::EmptyList { parameter: Parameter::Trials, what: "number of trials K ≥ 1" });
    }
    if opts.trials.contains(&0) {
        return Err(CompareError::ZeroTrials);
    }
    if opts.methods.is_empty() {
        return Err(CompareError::EmptyList { parameter: Parameter::Methods, what: "method" });
    }
    let d = opts.baseline.delta;
    if !(d.is_finite() && d > 0.0 && d < 1.0) {
        return Err(CompareError::DeltaOutOfRange { value: d });
    }
    match opts.baseline.parties {
        Some(0) => return Err(CompareError::ZeroParties),
        Some(m) => {
            if let Some(&k) = opts.trials.iter().find(|&&k| k % m != 0) {
                return Err(CompareError::PartiesDoNotDivide { parties: m, trials: k });
            }
        }
        None => {}
    }
    if opts.curve_points < 2 {
        return Err(CompareError::TooFewCurvePoints { points: opts.curve_points });
    }
    Ok(())
}

/// The setting every method is evaluated in, or why `model` cannot be compared (the one place
/// that decides which models `compare` supports). `source` names the model in the message: its
/// file for the CLI.
pub fn check_model(model: &Model, source: &str) -> std::result::Result<Setting, CompareError> {
    let unsupported_family =
        || CompareError::UnsupportedFamily { model: source.to_string(), family: model.family.name() };
    if !matches!(model.family, Family::Binomial { .. }) {
        return Err(unsupported_family());
    }
    if crate::eval::ScalarLoss::of(&model.loss).is_none() {
        return Err(CompareError::UnsupportedLoss { model: source.to_string(), loss: model.loss.name() });
    }
    Setting::of(model).ok_or_else(unsupported_family)
}

impl Comparison {
    /// A comparison of `model` with no rows yet, its risks measured in `loss`.
    pub(crate) fn empty(model: &Model, loss: ScalarLoss) -> Comparison {
        Comparison {
            rows: Vec::new(),
            curves: Vec::new(),
            heatmaps: Vec::new(),
            loss,
            objective: model.objective,
            references: Vec::new(),
            prior_shape: prior_shape(model),
        }
    }
}

impl TrialsReference {
    /// The reference risks of `model` (already at `trials`), where its cost matrix fits in memory.
    pub(crate) fn of(model: &Model, trials: u64) -> Option<TrialsReference> {
        let r = reference_risks(model, MemoryBudget::from_env()).ok()?;
        Some(TrialsReference { trials, prior_risk: r.prior_risk, non_private_risk: r.non_private_risk })
    }
}

/// Run the comparison, solving UBaPP with `opts.solve` at each K. `progress` receives one line
/// per step (the CLI prints it to stderr).
pub fn compare(model: &Model, opts: &CompareOptions, progress: &mut dyn FnMut(&str)) -> Result<Comparison> {
    compare_solved(model, opts, None, progress)
}

/// [`compare`], with UBaPP's designs of `model` itself already solved by the caller: one per ε of
/// `opts.eps`, in order, used instead of solving (and, with their releases, certifying) again.
/// Designs that are not the model's at those ε, or a sweep over another K than the model's own,
/// are refused ([`CompareError::DesignsMismatch`]).
pub fn compare_solved(
    model: &Model,
    opts: &CompareOptions,
    designs: Option<&[Design<'_>]>,
    progress: &mut dyn FnMut(&str),
) -> Result<Comparison> {
    let setting = check_model(model, &format!("model \"{}\"", model.name()))?;
    validate(opts)?;
    if let Some(designs) = designs {
        check_designs(model, setting.trials, opts, designs)?;
    }
    let mut out = Comparison::empty(model, setting.loss);
    let steps = opts.trials.len() * opts.eps.len();
    let mut step = 0;
    for &k in &opts.trials {
        let m = model.with_trials(k)?;
        let setting = check_model(&m, &format!("model \"{}\"", m.name()))?;
        let parties = opts.baseline.parties_for(k);
        out.references.extend(TrialsReference::of(&m, k));
        let (lo, hi) = (setting.lower, setting.upper);
        let thetas: Vec<f64> =
            (0..opts.curve_points).map(|i| lo + (hi - lo) * i as f64 / (opts.curve_points - 1) as f64).collect();
        // Each solve's plan stays for the certification of its designs (its cost matrix, built once).
        let plan = if designs.is_none() && opts.methods.contains(&Method::Ubapp) {
            progress(&format!("K = {k}: solving UBaPP for {} value(s) of ε", opts.eps.len()));
            Some(SolvePlan::checked(&m, Some(&opts.eps), opts.solve.clone())?)
        } else {
            None
        };
        let solved = match &plan {
            Some(plan) => plan.solve_each(&mut |_| {})?,
            None => Vec::new(),
        };
        let ubapp: Vec<Design> = match designs {
            Some(given) => given.to_vec(),
            None => solved.iter().map(|solution| Design { solution, release: None }).collect(),
        };
        // The price of `[constraints]`: the same model's optimum without them.
        let free_model = m.without_constraints().filter(|_| opts.methods.contains(&Method::UbappUnconstrained));
        let free_model = free_model.transpose()?;
        let free = match &free_model {
            Some(free) => {
                progress(&format!("K = {k}: solving UBaPP without [constraints] for {} value(s) of ε", opts.eps.len()));
                let plan = SolvePlan::checked(free, Some(&opts.eps), opts.solve.clone())?;
                let solved = plan.solve_each(&mut |_| {})?;
                Some((plan, solved))
            }
            None => None,
        };
        for (ei, &eps) in opts.eps.iter().enumerate() {
            step += 1;
            progress(&format!("[{step}/{steps}] K = {k}, ε = {eps}: evaluating {} method(s)", opts.methods.len()));
            let mut curves = Curves { eps, trials: k, thetas: thetas.clone(), series: Vec::new() };
            let free_case = free.as_ref().map(|(plan, s)| (plan, &s[ei]));
            for (est, note) in estimators(&m, eps, ubapp.get(ei).copied(), plan.as_ref(), free_case, opts)? {
                let method = est.method();
                if method == Method::Ubapp {
                    let outputs = m.outputs.values();
                    let p = est.rounded_mechanism(&outputs).expect("a release on the model's own output grid");
                    out.heatmaps.push(Heatmap { eps, trials: k, p, outputs });
                }
                let b = bayes_risk(est.as_ref(), &m);
                let t = true_risk(est.as_ref(), &m);
                let privacy = est.privacy();
                out.rows.push(Row {
                    method,
                    privacy: privacy.kind(),
                    eps,
                    delta: privacy.delta(),
                    trials: k,
                    parties: method.uses_parties().then_some(parties),
                    bayes_risk: b.value,
                    bayes_risk_se: b.se,
                    true_risk: t.value,
                    true_risk_se: t.se,
                    risk_method: b.method.max(t.method),
                    note,
                });
                let risk = risk_curve(est.as_ref(), &thetas).into_iter().map(|r| r.value).collect();
                curves.series.push(CurveSeries { method, privacy, risk });
            }
            out.curves.push(curves);
        }
    }
    Ok(out)
}

/// Check that `designs` are `model`'s own (whose K is `trials`) at each ε of `opts`, in order.
fn check_designs(model: &Model, trials: u64, opts: &CompareOptions, designs: &[Design]) -> Result<()> {
    if opts.trials != [trials] {
        let problem = format!("they are the model's own (K = {trials}) and the sweep's K are {:?}", opts.trials);
        return Err(CompareError::DesignsMismatch { problem });
    }
    check_solutions(model, &opts.eps, designs.iter().map(|d| d.solution))?;
    for (i, (d, &eps)) in designs.iter().zip(&opts.eps).enumerate() {
        if d.release.is_some_and(|r| r.eps() != eps || r.model().spec() != model.spec()) {
            let problem = format!("design {i}'s release is not model \"{}\"'s at ε = {eps}", model.name());
            return Err(CompareError::DesignsMismatch { problem });
        }
    }
    Ok(())
}

/// Check that `solutions` are designs of `model` at each ε of `eps`, in order: as many, each at
/// its ε, each dense P |Θ̃| × |Y| (a solution does not name its model; a release does).
pub(crate) fn check_solutions<'a>(
    model: &Model,
    eps: &[f64],
    solutions: impl ExactSizeIterator<Item = &'a Solution>,
) -> Result<()> {
    let mismatch = |problem: String| Err(CompareError::DesignsMismatch { problem });
    if solutions.len() != eps.len() {
        return mismatch(format!("{} design(s) for {} value(s) of ε", solutions.len(), eps.len()));
    }
    let shape = (model.outputs.len(), model.family.observation_count());
    for (i, (s, &e)) in solutions.zip(eps).enumerate() {
        if s.eps != e {
            return mismatch(format!("design {i} is not at ε = {e}, the sweep's ε[{i}]"));
        }
        if s.has_dense_p() && s.p.dim() != shape {
            return mismatch(format!("design {i}'s P is {:?}, not |Θ̃| × |Y| = {shape:?}", s.p.dim()));
        }
    }
    Ok(())
}

/// The estimators of one (ε, K) case in table order, each keyed by its own [`Estimator::method`],
/// with the note its row carries; UBaPP's is the certified release of `design`, as `solve --out`
/// writes it (its risk is the LP's plus the certified repair cost), certified here when the
/// caller did not, by `plan` (the solve's, whose cost matrix prices it) where the comparison
/// solved it. `unconstrained`: the model without its `[constraints]`, as its solve's plan, and
/// its design. Methods that do not apply are left out.
fn estimators(
    model: &Model,
    eps: f64,
    design: Option<Design>,
    plan: Option<&SolvePlan<'_>>,
    unconstrained: Option<(&SolvePlan<'_>, &Solution)>,
    opts: &CompareOptions,
) -> Result<Vec<(Box<dyn Estimator>, Note)>> {
    let mut out: Vec<(Box<dyn Estimator>, Note)> = Vec::new();
    for &method in &opts.methods {
        match (method, design) {
            (Method::Ubapp, Some(Design { solution: s, release })) => {
                let release = match (release, plan) {
                    (Some(r), _) => r.clone(),
                    (None, Some(plan)) => Release::certify_planned(plan, s)?,
                    (None, None) => Release::certify(model, s)?,
                };
                let mut note = ubapp_note(model, s, &release);
                note.constraints = constraints_note(model, s);
                out.push((Box::new(release), note));
            }
            (Method::UbappUnconstrained, _) => {
                if let Some((free, s)) = unconstrained {
                    let release = Release::certify_planned(free, s)?;
                    let note = ubapp_note(free.model(), s, &release);
                    out.push((Box::new(Unconstrained(release)), note));
                }
            }
            _ => out.extend(
                build(method, model, eps, &opts.baseline)?
                    .map(|e| (e, Note { satisfies: satisfied(model, method), ..Note::default() })),
            ),
        }
    }
    Ok(out)
}

/// The `[constraints]` a UBaPP row carries and, for an unbiased design, how many outputs its
/// optimum uses against Badanidiyuru et al.'s (NeurIPS 2023) bound of 2|Y|.
fn constraints_note(model: &Model, solution: &Solution) -> Option<ConstraintsNote> {
    let c = model.constraints();
    if c.is_empty() {
        return None;
    }
    let used = c.names.unbiased.then(|| {
        solution.p.rows().into_iter().filter(|r| r.iter().any(|&x| x > crate::certify::repair::TRIM_LEVEL)).count()
    });
    let (estimates_off_grid, spacing) = estimates_on_grid(model);
    Some(ConstraintsNote {
        label: c.names.label(),
        used_outputs: used,
        observations: solution.p.ncols(),
        estimates_off_grid,
        spacing,
    })
}

/// The model's `[constraints]` a baseline meets as well, in the model file's words, when it meets
/// every one: an unbiased baseline (y/K plus zero-mean noise, [`Method::unbiased`]) meets
/// `unbiased` with the default estimate y/K, and — a shift of one noise law, symmetric about 0 —
/// `monotone` and `symmetric` too; nothing here meets `honest` or `fixed_point`.
fn satisfied(model: &Model, method: Method) -> Option<String> {
    let c = model.constraints();
    let names = &c.names;
    if c.is_empty() || !method.unbiased() || names.honest || names.fixed_point || !names.unbiased {
        return None;
    }
    let setting = crate::eval::Setting::of(model)?;
    let k = setting.trials as f64;
    let default_estimate = c.estimate().iter().enumerate().all(|(y, &e)| (e - y as f64 / k).abs() <= 1e-12);
    default_estimate.then(|| names.label())
}

/// Unbiased and fixed-point designs: how many estimates are not outputs, and (when some are not)
/// the estimates' spacing against the output grid's largest step inside their range.
fn estimates_on_grid(model: &Model) -> (Option<usize>, Option<[f64; 2]>) {
    let c = model.constraints();
    if !(c.names.unbiased || c.names.fixed_point) {
        return (None, None);
    }
    let outs = c.output_values();
    let on = |e: f64| outs.iter().any(|&o| (o - e).abs() <= 1e-9 * e.abs().max(1.0));
    let off = c.estimate().iter().filter(|&&e| !on(e)).count();
    if off == 0 {
        return (Some(0), None);
    }
    let mut est: Vec<f64> = c.estimate().to_vec();
    est.sort_by(f64::total_cmp);
    est.dedup();
    let spacing = est.windows(2).map(|w| w[1] - w[0]).fold(f64::INFINITY, f64::min);
    let (lo, hi) = (est[0], est[est.len() - 1]);
    let mut inside: Vec<f64> = outs.to_vec();
    inside.sort_by(f64::total_cmp);
    let step = inside.windows(2).filter(|w| w[1] >= lo && w[0] <= hi).map(|w| w[1] - w[0]).fold(0.0, f64::max);
    (Some(off), Some([spacing, step]))
}

/// The unconstrained optimum's release, named as its own method.
struct Unconstrained(Release);

impl Estimator for Unconstrained {
    fn method(&self) -> Method {
        Method::UbappUnconstrained
    }
    fn privacy(&self) -> crate::eval::Privacy {
        self.0.privacy()
    }
    fn release(&self, records: &[bool], rng: &mut dyn rand::Rng) -> f64 {
        self.0.release(records, rng)
    }
    fn risk_at(&self, theta: f64) -> crate::eval::Risk {
        self.0.risk_at(theta)
    }
}

/// The UBaPP row's note: the solver status after our checks and the largest DP violation of P (for
/// an (ε, δ) program the δ it spends instead: its pure-ε violation is expected, up to δ); for a
/// minimax program also its worst-case risk max_j risk(θ_j) over the parameter grid (what it
/// minimises), since the row is ranked on Bayes risk like every other.
fn ubapp_note(model: &Model, solution: &Solution, est: &dyn Estimator) -> Note {
    let check = if model.delta > 0.0 {
        DpCheck::DeltaSpent { spent: solution.checks.delta_spent, delta: model.delta }
    } else {
        DpCheck::MaxViolation { violation: solution.checks.max_dp_violation }
    };
    let minimax_worst_case = (model.objective == Objective::Minimax)
        .then(|| model.theta.values().iter().map(|&t| est.risk_at(t).value).fold(f64::NEG_INFINITY, f64::max));
    Note { solve: Some(SolveNote { status: solution.status, check }), minimax_worst_case, ..Note::default() }
}
