//! A solve's plan, made once from the model, the ε list and the options: the route and why, its
//! estimate (size, memory, time), and the cost matrix and symmetry, each built at most once and
//! shared. `--dry-run` prints its estimate, the refusal reads its price, the solve runs its route
//! on its cost matrix, and the reference risks and the certification read the same matrix.

use std::sync::Arc;
use std::time::Instant;

use ndarray::Array2;

use super::error::Result;
use super::estimate::{self, Estimate};
use super::lp_route::{infeasible_constraints, solve_lp};
use super::reference::{reference_risks_with, ReferenceRisks};
use super::shared::Shared;
use super::{anytime, chain, Event, Limits, Phase, Progress, Route, Solution, SolveError, SolveOptions};
use crate::lp::{Problem, Program, SizeError};
use crate::model::{Model, Objective};

/// What a solve will do, decided once before any of it runs: the route ([`Route`], with its
/// reason), the estimate of its size, memory and time ([`Estimate`]), and the cost matrix and
/// symmetry the route, the reference risks and the certification share (built at most once).
#[derive(Debug)]
pub struct SolvePlan<'m> {
    model: &'m Model,
    epsilons: Vec<f64>,
    options: SolveOptions,
    route: Route,
    estimate: Estimate,
    shared: Shared,
}

