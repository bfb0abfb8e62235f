//! An exact structured solver for chain neighbours (Y = {0..n−1}, y ~ y ± 1), with a dual
//! certificate that does not trust the solver.
//!
//! 1. [`geometric`]: the truncated geometric mechanism ([`super::compact::kernel`], Ghosh, Roughgarden &
//!    Sundararajan 2009) followed by the Bayes-optimal deterministic remap, in O(|Θ̃|·|Y|) time and
//!    O(|Y|) extra memory, with the column duals λ that complementary slackness assigns it.
//! 2. [`certificate`]: every row of P lies in the DP cone whose extreme rays are zig-zags; an
//!    O(|Y|) dynamic programme per output finds the most negative reduced cost over all 2^{|Y|−1}
//!    rays, so Σλ (shifted if needed) is a rigorous lower bound on the LP optimum.
//! 3. [`colgen`]: when geometric + remap is not optimal (arbitrary costs), column generation over
//!    (output, ray) columns with the same DP as pricing, certified the same way.
//! 4. [`super::compact`]: the compact form (geometric(ε), then a remap table) with an exact integer
//!    sampler, so big problems never build a |Θ̃| × |Y| matrix.
//!
//! [`solve_model`] returns ordinary [`Solution`]s (dense P) whose `dual_bound`/`relative_gap` are
//! the certificate's; when the gap cannot be certified to [`GAP_TOLERANCE`] it falls back to the
//! general LP and says so in `solver_detail`. [`solve_model_compact`] handles large squared-loss
//! binomial models in O(|Θ̃| + |Y|) memory.

pub(crate) mod certificate;
#[cfg(feature = "clarabel")]
pub(crate) mod colgen;
pub(crate) mod costs;
pub(crate) mod geometric;

use std::sync::Arc;
use std::time::Instant;

use ndarray::Array2;
use serde::Serialize;

pub(crate) use certificate::certify;
pub use certificate::DualCertificate;
pub(crate) use costs::{ChainCosts, DenseCosts, SquaredMoments};

use super::assess::{Checks, Residuals};
use super::compact::{GeometricRemap, Kernel};
use super::{LpSize, LpSolver, RawSolution, Solution, SolveError, SolveOptions, SolverChoice, Status};
use crate::lp::{MemoryBudget, Problem};
use crate::model::{Family, Loss, Model, Neighbours};
use crate::solve::error::Result;

/// Largest certified relative gap (bayes_risk − bound)/bayes_risk we call optimal.
pub(crate) const GAP_TOLERANCE: f64 = 1e-9;

/// Master solves column generation may use before giving up.
pub(crate) const COLGEN_MAX_ITER: usize = 200;

/// Seconds spent in each stage of the geometric solver.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct ChainTimings {
    /// Remap (kernel sums and argmins).
    pub remap: f64,
    /// Duals from complementary slackness.
    pub duals: f64,
    /// The certificate's DP over all outputs.
    pub certificate: f64,
}

/// Geometric + remap with its certificate, in compact form.
#[derive(Debug, Clone)]
pub struct ChainSolution {
    /// The mechanism: geometric(ε), then `remap`.
    pub mechanism: GeometricRemap,
    /// Σ_z b_z: the Bayes risk of the mechanism.
    pub bayes_risk: f64,
    /// Column duals λ.
    pub lambda: Vec<f64>,
    /// What λ proves.
    pub certificate: DualCertificate,
    /// (bayes_risk − certificate.bound)/bayes_risk.
    pub relative_gap: f64,
    /// Stage timings.
    pub timings: ChainTimings,
}

impl ChainSolution {
    /// True when the certified relative gap is at most `GAP_TOLERANCE`.
    pub fn certified(&self) -> bool {
        self.relative_gap <= GAP_TOLERANCE
    }
}

fn relative_gap(value: f64, bound: f64) -> f64 {
    (value - bound) / value.abs().max(f64::MIN_POSITIVE)
}

