//! The R package's native code: thin extendr wrappers over the ubapp crate's binding surface
//! (`ubapp::bindings`, shared with the Python package), so R gets the command line's checks,
//! numbers and messages. Answers cross as the JSON the command line prints (`solve --json`,
//! `verify --json`, `posterior --json`, `compare --json`); r/R/ turns them into data frames,
//! matrices and lists.
//!
//! A failure is returned, not thrown: a character scalar of class `ubapp_failure` holding the
//! message, with the attribute `input` (the command line's exit 2). r/R/native.R raises it as an
//! R condition of class `ubapp_input_error` or `ubapp_error`. Every call that reads, solves,
//! certifies or samples first checks `UBAPP_MEMORY_LIMIT` as the command line does before any work
//! (`bindings::check_memory_limit`).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use extendr_api::prelude::*;
use ubapp::bindings::{self, CompareRequest};
use ubapp::mechanism::Release;
use ubapp::model::Model;

type Outcome<T> = std::result::Result<T, ubapp::Error>;

/// A validated model and the file it came from (named in messages), or `None` for text.
struct RModel {
    model: Arc<Model>,
    path: Option<PathBuf>,
}

/// One ε's solution and its model, with the solve's cost matrix (to certify it).
struct RSolution {
    model: Arc<Model>,
    solved: bindings::SolvedRow,
}

/// A certified mechanism, whether it was checked against what the deployer trusts, and its origin.
struct RMechanism {
    release: Release,
    trusted: bool,
    origin: String,
}

/// The answer to R: the value, or the error as an `ubapp_failure` (see the module docs).
fn answer(result: Outcome<Robj>) -> Robj {
    match result {
        Ok(value) => value,
        Err(e) => {
            let mut r = Robj::from(bindings::keyword_words(&e.to_string()));
            // Setting an attribute and a class on a fresh character vector cannot fail.
            let _ = r.set_attrib("input", e.is_input());
            let _ = r.set_class(["ubapp_failure"]);
            r
        }
    }
}

fn input(name: &str, problem: &str) -> ubapp::Error {
    ubapp::Error::argument(name, problem)
}

