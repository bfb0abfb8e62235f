//! What the language bindings (the Python package's `ubapp._native`, the R package's glue crate
//! in r/src/rust) share beyond one library call: the checks and routes the command line applies,
//! spoken in keyword arguments instead of flags, and answers as the same JSON the command line
//! prints (`solve --json`, `verify --json`, `posterior --json`, `compare --json`), so no binding
//! re-implements or drifts from them.
//!
//! Messages name keyword arguments (`n`, `budget`, `y`, `methods`, …). A library parameter's
//! keyword is its name ([`Parameter::name`], which the bindings never respell: no
//! [`Parameter::set_spelling`] runs in them), so the library's own checks already speak keywords;
//! [`keyword_words`] renames the flags a message still quotes in its prose (`pass --max-seconds S`).

use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::Arc;

use ndarray::Array2;

use rand::rngs::StdRng;
use rand::SeedableRng;

use crate::analysis::SolveSummary;
use crate::compare::parties::{compare_parties, validate_party_options, PartyOptions};
use crate::compare::{compare, validate, BaselineOptions, CompareOptions, CompareRoute, Method, Row};
#[cfg(doc)]
use crate::guard::Parameter;
use crate::mechanism::{DeploymentMode, OutputMatch, Posterior, Release, REQUIRE_MODEL_ENV};
use crate::model::{Model, ModelErrorKind, ModelSpec};
use crate::parties::RiskOptions;
use crate::report::{check_report_dir, write_comparison, write_party_comparison};
use crate::solve::{Solution, SolveOptions, SolvePlan, SolverChoice};
use crate::{Error, MemoryBudget, Result};

/// A message with the command line's flags it quotes renamed to the bindings' keyword arguments,
/// outside commands quoted in backticks: the bindings' one mapping from flags to keywords.
pub fn keyword_words(text: &str) -> String {
    const NAMES: [(&str, &str); 17] = [
        ("--target-rmse", "target_rmse"),
        ("--target-risk", "target_risk"),
        ("--max-pairs", "max_pairs"),
        ("--max-seconds", "max_seconds"),
        ("--fingerprint", "fingerprint"),
        ("--methods", "methods"),
        ("--parties", "parties"),
        ("--release", "releases"),
        ("--samples", "samples"),
        ("--trials", "trials"),
        ("--solver", "solver"),
        ("--model", "model"),
        ("--alpha", "alpha"),
        ("--delta", "delta"),
        ("--level", "level"),
        ("--eps", "eps"),
        ("--out", "out"),
    ];
    // A command quoted in backticks (`ubapp solve MODEL --eps E …`) keeps its flags.
    text.split('`')
        .enumerate()
        .map(|(i, part)| {
            let mut out = part.to_string();
            if i % 2 == 0 {
                for (flag, name) in NAMES {
                    out = out.replace(flag, name);
                }
            }
            out
        })
        .collect::<Vec<_>>()
        .join("`")
}

/// The check of `UBAPP_MEMORY_LIMIT` the command line makes before any work
/// ([`MemoryBudget::check_env`]): unset, or a whole number of bytes > 0; anything else is an input
/// error naming the variable. Every binding call that reads, solves, certifies or samples makes it
/// first, so a malformed limit is refused there too instead of giving way to the defaults (the
/// budgets themselves never fail).
pub fn check_memory_limit() -> Result<()> {
    Ok(MemoryBudget::check_env()?)
}

/// A solve's memory budget, as the command line decides it ([`MemoryBudget::for_solve`]).
pub fn memory_budget() -> MemoryBudget {
    MemoryBudget::for_solve()
}

/// A model from TOML text; `origin` names it in messages.
pub fn model_from_toml(text: &str, origin: &str) -> Result<Model> {
    let spec = ModelSpec::from_toml(text, origin)?;
    Ok(Model::from_spec(spec).map_err(|e| e.in_origin(origin))?)
}

