//! Column generation for chain models where geometric + remap is not optimal (e.g. arbitrary
//! cost matrices).
//!
//! Master LP over columns (k, r) = "row k of P is w·r" with r an extreme ray of the DP cone
//! (normalised to max r = 1):
//!
//! ```text
//! min Σ_j w_j ⟨c_{k_j}, r_j⟩   s.t.  Σ_j w_j r_j = 1 (|Y| equality rows),  w ≥ 0.
//! ```
//!
//! Its equality duals λ price every ray of every output with the O(|Y|) DP of
//! [`super::certificate`] (here in plain floating point, with a traceback to recover the ray);
//! columns of negative reduced cost are added until the *certified* gap — the independent
//! [`super::certificate::certify`] bound against the master's primal value — falls below the
//! tolerance. The master is solved by Clarabel (interior point: its central duals make a
//! well-behaved column-generation dual).

use clarabel::algebra::CscMatrix;
use clarabel::solver::{DefaultSettingsBuilder, DefaultSolver, IPSolver, SolverStatus, SupportedConeT};
use ndarray::Array2;

use super::certificate::{certify, DualCertificate};
use super::costs::ChainCosts;
use crate::solve::compact::GeometricRemap;

/// The outcome of column generation.
#[derive(Debug, Clone)]
pub(crate) struct ColumnGeneration {
    /// The mechanism P (|Θ̃| × |Y|) = Σ_j w_j r_j placed in row k_j.
    pub p: Array2<f64>,
    /// The last master's column duals λ.
    pub lambda: Vec<f64>,
    /// What λ proves.
    pub certificate: DualCertificate,
    /// Columns in the final master.
    pub columns: usize,
    /// Why it stopped.
    pub detail: String,
}

struct Column {
    k: usize,
    ray: Vec<f64>,
    cost: f64,
}

/// The extreme ray (max entry 1) of least Σ d_i r_i found by the pricing DP, with its value.
pub(crate) fn pricing_ray(d: &[f64], eps: f64) -> (Vec<f64>, f64) {
    let n = d.len();
    let a = eps.exp();
    let mut rise = vec![false; n]; // rise[i]: r_{i+1} = a·r_i
    let mut f = d[0];
    for i in 0..n - 1 {
        rise[i] = f >= 0.0;
        f = d[i + 1] + if rise[i] { f / a } else { f * a };
    }
    let mut level = vec![0i64; n];
    for i in (0..n - 1).rev() {
        level[i] = level[i + 1] + if rise[i] { -1 } else { 1 };
    }
    let top = *level.iter().max().expect("n ≥ 1");
    let ray: Vec<f64> = level.iter().map(|&l| (eps * (l - top) as f64).exp()).collect();
    let value = ray.iter().zip(d).map(|(r, x)| r * x).sum();
    (ray, value)
}

/// Why column generation stopped without an answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum ColumnGenerationError {
    /// The restricted master LP failed.
    #[error("master LP: {problem}")]
    Master {
        /// What went wrong.
        problem: String,
    },
}

fn solve_master(columns: &[Column], n: usize, scale: f64) -> Result<(Vec<f64>, Vec<f64>), ColumnGenerationError> {
    let m = columns.len();
    let mut colptr = Vec::with_capacity(m + 1);
    let mut rowval = Vec::new();
    let mut nzval = Vec::new();
    colptr.push(0);
    for (j, c) in columns.iter().enumerate() {
        for (i, &v) in c.ray.iter().enumerate() {
            if v != 0.0 {
                rowval.push(i);
                nzval.push(v);
            }
        }
        rowval.push(n + j);
        nzval.push(-1.0);
        colptr.push(rowval.len());
    }
    let a = CscMatrix::new(n + m, m, colptr, rowval, nzval);
    let p = CscMatrix::<f64>::zeros((m, m));
    let q: Vec<f64> = columns.iter().map(|c| c.cost / scale).collect();
    let mut b = vec![0.0; n + m];
    b[..n].fill(1.0);
    let cones = [SupportedConeT::ZeroConeT(n), SupportedConeT::NonnegativeConeT(m)];
    let settings = DefaultSettingsBuilder::default()
        .verbose(false)
        .max_iter(300)
        .tol_gap_abs(1e-12)
        .tol_gap_rel(1e-12)
        .tol_feas(1e-12)
        .build()
        .map_err(|e| ColumnGenerationError::Master { problem: format!("invalid Clarabel settings: {e}") })?;
    let mut solver = DefaultSolver::new(&p, &q, &a, &b, &cones, settings)
        .map_err(|e| ColumnGenerationError::Master { problem: format!("Clarabel rejected it: {e}") })?;
    solver.solve();
    let sol = &solver.solution;
    match sol.status {
        SolverStatus::Solved | SolverStatus::AlmostSolved => {}
        s => return Err(ColumnGenerationError::Master { problem: format!("Clarabel {s:?}") }),
    }
    // KKT: q + Aᵀz = 0 on the zero cone rows ⇒ reduced cost q_j − Σ_i r_ji λ_i ≥ 0 with λ = −z.
    let lambda = sol.z[..n].iter().map(|z| -z * scale).collect();
    Ok((sol.x.clone(), lambda))
}

