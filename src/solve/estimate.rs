//! Answer before working: the LP's size, the route a solve takes, the memory it needs and a rough
//! time, from the model's sizes alone (no cost matrix, no neighbour list, no LP), so that a model
//! too large for the machine is refused in well under a second, naming the model's own fields.

use serde::Serialize;

use super::chain;
use super::shared::Shared;
use super::{LpSize, Route, SolveOptions, SolverChoice};
use crate::lp::{size_fields, Problem, SizeError};
use crate::model::{Family, Model, Neighbours};

/// What a solve of one ε will take, before it starts.
#[derive(Debug, Clone, Serialize)]
pub struct Estimate {
    /// The LP's size (variables |Θ̃|·|Y|, rows |Y| + 2·|E|·|Θ̃|).
    #[serde(flatten)]
    pub size: LpSize,
    /// Neighbour pairs |E| of the observation space.
    pub edges: u128,
    /// The route's solvers, in order (e.g. `chain`, or `highs, clarabel`).
    pub solvers: Vec<String>,
    /// Why this route ([`Route::reason`]).
    pub reason: String,
    /// How the route runs: `compact chain (no |Θ̃| × |Y| matrix)`, `dense chain` or `LP`.
    pub path: &'static str,
    /// The LP route solves by output generation (the outputs the optimum uses, the others
    /// priced).
    pub output_generation: bool,
    /// By output generation: the outputs the first restricted LP holds (the mean over the ε),
    /// which the time estimate is scaled to; `None` where the LP was too large to find them
    /// before solving (the time is then the whole LP's, an upper bound).
    pub restricted_outputs: Option<usize>,
    /// Bytes the solve allocates at its peak: the large arrays and, on the LP route, the
    /// solver's factorisation of the whole LP (what output generation falls back to); checked
    /// against measured peaks in `tests/memory_estimate.rs`.
    pub memory_bytes: u128,
    /// Bytes the budget allows.
    pub available_bytes: u64,
    /// Whether it fits.
    pub fits: bool,
    /// A rough wall-clock time per ε on a 2-core machine (seconds; within a factor of ~5 on the
    /// models measured in docs/benchmarks.md, and no more than an order of magnitude otherwise).
    pub seconds_per_eps: f64,
    /// The model fields that set the size.
    pub fields: String,
    /// Seconds one build of the cost matrix takes where its likelihood is costly (a clipped
    /// Poisson sum's convolutions; 0 elsewhere): what the summary and the artifact's checks
    /// repeat after the solve, which a time limit on the whole command reserves.
    pub cost_matrix_seconds: f64,
    /// Seconds the written artifact's check as read back takes (its parse, the weights decoded,
    /// the exact certificate over every DP row): what `--out` adds after the solve.
    pub artifact_seconds: f64,
    /// The route whose peak `memory_bytes` is: the first solver (e.g. `block-ipm`), or the path
    /// (chain, anytime). A refusal names it.
    pub priced: String,
    /// The route's later backends the solve will not start, and why: a whole LP that would not
    /// fit the budget (e.g. `highs-ipm (its whole LP 7.7 GiB, over the memory budget)`), or, after
    /// a near-optimal answer, an estimate far beyond the time a fallback may take. The solve says
    /// so in its detail.
    pub not_started: Vec<String>,
}

impl Estimate {
    /// The refusal a solve gives when it does not fit.
    pub fn size_error(&self) -> SizeError {
        SizeError {
            origin: None,
            needed_bytes: self.memory_bytes,
            available_bytes: self.available_bytes,
            fields: self.fields.clone().into(),
            route: Some(self.priced.as_str().into()),
        }
    }
}

/// Undirected neighbour pairs |E| of the model's observation space, by formula (no list built).
pub(crate) fn edge_count(family: &Family) -> u128 {
    match family {
        Family::Binomial { trials } => *trials as u128,
        Family::Poisson { records, cap } => {
            // Pairs 1 ≤ |y − y'| ≤ c on {0..Nc}: Σ_{d=1..c} (n − d).
            let n = (*records * *cap) as u128 + 1;
            (1..=(*cap as u128).min(n.saturating_sub(1))).map(|d| n - d).sum()
        }
        Family::Multinomial { categories, records } => {
            // Each edge is a composition z of K − 1 plus an unordered pair {a, b}: z + e_a ~ z + e_b.
            let z = crate::model::composition_count(records.saturating_sub(1), *categories);
            let d = *categories as u128;
            z as u128 * (d * (d - 1) / 2)
        }
        Family::Table { edges, .. } => edges.len() as u128,
    }
}

