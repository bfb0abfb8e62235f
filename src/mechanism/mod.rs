//! The released mechanism: integer weights certified ε-DP **as sampled**, an exact sampler, and
//! the versioned JSON artifact (`ubapp solve --out`, `ubapp verify`, `ubapp sample`, `ubapp audit`).
//!
//! # The privacy claim and its proof
//!
//! A [`Mechanism`] holds, for each observation y_i, integer weights `w[k,i] ≥ 0` over the outputs
//! θ̃_k with `Σ_k w[k,i] = T` (the same power of two T for every column). [`Mechanism::sample`]
//! draws u uniformly from {0, …, T−1} (exactly: `sampler::uniform_below`) and releases the θ̃_k
//! with `Σ_{j<k} w[j,i] ≤ u < Σ_{j≤k} w[j,i]`, so `Pr(θ̃_k | y_i) = w[k,i]/T` exactly, given a
//! uniform random bit source.
//!
//! **Claim.** If for every neighbouring pair (a, b) (both orders) and every k,
//! `w[k,a]·den ≤ num·w[k,b]` in exact integer arithmetic, where `num/den ≤ e^ε`
//! (`exact::RatioBound`), then the sampled mechanism is ε-DP.
//!
//! **Proof.** Pr(θ̃_k | y_a) = `w[k,a]`/T ≤ (num/den)·`w[k,b]`/T ≤ e^ε Pr(θ̃_k | y_b) for every k;
//! summing over any set of outputs gives the DP inequality for every event. Neighbouring datasets
//! map to neighbouring (or equal) observations y = S(x), and the release depends on x only through
//! y, so the bound holds for datasets too. □
//!
//! `certified_eps` is max over neighbours and outputs of ln(`w[k,a]`/`w[k,b]`), rounded up
//! (`exact::ln_ratio_upper`: the smallest float f near the log whose rigorous lower bound of e^f
//! is ≥ the exact integer ratio), so e^{certified_eps} ≥ every ratio: the mechanism is also
//! certified_eps-DP. A zero weight facing a non-zero neighbour would need ε = ∞ and is refused.
//! It never exceeds the target ε, because all ratios already passed the check against e^ε's bound.
//!
//! # (ε, δ)-DP (δ > 0)
//!
//! The model's `delta` (`Σ_k max(0, P[k,i] − e^ε P[k,i']) ≤ δ` per ordered neighbour
//! pair) is certified on the integer weights by `exact::certify_weights_delta`.
//!
//! **Claim.** If for every ordered neighbouring pair (a, b)
//! `S_ab = Σ_k max(0, w[k,a]·den − num·w[k,b]) ≤ δ·den·T` in exact integer arithmetic, with
//! `num/den ≤ e^ε`, then the sampled mechanism is (ε, δ)-DP.
//!
//! **Proof.** For any set A of outputs,
//! `Pr(A | y_a) − e^ε Pr(A | y_b) = Σ_{k∈A} (w[k,a] − e^ε w[k,b])/T ≤ Σ_{k∈A} max(0, w[k,a] − (num/den)·w[k,b])/T
//! ≤ Σ_k max(0, w[k,a] − (num/den)·w[k,b])/T = S_ab/(den·T) ≤ δ`: the first step uses
//! num/den ≤ e^ε and w ≥ 0, the second adds non-negative terms. So Pr(A | y_a) ≤ e^ε Pr(A | y_b) + δ
//! for every event A; datasets reach y through S as above. □
//!
//! `certified_delta` is max S_ab/(den·T) over ordered pairs, rounded *up* to a float, so the
//! mechanism is (ε, certified_delta)-DP and certified_delta ≤ δ. A zero weight facing a non-zero
//! neighbour is allowed (it spends δ). For δ > 0, `certified_eps` is the target ε itself: the
//! certificate is the pair (eps, certified_delta), and no pure-ε claim is made (the weights may
//! exceed e^ε on single outputs). With δ = 0 the check is the pure-ε one above, and
//! `certified_delta` = 0.
//!
//! # File format
//!
//! Version 1 holds pure-ε mechanisms; version 2 adds `delta` (the target) and `certified_delta`.
//! The writer uses the lowest version that can express the mechanism: δ = 0 gives a version 1 file,
//! laid out as before (apart from the `model_fingerprint` key below), δ > 0 a version 2 file (an
//! older reader refuses it by its version instead of misreading it as pure ε). The reader accepts
//! both; a version 1 file is read as δ = 0.
//!
//! Every version also stores `model_fingerprint` (SHA-256 of the embedded model's canonical form,
//! [`Model::fingerprint`]), checked on load; files written before it existed have none and are
//! read as before. A reader older than the key refuses a file that has it (unknown keys are
//! refused), rather than misreading it.
//!
//! Version 4 is the packed form of the same weights, written for mechanisms of more than 2^20
//! weights (|Y|·|Θ̃|; smaller ones keep the readable arrays, byte for byte). Instead of `columns`
//! it holds `weights_encoding = "leb128-base64"` and `weights`: every `w[k,i]`, column after
//! column (observation i's |Θ̃| weights consecutively), as an unsigned LEB128 varint (minimal),
//! the bytes base64-encoded (standard alphabet, padded) in one string — about 40 % of the
//! arrays' size. It always states `delta` and `certified_delta` (0 for pure ε). Every other field
//! is as in versions 1 and 2, and so is the claim: the decoded weights are exactly the integers
//! the arrays would hold, and everything above is checked on them in the same way. Decoding
//! refuses, naming `weights`, anything but exactly the embedded model's |Y|·|Θ̃| weights with
//! every column summing to `total` (bad base64, a truncated, over-long or overflowing varint,
//! trailing bytes); the memory the decoded weights take is priced from the file's `observations`
//! and `outputs` before any is built. Older readers refuse version 4 by its number.

