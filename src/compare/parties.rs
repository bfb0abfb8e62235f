//! The comparison for data held by several parties, for every family: `compare MODEL --parties
//! M[,M…]` (and any model with a `[parties]` section or outside the binomial family).
//!
//! The records in all (T = M₀·n₀ for a model whose `[parties]` count is M₀ and whose family holds
//! n₀ records per party) stay fixed while the number of parties M varies: each party holds T/M
//! records of the family (a table family's records cannot be split: its parties each hold the
//! table's observation). Rows, per ε and M:
//! - `ubapp` — one trusted curator holding all T records, the LP optimum (no M);
//! - `ubapp-local`, `geometric-local` — every party releases through its certified single-party
//!   mechanism, the aggregator computes the exact Bayes aggregate (`crate::parties`);
//! - `geometric-count` — the `geometric-local` releases averaged as plug-in estimates and clamped
//!   (no posterior): geometric noise on the counts with clamping, the baseline for every family
//!   but the table;
//! - `geometric-shares` — counting families: the parties' noise shares sum to the central
//!   two-sided geometric on the pooled count (secure aggregation, no trusted party), then the
//!   aggregator's posterior;
//! - `dssa`, `dsaa`, `gaussian-conventional`, `cape` — the literature's distributed methods, for
//!   Bernoulli records (binomial family), built on the pooled model with M parties.
//!
//! [`PartyComparison::notes`] says which methods do not apply to the model, and why.

use serde::Serialize;

use super::error::Result;
use super::{build, CompareError, Method, Note, PartyNote, Row};
use crate::baselines::BaselineOptions;
use crate::eval::{bayes_risk, true_risk, RiskMethod};
use crate::guard::Parameter;
use crate::model::spec::ObservationSpec;
use crate::model::{Family, Model};
use crate::parties::shares::{share_alpha, share_eps};
use crate::parties::{party_risk, Aggregate, LocalMechanism, PartyRisk, RiskOptions};
use crate::solve::{solve_model, Solution, SolveOptions};

/// What the party comparison runs.
#[derive(Debug, Clone)]
pub struct PartyOptions {
    /// Privacy levels ε (each party's release is ε-DP for its own records).
    pub eps: Vec<f64>,
    /// Numbers of parties M (each dividing the records in all, except for a table family).
    pub parties: Vec<u64>,
    /// δ of the (ε, δ) baselines.
    pub delta: f64,
    /// Seed of the Monte-Carlo fallbacks.
    pub seed: u64,
    /// How the UBaPP designs are solved: the solver, the memory budget, the limits of each solve
    /// (the curator's, then one party's for each M; a design keeps its best certified mechanism
    /// when the time runs out), the anytime route's gap and where progress goes.
    pub solve: SolveOptions,
    /// Exact-sum budget and Monte-Carlo size of the party risks.
    pub risk: RiskOptions,
}

/// The rows and what the reader must know beside them.
#[derive(Debug, Clone, Serialize)]
pub struct PartyComparison {
    /// Table rows (`trials` is the number of records in all, `parties` is M).
    pub rows: Vec<Row>,
    /// Which methods apply and why the others do not.
    pub notes: Vec<String>,
    /// The one-curator designs that are certified within a gap rather than proven optimal (the
    /// anytime route, or a time limit): the interval the optimum lies in. Empty (and absent from
    /// the JSON) when every design is optimal.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub bounds: Vec<DesignBound>,
}

/// A one-curator design certified within a gap: the `ubapp` row is its risk (an exactly ε-DP
/// mechanism), and the optimum over the output grid lies in [`lower`, `upper`].
///
/// [`lower`]: DesignBound::lower
/// [`upper`]: DesignBound::upper
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct DesignBound {
    /// ε.
    pub eps: f64,
    /// The proven lower bound on the optimal Bayes risk.
    pub lower: f64,
    /// The proven upper bound on the design's Bayes risk.
    pub upper: f64,
    /// (upper − lower)/upper.
    pub gap: f64,
}

