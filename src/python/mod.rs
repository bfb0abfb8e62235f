//! The Python extension module `ubapp._native` (cargo feature `python`, built by maturin): thin
//! wrappers over the library's public surface — a model, its solutions, certified mechanisms and
//! the comparison. Rows cross as the same JSON the command line prints (`solve --json`,
//! `compare --json`, `posterior --json`'s fields), so the two cannot drift; the pure-Python
//! package `ubapp` (python/ubapp) turns them into objects and numpy arrays.
//!
//! Errors become `ubapp.InputError` when [`Error::is_input`] holds (the CLI's exit 2) and
//! `ubapp.Error` otherwise, with the same one-sentence message.

use std::path::PathBuf;
use std::str::FromStr;
use std::sync::Arc;

use pyo3::prelude::*;
use rand::rngs::StdRng;
use rand::SeedableRng;

use crate::analysis::{plan_eps, plan_trials, PLAN_TARGET};
use crate::bindings;
use crate::mechanism::{audit, AuditError, AuditJudgement, AuditOptions, Release};
use crate::model::Model;
use crate::report::{check_report_dir, Report, ReportOptions};
use crate::solve::{SolveOptions, SolverChoice};
use crate::Error;

/// The Python exceptions (named `Error` and `InputError` in Python, hence their own module).
mod exceptions {
    use pyo3::exceptions::PyException;

    pyo3::create_exception!(ubapp, Error, PyException, "Anything that went wrong in ubapp.");
    pyo3::create_exception!(
        ubapp,
        InputError,
        Error,
        "Bad input the caller can fix (a model file, a parameter, an artifact): the command line's exit code 2."
    );
}
use exceptions::{Error as UbappError, InputError};

/// Any layer's error as the Python exception its blame calls for (joined into [`Error`] first).
fn py_err(e: impl Into<Error>) -> PyErr {
    let e: Error = e.into();
    let text = python_words(&e.to_string());
    if e.is_input() {
        InputError::new_err(text)
    } else {
        UbappError::new_err(text)
    }
}

/// `UBAPP_MEMORY_LIMIT` checked as the command line checks it before any work
/// ([`bindings::check_memory_limit`]): every call that reads, solves, certifies or samples makes
/// it first.
fn limit_checked() -> PyResult<()> {
    bindings::check_memory_limit().map_err(py_err)
}

/// The library's messages name the command line's flags where the CLI passed them; in Python the
/// same checks name the keyword arguments (`--eps[0] must be …` → `eps[0] must be …`).
fn python_words(text: &str) -> String {
    bindings::keyword_words(text)
}

/// A validated model.
#[pyclass(name = "Model", module = "ubapp._native", frozen)]
struct PyModel {
    model: Arc<Model>,
    /// The file it came from (named in compare's messages), or `None` for text.
    path: Option<PathBuf>,
}

#[pymethods]
impl PyModel {
    /// Read and validate a model file (TOML).
    #[staticmethod]
    fn load(path: PathBuf) -> PyResult<PyModel> {
        limit_checked()?;
        let model = Model::load(&path).map_err(py_err)?;
        Ok(PyModel { model: Arc::new(model), path: Some(path) })
    }

    /// Parse and validate a model from TOML text; `origin` names it in messages.
    #[staticmethod]
    #[pyo3(signature = (text, origin = "<string>"))]
    fn from_toml(text: &str, origin: &str) -> PyResult<PyModel> {
        limit_checked()?;
        let model = bindings::model_from_toml(text, origin).map_err(py_err)?;
        Ok(PyModel { model: Arc::new(model), path: None })
    }

    #[getter]
    fn name(&self) -> String {
        self.model.name().to_string()
    }

    /// The model's number of parties (`[parties] count`, 1 without the section).
    #[getter]
    fn parties(&self) -> u64 {
        self.model.parties()
    }

    #[getter]
    fn epsilons(&self) -> Vec<f64> {
        self.model.epsilons().to_vec()
    }