mod audit;
mod batch;
mod compact;
mod deploy;
mod error;
mod packed;
mod posterior;
mod release;
pub(crate) mod sampler;
mod trust;

use std::path::Path;

use ndarray::{Array2, ArrayView1};
use rand::Rng;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::guard::json::{Schema, Shape, ShapeError};
use crate::guard::text::quote;

pub use audit::{audit, AuditJudgement, AuditOptions, AuditReport, AuditWitness, Audited, DeltaWitness, GridPoint};
pub use batch::{Batch, OutputMatch, ReleaseRefusal};
pub use compact::{CompactMechanism, NoiseParameter, FORMAT_VERSION_COMPACT, KIND_GEOMETRIC_REMAP};
pub use deploy::Recorded;
pub use error::{ArtifactError, ArtifactErrorKind, AuditError, MechanismError};
pub(crate) use posterior::lower_median;
pub use posterior::{BayesEstimate, CredibleRegion, Posterior};
pub use release::Release;
pub use trust::{DeploymentMode, REQUIRE_MODEL_ENV};

use crate::certify::{exact, PrivacyViolation, Repaired};
pub use crate::certify::{
    ConstraintBreach, ConstraintCertificate, PrivacyCertificate, RepairCandidate, RepairMethod, RepairReport,
    DEFAULT_TOTAL, MAX_TOTAL,
};
use crate::lp::{cost_matrix, MemoryBudget};
use crate::model::{Model, ModelSpec};
use crate::output::grid_json;
use crate::output::OutputError;
use crate::solve::{Solution, Status};
use error::Result;

/// The format version of dense (ε, δ) files with the weights as JSON arrays
/// ([`Mechanism::to_json`] writes 1 for pure ε, 2 for δ > 0, and 4 above 2^20 weights; see the
/// module docs, "File format").
pub const FORMAT_VERSION: u32 = 2;

/// The format version of pure-ε files.
pub const FORMAT_VERSION_PURE: u32 = 1;

/// The format version of dense files with the weights packed (LEB128 varints in base64), pure ε or
/// (ε, δ): what [`Mechanism::to_json`] writes above 2^20 weights.
pub const FORMAT_VERSION_PACKED: u32 = 4;

/// The `format` tag of a mechanism file.
pub const FORMAT_NAME: &str = "ubapp-mechanism";

/// Where a mechanism came from (recorded in the artifact; not part of the certificate).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Provenance {
    /// Bayes risk of the solver's float P (before repair), if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lp_bayes_risk: Option<f64>,
    /// bayes_risk − lp_bayes_risk: what repair and quantisation cost.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repair_risk_cost: Option<f64>,
    /// The solver's name, status and own words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub solver: Option<SolverInfo>,
    /// What the repair did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repair: Option<RepairReport>,
    /// Bayes risk of the certified mechanism each repair method produced (the lower one is kept).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub repair_candidates: Vec<RepairCandidate>,
    /// The solver's Lagrangian lower bound on the optimal risk (valid for every ε-DP mechanism on
    /// this output grid), if it gave multipliers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dual_bound: Option<f64>,
    /// (bayes_risk − dual_bound)/bayes_risk: how far the certified mechanism can be from optimal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub optimality_gap: Option<f64>,
    /// True when `dual_bound` was proven in directed rounding over the LP as stored (a theorem,
    /// not a float estimate); absent in files written before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dual_bound_exact: Option<bool>,
}

/// The solver that produced the float P.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SolverInfo {
    /// Solver name, e.g. `clarabel`.
    pub name: String,
    /// Status after ubapp's own checks (`optimal`, `near-optimal` in the file).
    pub status: Status,
    /// The backend's own word on the outcome.
    pub detail: String,
}

/// A certified mechanism: integer weights per observation, their (ε, δ) certificate and exact sampler.
#[derive(Debug, Clone)]
pub struct Mechanism {
    model: Model,
    cert: PrivacyCertificate,
    total: u64,
    /// columns[i][k] = `w[k, i]`.
    columns: Vec<Vec<u64>>,
    /// Prefix sums per column, for the inverse CDF.
    cum: Vec<Vec<u64>>,
    bayes_risk: f64,
    /// What the weights carry of the model's `[constraints]`, checked exactly (`None`: none).
    constraints: Option<ConstraintCertificate>,
    /// Where it came from.
    pub provenance: Provenance,
}

impl Mechanism {
    /// Build a certified mechanism from a float P (|Θ̃| × |Y|, `p[k,i] = Pr(θ̃_k | y_i)`) for
    /// `model` at target `eps` (and the model's δ): every repair method for that δ is tried
    /// ([`RepairMethod::for_delta`]), each quantised to total 2^52 and checked exactly, and the one
    /// with the lowest Bayes risk is kept.
    pub(crate) fn certify_from_float(model: &Model, eps: f64, p: &Array2<f64>) -> Result<Mechanism> {
        let expected = (model.outputs.len(), model.family.observation_count());
        if p.dim() != expected {
            return Err(crate::certify::CertifyError::Shape { found: p.dim(), expected }.into());
        }
        let cost = cost_matrix(model, MemoryBudget::from_env())?;
        let price = |q: &Array2<f64>| (&cost.t() * q).sum();
        let release = repair_for_model(model, eps, p, &price)?;
        let lp_risk = price(p);
        Ok(Mechanism::from_release(model.clone(), release, &cost, lp_risk))
    }