impl DesignBound {
    /// The bound of a solved design, where it is not proven optimal and has a proven bound.
    pub fn of(s: &Solution) -> Option<DesignBound> {
        if s.status == crate::solve::Status::Optimal {
            return None;
        }
        let lower = s.checks.dual_bound.filter(|_| s.checks.dual_bound_exact)?;
        let upper = s.checks.certified_objective.unwrap_or(s.bayes_risk);
        let gap = s.checks.relative_gap.unwrap_or(((upper - lower) / upper).max(0.0));
        Some(DesignBound { eps: s.eps, lower, upper, gap })
    }

    /// The note a reader sees beside the table.
    pub fn note(&self) -> String {
        format!(
            "ubapp at ε = {} is certified within a gap of {:.2} %, not proven optimal: no ε-DP mechanism on the output grid has a Bayes risk below {:.4e}, and this one's is at most {:.4e} (compare the baselines with that interval; --gap or --max-seconds set how close it gets)",
            self.eps,
            100.0 * self.gap,
            self.lower,
            self.upper
        )
    }
}

/// The methods of the party comparison, in table order.
pub const PARTY_METHODS: [Method; 19] = [
    Method::Ubapp,
    Method::UbappLocal,
    Method::GeometricLocal,
    Method::GeometricCount,
    Method::GeometricEachCount,
    Method::LaplaceEachCount,
    Method::StaircaseEachCount,
    Method::GeometricEachCountRemap,
    Method::LaplaceEachCountRemap,
    Method::StaircaseEachCountRemap,
    Method::LaplaceSum,
    Method::LaplaceSumRemap,
    Method::StaircaseSum,
    Method::StaircaseSumRemap,
    Method::GeometricShares,
    Method::Dssa,
    Method::Dsaa,
    Method::GaussianConventional,
    Method::Cape,
];

/// The number of records one party's family holds (`None` for a table family).
fn records(model: &Model) -> Option<u64> {
    match model.family() {
        Family::Binomial { trials } => Some(*trials),
        Family::Poisson { records, .. } | Family::Multinomial { records, .. } => Some(*records),
        Family::Table { .. } => None,
    }
}

/// The records in all: M₀ parties × n₀ records (`None` for a table family).
pub fn total_records(model: &Model) -> Option<u64> {
    records(model).map(|n| n * model.parties())
}

/// `model` with `parties` parties sharing its records in all (T/M each; a table family keeps its
/// per-party observation).
pub fn split(model: &Model, parties: u64) -> Result<Model> {
    let mut spec = model.spec().clone();
    if let Some(total) = total_records(model) {
        if parties == 0 || total % parties != 0 {
            return Err(CompareError::PartiesDoNotDivide { parties, trials: total });
        }
        let n = total / parties;
        match &mut spec.observation {
            ObservationSpec::Binomial { trials } => *trials = n,
            ObservationSpec::Poisson { records, .. } | ObservationSpec::Multinomial { records, .. } => *records = n,
            ObservationSpec::Table { .. } => {}
        }
    }
    spec.parties = (parties != 1).then_some(crate::model::spec::PartiesSpec { count: parties });
    Ok(Model::from_spec(spec)?)
}

