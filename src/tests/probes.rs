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
    let report = |name: &str, x: &[f64], mu: &[f64], secs: f64| {
        let p = problem.mechanism_matrix(x);
        let scaled: Vec<f64> = mu.iter().map(|m| m * problem.scale).collect();
        let (obj, bound) = (problem.bayes_risk(&p), problem.lagrangian_bound(&scaled));
        println!(
            "{name}: {secs:.2}s objective {obj:.12e} bound {bound:.12e} gap {:.1e} dp violation {:.1e} column error {:.1e}",
            (obj - bound) / obj,
            problem.max_dp_violation(&p),
            problem.max_column_error(&p)
        );
    };
    report(&format!("interior point ({})", raw.detail), &raw.x, &mu, t_ipm);
    let t = Instant::now();
    match crate::solve::polish::polish(&problem, &raw.x, &mu, std::time::Duration::from_secs(600)) {
        Ok(p) => report(
            &format!("polished ({} rounds, {:?})", p.rounds, p.reduced_size),
            &p.x,
            &p.dp_multipliers,
            t.elapsed().as_secs_f64(),
        ),
        Err(e) => println!("polish failed: {e}"),
    }
}