/// Geometric mechanism + optimal remap for costs on a chain, certified.
pub(crate) fn solve_geometric(costs: &dyn ChainCosts, eps: f64) -> ChainSolution {
    let n = costs.n_obs();
    let kernel = Kernel::new(n, eps);
    let t = Instant::now();
    let r = geometric::optimal_remap(costs, &kernel);
    let remap_s = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let (raw, magnitude) = geometric::slackness_duals(costs, &kernel, &r.remap, &r.values);
    // Lower each λ_z by a margin at its rounding scale, so that rounding does not turn exactly
    // tight rays into tiny violations; the certificate checks the result as it would any λ.
    // Always 1024 ulps of |λ_z| (≈ 2e-13 of Σλ); also 16 ulps of the run-boundary terms, whose
    // rounding G⁻¹ amplifies by up to (1 − α)⁻², either at once when that is cheap or as a second
    // try when the first needs more than two escalations of the shift (the better bound is kept).
    let with_margin = |boundary: f64| -> Vec<f64> {
        raw.iter()
            .zip(&magnitude)
            .map(|(&l, &m)| l - 1024.0 * f64::EPSILON * l.abs() - boundary * f64::EPSILON * (m - l.abs()).max(0.0))
            .collect()
    };
    let duals_s = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let bayes_risk = certificate::sum_lower(&r.values).max(r.values.iter().sum());
    // If the boundary margin is cheap (< 1e-11 of the risk), use it straight away: one pass.
    let boundary_cost: f64 =
        raw.iter().zip(&magnitude).map(|(l, m)| 16.0 * f64::EPSILON * (m - l.abs()).max(0.0)).sum();
    let cheap = boundary_cost <= 1e-2 * GAP_TOLERANCE * bayes_risk.abs();
    let mut lambda = with_margin(if cheap { 16.0 } else { 0.0 });
    let mut certificate = certificate::certify_rounds(costs, eps, &lambda, 2);
    if !cheap && relative_gap(bayes_risk, certificate.bound) > 1e-2 * GAP_TOLERANCE {
        let second = with_margin(16.0);
        let c2 = certify(costs, eps, &second);
        if c2.bound > certificate.bound {
            (lambda, certificate) = (second, c2);
        }
    } else if cheap && !certificate.shift.is_finite() {
        certificate = certify(costs, eps, &lambda);
    }
    let cert_s = t.elapsed().as_secs_f64();
    ChainSolution {
        mechanism: GeometricRemap { eps, remap: r.remap, n_outputs: costs.n_outputs() },
        bayes_risk,
        relative_gap: relative_gap(bayes_risk, certificate.bound),
        lambda,
        certificate,
        timings: ChainTimings { remap: remap_s, duals: duals_s, certificate: cert_s },
    }
}

/// A chain solve with a dense P (moderate sizes).
#[derive(Debug, Clone)]
#[cfg_attr(not(test), allow(dead_code))] // λ is read by the tests
pub(crate) struct DenseChain {
    /// P (|Θ̃| × |Y|).
    pub p: Array2<f64>,
    /// Σ c\[k,i\] P\[k,i\] of this P.
    pub bayes_risk: f64,
    /// The certified lower bound on the LP optimum.
    pub dual_bound: f64,
    /// The column duals λ it was certified from.
    pub lambda: Vec<f64>,
    /// (bayes_risk − dual_bound)/bayes_risk.
    pub relative_gap: f64,
    /// True when relative_gap ≤ [`GAP_TOLERANCE`].
    pub certified: bool,
    /// `chain` (geometric + remap) or `chain-colgen`.
    pub method: &'static str,
    /// How it went, in words.
    pub detail: String,
}

