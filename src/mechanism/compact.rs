//! The compact artifact of a chain mechanism: truncated geometric noise on y with a rational
//! noise parameter, then a remap table — O(|Θ̃| + |Y|) to store, certify and sample, where the
//! dense artifact ([`super::Mechanism`]) holds |Θ̃|·|Y| weights. `ubapp solve --out` writes it
//! when the solve took the compact chain route (large binomial models with squared loss);
//! `verify`, `sample` and `audit` read either kind through [`super::Release`].
//!
//! # The privacy claim and its proof
//!
//! The file states ε' = s/2^p (integers s ≥ 1, 0 ≤ p ≤ 100, s < 2^53) and a remap table
//! r: {0..n−1} → Θ̃ (as runs). [`CompactMechanism::sample`] draws, for observation index y,
//! D ~ two-sided geometric with Pr(D = d) ∝ exp(−ε'|d|) *exactly* (Canonne, Kamath & Steinke
//! 2020, Alg. 1–2: integer arithmetic and uniform integers only, no floating point; see
//! `solve::compact`), then releases r(clamp(y + D, 0, n−1)).
//!
//! **Claim.** If ε' ≤ ε (checked exactly) and the model's neighbour relation is the chain on
//! observation indices (y ~ y' iff |y − y'| = 1; checked from the embedded model), the sampled
//! mechanism is ε'-DP, hence ε-DP.
//!
//! **Proof.** W = y + D has Pr(W = w | y) = κ exp(−ε'|w − y|) with κ independent of y, so for
//! |y − y'| ≤ 1, Pr(W = w | y)/Pr(W = w | y') = exp(ε'(|w − y'| − |w − y|)) ≤ exp(ε'|y − y'|) ≤ e^{ε'}
//! by the triangle inequality, for every w ∈ ℤ; summing over any set of w gives the DP inequality
//! for every event of W. The release r(clamp(W, 0, n−1)) is a deterministic function of W
//! (post-processing), so every event of it is an event of W: it is ε'-DP for neighbouring y.
//! Datasets reach y through the model's statistic, as for the dense artifact. □
//!
//! Nothing about the remap table matters to privacy — only that it is a function of the noisy
//! value (every entry an output index). `certified_eps` is ε' itself: s < 2^53 and p ≤ 100 make
//! s·2^−p an exact double, so the comparison ε' ≤ ε is exact too.
//!
//! # What else is checked
//!
//! The remap's runs start at 0, increase strictly, stay below |Y| and name outputs of the
//! model's grid; `observations` equals |Y|; the stated Bayes risk matches the risk of the
//! *sampled* mechanism (geometric(ε') + remap, O(|Y|) by the squared-loss moments) to 1e-9
//! relative, so an edited table is refused. The model must be one whose costs have the compact
//! form (binomial, squared loss, one-dimensional grid).
//!
//! # File format
//!
//! `format = "ubapp-mechanism"`, `format_version = 3`, `kind = "geometric-remap"`: a version an
//! older reader refuses by number (it reads 1 and 2) instead of misreading. The dense versions 1
//! and 2 are unchanged.

use std::path::Path;

use ndarray::Array2;
use rand::Rng;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::error::Result;
use super::sampler::{discrete_laplace, DyadicEps};
use super::{ArtifactError, ArtifactErrorKind, Provenance, SolverInfo, FORMAT_NAME};
use crate::model::{Model, ModelSpec};
use crate::output::grid_json;
use crate::solve::chain::geometric::run_values;
use crate::solve::chain::{compact_applies, squared_moments};
use crate::solve::compact::{GeometricRemap, Kernel};
use crate::solve::Solution;

/// The format version of compact (geometric + remap) files.
pub const FORMAT_VERSION_COMPACT: u32 = 3;

/// The `kind` of a compact file.
pub const KIND_GEOMETRIC_REMAP: &str = "geometric-remap";