    /// The mechanism a solve releases: the release [`crate::solve::solve_model`] already repaired,
    /// priced and certified on the LP path (no second repair), or the chain solver's exact P
    /// repaired here, with the solver recorded in the provenance.
    pub(crate) fn from_solution(model: &Model, solution: &Solution) -> Result<Mechanism> {
        let cost = cost_matrix(model, MemoryBudget::from_env())?;
        Mechanism::from_solution_priced(model, solution, &cost)
    }

    /// [`Mechanism::from_solution`] priced by `cost`, the model's cost matrix (a solve plan's,
    /// built once for the solve).
    pub(crate) fn from_solution_priced(model: &Model, solution: &Solution, cost: &Array2<f64>) -> Result<Mechanism> {
        let release = match solution.repaired() {
            Some(r) => r.clone(),
            None if solution.status.has_solution() => {
                let price = |q: &Array2<f64>| (&cost.t() * q).sum();
                repair_for_model(model, solution.eps, &solution.p, &price)?
            }
            None => {
                return Err(
                    crate::solve::SolveError::NothingToRelease { eps: solution.eps, status: solution.status }.into()
                )
            }
        };
        let mut m = Mechanism::from_release(model.clone(), release, cost, solution.bayes_risk);
        m.provenance.solver = Some(SolverInfo {
            name: solution.solver.clone(),
            status: solution.status,
            detail: solution.solver_detail.clone(),
        });
        m.provenance.dual_bound = solution.checks.dual_bound;
        m.provenance.optimality_gap = solution.checks.dual_bound.map(|d| (m.bayes_risk - d) / m.bayes_risk);
        m.provenance.dual_bound_exact = solution.checks.dual_bound.map(|_| solution.checks.dual_bound_exact);
        m.provenance = m.provenance.finite_only();
        Ok(m)
    }

    fn from_release(model: Model, release: Repaired, cost: &Array2<f64>, lp_risk: f64) -> Mechanism {
        let bayes_risk = weights_risk(cost, &release.columns, release.total);
        let provenance = Provenance {
            lp_bayes_risk: Some(lp_risk),
            repair_risk_cost: Some(bayes_risk - lp_risk),
            repair: Some(release.report),
            repair_candidates: release.candidates,
            ..Provenance::default()
        };
        let mut m =
            Mechanism::assemble(model, release.certificate, release.total, release.columns, bayes_risk, provenance);
        m.constraints = release.constraints;
        m
    }

    /// Build from integer weights `columns[i][k]` at target `eps` and the model's δ, checking
    /// everything [`Mechanism::from_json_str`] checks about the weights (shape, totals, exact
    /// certificate). Input errors name the field.
    pub(crate) fn from_weights(model: Model, eps: f64, total: u64, columns: Vec<Vec<u64>>) -> Result<Mechanism> {
        let cert = check_weights(&model, eps, model.delta, total, &columns)
            .map_err(|kind| ArtifactError::new(model.name().to_string(), kind))?;
        let carried = check_carried(&model, &columns, total, None)
            .map_err(|kind| ArtifactError::new(model.name().to_string(), kind))?;
        let cost = cost_matrix(&model, MemoryBudget::from_env())?;
        let risk = weights_risk(&cost, &columns, total);
        let mut m = Mechanism::assemble(model, cert, total, columns, risk, Provenance::default());
        m.constraints = carried;
        Ok(m)
    }

    fn assemble(
        model: Model,
        cert: PrivacyCertificate,
        total: u64,
        columns: Vec<Vec<u64>>,
        bayes_risk: f64,
        provenance: Provenance,
    ) -> Mechanism {
        let cum = columns.iter().map(|c| sampler::prefix_sums(c)).collect();
        Mechanism {
            model,
            cert,
            total,
            columns,
            cum,
            bayes_risk,
            constraints: None,
            provenance: provenance.finite_only(),
        }
    }

    /// What the weights were checked to carry of the model's `[constraints]`: the inequalities
    /// exactly, the equalities' proven largest deviation (`None`: the model has none).
    pub fn constraints(&self) -> Option<&ConstraintCertificate> {
        self.constraints.as_ref()
    }

    /// The model it was designed for.
    pub fn model(&self) -> &Model {
        &self.model
    }

    /// The target ε.
    pub fn eps(&self) -> f64 {
        self.cert.eps
    }

    /// The ε the weights certify (≤ [`Mechanism::eps`]), rounded up; for δ > 0 the target ε (the
    /// ε of the certified pair (eps, certified_delta)).
    pub fn certified_eps(&self) -> f64 {
        self.cert.certified_eps
    }

    /// The target δ (0: pure ε-DP).
    pub fn delta(&self) -> f64 {
        self.cert.delta
    }

    /// The δ the weights spend at eps (≤ [`Mechanism::delta`]), rounded up; 0 for pure ε.
    pub fn certified_delta(&self) -> f64 {
        self.cert.certified_delta
    }

    /// The whole certificate.
    pub fn certificate(&self) -> PrivacyCertificate {
        self.cert
    }

    /// The common column total T (a power of two).
    pub fn total(&self) -> u64 {
        self.total
    }

    /// Weights `w[k, i]` of observation `i` (index into Y), one per output.
    pub fn column(&self, i: usize) -> &[u64] {
        &self.columns[i]
    }

    /// |Y|.
    pub fn n_observations(&self) -> usize {
        self.columns.len()
    }

