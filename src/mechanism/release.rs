//! The released mechanism in either form, built from a solution by one decision
//! ([`Release::certify_planned`] with the solve's plan, [`Release::certify`] without one), saved
//! and loaded through one pair of functions, sampled exactly.

use std::path::Path;

use ndarray::{Array2, ArrayView1};
use rand::Rng;
use serde_json::Value;

use super::error::Result;
use super::{
    ArtifactError, ArtifactErrorKind, Batch, CompactMechanism, Mechanism, PrivacyCertificate, Provenance, FORMAT_NAME,
    FORMAT_VERSION, FORMAT_VERSION_COMPACT, FORMAT_VERSION_PACKED, FORMAT_VERSION_PURE, KIND_GEOMETRIC_REMAP,
};
use crate::lp::{cost_matrix, MemoryBudget};
use crate::model::Model;
use crate::solve::{Solution, SolvePlan, Status};

/// The released mechanism: the dense integer weights (format versions 1–2, and 4 with the weights
/// packed) or the compact geometric + remap (version 3). What `solve --out` and `report` write, what `verify`, `sample`
/// and `audit` read, and what `compare` evaluates (it implements [`crate::eval::Estimator`]).
///
/// ```
/// use ubapp::mechanism::Release;
/// use ubapp::model::{Model, ModelSpec};
/// use ubapp::rand::{rngs::StdRng, SeedableRng};
/// use ubapp::solve::{solve_model, SolverChoice};
///
/// let spec = ModelSpec::from_toml(r#"
///     name = "tiny"
///     epsilon = [1.0]
///     [parameter]
///     grid = { kind = "midpoint", points = 6 }
///     prior = { kind = "uniform" }
///     [observation]
///     family = "binomial"
///     trials = 5
///     [loss]
///     kind = "squared"
/// "#, "example").unwrap();
/// let model = Model::from_spec(spec).unwrap();
/// let solution = solve_model(&model, None, SolverChoice::Auto).unwrap().remove(0);
/// let release = Release::certify(&model, &solution).unwrap(); // repaired, quantised, certified
/// assert!(release.certified_eps() <= 1.0);
/// // What is released costs the LP's optimum plus the certified repair cost, never less.
/// let cost = release.provenance().repair_risk_cost.unwrap();
/// assert!((release.bayes_risk() - (solution.bayes_risk + cost)).abs() < 1e-12);
/// // Round trip through the artifact's text, re-verified on the way in.
/// let back = Release::from_json_str(&release.to_json().to_string(), "example").unwrap();
/// let k = back.sample(3, &mut StdRng::seed_from_u64(1)); // an output index for y = 3
/// assert!(k < back.n_outputs());
/// ```
#[derive(Debug, Clone)]
pub enum Release {
    /// Integer weights per observation ([`Mechanism`]).
    Dense(Mechanism),
    /// Geometric noise + remap ([`CompactMechanism`]).
    Compact(CompactMechanism),
}

impl Release {
    /// The mechanism a solve releases: the compact geometric + remap when the compact chain route
    /// solved it (O(|Θ̃| + |Y|), sampled at a dyadic ε' ≤ ε), else the dense weights — repaired,
    /// quantised and certified exactly. A convenience for a solution without its plan
    /// ([`crate::solve::solve_model`]'s): the dense form builds the model's cost matrix again, within
    /// the reader's memory budget, to price it; a caller that solved through a [`SolvePlan`] calls
    /// [`Release::certify_planned`], which reads the plan's.
    pub fn certify(model: &Model, solution: &Solution) -> Result<Release> {
        Release::certify_with(model, solution, || {
            Ok(std::sync::Arc::new(cost_matrix(model, MemoryBudget::from_env())?))
        })
    }

    /// The mechanism a solution of `plan` releases (the one place that decides between the two
    /// forms, as [`Release::certify`] says), the dense form priced by the plan's cost matrix (the
    /// one the solve and its reference risks read, built once) rather than a new one.
    pub fn certify_planned(plan: &SolvePlan<'_>, solution: &Solution) -> Result<Release> {
        Release::certify_with(plan.model(), solution, || Ok(plan.cost()?))
    }

