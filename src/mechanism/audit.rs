//! An empirical DP test of a mechanism as it is actually sampled, in the spirit of Google's
//! stochastic differential-privacy tester (Gilbert & McMillan; `differential-privacy/.../
//! stochastic_tester`): sample neighbouring columns, bound each output probability with
//! Clopper–Pearson intervals, and report the largest log-ratio that the *lower* bound of one
//! probability over the *upper* bound of its neighbour's still supports.
//!
//! **Guarantee.** Every sampled column c and output k gets a one-sided lower bound L(c,k) and upper
//! bound U(c,k), each failing with probability ≤ β. With β = α / (2·|columns sampled|·|Θ̃|) the
//! union bound (Bonferroni; no independence needed, so one sample per column serves all its pairs)
//! makes all bounds hold simultaneously with probability ≥ 1 − α, and then for every tested pair
//! ln(L(a,k)/U(b,k)) ≤ ln(Pr(k|a)/Pr(k|b)) ≤ ε_true ≤ certified ε. So the reported empirical ε
//! exceeds the certified ε with probability at most α — if it does, the sampler or certificate is
//! wrong.
//!
//! **(ε, δ) (δ > 0).** A single ratio of an (ε, δ) mechanism may exceed e^ε, so the ε bound above is
//! only reported, not judged. What is audited is the δ spent per ordered pair: on the same event,
//! for A = {k : L(a,k) − ρU(b,k) > 0} (ρ = num/den ≤ e^ε, the certificate's own bound),
//! Σ_{k∈A} (L(a,k) − ρU(b,k)) ≤ Σ_{k∈A} (Pr(k|a) − ρPr(k|b)) ≤ Σ_k max(0, Pr(k|a) − ρPr(k|b)) ≤ certified δ.
//! So the reported empirical δ lower bound (computed with every float step rounded down) exceeds the
//! certified δ with probability at most α. Its power is limited: each output's interval has width
//! ~ z·sqrt(p/n), so δ spent on many outputs in small amounts is invisible at moderate n.

use rand::Rng;
use serde::Serialize;
use statrs::distribution::{Beta, ContinuousCDF};

use super::{AuditError, Mechanism};
use crate::certify::exact::{next_down, next_up, RatioBound};
use crate::guard::Parameter;
use crate::model::Model;

type Result<T> = std::result::Result<T, AuditError>;

/// Audit settings.
#[derive(Debug, Clone, Copy)]
pub struct AuditOptions {
    /// Draws per sampled column.
    pub samples: u64,
    /// Total false-alarm probability α of the simultaneous bounds.
    pub alpha: f64,
    /// At most this many neighbour pairs are tested (evenly spaced over the edge list).
    pub max_pairs: usize,
}

impl AuditOptions {
    /// Check the options before any work (each error names the flag): at least one draw and one
    /// pair, and 0 < α < 1.
    pub fn validate(&self) -> std::result::Result<(), AuditError> {
        if self.samples == 0 {
            return Err(AuditError::InvalidOption { name: Parameter::Samples, problem: "must be at least 1".into() });
        }
        if !(self.alpha > 0.0 && self.alpha < 1.0) {
            return Err(AuditError::InvalidOption {
                name: Parameter::Alpha,
                problem: format!("must lie strictly between 0 and 1 (got {})", self.alpha),
            });
        }
        if self.max_pairs == 0 {
            return Err(AuditError::InvalidOption { name: Parameter::MaxPairs, problem: "must be at least 1".into() });
        }
        Ok(())
    }
}

impl Default for AuditOptions {
    fn default() -> Self {
        AuditOptions { samples: 200_000, alpha: 0.05, max_pairs: 1000 }
    }
}

/// What an audit judges against its certificate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum AuditJudgement {
    /// Pure ε: empirical ε lower bound ≤ certified ε.
    Eps,
    /// (ε, δ): empirical δ lower bound ≤ certified δ.
    Delta,
}

impl AuditJudgement {
    /// The symbol judged, `ε` or `δ`.
    pub fn symbol(self) -> &'static str {
        match self {
            AuditJudgement::Eps => "ε",
            AuditJudgement::Delta => "δ",
        }
    }
}

/// A point of the observation or output grid, whole: one number for a scalar, every coordinate
/// for a vector (a multinomial's counts, a simplex point). Serialises as a number or a list.
#[derive(Debug, Clone, PartialEq)]
pub struct GridPoint(pub Vec<f64>);

impl GridPoint {
    fn of(grid: &crate::model::Grid, i: usize) -> GridPoint {
        GridPoint(grid.point(i).to_vec())
    }
}

impl Serialize for GridPoint {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        match self.0.as_slice() {
            [x] => s.serialize_f64(*x),
            v => v.serialize(s),
        }
    }
}

impl std::fmt::Display for GridPoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0.as_slice() {
            [x] => write!(f, "{x}"),
            v => write!(f, "({})", v.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(", ")),
        }
    }
}