/// Which party-comparison methods do not apply to `model`, each with the reason.
pub fn not_applicable(model: &Model) -> Vec<(Method, String)> {
    let mut out = Vec::new();
    let family = model.family().name();
    let counting = matches!(model.family(), Family::Binomial { .. } | Family::Poisson { .. });
    if !counting {
        out.push((
            Method::GeometricShares,
            format!(
                "needs a count that adds up across parties with a chain or band neighbour relation (binomial, poisson); \
                 the {family} family's statistic is not one"
            ),
        ));
    }
    // The exponential mechanism on a neighbour graph needs all of its |Y|² distances: said here,
    // before any solve, where |Y| is beyond that.
    let neighbours = model.family().neighbours();
    if let crate::model::Neighbours::Graph { len, .. } = neighbours {
        if len > crate::parties::local::MAX_GRAPH_RELEASES {
            for m in [Method::GeometricLocal, Method::GeometricCount] {
                out.push((
                    m,
                    format!(
                        "needs all distances of the neighbour graph (its |Y|² release probabilities); |Y| = {len} is above {}",
                        crate::parties::local::MAX_GRAPH_RELEASES
                    ),
                ));
            }
        }
    }
    // Noise on the sufficient statistic: each group of methods where its statistic is the model's.
    let statistic_noise: [(bool, &str, &[Method]); 2] = [
        (
            crate::baselines::sum_noise::applies(model),
            "a clipped Poisson sum",
            &[Method::LaplaceSum, Method::LaplaceSumRemap, Method::StaircaseSum, Method::StaircaseSumRemap],
        ),
        (
            crate::baselines::each_count::applies(model),
            "a multinomial's count vector",
            &[
                Method::GeometricEachCount,
                Method::LaplaceEachCount,
                Method::StaircaseEachCount,
                Method::GeometricEachCountRemap,
                Method::LaplaceEachCountRemap,
                Method::StaircaseEachCountRemap,
            ],
        ),
    ];
    for (applies, statistic, methods) in statistic_noise {
        if !applies {
            let why = format!(
                "needs {statistic} under squared or absolute loss with one data holder; this model is {family} with {} loss",
                model.loss().name()
            );
            out.extend(methods.iter().map(|&m| (m, why.clone())));
        }
    }
    if matches!(model.family(), Family::Table { .. }) {
        out.push((
            Method::GeometricCount,
            "needs releases with a plug-in estimate (a count's proportion or mean); a table's observations have none"
                .into(),
        ));
    }
    if !matches!(model.family(), Family::Binomial { .. }) || crate::eval::ScalarLoss::of(model.loss()).is_none() {
        for m in [Method::Dssa, Method::Dsaa, Method::GaussianConventional, Method::Cape] {
            out.push((
                m,
                format!(
                    "is built for Bernoulli records (binomial family) under squared or absolute loss; this model is {family} \
                     with {} loss",
                    model.loss().name()
                ),
            ));
        }
    }
    let singles = Method::ALL.iter().filter(|m| !PARTY_METHODS.contains(m) && **m != Method::UbappUnconstrained);
    let why = if matches!(model.family(), Family::Binomial { .. }) {
        "compares one data holder's estimators: run compare without --parties on a model without [parties] for it"
    } else {
        "is a single-holder baseline for Bernoulli records (binomial family)"
    };
    let ids: Vec<&str> = singles.map(|m| m.id()).collect();
    out.push((Method::Lbapp, format!("(and {}) {why}", ids[1..].join(", "))));
    out
}

/// What a party comparison knows before any row: the models it evaluates and the notes that do
/// not depend on the rows. Built by [`PartyPlan::new`], which checks every option first.
#[derive(Debug, Clone)]
pub struct PartyPlan {
    /// The model with one party holding every record (the curator's).
    pooled: Model,
    /// The model split among each M of the options, in order.
    splits: Vec<Model>,
    /// The records in all (`None` for a table family).
    total: Option<u64>,
    /// The methods that do not apply, with the reason.
    skipped: Vec<(Method, String)>,
    /// How the aggregator combines the parties' releases.
    rule: Aggregate,
    /// The notes known before any row.
    notes: Vec<String>,
}

impl PartyPlan {
    /// Check `opts` against `model` (before any work) and plan the comparison.
    pub fn new(model: &Model, opts: &PartyOptions) -> Result<PartyPlan> {
        if opts.parties.is_empty() {
            return Err(CompareError::EmptyList { parameter: Parameter::Parties, what: "number of parties M ≥ 1" });
        }
        if opts.parties.contains(&0) {
            return Err(CompareError::ZeroParties);
        }
        if !model.is_plain_program() {
            return Err(CompareError::argument(
                Parameter::Parties,
                format!(
                    "needs a pure ε-DP (delta = 0) Bayes (objective = \"bayes\") model; model \"{}\" is not",
                    model.name()
                ),
            ));
        }
        if model.exact().is_some() {
            return Err(CompareError::argument(
                Parameter::Parties,
                format!(
                    "needs a finite parameter grid (the aggregate is a posterior over it); model \"{}\" has parameter.grid.kind = \"exact\"",
                    model.name()
                ),
            ));
        }
        // Every M must split the records before any work.
        let splits: Vec<Model> = opts.parties.iter().map(|&m| split(model, m)).collect::<Result<_>>()?;
        let total = total_records(model);
        let skipped = not_applicable(model);
        let mut notes: Vec<String> = skipped.iter().map(|(m, why)| format!("{m} {why}")).collect();
        if matches!(model.family(), Family::Table { .. }) && opts.parties.iter().any(|&m| m > 1) {
            notes.push("a table family's records cannot be split: every party holds the table's observation, so the records in all grow with M".into());
        }
        let rule = Aggregate::for_loss(model.loss());
        notes.push(format!(
            "party aggregates: the {} of θ given the M releases (the exact posterior on the parameter grid)",
            rule.name()
        ));
        if total.is_none() {
            notes.push(
                "ubapp (one curator) needs the pooled records' likelihood, which a table family does not give: no row"
                    .into(),
            );
        }
        Ok(PartyPlan { pooled: split(model, 1)?, splits, total, skipped, rule, notes })
    }