    /// [`Release::certify`] of a solution of `model`, the dense form priced by `cost` — the model's
    /// cost matrix, asked for only by the dense form.
    pub(crate) fn certify_with(
        model: &Model,
        solution: &Solution,
        cost: impl FnOnce() -> Result<std::sync::Arc<Array2<f64>>>,
    ) -> Result<Release> {
        if solution.compact().is_some() {
            CompactMechanism::from_solution(model, solution).map(Release::Compact)
        } else {
            let cost = cost()?;
            Mechanism::from_solution_priced(model, solution, &cost).map(Release::Dense)
        }
    }

    /// A dense release from integer weights `columns[i][k]` (each observation's weights summing to
    /// `total`) at target `eps` and the model's δ, checked as a loaded file is (shape, totals, the
    /// exact certificate, the model's `[constraints]`); input errors name the field.
    pub fn from_weights(model: Model, eps: f64, total: u64, columns: Vec<Vec<u64>>) -> Result<Release> {
        Mechanism::from_weights(model, eps, total, columns).map(Release::Dense)
    }

    /// A dense release certified from a float P found by any other means (|Θ̃| × |Y|,
    /// `p[k,i] = Pr(θ̃_k | y_i)`) at target `eps` and the model's δ: every repair method for that δ
    /// tried, each quantised and checked exactly, the one of least Bayes risk kept.
    pub fn certify_float(model: &Model, eps: f64, p: &Array2<f64>) -> Result<Release> {
        Mechanism::certify_from_float(model, eps, p).map(Release::Dense)
    }

    /// The dense form's integer weights (the exact posterior reads them), `None` for the compact
    /// form.
    pub fn dense(&self) -> Option<&Mechanism> {
        match self {
            Release::Dense(m) => Some(m),
            Release::Compact(_) => None,
        }
    }

    /// The form in words (`verify`'s line): the dense weights' total (`total 2^52`), or the compact
    /// form's noise ε' and the length of its remap.
    pub fn form_words(&self) -> String {
        match self {
            Release::Dense(d) => format!("total 2^{}", d.total().trailing_zeros()),
            Release::Compact(c) => format!(
                "compact: geometric noise ε' = {} / 2^{}, then a remap of {} runs",
                c.noise().numerator,
                c.noise().log2_denominator,
                c.runs().len()
            ),
        }
    }

    /// What was written, in words (`solve --out`'s line after the file's name): the certified
    /// claim, the Bayes risk as sampled and what the repair and quantisation (dense) or sampling at
    /// ε' (compact) cost beyond the LP's optimum; for a dense design that `status` does not call
    /// optimal, its certified gap; the `[constraints]` its weights carry.
    pub fn written_words(&self, status: Status) -> String {
        let cost = self.provenance().repair_risk_cost.unwrap_or(f64::NAN);
        match self {
            Release::Dense(m) => {
                let claim = if m.delta() > 0.0 {
                    format!("certified (ε, δ) = ({}, {}) (target δ {})", m.eps(), m.certified_delta(), m.delta())
                } else {
                    eps_claim(m.certified_eps(), m.eps())
                };
                let carried = m.constraints().map_or(String::new(), |c| {
                    format!("; carries the constraints {} (checked on its integer weights)", c.names.label())
                });
                let gap = match (status, m.provenance.optimality_gap) {
                    (Status::Optimal, _) => String::new(),
                    (status, Some(g)) => format!("; {status}: within a certified gap of {g:.2e} of the optimum"),
                    (status, None) => format!("; {status}: no certified gap"),
                };
                format!(
                    "{claim}, Bayes risk {:.10e} (repair and quantisation cost {:+.3e}, {:+.2e} relative){gap}{carried}",
                    m.bayes_risk(),
                    cost,
                    cost / m.bayes_risk(),
                )
            }
            Release::Compact(m) => format!(
                "compact geometric + remap ({} runs), {}, Bayes risk {:.10e} (sampling at ε' costs {:+.3e}, {:+.2e} relative)",
                m.runs().len(),
                eps_claim(m.certified_eps(), m.eps()),
                m.bayes_risk(),
                cost,
                cost / m.bayes_risk()
            ),
        }
    }

