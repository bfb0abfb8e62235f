//! The time estimate (`solve::estimate`) scales the LP by the outputs output generation starts
//! from: those must be the outputs the first restricted LP of the solve actually holds, and the
//! estimate must shrink with them. On a band it counts the block interior point's iterations by
//! the band's width and ε: within 2× of those a solve reports.
#![cfg(feature = "highs")]

use crate::model::Model;
use crate::solve::estimate::{block_ipm_iterations, edge_count, Relation};
use crate::solve::{estimate, solve_model, SolveOptions, SolverChoice};

use super::common::parse_model;

fn multinomial(records: u64, alpha: &str) -> String {
    format!(
        "name = \"m\"\nepsilon = [0.5]\n[parameter]\ngrid = {{ kind = \"simplex\", resolution = 8 }}\nprior = {{ kind = \"dirichlet\", alpha = [{alpha}] }}\n[observation]\nfamily = \"multinomial\"\ncategories = 3\nrecords = {records}\n[output]\ngrid = \"parameter\"\n[loss]\nkind = \"squared-euclidean\"\n"
    )
}

#[test]
fn the_estimate_starts_from_the_outputs_the_solve_starts_from() {
    for (records, alpha) in [(8, "1.0, 2.0, 3.0"), (12, "2.0, 2.0, 2.0")] {
        let model = parse_model(&multinomial(records, alpha));
        let options = SolveOptions::default();
        let est = estimate(&model, &[0.5], &options).unwrap();
        assert!(est.output_generation, "{est:?}");
        let start = est.restricted_outputs.expect("small enough to find the first outputs");
        let whole = estimate(&model, &[], &options).unwrap();
        assert_eq!(whole.restricted_outputs, None);
        assert!(start < est.size.outputs, "K = {records}: every output in the first set");
        assert!(est.seconds_per_eps < whole.seconds_per_eps, "{} vs {}", est.seconds_per_eps, whole.seconds_per_eps);
        let s = solve_model(&model, Some(&[0.5]), SolveOptions::default()).unwrap().remove(0);
        // "by output generation: N of M outputs in R round(s)": the first round's N is `start`
        // when one round sufficed, else the rounds only added outputs.
        let used: usize = s
            .solver_detail
            .split("by output generation: ")
            .nth(1)
            .and_then(|t| t.split(' ').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("K = {records}: {}", s.solver_detail));
        if s.solver_detail.contains("in 1 round(s)") {
            assert_eq!(used, start, "K = {records}: {}", s.solver_detail);
        } else {
            assert!(used >= start, "K = {records}: {}", s.solver_detail);
        }
    }
}

fn band(records: u64, cap: u64, eps: f64) -> Model {
    parse_model(&format!(
        "name = \"band\"\nepsilon = [{eps}]\n[parameter]\nlower = 0.0\nupper = 4.0\ngrid = {{ kind = \"midpoint\", points = 20 }}\nprior = {{ kind = \"beta\", a = 2.0, b = 5.0 }}\n[observation]\nfamily = \"poisson\"\nrecords = {records}\ncap = {cap}\n[loss]\nkind = \"squared\"\n"
    ))
}

/// The block interior point's iterations on a band, as its detail reports them.
fn measured_iterations(model: &Model) -> f64 {
    let options = SolveOptions { solver: SolverChoice::BlockIpm, output_generation: false, ..SolveOptions::default() };
    let s = solve_model(model, None, options).unwrap().remove(0);
    let count = s.solver_detail.split(" iterations").next().and_then(|t| t.rsplit(' ').next());
    count.and_then(|n| n.parse().ok()).unwrap_or_else(|| panic!("{}", s.solver_detail))
}

#[test]
fn a_bands_iterations_are_estimated_within_2x_and_grow_with_its_width() {
    let mut estimated = Vec::new();
    for (records, cap, eps) in [(30, 2, 1.0), (30, 5, 0.4)] {
        let model = band(records, cap, eps);
        let n_obs = model.family.observation_count() as f64;
        let edges = edge_count(&model.family) as f64;
        let estimate = block_ipm_iterations(Relation::Band, n_obs, edges, &[eps]);
        let measured = measured_iterations(&model);
        let ratio = estimate / measured;
        assert!((0.5..=2.0).contains(&ratio), "{records} records, cap {cap}, ε = {eps}: {estimate} vs {measured}");
        estimated.push(estimate);
    }
    assert!(estimated[1] > 1.5 * estimated[0], "{estimated:?}");
}