    /// True when the comparison has a one-curator `ubapp` row (every family but the table).
    pub fn has_curator(&self) -> bool {
        self.total.is_some()
    }

    fn applies(&self, m: Method) -> bool {
        !self.skipped.iter().any(|(s, _)| *s == m)
    }

    /// The curator's UBaPP designs, one per ε of `eps`.
    pub fn solve_curator(&self, eps: &[f64], solve: impl Into<SolveOptions>) -> Result<Vec<Solution>> {
        Ok(solve_model(&self.pooled, Some(eps), solve)?)
    }

    /// The UBaPP designs of one party when `opts.parties[m_index]` parties share the records, one
    /// per ε of `eps`: reused from `solved` (designs at the same ε, each list with the one-party
    /// model it solves) where one party's model is among them, else solved.
    pub fn solve_party(
        &self,
        m_index: usize,
        eps: &[f64],
        solve: impl Into<SolveOptions>,
        solved: &[(&Model, &[Solution])],
    ) -> Result<Vec<Solution>> {
        let single = self.splits[m_index].with_parties(1)?;
        match solved.iter().find(|(m, _)| m.spec() == single.spec()) {
            Some((_, designs)) => Ok(designs.to_vec()),
            None => Ok(solve_model(&single, Some(eps), solve)?),
        }
    }

    /// The one-curator `ubapp` rows of the ε of `eps` (`central`: their designs, in order).
    pub fn curator_rows(&self, eps: &[f64], central: &[Solution], risk: &RiskOptions) -> Result<Vec<Row>> {
        let Some(t) = self.total else { return Ok(Vec::new()) };
        let mut rows = Vec::with_capacity(eps.len());
        for (&e, s) in eps.iter().zip(central) {
            let lp = LocalMechanism::ubapp(&self.pooled, s)?;
            let r = party_risk(&self.pooled, &lp, Aggregate::GridAction, 1, risk);
            rows.push(row(Method::Ubapp, e, 0.0, t, None, &r, PartyNote::Curator));
        }
        Ok(rows)
    }

    /// The rows of `opts.parties[m_index]` parties at each ε of `eps`, in table order (`local`:
    /// one party's designs, as [`PartyPlan::solve_party`] gives them).
    pub fn party_rows(&self, opts: &PartyOptions, m_index: usize, eps: &[f64], local: &[Solution]) -> Result<Vec<Row>> {
        let (m, per_party) = (opts.parties[m_index], &self.splits[m_index]);
        let (pooled, rule) = (&self.pooled, self.rule);
        let t = total_records(per_party).unwrap_or(0);
        let single = per_party.with_parties(1)?;
        let mut rows = Vec::new();
        for (&eps, design) in eps.iter().zip(local) {
            let u = LocalMechanism::ubapp(&single, design)?;
            let r = party_risk(per_party, &u, rule, m, &opts.risk);
            rows.push(row(Method::UbappLocal, eps, 0.0, t, Some(m), &r, certified_note(&u, &r)));
            if self.applies(Method::GeometricLocal) {
                let g = LocalMechanism::geometric(&single, eps)?;
                let r = party_risk(per_party, &g, rule, m, &opts.risk);
                rows.push(row(Method::GeometricLocal, eps, 0.0, t, Some(m), &r, certified_note(&g, &r)));
                if self.applies(Method::GeometricCount) {
                    let r = party_risk(per_party, &g, Aggregate::PlugIn, m, &opts.risk);
                    rows.push(row(Method::GeometricCount, eps, 0.0, t, Some(m), &r, certified_note(&g, &r)));
                }
            }
            if self.applies(Method::GeometricShares) {
                let sensitivity = match pooled.family() {
                    Family::Poisson { cap, .. } => *cap,
                    _ => 1,
                };
                let alpha = share_alpha(eps, sensitivity);
                let eps_shares = share_eps(alpha) * sensitivity as f64;
                let central_geometric = LocalMechanism::geometric(pooled, eps_shares)?;
                let r = party_risk(pooled, &central_geometric, rule, 1, &opts.risk);
                let note = PartyNote::Shares { alpha, eps: eps_shares };
                rows.push(row(Method::GeometricShares, eps, 0.0, t, Some(m), &r, note));
            }
            let baseline = BaselineOptions { delta: opts.delta, parties: Some(m), seed: opts.seed };
            for method in [Method::Dssa, Method::Dsaa, Method::GaussianConventional, Method::Cape] {
                if !self.applies(method) {
                    continue;
                }
                let Some(est) = build(method, pooled, eps, &baseline)? else { continue };
                let (b, tr) = (bayes_risk(est.as_ref(), pooled), true_risk(est.as_ref(), pooled));
                let privacy = est.privacy();
                rows.push(Row {
                    method,
                    privacy: privacy.kind(),
                    eps,
                    delta: privacy.delta(),
                    trials: t,
                    parties: Some(m),
                    bayes_risk: b.value,
                    bayes_risk_se: b.se,
                    true_risk: tr.value,
                    true_risk_se: tr.se,
                    risk_method: b.method.max(tr.method),
                    note: Note::default(),
                });
            }
        }
        Ok(rows)
    }