/// Seconds an interior point on the model's LP takes on a 2-core machine, by family:
///
/// - **Lattices and other graphs** (multinomial, table): the normal equations of a 2-D lattice of
///   |Y| observations with |Θ̃| outputs at each node factor through separators of about
///   |Θ̃|·√|Y| variables, so the work grows as |Θ̃|³·|Y|^1.5 in theory; measured, |Y|^1.87 (the
///   larger factors leave the cache). The orbit LP of a group of order |G| divides it by about
///   |G|^2.25. Least squares on log time over the multinomials d = 3, resolution 10, K = 20, 40
///   (Dirichlet(1, 2, 3) and symmetric), 60 and 100 (symmetric) and the poll of 60 at resolution
///   7 (docs/benchmarks.md): every one within 2x.
/// - **Bands** (clipped Poisson): nonzeros^1.82, fitted to 60 records (1.6 s) and 200 (14.7 s).
/// - **Chains on the LP route** (minimax, (ε, δ)): nonzeros^1.2, fitted to (1000, 300) at 16.5 s.
///
/// By output generation the LP shrinks to the outputs the first restricted LP holds, a share s of
/// |Θ̃| (found by [`restricted_shares`]); the work is scaled by s^2.5 on graphs and s^1.82 on bands
/// (s³ would be the separator argument's; the rounds and the pricing of the other outputs cost
/// the rest; the optima measured used exactly the first set's outputs, e.g. 29 of 66 at K = 20,
/// Dirichlet(1, 2, 3)).
fn lp_seconds(relation: Relation, lp: &LpShape, group: f64, share: f64) -> f64 {
    let (n_obs, n_out, nnz) = (lp.n_obs as f64, lp.n_out as f64, lp.nnz as f64);
    match relation {
        Relation::Graph => 0.1 + 7.0e-9 * n_out.powi(3) * n_obs.powf(1.87) / group.powf(2.25) * share.powf(2.5),
        Relation::Band => 1.63 * (nnz / 1.4e5).powf(1.82) * share.powf(1.82),
        Relation::Chain => 16.5 * (nnz / 1.5e6).powf(1.2),
    }
}

/// The neighbour relations [`lp_seconds`] is fitted to.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Relation {
    /// An explicit graph (the multinomial's lattice, a table's edges).
    Graph,
    /// A band wider than 1 (clipped Poisson sums).
    Band,
    /// The path y ~ y ± 1.
    Chain,
}

impl Relation {
    fn of_family(family: &Family) -> Relation {
        match family {
            Family::Multinomial { .. } | Family::Table { .. } => Relation::Graph,
            Family::Poisson { cap: 1, .. } | Family::Binomial { .. } => Relation::Chain,
            Family::Poisson { .. } => Relation::Band,
        }
    }

    fn of_neighbours(neighbours: &Neighbours) -> Relation {
        match neighbours {
            Neighbours::Graph { .. } => Relation::Graph,
            Neighbours::Band { .. } => Relation::Band,
            Neighbours::Chain { .. } => Relation::Chain,
        }
    }
}

/// Seconds `choice` is expected to take on the whole of `problem` (its orbit LP where HiGHS has
/// one), by the estimate's own formulas: what a fallback backend is priced at before it starts
/// ([`super::lp_route`]).
pub(crate) fn whole_lp_seconds(problem: &Problem, choice: SolverChoice) -> f64 {
    let group = problem.symmetry.as_ref().map_or(1.0, |s| s.group_order as f64);
    let relation = Relation::of_neighbours(&problem.neighbours);
    let edges = problem.neighbours.edge_count() as f64;
    let iterations = block_ipm_iterations(relation, problem.n_obs() as f64, edges, &[problem.eps]);
    backend_seconds(choice, relation, &LpShape::of(problem), (group, edges), iterations)
}

/// The least time a fallback backend gets after a near-optimal answer ([`super::lp_route`]).
const FALLBACK_MIN_SECONDS: f64 = 60.0;