/// The sampler's noise parameter ε' = numerator / 2^log2_denominator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NoiseParameter {
    /// s ≥ 1 (below 2^53).
    pub numerator: u64,
    /// p, 0 ≤ p ≤ 100.
    pub log2_denominator: u32,
}

impl NoiseParameter {
    /// ε' as a double (exact: s < 2^53 and p ≤ 100).
    pub fn value(self) -> f64 {
        self.numerator as f64 * 2f64.powi(-(self.log2_denominator as i32))
    }
}

/// A certified geometric + remap mechanism (see the module docs).
#[derive(Debug, Clone)]
pub struct CompactMechanism {
    model: Model,
    eps: f64,
    noise: NoiseParameter,
    /// (first z, output index), z increasing from 0.
    runs: Vec<(usize, u32)>,
    bayes_risk: f64,
    /// Where it came from.
    pub provenance: Provenance,
    /// Its dense probabilities, computed on first use (evaluation only; sampling never needs them).
    dense: std::sync::OnceLock<Array2<f64>>,
}

/// The compact file as stored (format, version and kind are checked before it is parsed).
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct CompactFile {
    format: String,
    format_version: u32,
    kind: String,
    tool_version: String,
    model: ModelSpec,
    /// SHA-256 of the model's canonical form ([`Model::fingerprint`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    model_fingerprint: Option<String>,
    eps: f64,
    certified_eps: f64,
    noise: NoiseParameter,
    bayes_risk: f64,
    observations: usize,
    outputs: Value,
    /// [first z, output index] per run.
    remap: Vec<(usize, u32)>,
    #[serde(default)]
    provenance: Provenance,
}

fn field(field: &str, problem: String) -> ArtifactErrorKind {
    ArtifactErrorKind::Field { field: field.to_string(), problem }
}

impl CompactMechanism {
    /// The compact mechanism of a solve that took the compact chain route
    /// ([`Solution::compact`]), its risk re-measured as sampled (at ε').
    pub(crate) fn from_solution(model: &Model, solution: &Solution) -> Result<CompactMechanism> {
        let Some(g) = solution.compact() else {
            return Err(crate::solve::SolveError::NotApplicable {
                choice: crate::solve::SolverChoice::Chain,
                requirement: "writes a compact artifact only for a compact chain solution",
                model: model.name().to_string(),
            }
            .into());
        };
        let Some(d) = DyadicEps::below(solution.eps).filter(|d| d.s < 1 << 53) else {
            return Err(super::MechanismError::argument(
                crate::guard::Parameter::Eps,
                format!("= {} has no exact sampler here", solution.eps),
            ));
        };
        let noise = NoiseParameter { numerator: d.s as u64, log2_denominator: d.t.trailing_zeros() };
        let runs: Vec<(usize, u32)> = g.runs();
        let mut m = CompactMechanism::check(model.clone(), solution.eps, noise, runs)
            .map_err(|kind| ArtifactError::new(model.name().to_string(), kind))?;
        m.provenance = Provenance {
            lp_bayes_risk: Some(solution.bayes_risk),
            repair_risk_cost: Some(m.bayes_risk - solution.bayes_risk),
            solver: Some(SolverInfo {
                name: solution.solver.clone(),
                status: solution.status,
                detail: solution.solver_detail.clone(),
            }),
            dual_bound: solution.checks.dual_bound,
            optimality_gap: solution.checks.dual_bound.map(|b| (m.bayes_risk - b) / m.bayes_risk),
            ..Provenance::default()
        }
        .finite_only();
        Ok(m)
    }

