//! What a comparison produces: table rows (`risk.csv`, `--json`), risk(θ) curves and UBaPP heat maps.

use std::fmt;

use ndarray::Array2;
use serde::{Deserialize, Serialize};

use super::Method;
use crate::eval::{Privacy, PrivacyKind, RiskMethod, ScalarLoss};
use crate::model::Objective;
use crate::solve::Status;

/// One row of `risk.csv` (and of `compare --json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Row {
    /// The method.
    pub method: Method,
    /// Its kind of privacy guarantee (`pure-eps` or `eps-delta`), from its estimator.
    pub privacy: PrivacyKind,
    /// ε.
    pub eps: f64,
    /// δ (0 for pure ε-DP).
    pub delta: f64,
    /// K.
    pub trials: u64,
    /// Parties / sites for the distributed methods (empty otherwise).
    pub parties: Option<u64>,
    /// Σ_j π_j risk(θ_j) under the model's discretised prior.
    #[serde(deserialize_with = "nan_from_null")]
    pub bayes_risk: f64,
    /// Its standard error (0 unless Monte Carlo).
    #[serde(deserialize_with = "nan_from_null")]
    pub bayes_risk_se: f64,
    /// ∫ risk(θ) π(θ) dθ under the continuous prior.
    #[serde(deserialize_with = "nan_from_null")]
    pub true_risk: f64,
    /// Its standard error.
    #[serde(deserialize_with = "nan_from_null")]
    pub true_risk_se: f64,
    /// How the risks were computed (the least exact of the two).
    pub risk_method: RiskMethod,
    /// What the row says beside its risks (the CSV's `note` column is [`Note`]'s text).
    #[serde(default, skip_serializing_if = "Note::is_empty")]
    pub note: Note,
}

impl Row {
    /// A row read back from a file, checked before it is used: ε finite and > 0, δ in [0, 1),
    /// every risk and standard error a finite number ≥ 0 (the true risk and its error may be
    /// missing, `null`, only in a row that says it has none). Else the field and what is wrong.
    pub(crate) fn check(&self) -> Result<(), (&'static str, String)> {
        if !(self.eps.is_finite() && self.eps > 0.0) {
            return Err(("eps", format!("must be a finite number > 0 (got {})", self.eps)));
        }
        if !(self.delta.is_finite() && (0.0..1.0).contains(&self.delta)) {
            return Err(("delta", format!("must be a number in [0, 1) (got {})", self.delta)));
        }
        let absent = self.note.no_true_risk;
        for (field, value, may_be_absent) in [
            ("bayes_risk", self.bayes_risk, false),
            ("bayes_risk_se", self.bayes_risk_se, false),
            ("true_risk", self.true_risk, absent),
            ("true_risk_se", self.true_risk_se, absent),
        ] {
            let fine = (value.is_finite() && value >= 0.0) || (value.is_nan() && may_be_absent);
            if !fine {
                let got = if value.is_nan() { "null".to_string() } else { value.to_string() };
                return Err((field, format!("must be a finite risk ≥ 0 (got {got})")));
            }
        }
        Ok(())
    }
}

/// A risk read back from JSON, where a risk that does not exist (NaN, e.g. the true risk of a
/// table family's row) was written as `null`.
fn nan_from_null<'de, D: serde::Deserializer<'de>>(d: D) -> std::result::Result<f64, D::Error> {
    Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::NAN))
}

/// What a row says beside its risks, typed; its `Display` is the CSV's `note` text.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Note {
    /// UBaPP: the solver's status after our checks, and what our check of its float P found.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub solve: Option<SolveNote>,
    /// A minimax UBaPP design: its worst-case risk max_j risk(θ_j) over the parameter grid (what
    /// it minimises; the table ranks on Bayes risk).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub minimax_worst_case: Option<f64>,
    /// A party comparison's row: what the mechanism is and how its risk was obtained.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub party: Option<PartyNote>,
    /// A party row of a model without a continuous prior on a line: no true risk.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub no_true_risk: bool,
    /// A UBaPP row of a model with `[constraints]`: which it carries.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub constraints: Option<ConstraintsNote>,
    /// A baseline row of a model with `[constraints]`: the model's constraints it meets too
    /// (`unbiased`), so the constrained design is compared with its like.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub satisfies: Option<String>,
}

