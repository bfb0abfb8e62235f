//! Active-set polish: from an interior point of the UBaPP LP to an exact vertex of it.
//!
//! An interior-point P meets the DP rows only to an absolute tolerance, while the optimal rows
//! decay like e^{−ε·distance} over |Y| (to e^{−100} at K = 1000, ε = 0.1): no tolerance resolves
//! them, so P and its dual bound both sit off the optimum (measured: 1.5e-6 relative below at
//! (K, M) = (1000, 300)). What the interior point does identify reliably is *which* DP rows are
//! tight: on the central path s·z ≈ const, and a tight row has multiplier z ≫ slack s while a
//! loose one has z ≪ s (at (K, M) = (100, 100), ε = 0.1 the two groups are ≥ 5 decades apart).
//! This is the standard route of an IPM followed by crossover; here the crossover is exact
//! because of the LP's structure.
//!
//! Each row k of P lives in its own DP cone (the rows only couple through the column sums). The
//! rows a tight DP row links, P\[k,a\] = e^ε P\[k,b\], fix ratios; within row k the tight rows split
//! the observations into blocks whose shape is fixed up to one scale x_B (a spanning tree of
//! tight rows per block). The *reduced LP* over the scales,
//!
//! ```text
//! min Σ_B cost(B) x_B   s.t.  Σ_{B ∋ (k,i)} s_i x_B = 1 for each i;
//!                             every DP row not on a tree, written in the x_B;   x ≥ 0,
//! ```
//!
//! has a few thousand columns where the LP has |Θ̃|·|Y|, and every point of it is a point of the
//! LP (tree rows hold with equality by construction). It is solved by dual simplex (a vertex,
//! exact duals). Its column duals λ and row multipliers then give multipliers for the tree rows
//! by one sweep from the leaves of each tree (the reduced cost of every non-root entry is set to
//! 0; a negative multiplier is clipped to 0 and marks the row as wrongly taken tight, released in
//! the next round). The full multiplier vector goes to [`crate::certify::exact_lagrangian_bound`]
//! unchanged, so the bound never trusts this module.
//!
//! Neighbour graphs with cycles (the multinomial's, the Poisson band) need two more steps: a
//! tree sweep cannot spread multipliers round a cycle, so an output row the sweep leaves with a
//! negative reduced cost gets its multipliers from its own pricing LP (min d·p over the DP cone
//! ∩ \[0, 1\]); and where that LP still finds a ray of negative reduced cost — the active set read
//! from the interior point was too narrow — the ray joins the next reduced LP as a column
//! (Dantzig–Wolfe column generation, at most [`MAX_ROUNDS`] rounds). A reduced LP that comes out
//! infeasible is retried once with only the rows the point also meets with equality; after that
//! the polish gives up and the backend's answer stands.
//!
//! Plain (Bayes, pure ε) programs only: the δ and minimax programs keep the backend's answer.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use crate::lp::Problem;

/// [`Problem::dp_row`] without walking the edge list each time.
pub(crate) struct DpRows {
    pub(super) edges: Vec<(usize, usize)>,
    pub(super) n_out: usize,
    /// adjacency\[i\] = (j, row of "P\[k,i\] ≤ e^ε P\[k,j\]", row of the reverse), both for k = 0
    /// (add k for output k).
    adjacency: Vec<Vec<(usize, usize, usize)>>,
}

impl DpRows {
    pub(crate) fn new(problem: &Problem) -> DpRows {
        let n_out = problem.n_outputs();
        let edges: Vec<(usize, usize)> = problem.neighbours.edges().collect();
        let mut adjacency: Vec<Vec<(usize, usize, usize)>> = vec![Vec::new(); problem.n_obs()];
        for (e, &(a, b)) in edges.iter().enumerate() {
            let (ab, ba) = (2 * e * n_out, (2 * e + 1) * n_out);
            adjacency[a].push((b, ab, ba));
            adjacency[b].push((a, ba, ab));
        }
        DpRows { edges, n_out, adjacency }
    }

    /// Rows ("P\[k,i\] ≤ e^ε P\[k,j\]", reverse) of output k for neighbours i, j.
    fn between(&self, k: usize, i: usize, j: usize) -> (usize, usize) {
        let &(_, i_le_j, j_le_i) = self.adjacency[i].iter().find(|t| t.0 == j).expect("i and j are neighbours");
        (i_le_j + k, j_le_i + k)
    }

