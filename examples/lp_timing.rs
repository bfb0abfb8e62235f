//! LP-path timing on the Bernoulli bench model: `cargo run --release --example lp_timing -- K M EPS SOLVER [TOL]`
//! (SOLVER = clarabel | highs | highs-ipm | highs-simplex; TOL sets Clarabel's tolerances).
//! `XREG=1e-13,1e-8` sets Clarabel's regularisation ladder; `XCHECK=1` also prints how the LP point,
//! the certified (repaired) mechanism and the dual bound sit against the chain solver's optimum.
use std::sync::Arc;
use std::time::Instant;
use ubapp::bench::bernoulli_model;
use ubapp::lp::{cost_matrix, Problem};
use ubapp::solve::{solve_problem, LpSolver, SolverChoice};

fn main() {
    let a: Vec<String> = std::env::args().collect();
    let (k, m, eps): (u64, usize, f64) = (a[1].parse().unwrap(), a[2].parse().unwrap(), a[3].parse().unwrap());
    let model = bernoulli_model(k, m, eps);
    let t = Instant::now();
    let cost = Arc::new(cost_matrix(&model).unwrap());
    let tc = t.elapsed().as_secs_f64();
    let problem = Problem::new(cost.clone(), model.family.neighbours(), eps);
    let asm = t.elapsed().as_secs_f64();
    let solver: Box<dyn LpSolver> = match (a[4].as_str(), a.get(5)) {
        #[cfg(feature = "clarabel")]
        ("clarabel", Some(tol)) => Box::new(ubapp::solve::clarabel::ClarabelSolver {
            gap_tolerance: tol.parse().unwrap(),
            feasibility_tolerance: tol.parse().unwrap(),
            max_iter: 400,
            regularization: std::env::var("XREG")
                .map(|v| v.split(',').map(|x| x.parse().unwrap()).collect())
                .unwrap_or(vec![1e-13, 1e-10, 1e-8]),
            polish: std::env::var("XNOPOLISH").is_err(),
        }),
        (name, _) => name.parse::<SolverChoice>().unwrap().backend().unwrap(),
    };
    let s = solve_problem(&problem, solver.as_ref(), asm).unwrap();
    if std::env::var("XCHECK").is_ok() {
        let chain = ubapp::solve::chain::solve_dense(&cost, eps);
        let mech = ubapp::mechanism::Mechanism::certify_from_float(&model, eps, &s.p).unwrap();
        let opt = chain.bayes_risk;
        println!("chain optimum {opt:.12e} (gap {:.1e}); LP point {:+.2e} rel; certified {:+.2e} rel; min entry {:.1e} col err {:.1e}",
            chain.relative_gap, (s.bayes_risk - opt) / opt, (mech.bayes_risk() - opt) / opt, s.min_entry, s.max_column_error);
        if let Some(d) = s.dual_bound {
            println!(
                "dual bound {:+.2e} rel to optimum; certified-vs-bound gap {:.2e}",
                (d - opt) / opt,
                (mech.bayes_risk() - d) / mech.bayes_risk()
            );
        }
    }
    println!(
        "K={k} M={m} eps={eps} {}: cost {tc:.4}s assembly {asm:.4}s solve {:.3}s risk {:.10e} gap {:?} viol {:.1e} status {} ({})",
        s.solver, s.seconds, s.bayes_risk, s.relative_gap, s.max_dp_violation, s.status, s.solver_detail
    );
}
