//! The aggregator: the exact posterior over the model's parameter grid given the M parties'
//! releases, and the Bayes action under the model's loss.
//!
//! A party's release k has likelihood r_θ(k) = Σ_y q_θ(y) P\[k, y\] (the parties use the same
//! certified mechanism, on independent records); so Pr(θ_j | k_1..k_M) ∝ π_j Π_m r_{θ_j}(k_m),
//! which depends on the releases only through their histogram n_k (taken in logs: many parties do
//! not underflow).

use ndarray::{Array1, Array2, ArrayView1};

use super::LocalMechanism;
use crate::model::{Family, Loss, Model};

/// How the aggregator turns the posterior into an estimate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Aggregate {
    /// The posterior mean (a real point, not rounded to a grid): the Bayes action for squared loss.
    PosteriorMean,
    /// The coordinate-wise posterior median (lower median on the grid): the Bayes action for
    /// absolute loss (summed over coordinates).
    PosteriorMedian,
    /// The output-grid point of least posterior expected loss: the Bayes action among the outputs
    /// the LP may release (any loss; with one party it reproduces the single-party optimum).
    GridAction,
    /// No posterior: the average of the parties' plug-in estimates (release y ↦ y/n, the count's
    /// proportion or mean), clamped to [lower, upper] — DSSA's aggregate with geometric noise, the
    /// like-for-like baseline of the Bayes aggregate (releases in Y only).
    PlugIn,
}

impl Aggregate {
    /// The Bayes action's form for a loss: mean for squared, median for absolute, else the best
    /// output-grid point.
    pub fn for_loss(loss: &Loss) -> Aggregate {
        match loss {
            Loss::Squared => Aggregate::PosteriorMean,
            Loss::Absolute => Aggregate::PosteriorMedian,
            Loss::ZeroOne { .. } | Loss::Matrix { .. } => Aggregate::GridAction,
        }
    }

    /// Its name in notes.
    pub fn name(self) -> &'static str {
        match self {
            Aggregate::PosteriorMean => "posterior mean",
            Aggregate::PosteriorMedian => "posterior median",
            Aggregate::GridAction => "Bayes output-grid point",
            Aggregate::PlugIn => "clamped average of plug-in estimates",
        }
    }
}

/// The aggregator of a party mechanism on a model: log-likelihoods of every release at every grid
/// point, the prior, the loss.
#[derive(Debug, Clone)]
pub struct Aggregator {
    /// The releases that have positive probability under some θ (indices into the mechanism's rows).
    pub(crate) used: Vec<usize>,
    /// ln r_{θ_j}(k) for used release u: `log_lik[u][j]` (−∞ where r = 0).
    pub(crate) log_lik: Vec<Vec<f64>>,
    /// ln π_j (−∞ where π_j = 0).
    log_prior: Vec<f64>,
    /// Grid points, |Θ| × dim.
    theta: Array2<f64>,
    /// L(θ_j, θ̃_k) for the grid action.
    loss_matrix: Option<Array2<f64>>,
    /// The output grid, |Θ̃| × dim.
    outputs: Array2<f64>,
    rule: Aggregate,
    loss: Loss,
    /// The plug-in estimate of each used release (`PlugIn` only), and the clamp.
    plug_in: Option<(Vec<Array1<f64>>, f64, f64)>,
}

impl Aggregator {
    /// The aggregator of `mech` (one party's mechanism for `model`'s family) under `model`'s grid,
    /// prior and loss.
    pub fn new(model: &Model, mech: &LocalMechanism, rule: Aggregate) -> Aggregator {
        let q = model.family().likelihood_matrix(model.theta()); // |Y| × |Θ|
        let r = mech.p.dot(&q); // |R| × |Θ|
        let used: Vec<usize> = (0..r.nrows()).filter(|&k| r.row(k).iter().any(|&x| x > 0.0)).collect();
        let log_lik = used.iter().map(|&k| r.row(k).iter().map(|&x| x.ln()).collect()).collect();
        let log_prior = model.prior().iter().map(|&p| p.ln()).collect();
        let loss_matrix = (rule == Aggregate::GridAction).then(|| model.loss().matrix(model.theta(), model.outputs()));
        let plug_in = (rule == Aggregate::PlugIn).then(|| {
            assert!(!mech.outputs, "the plug-in aggregate needs releases in Y");
            let ys = model.family().observations();
            let n = match model.family() {
                Family::Binomial { trials } => *trials as f64,
                Family::Poisson { records, .. } | Family::Multinomial { records, .. } => *records as f64,
                Family::Table { .. } => 1.0,
            };
            let labels = used.iter().map(|&k| ys.point(k).mapv(|v| v / n)).collect();
            let p = &model.spec().parameter;
            (labels, p.lower, p.upper)
        });
        Aggregator {
            used,
            log_lik,
            log_prior,
            theta: model.theta().points().clone(),
            loss_matrix,
            outputs: model.outputs().points().clone(),
            rule,
            loss: model.loss().clone(),
            plug_in,
        }
    }