    /// Breadth-first spanning forest of the neighbour graph from `root` (then from any observation
    /// not reached): the order visited and each observation's parent.
    fn spanning_forest(&self, root: usize) -> (Vec<usize>, Vec<Option<usize>>) {
        let n = self.adjacency.len();
        let mut parent = vec![None; n];
        let mut seen = vec![false; n];
        let mut order = Vec::with_capacity(n);
        for start in std::iter::once(root).chain(0..n) {
            if seen[start] {
                continue;
            }
            seen[start] = true;
            let mut head = order.len();
            order.push(start);
            while head < order.len() {
                let i = order[head];
                head += 1;
                for &(j, _, _) in &self.adjacency[i] {
                    if !seen[j] {
                        seen[j] = true;
                        parent[j] = Some(i);
                        order.push(j);
                    }
                }
            }
        }
        (order, parent)
    }

    /// The observations within graph distance `radius` of `centre`, with their distances, in
    /// breadth-first order (nearest first), at most `max_nodes` of them.
    pub(super) fn ball(&self, centre: usize, radius: usize, max_nodes: usize) -> Vec<(usize, usize)> {
        let mut dist = std::collections::HashMap::from([(centre, 0usize)]);
        let mut out = vec![(centre, 0)];
        let mut head = 0;
        while head < out.len() && out.len() < max_nodes {
            let (i, d) = out[head];
            head += 1;
            if d == radius {
                continue;
            }
            for &(j, _, _) in &self.adjacency[i] {
                if let std::collections::hash_map::Entry::Vacant(slot) = dist.entry(j) {
                    slot.insert(d + 1);
                    out.push((j, d + 1));
                }
            }
        }
        out.truncate(max_nodes);
        out
    }

    /// (k, lhs, rhs) of DP row r: P[k, lhs] ≤ e^ε P[k, rhs].
    fn get(&self, r: usize) -> (usize, usize, usize) {
        let (block, k) = (r / self.n_out, r % self.n_out);
        let (a, b) = self.edges[block / 2];
        if block % 2 == 0 {
            (k, a, b)
        } else {
            (k, b, a)
        }
    }
}

/// Rounds of "solve the reduced LP, release the tree rows whose multiplier came out negative, add
/// the rays of negative reduced cost" (the Poisson band at ε = 0.1 needs 15; chains 1).
const MAX_ROUNDS: usize = 40;

/// A tree row's multiplier below −RELEASE_TOLERANCE (scaled objective units, optimum ≥ 1) marks
/// it as not tight at the optimum.
const RELEASE_TOLERANCE: f64 = 1e-12;

/// Slack below which a DP row counts as met with equality by the backend's point (its feasibility
/// tolerance is 1e-10 on the scaled LP).
const PRIMAL_TIGHT: f64 = 1e-8;

/// An interior-point answer whose measured gap is already this small is left alone (see
/// [`super::strategy`]).
pub(crate) const GOOD_ENOUGH_GAP: f64 = 1e-11;

/// Why the polish declined; the backend's answer then stands, and `solver_detail` says why.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub(crate) enum PolishError {
    /// Only the plain program has the block structure the polish uses.
    #[error("only the plain Bayes, pure-ε program is polished")]
    NotPlain,
    /// The active set read from the point admits no feasible vertex, even after the retry.
    #[error("the reduced LP is infeasible")]
    ReducedInfeasible,
    /// The reduced LPs took longer than the polish may (a multiple of the backend's own time:
    /// a polish that cannot finish must not cost more than the answer it would refine).
    #[error("stopped after {seconds:.1} s, its time budget")]
    OverBudget {
        /// The budget.
        seconds: f64,
    },
    /// HiGHS stopped at the time limit on one reduced LP.
    #[cfg(feature = "highs")]
    #[error("the reduced LP reached its time limit")]
    TimeLimit,
    /// HiGHS failed on the reduced LP.
    #[cfg(feature = "highs")]
    #[error("HiGHS {stage} on the reduced LP: {status}")]
    ReducedLp {
        /// Where it failed.
        stage: &'static str,
        /// HiGHS's status.
        status: String,
    },
    /// HiGHS failed on a row's pricing LP.
    #[cfg(feature = "highs")]
    #[error("a row's pricing LP: {status}")]
    Pricing {
        /// HiGHS's status.
        status: String,
    },
    /// The reduced and pricing LPs need HiGHS.
    #[cfg(not(feature = "highs"))]
    #[error("the reduced LP is solved by HiGHS, which this build lacks")]
    NoHighs,
}