    /// The model as JSON (its spec, with CSV contents inline).
    fn spec_json(&self) -> String {
        bindings::spec_json(&self.model)
    }

    /// Solve for each ε (the model's list when `None`), to the certified `gap` or within
    /// `max_seconds` where given; the GIL is released while solving.
    #[pyo3(signature = (eps = None, solver = "auto", gap = None, max_seconds = None))]
    fn solve(
        &self,
        py: Python<'_>,
        eps: Option<Vec<f64>>,
        solver: &str,
        gap: Option<f64>,
        max_seconds: Option<f64>,
    ) -> PyResult<Vec<PySolution>> {
        limit_checked()?;
        let model = self.model.clone();
        let rows =
            py.detach(|| bindings::solve_rows(&model, eps.as_deref(), solver, gap, max_seconds)).map_err(py_err)?;
        Ok(rows.into_iter().map(|solved| PySolution { model: self.model.clone(), solved }).collect())
    }
}

impl PyModel {
    /// How messages name the model: its file, or its name.
    fn source(&self) -> String {
        bindings::model_source(&self.model, self.path.as_deref())
    }
}

/// One ε's solution.
#[pyclass(name = "Solution", module = "ubapp._native", frozen)]
struct PySolution {
    model: Arc<Model>,
    /// The solution, its `solve --json` object and the solve's cost matrix (to certify it).
    solved: bindings::SolvedRow,
}

#[pymethods]
impl PySolution {
    /// The `solve --json` object of this solution (text).
    fn row_json(&self) -> String {
        self.solved.row.clone()
    }

    /// P (|Θ̃| × |Y|) as row-major values and its shape, or `None` for a compact chain solution.
    fn p(&self) -> Option<(Vec<f64>, (usize, usize))> {
        if !self.solved.solution.has_dense_p() {
            return None;
        }
        let p = &self.solved.solution.p;
        Some((p.iter().copied().collect(), p.dim()))
    }

    /// The certified mechanism: repaired, quantised to integer weights and checked exactly (the
    /// compact geometric + remap form for a large chain solution), as `solve --out` writes it.
    fn mechanism(&self, py: Python<'_>) -> PyResult<PyMechanism> {
        limit_checked()?;
        let (model, solved) = (&self.model, &self.solved);
        let artifact = py.detach(|| solved.certify(model)).map_err(py_err)?;
        // Built here from the model in hand: nothing to check it against.
        Ok(PyMechanism { artifact, trusted: true, origin: "the mechanism".to_string() })
    }
}

/// A certified mechanism (either artifact kind).
#[pyclass(name = "Mechanism", module = "ubapp._native", frozen)]
struct PyMechanism {
    artifact: Release,
    /// Solved in this process, or loaded and checked against a trusted model or a pinned
    /// fingerprint with an ε bound (`verify --model` / `--fingerprint --max-eps`).
    trusted: bool,
    /// The file it was read from, or "the mechanism" (named in messages).
    origin: String,
}

#[pymethods]
impl PyMechanism {
    /// Read a mechanism file and re-derive its certificate from the integer weights; with `model`
    /// (a trusted model file) or `fingerprint` (with `max_eps`, required with it), check it against
    /// what the deployer trusts, as `verify --model` / `--fingerprint --max-eps` do.
    #[staticmethod]
    #[pyo3(signature = (path, model = None, fingerprint = None, max_eps = None))]
    fn load(
        path: PathBuf,
        model: Option<PathBuf>,
        fingerprint: Option<String>,
        max_eps: Option<f64>,
    ) -> PyResult<PyMechanism> {
        limit_checked()?;
        let loaded =
            bindings::load_mechanism(&path, model.as_deref(), fingerprint.as_deref(), max_eps).map_err(py_err)?;
        Ok(PyMechanism { artifact: loaded.release, trusted: loaded.trusted, origin: loaded.origin })
    }

    /// Whether it was solved in this process or checked against a trusted model when loaded.
    #[getter]
    fn trusted(&self) -> bool {
        self.trusted
    }