    /// The comparison of every row (in table order: the curator's, then each M's), with the notes.
    pub fn finish(&self, rows: Vec<Row>) -> PartyComparison {
        let mut notes = self.notes.clone();
        if self.rule != Aggregate::GridAction {
            notes.extend(off_grid_notes(&rows, self.pooled.outputs().len(), self.rule.name()));
        }
        PartyComparison { rows, notes, bounds: Vec::new() }
    }
}

/// Run the party comparison, solving the UBaPP designs with `opts.solve`. `progress` receives one
/// line per step.
pub fn compare_parties(model: &Model, opts: &PartyOptions, progress: &mut dyn FnMut(&str)) -> Result<PartyComparison> {
    compare_parties_solved(model, opts, None, progress)
}

/// [`compare_parties`], with UBaPP's designs of `model` itself already solved by the caller, one
/// per ε of `opts.eps` in order: one party's designs where the parties are the model's own (how
/// many parties there are does not enter one party's LP), used instead of solving again. Designs
/// that are not the model's at those ε are refused ([`CompareError::DesignsMismatch`]).
pub fn compare_parties_solved(
    model: &Model,
    opts: &PartyOptions,
    designs: Option<&[Solution]>,
    progress: &mut dyn FnMut(&str),
) -> Result<PartyComparison> {
    let plan = PartyPlan::new(model, opts)?;
    let own = match designs {
        Some(designs) => {
            super::check_solutions(model, &opts.eps, designs.iter())?;
            Some((model.with_parties(1)?, designs))
        }
        None => None,
    };
    progress(&format!("one curator: solving UBaPP for {} value(s) of ε", opts.eps.len()));
    let central = plan.solve_curator(&opts.eps, opts.solve.clone())?;
    let mut rows = plan.curator_rows(&opts.eps, &central, &opts.risk)?;
    let bounds: Vec<DesignBound> = central.iter().filter_map(DesignBound::of).collect();
    let mut solved: Vec<(&Model, &[Solution])> = vec![(&plan.pooled, &central)];
    solved.extend(own.as_ref().map(|(m, designs)| (m, *designs)));
    for (mi, &m) in opts.parties.iter().enumerate() {
        progress(&format!("[{}/{}] M = {m}: solving each party's UBaPP design", mi + 1, opts.parties.len()));
        let local = plan.solve_party(mi, &opts.eps, opts.solve.clone(), &solved)?;
        rows.extend(plan.party_rows(opts, mi, &opts.eps, &local)?);
    }
    let mut cmp = plan.finish(rows);
    cmp.notes.extend(bounds.iter().map(DesignBound::note));
    cmp.bounds = bounds;
    Ok(cmp)
}