/// A model from JSON text (a model file's fields as one object, as R's lists and Python's dicts
/// write them): restated as TOML and read as a model file is, so messages name the same fields.
pub fn model_from_json(text: &str, origin: &str) -> Result<Model> {
    let value: serde_json::Value = serde_json::from_str(text)
        .map_err(|e| Error::argument("model", format!("{origin} is not a model's fields ({e})")))?;
    if !value.is_object() {
        return Err(Error::argument("model", format!("{origin} must be a named list of the model file's fields")));
    }
    let toml = toml::to_string(&value).map_err(|e| {
        Error::argument(
            "model",
            format!("{origin} has a value a model file cannot hold ({e}); leave out NULL/NA fields"),
        )
    })?;
    // The field names the place; a line of the restated text would name none the caller wrote.
    let spec = ModelSpec::from_toml(&toml, origin).map_err(|mut e| {
        if let ModelErrorKind::Syntax { line, .. } = &mut e.kind {
            *line = None;
        }
        e
    })?;
    Ok(Model::from_spec(spec).map_err(|e| e.in_origin(origin))?)
}

/// The model as JSON text (its spec, with CSV contents inline).
pub fn spec_json(model: &Model) -> String {
    serde_json::to_string(model.spec()).expect("a spec serialises")
}

/// How messages name a model: its file, or its name.
pub fn model_source(model: &Model, path: Option<&Path>) -> String {
    path.map_or_else(|| format!("model \"{}\"", model.name()), |p| p.display().to_string())
}

/// `max_seconds` (> 0) and `gap` (in (0, 1)), checked before any work, naming the keyword.
fn check_limits(max_seconds: Option<f64>, gap: Option<f64>) -> Result<()> {
    if let Some(s) = max_seconds.filter(|s| !(s.is_finite() && *s > 0.0)) {
        return Err(Error::argument("max_seconds", format!("must be a number of seconds > 0 (got {s})")));
    }
    if let Some(g) = gap.filter(|g| !(*g > 0.0 && *g < 1.0)) {
        return Err(Error::argument("gap", format!("must lie in (0, 1), a relative gap such as 1e-3 (got {g})")));
    }
    Ok(())
}

/// One ε's solution from [`solve_rows`], with its `solve --json` object and what its certification
/// needs of the solve: the cost matrix the solve's plan built (one for every ε of the solve), so a
/// solve then its certification builds it once.
pub struct SolvedRow {
    /// The solution.
    pub solution: Solution,
    /// Its `solve --json` object (text).
    pub row: String,
    /// The solve plan's cost matrix, where its route built one (not the compact chain route's,
    /// whose releases need none).
    cost: Option<Arc<Array2<f64>>>,
}

impl SolvedRow {
    /// The certified mechanism of this solution of `model` (the model solved), as `solve --out`
    /// writes it ([`Release::certify_planned`]): the dense form priced by the solve's cost matrix,
    /// built again only where the solve built none.
    pub fn certify(&self, model: &Model) -> Result<Release> {
        Ok(match &self.cost {
            Some(cost) => Release::certify_with(model, &self.solution, || Ok(cost.clone()))?,
            None => Release::certify(model, &self.solution)?,
        })
    }
}

/// Solve for each ε (the model's list when `None`) with the solver named as `--solver` names it,
/// stopping at the certified `gap` (the anytime route) or after `max_seconds` where given; each
/// solution with its `solve --json` object (text) and the solve's cost matrix for its
/// certification ([`SolvedRow::certify`]).
pub fn solve_rows(
    model: &Model,
    eps: Option<&[f64]>,
    solver: &str,
    gap: Option<f64>,
    max_seconds: Option<f64>,
) -> Result<Vec<SolvedRow>> {
    let solver = SolverChoice::from_str(solver)?;
    check_limits(max_seconds, gap)?;
    let limits = crate::solve::Limits { seconds: max_seconds, ..Default::default() };
    let options = SolveOptions { solver, memory: memory_budget(), limits, gap, ..SolveOptions::default() };
    // One plan for the solve and its summary (the reference risks read the solve's cost matrix).
    let plan = SolvePlan::checked(model, eps, options)?;
    let solutions = plan.solve_each(&mut |_| {})?;
    let rows = SolveSummary::of_plan(&plan, &solutions).json_rows(&solutions);
    let cost = plan.built_cost();
    Ok(solutions
        .into_iter()
        .zip(rows)
        .map(|(solution, row)| SolvedRow { solution, row: row.to_string(), cost: cost.clone() })
        .collect())
}