    /// Every check of the module docs; the risk is computed here.
    fn check(
        model: Model,
        eps: f64,
        noise: NoiseParameter,
        runs: Vec<(usize, u32)>,
    ) -> std::result::Result<CompactMechanism, ArtifactErrorKind> {
        if !(eps.is_finite() && eps > 0.0) {
            return Err(field("eps", format!("must be a finite number > 0 (got {eps})")));
        }
        if !compact_applies(&model) {
            return Err(field(
                "model",
                "is not one a compact artifact describes (binomial observation, squared loss, one-dimensional grid)"
                    .into(),
            ));
        }
        let n = model.family.observation_count();
        if !model.family.neighbours().is_chain() {
            return Err(field("model", "does not have the chain neighbour relation y ~ y ± 1".into()));
        }
        if noise.numerator == 0 || noise.numerator >= 1 << 53 || noise.log2_denominator > 100 {
            return Err(field(
                "noise",
                format!(
                    "must have 1 ≤ numerator < 2^53 and log2_denominator ≤ 100 (got {} / 2^{})",
                    noise.numerator, noise.log2_denominator
                ),
            ));
        }
        let eps_noise = noise.value();
        if eps_noise > eps {
            return Err(ArtifactErrorKind::NotPrivate(format!(
                "the noise parameter {} / 2^{} = {eps_noise} exceeds eps = {eps}: not eps-DP",
                noise.numerator, noise.log2_denominator
            )));
        }
        let n_out = model.outputs.len();
        if runs.first().map(|r| r.0) != Some(0) {
            return Err(field("remap", "must start with a run at z = 0".into()));
        }
        for (j, w) in runs.windows(2).enumerate() {
            if w[1].0 <= w[0].0 {
                return Err(field(&format!("remap[{}]", j + 1), "does not start after the run before it".into()));
            }
        }
        if let Some((j, r)) = runs.iter().enumerate().find(|(_, r)| r.0 >= n || r.1 as usize >= n_out) {
            return Err(field(
                &format!("remap[{j}]"),
                format!("= [{}, {}] lies outside |Y| = {n} observations or |Θ̃| = {n_out} outputs", r.0, r.1),
            ));
        }
        let bayes_risk = sampled_risk(&model, eps_noise, &runs);
        Ok(CompactMechanism {
            model,
            eps,
            noise,
            runs,
            bayes_risk,
            provenance: Provenance::default(),
            dense: std::sync::OnceLock::new(),
        })
    }

    /// The model it was designed for.
    pub fn model(&self) -> &Model {
        &self.model
    }

    /// The target ε.
    pub fn eps(&self) -> f64 {
        self.eps
    }

    /// The ε the sampler realises and certifies: ε' = s/2^p ≤ ε, exact.
    pub fn certified_eps(&self) -> f64 {
        self.noise.value()
    }

    /// The noise parameter.
    pub fn noise(&self) -> NoiseParameter {
        self.noise
    }

    /// The remap as runs (first z, output index).
    pub fn runs(&self) -> &[(usize, u32)] {
        &self.runs
    }

    /// |Y|.
    pub fn n_observations(&self) -> usize {
        self.model.family.observation_count()
    }

    /// |Θ̃|.
    pub fn n_outputs(&self) -> usize {
        self.model.outputs.len()
    }

    /// Bayes risk of the mechanism as sampled (geometric(ε') + remap).
    pub fn bayes_risk(&self) -> f64 {
        self.bayes_risk
    }

    /// Draw one output index for observation index `y` (exact; integer arithmetic only).
    /// Panics if `y` ≥ |Y|.
    pub fn sample<R: Rng + ?Sized>(&self, y: usize, rng: &mut R) -> usize {
        let n = self.n_observations();
        assert!(y < n, "observation {y} outside Y = 0..{n}");
        let t = 1u128 << self.noise.log2_denominator;
        let mut rng = rng; // `&mut R` is a sized Rng even when R is not
        let z = (y as i128 + discrete_laplace(self.noise.numerator as u128, t, &mut rng)).clamp(0, n as i128 - 1);
        let run = self.runs.partition_point(|r| r.0 as i128 <= z) - 1;
        self.runs[run].1 as usize
    }