/// A fallback after a near-optimal answer is not started where its estimate
/// ([`whole_lp_seconds`]) exceeds the time it may take ([`fallback_seconds`]) by more
/// than this factor. The estimates are within 2× on the lattices they are fitted to, but about
/// 18× above the measured time on a ring with chords (|Y| = 300, 60 outputs: 65 s estimated, 3.5
/// s at most): only a fallback that no error of the estimate would bring within its time is
/// skipped. The poll of 100 (|Y| = 5151, 66 outputs): HiGHS's interior point is estimated at
/// 4.9 h against 13 min, and was stopped after 13 min of building its first basis.
pub(crate) const FALLBACK_ESTIMATE_MARGIN: f64 = 10.0;

/// The seconds a fallback after a near-optimal answer may take, `elapsed` seconds into the route.
pub(crate) fn fallback_seconds(elapsed: f64) -> f64 {
    (2.0 * elapsed).max(FALLBACK_MIN_SECONDS)
}

/// Whether a fallback expected to take `expected` seconds is not started with `cap` to take.
pub(crate) fn priced_out(expected: f64, cap: f64) -> bool {
    expected > FALLBACK_ESTIMATE_MARGIN * cap
}

/// Seconds `choice` is expected to take on the whole of an LP of shape `lp` whose symmetry group
/// has order `group` (HiGHS solves the orbit LP; the others the whole LP).
fn backend_seconds(
    choice: SolverChoice,
    relation: Relation,
    lp: &LpShape,
    (group, edges): (f64, f64),
    iterations: f64,
) -> f64 {
    if choice == SolverChoice::BlockIpm {
        return block_ipm_seconds(relation, iterations, lp.n_obs as f64, lp.n_out as f64, edges);
    }
    lp_seconds(relation, lp, if choice.is_highs() { group } else { 1.0 }, 1.0)
}

/// Seconds the block interior point ([`super::structured`]) takes on `n_out` outputs (the
/// restricted LP's under output generation) and `n_obs` observations on a 2-core machine:
/// `iterations` ([`block_ipm_iterations`]), each
///
/// - forming the |Y| × |Y| Schur complement's lower triangle from every output's factor solved
///   against the identity (|Θ̃|·|Y|·nnz(L) multiply-adds at most, nnz(L) ≈ 15·|Y|·√(|Y|/861) on the
///   multinomial's lattice: 13 000 at |Y| = 861, the fill growing with the separators);
/// - factorising it densely (|Y|³/3);
/// - 5–16 Newton solves (predictor, corrector, centrality correctors, refinement), each one solve
///   per output with its factor (|Θ̃|·nnz(L)), and the vector work around them (|Θ̃|·|Y|).
///
/// The constants are one iteration's parts as measured on the multinomial d = 3, resolution 10,
/// Dirichlet(1, 2, 3) at K = 60 (|Y| = 1891, 55 outputs: forming 0.42 s, factorising 0.09 s,
/// solving about 0.6 s) and K = 100 (|Y| = 5151, 66 outputs: 3.7 s, 1.4 s, about 1.2 s), with a
/// per-unit-vector term for the forming's fixed costs; checked against the whole solves at K = 20,
/// 40 and 60 and the 2-D grid table model (docs/benchmarks.md).
fn block_ipm_seconds(relation: Relation, iterations: f64, n_obs: f64, n_out: f64, edges: f64) -> f64 {
    let band = (relation != Relation::Graph).then(|| super::structured::band_width(n_obs, edges));
    0.3 + iterations * super::structured::block_ipm_iteration_seconds(n_obs, n_out, band)
}