/// Solve the chain LP for the dense cost matrix C\[i, k\] = c\[k, i\] of [`crate::lp::cost_matrix`]: geometric +
/// remap, then column generation if that is not certified.
pub(crate) fn solve_dense(cost: &Array2<f64>, eps: f64) -> DenseChain {
    let costs = DenseCosts::new(cost);
    let g = solve_geometric(&costs, eps);
    let risk_of = |p: &Array2<f64>| (costs.rows() * p).sum();
    let p = g.mechanism.to_dense();
    let bayes_risk = risk_of(&p);
    let gap = relative_gap(bayes_risk, g.certificate.bound);
    let geometric_detail = format!("geometric + remap, certified relative gap {gap:.1e}");
    if gap <= GAP_TOLERANCE {
        return DenseChain {
            p,
            bayes_risk,
            dual_bound: g.certificate.bound,
            lambda: g.lambda.clone(),
            relative_gap: gap,
            certified: true,
            method: "chain",
            detail: geometric_detail,
        };
    }
    let fallback = DenseChain {
        p,
        bayes_risk,
        dual_bound: g.certificate.bound,
        lambda: g.lambda.clone(),
        relative_gap: gap,
        certified: false,
        method: "chain",
        detail: geometric_detail.clone(),
    };
    #[cfg(feature = "clarabel")]
    {
        match colgen::column_generation(&costs, eps, &g.mechanism, GAP_TOLERANCE, COLGEN_MAX_ITER) {
            Ok(cg) => {
                let bayes_risk = risk_of(&cg.p);
                let gap = relative_gap(bayes_risk, cg.certificate.bound);
                DenseChain {
                    p: cg.p,
                    bayes_risk,
                    dual_bound: cg.certificate.bound,
                    lambda: cg.lambda,
                    relative_gap: gap,
                    certified: gap <= GAP_TOLERANCE,
                    method: "chain-colgen",
                    detail: format!(
                        "{geometric_detail} (not optimal); column generation: {}, {} columns, certified relative gap {gap:.1e}",
                        cg.detail, cg.columns
                    ),
                }
            }
            Err(e) => DenseChain { detail: format!("{geometric_detail}; column generation failed: {e}"), ..fallback },
        }
    }
    #[cfg(not(feature = "clarabel"))]
    {
        DenseChain { detail: format!("{geometric_detail}; column generation needs the `clarabel` feature"), ..fallback }
    }
}

/// The chain solver behind the [`LpSolver`] trait (it reads only the problem's costs, ε and
/// neighbours; the certificate's bound is in the detail text since the trait carries DP-row
/// multipliers). Prefer [`solve_model`], which reports the bound in the [`Solution`].
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct ChainSolver;

impl LpSolver for ChainSolver {
    fn name(&self) -> SolverChoice {
        SolverChoice::Chain
    }

    fn solve(&self, problem: &Problem) -> std::result::Result<RawSolution, SolveError> {
        if !problem.neighbours.is_chain() {
            return Err(SolveError::NotApplicable {
                choice: SolverChoice::Chain,
                requirement: "needs the chain neighbour relation y ~ y ± 1",
                model: "this LP".into(),
            });
        }
        let d = solve_dense(&problem.cost, problem.eps);
        let (n_obs, n_out) = (problem.n_obs(), problem.n_outputs());
        let mut x = vec![0.0; n_obs * n_out];
        for ((k, i), &v) in d.p.indexed_iter() {
            x[i * n_out + k] = v;
        }
        Ok(RawSolution {
            x,
            dp_multipliers: None,
            status: if d.certified { Status::Optimal } else { Status::NearOptimal },
            detail: format!("{}; dual bound {:e}", d.detail, d.dual_bound),
        })
    }
}

/// Solve a chain model for each ε with the chain solver, falling back to the LP backends in
/// `fallback` order (and saying so in `solver_detail`) when the optimum cannot be certified.
///
/// A model whose costs have the compact squared-loss form ([`compact_applies`]) is solved without
/// any |Θ̃| × |Y| matrix when it is large (more than [`COMPACT_ABOVE`] entries of P) or the dense
/// route would not fit in `options.memory`; each [`Solution`] then carries its
/// [`GeometricRemap`] ([`Solution::compact`]). The dense route asks `cost` for the cost matrix
/// (the plan's, built once) after pricing itself. Every solution is passed to `each` as soon as it
/// is solved.
pub(crate) fn solve_model(
    model: &Model,
    eps_list: &[f64],
    reason: &str,
    options: &SolveOptions,
    cost: &dyn Fn() -> std::result::Result<Arc<Array2<f64>>, crate::lp::SizeError>,
    fallback: &LpFallback<'_>,
    each: &mut dyn FnMut(&Solution),
) -> Result<Vec<Solution>> {
    if takes_compact(model, options.memory) {
        return solve_compact(model, eps_list, reason, options, each);
    }
    let neighbours = model.family.neighbours();
    let start = Instant::now();
    // Priced in full before anything is allocated: the cost matrix's pipeline, its transposed
    // copy and P.
    options.memory.check_dense(&[], dense_bytes(model))?;
    let cost = cost()?;
    let assembly = start.elapsed().as_secs_f64();
    eps_list
        .iter()
        .map(|&eps| {
            let s = solve_one(&cost, &neighbours, Timed { eps, assembly }, reason, options, fallback)?;
            each(&s);
            Ok(s)
        })
        .collect()
}