    /// The versioned JSON artifact (versions 1, 2 and 4 dense, 3 compact).
    pub fn to_json(&self) -> Value {
        match self {
            Release::Dense(m) => m.to_json(),
            Release::Compact(m) => m.to_json(),
        }
    }

    /// Write the artifact atomically, only once its text reads back and verifies.
    pub fn save(&self, path: &Path) -> Result<()> {
        match self {
            Release::Dense(m) => m.save(path),
            Release::Compact(m) => m.save(path),
        }
    }

    /// Where it came from (solver, repair, bounds).
    pub fn provenance(&self) -> &Provenance {
        match self {
            Release::Dense(m) => &m.provenance,
            Release::Compact(m) => &m.provenance,
        }
    }

    /// Its privacy certificate (for a compact release: ε' certified, δ = 0).
    pub fn certificate(&self) -> PrivacyCertificate {
        match self {
            Release::Dense(m) => m.certificate(),
            Release::Compact(m) => {
                PrivacyCertificate { eps: m.eps(), delta: 0.0, certified_eps: m.certified_eps(), certified_delta: 0.0 }
            }
        }
    }

    /// The probabilities Pr(θ̃_k | y_i) of what is sampled, |Θ̃| × |Y| (for evaluation and heat
    /// maps, not for sampling): w/T for the dense form, geometric(ε') + remap for the compact one.
    pub fn probabilities(&self) -> Array2<f64> {
        match self {
            Release::Dense(m) => m.probabilities(),
            Release::Compact(m) => m.probabilities().clone(),
        }
    }

    /// n·ε and n·δ spent by `n` releases from the same data (basic composition, rounded up).
    pub fn composed(&self, n: u64) -> (f64, f64) {
        super::batch::composed(n, self.certified_eps(), self.certified_delta())
    }

    /// Read and verify a mechanism file of either kind (input errors name the file).
    pub fn load(path: &Path) -> Result<Release> {
        let (origin, text) = super::read_artifact(path)?;
        Release::from_json_str(&text, &origin)
    }

    /// Parse and verify either kind; `origin` names it in messages.
    pub fn from_json_str(text: &str, origin: &str) -> Result<Release> {
        // A compact file is the one whose format is ours and whose version is 3; everything
        // else (including every error message) is the dense reader's. Both read the text once to
        // price it ([`super::shape_of`]) before anything of it is built.
        let shape = super::shape_of(text, origin)?;
        let compact = shape.string("format") == Some(FORMAT_NAME)
            && shape.number("format_version") == Some(FORMAT_VERSION_COMPACT as u64);
        if compact && !shape.has("kind") {
            return Err(ArtifactError::new(
                origin,
                ArtifactErrorKind::NotAMechanism {
                    reason: format!(
                        "format_version is {FORMAT_VERSION_COMPACT}, but the file has no \"kind\" (version \
                         {FORMAT_VERSION_COMPACT} files are kind \"{KIND_GEOMETRIC_REMAP}\"; dense files are versions {FORMAT_VERSION_PURE}, {FORMAT_VERSION} and {FORMAT_VERSION_PACKED})"
                    ),
                },
            )
            .into());
        }
        if compact {
            CompactMechanism::parse(text).map(Release::Compact).map_err(|kind| ArtifactError::new(origin, kind).into())
        } else {
            Mechanism::from_shaped(text, &shape, origin).map(Release::Dense)
        }
    }

    /// The model it was designed for.
    pub fn model(&self) -> &Model {
        match self {
            Release::Dense(m) => m.model(),
            Release::Compact(m) => m.model(),
        }
    }

    /// What `verify --json` (and Python's `Mechanism.verify`) report of a verified release: its ε
    /// and δ, targets and certified, Bayes risk, sizes, kind, total weight (dense) and
    /// fingerprint.
    pub fn verified_json(&self) -> Value {
        serde_json::json!({
            "ok": true,
            "eps": self.eps(),
            "certified_eps": self.certified_eps(),
            "delta": self.delta(),
            "certified_delta": self.certified_delta(),
            "bayes_risk": self.bayes_risk(),
            "observations": self.n_observations(),
            "outputs": self.n_outputs(),
            "kind": self.kind(),
            "total": match self { Release::Dense(d) => Some(d.total()), Release::Compact(_) => None },
            "fingerprint": self.fingerprint(),
            "constraints": self.constraints(),
        })
    }