/// The `[constraints]` a UBaPP row's design carries.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConstraintsNote {
    /// The constraints, in the model file's words (`monotone, unbiased`).
    pub label: String,
    /// Unbiased designs: the outputs the LP optimum uses (some entry > 1e-9).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub used_outputs: Option<usize>,
    /// |Y|.
    pub observations: usize,
    /// Unbiased and fixed-point designs: how many observations' estimates e_i are not outputs
    /// (0 when the grid holds every point the constraint needs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub estimates_off_grid: Option<usize>,
    /// The spacing of the estimates (1/K for y/K) and the output grid's largest step inside the
    /// estimates' range, when some estimate is off the grid.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spacing: Option<[f64; 2]>,
}

/// The UBaPP solve behind a row.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SolveNote {
    /// The status after our checks.
    pub status: Status,
    /// The float P's largest DP violation (pure ε), or the δ it spends of the model's δ.
    pub check: DpCheck,
}

/// What our check of the solver's float P found.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub enum DpCheck {
    /// Pure ε: the largest violation of the DP rows.
    MaxViolation {
        /// max(0, P\[k,a\] − e^ε P\[k,b\]) over neighbours and outputs.
        violation: f64,
    },
    /// (ε, δ): the δ it spends, of the model's δ (its pure-ε violation is expected, up to δ).
    DeltaSpent {
        /// The δ spent.
        spent: f64,
        /// The model's δ.
        delta: f64,
    },
}

/// A party comparison's row.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub enum PartyNote {
    /// One trusted curator holding every record: the LP optimum on its output grid.
    Curator,
    /// Per-party mechanisms, each certified.
    Certified {
        /// The ε each party's integer weights certify.
        certified_eps: f64,
        /// Exact over this many release histograms, or Monte Carlo with this many rounds per θ.
        size: f64,
        /// True for Monte Carlo.
        monte_carlo: bool,
    },
    /// Noise shares summing to the central two-sided geometric, by secure aggregation.
    Shares {
        /// α·2^32 of the geometric.
        alpha: u64,
        /// The ε' ≤ ε the shares realise on the pooled count.
        eps: f64,
    },
}

impl Note {
    /// True when the row has nothing to say (the baselines).
    pub fn is_empty(&self) -> bool {
        *self == Note::default()
    }
}

impl fmt::Display for Note {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts: Vec<String> = Vec::new();
        match self.solve {
            Some(SolveNote { status, check: DpCheck::DeltaSpent { spent, delta } }) => {
                parts.push(format!("status {status}; δ spent {spent:.1e} of δ = {delta}"))
            }
            Some(SolveNote { status, check: DpCheck::MaxViolation { violation } }) => {
                parts.push(format!("status {status}; max DP violation {violation:.1e}"))
            }
            None => {}
        }
        if let Some(worst) = self.minimax_worst_case {
            parts.push(format!(
                "minimax design: worst-case risk over the parameter grid {worst:.6e} (the table ranks on Bayes risk)"
            ));
        }
        match self.party {
            Some(PartyNote::Curator) => {
                parts.push("one trusted curator holding every record: the LP optimum on its output grid".into())
            }
            Some(PartyNote::Certified { certified_eps, size, monte_carlo }) => {
                let how = if monte_carlo {
                    format!("Monte Carlo, {size:.0} rounds per θ")
                } else {
                    format!("exact over {size:.0} release histograms")
                };
                parts.push(format!("each party certified ε ≤ {certified_eps:.6}; {how}"))
            }
            Some(PartyNote::Shares { alpha, eps }) => parts.push(format!(
                "Pólya shares summing to the two-sided geometric with α = {alpha}/2^32 (ε' = {eps:.6} ≤ ε) on the pooled count"
            )),
            None => {}
        }
        if let Some(c) = &self.constraints {
            parts.push(format!("constraints: {}", c.label));
            if let Some(used) = c.used_outputs {
                parts.push(format!(
                    "the unbiased optimum uses {used} outputs (Badanidiyuru et al.: at most 2|Y| = {} are needed)",
                    2 * c.observations
                ));
            }
        }
        if let Some(c) = &self.satisfies {
            parts.push(format!("satisfies the model's constraints: {c}"));
        }
        if self.no_true_risk {
            parts.push("no true risk for this model (no continuous prior on a line)".into());
        }
        f.write_str(&parts.join("; "))
    }
}