/// The most telling output of the audit.
#[derive(Debug, Clone, Serialize)]
pub struct AuditWitness {
    /// Observation whose probability is bounded below.
    pub y_a: GridPoint,
    /// Its neighbour, whose probability is bounded above.
    pub y_b: GridPoint,
    /// The output θ̃_k.
    pub output: GridPoint,
    /// Draws of θ̃_k at y_a and y_b.
    pub counts: (u64, u64),
}

/// The ordered pair with the largest empirical δ lower bound.
#[derive(Debug, Clone, Serialize)]
pub struct DeltaWitness {
    /// Observation whose probabilities are bounded below.
    pub y_a: GridPoint,
    /// Its neighbour, whose probabilities are bounded above.
    pub y_b: GridPoint,
    /// Outputs contributing (those with L(a,k) − ρU(b,k) > 0).
    pub outputs: usize,
}

/// What the audit found.
#[derive(Debug, Clone, Serialize)]
pub struct AuditReport {
    /// The target ε of the file.
    pub eps: f64,
    /// The certified ε (re-derived from the weights).
    pub certified_eps: f64,
    /// Largest ln(L(a,k)/U(b,k)) over tested pairs and outputs: an ε lower bound at confidence 1 − α
    /// (0 when no output gives a positive lower bound). Judged only for pure ε (δ = 0).
    pub empirical_eps_lower: f64,
    /// Where it was attained.
    pub witness: Option<AuditWitness>,
    /// The target δ of the file (0: pure ε).
    pub delta: f64,
    /// The certified δ (re-derived from the weights; 0 for pure ε).
    pub certified_delta: f64,
    /// Largest Σ_k max(0, L(a,k) − ρU(b,k)) over tested ordered pairs: a lower bound, at confidence
    /// 1 − α, of the δ spent at eps (0 when no output contributes).
    pub empirical_delta_lower: f64,
    /// Where it was attained.
    pub delta_witness: Option<DeltaWitness>,
    /// What `consistent` judges.
    pub judged: AuditJudgement,
    /// Neighbour pairs tested.
    pub pairs_tested: usize,
    /// Neighbour pairs in the model.
    pub pairs_total: usize,
    /// Columns sampled.
    pub columns_sampled: usize,
    /// Draws per column.
    pub samples_per_column: u64,
    /// α.
    pub alpha: f64,
    /// Level of each one-sided Clopper–Pearson bound: α / (2·columns·|Θ̃|).
    pub per_bound_level: f64,
    /// True when the judged bound does not exceed its certificate: empirical_eps_lower ≤
    /// certified_eps for pure ε, empirical_delta_lower ≤ certified_delta for δ > 0 (what must hold
    /// with probability ≥ 1 − α).
    pub consistent: bool,
}

/// Clopper–Pearson one-sided lower bound on p from x successes in n trials, failing w.p. ≤ beta.
pub(super) fn clopper_pearson_lower(x: u64, n: u64, beta: f64) -> f64 {
    if x == 0 {
        return 0.0;
    }
    Beta::new(x as f64, (n - x + 1) as f64).expect("shape parameters > 0").inverse_cdf(beta)
}

/// Clopper–Pearson one-sided upper bound on p from x successes in n trials, failing w.p. ≤ beta.
pub(super) fn clopper_pearson_upper(x: u64, n: u64, beta: f64) -> f64 {
    if x >= n {
        return 1.0;
    }
    Beta::new((x + 1) as f64, (n - x) as f64).expect("shape parameters > 0").inverse_cdf(1.0 - beta)
}

/// What the audit needs of a mechanism: its model, its targets and certificate, and its sampler.
/// Implemented by both artifact kinds ([`Mechanism`], [`super::CompactMechanism`]) and
/// [`super::Release`].
pub trait Audited {
    /// The model (its neighbour relation, observations and outputs).
    fn model(&self) -> &Model;
    /// The target ε.
    fn eps(&self) -> f64;
    /// The certified ε.
    fn certified_eps(&self) -> f64;
    /// The target δ (0: pure ε).
    fn delta(&self) -> f64;
    /// The certified δ.
    fn certified_delta(&self) -> f64;
    /// One exact draw of an output index for observation index `i`.
    fn sample<R: Rng + ?Sized>(&self, i: usize, rng: &mut R) -> usize;
    /// |Θ̃|.
    fn n_outputs(&self) -> usize {
        self.model().outputs.len()
    }
}

macro_rules! audited {
    ($t:ty, $delta:expr, $certified_delta:expr) => {
        impl Audited for $t {
            fn model(&self) -> &Model {
                <$t>::model(self)
            }
            fn eps(&self) -> f64 {
                <$t>::eps(self)
            }
            fn certified_eps(&self) -> f64 {
                <$t>::certified_eps(self)
            }
            fn delta(&self) -> f64 {
                $delta(self)
            }
            fn certified_delta(&self) -> f64 {
                $certified_delta(self)
            }
            fn sample<R: Rng + ?Sized>(&self, i: usize, rng: &mut R) -> usize {
                <$t>::sample(self, i, rng)
            }
        }
    };
}

audited!(Mechanism, Mechanism::delta, Mechanism::certified_delta);
audited!(super::Release, super::Release::delta, super::Release::certified_delta);
audited!(super::CompactMechanism, |_: &super::CompactMechanism| 0.0, |_: &super::CompactMechanism| 0.0);