fn assemble(columns: &[Column], w: &[f64], n_out: usize, n: usize) -> Array2<f64> {
    let mut p = Array2::zeros((n_out, n));
    for (c, &x) in columns.iter().zip(w) {
        let x = x.max(0.0);
        let mut r = p.row_mut(c.k);
        for (v, &ri) in r.iter_mut().zip(&c.ray) {
            *v += x * ri;
        }
    }
    p
}

/// Column generation from the geometric + remap columns of `start`, until the certified relative
/// gap is ≤ `tol` or `max_iter` master solves.
pub(crate) fn column_generation(
    costs: &dyn ChainCosts,
    eps: f64,
    start: &GeometricRemap,
    tol: f64,
    max_iter: usize,
) -> Result<ColumnGeneration, ColumnGenerationError> {
    let (n, n_out) = (costs.n_obs(), costs.n_outputs());
    let mut row = vec![0.0; n];
    let cost_of = |k: usize, ray: &[f64], row: &mut Vec<f64>| {
        costs.row(k, row);
        row.iter().zip(ray).map(|(c, r)| c * r).sum::<f64>()
    };
    let mut columns: Vec<Column> = Vec::new();
    for (z, &k) in start.remap.iter().enumerate() {
        let ray: Vec<f64> = (0..n).map(|y| (-eps * z.abs_diff(y) as f64).exp()).collect();
        let cost = cost_of(k as usize, &ray, &mut row);
        columns.push(Column { k: k as usize, ray, cost });
    }
    // Objective scale: non-private risk Σ_i min_k c[k,i] (as in crate::lp), else 1.
    let mut mins = vec![f64::INFINITY; n];
    for k in 0..n_out {
        costs.row(k, &mut row);
        for (m, &c) in mins.iter_mut().zip(&row) {
            *m = m.min(c);
        }
    }
    let scale = Some(mins.iter().sum::<f64>()).filter(|s| s.is_finite() && *s > 0.0).unwrap_or(1.0);
    let mut iterations = 0;
    let mut d = vec![0.0; n];
    loop {
        iterations += 1;
        let (w, lambda) = solve_master(&columns, n, scale)?;
        let certificate = certify(costs, eps, &lambda);
        let bayes_risk: f64 = columns.iter().zip(&w).map(|(c, &x)| c.cost * x.max(0.0)).sum();
        let relative_gap = (bayes_risk - certificate.bound) / bayes_risk.abs().max(f64::MIN_POSITIVE);
        let finish = |columns: &[Column], detail: String| ColumnGeneration {
            p: assemble(columns, &w, n_out, n),
            lambda: lambda.clone(),
            certificate,
            columns: columns.len(),
            detail,
        };
        if relative_gap <= tol {
            return Ok(finish(&columns, format!("certified after {iterations} master solves")));
        }
        if iterations >= max_iter {
            return Ok(finish(
                &columns,
                format!("stopped at the iteration cap ({max_iter}) with certified gap {relative_gap:.1e}"),
            ));
        }
        let mut added = 0;
        for k in 0..n_out {
            costs.row(k, &mut row);
            for i in 0..n {
                d[i] = row[i] - lambda[i];
            }
            let (ray, value) = pricing_ray(&d, eps);
            if value < -1e-14 * scale {
                let cost = row.iter().zip(&ray).map(|(c, r)| c * r).sum();
                columns.push(Column { k, ray, cost });
                added += 1;
            }
        }
        if added == 0 {
            return Ok(finish(
                &columns,
                format!("no column prices out below −1e-14 (master accuracy limit); certified gap {relative_gap:.1e}"),
            ));
        }
    }
}