/// One method's risk(θ) curve.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CurveSeries {
    /// The method.
    pub method: Method,
    /// Its privacy guarantee.
    pub privacy: Privacy,
    /// risk(θ) at each θ of [`Curves::thetas`].
    pub risk: Vec<f64>,
}

/// risk(θ) curves of every method at one (ε, K).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Curves {
    /// ε.
    pub eps: f64,
    /// K.
    pub trials: u64,
    /// The θ values.
    pub thetas: Vec<f64>,
    /// One curve per method, in table order.
    pub series: Vec<CurveSeries>,
}

/// The UBaPP mechanism at one (ε, K), for heat maps.
#[derive(Debug, Clone)]
pub struct Heatmap {
    /// ε.
    pub eps: f64,
    /// K (0 for a model without trials: the heat map's caption then leaves K out).
    pub trials: u64,
    /// P, |Θ̃| × |Y|.
    pub p: Array2<f64>,
    /// The output grid.
    pub outputs: Vec<f64>,
}

/// Everything `compare` produces.
#[derive(Debug, Clone)]
pub struct Comparison {
    /// Table rows.
    pub rows: Vec<Row>,
    /// risk(θ) curves.
    pub curves: Vec<Curves>,
    /// UBaPP heat maps.
    pub heatmaps: Vec<Heatmap>,
    /// The loss every risk is measured in.
    pub loss: ScalarLoss,
    /// What the model's UBaPP program minimises (the rows are always ranked on Bayes risk).
    pub objective: Objective,
    /// The reference risks at each K (prior-only, ε → 0; non-private, ε → ∞), where the cost
    /// matrix fits in memory.
    pub references: Vec<TrialsReference>,
    /// The prior's shape over Θ, (θ, density up to a constant), for shading under risk(θ) curves.
    pub prior_shape: Vec<(f64, f64)>,
}

/// The reference risks at one K.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct TrialsReference {
    /// K.
    pub trials: u64,
    /// Bayes risk of the best constant release (ε → 0).
    pub prior_risk: f64,
    /// Bayes risk of the best non-private estimator on the output grid (ε → ∞).
    pub non_private_risk: f64,
}

