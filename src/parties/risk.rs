//! The aggregate's risk: exactly, by summing over the histogram of the M releases (their
//! sufficient statistic, since every party uses the same mechanism), or by stratified Monte Carlo
//! with its standard error when that sum is too long.
//!
//! The histogram n (n_k parties released k, Σ n_k = M) has Pr(n | θ) = M!/Π n_k! Π r_θ(k)^{n_k};
//! there are C(M + R − 1, R − 1) of them for R possible releases, against R^M release tuples, so
//! the exact route reaches many more parties than a sum over tuples. The risk at θ is
//! Σ_n Pr(n | θ) L(θ, a(n)); the Bayes risk weights the grid's risks by the prior π (like the LP's
//! objective), the true risk weights risks at quadrature nodes by the continuous prior.

use ndarray::Array2;
use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};
use statrs::function::gamma::ln_gamma;

use super::{Aggregate, Aggregator, LocalMechanism};
use crate::eval::{prior_quadrature, Risk, RiskMethod};
use crate::model::{composition_count, Family, Loss, Model};

/// How far the exact route may go, and the Monte-Carlo fallback's size.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RiskOptions {
    /// Largest work (histograms × operations per histogram) of the exact sum.
    pub exact_budget: f64,
    /// Monte-Carlo draws per θ node when the exact sum is too long.
    pub draws: usize,
    /// Seed of the Monte-Carlo draws.
    pub seed: u64,
    /// Force Monte Carlo (to cross-check the exact route).
    pub force_monte_carlo: bool,
}

impl Default for RiskOptions {
    fn default() -> Self {
        RiskOptions { exact_budget: 3e8, draws: 400, seed: 0, force_monte_carlo: false }
    }
}

/// The risks of a party mechanism aggregated over M parties.
#[derive(Debug, Clone, PartialEq)]
pub struct PartyRisk {
    /// Σ_j π_j risk(θ_j) under the model's discretised prior.
    pub bayes: Risk,
    /// ∫ risk(θ) π(θ) dθ under the continuous prior (one-dimensional families with squared,
    /// absolute or 0–1 loss; `None` otherwise).
    pub truth: Option<Risk>,
    /// risk(θ_j) at each grid point.
    pub grid: Vec<f64>,
    /// The number of release histograms summed (exact) or draws per node (Monte Carlo).
    pub size: f64,
}

/// θ nodes the risk is evaluated at: the grid (first), then the quadrature nodes of the true risk.
struct Nodes {
    points: Array2<f64>,
    /// ln r_θ(k) for used release u at node e: `log_lik[u][e]`.
    log_lik: Vec<Vec<f64>>,
    grid: usize,
    /// Weights of the true risk on nodes grid.. (empty: no true risk).
    true_weights: Vec<f64>,
}

impl Nodes {
    fn new(model: &Model, mech: &LocalMechanism, agg: &Aggregator) -> Nodes {
        let grid = model.theta().len();
        let with_truth = model.family().parameter_dim() == 1
            && !matches!(model.family(), Family::Table { .. })
            && !matches!(model.loss(), Loss::Matrix { .. })
            && model.exact().is_none();
        let quad = if with_truth { prior_quadrature(model, 24) } else { Vec::new() };
        let dim = model.theta().dim();
        let n = grid + quad.len();
        let mut points = Array2::zeros((n, dim));
        let mut log_lik: Vec<Vec<f64>> = agg
            .log_lik
            .iter()
            .map(|row| {
                let mut v = row.clone();
                v.resize(n, 0.0);
                v
            })
            .collect();
        for j in 0..grid {
            points.row_mut(j).assign(&model.theta().point(j));
        }
        for (e, &(t, _)) in quad.iter().enumerate() {
            points[[grid + e, 0]] = t;
            let q = model.family().likelihood(ndarray::aview1(&[t]));
            for (u, &k) in agg.used.iter().enumerate() {
                let r: f64 = mech.p.row(k).iter().zip(&q).map(|(a, b)| a * b).sum();
                log_lik[u][grid + e] = r.ln();
            }
        }
        Nodes { points, log_lik, grid, true_weights: quad.into_iter().map(|(_, w)| w).collect() }
    }

    fn len(&self) -> usize {
        self.points.nrows()
    }
}

/// The risks of `mech` (one party's mechanism for `model`, whose family describes one party's
/// records) aggregated by `rule` over `parties` parties.
pub fn party_risk(
    model: &Model,
    mech: &LocalMechanism,
    rule: Aggregate,
    parties: u64,
    opts: &RiskOptions,
) -> PartyRisk {
    let agg = Aggregator::new(model, mech, rule);
    let nodes = Nodes::new(model, mech, &agg);
    let histograms = composition_count(parties, agg.n_used());
    let action_cost = match rule {
        Aggregate::GridAction => (agg.grid_len() * model.outputs().len()) as f64,
        Aggregate::PlugIn => agg.n_used() as f64,
        _ => (agg.grid_len() * model.theta().dim()) as f64,
    };
    let work = histograms * (nodes.len() as f64 + action_cost + agg.grid_len() as f64);
    let (risks, se, method, size) = if work <= opts.exact_budget && !opts.force_monte_carlo {
        (exact_risks(&agg, &nodes, parties), vec![0.0; nodes.len()], RiskMethod::Exact, histograms)
    } else {
        let (r, s) = monte_carlo_risks(&agg, &nodes, model.prior(), parties, opts);
        (r, s, RiskMethod::MonteCarlo, opts.draws as f64)
    };
    let combine = |weights: &[f64], offset: usize| {
        Risk::weighted_sum(
            weights
                .iter()
                .enumerate()
                .map(|(e, &w)| (w, Risk { value: risks[offset + e], se: se[offset + e], method })),
        )
    };
    let bayes = combine(model.prior(), 0);
    let truth = (!nodes.true_weights.is_empty()).then(|| combine(&nodes.true_weights, nodes.grid));
    PartyRisk { bayes, truth, grid: risks[..nodes.grid].to_vec(), size }
}