    /// |Θ̃|.
    pub fn n_outputs(&self) -> usize {
        self.model.outputs.len()
    }

    /// Output θ̃_k.
    pub fn output(&self, k: usize) -> ArrayView1<'_, f64> {
        self.model.outputs.point(k)
    }

    /// Bayes risk Σ `c[k,i]` `w[k,i]`/T of the certified mechanism under the model's discretised prior.
    pub fn bayes_risk(&self) -> f64 {
        self.bayes_risk
    }

    /// The probabilities w/T as floats (|Θ̃| × |Y|), for evaluation (not for sampling).
    pub fn probabilities(&self) -> Array2<f64> {
        let t = self.total as f64;
        Array2::from_shape_fn((self.n_outputs(), self.n_observations()), |(k, i)| self.columns[i][k] as f64 / t)
    }

    /// The index of observation `y` (its coordinates, one for a one-dimensional Y; exact match),
    /// or `None` if y ∉ Y.
    pub fn observation_index(&self, y: &[f64]) -> Option<usize> {
        let obs = self.model.family.observations();
        (obs.dim() == y.len()).then(|| (0..obs.len()).position(|j| obs.point(j).iter().eq(y.iter()))).flatten()
    }

    /// Draw one output index for observation index `i`: exact, Pr(k) = `w[k,i]`/T (see module docs).
    /// Panics if `i` ≥ |Y|.
    pub fn sample<R: Rng + ?Sized>(&self, i: usize, rng: &mut R) -> usize {
        let u = sampler::uniform_below(rng, self.total);
        sampler::inverse_cdf(&self.cum[i], u)
    }

    /// `n` independent draws for observation index `i`.
    pub fn sample_batch<R: Rng + ?Sized>(&self, i: usize, n: usize, rng: &mut R) -> Vec<usize> {
        (0..n).map(|_| self.sample(i, rng)).collect()
    }

    /// The versioned JSON artifact (see `docs/deploying.md`): version 1 for pure ε, version 2 with
    /// `delta` and `certified_delta` for δ > 0; weights as JSON integers (the total is at most
    /// 2^52, so every weight is exactly representable as a double). Above 2^20 weights, version 4:
    /// the same fields with the weights packed in one string (module docs, "File format").
    pub fn to_json(&self) -> Value {
        self.to_json_packed_above(packed::PACKED_ABOVE)
    }

    /// [`Mechanism::to_json`], packed above `packed_above` weights rather than 2^20.
    pub(crate) fn to_json_packed_above(&self, packed_above: usize) -> Value {
        serde_json::to_value(self.to_file(packed_above)).expect("a mechanism file serialises")
    }

    /// The file's fields; the weights packed (version 4) when there are more than `packed_above`.
    fn to_file(&self, packed_above: usize) -> MechanismFile {
        let c = &self.cert;
        let with_delta = c.delta > 0.0;
        let packed = packed::packs(self.n_observations(), self.n_outputs(), packed_above);
        let format_version = match (packed, with_delta) {
            (true, _) => FORMAT_VERSION_PACKED,
            (false, true) => FORMAT_VERSION,
            (false, false) => FORMAT_VERSION_PURE,
        };
        MechanismFile {
            format: FORMAT_NAME.to_string(),
            format_version,
            tool_version: env!("CARGO_PKG_VERSION").to_string(),
            model: self.model.spec.clone(),
            model_fingerprint: Some(self.model.fingerprint()),
            eps: c.eps,
            certified_eps: c.certified_eps,
            delta: (with_delta || packed).then_some(c.delta),
            certified_delta: (with_delta || packed).then_some(c.certified_delta),
            bayes_risk: self.bayes_risk,
            outputs: grid_json(&self.model.outputs),
            observations: grid_json(&self.model.family.observations()),
            total: self.total,
            columns: (!packed).then(|| self.columns.clone()),
            weights_encoding: packed.then(|| packed::ENCODING.to_string()),
            weights: packed.then(|| packed::encode(&self.columns)),
            constraints: self.constraints,
            provenance: self.provenance.clone(),
        }
    }

    /// Parse and verify a mechanism file's text; `origin` names it in messages. Re-derives the
    /// certificate from the weights alone (the stored `certified_eps` is only compared against it).
    #[cfg(test)]
    pub(crate) fn from_json_str(text: &str, origin: &str) -> Result<Mechanism> {
        let shape = shape_of(text, origin)?;
        Mechanism::parse(text, &shape).map_err(|kind| ArtifactError::new(origin, kind).into())
    }

    /// [`Mechanism::from_json_str`] of a text whose shape was priced already.
    pub(crate) fn from_shaped(text: &str, shape: &Shape, origin: &str) -> Result<Mechanism> {
        Mechanism::parse(text, shape).map_err(|kind| ArtifactError::new(origin, kind).into())
    }

    fn parse(text: &str, shape: &Shape) -> std::result::Result<Mechanism, ArtifactErrorKind> {
        use ArtifactErrorKind as K;
        let field = |field: &str, problem: String| K::Field { field: field.to_string(), problem };
        let version = check_format(shape)?;
        if version == FORMAT_VERSION_COMPACT {
            return Err(K::NotAMechanism {
                reason: format!(
                    "format_version is {version}: a compact artifact, not a dense one (read it as a release: `ubapp verify`, `Release::load`)"
                ),
            });
        }
        let file: MechanismFile = typed(text)?;
        // Version 1 is pure ε and has no δ fields; versions 2 and 4 must state both.
        let (delta, claimed_delta) = match (version, file.delta, file.certified_delta) {
            (1, None, None) => (0.0, 0.0),
            (1, _, _) => {
                return Err(field(
                    "delta",
                    "and certified_delta are not part of format_version 1 (pure ε); (ε, δ) files are version 2".into(),
                ))
            }
            (_, Some(d), Some(c)) => (d, c),
            (_, d, _) => {
                let missing = if d.is_none() { "delta" } else { "certified_delta" };
                return Err(field(
                    missing,
                    format!("is missing (format_version {version} states delta and certified_delta)"),
                ));
            }
        };
        let model = Model::from_inline_spec(file.model).map_err(|e| K::Model(Box::new(e)))?;
        if !(delta.is_finite() && (0.0..1.0).contains(&delta)) {
            return Err(field("delta", format!("must be a number in [0, 1) (got {delta})")));
        }
        if delta > model.delta {
            return Err(field(
                "delta",
                format!(
                    "= {delta} is larger than the embedded model's delta = {}: the file claims a budget its model does not allow",
                    model.delta
                ),
            ));
        }
        // The file's own arrays bound everything below: their lengths are checked against the
        // model before any |Y|-sized list is built from the model.
        let n_obs = model.family.observation_count();
        if let Some(columns) = file.columns.as_ref().filter(|c| c.len() != n_obs) {
            return Err(field(
                "columns",
                format!("has {} entries but the model has |Y| = {n_obs} observations", columns.len()),
            ));
        }
        if grid_json(&model.outputs) != file.outputs {
            return Err(field("outputs", "differ from the output grid of the embedded model".into()));
        }
        if grid_json(&model.family.observations()) != file.observations {
            return Err(field("observations", "differ from the observation space of the embedded model".into()));
        }
        let held = Held { columns: file.columns, weights_encoding: file.weights_encoding, weights: file.weights };
        let columns = held.columns(version, n_obs, model.outputs.len(), file.total)?;
        let cert = check_weights(&model, file.eps, delta, file.total, &columns)?;
        if file.certified_eps.is_nan() || file.certified_eps < cert.certified_eps {
            return Err(field(
                "certified_eps",
                format!("= {} claims less than the weights certify ({})", file.certified_eps, cert.certified_eps),
            ));
        }
        if claimed_delta.is_nan() || claimed_delta < cert.certified_delta {
            return Err(field(
                "certified_delta",
                format!("= {claimed_delta} claims less than the weights spend ({})", cert.certified_delta),
            ));
        }
        let cost =
            cost_matrix(&model, MemoryBudget::from_env()).map_err(|e| field("model", format!("is too large: {e}")))?;
        let risk = weights_risk(&cost, &columns, file.total);
        let risk_matches = (risk - file.bayes_risk).abs() <= 1e-9 * risk.abs().max(f64::MIN_POSITIVE);
        if !risk_matches {
            return Err(field(
                "bayes_risk",
                format!(
                    "= {} does not match the risk of the weights ({risk}): columns were edited or reordered",
                    file.bayes_risk
                ),
            ));
        }
        let carried = check_carried(&model, &columns, file.total, Some(file.constraints))?;
        // Last, so that an edit the checks above name precisely is reported as such.
        trust::check_stored_fingerprint(&model, file.model_fingerprint.as_deref())?;
        let mut m = Mechanism::assemble(model, cert, file.total, columns, risk, file.provenance);
        m.constraints = carried;
        Ok(m)
    }

    /// Write the artifact atomically (temporary file + rename), only once its text reads back
    /// and verifies (so no file `verify` would refuse is ever written).
    pub fn save(&self, path: &Path) -> Result<()> {
        let text =
            serde_json::to_string_pretty(&self.to_file(packed::PACKED_ABOVE)).expect("a mechanism file serialises");
        save_verified(path, text)
    }
}