impl Comparison {
    /// The price of a constrained design, one sentence per (ε, K): its certified Bayes risk over
    /// the unconstrained optimum's on the same grids (`ubapp` over `ubapp-unconstrained`), and for
    /// an unbiased design the outputs its optimum uses against the 2|Y| of Badanidiyuru et al.
    /// (NeurIPS 2023). Empty without constraints.
    pub fn constraint_prices(&self) -> Vec<String> {
        let mut out = Vec::new();
        for r in self.rows.iter().filter(|r| r.method == Method::Ubapp) {
            let Some(c) = &r.note.constraints else { continue };
            let case = |f: &&Row| f.eps == r.eps && f.trials == r.trials;
            let free = self.rows.iter().filter(case).find(|f| f.method == Method::UbappUnconstrained);
            // The best method with the same property: the design itself, or a pure-ε baseline that
            // meets the constraints too (an (ε, δ) one is not comparable).
            let like = self
                .rows
                .iter()
                .filter(case)
                .filter(|f| f.note.satisfies.is_some() && f.privacy == PrivacyKind::PureEps)
                .min_by(|a, b| a.bayes_risk.total_cmp(&b.bayes_risk));
            let best = match like {
                Some(b) if b.bayes_risk < r.bayes_risk => b,
                _ => r,
            };
            let mut s = match free {
                Some(f) => format!(
                    "constraints {} cost {:+.1} % Bayes risk over the unconstrained optimum at ε = {}, K = {} ({:.6e} against {:.6e}{})",
                    c.label,
                    100.0 * (best.bayes_risk / f.bayes_risk - 1.0),
                    r.eps,
                    r.trials,
                    best.bayes_risk,
                    f.bayes_risk,
                    if best.method == Method::Ubapp { String::new() } else { format!(", the best method that meets them being {}", best.method) }
                ),
                None => format!("the ubapp row at ε = {}, K = {} carries the constraints {}", r.eps, r.trials, c.label),
            };
            if let Some(used) = c.used_outputs {
                let bound = 2 * c.observations;
                let relation =
                    if used <= bound { "within" } else { "more than (the solver's optimum is not the sparsest one)" };
                s += &format!(
                    "; the unbiased optimum uses {used} outputs, {relation} the 2|Y| = {bound} that Badanidiyuru et al. (NeurIPS 2023) show suffice"
                );
            }
            if best.method != Method::Ubapp {
                s += &format!(
                    "; the {} design ({:.6e}) is above {} ({:.6e}), which meets the same constraints",
                    c.label, r.bayes_risk, best.method, best.bayes_risk
                );
                // Spacings are differences of grid values: printed to 10 significant digits.
                let short = |x: f64| crate::guard::text::number(format!("{x:.9e}").parse().unwrap_or(x));
                s += &match (c.estimates_off_grid, c.spacing) {
                    (Some(n), Some([estimates, step])) if n > 0 => format!(
                        ": the design may release only the output grid, whose step ({}) is coarser than the estimates' spacing ({}), and {n} of the {} estimates are not outputs; an output grid with step {} that holds every estimate (and reaches beyond them on both sides) removes that handicap",
                        short(step),
                        short(estimates),
                        c.observations,
                        short(estimates)
                    ),
                    _ => ": the design may release only the output grid's values, the baseline any real number; a wider or finer output grid narrows the difference".to_string(),
                };
            }
            out.push(s);
        }
        out
    }

    /// Sentences a reader of the table must see beside it (empty when there is nothing to say).
    pub fn caveats(&self) -> Vec<String> {
        let mut out = self.constraint_prices();
        if self.objective == Objective::Minimax && self.rows.iter().any(|r| r.method == Method::Ubapp) {
            out.push(
                "the model's objective is minimax: the ubapp design minimises the worst-case risk over the \
                 parameter grid (its note gives that risk), while every row here is ranked on Bayes risk"
                    .to_string(),
            );
        }
        out
    }
}

/// The rows as CSV text (header first).
pub fn rows_csv(rows: &[Row]) -> String {
    let mut s = String::from(
        "method,privacy,eps,delta,trials,parties,bayes_risk,bayes_risk_se,true_risk,true_risk_se,risk_method,note\n",
    );
    for r in rows {
        s.push_str(&format!(
            "{},{},{},{},{},{},{:.10e},{:.3e},{:.10e},{:.3e},{},\"{}\"\n",
            r.method,
            r.privacy,
            r.eps,
            r.delta,
            r.trials,
            r.parties.map_or(String::new(), |p| p.to_string()),
            r.bayes_risk,
            r.bayes_risk_se,
            r.true_risk,
            r.true_risk_se,
            r.risk_method,
            r.note.to_string().replace('"', "'")
        ));
    }
    s
}

/// The risk(θ) curves as CSV text in long form (header first): one line per (ε, K, method, θ).
pub fn curves_csv(curves: &[Curves]) -> String {
    let mut s = String::from("eps,trials,method,privacy,theta,risk\n");
    for c in curves {
        for series in &c.series {
            for (t, r) in c.thetas.iter().zip(&series.risk) {
                s.push_str(&format!(
                    "{},{},{},{},{},{:.10e}\n",
                    c.eps,
                    c.trials,
                    series.method,
                    series.privacy.kind(),
                    t,
                    r
                ));
            }
        }
    }
    s
}
