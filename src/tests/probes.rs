//! Developer probes of crate internals, `#[ignore]`d: run with
//! `UBAPP_PROBE_MODEL=models/x.toml UBAPP_PROBE_EPS=0.5 cargo test --release --lib polish_probe -- --ignored --nocapture`.

use std::sync::Arc;
use std::time::Instant;

use crate::lp::{cost_matrix, MemoryBudget, Problem};
use crate::model::Model;
use crate::solve::clarabel::ClarabelSolver;
use crate::solve::{Limits, LpSolver};

/// The interior point's and the polished vertex's objective, Lagrangian bound and DP violation on
/// any model file (`UBAPP_PROBE_REG` sets Clarabel's static regularisation, default 1e-8).
#[test]
#[ignore = "a probe: needs UBAPP_PROBE_MODEL and UBAPP_PROBE_EPS"]
fn polish_probe() {
    let model = Model::load(std::path::Path::new(&std::env::var("UBAPP_PROBE_MODEL").unwrap())).unwrap();
    let eps: f64 = std::env::var("UBAPP_PROBE_EPS").unwrap().parse().unwrap();
    let reg: f64 = std::env::var("UBAPP_PROBE_REG").map_or(1e-8, |r| r.parse().unwrap());
    let cost = Arc::new(cost_matrix(&model, MemoryBudget::available()).unwrap());
    let problem = Problem::new(cost, model.family.neighbours(), eps);
    let solver = ClarabelSolver { static_regularization: reg, ..ClarabelSolver::with_limits(Limits::default()) };
    let t = Instant::now();
    let raw = solver.solve(&problem).unwrap();
    let t_ipm = t.elapsed().as_secs_f64();
    let mu = raw.dp_multipliers.clone().unwrap();
    report(&problem, &format!("interior point ({})", raw.detail), &raw.x, &mu, t_ipm);
    polish_and_report(&problem, &raw.x, &mu, std::time::Duration::from_secs(600));
}

/// The objective, Lagrangian bound and DP and column errors of a point x with multipliers μ
/// (scaled units).
fn report(problem: &Problem, name: &str, x: &[f64], mu: &[f64], secs: f64) {
    let p = problem.mechanism_matrix(x);
    let scaled: Vec<f64> = mu.iter().map(|m| m * problem.scale).collect();
    let (obj, bound) = (problem.bayes_risk(&p), problem.lagrangian_bound(&scaled));
    println!(
        "{name}: {secs:.2}s objective {obj:.12e} bound {bound:.12e} gap {:.1e} dp violation {:.1e} column error {:.1e}",
        (obj - bound) / obj,
        problem.max_dp_violation(&p),
        problem.max_column_error(&p)
    );
}

/// The active-set polish from x and μ within `budget`, and what it gave (or why not).
fn polish_and_report(problem: &Problem, x: &[f64], mu: &[f64], budget: std::time::Duration) {
    let t = Instant::now();
    match crate::solve::polish::polish(problem, x, mu, budget) {
        Ok(p) => report(
            problem,
            &format!("polished ({} rounds, {:?})", p.rounds, p.reduced_size),
            &p.x,
            &p.dp_multipliers,
            t.elapsed().as_secs_f64(),
        ),
        Err(e) => println!("polish failed after {:.1}s: {e}", t.elapsed().as_secs_f64()),
    }
}

/// The block interior point's point on a model file, cached in `UBAPP_PROBE_CACHE` (raw f64s:
/// the count of x, x, then μ), where its gap lies, then the active-set polish from it with its
/// time:
/// `UBAPP_PROBE_MODEL=benches/models/x.toml UBAPP_PROBE_EPS=0.5 UBAPP_PROBE_CACHE=/tmp/x.bin
/// cargo test --release --lib block_ipm_polish_probe -- --ignored --nocapture`.
#[test]
#[ignore = "a probe: needs UBAPP_PROBE_MODEL, UBAPP_PROBE_EPS and UBAPP_PROBE_CACHE"]
fn block_ipm_polish_probe() {
    use crate::solve::structured::BlockIpmSolver;
    let model = Model::load(std::path::Path::new(&std::env::var("UBAPP_PROBE_MODEL").unwrap())).unwrap();
    let eps: f64 = std::env::var("UBAPP_PROBE_EPS").unwrap().parse().unwrap();
    let cache = std::path::PathBuf::from(std::env::var("UBAPP_PROBE_CACHE").unwrap());
    let cost = Arc::new(cost_matrix(&model, MemoryBudget::available()).unwrap());
    let problem = Problem::new(cost, model.family.neighbours(), eps);
    let (x, mu) = match std::fs::read(&cache) {
        Ok(bytes) => {
            let f: Vec<f64> = bytes.chunks_exact(8).map(|c| f64::from_le_bytes(c.try_into().unwrap())).collect();
            let n = f[0] as usize;
            (f[1..1 + n].to_vec(), f[1 + n..].to_vec())
        }
        Err(_) => {
            let t = Instant::now();
            let solver = BlockIpmSolver { limits: Limits::default(), progress: crate::solve::Progress::none() };
            let raw = solver.solve(&problem).unwrap();
            println!("block interior point: {:.1}s, {}", t.elapsed().as_secs_f64(), raw.detail);
            let mu = raw.dp_multipliers.unwrap();
            let mut bytes = (raw.x.len() as f64).to_le_bytes().to_vec();
            raw.x.iter().chain(&mu).for_each(|v| bytes.extend(v.to_le_bytes()));
            std::fs::write(&cache, bytes).unwrap();
            (raw.x, mu)
        }
    };
    report(&problem, "interior point", &x, &mu, 0.0);
    where_the_gap_lies(&problem, &x, &mu);
    stiffness(&problem, &x, &mu);
    if std::env::var("UBAPP_PROBE_NO_POLISH").is_ok() {
        return;
    }
    polish_and_report(&problem, &x, &mu, std::time::Duration::from_secs(1800));
}

