//! LP-path timing on the Bernoulli benchmark model (uniform midpoint prior, Θ̃ = Θ, squared loss):
//! `cargo run --release --example lp_timing -- K M EPS SOLVER` (SOLVER = clarabel | highs |
//! highs-ipm | highs-simplex). `XNOPOLISH=1` switches the active-set polish off; `XCHECK=1` also
//! prints how the LP point, the certified (released) mechanism and the dual bound sit against the
//! chain solver's certified optimum.
use std::time::Instant;
use ubapp::mechanism::Release;
use ubapp::model::{Model, ModelSpec};
use ubapp::solve::{solve_model, SolveOptions, SolverChoice};

fn main() {
    let a: Vec<String> = std::env::args().collect();
    if a.len() != 5 {
        eprintln!("usage: lp_timing K M EPS SOLVER");
        std::process::exit(2);
    }
    let (k, m, eps): (u64, usize, f64) = (a[1].parse().unwrap(), a[2].parse().unwrap(), a[3].parse().unwrap());
    let text = format!(
        "name = \"bernoulli-k{k}-m{m}\"\nepsilon = [{eps:e}]\n[parameter]\nlower = 0.0\nupper = 1.0\n\
         grid = {{ kind = \"midpoint\", points = {m} }}\nprior = {{ kind = \"uniform\" }}\n\
         [observation]\nfamily = \"binomial\"\ntrials = {k}\n[output]\ngrid = \"parameter\"\n[loss]\nkind = \"squared\"\n"
    );
    let model = Model::from_spec(ModelSpec::from_toml(&text, "lp_timing").unwrap()).unwrap();
    let solver: SolverChoice = a[4].parse().unwrap();
    let options = SolveOptions { polish: std::env::var("XNOPOLISH").is_err(), ..SolveOptions::from(solver) };
    let t = Instant::now();
    let s = solve_model(&model, Some(&[eps]), options).unwrap().remove(0);
    let total = t.elapsed().as_secs_f64();
    if std::env::var("XCHECK").is_ok() {
        let chain = solve_model(&model, Some(&[eps]), SolverChoice::Chain).unwrap().remove(0);
        let mech = Release::certify(&model, &s).unwrap();
        let opt = chain.bayes_risk;
        println!(
            "chain optimum {opt:.12e} (gap {:.1e}); LP point {:+.2e} rel; certified {:+.2e} rel; min entry {:.1e} col err {:.1e}",
            chain.checks.relative_gap.unwrap_or(f64::NAN),
            (s.bayes_risk - opt) / opt,
            (mech.bayes_risk() - opt) / opt,
            s.checks.min_entry,
            s.checks.max_column_error
        );
        if let Some(d) = s.checks.dual_bound {
            println!(
                "dual bound {:+.2e} rel to optimum; certified-vs-bound gap {:.2e}",
                (d - opt) / opt,
                (mech.bayes_risk() - d) / mech.bayes_risk()
            );
        }
    }
    println!(
        "K={k} M={m} eps={eps} {}: assembly {:.4}s solve {:.3}s total {total:.3}s risk {:.10e} gap {:?} viol {:.1e} status {} ({})",
        s.solver,
        s.assembly_seconds,
        s.seconds,
        s.bayes_risk,
        s.checks.relative_gap,
        s.checks.max_dp_violation,
        s.status,
        s.solver_detail
    );
}