/// The iterations the block interior point takes on `relation` with `n_obs` observations and
/// `edges` neighbour pairs, averaged over `epsilons`.
///
/// - On the multinomial's lattice 27–45 (d = 3, resolution 10, K = 20…100): 40.
/// - On a band of half-width w = |E|/|Y| (a clipped Poisson sum's cap; 1 on a chain) the count
///   grows with the width and falls with ε: 18–196 over 46 sums of 40 and 80 records, caps 2–8,
///   ε = 0.3, 0.5 and 1, 30 grid points and both losses, and 32–187 over eight of 60 to 500
///   records (docs/benchmarks.md). HiGHS's IPX took 113 iterations and HiPO 109 on one of them
///   (cap 8, ε = 0.3) where this interior point took 117: the count is the LP's, not the
///   solver's. Least squares on the logs of all 54 gives the exponents of
///   3.4·w^0.8·|Y|^0.25·ε^−0.35, and the constant puts the largest over- and underestimate at
///   the same ratio: within 0.58–1.77× of every one (18 on a binomial chain of 300 trials that
///   took 27).
pub(crate) fn block_ipm_iterations(relation: Relation, n_obs: f64, edges: f64, epsilons: &[f64]) -> f64 {
    match relation {
        Relation::Graph => 40.0,
        Relation::Band | Relation::Chain => {
            let width = super::structured::band_width(n_obs, edges);
            let per_eps = |eps: f64| 3.4 * width.powf(0.8) * n_obs.powf(0.25) * eps.max(1e-3).powf(-0.35);
            epsilons.iter().map(|&eps| per_eps(eps)).sum::<f64>() / epsilons.len().max(1) as f64
        }
    }
}

/// The largest LP whose first restricted output set [`restricted_shares`] computes for the
/// estimate (variables), and the most work it may take doing so (multiply-adds: about a second here).
const SHARE_MAX_VARIABLES: u128 = 2_000_000;
const SHARE_MAX_WORK: f64 = 3e8;

/// The share of the outputs output generation starts from, one per ε (the outputs of the
/// geometric mechanism + Bayes remap, closed under the symmetries: [`super::outputs`]); on the
/// measured models the optimum used exactly those. Computed from the plan's cost matrix (built
/// once, for every ε and the solve after) where that is cheap (at most [`SHARE_MAX_VARIABLES`] variables and
/// [`SHARE_MAX_WORK`]); empty otherwise (the whole LP).
fn restricted_shares(model: &Model, epsilons: &[f64], options: &SolveOptions, shared: &Shared) -> Vec<f64> {
    let (n_obs, n_out) = (model.family.observation_count(), model.outputs.len());
    let epsilons: Vec<f64> = epsilons.iter().copied().filter(|&e| crate::lp::check_lp_eps(e).is_ok()).collect();
    if epsilons.is_empty()
        || n_obs as u128 * n_out as u128 > SHARE_MAX_VARIABLES
        || super::outputs::initial_work(n_obs, n_out) > SHARE_MAX_WORK
    {
        return Vec::new();
    }
    // Under a time limit the estimate is part of the solve's time (the limit covers the whole
    // command): the shares are found only where that costs at most a twentieth of the limit.
    if let Some(limit) = options.limits.seconds {
        let seconds = likelihood_seconds(model)
            + super::outputs::initial_seconds(n_obs, n_out) * epsilons.len() as f64
            + 2e-8 * (n_obs * n_out) as f64;
        if seconds > SHARE_LIMIT_FRACTION * limit {
            return Vec::new();
        }
    }
    let Ok(cost) = shared.cost(model, options.memory) else { return Vec::new() };
    let neighbours = model.family.neighbours();
    let symmetry = (symmetry_order(model) > 1.0).then(|| shared.symmetry(model, &cost, &neighbours)).flatten();
    epsilons
        .iter()
        .map(|&eps| {
            let mut problem = crate::lp::Problem::new(cost.clone(), neighbours.clone(), eps);
            problem.symmetry = symmetry.clone();
            super::outputs::initial_count(&problem) as f64 / n_out as f64
        })
        .collect()
}

/// The share of a time limit the estimate may spend finding the restricted shares.
const SHARE_LIMIT_FRACTION: f64 = 0.05;

/// Seconds the likelihood takes where it is not O(|Y|) per grid point: a clipped Poisson sum is an
/// N-fold convolution, N²c(c+1)/2 multiply-adds per θ (model::family::clipped_poisson_sum_pmf).
fn likelihood_seconds(model: &Model) -> f64 {
    match model.family {
        Family::Poisson { records, cap } if model.exact.is_none() => {
            let (n, c) = (records as f64, cap as f64);
            2e-9 * model.theta.len() as f64 * n * n * c * (c + 1.0) / 2.0
        }
        _ => 0.0,
    }
}