    /// Write the artifact (atomically), in the format `ubapp verify` reads.
    fn save(&self, path: PathBuf) -> PyResult<()> {
        limit_checked()?;
        self.artifact.save(&path).map_err(py_err)
    }

    /// The artifact as JSON text.
    fn to_json(&self) -> String {
        self.artifact.to_json().to_string()
    }

    #[getter]
    fn kind(&self) -> &'static str {
        self.artifact.kind()
    }

    #[getter]
    fn eps(&self) -> f64 {
        self.artifact.eps()
    }

    #[getter]
    fn certified_eps(&self) -> f64 {
        self.artifact.certified_eps()
    }

    #[getter]
    fn delta(&self) -> f64 {
        self.artifact.delta()
    }

    #[getter]
    fn certified_delta(&self) -> f64 {
        self.artifact.certified_delta()
    }

    #[getter]
    fn bayes_risk(&self) -> f64 {
        self.artifact.bayes_risk()
    }

    #[getter]
    fn model_name(&self) -> String {
        self.artifact.model().name().to_string()
    }

    #[getter]
    fn output_dim(&self) -> usize {
        self.artifact.model().outputs().dim()
    }

    /// `n` releases for observation `y` (its coordinates), as the command line's `sample` draws
    /// them: StdRng from `seed`, or from the operating system when `None`. Returns one list of
    /// coordinates per release. n > 1 spends n·ε: it needs `budget` ≥ n·ε or `allow_composition`.
    #[pyo3(signature = (y, n = 1, seed = None, budget = None, allow_composition = false))]
    fn sample(
        &self,
        y: Vec<f64>,
        n: usize,
        seed: Option<u64>,
        budget: Option<f64>,
        allow_composition: bool,
    ) -> PyResult<Vec<Vec<f64>>> {
        limit_checked()?;
        bindings::sample(&self.artifact, self.trusted, &y, n, seed, budget, allow_composition).map_err(py_err)
    }

    /// `ubapp release` from records: `columns` (each a name and its values; element i named as
    /// i in messages) give the model's statistic, one value is drawn and recorded in `ledger`
    /// against `dataset`'s budget before it is returned. The ledger's entry (JSON text).
    #[pyo3(signature = (columns, ledger, dataset, seed = None))]
    fn release(
        &self,
        py: Python<'_>,
        columns: Vec<(String, Vec<f64>)>,
        ledger: String,
        dataset: String,
        seed: Option<u64>,
    ) -> PyResult<String> {
        limit_checked()?;
        let request = bindings::ReleaseRequest { origin: "data".into(), columns, first: 0, ledger, dataset, seed };
        let (m, trusted, origin) = (&self.artifact, self.trusted, &self.origin);
        // A ledger shared with other processes may make this wait: let other Python threads run.
        py.detach(|| bindings::release(m, trusted, origin, request)).map_err(py_err)
    }

    /// Check the artifact against what the deployer trusts (`verify --model/--fingerprint`): its
    /// certificate was re-derived on loading; `model` must define the same problem (ε no larger)
    /// and `fingerprint` must be its model's. `verify --json`'s fields (JSON text).
    #[pyo3(signature = (model = None, fingerprint = None))]
    fn verify(&self, model: Option<&PyModel>, fingerprint: Option<String>) -> PyResult<String> {
        limit_checked()?;
        let trusted = model.map(|t| (t.model.as_ref(), t.source()));
        bindings::verify_json(
            &self.artifact,
            &self.origin,
            trusted.as_ref().map(|(m, name)| (*m, name.as_str())),
            fingerprint.as_deref(),
        )
        .map_err(py_err)
    }

    /// The empirical DP test of `ubapp audit` (same draws for the same seed): `audit --json`'s
    /// report (JSON text); raises when the empirical bound contradicts the certificate.
    #[pyo3(signature = (samples = 200_000, seed = 0, alpha = 0.05, max_pairs = 1000))]
    fn audit(&self, py: Python<'_>, samples: u64, seed: u64, alpha: f64, max_pairs: usize) -> PyResult<String> {
        limit_checked()?;
        let m = &self.artifact;
        let mut rng = StdRng::seed_from_u64(seed);
        let r = py
            .detach(|| audit(m, AuditOptions { samples, alpha, max_pairs }, &mut rng, &mut |_, _| {}))
            .map_err(py_err)?;
        if !r.consistent {
            let (what, found, certified) = match r.judged {
                AuditJudgement::Delta => (r.judged.symbol(), r.empirical_delta_lower, r.certified_delta),
                AuditJudgement::Eps => (r.judged.symbol(), r.empirical_eps_lower, r.certified_eps),
            };
            let e = AuditError::Contradiction { origin: self.origin.clone(), what, found, certified, alpha: r.alpha };
            return Err(py_err(e));
        }
        let mut v = serde_json::to_value(&r).expect("a report serialises");
        v["fingerprint"] = m.fingerprint().into();
        Ok(v.to_string())
    }

    /// The exact posterior of θ given released values (each a list of coordinates) as
    /// `posterior --json`'s fields (JSON text); dense mechanisms only.
    #[pyo3(signature = (releases, level = 0.95))]
    fn posterior(&self, releases: Vec<Vec<f64>>, level: f64) -> PyResult<String> {
        limit_checked()?;
        bindings::posterior_json(&self.artifact, self.trusted, &releases, level).map_err(py_err)
    }
}