/// Write an artifact's text to `path` atomically if it reads back as a verified artifact; else
/// write nothing and say why (a failure of ours, not of the input: exit code 1).
pub(crate) fn save_verified(path: &Path, text: String) -> Result<()> {
    if let Err(e) = Release::from_json_str(&text, &path.display().to_string()) {
        let reason = format!("the mechanism was not written: its file would not read back ({e})");
        return Err(OutputError::Io { path: path.to_path_buf(), source: std::io::Error::other(reason) }.into());
    }
    Ok(crate::output::write_atomic(path, (text + "\n").as_bytes())?)
}

impl Provenance {
    /// The same record without the numbers that are not finite (a reader expects a number where
    /// the file has one: NaN and ±∞ have no JSON form).
    pub(crate) fn finite_only(mut self) -> Provenance {
        for x in [&mut self.lp_bayes_risk, &mut self.repair_risk_cost, &mut self.dual_bound, &mut self.optimality_gap] {
            if x.is_some_and(|v| !v.is_finite()) {
                *x = None;
            }
        }
        self
    }
}

/// A mechanism file's name (for messages) and text, for either artifact kind to parse.
pub(crate) fn read_artifact(path: &Path) -> Result<(String, String)> {
    use crate::guard::read::{read_bounded, ARTIFACT_FILE_BYTES};
    let origin = path.display().to_string();
    // The text itself must fit; what parsing it builds is priced from the text ([`shape_of`]).
    let budget = MemoryBudget::from_env();
    if let Ok(meta) = std::fs::metadata(path) {
        let needed = meta.len() as u128;
        if meta.is_file() && needed > budget.in_bytes() as u128 {
            return Err(crate::guard::SizeError {
                origin: Some(origin.into()),
                needed_bytes: needed,
                available_bytes: budget.in_bytes(),
                fields: "the file (a mechanism of a smaller model)".into(),
                route: None,
            }
            .into());
        }
    }
    let bytes = read_bounded(path, ARTIFACT_FILE_BYTES)
        .map_err(|e| ArtifactError::new(&origin, ArtifactErrorKind::Unreadable { reason: e.to_string() }))?;
    let text = String::from_utf8(bytes).map_err(|_| {
        ArtifactError::new(
            &origin,
            ArtifactErrorKind::NotJson { reason: "not valid JSON (the file is not UTF-8 text)".into() },
        )
    })?;
    Ok((origin, text))
}