/// Seconds per weight that writing a dense artifact and checking it as read back take on a
/// 2-core machine: measured 0.43 µs on the poll of 300 (3.0 million weights, 1.3 s), 0.40 µs on
/// the 4-way poll of 100 (14.9 million, 6.0 s) and 0.47 µs on the poll of 1000 (33.1 million,
/// 15.5 s).
const ARTIFACT_SECONDS_PER_WEIGHT: f64 = 5e-7;

/// Bytes each worker thread may hold besides the route's arrays (see [`estimate_route`]).
const THREAD_BYTES: u128 = 4 << 20;

/// The sizes of an LP that its memory depends on.
pub(crate) struct LpShape {
    /// |Y|.
    pub n_obs: u128,
    /// |Θ̃|.
    pub n_out: u128,
    /// Variables (the P entries and any others of the program).
    pub n_vars: u128,
    /// Rows besides the |Y| column sums.
    pub n_dp: u128,
    /// Nonzeros of the constraint matrix.
    pub nnz: u128,
}

impl LpShape {
    /// The shape of a built LP (its P entries as the variables), as the route prices a fallback.
    pub(crate) fn of(problem: &Problem) -> LpShape {
        let n_obs = problem.n_obs() as u128;
        LpShape {
            n_obs,
            n_out: problem.n_outputs() as u128,
            n_vars: problem.n_p() as u128,
            n_dp: problem.n_rows() as u128 - n_obs,
            nnz: problem.a.nnz() as u128,
        }
    }
}

/// Bytes a backend takes on an LP: its arrays (CSC and vectors) with a factor 3 for the
/// solver's copies, as `Problem` checks, and the interior point's factorisation
/// ([`factorisation_bytes`]).
pub(crate) fn lp_bytes(lp: &LpShape, on_graph: bool, group: u128, choice: SolverChoice) -> u128 {
    3 * (lp.nnz * 16 + (2 * lp.n_vars + 2 * lp.n_dp + lp.n_obs) * 32)
        + factorisation_bytes(lp.n_obs, lp.n_out, on_graph, group, choice)
}

/// Bytes `choice` takes on the whole LP of shape `lp` (`edges` neighbour pairs; `group` the
/// order of the symmetry HiGHS's orbit LP would use): the block interior point by its own
/// formula ([`super::structured::memory_bytes`]) beside the LP's arrays, every other backend by
/// [`lp_bytes`] — what the route's price ([`estimate_route`]) and the check before a fallback
/// is started (`solve_lp`) both use.
pub(crate) fn backend_bytes(choice: SolverChoice, lp: &LpShape, on_graph: bool, group: u128, edges: u128) -> u128 {
    if choice == SolverChoice::BlockIpm {
        let arrays = lp.nnz * 16 + (2 * lp.n_vars + 2 * lp.n_dp + lp.n_obs) * 32;
        let n = |v: u128| v.min(usize::MAX as u128) as usize;
        let band = (!on_graph).then(|| super::structured::band_width(lp.n_obs as f64, edges as f64));
        return arrays + super::structured::memory_bytes(n(lp.n_obs), n(lp.n_out), n(2 * edges), band);
    }
    let group = if choice.is_highs() { group } else { 1 };
    lp_bytes(lp, on_graph, group, choice)
}

/// Bytes an interior point's factorisation of the LP takes: each observation's column-sum row
/// couples its |Θ̃| outputs, so the factor holds about one dense |Θ̃| × |Θ̃| block per
/// observation (per observation orbit on the orbit LP of a group of order `group`), filled in
/// along the neighbour graph; bytes per block entry fitted to measured peaks (see
/// [`estimate_route`]).
///
/// On a chain or band the outputs beyond the first 30 add to the factor linearly, not
/// quadratically (the LP is a grid of outputs × observations whose separators are one
/// observation's outputs at most): a binomial of 300 trials on a 300-point grid peaked at 185 MB
/// (Clarabel) and 287 MB (HiGHS's interior point), where |Y|·|Θ̃|² at 200 bytes said 5.4 GB.
/// Clarabel's outputs beyond 30 cost 120 bytes, not 200 (measured peaks less the process's
/// baseline: 174 MB at 300 trials × 300 points, 138 MB at 300 × 100, 38 MB on the clipped
/// Poisson sum of 60 records, cap 3; HiGHS's interior point 274, 90 and 71 MB), so each
/// backend's estimate stays within 3× of its peak (docs/benchmarks.md).
pub(crate) fn factorisation_bytes(n_obs: u128, n_out: u128, on_graph: bool, group: u128, choice: SolverChoice) -> u128 {
    let blocks = n_obs.div_ceil(group.max(1));
    if on_graph {
        return 340 * blocks * n_out * n_out;
    }
    let beyond = if choice.is_clarabel() { 120 } else { 200 };
    let first = n_out.min(30);
    200 * blocks * first * first + beyond * blocks * first * (n_out - first)
}