/// A mechanism file read by a binding: the artifact, whether it was checked against what the
/// deployer trusts, and the file (named in messages).
pub struct LoadedMechanism {
    /// The artifact, its certificate re-derived from the weights.
    pub release: Release,
    /// Checked against a trusted model, or a pinned fingerprint with an ε bound.
    pub trusted: bool,
    /// The file it was read from.
    pub origin: String,
}

/// Read a mechanism file (re-deriving its certificate) and, with `model` or `fingerprint` and
/// `max_eps`, check it as `verify --model` / `--fingerprint --max-eps` do.
pub fn load_mechanism(
    path: &Path,
    model: Option<&Path>,
    fingerprint: Option<&str>,
    max_eps: Option<f64>,
) -> Result<LoadedMechanism> {
    if fingerprint.is_some() && max_eps.is_none() {
        return Err(Error::argument(
            "fingerprint",
            "needs max_eps, the largest ε you deploy (the fingerprint leaves ε out)",
        ));
    }
    let trusted_model = model.map(Model::load).transpose()?;
    let release = Release::load(path)?;
    let origin = path.display().to_string();
    if let (Some(m), Some(p)) = (&trusted_model, model) {
        release.check_model(&origin, m, &p.display().to_string())?;
    }
    if let Some(f) = fingerprint {
        release.check_fingerprint(&origin, f)?;
    }
    if let Some(e) = max_eps {
        release.check_max_eps(&origin, e)?;
    }
    Ok(LoadedMechanism { release, trusted: model.is_some() || fingerprint.is_some(), origin })
}

/// The deployment mode (`UBAPP_REQUIRE_MODEL`): refuse a release from a file not checked against a
/// trusted model, as the command line's `sample` and `posterior` do.
pub fn check_release(trusted: bool) -> Result<()> {
    if !trusted && DeploymentMode::from_env().requires_model() {
        return Err(Error::argument(
            "model",
            format!(
                "or fingerprint with max_eps is required: {REQUIRE_MODEL_ENV} is set, so releases come only from a file checked against a model you trust (load the mechanism with model=...)"
            ),
        ));
    }
    Ok(())
}

/// `n` releases for observation `y` (its coordinates), as the command line's `sample` draws them:
/// StdRng from `seed`, or from the operating system when `None`. n > 1 spends n·ε: it needs
/// `budget` ≥ n·ε or `allow_composition`. One list of coordinates per release.
pub fn sample(
    m: &Release,
    trusted: bool,
    y: &[f64],
    n: usize,
    seed: Option<u64>,
    budget: Option<f64>,
    allow_composition: bool,
) -> Result<Vec<Vec<f64>>> {
    check_release(trusted)?;
    if n == 0 {
        return Err(Error::argument("n", "must be at least 1 (0 releases is not a request)"));
    }
    // The releases are returned as one list: priced before it is built.
    let bytes = n as u128 * (24 + 8 * m.model().outputs().dim() as u128);
    MemoryBudget::from_env().check_dense(&[], bytes).map_err(|e| e.with_fields("n".into()))?;
    let (eps_n, _) = m.composed(n as u64);
    match budget {
        Some(b) if !(b.is_finite() && b > 0.0) => {
            return Err(Error::argument("budget", format!("must be a positive ε (got {b})")))
        }
        Some(b) if eps_n > b => {
            return Err(Error::argument(
                "budget",
                format!(
                    "= {b} is exceeded: {n} releases spend ε = {n}·{} = {eps_n} by basic composition, over the budget {b}",
                    m.certified_eps()
                ),
            ))
        }
        None if n > 1 && !allow_composition => {
            return Err(Error::argument(
                "n",
                format!(
                    "= {n} releases from the same data spend ε = {n}·{} = {eps_n} by basic composition, more than the mechanism's ε; state the total with budget={eps_n} (or pass allow_composition)",
                    m.certified_eps()
                ),
            ))
        }
        _ => {}
    }
    let Some(i) = m.observation_index(y) else {
        let obs = m.model().family().observations();
        return Err(Error::argument(
            "y",
            format!(
                "{y:?} is not an observation of model {} ({} values of dimension {}){}",
                m.model().name(),
                obs.len(),
                obs.dim(),
                m.model().family().observation_rule(y).map(|why| format!(": {why}")).unwrap_or_default()
            ),
        ));
    };
    let mut rng: StdRng = match seed {
        Some(s) => StdRng::seed_from_u64(s),
        None => rand::make_rng(),
    };
    // Each coordinate as people write it (`0.1175`), within round-off of the output.
    Ok(m.sample_batch(i, n, &mut rng)
        .into_iter()
        .map(|k| m.output(k).iter().map(|&x| crate::guard::text::tidy(x)).collect())
        .collect())
}