/// True when `text` is TOML with a model's sections (`[parameter]` and `[observation]`).
fn looks_like_model_file(text: &str) -> bool {
    text.parse::<toml::Table>().is_ok_and(|t| t.contains_key("parameter") && t.contains_key("observation"))
}

/// What a mechanism file of either kind may hold, for the pass that prices it before it is built:
/// no other top-level or provenance field, a provenance no larger than a solve writes, the
/// weights and the remap table built as plain integers, the model buffered once more (its tagged
/// tables are read whole before they are typed). Packed weights are priced by [`shape_of`].
const FILE_SCHEMA: Schema = Schema {
    known: &[
        (
            "",
            &[
                "format",
                "format_version",
                "kind",
                "tool_version",
                "model",
                "model_fingerprint",
                "eps",
                "certified_eps",
                "delta",
                "certified_delta",
                "noise",
                "bayes_risk",
                "outputs",
                "observations",
                "total",
                "columns",
                "weights_encoding",
                "weights",
                "remap",
                "constraints",
                "provenance",
            ],
        ),
        (
            "provenance",
            &[
                "lp_bayes_risk",
                "repair_risk_cost",
                "solver",
                "repair",
                "repair_candidates",
                "dual_bound",
                "optimality_gap",
                "dual_bound_exact",
            ],
        ),
        ("provenance.solver", &["name", "status", "detail"]),
    ],
    max_items: &[("provenance", 64)],
    max_string: &[
        ("provenance", 64 << 10),
        ("format", 256),
        ("kind", 256),
        ("tool_version", 256),
        ("model_fingerprint", 256),
        ("weights_encoding", 256),
    ],
    lean: &["columns", "remap"],
    buffered: &["model"],
};

/// The shape of a mechanism file's text ([`crate::guard::json::price`]): a repeated key, an
/// unknown field or an oversized provenance is refused, and a file whose parsing would need
/// more than the memory budget is refused before anything of it is built. Packed `weights` are
/// priced as the file's `observations` and `outputs` say they decode (the reader checks both
/// against the model before decoding).
pub(crate) fn shape_of(text: &str, origin: &str) -> Result<Shape> {
    let mut shape = crate::guard::json::price(text, &FILE_SCHEMA).map_err(|e| {
        let kind = match e {
            ShapeError::Syntax(message) => ArtifactErrorKind::NotJson {
                reason: if looks_like_model_file(text) {
                    "this is a model file (TOML), not a mechanism file: solve it for one ε and save the \
                     certified mechanism first (`ubapp solve MODEL --eps E --out mech.json`), then use that file"
                        .to_string()
                } else if message.contains("EOF while parsing") {
                    "the file ends early (truncated?): not a complete JSON document".to_string()
                } else {
                    format!("not valid JSON ({message})")
                },
            },
            other => {
                let (field, problem) = other.parts();
                ArtifactErrorKind::Schema { field, problem }
            }
        };
        ArtifactError::new(origin, kind)
    })?;
    if shape.has("weights") {
        let (n_obs, n_out) = (shape.length("observations").unwrap_or(0), shape.length("outputs").unwrap_or(0));
        shape.charge("weights", packed::decoded_bytes(n_obs, n_out));
    }
    let budget = MemoryBudget::from_env();
    let needed = text.len() as u128 + shape.bytes;
    if needed > budget.in_bytes() as u128 {
        let heaviest = shape.heaviest().unwrap_or("model");
        return Err(crate::guard::SizeError {
            origin: Some(origin.into()),
            needed_bytes: needed,
            available_bytes: budget.in_bytes(),
            fields: format!("its field {} (most of what reading the file builds)", quote(heaviest)).into(),
            route: None,
        }
        .into());
    }
    Ok(shape)
}

/// The versions this reader reads, oldest to newest (dense pure ε, dense (ε, δ), compact, dense
/// packed).
pub const READ_VERSIONS: std::ops::RangeInclusive<u32> = FORMAT_VERSION_PURE..=FORMAT_VERSION_PACKED;

/// The file's format and version from its shape: ours, and a version this reader reads (the
/// message derives the versions from [`READ_VERSIONS`]).
pub(crate) fn check_format(shape: &Shape) -> std::result::Result<u32, ArtifactErrorKind> {
    match shape.string("format") {
        Some(FORMAT_NAME) => {}
        other => {
            return Err(ArtifactErrorKind::NotAMechanism {
                reason: if !shape.object {
                    "not a ubapp mechanism file (expected a JSON object)".to_string()
                } else {
                    format!(
                        "not a ubapp mechanism file (its \"format\" is {}, expected \"{FORMAT_NAME}\")",
                        other.map_or("missing".to_string(), quote)
                    )
                },
            })
        }
    }
    match shape.number("format_version") {
        Some(v) if READ_VERSIONS.contains(&(v.min(u32::MAX as u64) as u32)) => Ok(v as u32),
        other => Err(ArtifactErrorKind::NotAMechanism {
            reason: format!(
                "format_version is {}, but this ubapp ({}) reads versions {} to {}",
                other.map_or("missing or not an integer".to_string(), |v| v.to_string()),
                env!("CARGO_PKG_VERSION"),
                READ_VERSIONS.start(),
                READ_VERSIONS.end()
            ),
        }),
    }
}