/// Why an aggregate can beat the one-curator `ubapp` row: `ubapp` is optimal among mechanisms
/// that release a point of the output grid, while a party aggregate releases a real-valued
/// posterior summary, which no grid point matches. One note naming every method and ε where that
/// happens.
fn off_grid_notes(rows: &[Row], n_outputs: usize, aggregate: &str) -> Vec<String> {
    // (method and M, the ε where it beats ubapp), in table order.
    let mut better: Vec<(String, Vec<f64>)> = Vec::new();
    for central in rows.iter().filter(|r| r.method == Method::Ubapp) {
        for r in
            rows.iter().filter(|r| r.eps == central.eps && r.parties.is_some() && r.bayes_risk < central.bayes_risk)
        {
            let who = format!("{} (M = {})", r.method, r.parties.unwrap_or(0));
            match better.iter_mut().find(|(w, _)| *w == who) {
                Some((_, eps)) => eps.push(r.eps),
                None => better.push((who, vec![r.eps])),
            }
        }
    }
    if better.is_empty() {
        return Vec::new();
    }
    let who: Vec<String> = better
        .iter()
        .map(|(w, eps)| format!("{w} at ε = {}", eps.iter().map(f64::to_string).collect::<Vec<_>>().join(", ")))
        .collect();
    vec![format!(
        "why an aggregate beats ubapp ({}): ubapp is the optimum among mechanisms that release one of the output \
         grid's {n_outputs} values, while a party aggregate releases the {aggregate} of θ given the releases, a real \
         number off the grid (a finer output grid narrows the difference)",
        who.join("; ")
    )]
}

fn certified_note(mech: &LocalMechanism, r: &PartyRisk) -> PartyNote {
    PartyNote::Certified {
        certified_eps: mech.certified_eps,
        size: r.size,
        monte_carlo: r.bayes.method != RiskMethod::Exact,
    }
}

fn row(
    method: Method,
    eps: f64,
    delta: f64,
    trials: u64,
    parties: Option<u64>,
    r: &PartyRisk,
    party: PartyNote,
) -> Row {
    let truth = r.truth.unwrap_or(crate::eval::Risk { value: f64::NAN, se: 0.0, method: r.bayes.method });
    let note = Note { party: Some(party), no_true_risk: r.truth.is_none(), ..Note::default() };
    Row {
        method,
        privacy: crate::eval::PrivacyKind::PureEps,
        eps,
        delta,
        trials,
        parties,
        bayes_risk: r.bayes.value,
        bayes_risk_se: r.bayes.se,
        true_risk: truth.value,
        true_risk_se: truth.se,
        risk_method: r.bayes.method.max(truth.method),
        note,
    }
}