/// What [`polish`] produced.
#[derive(Debug, Clone)]
pub(crate) struct Polished {
    /// The polished point in the LP's variable order.
    pub x: Vec<f64>,
    /// Multipliers of every DP row (scaled objective units), for the Lagrangian bound.
    pub dp_multipliers: Vec<f64>,
    /// Columns (blocks) and rows of the last reduced LP.
    pub reduced_size: (usize, usize),
    /// Reduced LPs solved.
    pub rounds: usize,
}

/// Polish the approximate point `x` (variable order) with DP multipliers `mu` (scaled units),
/// within `budget` of wall-clock time: see the module docs.
pub(crate) fn polish(problem: &Problem, x: &[f64], mu: &[f64], budget: Duration) -> Result<Polished, PolishError> {
    if !problem.program.is_plain() {
        return Err(PolishError::NotPlain);
    }
    let start = Instant::now();
    let dp = DpRows::new(problem);
    let mut tight = classify_tight(problem, &dp, x, mu);
    let mut rounds = 0;
    let mut primal_checked = false;
    let mut rays: Vec<Ray> = Vec::new();
    loop {
        rounds += 1;
        let blocks = consistent_blocks(problem, &dp, x, &mut tight);
        let reduced = ReducedLp::build(problem, &dp, &blocks, &rays);
        let remaining = budget.saturating_sub(start.elapsed());
        if remaining.is_zero() {
            return Err(PolishError::OverBudget { seconds: budget.as_secs_f64() });
        }
        let Some((scales, lambda, row_mu)) = reduced.solve(remaining).map_err(|e| match e {
            #[cfg(feature = "highs")]
            PolishError::TimeLimit => PolishError::OverBudget { seconds: budget.as_secs_f64() },
            other => other,
        })?
        else {
            // Some row taken tight cuts every feasible point off (the multipliers said tight,
            // the point did not): keep only rows the point also meets with equality, once.
            if primal_checked {
                return Err(PolishError::ReducedInfeasible);
            }
            primal_checked = true;
            let primal = primal_tight(problem, &dp, x);
            tight.iter_mut().zip(primal).for_each(|(t, p)| *t &= p);
            continue;
        };
        let (dp_multipliers, released, new_rays) =
            tree_multipliers(problem, &dp, &blocks, &reduced, &scales, &lambda, &row_mu);
        if (released.is_empty() && new_rays.is_empty()) || rounds == MAX_ROUNDS {
            return Ok(Polished {
                x: blocks.expand(problem, &scales, &rays),
                dp_multipliers,
                reduced_size: (reduced.columns.len(), reduced.n_rows()),
                rounds,
            });
        }
        for r in released {
            tight[r] = false;
        }
        rays.extend(new_rays);
    }
}

/// A column of the reduced LP outside the blocks: row k of P proportional to an extreme ray p of
/// the DP cone (max 1) that a row's pricing LP found with negative reduced cost — a step of
/// Dantzig–Wolfe column generation where the active set read from the interior point is too
/// narrow (seen on the Poisson band, whose neighbour graph has cycles).
struct Ray {
    k: usize,
    p: Vec<f64>,
}

/// A DP row is taken as tight when its multiplier exceeds its slack (both from the backend):
/// strict complementarity separates the two by orders of magnitude (module docs).
fn classify_tight(problem: &Problem, dp: &DpRows, x: &[f64], mu: &[f64]) -> Vec<bool> {
    slacks(problem, dp, x).zip(mu).map(|(slack, &m)| m > slack.max(0.0)).collect()
}