    /// Pr(θ̃_k | y) of what is sampled, geometric(ε') + remap (|Θ̃| × |Y|, O(runs · |Y|); computed once).
    pub fn probabilities(&self) -> &Array2<f64> {
        self.dense.get_or_init(|| {
            let n = self.n_observations();
            let eps = self.noise.value();
            GeometricRemap { eps, remap: expand_runs(&self.runs, n), n_outputs: self.n_outputs() }.to_dense_by_runs(eps)
        })
    }

    /// The versioned JSON artifact (format version 3).
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self.to_file()).expect("a compact mechanism file serialises")
    }

    fn to_file(&self) -> CompactFile {
        CompactFile {
            format: FORMAT_NAME.to_string(),
            format_version: FORMAT_VERSION_COMPACT,
            kind: KIND_GEOMETRIC_REMAP.to_string(),
            tool_version: env!("CARGO_PKG_VERSION").to_string(),
            model: self.model.spec.clone(),
            model_fingerprint: Some(self.model.fingerprint()),
            eps: self.eps,
            certified_eps: self.certified_eps(),
            noise: self.noise,
            bayes_risk: self.bayes_risk,
            observations: self.n_observations(),
            outputs: grid_json(&self.model.outputs),
            remap: self.runs.clone(),
            provenance: self.provenance.clone(),
        }
    }

    /// Parse and verify a compact file's text (its shape priced, format and version read).
    pub(super) fn parse(text: &str) -> std::result::Result<CompactMechanism, ArtifactErrorKind> {
        let file: CompactFile = super::typed(text)?;
        if file.kind != KIND_GEOMETRIC_REMAP {
            return Err(ArtifactErrorKind::NotAMechanism {
                reason: format!(
                    "format_version {FORMAT_VERSION_COMPACT} has kind \"{KIND_GEOMETRIC_REMAP}\", not {}",
                    crate::guard::text::quote(&file.kind)
                ),
            });
        }
        let model = Model::from_inline_spec(file.model).map_err(|e| ArtifactErrorKind::Model(Box::new(e)))?;
        if file.observations != model.family.observation_count() {
            return Err(field(
                "observations",
                format!(
                    "= {} differs from the embedded model's |Y| = {}",
                    file.observations,
                    model.family.observation_count()
                ),
            ));
        }
        if grid_json(&model.outputs) != file.outputs {
            return Err(field("outputs", "differ from the output grid of the embedded model".into()));
        }
        let m = CompactMechanism::check(model, file.eps, file.noise, file.remap)?;
        if file.certified_eps.is_nan() || file.certified_eps < m.certified_eps() {
            return Err(field(
                "certified_eps",
                format!("= {} claims less than the noise certifies ({})", file.certified_eps, m.certified_eps()),
            ));
        }
        let risk = m.bayes_risk;
        if (risk - file.bayes_risk).abs() > 1e-9 * risk.abs().max(f64::MIN_POSITIVE) {
            return Err(field(
                "bayes_risk",
                format!(
                    "= {} does not match the risk of the mechanism ({risk}): the remap or noise was edited",
                    file.bayes_risk
                ),
            ));
        }
        super::trust::check_stored_fingerprint(&m.model, file.model_fingerprint.as_deref())?;
        Ok(CompactMechanism { provenance: file.provenance, ..m })
    }

    /// Write the artifact atomically, only once its text reads back and verifies.
    pub fn save(&self, path: &Path) -> Result<()> {
        let text = serde_json::to_string_pretty(&self.to_file()).expect("a compact mechanism file serialises");
        super::save_verified(path, text)
    }
}

/// The remap table z → output index, expanded from its runs.
fn expand_runs(runs: &[(usize, u32)], n: usize) -> Vec<u32> {
    let mut remap = vec![0u32; n];
    for (j, &(start, k)) in runs.iter().enumerate() {
        let end = runs.get(j + 1).map_or(n, |r| r.0);
        remap[start..end].fill(k);
    }
    remap
}