/// risk(θ_e) at every node by the sum over release histograms (depth-first, log-likelihood sums
/// carried down the recursion).
fn exact_risks(agg: &Aggregator, nodes: &Nodes, parties: u64) -> Vec<f64> {
    let r = agg.n_used();
    let ln_fact: Vec<f64> = (0..=parties).map(|n| ln_gamma(n as f64 + 1.0)).collect();
    let mut walk = Walk {
        agg,
        nodes,
        ln_fact: &ln_fact,
        sums: vec![vec![0.0; nodes.len()]; r + 1],
        counts: vec![0; r],
        risk: vec![0.0; nodes.len()],
    };
    walk.descend(0, parties as usize, ln_fact[parties as usize]);
    walk.risk
}

struct Walk<'a> {
    agg: &'a Aggregator,
    nodes: &'a Nodes,
    ln_fact: &'a [f64],
    /// sums[u][e] = Σ_{u' < u} n_{u'} ln r_e(u').
    sums: Vec<Vec<f64>>,
    /// counts[u] = n_u on the current path.
    counts: Vec<u64>,
    risk: Vec<f64>,
}

impl Walk<'_> {
    fn descend(&mut self, u: usize, remaining: usize, log_coef: f64) {
        let last = u + 1 == self.agg.n_used();
        let range = if last { remaining..=remaining } else { 0..=remaining };
        for n in range {
            let (done, rest) = self.sums.split_at_mut(u + 1);
            let (from, to) = (&done[u], &mut rest[0]);
            if n == 0 {
                to.copy_from_slice(from);
            } else {
                for ((t, f), l) in to.iter_mut().zip(from).zip(&self.nodes.log_lik[u]) {
                    *t = f + n as f64 * l;
                }
            }
            let coef = log_coef - self.ln_fact[n];
            self.counts[u] = n as u64;
            if last {
                self.leaf(u + 1, coef);
            } else {
                self.descend(u + 1, remaining - n, coef);
            }
        }
    }

    fn leaf(&mut self, depth: usize, log_coef: f64) {
        let sums = &self.sums[depth];
        let Some(post) = self.agg.posterior(&sums[..self.nodes.grid]) else { return };
        let action = if self.agg.rule() == Aggregate::PlugIn {
            self.agg.plug_in_action(&self.counts)
        } else {
            self.agg.action(&post)
        };
        for (e, s) in sums.iter().enumerate() {
            let lp = log_coef + s;
            if lp > f64::NEG_INFINITY {
                let grid_index = (e < self.nodes.grid).then_some(e);
                self.risk[e] += lp.exp() * self.agg.loss_at(self.nodes.points.row(e), grid_index, &action);
            }
        }
    }
}

/// risk(θ_e) and its standard error at every node with positive weight, by `draws` simulated
/// rounds of M releases each (stratified by node).
fn monte_carlo_risks(
    agg: &Aggregator,
    nodes: &Nodes,
    prior: &[f64],
    parties: u64,
    opts: &RiskOptions,
) -> (Vec<f64>, Vec<f64>) {
    let (mut risk, mut se) = (vec![0.0; nodes.len()], vec![0.0; nodes.len()]);
    let r = agg.n_used();
    let mut counts = vec![0u64; r];
    for e in 0..nodes.len() {
        let weight = if e < nodes.grid { prior[e] } else { nodes.true_weights[e - nodes.grid] };
        if weight <= 0.0 {
            continue;
        }
        let mut cum = Vec::with_capacity(r);
        let mut acc = 0.0;
        for u in 0..r {
            acc += nodes.log_lik[u][e].exp();
            cum.push(acc);
        }
        let mut rng = StdRng::seed_from_u64(opts.seed ^ (e as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15));
        let (mut s1, mut s2) = (0.0, 0.0);
        let mut sums = vec![0.0; nodes.grid];
        for _ in 0..opts.draws {
            counts.iter_mut().for_each(|c| *c = 0);
            for _ in 0..parties {
                let x = rng.random::<f64>() * acc;
                let u = cum.partition_point(|&c| c <= x).min(r - 1);
                counts[u] += 1;
            }
            sums.iter_mut().for_each(|s| *s = 0.0);
            for (u, &c) in counts.iter().enumerate().filter(|(_, &c)| c > 0) {
                for (s, l) in sums.iter_mut().zip(&nodes.log_lik[u]) {
                    *s += c as f64 * l;
                }
            }
            let l = match agg.posterior(&sums) {
                Some(post) => {
                    let grid_index = (e < nodes.grid).then_some(e);
                    let action =
                        if agg.rule() == Aggregate::PlugIn { agg.plug_in_action(&counts) } else { agg.action(&post) };
                    agg.loss_at(nodes.points.row(e), grid_index, &action)
                }
                None => 0.0,
            };
            s1 += l;
            s2 += l * l;
        }
        let n = opts.draws as f64;
        let mean = s1 / n;
        let var = (s2 / n - mean * mean).max(0.0) * n / (n - 1.0).max(1.0);
        risk[e] = mean;
        se[e] = (var / n).sqrt();
    }
    (risk, se)
}

#[cfg(test)]
mod tests;