/// The order of the symmetry group the LP will likely have, from the spec alone: a multinomial
/// with an exchangeable prior (uniform, or a Dirichlet with equal weights), the parameter grid as
/// outputs and a loss that does not single out a category is invariant under the d! permutations
/// of the categories, which `lp::Symmetry::find` then finds on the costs. 1 otherwise.
fn symmetry_order(model: &Model) -> f64 {
    use crate::model::spec::{LossSpec, PriorSpec};
    // The orbit LP is solved for the plain program only (the δ and minimax rows are not reduced).
    let Family::Multinomial { categories, .. } = model.family else { return 1.0 };
    if !model.is_plain_program() {
        return 1.0;
    }
    let spec = model.spec();
    let exchangeable = match &spec.parameter.prior {
        PriorSpec::Uniform => true,
        PriorSpec::Dirichlet { alpha } => alpha.windows(2).all(|w| w[0] == w[1]),
        _ => false,
    };
    let same_outputs = model.outputs.len() == model.theta.len();
    let symmetric_loss = !matches!(spec.loss, LossSpec::Matrix { .. });
    if exchangeable && same_outputs && symmetric_loss {
        (1..=categories as u64).product::<u64>() as f64
    } else {
        1.0
    }
}

/// The estimate for `model` at `epsilons` under `options` (the route [`Route::for_model`] picks).
/// Where output generation applies and the LP is small enough, the time is the restricted LP's
/// (the outputs it starts from, found from the cost matrix: up to about a second); else the
/// whole LP's, from the sizes alone.
/// The one decision of the route a solve takes and its price: [`Route::for_model`]'s route for
/// `options.solver`; under `auto`, where that exact route's estimate does not fit the memory
/// budget — or, without a time limit, exceeds the default time budget — and the program is the
/// plain one, the anytime route instead, which answers at any size with a certified gap (where
/// it fits memory and its own time). [`super::SolvePlan::new`] makes it, once per solve; the cost
/// matrix it builds (to find the outputs output generation starts from) stays in `shared`.
pub(super) fn plan_route(
    model: &Model,
    options: &SolveOptions,
    epsilons: Option<&[f64]>,
    shared: &Shared,
) -> super::error::Result<(Route, Estimate)> {
    let route = Route::for_model(model, options.solver)?;
    let may_move =
        options.solver == SolverChoice::Auto && model.is_plain_program() && !matches!(route, Route::Chain { .. });
    if !may_move {
        return Ok((route.clone(), estimate_route(model, &route, options, epsilons, shared)));
    }
    // The memory from the sizes alone first: a model too large for the exact route is not
    // priced further (the refined time needs its cost matrix).
    let sized = estimate_route(model, &route, options, None, shared);
    let n_eps = epsilons.map_or(model.epsilons.len(), <[f64]>::len).max(1) as f64;
    let reason = if sized.fits {
        let planned = if epsilons.is_some() { estimate_route(model, &route, options, epsilons, shared) } else { sized };
        // An exact solve estimated beyond the time budget (`--max-seconds`, else the default)
        // would be refused, or stopped with little more than a constant release: the anytime
        // route answers instead, with a certified gap that closes as it runs.
        let budget = options.limits.seconds.unwrap_or(super::DEFAULT_TIME_BUDGET_SECONDS);
        let too_slow = planned.seconds_per_eps * n_eps > budget;
        if !too_slow {
            return Ok((route, planned));
        }
        "auto: the exact LP route's time estimate exceeds the time budget (the time limit, else 10 minutes), so the anytime route (certified gap)"
    } else {
        "auto: the exact LP route does not fit the memory budget, so the anytime route (certified gap)"
    };
    // The anytime route only where it fits memory and answers within the budget itself (a
    // clipped Poisson sum's likelihood alone can take longer): else the exact route's estimate
    // stands, and its refusal.
    let anytime = Route::Anytime { reason: super::route::Reason::Auto(reason) };
    let estimate = estimate_route(model, &anytime, options, epsilons, shared);
    let budget = options.limits.seconds.unwrap_or(super::DEFAULT_TIME_BUDGET_SECONDS);
    if !estimate.fits || estimate.seconds_per_eps * n_eps > budget * 1.01 {
        return Ok((route.clone(), estimate_route(model, &route, options, epsilons, shared)));
    }
    Ok((anytime, estimate))
}

