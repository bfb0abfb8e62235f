//! Probe the active-set polish on a model file: `cargo run --release --example polish_probe -- MODEL EPS`.
//! Prints the interior point's and the polished vertex's objective, Lagrangian bound and DP violation.
use std::sync::Arc;
use std::time::Instant;
use ubapp::lp::{cost_matrix, Problem};
use ubapp::model::Model;
use ubapp::solve::LpSolver;
fn main() {
    let a: Vec<String> = std::env::args().collect();
    let model = Model::load(std::path::Path::new(&a[1])).unwrap();
    let eps: f64 = a[2].parse().unwrap();
    let cost = Arc::new(cost_matrix(&model).unwrap());
    let problem = Problem::new(cost.clone(), model.family.neighbours(), eps);
    let regs: Vec<f64> = a.get(3).map(|r| r.split(',').map(|x| x.parse().unwrap()).collect()).unwrap_or(vec![1e-8]);
    let solver = ubapp::solve::clarabel::ClarabelSolver { regularization: regs, polish: false, ..Default::default() };
    let t = Instant::now();
    let raw = solver.solve(&problem).unwrap();
    let t_ipm = t.elapsed().as_secs_f64();
    let mu = raw.dp_multipliers.clone().unwrap();
    let report = |name: &str, x: &[f64], mu: &[f64], secs: f64| {
        let p = problem.mechanism_matrix(x);
        let scaled: Vec<f64> = mu.iter().map(|m| m * problem.scale).collect();
        let (obj, bound) = (problem.bayes_risk(&p), problem.lagrangian_bound(&scaled));
        println!("{name}: {secs:.2}s objective {obj:.12e} bound {bound:.12e} gap {:.1e} dp violation {:.1e} column error {:.1e}",
            (obj - bound) / obj, problem.max_dp_violation(&p), problem.max_column_error(&p));
    };
    report(&format!("interior point ({})", raw.detail), &raw.x, &mu, t_ipm);
    let t = Instant::now();
    match ubapp::solve::polish::polish(&problem, &raw.x, &mu) {
        Ok(p) => report(
            &format!("polished ({} rounds, {:?})", p.rounds, p.reduced_size),
            &p.x,
            &p.dp_multipliers,
            t.elapsed().as_secs_f64(),
        ),
        Err(e) => println!("polish failed: {e}"),
    }
}