/// Above this many entries of P (|Θ̃|·|Y|), a chain model with compact costs ([`compact_applies`])
/// is solved in compact form: no |Θ̃| × |Y| matrix, O(|Θ̃| + |Y|) memory.
pub(crate) const COMPACT_ABOVE: usize = 500_000;

/// Up to this many entries (32 MiB of P), a compact solution also materialises its dense P (for
/// evaluation and the dense artifact's consumers); above it `Solution::p` is empty.
pub(crate) const DENSE_P_LIMIT: usize = 1 << 22;

/// True when the model's costs have the compact form the chain solver can use without a cost
/// matrix: a binomial observation, squared loss, a one-dimensional parameter grid (not the exact
/// conjugate costs).
pub(crate) fn compact_applies(model: &Model) -> bool {
    matches!((&model.family, &model.loss), (Family::Binomial { .. }, Loss::Squared))
        && model.theta.dim() == 1
        && model.exact.is_none()
}

/// Whether [`solve_model`] takes the compact route for this model and budget.
pub(crate) fn takes_compact(model: &Model, memory: MemoryBudget) -> bool {
    let entries = model.outputs.len() as u128 * model.family.observation_count() as u128;
    compact_applies(model) && (entries > COMPACT_ABOVE as u128 || memory.check_dense(&[], dense_bytes(model)).is_err())
}

/// Bytes the dense chain route allocates: Q (|Y| × M), L (M × |Θ̃|), C (|Y| × |Θ̃|), C's transposed
/// copy and P.
pub(crate) fn dense_bytes(model: &Model) -> u128 {
    let (n_obs, m, n_out) =
        (model.family.observation_count() as u128, model.theta.len() as u128, model.outputs.len() as u128);
    let q = if model.exact.is_some() { 0 } else { n_obs * m + m * n_out };
    8 * (q + 3 * n_obs * n_out)
}

/// Bytes the compact route allocates: a few dozen vectors of length |Y| (moments, smoothed
/// moments, remap, values, duals and the certificate's work) and a few of the grids' length.
pub(crate) fn compact_bytes(model: &Model) -> u128 {
    let (n_obs, m, n_out) =
        (model.family.observation_count() as u128, model.theta.len() as u128, model.outputs.len() as u128);
    8 * (32 * n_obs + 8 * (m + n_out))
}

/// The compact route of [`solve_model`]: moments once, then geometric + remap and its certificate
/// per ε. There is no LP to fall back on at these sizes: an uncertified answer is reported
/// `near-optimal` with its certified gap.
fn solve_compact(
    model: &Model,
    eps_list: &[f64],
    reason: &str,
    options: &SolveOptions,
    each: &mut dyn FnMut(&Solution),
) -> Result<Vec<Solution>> {
    options.memory.check_dense(&[], compact_bytes(model))?;
    let (n_obs, n_out) = (model.family.observation_count(), model.outputs.len());
    let start = Instant::now();
    let costs = squared_moments(model).expect("compact_applies was checked");
    let assembly = start.elapsed().as_secs_f64();
    let materialise = n_obs.saturating_mul(n_out) <= DENSE_P_LIMIT
        && options.memory.check_dense(&[(n_out, n_obs)], compact_bytes(model)).is_ok();
    let neighbours = model.family.neighbours();
    let mut out = Vec::with_capacity(eps_list.len());
    for &eps in eps_list {
        let t = Instant::now();
        let g = solve_geometric(&costs, eps);
        let (p, residuals) = if materialise {
            let p = g.mechanism.to_dense_by_runs(eps);
            let r = Residuals::of(&p, &neighbours, eps);
            (p, r)
        } else {
            // By construction: every column of the truncated geometric kernel is a distribution
            // and its DP rows hold with equality (what is released is certified exactly by the
            // compact artifact, `ubapp verify`).
            (Array2::zeros((0, 0)), Residuals { max_dp_violation: 0.0, max_column_error: 0.0, min_entry: 0.0 })
        };
        let seconds = t.elapsed().as_secs_f64();
        let confirmed = g.certified() && residuals.is_private() && residuals.is_distribution();
        let runs = g.mechanism.runs().len();
        let s = Solution {
            eps,
            bayes_risk: g.bayes_risk,
            solver: "chain".to_string(),
            status: if confirmed { Status::Optimal } else { Status::NearOptimal },
            solver_detail: format!(
                "{reason}; compact geometric + remap ({runs} runs; squared-loss moments, no |Θ̃| × |Y| matrix), \
                 certified relative gap {:.1e} (remap {:.3} s, certificate {:.3} s)",
                g.relative_gap, g.timings.remap, g.timings.certificate
            ),
            seconds,
            assembly_seconds: assembly,
            size: LpSize::chain(n_obs, n_out),
            checks: Checks::of_exact(residuals, g.bayes_risk, g.certificate.bound, g.relative_gap),
            p,
            release: None,
            compact: Some(g.mechanism),
        };
        each(&s);
        out.push(s);
    }
    Ok(out)
}