/// e^ε P\[k,rhs\] − P\[k,lhs\] of every DP row at the point x, in row order.
fn slacks<'a>(problem: &'a Problem, dp: &'a DpRows, x: &'a [f64]) -> impl Iterator<Item = f64> + 'a {
    let e_eps = problem.eps.exp();
    (0..problem.n_dp_rows()).map(move |r| {
        let (k, lhs, rhs) = dp.get(r);
        e_eps * x[problem.var(k, rhs)] - x[problem.var(k, lhs)]
    })
}

/// Blocks whose shapes meet every DP row inside them: round a cycle of the neighbour graph the
/// tree rows can fix a shape that breaks a row off the tree (P\[k,a\] > e^ε P\[k,b\]); the tree
/// row into b is then released (b starts a block of its own) and the blocks are rebuilt.
fn consistent_blocks(problem: &Problem, dp: &DpRows, x: &[f64], tight: &mut [bool]) -> Blocks {
    let e_eps = problem.eps.exp();
    loop {
        let blocks = Blocks::build(problem, dp, x, tight);
        let mut split = false;
        for r in 0..problem.n_dp_rows() {
            let (k, lhs, rhs) = dp.get(r);
            let (vl, vr) = (problem.var(k, lhs), problem.var(k, rhs));
            if blocks.block_of[vl] != blocks.block_of[vr] {
                continue;
            }
            let (sl, sr) = (blocks.shape[vl], blocks.shape[vr]);
            if sl - e_eps * sr > 1e-12 * sl {
                if let Some((_, tree_row)) = blocks.parent[vr] {
                    tight[tree_row] = false;
                    split = true;
                }
            }
        }
        if !split {
            return blocks;
        }
    }
}

/// DP rows the point meets with equality, to PRIMAL_TIGHT (absolute, on probabilities).
fn primal_tight(problem: &Problem, dp: &DpRows, x: &[f64]) -> Vec<bool> {
    slacks(problem, dp, x).map(|slack| slack <= PRIMAL_TIGHT).collect()
}

/// Observations of one output row grouped into blocks of fixed shape (module docs).
struct Blocks {
    /// Block of each P variable (variable order).
    block_of: Vec<usize>,
    /// Shape factor s of each P variable: P = s·x_block.
    shape: Vec<f64>,
    /// Tree parent of each P variable as (parent observation, DP row linking them), None at roots.
    parent: Vec<Option<(usize, usize)>>,
    /// Per output k, its observations in breadth-first order from the roots.
    order: Vec<Vec<usize>>,
    /// Number of blocks.
    count: usize,
}

impl Blocks {
    fn build(problem: &Problem, dp: &DpRows, x: &[f64], tight: &[bool]) -> Blocks {
        let (n_obs, n_out) = (problem.n_obs(), problem.n_outputs());
        let e_eps = problem.eps.exp();
        let n_p = problem.n_p();
        let mut blocks = Blocks {
            block_of: vec![usize::MAX; n_p],
            shape: vec![0.0; n_p],
            parent: vec![None; n_p],
            order: Vec::with_capacity(n_out),
            count: 0,
        };
        let mut queue = VecDeque::new();
        for k in 0..n_out {
            // Roots in decreasing order of the backend's value, so each block's root is its largest entry.
            let mut by_value: Vec<usize> = (0..n_obs).collect();
            by_value.sort_by(|&i, &j| x[problem.var(k, j)].total_cmp(&x[problem.var(k, i)]));
            let mut order = Vec::with_capacity(n_obs);
            for root in by_value {
                let v = problem.var(k, root);
                if blocks.block_of[v] != usize::MAX {
                    continue;
                }
                let block = blocks.count;
                blocks.count += 1;
                blocks.block_of[v] = block;
                blocks.shape[v] = 1.0;
                queue.push_back(root);
                while let Some(i) = queue.pop_front() {
                    order.push(i);
                    let si = blocks.shape[problem.var(k, i)];
                    for &(j, i_le_j, j_le_i) in &dp.adjacency[i] {
                        let w = problem.var(k, j);
                        if blocks.block_of[w] != usize::MAX {
                            continue;
                        }
                        // P[k,j] = e^ε P[k,i] (row "P[k,j] ≤ e^ε P[k,i]" tight) or the reverse.
                        // Downhill first: where both are taken tight (a row at 0) the shape decays.
                        let (row, sj) = if tight[i_le_j + k] {
                            (i_le_j + k, si / e_eps)
                        } else if tight[j_le_i + k] {
                            (j_le_i + k, si * e_eps)
                        } else {
                            continue;
                        };
                        blocks.block_of[w] = block;
                        blocks.shape[w] = sj;
                        blocks.parent[w] = Some((i, row));
                        queue.push_back(j);
                    }
                }
            }
            blocks.order.push(order);
        }
        // Each block's largest shape factor 1, so the reduced LP's coefficients lie in (0, 1].
        let mut top = vec![0.0f64; blocks.len()];
        for (v, &b) in blocks.block_of.iter().enumerate() {
            top[b] = top[b].max(blocks.shape[v]);
        }
        for (v, &b) in blocks.block_of.iter().enumerate() {
            blocks.shape[v] /= top[b];
            // Below this a factor only feeds HiGHS subnormal numbers (e^{−ε·distance} underflows).
            if blocks.shape[v] < 1e-100 {
                blocks.shape[v] = 0.0;
            }
        }
        blocks
    }