/// A mechanism file's text deserialised straight into its typed form (no JSON tree in between),
/// an error naming the field by its full path: where serde stops at a tagged table
/// (`model.observation`), the key holding the offending value is looked up in the text.
pub(crate) fn typed<T: serde::de::DeserializeOwned>(text: &str) -> std::result::Result<T, ArtifactErrorKind> {
    let mut de = serde_json::Deserializer::from_str(text);
    serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let (path, inner) = (e.path().to_string(), e.inner().to_string());
        let path = match crate::guard::json::key_holding(text, &path, &inner) {
            Some(key) => format!("{path}.{key}"),
            None => path,
        };
        ArtifactErrorKind::Schema {
            field: crate::guard::text::parser_message(&path),
            problem: crate::guard::text::parser_message(&inner),
        }
    })
}

/// The artifact as stored, one schema for writing and reading (format and version are checked
/// before a file is parsed into it). Field order is the file's.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct MechanismFile {
    format: String,
    format_version: u32,
    tool_version: String,
    model: ModelSpec,
    /// SHA-256 of the model's canonical form ([`Model::fingerprint`]); files written before it
    /// existed have none and get it computed on load.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    model_fingerprint: Option<String>,
    eps: f64,
    certified_eps: f64,
    /// Versions 2 and 4 only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    delta: Option<f64>,
    /// Versions 2 and 4 only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    certified_delta: Option<f64>,
    bayes_risk: f64,
    outputs: Value,
    observations: Value,
    total: u64,
    /// Versions 1 and 2: `columns[i][k]` = `w[k,i]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    columns: Option<Vec<Vec<u64>>>,
    /// Version 4: how `weights` is encoded ([`packed::ENCODING`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    weights_encoding: Option<String>,
    /// Version 4: the weights, packed ([`packed`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    weights: Option<String>,
    /// The `[constraints]` the weights carry and the equalities' proven deviation; absent for a
    /// model without constraints (and in files written before they existed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    constraints: Option<ConstraintCertificate>,
    #[serde(default)]
    provenance: Provenance,
}

/// A file's weights as it holds them: `columns` (versions 1 and 2) or `weights` packed
/// (version 4).
struct Held {
    columns: Option<Vec<Vec<u64>>>,
    weights_encoding: Option<String>,
    weights: Option<String>,
}

impl Held {
    /// The weights as columns, from the form `version` holds them in (the other form's fields
    /// refused), packed weights decoded against the model's |Y| = `n_obs` and |Θ̃| = `n_out`, each
    /// column summing to `total`.
    fn columns(
        self,
        version: u32,
        n_obs: usize,
        n_out: usize,
        total: u64,
    ) -> std::result::Result<Vec<Vec<u64>>, ArtifactErrorKind> {
        let field = |field: &str, problem: String| ArtifactErrorKind::Field { field: field.to_string(), problem };
        let not_part = |name: &str, held: &str| {
            field(name, format!("is not part of format_version {version}, whose weights are in \"{held}\""))
        };
        if version != FORMAT_VERSION_PACKED {
            if self.weights.is_some() {
                return Err(not_part("weights", "columns"));
            }
            if self.weights_encoding.is_some() {
                return Err(not_part("weights_encoding", "columns"));
            }
            return self.columns.ok_or_else(|| {
                field("columns", format!("is missing (format_version {version} holds the weights there)"))
            });
        }
        if self.columns.is_some() {
            return Err(not_part("columns", "weights"));
        }
        match self.weights_encoding.as_deref() {
            Some(packed::ENCODING) => {}
            other => {
                return Err(field(
                    "weights_encoding",
                    format!(
                        "is {}, but this ubapp reads {} only",
                        other.map_or("missing".to_string(), quote),
                        quote(packed::ENCODING)
                    ),
                ))
            }
        }
        let text = self.weights.ok_or_else(|| {
            field("weights", format!("is missing (format_version {version} holds the weights there)"))
        })?;
        packed::decode(&text, n_obs, n_out, total).map_err(|problem| field("weights", problem.to_string()))
    }
}

/// The repair a model's float P gets: every method for its δ, or the one that keeps its
/// `[constraints]`.
fn repair_for_model(
    model: &Model,
    eps: f64,
    p: &Array2<f64>,
    price: &(dyn Fn(&Array2<f64>) -> f64 + Sync),
) -> std::result::Result<Repaired, crate::certify::CertifyError> {
    let neighbours = model.family.neighbours();
    if model.constraints().is_empty() {
        crate::certify::best_repair(&neighbours, eps, model.delta, p, price)
    } else {
        crate::certify::best_repair_constrained(&neighbours, eps, model.constraints(), p, price)
    }
}