    /// The aggregate's rule.
    pub fn rule(&self) -> Aggregate {
        self.rule
    }

    /// The plug-in aggregate given how many parties released each used release.
    pub(crate) fn plug_in_action(&self, counts: &[u64]) -> Action {
        let (labels, lo, hi) = self.plug_in.as_ref().expect("built for the plug-in aggregate");
        let m: u64 = counts.iter().sum();
        let mut x = Array1::zeros(labels[0].len());
        for (c, l) in counts.iter().zip(labels) {
            if *c > 0 {
                x.scaled_add(*c as f64 / m as f64, l);
            }
        }
        if x.len() == 1 {
            x.mapv_inplace(|v| v.clamp(*lo, *hi));
        }
        Action::Point(x)
    }

    /// |Θ|.
    pub fn grid_len(&self) -> usize {
        self.theta.nrows()
    }

    /// The number of releases with positive probability.
    pub fn n_used(&self) -> usize {
        self.used.len()
    }

    /// The posterior given Σ_m ln r_θ(k_m) per grid point (`log_lik_sum`), normalised; `None`
    /// when the releases have probability 0 under every θ of the prior.
    pub(crate) fn posterior(&self, log_lik_sum: &[f64]) -> Option<Vec<f64>> {
        let mut w: Vec<f64> = self.log_prior.iter().zip(log_lik_sum).map(|(a, b)| a + b).collect();
        let top = w.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        if !top.is_finite() {
            return None;
        }
        w.iter_mut().for_each(|x| *x = (*x - top).exp());
        let total: f64 = w.iter().sum();
        w.iter_mut().for_each(|x| *x /= total);
        Some(w)
    }

    /// The Bayes action given the posterior.
    pub(crate) fn action(&self, post: &[f64]) -> Action {
        match self.rule {
            Aggregate::PosteriorMean => Action::Point(self.theta.t().dot(&Array1::from(post.to_vec()))),
            Aggregate::PosteriorMedian => {
                let dim = self.theta.ncols();
                let mut point = Array1::zeros(dim);
                for d in 0..dim {
                    point[d] =
                        crate::mechanism::lower_median(post.iter().enumerate().map(|(j, &p)| (self.theta[[j, d]], p)));
                }
                Action::Point(point)
            }
            Aggregate::PlugIn => unreachable!("the plug-in aggregate needs the release counts: plug_in_action"),
            Aggregate::GridAction => {
                let l = self.loss_matrix.as_ref().expect("built for the grid action");
                let scores = l.t().dot(&Array1::from(post.to_vec()));
                let k = (0..scores.len()).min_by(|&a, &b| scores[a].total_cmp(&scores[b])).expect("outputs");
                Action::Output(k)
            }
        }
    }

    /// L(θ, action) at grid point j, or at an arbitrary θ (`None` for j) for losses defined off the
    /// grid.
    pub(crate) fn loss_at(&self, theta: ArrayView1<'_, f64>, grid_index: Option<usize>, action: &Action) -> f64 {
        match (action, grid_index, &self.loss_matrix) {
            (Action::Output(k), Some(j), Some(l)) => l[[j, *k]],
            (Action::Output(k), _, _) => self.loss.eval(theta, self.outputs.row(*k)),
            (Action::Point(x), _, _) => self.loss.eval(theta, x.view()),
        }
    }

    /// The aggregate's estimate given the releases (indices into the mechanism's rows), or `None`
    /// when they cannot come from the mechanism under the prior.
    pub fn estimate(&self, releases: &[usize]) -> Option<Vec<f64>> {
        let mut sum = vec![0.0; self.grid_len()];
        let mut counts = vec![0u64; self.used.len()];
        for &k in releases {
            let u = self.used.iter().position(|&x| x == k)?;
            counts[u] += 1;
            for (s, l) in sum.iter_mut().zip(&self.log_lik[u]) {
                *s += l;
            }
        }
        let post = self.posterior(&sum)?;
        let action = if self.rule == Aggregate::PlugIn { self.plug_in_action(&counts) } else { self.action(&post) };
        Some(match action {
            Action::Point(x) => x.to_vec(),
            Action::Output(k) => self.outputs.row(k).to_vec(),
        })
    }
}

/// What the aggregator outputs.
#[derive(Debug, Clone)]
pub(crate) enum Action {
    /// A point of the parameter space.
    Point(Array1<f64>),
    /// Output grid point θ̃_k.
    Output(usize),
}