/// What the route does with an LP the chain solver could not certify: `(problem, why, assembly
/// seconds)` → the LP's solution (the route's own LP order; the chain solver does not choose it).
pub(crate) type LpFallback<'a> = dyn Fn(&Problem, &str, f64) -> Result<Solution> + 'a;

/// One ε and the seconds already spent assembling its costs.
#[derive(Clone, Copy)]
struct Timed {
    eps: f64,
    assembly: f64,
}

fn solve_one(
    cost: &Arc<Array2<f64>>,
    neighbours: &Neighbours,
    Timed { eps, assembly }: Timed,
    reason: &str,
    options: &SolveOptions,
    fallback: &LpFallback<'_>,
) -> Result<Solution> {
    let (n_obs, n_out) = cost.dim();
    let t = Instant::now();
    let d = solve_dense(cost, eps);
    let seconds = t.elapsed().as_secs_f64();
    if !d.certified {
        let t = Instant::now();
        let problem = Problem::try_new(cost.clone(), neighbours.clone(), eps, options.memory)?;
        let why = format!("{reason}; chain solver could not certify its optimum ({}); fell back to the LP", d.detail);
        return fallback(&problem, &why, assembly + t.elapsed().as_secs_f64());
    }
    let residuals = Residuals::of(&d.p, neighbours, eps);
    let confirmed = residuals.is_private() && residuals.is_distribution();
    Ok(Solution {
        eps,
        bayes_risk: d.bayes_risk,
        solver: d.method.to_string(),
        status: if confirmed { Status::Optimal } else { Status::NearOptimal },
        solver_detail: format!("{reason}; {}", d.detail),
        seconds,
        assembly_seconds: assembly,
        size: LpSize::chain(n_obs, n_out),
        checks: Checks::of_exact(residuals, d.bayes_risk, d.dual_bound, d.relative_gap),
        p: d.p,
        release: None,
        compact: None,
    })
}

/// The O(|Y|)-memory squared-loss costs of a binomial model with a 1-D parameter grid (not exact
/// conjugate costs), if it is one.
pub(crate) fn squared_moments(model: &Model) -> Option<SquaredMoments> {
    match &model.family {
        Family::Binomial { trials } if compact_applies(model) => {
            Some(SquaredMoments::binomial(*trials, &model.theta.values(), &model.prior, model.outputs.values()))
        }
        _ => None,
    }
}

/// Geometric + remap for a large squared-loss binomial model without any |Θ̃| × |Y| matrix;
/// returns the compact mechanism, its risk and its certificate, and the seconds spent computing
/// the moments (model assembly).
pub fn solve_model_compact(model: &Model, eps: f64) -> Result<(ChainSolution, f64)> {
    if !(eps.is_finite() && eps > 0.0) {
        return Err(SolveError::argument(
            crate::guard::Parameter::Eps,
            format!("must be a finite number > 0 (got {eps})"),
        ));
    }
    let t = Instant::now();
    let Some(costs) = squared_moments(model) else {
        return Err(SolveError::NotApplicable {
            choice: SolverChoice::Chain,
            requirement: "in compact form needs a binomial observation and squared loss",
            model: model.name().to_string(),
        });
    };
    let assembly = t.elapsed().as_secs_f64();
    Ok((solve_geometric(&costs, eps), assembly))
}