/// [`estimate`] on `route`; `epsilons` `None`: from the sizes alone (the whole LP's time), as the
/// memory check before a solve needs.
fn estimate_route(
    model: &Model,
    route: &Route,
    options: &SolveOptions,
    epsilons: Option<&[f64]>,
    shared: &Shared,
) -> Estimate {
    let output_generation = matches!(route, Route::Lp { .. })
        && options.output_generation
        && super::outputs::applies_to(model.is_plain_program(), model.outputs.len());
    // The share of outputs the restricted LP starts from, averaged over the ε.
    let shares: Vec<f64> = match epsilons {
        Some(eps) if output_generation => restricted_shares(model, eps, options, shared),
        _ => Vec::new(),
    };
    let share = if shares.is_empty() { 1.0 } else { shares.iter().sum::<f64>() / shares.len() as f64 };
    let n_obs = model.family.observation_count() as u128;
    let n_out = model.outputs.len() as u128;
    let m = model.theta.len() as u128;
    let edges = edge_count(&model.family);
    let n_vars = n_obs * n_out;
    let n_dp = 2 * edges * n_out;
    let size = LpSize {
        outputs: n_out as usize,
        observations: n_obs as usize,
        variables: n_vars.min(usize::MAX as u128) as usize,
        rows: (n_obs + n_dp + crate::lp::constraint_row_count(model.constraints(), n_obs, n_out))
            .min(usize::MAX as u128) as usize,
    };
    // Every worker thread's stack and allocator arena, and the buffers its tasks hold at once
    // (rayon's tasks on a graph or band: pricing, the remap's walks, the anytime passes): about
    // 4 MiB a thread, measured as the spread of repeated peaks (tests/memory_estimate.rs).
    let threads = THREAD_BYTES * rayon::current_num_threads() as u128;
    let mut not_started = Vec::new();
    let (path, memory_bytes, seconds, solvers) = match route {
        Route::Anytime { .. } => {
            let bytes = super::anytime::memory_bytes(n_obs, n_out, m, edges);
            let n_eps = epsilons.map_or(model.epsilons.len(), <[f64]>::len).max(1) as f64;
            let budget = options.limits.seconds.unwrap_or(super::DEFAULT_TIME_BUDGET_SECONDS) / n_eps;
            // The route runs until its gap or the budget, the likelihood included (the limit
            // covers the whole command): the budget is what it may take, or the likelihood alone
            // where that is longer (added below).
            let secs = (budget - likelihood_seconds(model)).max(0.0);
            (
                "first-order iterations (matrix-free, certified gap)",
                bytes,
                secs,
                vec![super::anytime::SOLVER_NAME.to_string()],
            )
        }
        Route::Chain { .. } if chain::takes_compact(model, options.memory) => {
            // Moments (M walks of ~80σ pmf steps), then the certificate's pass over every (k, z).
            let sigma = (n_obs as f64 / 4.0).sqrt().max(1.0);
            let secs = 3e-9 * m as f64 * 80.0 * sigma + 5e-9 * n_vars as f64;
            ("compact chain (no |Θ̃| × |Y| matrix)", chain::compact_bytes(model), secs, vec!["chain".to_string()])
        }
        Route::Chain { .. } => {
            let secs = 1e-9 * (n_obs * m * n_out) as f64 + 2e-8 * n_vars as f64;
            ("dense chain", chain::dense_bytes(model), secs, vec!["chain".to_string()])
        }
        Route::Lp { backends, .. } => {
            let mut nnz = n_vars + 2 * n_dp;
            if model.delta > 0.0 {
                nnz += 2 * n_dp;
            }
            if model.objective == crate::model::Objective::Minimax {
                nnz += m * n_vars + m;
            }
            let cost = if model.exact.is_some() { n_obs * n_out } else { n_obs * m + m * n_out + n_obs * n_out };
            let on_graph = matches!(model.family, Family::Multinomial { .. } | Family::Table { .. });
            // The LP (CSC and vectors) with a factor 3 for the solver's copies, as Problem checks,
            // and the interior point's factorisation, which dominates: each observation's
            // column-sum row couples its |Θ̃| outputs, so the factor holds about one dense
            // |Θ̃| × |Θ̃| block per observation, filled in along the neighbour graph. Bytes per
            // |Y|·|Θ̃|² fitted to measured peaks (VmHWM) of whole-LP solves: 130–180 on a band
            // ((ε, δ) binomial, M = 30, K = 200…3000), 170–330 on a graph (multinomial d = 3,
            // K = 10…60); the estimate takes the top of each range. Output generation usually
            // needs far less, but falls back to the whole LP when it cannot certify: this is
            // the route's peak either way.
            //
            // HiGHS solves the orbit LP of a symmetric model: one column-sum row per observation
            // orbit, so the factor shrinks by the group's order (poll of 60, resolution 12: see
            // docs/benchmarks.md). A later backend whose whole LP does not fit is not started
            // (`solve_lp`), so the route's peak is its first backend's.
            //
            // The block interior point runs first on an asymmetric plain program on a graph; on
            // a symmetric one HiGHS's orbit LP goes first (`structured::order_for`).
            //
            // Each later backend is priced the same way: one that does not fit is named in
            // `not_started` (the solve skips it with a notice), never the reason to refuse.
            let backends = super::structured::order_for(symmetry_order(model) > 1.0, backends);
            let shape = LpShape { n_obs, n_out, n_vars, n_dp, nnz };
            let group_order = symmetry_order(model);
            let group = group_order as u128;
            let relation = Relation::of_family(&model.family);
            let bytes_of = |c: SolverChoice| 8 * cost + backend_bytes(c, &shape, on_graph, group, edges) + threads;
            let first = backends.first().copied().unwrap_or(SolverChoice::Auto);
            let iterations =
                block_ipm_iterations(relation, n_obs as f64, edges as f64, epsilons.unwrap_or(&model.epsilons));
            let secs = if first == SolverChoice::BlockIpm {
                block_ipm_seconds(relation, iterations, n_obs as f64, n_out as f64 * share, edges as f64)
            } else {
                lp_seconds(relation, &shape, group_order, share)
            };
            // And a fallback whose time after a near-optimal answer would be far beyond what it
            // may take ([`priced_out`]), the first backend's estimate as the time spent.
            let cap = fallback_seconds(secs);
            not_started = backends
                .iter()
                .skip(1)
                .filter_map(|&c| {
                    let bytes = bytes_of(c);
                    let expected = backend_seconds(c, relation, &shape, (group_order, edges as f64), iterations);
                    if bytes > options.memory.in_bytes() as u128 {
                        Some(format!(
                            "{c} (its whole LP {:.1} GiB, over the memory budget)",
                            bytes as f64 / 2f64.powi(30)
                        ))
                    } else if priced_out(expected, cap) {
                        Some(format!(
                            "{c} (estimated at {}, far beyond the time a fallback may take)",
                            super::seconds_in_words(expected)
                        ))
                    } else {
                        None
                    }
                })
                .collect();
            ("LP", bytes_of(first) - threads, secs, backends.iter().map(|b| b.to_string()).collect())
        }
    };
    // The likelihood itself, where it is not O(|Y|) per grid point.
    let seconds = seconds + likelihood_seconds(model);
    let memory_bytes = memory_bytes + threads;
    let available = options.memory.in_bytes();
    Estimate {
        output_generation,
        restricted_outputs: (!shares.is_empty()).then(|| (share * n_out as f64).round() as usize),
        size,
        edges,
        reason: route.reason().to_string(),
        path,
        memory_bytes,
        available_bytes: available,
        fits: memory_bytes <= available as u128,
        seconds_per_eps: seconds,
        fields: size_fields(model),
        cost_matrix_seconds: likelihood_seconds(model),
        artifact_seconds: ARTIFACT_SECONDS_PER_WEIGHT
            * model.family.observation_count() as f64
            * model.outputs.len() as f64,
        priced: solvers.first().map_or(path, String::as_str).to_string(),
        not_started,
        solvers,
    }
}