/// The model's `[constraints]` checked on the weights: the inequalities exactly, the
/// equalities' deviation bounded and, when the file records a certificate (`recorded`), its
/// constraints equal to the model's and its stated bounds no smaller than the re-derived ones.
/// `recorded` is `None` for weights that come with no file.
fn check_carried(
    model: &Model,
    columns: &[Vec<u64>],
    total: u64,
    recorded: Option<Option<ConstraintCertificate>>,
) -> std::result::Result<Option<ConstraintCertificate>, ArtifactErrorKind> {
    let field = |field: &str, problem: String| ArtifactErrorKind::Field { field: field.to_string(), problem };
    let wanted = model.constraints();
    let stated = recorded.flatten();
    if wanted.is_empty() {
        return match stated.filter(|c| !c.names.is_empty()) {
            Some(c) => {
                Err(field("constraints", format!("records {} but the embedded model states none", c.names.label())))
            }
            None => Ok(None),
        };
    }
    let derived = crate::certify::check_constraints(wanted, columns, total)
        .map_err(|breach| field("columns", format!("break the model's [constraints]: {breach}")))?;
    for (name, bound) in [("unbiased", derived.max_bias), ("fixed_point", derived.max_fixed_point_error)] {
        if let Some(b) = bound.filter(|b| b.is_nan() || *b > crate::certify::MAX_EQUALITY_ERROR) {
            return Err(field(
                "columns",
                format!(
                    "break the model's [constraints]: {name} deviates by up to {b:.3e} (at most {:e} is released)",
                    crate::certify::MAX_EQUALITY_ERROR
                ),
            ));
        }
    }
    if let Some(recorded) = recorded {
        let Some(stated) = recorded else {
            return Err(field(
                "constraints",
                format!("is missing: the embedded model states {}", wanted.names.label()),
            ));
        };
        if stated.names != wanted.names {
            return Err(field(
                "constraints",
                format!("records {} but the embedded model states {}", stated.names.label(), wanted.names.label()),
            ));
        }
        for (name, claimed, actual) in [
            ("constraints.max_bias", stated.max_bias, derived.max_bias),
            ("constraints.max_fixed_point_error", stated.max_fixed_point_error, derived.max_fixed_point_error),
        ] {
            match (claimed, actual) {
                (Some(c), Some(a)) if c >= a => {}
                (None, None) => {}
                (c, a) => {
                    return Err(field(
                        name,
                        format!(
                            "= {} claims less than the weights show (a deviation of up to {})",
                            c.map_or("nothing".into(), |v| format!("{v:e}")),
                            a.map_or("nothing".into(), |v| format!("{v:e}"))
                        ),
                    ))
                }
            }
        }
        return Ok(Some(stated));
    }
    Ok(Some(derived))
}

/// Shape, totals and the exact certificate at (eps, delta); δ = 0 is the pure-ε check.
fn check_weights(
    model: &Model,
    eps: f64,
    delta: f64,
    total: u64,
    columns: &[Vec<u64>],
) -> std::result::Result<PrivacyCertificate, ArtifactErrorKind> {
    let field = |field: &str, problem: String| ArtifactErrorKind::Field { field: field.to_string(), problem };
    if !(eps.is_finite() && eps > 0.0) {
        return Err(field("eps", format!("must be a finite number > 0 (got {eps})")));
    }
    if !(total.is_power_of_two() && (2..=MAX_TOTAL).contains(&total)) {
        return Err(field("total", format!("must be a power of two between 2 and 2^52 (got {total})")));
    }
    let (n_obs, n_out) = (model.family.observation_count(), model.outputs.len());
    if columns.len() != n_obs {
        return Err(field(
            "columns",
            format!("has {} entries but the model has |Y| = {n_obs} observations", columns.len()),
        ));
    }
    for (i, c) in columns.iter().enumerate() {
        if c.len() != n_out {
            return Err(field(
                &format!("columns[{i}]"),
                format!("has {} weights but the model has |Θ̃| = {n_out} outputs", c.len()),
            ));
        }
        let s: u128 = c.iter().map(|&w| w as u128).sum();
        if s != total as u128 {
            return Err(field(&format!("columns[{i}]"), format!("sums to {s}, not to total = {total}")));
        }
    }
    let obs = model.family.observations().values();
    let out = model.outputs.values();
    let neighbours = model.family.neighbours();
    let edges = neighbours.edges();
    let certified = if delta > 0.0 {
        exact::certify_weights_delta(columns, edges, eps, delta, total).map(|certified_delta| PrivacyCertificate {
            eps,
            delta,
            certified_eps: eps,
            certified_delta,
        })
    } else {
        exact::certify_weights(columns, edges, eps).map(|certified_eps| PrivacyCertificate {
            eps,
            delta,
            certified_eps,
            certified_delta: 0.0,
        })
    };
    certified.map_err(|e| {
        ArtifactErrorKind::NotPrivate(match e {
            PrivacyViolation::Unbounded { k, a, b } => format!(
                "output θ̃ = {} has weight > 0 at y = {} but 0 at its neighbour y = {}: no finite ε holds",
                out[k], obs[a], obs[b]
            ),
            PrivacyViolation::Exceeds { k, a, b, log_ratio } => format!(
                "the weights of θ̃ = {} at neighbours y = {} and y = {} have ratio e^{log_ratio:.6e} > e^eps (eps = {eps}): not eps-DP",
                out[k], obs[a], obs[b]
            ),
            PrivacyViolation::DeltaExceeds { a, b, spent } => format!(
                "the weights at neighbours y = {} and y = {} spend δ = {spent:e} > delta = {delta} at eps = {eps}: not (eps, delta)-DP",
                obs[a], obs[b]
            ),
        })
    })
}

/// Σ_{i,k} `C[i,k]` `w[k,i]` / T.
fn weights_risk(cost: &Array2<f64>, columns: &[Vec<u64>], total: u64) -> f64 {
    let t = total as f64;
    columns
        .iter()
        .enumerate()
        .map(|(i, c)| c.iter().enumerate().map(|(k, &w)| cost[[i, k]] * (w as f64 / t)).sum::<f64>())
        .sum()
}