    fn len(&self) -> usize {
        self.count
    }

    /// P in variable order from the block scales, then the ray weights.
    fn expand(&self, problem: &Problem, scales: &[f64], rays: &[Ray]) -> Vec<f64> {
        let mut x = vec![0.0; problem.n_vars()];
        for (v, xv) in x.iter_mut().enumerate().take(problem.n_p()) {
            *xv = self.shape[v] * scales[self.block_of[v]].max(0.0);
        }
        for (ray, &w) in rays.iter().zip(&scales[self.len()..]) {
            for (i, &p) in ray.p.iter().enumerate() {
                x[problem.var(ray.k, i)] += p * w.max(0.0);
            }
        }
        x
    }
}

/// Block scales x_B, column duals λ and the multipliers of the reduced LP's DP rows.
type Solved = (Vec<f64>, Vec<f64>, Vec<f64>);

/// The reduced LP over block scales (module docs), in compressed sparse column form.
#[cfg_attr(not(feature = "highs"), allow(dead_code))] // only HiGHS solves it
struct ReducedLp {
    costs: Vec<f64>,
    /// Column j's (row, coefficient) entries: rows 0..|Y| are the column sums, then `dp_rows`.
    columns: Vec<Vec<(usize, f64)>>,
    /// The DP rows (indices among the LP's DP rows) kept as inequality rows, in row order.
    dp_rows: Vec<usize>,
    /// What each of `dp_rows` was divided by.
    row_scale: Vec<f64>,
    n_obs: usize,
}

impl ReducedLp {
    fn build(problem: &Problem, dp: &DpRows, blocks: &Blocks, rays: &[Ray]) -> ReducedLp {
        let (n_obs, n_out) = (problem.n_obs(), problem.n_outputs());
        let e_eps = problem.eps.exp();
        let mut costs = vec![0.0; blocks.len()];
        let mut columns: Vec<Vec<(usize, f64)>> = vec![Vec::new(); blocks.len()];
        for i in 0..n_obs {
            for k in 0..n_out {
                let v = problem.var(k, i);
                let (b, s) = (blocks.block_of[v], blocks.shape[v]);
                costs[b] += s * problem.cost[[i, k]] / problem.scale;
                columns[b].push((i, s));
            }
        }
        let mut dp_rows = Vec::new();
        let mut row_scale = Vec::new();
        for r in 0..problem.n_dp_rows() {
            let (k, lhs, rhs) = dp.get(r);
            let (vl, vr) = (problem.var(k, lhs), problem.var(k, rhs));
            let on_tree = blocks.parent[vl] == Some((rhs, r)) || blocks.parent[vr] == Some((lhs, r));
            if on_tree {
                continue;
            }
            let (bl, br) = (blocks.block_of[vl], blocks.block_of[vr]);
            let (cl, cr) = (blocks.shape[vl], -e_eps * blocks.shape[vr]);
            let row = n_obs + dp_rows.len();
            // Rows are scaled to a largest coefficient of 1 (the multiplier scales back by 1/t).
            let t = cl.max(-cr);
            if bl == br {
                // Both ends in one block: the shape meets the row or forces the block to 0.
                if cl + cr <= 1e-12 * cl {
                    continue;
                }
                columns[bl].push((row, (cl + cr) / cl));
                row_scale.push(cl);
            } else {
                columns[bl].push((row, cl / t));
                columns[br].push((row, cr / t));
                row_scale.push(t);
            }
            dp_rows.push(r);
        }
        // Rays lie in the DP cone, so any non-negative mix with the blocks keeps every DP row.
        for ray in rays {
            costs.push(ray.p.iter().enumerate().map(|(i, p)| p * problem.cost[[i, ray.k]] / problem.scale).sum());
            columns.push(ray.p.iter().enumerate().filter(|(_, &p)| p > 0.0).map(|(i, &p)| (i, p)).collect());
        }
        ReducedLp { costs, columns, dp_rows, row_scale, n_obs }
    }