/// `compare`: the rows as `compare --json` prints them, as `{"rows": [...], "notes": [...]}` (JSON
/// text); with `out`, also the files `compare --out` writes. A model with `[parties]`, a
/// `parties` list, or a family the single-holder comparison does not cover gets the party
/// comparison, as on the command line.
#[pyfunction]
#[pyo3(signature = (model, eps = None, trials = None, methods = None, seed = 0, delta = 1e-5, parties = None, solver = "auto", out = None, max_seconds = None, gap = None))]
#[allow(clippy::too_many_arguments)] // one per `compare` flag, as Python keyword arguments
fn compare_json(
    py: Python<'_>,
    model: &PyModel,
    eps: Option<Vec<f64>>,
    trials: Option<Vec<u64>>,
    methods: Option<Vec<String>>,
    seed: u64,
    delta: f64,
    parties: Option<Vec<u64>>,
    solver: &str,
    out: Option<PathBuf>,
    max_seconds: Option<f64>,
    gap: Option<f64>,
) -> PyResult<String> {
    limit_checked()?;
    let request = bindings::CompareRequest {
        eps,
        trials,
        methods,
        seed,
        delta,
        parties,
        solver: solver.to_string(),
        out,
        max_seconds,
        gap,
    };
    let (m, source) = (model.model.clone(), model.source());
    py.detach(|| bindings::compare_json(&m, &source, &request)).map_err(py_err)
}