/// What a binding's `release` is asked: the records (each column's name and values), how
/// messages number them, the ledger and the dataset, and the seed (tests only).
#[derive(Debug, Clone)]
pub struct ReleaseRequest {
    /// How messages name the records (`data`).
    pub origin: String,
    /// The columns: name and values (one for most families; one per category for indicator
    /// columns of a multinomial model).
    pub columns: Vec<(String, Vec<f64>)>,
    /// The number messages give the first record (0 in Python, 1 in R).
    pub first: usize,
    /// The ledger: an SQLite file or a postgres:// URL.
    pub ledger: String,
    /// The dataset's name in the ledger.
    pub dataset: String,
    /// StdRng's seed; `None` for the operating system's randomness (a real release).
    pub seed: Option<u64>,
}

/// `ubapp release` for a binding: the records' statistic under the mechanism's model, one value
/// drawn and recorded in the ledger before it is returned (the deployment mode's refusal first).
/// The ledger's entry as `release --json` prints it (JSON text).
pub fn release(m: &Release, trusted: bool, mechanism: &str, request: ReleaseRequest) -> Result<String> {
    check_release(trusted)?;
    crate::ledger::check_dataset(&request.dataset)?;
    let records = crate::data::Records::from_values(&request.origin, request.columns, request.first)?;
    let mut ledger = crate::ledger::open(&request.ledger, false)?;
    let mut rng: StdRng = match request.seed {
        Some(s) => StdRng::seed_from_u64(s),
        None => rand::make_rng(),
    };
    let recorded = m.release_from_records(&records, ledger.as_mut(), &request.dataset, mechanism, &mut rng)?;
    Ok(serde_json::to_string(&recorded.entry).expect("an entry serialises"))
}

/// Check the artifact against what the deployer trusts (`verify --model/--fingerprint`):
/// `model` (with how messages name it) must define the same problem, ε no larger, and
/// `fingerprint` must be its model's. `verify --json`'s fields with `checked_against` (JSON text).
pub fn verify_json(
    m: &Release,
    origin: &str,
    model: Option<(&Model, &str)>,
    fingerprint: Option<&str>,
) -> Result<String> {
    let mut what = Vec::new();
    if let Some((trusted, name)) = model {
        m.check_model(origin, trusted, name)?;
        what.push(format!("the trusted model {name}"));
    }
    if let Some(f) = fingerprint {
        m.check_fingerprint(origin, f)?;
        what.push("the pinned fingerprint".to_string());
    }
    let checked = if what.is_empty() { "embedded model only".to_string() } else { what.join(" and ") };
    let mut v = m.verified_json();
    v.as_object_mut().expect("verified_json is an object").insert("checked_against".into(), checked.into());
    Ok(v.to_string())
}