impl<'m> SolvePlan<'m> {
    /// The plan of solving `model` at `epsilons` (the model's own list when `None`) under
    /// `options`: the route [`Route::for_model`] picks for `options.solver` — under `auto`, the
    /// anytime route where the exact one does not fit the memory or time budget — and its
    /// estimate. No check of the ε or the gap (`solve --dry-run` prices what it is given); the
    /// only failure is a solver that cannot take the model.
    pub fn new(model: &'m Model, epsilons: Option<&[f64]>, options: SolveOptions) -> Result<SolvePlan<'m>> {
        let epsilons = epsilons.unwrap_or(&model.epsilons).to_vec();
        let shared = Shared::default();
        let (route, estimate) = estimate::plan_route(model, &options, Some(&epsilons), &shared)?;
        Ok(SolvePlan { model, epsilons, options, route, estimate, shared })
    }

    /// [`SolvePlan::new`] after the checks of the input a solve makes before any work — the ε list
    /// (finite, > 0, at least one) and the target gap — and, the route decided, every ε within
    /// what that route takes. The time limit then covers the planning too (it may build the cost
    /// matrix to find the outputs output generation starts from): the solve gets what is left. The
    /// price is not checked here: [`SolvePlan::refusal`].
    pub fn checked(model: &'m Model, epsilons: Option<&[f64]>, options: SolveOptions) -> Result<SolvePlan<'m>> {
        let planning = Instant::now();
        check_epsilons(epsilons.unwrap_or(&model.epsilons))?;
        check_gap(options.gap)?;
        let mut plan = SolvePlan::new(model, epsilons, options)?;
        check_route_eps(&plan.route, &plan.epsilons)?;
        plan.options.limits.seconds = plan.options.limits.remaining_after(planning.elapsed());
        Ok(plan)
    }

    /// The model planned for.
    pub fn model(&self) -> &'m Model {
        self.model
    }

    /// The ε to solve, in order.
    pub fn epsilons(&self) -> &[f64] {
        &self.epsilons
    }

    /// The options the plan was made under (with the time limit and the progress sink as last
    /// set).
    pub fn options(&self) -> &SolveOptions {
        &self.options
    }

    /// The route the solve takes, and why ([`Route::reason`]).
    pub fn route(&self) -> &Route {
        &self.route
    }

    /// The size, memory and rough time of the solve, as `solve --dry-run` prints them.
    pub fn estimate(&self) -> &Estimate {
        &self.estimate
    }

    /// The refusal the solve gives before any allocation when the route's price exceeds the memory
    /// budget (`None`: it fits).
    pub fn refusal(&self) -> Option<SizeError> {
        (!self.estimate.fits).then(|| self.estimate.size_error())
    }

    /// The wall-clock seconds the solve itself may take (the route is not decided again: a caller
    /// that spent part of its own limit before the solve gives the solve what is left).
    pub fn set_time_limit(&mut self, seconds: Option<f64>) {
        self.options.limits.seconds = seconds;
    }

    /// Where the solve reports its progress.
    pub fn set_progress(&mut self, progress: Progress) {
        self.options.progress = progress;
    }

    /// The model's cost matrix, built once (within the plan's memory budget) and shared.
    pub(crate) fn cost(&self) -> std::result::Result<Arc<Array2<f64>>, SizeError> {
        self.shared.cost(self.model, self.options.memory)
    }

    /// The model's cost matrix where the plan has built it already (the solve's route, the
    /// estimate or the reference risks asked for it), without building it: what a caller that keeps
    /// a solution beyond its plan hands to the certification ([`crate::bindings::SolvedRow`]).
    pub(crate) fn built_cost(&self) -> Option<Arc<Array2<f64>>> {
        self.shared.built_cost()
    }

    /// The model's [`ReferenceRisks`]: from the squared-loss moments where the chain solver has
    /// them, else from the plan's cost matrix (refused beyond the memory budget).
    pub fn reference_risks(&self) -> Result<ReferenceRisks> {
        reference_risks_with(self.model, || self.cost())
    }

    /// Solve each ε of the plan along its route, passing each ε's [`Solution`] to `each` as soon
    /// as it is solved; refused, before any allocation, where the plan does not fit its budget.
    pub fn solve_each(&self, each: &mut dyn FnMut(&Solution)) -> Result<Vec<Solution>> {
        if let Some(size) = self.refusal() {
            return Err(size.into());
        }
        let (model, eps_list, options) = (self.model, self.epsilons.as_slice(), &self.options);
        #[cfg(test)]
        SOLVES.with(|s| s.borrow_mut().extend_from_slice(eps_list));

        let fields = || crate::lp::size_fields(model);
        let progress = options.progress.clone();
        let count = eps_list.len();
        let mut solved = 0;
        // Each solution is reported, then passed on; the next ε is announced.
        // What no phase of the route's claims: the chain and anytime routes time themselves as one.
        let rest = match &self.route {
            Route::Anytime { .. } => "anytime route",
            Route::Chain { .. } => "chain solver",
            Route::Lp { .. } => "other",
        };
        let timings = progress.timings().cloned();
        let mut each = |s: &Solution| {
            if let Some(t) = &timings {
                t.finish_eps(s.eps, rest);
            }
            progress.report(Event::Solved { eps: s.eps, status: s.status, gap: s.checks.relative_gap });
            each(s);
            solved += 1;
            if let Some(&eps) = eps_list.get(solved) {
                if let Some(t) = &timings {
                    t.begin_eps();
                }
                progress.report(Event::Eps { eps, index: solved, count });
            }
        };
        if let Some(&eps) = eps_list.first() {
            if let Some(t) = &timings {
                t.begin_eps();
            }
            progress.report(Event::Eps { eps, index: 0, count });
        }
        let started = Instant::now();
        let mut run = || -> Result<Vec<Solution>> {
            match &self.route {
                Route::Anytime { reason } => {
                    progress.phase(Phase::Assembling);
                    let cost = self.cost()?;
                    // The time limit covers the cost matrix's build.
                    let limits =
                        Limits { seconds: options.limits.remaining_after(started.elapsed()), ..options.limits };
                    let options = SolveOptions { limits, ..options.clone() };
                    anytime::solve_model(model, eps_list, &reason.to_string(), &options, cost, &mut each)
                }
                Route::Chain { fallback, reason } => {
                    progress.phase(Phase::Chain);
                    // The route, not the chain solver, runs the LP when the chain cannot certify.
                    let lp = |problem: &Problem, why: &str, assembly: f64| {
                        solve_lp(problem, fallback, why, options, assembly)
                    };
                    chain::solve_model(model, eps_list, &reason.to_string(), options, &|| self.cost(), &lp, &mut each)
                }
                Route::Lp { backends, reason } => {
                    progress.phase(Phase::Assembling);
                    let assembling = progress.time("assembly");
                    let start = Instant::now();
                    let cost = self.cost()?;
                    if cost.iter().any(|c| !c.is_finite()) {
                        let fields = match model.spec.parameter.grid {
                            crate::model::spec::GridSpec::Explicit { .. } => "parameter.grid, output.grid",
                            _ => "parameter.lower, parameter.upper",
                        };
                        return Err(SolveError::NonFiniteCosts { fields: fields.to_string() });
                    }
                    if model.objective == Objective::Minimax {
                        let (n_obs, n_out) = cost.dim();
                        options.memory.check_dense(&[(model.theta.len(), n_obs * n_out)], 0)?;
                    }
                    let program = Program::for_model(model);
                    let neighbours = model.family.neighbours();
                    // Symmetry pays only on the plain program (the δ and minimax rows are not
                    // reduced), and only HiGHS solves the orbit LP: no search on a route without it.
                    let highs = backends.iter().any(|c| c.is_highs());
                    let symmetry =
                        (highs && program.is_plain()).then(|| self.shared.symmetry(model, &cost, &neighbours));
                    let cost_seconds = start.elapsed().as_secs_f64();
                    drop(assembling);
                    eps_list
                        .iter()
                        .enumerate()
                        .map(|(index, &eps)| {
                            // The time limit is the whole solve's: each ε gets an equal share of
                            // what is left.
                            let share = options
                                .limits
                                .remaining_after(started.elapsed())
                                .map(|left| left / (eps_list.len() - index) as f64);
                            let options =
                                SolveOptions { limits: Limits { seconds: share, ..options.limits }, ..options.clone() };
                            let t = Instant::now();
                            let assembling = options.progress.time("assembly");
                            let mut problem = Problem::try_with_program(
                                cost.clone(),
                                neighbours.clone(),
                                eps,
                                program.clone(),
                                options.memory,
                            )?;
                            problem.symmetry = symmetry.clone().flatten();
                            let assembly = cost_seconds + t.elapsed().as_secs_f64();
                            drop(assembling);
                            let s = solve_lp(&problem, backends, &reason.to_string(), &options, assembly)
                                .map_err(|e| infeasible_constraints(e, model, eps))?;
                            each(&s);
                            Ok(s)
                        })
                        .collect()
                }
            }
        };
        run().map_err(|e| match e {
            SolveError::TooLarge(size) => size.with_fields(fields()).into(),
            other => other,
        })
    }
}

/// The estimate of a [`SolvePlan`] made for it, which a caller that goes on to solve keeps
/// instead.
pub fn estimate(model: &Model, epsilons: &[f64], options: &SolveOptions) -> Result<Estimate> {
    Ok(SolvePlan::new(model, Some(epsilons), options.clone())?.estimate().clone())
}

/// The check of a list of privacy levels given for a solve (finite, > 0, at least one), as an
/// argument error naming `--eps`; [`super::solve_model`] makes it first, a caller may make it earlier.
pub(crate) fn check_epsilons(eps: &[f64]) -> Result<()> {
    crate::model::validate_epsilons(eps, crate::guard::Parameter::Eps.spelled()).map_err(|e| match e.kind {
        crate::model::ModelErrorKind::Invalid { field, problem } => SolveError::argument(field, problem),
        _ => e.into(),
    })
}

/// A target gap, when given, in (0, 1) (an argument error naming `gap`).
pub(crate) fn check_gap(gap: Option<f64>) -> Result<()> {
    match gap {
        Some(g) if !(g > 0.0 && g < 1.0) => {
            Err(SolveError::argument("gap", format!("must lie in (0, 1), a relative gap such as 1e-3 (got {g})")))
        }
        _ => Ok(()),
    }
}

/// On the LP and anytime routes, every ε within what the LP's coefficients represent faithfully.
pub(super) fn check_route_eps(route: &Route, epsilons: &[f64]) -> Result<()> {
    if let Route::Lp { .. } | Route::Anytime { .. } = route {
        epsilons.iter().try_for_each(|&e| crate::lp::check_lp_eps(e))?;
    }
    Ok(())
}

#[cfg(test)]
thread_local! {
    /// The ε of every solve this thread began, in order (tests count solves by it).
    static SOLVES: std::cell::RefCell<Vec<f64>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// The ε of the solves this thread began since the last call, in order.
#[cfg(test)]
pub(crate) fn take_solves() -> Vec<f64> {
    SOLVES.with(|s| std::mem::take(&mut *s.borrow_mut()))
}