    fn n_rows(&self) -> usize {
        self.n_obs + self.dp_rows.len()
    }

    /// Dual simplex: (scales x_B, column duals λ, multipliers ≥ 0 of `dp_rows`), scaled units;
    /// `None` when the reduced LP is infeasible.
    #[cfg(feature = "highs")]
    fn solve(&self, time_limit: Duration) -> Result<Option<Solved>, PolishError> {
        use highs::{ColProblem, HighsModelStatus, Model, Sense};
        let err =
            |stage: &'static str, e: highs::HighsStatus| PolishError::ReducedLp { stage, status: format!("{e:?}") };
        // Options first, rows and columns after: HiGHS filters small coefficients as they arrive.
        let mut model = Model::try_new(ColProblem::default()).map_err(|e| err("setup", e))?;
        model.set_sense(Sense::Minimise);
        model.make_quiet();
        model.set_option("solver", "simplex");
        model.set_option("primal_feasibility_tolerance", 1e-10);
        model.set_option("dual_feasibility_tolerance", 1e-10);
        // Shape factors span e^{−ε·|Y|}; keep coefficients down to HiGHS's floor.
        model.set_option("small_matrix_value", 1e-12);
        model.set_option("time_limit", time_limit.as_secs_f64());
        let rows = (0..self.n_rows())
            .map(|r| if r < self.n_obs { model.try_add_row(1.0..=1.0, []) } else { model.try_add_row(..=0.0, []) })
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| err("adding a row", e))?;
        for (j, col) in self.columns.iter().enumerate() {
            model
                .try_add_column(self.costs[j], 0.0.., col.iter().map(|&(r, v)| (rows[r], v)))
                .map_err(|e| err("adding a column", e))?;
        }
        let solved = model.try_solve().map_err(|e| err("solving", e))?;
        if solved.status() == HighsModelStatus::Infeasible {
            return Ok(None);
        }
        if solved.status() == HighsModelStatus::ReachedTimeLimit {
            return Err(PolishError::TimeLimit);
        }
        if solved.status() != HighsModelStatus::Optimal {
            return Err(PolishError::ReducedLp { stage: "ended", status: format!("{:?}", solved.status()) });
        }
        let solution = solved.get_solution();
        let duals = solution.dual_rows();
        let lambda = duals[..self.n_obs].to_vec();
        // HiGHS row duals are ∂objective/∂rhs: ≤ 0 on binding ≤ rows.
        let mu = duals[self.n_obs..].iter().zip(&self.row_scale).map(|(d, t)| (-d).max(0.0) / t).collect();
        Ok(Some((solution.columns().to_vec(), lambda, mu)))
    }

    #[cfg(not(feature = "highs"))]
    fn solve(&self, _: Duration) -> Result<Option<Solved>, PolishError> {
        Err(PolishError::NoHighs)
    }
}