/// An external pointer the R side passed back, of the expected kind.
fn pointer<'a, T: 'static>(x: &'a Robj, name: &str, what: &str) -> Outcome<&'a ExternalPtr<T>> {
    <&ExternalPtr<T>>::try_from(x).map_err(|_| input(name, &format!("must be {what}")))
}

/// A whole vector of numbers without NA (R's `NULL` is `None`).
fn numbers(x: &Robj, name: &str) -> Outcome<Option<Vec<f64>>> {
    if x.is_null() {
        return Ok(None);
    }
    match x.as_real_slice() {
        Some(v) if v.iter().all(|e| !e.is_nan()) => Ok(Some(v.to_vec())),
        _ => Err(input(name, "must be numbers (no NA)")),
    }
}

fn number(x: &Robj, name: &str) -> Outcome<Option<f64>> {
    match numbers(x, name)? {
        None => Ok(None),
        Some(v) if v.len() == 1 => Ok(Some(v[0])),
        Some(_) => Err(input(name, "must be one number")),
    }
}

/// A count or seed: a whole number from 0 to 2^53 (R's doubles hold such integers exactly).
fn whole(x: &Robj, name: &str) -> Outcome<Option<u64>> {
    match number(x, name)? {
        None => Ok(None),
        Some(v) if v >= 0.0 && v.fract() == 0.0 && v <= 9_007_199_254_740_992.0 => Ok(Some(v as u64)),
        Some(v) => Err(input(name, &format!("must be a whole number from 0 to 2^53 (got {v})"))),
    }
}

fn wholes(x: &Robj, name: &str) -> Outcome<Option<Vec<u64>>> {
    let Some(v) = numbers(x, name)? else { return Ok(None) };
    v.iter()
        .map(|&e| {
            if e >= 0.0 && e.fract() == 0.0 && e <= 9_007_199_254_740_992.0 {
                Ok(e as u64)
            } else {
                Err(input(name, &format!("must hold whole numbers from 0 to 2^53 (got {e})")))
            }
        })
        .collect::<Outcome<Vec<u64>>>()
        .map(Some)
}

fn strings(x: &Robj, name: &str) -> Outcome<Option<Vec<String>>> {
    if x.is_null() {
        return Ok(None);
    }
    match x.as_str_vector() {
        Some(v) => Ok(Some(v.into_iter().map(str::to_string).collect())),
        _ => Err(input(name, "must be character strings")),
    }
}

fn string(x: &Robj, name: &str) -> Outcome<Option<String>> {
    match strings(x, name)? {
        None => Ok(None),
        Some(mut v) if v.len() == 1 => Ok(Some(v.remove(0))),
        Some(_) => Err(input(name, "must be one character string")),
    }
}

fn required<T>(value: Option<T>, name: &str) -> Outcome<T> {
    value.ok_or_else(|| input(name, "is required"))
}

fn flag(x: &Robj, name: &str) -> Outcome<bool> {
    x.as_bool().ok_or_else(|| input(name, "must be TRUE or FALSE"))
}

/// Read and validate a model file (TOML).
#[extendr]
fn native_model_load(path: Robj) -> Robj {
    answer((|| {
        bindings::check_memory_limit()?;
        let path = PathBuf::from(required(string(&path, "path")?, "path")?);
        let model = Model::load(&path)?;
        Ok(ExternalPtr::new(RModel { model: Arc::new(model), path: Some(path) }).into())
    })())
}

/// Parse and validate a model from TOML text; `origin` names it in messages.
#[extendr]
fn native_model_from_toml(text: Robj, origin: Robj) -> Robj {
    answer((|| {
        bindings::check_memory_limit()?;
        let text = required(string(&text, "text")?, "text")?;
        let origin = required(string(&origin, "origin")?, "origin")?;
        let model = bindings::model_from_toml(&text, &origin)?;
        Ok(ExternalPtr::new(RModel { model: Arc::new(model), path: None }).into())
    })())
}

/// Validate a model given as JSON text (an R list's fields); `origin` names it in messages.
#[extendr]
fn native_model_from_json(text: Robj, origin: Robj) -> Robj {
    answer((|| {
        bindings::check_memory_limit()?;
        let text = required(string(&text, "text")?, "text")?;
        let origin = required(string(&origin, "origin")?, "origin")?;
        let model = bindings::model_from_json(&text, &origin)?;
        Ok(ExternalPtr::new(RModel { model: Arc::new(model), path: None }).into())
    })())
}

/// The model's name, number of parties, ε list and spec (JSON text).
#[extendr]
fn native_model_info(model: Robj) -> Robj {
    answer((|| {
        let m = pointer::<RModel>(&model, "model", "a model (ubapp_model())")?;
        Ok(list!(
            name = m.model.name(),
            parties = m.model.parties() as f64,
            epsilons = m.model.epsilons().to_vec(),
            source = bindings::model_source(&m.model, m.path.as_deref()),
            spec = bindings::spec_json(&m.model)
        )
        .into())
    })())
}

/// Solve for each ε (the model's list when `NULL`), to the certified `gap` or within `max_seconds`
/// where given: per ε, its `solve --json` object (text),
/// P's values (column-major, as R stores a matrix) and shape, and the solution (to certify).
#[extendr]
fn native_solve(model: Robj, eps: Robj, solver: Robj, gap: Robj, max_seconds: Robj) -> Robj {
    answer((|| {
        bindings::check_memory_limit()?;
        let m = pointer::<RModel>(&model, "model", "a model (ubapp_model())")?;
        let eps = numbers(&eps, "eps")?;
        let solver = required(string(&solver, "solver")?, "solver")?;
        let gap = number(&gap, "gap")?;
        let max_seconds = number(&max_seconds, "max_seconds")?;
        let rows = bindings::solve_rows(&m.model, eps.as_deref(), &solver, gap, max_seconds)?;
        let items: Vec<Robj> = rows
            .into_iter()
            .map(|solved| {
                let (values, rows, cols) = if solved.solution.has_dense_p() {
                    let p = &solved.solution.p;
                    let (r, c) = p.dim();
                    (p.t().iter().copied().collect::<Vec<f64>>(), r as f64, c as f64)
                } else {
                    (Vec::new(), 0.0, 0.0)
                };
                let row = solved.row.clone();
                let sol = ExternalPtr::new(RSolution { model: m.model.clone(), solved });
                list!(row = row, p = values, p_rows = rows, p_cols = cols, solution = sol).into()
            })
            .collect();
        Ok(List::from_values(items).into())
    })())
}

/// The certified mechanism of a solution, as `solve --out` writes it.
#[extendr]
fn native_certify(solution: Robj) -> Robj {
    answer((|| {
        bindings::check_memory_limit()?;
        let s = pointer::<RSolution>(&solution, "solution", "a solution (a row of solve())")?;
        let release = s.solved.certify(&s.model)?;
        Ok(ExternalPtr::new(RMechanism { release, trusted: true, origin: "the mechanism".into() }).into())
    })())
}

/// Read a mechanism file (re-deriving its certificate), checked against a trusted model file or
/// a pinned fingerprint with `max_eps` when given.
#[extendr]
fn native_mechanism_load(path: Robj, model: Robj, fingerprint: Robj, max_eps: Robj) -> Robj {
    answer((|| {
        bindings::check_memory_limit()?;
        let path = PathBuf::from(required(string(&path, "path")?, "path")?);
        let model = string(&model, "model")?.map(PathBuf::from);
        let fingerprint = string(&fingerprint, "fingerprint")?;
        let max_eps = number(&max_eps, "max_eps")?;
        let loaded = bindings::load_mechanism(&path, model.as_deref(), fingerprint.as_deref(), max_eps)?;
        let m = RMechanism { release: loaded.release, trusted: loaded.trusted, origin: loaded.origin };
        Ok(ExternalPtr::new(m).into())
    })())
}

fn mechanism(x: &Robj) -> Outcome<&ExternalPtr<RMechanism>> {
    pointer::<RMechanism>(x, "mech", "a mechanism (mechanism() or load_mechanism())")
}

/// What R shows of a mechanism.
#[extendr]
fn native_mechanism_info(mech: Robj) -> Robj {
    answer((|| {
        let m = mechanism(&mech)?;
        let r = &m.release;
        Ok(list!(
            kind = r.kind(),
            eps = r.eps(),
            certified_eps = r.certified_eps(),
            delta = r.delta(),
            certified_delta = r.certified_delta(),
            bayes_risk = r.bayes_risk(),
            model_name = r.model().name(),
            output_dim = r.model().outputs().dim() as f64,
            trusted = m.trusted,
            origin = m.origin.as_str()
        )
        .into())
    })())
}

/// Write the artifact atomically, in the format `ubapp verify` reads.
#[extendr]
fn native_mechanism_save(mech: Robj, path: Robj) -> Robj {
    answer((|| {
        bindings::check_memory_limit()?;
        let m = mechanism(&mech)?;
        let path = required(string(&path, "path")?, "path")?;
        m.release.save(Path::new(&path))?;
        Ok(Robj::from(path))
    })())
}

/// The artifact as JSON text.
#[extendr]
fn native_mechanism_json(mech: Robj) -> Robj {
    answer((|| Ok(Robj::from(mechanism(&mech)?.release.to_json().to_string())))())
}

/// `n` releases for observation `y` as `ubapp sample` draws them (StdRng from `seed`, or from the
/// operating system when `NULL`): the coordinates of each release, one after the other.
#[extendr]
fn native_sample(mech: Robj, y: Robj, n: Robj, seed: Robj, budget: Robj, allow_composition: Robj) -> Robj {
    answer((|| {
        bindings::check_memory_limit()?;
        let m = mechanism(&mech)?;
        let y = required(numbers(&y, "y")?, "y")?;
        let n = required(whole(&n, "n")?, "n")?;
        let n = usize::try_from(n).map_err(|_| input("n", "is too large for this machine"))?;
        let seed = whole(&seed, "seed")?;
        let budget = number(&budget, "budget")?;
        let allow = flag(&allow_composition, "allow_composition")?;
        let draws = bindings::sample(&m.release, m.trusted, &y, n, seed, budget, allow)?;
        Ok(Robj::from(draws.into_iter().flatten().collect::<Vec<f64>>()))
    })())
}

/// `ubapp release` from records: `columns` (a named list of numeric vectors; NA stays NaN and is
/// refused by the library naming its element, numbered from 1), one value drawn and recorded in
/// `ledger` against `dataset` before it is returned. The ledger's entry (JSON text).
#[extendr]
fn native_release(mech: Robj, columns: Robj, ledger: Robj, dataset: Robj, seed: Robj) -> Robj {
    answer((|| {
        bindings::check_memory_limit()?;
        let m = mechanism(&mech)?;
        let list = columns.as_list().ok_or_else(|| input("data", "must be a vector or a data frame of records"))?;
        let columns = list
            .iter()
            .map(|(name, values)| {
                let v = values.as_real_slice().ok_or_else(|| input("data", "must hold numbers (or TRUE/FALSE)"))?;
                Ok((name.to_string(), v.to_vec()))
            })
            .collect::<Outcome<Vec<(String, Vec<f64>)>>>()?;
        let request = bindings::ReleaseRequest {
            origin: "data".into(),
            columns,
            first: 1,
            ledger: required(string(&ledger, "ledger")?, "ledger")?,
            dataset: required(string(&dataset, "dataset")?, "dataset")?,
            seed: whole(&seed, "seed")?,
        };
        Ok(Robj::from(bindings::release(&m.release, m.trusted, &m.origin, request)?))
    })())
}

/// `verify --json`'s fields (JSON text) after checking against a trusted model and/or fingerprint.
#[extendr]
fn native_verify(mech: Robj, model: Robj, fingerprint: Robj) -> Robj {
    answer((|| {
        bindings::check_memory_limit()?;
        let m = mechanism(&mech)?;
        let trusted = if model.is_null() {
            None
        } else {
            let t = pointer::<RModel>(&model, "model", "a model (ubapp_model()) or a model file")?;
            Some((t.model.clone(), bindings::model_source(&t.model, t.path.as_deref())))
        };
        let fingerprint = string(&fingerprint, "fingerprint")?;
        let json = bindings::verify_json(
            &m.release,
            &m.origin,
            trusted.as_ref().map(|(model, name)| (model.as_ref(), name.as_str())),
            fingerprint.as_deref(),
        )?;
        Ok(Robj::from(json))
    })())
}

/// The exact posterior given released values (`releases`: a list of coordinate vectors), as
/// `posterior --json`'s fields (JSON text).
#[extendr]
fn native_posterior(mech: Robj, releases: Robj, level: Robj) -> Robj {
    answer((|| {
        bindings::check_memory_limit()?;
        let m = mechanism(&mech)?;
        let list = releases.as_list().ok_or_else(|| input("releases", "must be a list of numeric vectors"))?;
        let items = list
            .values()
            .map(|r| required(numbers(&r, "releases")?, "releases"))
            .collect::<Outcome<Vec<Vec<f64>>>>()?;
        let level = required(number(&level, "level")?, "level")?;
        Ok(Robj::from(bindings::posterior_json(&m.release, m.trusted, &items, level)?))
    })())
}

/// `compare --json`'s `{"rows": [...], "notes": [...]}` (JSON text); with `out`, also the files
/// `compare --out` writes.
#[extendr]
#[allow(clippy::too_many_arguments)] // one per `compare` flag, as R arguments
fn native_compare(
    model: Robj,
    eps: Robj,
    trials: Robj,
    methods: Robj,
    seed: Robj,
    delta: Robj,
    parties: Robj,
    solver: Robj,
    out: Robj,
    max_seconds: Robj,
    gap: Robj,
) -> Robj {
    answer((|| {
        bindings::check_memory_limit()?;
        let m = pointer::<RModel>(&model, "model", "a model (ubapp_model()) or a model file")?;
        let request = CompareRequest {
            max_seconds: number(&max_seconds, "max_seconds")?,
            gap: number(&gap, "gap")?,
            eps: numbers(&eps, "eps")?,
            trials: wholes(&trials, "trials")?,
            methods: strings(&methods, "methods")?,
            seed: required(whole(&seed, "seed")?, "seed")?,
            delta: required(number(&delta, "delta")?, "delta")?,
            parties: wholes(&parties, "parties")?,
            solver: required(string(&solver, "solver")?, "solver")?,
            out: string(&out, "out")?.map(PathBuf::from),
        };
        let source = bindings::model_source(&m.model, m.path.as_deref());
        Ok(Robj::from(bindings::compare_json(&m.model, &source, &request)?))
    })())
}

/// The crate's version.
#[extendr]
fn native_version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

extendr_module! {
    mod ubapp;
    fn native_model_load;
    fn native_model_from_toml;
    fn native_model_from_json;
    fn native_model_info;
    fn native_solve;
    fn native_certify;
    fn native_mechanism_load;
    fn native_mechanism_info;
    fn native_mechanism_save;
    fn native_mechanism_json;
    fn native_sample;
    fn native_release;
    fn native_verify;
    fn native_posterior;
    fn native_compare;
    fn native_version;
}