/// Run the audit. `progress(done, total)` is called after each sampled column.
pub fn audit<M: Audited + ?Sized, R: Rng + ?Sized>(
    mech: &M,
    opts: AuditOptions,
    rng: &mut R,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<AuditReport> {
    opts.validate()?;
    let edges: Vec<(usize, usize)> = mech.model().family.neighbours().edges().collect();
    let pairs: Vec<(usize, usize)> = if edges.len() <= opts.max_pairs {
        edges.clone()
    } else {
        (0..opts.max_pairs).map(|j| edges[j * edges.len() / opts.max_pairs]).collect()
    };
    let mut cols: Vec<usize> = pairs.iter().flat_map(|&(a, b)| [a, b]).collect();
    cols.sort_unstable();
    cols.dedup();
    let n_out = mech.n_outputs();
    let beta = opts.alpha / (2.0 * cols.len().max(1) as f64 * n_out as f64);
    // counts[c][k] for the c-th sampled column.
    let mut counts: Vec<Vec<u64>> = Vec::with_capacity(cols.len());
    for (done, &i) in cols.iter().enumerate() {
        let mut c = vec![0u64; n_out];
        for _ in 0..opts.samples {
            c[mech.sample(i, rng)] += 1;
        }
        counts.push(c);
        progress(done + 1, cols.len());
    }
    let n = opts.samples;
    let lower: Vec<Vec<f64>> =
        counts.iter().map(|c| c.iter().map(|&x| clopper_pearson_lower(x, n, beta)).collect()).collect();
    let upper: Vec<Vec<f64>> =
        counts.iter().map(|c| c.iter().map(|&x| clopper_pearson_upper(x, n, beta)).collect()).collect();
    let pos = |i: usize| cols.binary_search(&i).expect("every tested column was sampled");
    let obs = mech.model().family.observations();
    let outs = &mech.model().outputs;
    let mut best = 0.0f64;
    let mut witness = None;
    for &(a, b) in &pairs {
        for (x, y) in [(a, b), (b, a)] {
            let (px, py) = (pos(x), pos(y));
            for k in 0..n_out {
                let (l, u) = (lower[px][k], upper[py][k]);
                if l > 0.0 && u > 0.0 {
                    let r = (l / u).ln();
                    if r > best {
                        best = r;
                        witness = Some(AuditWitness {
                            y_a: GridPoint::of(&obs, x),
                            y_b: GridPoint::of(&obs, y),
                            output: GridPoint::of(outs, k),
                            counts: (counts[px][k], counts[py][k]),
                        });
                    }
                }
            }
        }
    }
    // δ lower bound per ordered pair: each term L − ρU and each partial sum rounded down (ρU up).
    let rho = RatioBound::for_eps(mech.eps()).value();
    let mut best_delta = 0.0f64;
    let mut delta_witness = None;
    for &(a, b) in &pairs {
        for (x, y) in [(a, b), (b, a)] {
            let (px, py) = (pos(x), pos(y));
            let (mut sum, mut used) = (0.0f64, 0);
            for k in 0..n_out {
                let term = next_down(lower[px][k] - next_up(rho * upper[py][k]));
                if term > 0.0 {
                    sum = next_down(sum + term);
                    used += 1;
                }
            }
            if sum > best_delta {
                best_delta = sum;
                delta_witness =
                    Some(DeltaWitness { y_a: GridPoint::of(&obs, x), y_b: GridPoint::of(&obs, y), outputs: used });
            }
        }
    }
    let pure = mech.delta() == 0.0;
    Ok(AuditReport {
        eps: mech.eps(),
        certified_eps: mech.certified_eps(),
        empirical_eps_lower: best,
        witness,
        delta: mech.delta(),
        certified_delta: mech.certified_delta(),
        empirical_delta_lower: best_delta,
        delta_witness,
        judged: if pure { AuditJudgement::Eps } else { AuditJudgement::Delta },
        pairs_tested: pairs.len(),
        pairs_total: edges.len(),
        columns_sampled: cols.len(),
        samples_per_column: n,
        alpha: opts.alpha,
        per_bound_level: beta,
        consistent: if pure { best <= mech.certified_eps() } else { best_delta <= mech.certified_delta() },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clopper_pearson_brackets_the_estimate() {
        let (x, n, b) = (300u64, 1000u64, 0.001);
        let (l, u) = (clopper_pearson_lower(x, n, b), clopper_pearson_upper(x, n, b));
        assert!(l < 0.3 && 0.3 < u, "{l} {u}");
        // Known closed forms at the ends: x = 0 → upper 1 − β^{1/n}; x = n → lower β^{1/n}.
        assert!((clopper_pearson_upper(0, n, b) - (1.0 - b.powf(1.0 / n as f64))).abs() < 1e-9);
        assert!((clopper_pearson_lower(n, n, b) - b.powf(1.0 / n as f64)).abs() < 1e-9);
        assert_eq!(clopper_pearson_lower(0, n, b), 0.0);
        assert_eq!(clopper_pearson_upper(n, n, b), 1.0);
    }
}