/// Multipliers of all DP rows (scaled units), from the reduced LP's duals λ and row multipliers:
/// - rows of the reduced LP keep theirs; rows the block shapes meet get 0;
/// - a tree row inside a block in use gets the value that zeroes the child's reduced cost
///   (complementary slackness: the child is positive), swept from the leaves; a negative value
///   is clipped to 0 and the row returned as released (it was wrongly taken tight);
/// - in a block the reduced LP left at 0 the child's reduced cost d only has to be ≥ 0: its signed
///   remainder moves to the parent through whichever of the edge's two rows carries it (a
///   surplus d at the cost of d·e^{−ε}, a deficit at e^ε·d). An output row left wholly at 0 is
///   swept this way along a spanning tree of the neighbour graph rooted at its largest entry; on
///   the chain this sweep is exactly the pricing recursion of [`super::chain`], so the row is
///   certified whenever no ray of the DP cone has negative reduced cost.
fn tree_multipliers(
    problem: &Problem,
    dp: &DpRows,
    blocks: &Blocks,
    reduced: &ReducedLp,
    scales: &[f64],
    lambda: &[f64],
    row_mu: &[f64],
) -> (Vec<f64>, Vec<usize>, Vec<Ray>) {
    let n_out = problem.n_outputs();
    let e_eps = problem.eps.exp();
    let zero = |k: usize, i: usize| scales[blocks.block_of[problem.var(k, i)]] <= 0.0;
    let mut mu = vec![0.0; problem.n_dp_rows()];
    for (&r, &m) in reduced.dp_rows.iter().zip(row_mu) {
        mu[r] = m;
    }
    // acc[v] = c/scale − λ_i + Σ_r μ_r A[r, v]: the reduced cost of P variable v so far.
    let mut acc: Vec<f64> =
        (0..problem.n_p()).map(|v| problem.cost[[v / n_out, v % n_out]] / problem.scale - lambda[v / n_out]).collect();
    for (&r, &m) in reduced.dp_rows.iter().zip(row_mu) {
        let (k, lhs, rhs) = dp.get(r);
        acc[problem.var(k, lhs)] += m;
        acc[problem.var(k, rhs)] -= e_eps * m;
    }
    // Move the signed remainder of child i to its parent u in row k (see the docs above).
    let carry = |mu: &mut Vec<f64>, acc: &mut Vec<f64>, k: usize, i: usize, u: usize| {
        let (i_le_u, u_le_i) = dp.between(k, i, u);
        let (vi, vu) = (problem.var(k, i), problem.var(k, u));
        let d = acc[vi];
        if d >= 0.0 {
            mu[u_le_i] += d / e_eps;
            acc[vu] += d / e_eps;
        } else {
            mu[i_le_u] -= d;
            acc[vu] += e_eps * d;
        }
        acc[vi] = 0.0;
    };
    let mut released = Vec::new();
    let mut rays = Vec::new();
    for k in 0..n_out {
        let mut row_released = Vec::new();
        if blocks.order[k].iter().all(|&i| zero(k, i)) {
            let (order, parent) = dp.spanning_forest(blocks.order[k][0]);
            for &i in order.iter().rev() {
                if let Some(u) = parent[i] {
                    carry(&mut mu, &mut acc, k, i, u);
                }
            }
        } else {
            for &i in blocks.order[k].iter().rev() {
                let v = problem.var(k, i);
                let Some((parent, r)) = blocks.parent[v] else { continue };
                if zero(k, i) {
                    carry(&mut mu, &mut acc, k, i, parent);
                    continue;
                }
                let (coef_child, coef_parent) = if dp.get(r).1 == i { (1.0, -e_eps) } else { (-e_eps, 1.0) };
                let m = -acc[v] / coef_child;
                if m < -RELEASE_TOLERANCE {
                    row_released.push(r);
                }
                let m = m.max(0.0);
                mu[r] = m;
                acc[v] += coef_child * m;
                acc[problem.var(k, parent)] += coef_parent * m;
            }
        }
        // A sweep along trees cannot spread multipliers round a cycle of the neighbour graph: where
        // it leaves a negative reduced cost, the row's multipliers come from its own pricing LP.
        let worst = (0..problem.n_obs()).map(|i| acc[problem.var(k, i)]).fold(f64::INFINITY, f64::min);
        if worst < -RELEASE_TOLERANCE {
            let d: Vec<f64> = (0..problem.n_obs()).map(|i| problem.cost[[i, k]] / problem.scale - lambda[i]).collect();
            if let Ok((row_mu, shortfall, ray)) = row_certificate(problem, dp, k, &d) {
                for (r, m) in row_mu {
                    mu[r] = m;
                }
                if shortfall <= RELEASE_TOLERANCE {
                    row_released.clear();
                } else {
                    rays.push(Ray { k, p: ray });
                }
            }
        }
        released.extend(row_released);
    }
    (mu, released, rays)
}