/// Σ_z b_z for geometric(ε') + the remap: the Bayes risk of what is sampled, in O(|Y|) by the
/// squared-loss moments.
fn sampled_risk(model: &Model, eps: f64, runs: &[(usize, u32)]) -> f64 {
    let costs = squared_moments(model).expect("compact_applies was checked");
    let n = model.family.observation_count();
    let remap = expand_runs(runs, n);
    let values = run_values(&costs, &Kernel::new(n, eps), &remap);
    crate::solve::chain::certificate::sum_lower(&values).max(values.iter().sum())
}

#[cfg(test)]
mod tests {
    use rand::rngs::StdRng;
    use rand::SeedableRng;

    use super::*;
    use crate::mechanism::Release;

    fn tiny() -> Model {
        let text = "name = \"tiny\"\nepsilon = [0.7]\n[parameter]\nlower = 0.0\nupper = 1.0\n\
                    grid = { kind = \"midpoint\", points = 9 }\nprior = { kind = \"uniform\" }\n\
                    [observation]\nfamily = \"binomial\"\ntrials = 8\n[loss]\nkind = \"squared\"\n";
        Model::from_spec(ModelSpec::from_toml(text, "tiny").unwrap()).unwrap()
    }

    /// Chi-square goodness of fit of the compact sampler against geometric(ε') + remap (the
    /// distribution the proof is about). 7 cells of positive probability per column (6 degrees
    /// of freedom): the 1e-4 upper quantile is ≈ 27.9; three columns, so a false failure has
    /// probability ≤ 3e-4 (and the seed is fixed).
    #[test]
    fn compact_sampler_matches_its_distribution() {
        let remap = vec![0u32, 1, 1, 2, 3, 4, 5, 6, 8];
        let g = GeometricRemap { eps: 0.7, remap, n_outputs: 9 };
        let d = DyadicEps::below(0.7).unwrap();
        let noise = NoiseParameter { numerator: d.s as u64, log2_denominator: d.t.trailing_zeros() };
        let m = CompactMechanism::check(tiny(), 0.7, noise, g.runs()).unwrap();
        assert!(m.certified_eps() <= 0.7 && m.certified_eps() == d.value());
        let p = g.to_dense_by_runs(noise.value());
        let mut rng = StdRng::seed_from_u64(20261123);
        let draws = 40_000;
        for y in [0usize, 4, 8] {
            let mut counts = [0usize; 9];
            for _ in 0..draws {
                counts[m.sample(y, &mut rng)] += 1;
            }
            let chi2: f64 = (0..9)
                .filter(|&k| p[[k, y]] > 0.0)
                .map(|k| {
                    let e = p[[k, y]] * draws as f64;
                    (counts[k] as f64 - e).powi(2) / e
                })
                .sum();
            assert!(chi2 < 27.9, "y = {y}: χ² = {chi2}");
            assert_eq!(counts[7], 0, "output 7 is not in the remap");
        }
    }

    #[test]
    fn compact_json_round_trips_and_refuses_a_noise_above_eps() {
        let g = GeometricRemap { eps: 0.7, remap: vec![0, 0, 1, 2, 3, 4, 5, 6, 8], n_outputs: 9 };
        let d = DyadicEps::below(0.7).unwrap();
        let noise = NoiseParameter { numerator: d.s as u64, log2_denominator: d.t.trailing_zeros() };
        let m = CompactMechanism::check(tiny(), 0.7, noise, g.runs()).unwrap();
        let text = serde_json::to_string(&m.to_json()).unwrap();
        let Release::Compact(back) = Release::from_json_str(&text, "t").unwrap() else { panic!("compact expected") };
        assert_eq!(back.runs(), m.runs());
        assert_eq!(back.bayes_risk(), m.bayes_risk());
        let mut v = m.to_json();
        v["noise"]["numerator"] = (d.s as u64 + 1).into();
        let err = Release::from_json_str(&v.to_string(), "t").unwrap_err().to_string();
        assert!(err.contains("not eps-DP"), "{err}");
    }
}