    /// What a dense release's weights carry of its model's `[constraints]`, checked exactly on
    /// load (`None` for a model without constraints and for the compact form, which has none).
    pub fn constraints(&self) -> Option<&crate::certify::ConstraintCertificate> {
        match self {
            Release::Dense(m) => m.constraints(),
            Release::Compact(_) => None,
        }
    }

    /// The kind: `dense` or `geometric-remap`.
    pub fn kind(&self) -> &'static str {
        match self {
            Release::Dense(_) => "dense",
            Release::Compact(_) => KIND_GEOMETRIC_REMAP,
        }
    }

    /// The target ε.
    pub fn eps(&self) -> f64 {
        match self {
            Release::Dense(m) => m.eps(),
            Release::Compact(m) => m.eps(),
        }
    }

    /// The certified ε.
    pub fn certified_eps(&self) -> f64 {
        match self {
            Release::Dense(m) => m.certified_eps(),
            Release::Compact(m) => m.certified_eps(),
        }
    }

    /// The target δ (0 for a compact artifact).
    pub fn delta(&self) -> f64 {
        match self {
            Release::Dense(m) => m.delta(),
            Release::Compact(_) => 0.0,
        }
    }

    /// The certified δ (0 for a compact artifact).
    pub fn certified_delta(&self) -> f64 {
        match self {
            Release::Dense(m) => m.certified_delta(),
            Release::Compact(_) => 0.0,
        }
    }

    /// Bayes risk of the mechanism as sampled.
    pub fn bayes_risk(&self) -> f64 {
        match self {
            Release::Dense(m) => m.bayes_risk(),
            Release::Compact(m) => m.bayes_risk(),
        }
    }

    /// |Y|.
    pub fn n_observations(&self) -> usize {
        match self {
            Release::Dense(m) => m.n_observations(),
            Release::Compact(m) => m.n_observations(),
        }
    }

    /// |Θ̃|.
    pub fn n_outputs(&self) -> usize {
        self.model().outputs.len()
    }

    /// Output θ̃_k.
    pub fn output(&self, k: usize) -> ArrayView1<'_, f64> {
        self.model().outputs.point(k)
    }

    /// The index of observation `y` (its coordinates; exact match), or `None` if y ∉ Y.
    pub fn observation_index(&self, y: &[f64]) -> Option<usize> {
        match self {
            Release::Dense(m) => m.observation_index(y),
            // Y = {0..K}: no list of |Y| values is built.
            Release::Compact(m) => match y {
                [v] if *v >= 0.0 && v.fract() == 0.0 && *v < m.n_observations() as f64 => Some(*v as usize),
                _ => None,
            },
        }
    }

    /// Draw one output index for observation index `i` (exact).
    pub fn sample<R: Rng + ?Sized>(&self, i: usize, rng: &mut R) -> usize {
        match self {
            Release::Dense(m) => m.sample(i, rng),
            Release::Compact(m) => m.sample(i, rng),
        }
    }

    /// `n` independent draws for observation index `i`.
    pub fn sample_batch<R: Rng + ?Sized>(&self, i: usize, n: usize, rng: &mut R) -> Vec<usize> {
        (0..n).map(|_| self.sample(i, rng)).collect()
    }

    /// `n` independent draws for observation index `i`, with the privacy they spend together
    /// ([`Release::composed`]).
    pub fn sample_spending<R: Rng + ?Sized>(&self, i: usize, n: usize, rng: &mut R) -> Batch {
        let (eps_spent, delta_spent) = self.composed(n as u64);
        Batch { indices: self.sample_batch(i, n, rng), eps_spent, delta_spent }
    }
}

/// `ε = 1 (certified: 0.9999999999999978 ≤ 1)`: the target a reader asked for first, the exact
/// certified value after it.
fn eps_claim(certified: f64, target: f64) -> String {
    if certified == target {
        format!("ε = {target} (certified)")
    } else {
        format!("ε = {target} (certified: {certified} ≤ {target})")
    }
}