/// Multipliers of output k's DP rows making its reduced costs d + Aᵀμ ≥ −σ with the least total
/// shortfall Σσ (0 when no ray of the DP cone has negative reduced cost): the dual of the row's
/// pricing LP min{d·p : p in the DP cone, 0 ≤ p ≤ 1}, by dual simplex. Also returns that LP's
/// solution p (the LP's row duals), a ray with d·p = −Σσ.
#[cfg(feature = "highs")]
pub(crate) fn row_certificate(
    problem: &Problem,
    dp: &DpRows,
    k: usize,
    d: &[f64],
) -> Result<RowCertificate, PolishError> {
    use highs::{ColProblem, HighsModelStatus, Sense};
    let e_eps = problem.eps.exp();
    // The LP is homogeneous in d: solved for d/|d|_∞ and scaled back, its absolute tolerance
    // (1e-10) becomes relative to the largest reduced cost, not to the LP's unit.
    let unit = d.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let unit = if unit > 0.0 && unit.is_finite() { unit } else { 1.0 };
    let mut pb = ColProblem::new();
    let rows: Vec<_> = d.iter().map(|&di| pb.add_row(-di / unit..)).collect();
    let mut dp_rows = Vec::with_capacity(2 * dp.edges.len());
    for (e, &(a, b)) in dp.edges.iter().enumerate() {
        for (r, lhs, rhs) in [(2 * e * dp.n_out + k, a, b), ((2 * e + 1) * dp.n_out + k, b, a)] {
            pb.add_column(0.0, 0.0.., [(rows[lhs], 1.0), (rows[rhs], -e_eps)]);
            dp_rows.push(r);
        }
    }
    for &row in &rows {
        pb.add_column(1.0, 0.0.., [(row, 1.0)]);
    }
    // Its constraints are the certificate's reduced costs: met to 1e-10 of the largest, as the LPs'
    // own rows.
    // HiGHS's dual simplex sometimes ends `Unknown` at that tolerance (15 of 45 rows of a
    // 3-category poll, K = 60, ε = 1); the primal simplex then solves about half of them, and
    // HiGHS's default tolerance (1e-7) the rest. Any multipliers are valid: the bound is
    // recomputed from them by the assessment, so a looser LP only loosens the bound.
    let mut solved = None;
    for (strategy, tolerance) in [(1, 1e-10), (4, 1e-10), (1, 1e-7)] {
        let mut model =
            pb.clone().try_optimise(Sense::Minimise).map_err(|e| PolishError::Pricing { status: format!("{e:?}") })?;
        model.make_quiet();
        model.set_option("solver", "simplex");
        model.set_option("simplex_strategy", strategy);
        model.set_option("primal_feasibility_tolerance", tolerance);
        model.set_option("dual_feasibility_tolerance", tolerance);
        let s = model.try_solve().map_err(|e| PolishError::Pricing { status: format!("{e:?}") })?;
        let done = s.status() == HighsModelStatus::Optimal;
        solved = Some(s);
        if done {
            break;
        }
    }
    let solved = solved.expect("at least one attempt");
    if solved.status() != HighsModelStatus::Optimal {
        return Err(PolishError::Pricing { status: format!("{:?}", solved.status()) });
    }
    let solution = solved.get_solution();
    let values = solution.columns();
    let shortfall = values[dp_rows.len()..].iter().sum::<f64>() * unit;
    let ray = solution.dual_rows().iter().map(|y| y.clamp(0.0, 1.0)).collect();
    Ok((dp_rows.into_iter().zip(values.iter().map(|m| m.max(0.0) * unit)).collect(), shortfall, ray))
}

/// Multipliers (DP row, μ) of one output row, the total shortfall Σσ, and the pricing ray.
pub(crate) type RowCertificate = (Vec<(usize, f64)>, f64, Vec<f64>);

#[cfg(not(feature = "highs"))]
pub(crate) fn row_certificate(_: &Problem, _: &DpRows, _: usize, _: &[f64]) -> Result<RowCertificate, PolishError> {
    Err(PolishError::NoHighs)
}
