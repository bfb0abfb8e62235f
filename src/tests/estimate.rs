//! The time estimate (`solve::estimate`) scales the LP by the outputs output generation starts
//! from: those must be the outputs the first restricted LP of the solve actually holds, and the
//! estimate must shrink with them.
#![cfg(feature = "highs")]

use crate::solve::{estimate, solve_model, SolveOptions};

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