impl PartyComparison {
    /// The comparison as one data holder reads it, for a model of a family the binomial table does
    /// not cover, with every record at one holder (M = 1): `ubapp` against noise added to the
    /// model's sufficient statistic — `geometric` (the `geometric-local` release with its Bayes
    /// remap, the posterior summary of θ given it) and `geometric-count` (the same release without
    /// the remap, its plug-in estimate) — without the rows that repeat them at M = 1
    /// (`ubapp-local`: ubapp's own release; `geometric-shares`: the same geometric), without M,
    /// and with notes in one holder's words.
    pub fn single_holder(mut self, model: &Model) -> PartyComparison {
        let rule = Aggregate::for_loss(model.loss());
        // A table family has no pooled curator row: at M = 1 the party's own optimum is the one
        // holder's, and under the grid action (one party) its aggregate is its own release.
        let curator = self.rows.iter().any(|r| r.method == Method::Ubapp);
        let own_optimum = !curator && rule == Aggregate::GridAction;
        self.rows.retain(|r| match r.method {
            Method::GeometricShares => false,
            Method::UbappLocal => !curator,
            _ => true,
        });
        for r in &mut self.rows {
            if own_optimum && r.method == Method::UbappLocal {
                r.method = Method::Ubapp;
            }
            r.parties = None;
            if r.method == Method::GeometricLocal {
                r.method = Method::Geometric;
            }
            if matches!(r.note.party, Some(PartyNote::Certified { .. } | PartyNote::Curator)) {
                r.note.party = None;
            }
        }
        let (statistic, release) = match model.family() {
            Family::Poisson { cap, .. } => (
                format!("the clipped sum Σ min(x_r, {cap})"),
                format!("the truncated geometric mechanism on it (Ghosh et al. 2009; α = e^(−ε/{cap}), the sum's sensitivity being {cap})"),
            ),
            Family::Binomial { .. } => ("the count".into(), "the truncated geometric mechanism on it (Ghosh et al. 2009)".into()),
            Family::Multinomial { .. } => (
                "the count vector".into(),
                "the exponential mechanism e^(−ε·d/2) on the neighbour graph's distance d between count vectors".into(),
            ),
            Family::Table { .. } => (
                "the observation".into(),
                "the exponential mechanism e^(−ε·d/2) on the neighbour graph's distance d".into(),
            ),
        };
        let plug_in = if matches!(model.family(), Family::Table { .. }) {
            String::new()
        } else {
            "; geometric-count: the same release without the remap, its plug-in estimate (the count over the records) clamped to [lower, upper]"
                .to_string()
        };
        let mut notes = vec![
            format!(
                "one data holder: ubapp, the optimum among ε-DP mechanisms on the output grid, against noise on the model's sufficient statistic, {statistic}: geometric is {release} followed by the Bayes remap, the {} of θ given the release{plug_in}",
                rule.name()
            ),
        ];
        if matches!(model.family(), Family::Table { .. }) {
            notes.push(format!(
                "Laplace and staircase noise on {statistic} are not offered for the {} family (the binomial comparison has them, and its literature baselines)",
                model.family().name()
            ));
        }
        // Laplace and staircase noise on a clipped sum, plug-in and remapped.
        let mut eps_seen: Vec<f64> = Vec::new();
        for r in &self.rows {
            if !eps_seen.contains(&r.eps) {
                eps_seen.push(r.eps);
            }
        }
        let records = self.rows.first().map_or(0, |r| r.trials);
        let computed_row = |method: Method, eps: f64, risk: f64, how: RiskMethod| Row {
            method,
            privacy: crate::eval::PrivacyKind::PureEps,
            eps,
            delta: 0.0,
            trials: records,
            parties: None,
            bayes_risk: risk,
            bayes_risk_se: 0.0,
            true_risk: f64::NAN,
            true_risk_se: 0.0,
            risk_method: how,
            note: Note { no_true_risk: true, ..Note::default() },
        };
        if let (Family::Poisson { cap, .. }, true) = (model.family(), crate::baselines::sum_noise::applies(model)) {
            use crate::baselines::sum_noise::{bayes_risks, SumNoise};
            for &eps in &eps_seen {
                for (kind, plug, remapped) in [
                    (SumNoise::Laplace, Method::LaplaceSum, Method::LaplaceSumRemap),
                    (SumNoise::Staircase, Method::StaircaseSum, Method::StaircaseSumRemap),
                ] {
                    if let Some((p, r)) = bayes_risks(model, eps, kind) {
                        self.rows.push(computed_row(plug, eps, p, RiskMethod::Numerical));
                        self.rows.push(computed_row(remapped, eps, r, RiskMethod::Numerical));
                    }
                }
            }
            notes.push(format!(
                "laplace-sum and staircase-sum: Laplace noise of scale {cap}/ε and the staircase of sensitivity {cap} (Geng & Viswanath 2016, the loss's γ*) on the clipped sum, the plug-in estimate (the sum over the records) clamped to [lower, upper]; the -remap rows: the same releases followed by the Bayes remap, the {} of θ on the grid given the release (risks by numerical integration)",
                rule.name()
            ));
        }
        // Noise on each count of the count vector, with its plug-in estimate: exact at any size.
        if crate::baselines::each_count::applies(model) {
            use crate::baselines::each_count::{
                bayes_risk, remap_draws, remap_risk, CountNoise, MAX_REMAP_OBSERVATIONS,
            };
            let n_obs = model.family().observation_count();
            let draws = remap_draws(model);
            let mut remapped = false;
            for &eps in &eps_seen {
                for (noise, method, remap, how) in [
                    (
                        CountNoise::Geometric,
                        Method::GeometricEachCount,
                        Method::GeometricEachCountRemap,
                        RiskMethod::Exact,
                    ),
                    (
                        CountNoise::Laplace,
                        Method::LaplaceEachCount,
                        Method::LaplaceEachCountRemap,
                        RiskMethod::Numerical,
                    ),
                    (
                        CountNoise::Staircase,
                        Method::StaircaseEachCount,
                        Method::StaircaseEachCountRemap,
                        RiskMethod::Numerical,
                    ),
                ] {
                    let Some(risk) = bayes_risk(model, eps, noise) else { continue };
                    self.rows.push(computed_row(method, eps, risk, how));
                    if let Some((value, se)) = remap_risk(model, eps, noise, draws, 0) {
                        let mut row = computed_row(remap, eps, value, RiskMethod::MonteCarlo);
                        row.bayes_risk_se = se;
                        self.rows.push(row);
                        remapped = true;
                    }
                }
            }
            notes.push(if remapped {
                format!("the -each-count-remap rows: the same noisy counts followed by the Bayes remap, the {} of θ on the grid given them (each coordinate's, under absolute loss), its risk by Monte Carlo ({draws} draws, standard error beside it)", rule.name())
            } else {
                format!("the Bayes remap of the noisy counts is not evaluated: each draw's posterior sums over |Y| = {n_obs} observations, above {MAX_REMAP_OBSERVATIONS}")
            });
            notes.push("geometric-each-count: two-sided geometric noise on each category's count (α = e^(−ε/2), the count vector's L1 sensitivity being 2) and the plug-in estimate, each coordinate clamped to [0, 1], its risk exact at any size; laplace-each-count and staircase-each-count: the same with Laplace noise of scale 2/ε or the staircase at ε/2 per count (risks by numerical integration)".into());
        }
        // The noise baselines that cannot be evaluated at this size, and why.
        if let Some((_, why)) = not_applicable(model).into_iter().find(|(m, _)| *m == Method::GeometricLocal) {
            notes.push(format!("geometric and geometric-count: not evaluated; the exponential mechanism {why}"));
        }
        if self.rows.iter().any(|r| r.method == Method::UbappLocal) {
            notes.push(format!(
                "ubapp-local: the optimum's release followed by the Bayes remap (the {} of θ given it); this family \
                 has no pooled likelihood for a one-curator ubapp row",
                rule.name()
            ));
        }
        let n_outputs = model.outputs().len();
        let mut better: Vec<String> = Vec::new();
        for central in self.rows.iter().filter(|r| r.method == Method::Ubapp) {
            for r in self.rows.iter().filter(|r| r.eps == central.eps && r.method != Method::Ubapp) {
                if r.bayes_risk < central.bayes_risk * (1.0 - 1e-9) {
                    better.push(format!("{} at ε = {}", r.method, r.eps));
                }
            }
        }
        if !better.is_empty() && rule != Aggregate::GridAction {
            notes.push(format!(
                "why {} is below ubapp: ubapp is the optimum among mechanisms that release one of the output grid's {n_outputs} values, while the remap releases the {} of θ, a real number off the grid (a finer output grid narrows the difference)",
                better.join(", "),
                rule.name()
            ));
        }
        notes.extend(self.bounds.iter().map(DesignBound::note));
        self.notes = notes;
        self
    }

    /// Keep the rows of `methods` only, and say in the notes why a method asked for has no row
    /// (not a party method, or not applicable to `model`): what `compare --methods` and Python's
    /// `methods=` do alike.
    pub fn keep_methods(&mut self, methods: &[Method], model: &Model) {
        self.rows.retain(|r| methods.contains(&r.method));
        for m in methods {
            if !PARTY_METHODS.contains(m) {
                self.notes
                    .push(format!("{m} is not a party method (it needs one data holder and the binomial family)"));
            } else if let Some((_, why)) = not_applicable(model).into_iter().find(|(n, _)| n == m) {
                self.notes.push(format!("{m} was asked for but {why}"));
            }
        }
    }
}

/// The checks of a party comparison's privacy levels and δ, before any work.
pub fn validate_party_options(eps: &[f64], delta: f64) -> Result<()> {
    if let Some((index, &value)) = eps.iter().enumerate().find(|(_, e)| !(e.is_finite() && **e > 0.0)) {
        return Err(CompareError::NonPositiveEps { index, value });
    }
    if !(delta.is_finite() && delta > 0.0 && delta < 1.0) {
        return Err(CompareError::DeltaOutOfRange { value: delta });
    }
    Ok(())
}
