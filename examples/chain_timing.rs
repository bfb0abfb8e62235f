//! Quick timing of the compact chain solver on the Bernoulli model (uniform midpoint prior,
//! Θ̃ = Θ, squared loss): `cargo run --release --example chain_timing -- K M EPS`.
use std::time::Instant;
use ubapp::model::{Model, ModelSpec};
use ubapp::solve::solve_model_compact;

fn main() {
    let a: Vec<String> = std::env::args().collect();
    if a.len() != 4 {
        eprintln!("usage: chain_timing K M EPS");
        std::process::exit(2);
    }
    let (k, m, eps): (u64, usize, f64) = (a[1].parse().unwrap(), a[2].parse().unwrap(), a[3].parse().unwrap());
    let text = format!("name = \"b\"\nepsilon = [{eps}]\n[parameter]\nlower = 0.0\nupper = 1.0\ngrid = {{ kind = \"midpoint\", points = {m} }}\nprior = {{ kind = \"uniform\" }}\n[observation]\nfamily = \"binomial\"\ntrials = {k}\n[loss]\nkind = \"squared\"\n");
    let model = Model::from_spec(ModelSpec::from_toml(&text, "b").unwrap()).unwrap();
    let t = Instant::now();
    let (s, asm) = solve_model_compact(&model, eps).unwrap();
    println!(
        "K={k} M={m} eps={eps}: assembly {asm:.4}s total {:.4}s timings {:?} risk {:.10e} gap {:.2e} shift {:e}",
        t.elapsed().as_secs_f64(),
        s.timings,
        s.bayes_risk,
        s.relative_gap,
        s.certificate.shift
    );
}
