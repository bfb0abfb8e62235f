//! Benchmark cases for `ubapp bench`: the Bernoulli model (uniform
//! midpoint prior, Θ̃ = Θ, squared loss) at sizes (K trials, M grid points), solved by the LP path
//! or by the chain solver, with each stage timed and the peak memory read from the kernel.

use serde::{Deserialize, Serialize};

use ubapp::model::{Model, ModelSpec};
use ubapp::solve::{solve_model, solve_model_compact, SolveOptions, SolverChoice, Status};
use ubapp::Result;

/// The Bernoulli model of the benchmark table at (K, M) and one ε.
pub fn bernoulli_model(trials: u64, points: usize, eps: f64) -> Model {
    let text = format!(
        "name = \"bernoulli-k{trials}-m{points}\"\nepsilon = [{eps:e}]\n[parameter]\nlower = 0.0\nupper = 1.0\n\
         grid = {{ kind = \"midpoint\", points = {points} }}\nprior = {{ kind = \"uniform\" }}\n\
         [observation]\nfamily = \"binomial\"\ntrials = {trials}\n[output]\ngrid = \"parameter\"\n[loss]\nkind = \"squared\"\n"
    );
    Model::from_spec(ModelSpec::from_toml(&text, "bench").expect("bench model parses")).expect("bench model is valid")
}

/// How a case is solved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BenchPath {
    /// The general LP with a backend: dense cost matrix, CSC assembly, solve, checks + Lagrangian bound.
    Lp(SolverChoice),
    /// The chain solver in compact form: squared-loss moments, remap + duals, certificate.
    Chain,
}

impl BenchPath {
    /// Name in tables and on the command line (`chain` or the LP backend's name).
    pub fn name(self) -> String {
        match self {
            BenchPath::Lp(c) => format!("lp-{c}"),
            BenchPath::Chain => "chain".into(),
        }
    }

    /// Parse [`BenchPath::name`].
    pub fn parse(s: &str) -> Result<BenchPath> {
        match s.strip_prefix("lp-") {
            Some(rest) => Ok(BenchPath::Lp(rest.parse()?)),
            None if s == "chain" => Ok(BenchPath::Chain),
            None => Err(ubapp::Error::argument(
                "--single",
                format!("names an unknown path \"{s}\" (expected chain or lp-<solver>)"),
            )),
        }
    }
}

/// One measured run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BenchRow {
    /// K.
    pub trials: u64,
    /// M (= |Θ̃|).
    pub points: usize,
    /// ε.
    pub eps: f64,
    /// `chain` or `lp-<backend>`.
    pub path: String,
    /// Model assembly: cost matrix and LP assembly, or the squared-loss moments.
    pub assembly_seconds: f64,
    /// The solve proper.
    pub solve_seconds: f64,
    /// Checking the result: DP violation, column sums and the dual bound.
    pub certificate_seconds: f64,
    /// Peak resident memory of the process (VmHWM), KiB, when readable.
    pub peak_kib: Option<u64>,
    /// Bayes risk of the returned mechanism.
    pub bayes_risk: f64,
    /// Certified lower bound on the optimum.
    pub dual_bound: Option<f64>,
    /// (risk − bound)/risk.
    pub relative_gap: Option<f64>,
    /// Status after our checks.
    pub status: Status,
}

/// Peak resident set size of this process (VmHWM in /proc/self/status), KiB.
pub fn peak_rss_kib() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Run one case in this process (peak memory is the process's: run each case in a fresh process
/// for a per-case figure, as `ubapp bench` does).
pub fn run_case(trials: u64, points: usize, eps: f64, path: BenchPath) -> Result<BenchRow> {
    let model = bernoulli_model(trials, points, eps);
    let row = |assembly_seconds,
               solve_seconds,
               certificate_seconds,
               bayes_risk,
               dual_bound: Option<f64>,
               relative_gap,
               status: Status| BenchRow {
        trials,
        points,
        eps,
        path: path.name(),
        assembly_seconds,
        solve_seconds,
        certificate_seconds,
        peak_kib: peak_rss_kib(),
        bayes_risk,
        dual_bound,
        relative_gap,
        status,
    };
    match path {
        BenchPath::Lp(choice) => {
            // No polish-free shortcut and no chain: the LP path exactly as `solve --solver` runs it.
            let s = solve_model(&model, Some(&[eps]), SolveOptions::from(choice))?.remove(0);
            Ok(row(
                s.assembly_seconds,
                s.seconds,
                0.0,
                s.bayes_risk,
                s.checks.dual_bound,
                s.checks.relative_gap,
                s.status,
            ))
        }
        BenchPath::Chain => {
            let (s, assembly) = solve_model_compact(&model, eps)?;
            let status = if s.certified() { Status::Optimal } else { Status::NearOptimal };
            Ok(row(
                assembly,
                s.timings.remap + s.timings.duals,
                s.timings.certificate,
                s.bayes_risk,
                Some(s.certificate.bound),
                Some(s.relative_gap),
                status,
            ))
        }
    }
}

/// Median of a non-empty list.
pub fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        0.5 * (v[n / 2 - 1] + v[n / 2])
    }
}

/// CVXPY + Clarabel seconds measured on this model at ε = 0.1 on the 2-core reference machine (docs/benchmarks.md), if listed.
pub fn cvxpy_seconds(trials: u64, points: usize) -> Option<f64> {
    match (trials, points) {
        (100, 100) => Some(0.36),
        (300, 300) => Some(6.5),
        (1000, 300) => Some(108.0),
        (1000, 1000) => Some(371.0),
        _ => None,
    }
}