/// `plan`: the smallest ε (`for_ = "eps"`) or number of trials K at `eps` (`for_ = "trials"`)
/// whose certified optimal Bayes risk meets the target, as `plan --json` prints it (JSON text).
/// Give exactly one of `target_risk` and `target_rmse` (squared loss: risk = rmse²).
#[pyfunction]
#[pyo3(signature = (model, target_risk = None, target_rmse = None, for_ = "eps", eps = None, solver = "auto"))]
fn plan_json(
    py: Python<'_>,
    model: &PyModel,
    target_risk: Option<f64>,
    target_rmse: Option<f64>,
    for_: &str,
    eps: Option<f64>,
    solver: &str,
) -> PyResult<String> {
    limit_checked()?;
    let m = model.model.clone();
    let squared = m.loss().name() == "squared";
    let target = match (target_risk, target_rmse) {
        (Some(r), None) => r,
        (None, Some(r)) if squared => r * r,
        (None, Some(_)) => {
            return Err(py_err(Error::argument(
                "target_rmse",
                format!("is for squared loss (this model's loss is {}): use target_risk", m.loss().name()),
            )))
        }
        _ => return Err(py_err(Error::argument("target_risk", "give exactly one of target_risk and target_rmse"))),
    };
    // The library's errors about the target name it as a risk: restate them in the argument given.
    let stated = |e: Error| match e {
        Error::Argument { name, problem } if name == PLAN_TARGET => match target_rmse {
            Some(rmse) => Error::argument(
                "target_rmse",
                format!("{rmse} is a target risk of {target:e} (rmse²); that risk {problem}"),
            ),
            None => Error::argument("target_risk", problem),
        },
        other => other,
    };
    let options = SolveOptions {
        solver: SolverChoice::from_str(solver).map_err(py_err)?,
        memory: bindings::memory_budget(),
        ..SolveOptions::default()
    };
    let json = match for_ {
        "eps" => {
            let plan = py.detach(|| plan_eps(&m, target, options)).map_err(|e| py_err(stated(e.into())))?;
            serde_json::to_string(&plan)
        }
        "trials" => {
            let eps = match (eps, m.epsilons()) {
                (Some(e), _) => e,
                (None, [e]) => *e,
                (None, list) => {
                    return Err(py_err(Error::argument(
                        "eps",
                        format!("for_=\"trials\" needs one ε: give eps (the model lists {})", list.len()),
                    )))
                }
            };
            let plan = py.detach(|| plan_trials(&m, eps, target, options)).map_err(|e| py_err(stated(e.into())))?;
            serde_json::to_string(&plan)
        }
        other => {
            return Err(py_err(Error::argument("for_", format!("must be \"eps\" or \"trials\" (got \"{other}\")"))))
        }
    };
    Ok(json.expect("a plan serialises"))
}

/// `report`: write the report of `model` into `out` (report.html, report.md, the plots, the
/// certified artifacts), as `ubapp report` does; returns what was written (JSON text).
#[pyfunction]
#[pyo3(signature = (model, out, eps = None, solver = "auto", seed = 0))]
fn report(
    py: Python<'_>,
    model: &PyModel,
    out: PathBuf,
    eps: Option<Vec<f64>>,
    solver: &str,
    seed: u64,
) -> PyResult<String> {
    limit_checked()?;
    let inputs: Vec<&std::path::Path> = model.path.iter().map(PathBuf::as_path).collect();
    check_report_dir(&out, "out", &inputs).map_err(py_err)?;
    let model_text = match &model.path {
        Some(p) => Some(std::fs::read_to_string(p).map_err(|source| py_err(Error::Io { path: p.clone(), source }))?),
        None => None,
    };
    let opts = ReportOptions {
        eps,
        solve: SolveOptions {
            solver: SolverChoice::from_str(solver).map_err(py_err)?,
            memory: bindings::memory_budget(),
            ..SolveOptions::default()
        },
        seed,
        model_arg: model.path.as_ref().map_or_else(|| "MODEL.toml".to_string(), |p| p.display().to_string()),
        model_text,
        out_arg: out.display().to_string(),
    };
    let m = model.model.clone();
    let r = py
        .detach(|| {
            let r = Report::build(&m, &opts, &mut |_| {})?;
            r.write(&out, "out")?;
            Ok::<_, Error>(r)
        })
        .map_err(py_err)?;
    let v = serde_json::json!({
        "out": out.display().to_string(),
        "figures": r.figures.len(),
        "artifacts": r.certificates.iter().map(|c| &c.file).collect::<Vec<_>>(),
        "warnings": r.warnings,
    });
    Ok(v.to_string())
}

/// The module `ubapp._native`.
#[pymodule]
#[pyo3(name = "_native")]
fn native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("Error", m.py().get_type::<UbappError>())?;
    m.add("InputError", m.py().get_type::<InputError>())?;
    m.add_class::<PyModel>()?;
    m.add_class::<PySolution>()?;
    m.add_class::<PyMechanism>()?;
    m.add_function(wrap_pyfunction!(compare_json, m)?)?;
    m.add_function(wrap_pyfunction!(plan_json, m)?)?;
    m.add_function(wrap_pyfunction!(report, m)?)?;
    Ok(())
}