/// The exact posterior of θ given released values (each a list of coordinates) as
/// `posterior --json`'s fields (JSON text); dense mechanisms only.
pub fn posterior_json(m: &Release, trusted: bool, releases: &[Vec<f64>], level: f64) -> Result<String> {
    check_release(trusted)?;
    let Some(m) = m.dense() else {
        return Err(Error::argument(
            "posterior",
            "needs a dense mechanism (this one is the compact geometric + remap form)",
        ));
    };
    let mut notes = Vec::new();
    let outputs = releases
        .iter()
        .map(|r| {
            let typed = r.iter().map(|&v| crate::guard::text::number(v)).collect::<Vec<_>>().join(",");
            let matched = m.match_output(r);
            let k = match matched {
                OutputMatch::Exact(k) | OutputMatch::Rounded(k) | OutputMatch::Halfway { nearest: k, .. } => k,
                OutputMatch::Outside { nearest } => nearest,
                OutputMatch::WrongDimension { .. } => 0,
            };
            match m.release_words("release", &typed, matched) {
                Ok(note) => {
                    notes.extend(note);
                    Ok(k)
                }
                Err(problem) => Err(Error::argument("releases", problem.to_string())),
            }
        })
        .collect::<Result<Vec<usize>>>()?;
    let post = Posterior::of(m, &outputs, level)?;
    let mut v = serde_json::to_value(&post).expect("a posterior serialises");
    v.as_object_mut().expect("an object").insert("notes".into(), notes.into());
    Ok(v.to_string())
}

/// `compare`'s keyword arguments, one per flag of the command line.
#[derive(Debug, Clone)]
pub struct CompareRequest {
    /// Privacy levels (the model's list when `None`).
    pub eps: Option<Vec<f64>>,
    /// Numbers of trials K (binomial comparison without parties).
    pub trials: Option<Vec<u64>>,
    /// Method ids, in order (every applicable one when `None`).
    pub methods: Option<Vec<String>>,
    /// Seed of the randomised baselines.
    pub seed: u64,
    /// δ of the approximate-DP baselines.
    pub delta: f64,
    /// Numbers of parties M (the party comparison).
    pub parties: Option<Vec<u64>>,
    /// `--solver`'s name.
    pub solver: String,
    /// A directory for risk.csv, the plots and index.html.
    pub out: Option<PathBuf>,
    /// The UBaPP solves' wall-clock limit in seconds (`None`: the default budget).
    pub max_seconds: Option<f64>,
    /// The certified relative gap at which the anytime route stops (`None`: its default).
    pub gap: Option<f64>,
}