/// Where the gap c·x − g(μ) of a point x with DP multipliers μ (scaled units) lies. With the
/// reduced costs r = c + Dᵀμ and the DP slacks s, c·x − g(μ) = Σ_i Σ_k x (r − min_k r) + Σ μ s
/// (Σ_k x = 1 in every column): the columns' share by the entry's size, the rows' by the size of
/// the entry they bound; and how many DP rows have each relative slack s / (e^ε P[k, b]), the
/// scale-free measure of whether a row is tight.
fn where_the_gap_lies(problem: &Problem, x: &[f64], mu: &[f64]) {
    use std::collections::BTreeMap;
    let (n, n_out, e_eps) = (problem.n_obs(), problem.n_outputs(), problem.eps.exp());
    let decade = |v: f64| (v.max(1e-300).log10().floor() as i64).clamp(-40, 0);
    let mut r = vec![0.0; n_out * n];
    for k in 0..n_out {
        for i in 0..n {
            r[k * n + i] = problem.cost[[i, k]];
        }
    }
    let (mut rows, mut relative) = (BTreeMap::new(), BTreeMap::new());
    for row in dp_rows(problem, x, mu) {
        let m = row.multiplier.max(0.0);
        r[row.output * n + row.lhs] += m;
        r[row.output * n + row.rhs] -= e_eps * m;
        let bound = e_eps * x[problem.var(row.output, row.rhs)];
        *rows.entry(decade(x[problem.var(row.output, row.rhs)])).or_insert(0.0) += m * row.slack;
        *relative.entry(decade(row.slack / bound)).or_insert(0usize) += 1;
    }
    let mut columns = BTreeMap::new();
    for i in 0..n {
        let least = (0..n_out).map(|k| r[k * n + i]).fold(f64::INFINITY, f64::min);
        for k in 0..n_out {
            let v = x[problem.var(k, i)];
            *columns.entry(decade(v)).or_insert(0.0) += v * (r[k * n + i] - least);
        }
    }
    let objective = problem.bayes_risk(&problem.mechanism_matrix(x));
    let shares =
        |m: &BTreeMap<i64, f64>| m.iter().map(|(d, v)| format!("1e{d}: {:.1e}", v / objective)).collect::<Vec<_>>();
    println!("gap from the columns, by the entry's decade: {}", shares(&columns).join(", "));
    println!("gap from the DP rows, by the bounding entry's decade: {}", shares(&rows).join(", "));
    println!("DP rows by the decade of their relative slack: {relative:?}");
}

/// How stiff the interior point's blocks are at a cached point: per output, the DP rows whose
/// weight w (d_a² + e^{2ε} d_b²) in I + D Gᵀ W G D exceeds 1e8, 1e10, 1e12, 1e14 (W = λ/s, and
/// D² = x/z with z = μ̄/x, μ̄ the rows' mean λ·s: a centred point's estimate).
fn stiffness(problem: &Problem, x: &[f64], mu: &[f64]) {
    let (n, n_out, e_eps) = (problem.n_obs(), problem.n_outputs(), problem.eps.exp());
    let pairs: Vec<_> = dp_rows(problem, x, mu)
        .map(|row| (row.output, row.lhs, row.rhs, row.multiplier.max(1e-300), row.slack.max(1e-300)))
        .collect();
    let mean = pairs.iter().map(|p| p.3 * p.4).sum::<f64>() / pairs.len() as f64;
    let d2 = |k: usize, i: usize| x[problem.var(k, i)].powi(2) / mean;
    let thresholds = [1e8, 1e10, 1e12, 1e14];
    let mut per_output = vec![[0usize; 4]; n_out];
    for &(k, a, b, l, s) in &pairs {
        let weight = l / s * (d2(k, a) + e_eps * e_eps * d2(k, b));
        for (t, &th) in thresholds.iter().enumerate() {
            if weight > th {
                per_output[k][t] += 1;
            }
        }
    }
    println!("mean λ·s {mean:.2e}; {n} observations, {} DP rows an output", pairs.len() / n_out);
    for (t, th) in thresholds.iter().enumerate() {
        let mut counts: Vec<usize> = per_output.iter().map(|c| c[t]).collect();
        counts.sort_unstable();
        println!(
            "rows heavier than {th:.0e}: per output min {} median {} max {} total {}",
            counts[0],
            counts[n_out / 2],
            counts[n_out - 1],
            counts.iter().sum::<usize>()
        );
    }
}

/// One DP row P[k, lhs] ≤ e^ε P[k, rhs] at a point: its multiplier (scaled units) and slack.
struct DpRow {
    output: usize,
    lhs: usize,
    rhs: usize,
    multiplier: f64,
    slack: f64,
}

/// Every DP row of `problem` at the point x with multipliers μ, in the LP's row order.
fn dp_rows<'a>(problem: &'a Problem, x: &'a [f64], mu: &'a [f64]) -> impl Iterator<Item = DpRow> + 'a {
    let (n_out, e_eps) = (problem.n_outputs(), problem.eps.exp());
    problem.neighbours.edges().enumerate().flat_map(move |(e, (a, b))| {
        [(a, b), (b, a)].into_iter().enumerate().flat_map(move |(dir, (lhs, rhs))| {
            (0..n_out).map(move |k| DpRow {
                output: k,
                lhs,
                rhs,
                multiplier: mu[(2 * e + dir) * n_out + k] * problem.scale,
                slack: e_eps * x[problem.var(k, rhs)] - x[problem.var(k, lhs)],
            })
        })
    })
}