/// `compare`: the rows as `compare --json` prints them, as `{"rows": [...], "notes": [...]}` (JSON
/// text; `row_notes` adds each row's note as text); with `out`, also the files `compare --out` writes. A model with `[parties]`, a
/// `parties` list, or a family the single-holder comparison does not cover gets the party
/// comparison, as on the command line. `source` names the model in messages.
pub fn compare_json(model: &Model, source: &str, req: &CompareRequest) -> Result<String> {
    let solver = SolverChoice::from_str(&req.solver)?;
    check_limits(req.max_seconds, req.gap)?;
    let limits = crate::solve::Limits { seconds: req.max_seconds, ..Default::default() };
    let solve = SolveOptions { solver, limits, gap: req.gap, ..SolveOptions::default() };
    let methods = req.methods.as_deref().map(parse_methods).transpose()?;
    let eps = req.eps.clone().unwrap_or_else(|| model.epsilons().to_vec());
    let (seed, delta) = (req.seed, req.delta);
    let route = CompareRoute::for_model(model, req.parties.is_some(), source);
    let one_holder = matches!(route, CompareRoute::OneHolder(_));
    let CompareRoute::SingleHolder(setting) = route else {
        if req.trials.is_some() {
            return Err(Error::argument(
                "trials",
                "applies to the binomial comparison without parties; with parties the records in all stay the model's and parties splits them",
            ));
        }
        validate_party_options(&eps, delta)?;
        let opts = PartyOptions {
            eps,
            parties: req.parties.clone().unwrap_or_else(|| vec![model.parties()]),
            delta,
            seed,
            solve,
            risk: RiskOptions { seed, ..RiskOptions::default() },
        };
        let mut cmp = compare_parties(model, &opts, &mut |_| {})?;
        if one_holder {
            // One data holder of a family the binomial table does not cover, as on the command line.
            cmp = cmp.single_holder(model);
        }
        if let Some(methods) = &methods {
            cmp.keep_methods(methods, model);
        }
        if let Some(dir) = &req.out {
            write_party_comparison(dir, &cmp, model)?;
        }
        return Ok(compare_answer(&cmp.rows, &cmp.notes));
    };
    let methods: Vec<Method> =
        methods.unwrap_or_else(|| Method::ALL.iter().copied().filter(|m| !m.party_only()).collect());
    if let Some(party) = methods.iter().find(|m| m.party_only()) {
        return Err(Error::argument(
            "methods",
            format!("{party} compares several parties: pass parties=M (M parties sharing the records)"),
        ));
    }
    let opts = CompareOptions {
        eps,
        trials: req.trials.clone().unwrap_or_else(|| vec![setting.trials]),
        methods,
        baseline: BaselineOptions { delta, parties: None, seed },
        solve,
        curve_points: 101,
    };
    validate(&opts)?;
    if let Some(dir) = &req.out {
        check_report_dir(dir, "out", &model_inputs(model))?;
    }
    let cmp = compare(model, &opts, &mut |_| {})?;
    if let Some(dir) = &req.out {
        write_comparison(dir, &cmp, model)?;
    }
    Ok(compare_answer(&cmp.rows, &cmp.caveats()))
}

/// `{"rows": [...], "notes": [...], "row_notes": [...]}`: the rows as `compare --json` prints
/// them, the notes, and each row's `note` again as JSON text (`null` without one) for a binding
/// that keeps it as one text column. Written piece by piece, not through a `serde_json::Value`
/// (which sorts keys): each row's fields stay in the command line's order.
fn compare_answer(rows: &[Row], notes: &[String]) -> String {
    let row_notes: Vec<Option<String>> = rows
        .iter()
        .map(|r| (!r.note.is_empty()).then(|| serde_json::to_string(&r.note).expect("a note serialises")))
        .collect();
    format!(
        "{{\"rows\":{},\"notes\":{},\"row_notes\":{}}}",
        serde_json::to_string(rows).expect("rows serialise"),
        serde_json::to_string(notes).expect("notes serialise"),
        serde_json::to_string(&row_notes).expect("texts serialise")
    )
}

/// Method ids (`methods=`) to methods, in order, without repeats.
fn parse_methods(ids: &[String]) -> Result<Vec<Method>> {
    let mut list: Vec<Method> = Vec::new();
    for id in ids {
        let m = Method::ALL.into_iter().find(|m| m.id() == id).ok_or_else(|| {
            let known: Vec<&str> = Method::ALL.iter().map(|m| m.id()).collect();
            Error::argument("methods", format!("names no known method \"{id}\" (expected one of {})", known.join(", ")))
        })?;
        if !list.contains(&m) {
            list.push(m);
        }
    }
    Ok(list)
}

/// The files a model was read from (its CSV files; the model file itself where it had one), which
/// an output directory may not hold.
fn model_inputs(model: &Model) -> Vec<&Path> {
    model.csv_files().iter().map(PathBuf::as_path).collect()
}

#[cfg(test)]
mod tests {
    use super::keyword_words;

    #[test]
    fn flags_become_keywords_outside_quoted_commands() {
        assert_eq!(keyword_words("--eps[0] must be positive"), "eps[0] must be positive");
        assert_eq!(
            keyword_words("a model file: run `ubapp solve MODEL --eps E --out m.json` first (--model)"),
            "a model file: run `ubapp solve MODEL --eps E --out m.json` first (model)"
        );
    }
}
