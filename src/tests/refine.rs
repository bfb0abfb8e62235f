//! The block refinement (`certify::refine`, repair method `Refine`): a solver's vertex, perturbed
//! the way a solver's tolerance perturbs it (every entry moved by up to 1e-10 of itself, so that
//! tight DP rows break and columns miss 1), must be released at the vertex's own risk, where the
//! lift-and-mix repair pays for the perturbation with a column-independent mixing.
#![cfg(feature = "highs")]

use std::sync::Arc;

use ndarray::Array2;
use rand::{rngs::StdRng, RngExt, SeedableRng};

use crate::certify::exact::certify_weights;
use crate::certify::repair::{repair_and_quantise, RepairMethod};
use crate::certify::DEFAULT_TOTAL;
use crate::lp::Problem;
use crate::solve::{Limits, SolverChoice};

use super::mechanism_properties::risk;
use super::outputs::{random_costs, random_graph};

/// Bayes risk of integer weights `columns[i][k]` under `cost[i, k]`.
fn released_risk(cost: &Array2<f64>, columns: &[Vec<u64>]) -> f64 {
    risk(cost, columns, DEFAULT_TOTAL)
}

#[test]
fn refinement_releases_a_perturbed_vertex_at_its_own_risk() {
    let mut rng = StdRng::seed_from_u64(44);
    let mut lift_paid = 0;
    for case in 0..8 {
        let (n_obs, n_out) = (rng.random_range(20..40), rng.random_range(8..16));
        let eps = [0.3, 1.0, 2.0][case % 3];
        let cost = random_costs(&mut rng, n_obs, n_out);
        let neighbours = random_graph(&mut rng, n_obs);
        let problem = Problem::new(Arc::new(cost.clone()), neighbours.clone(), eps);
        // HiGHS's dual simplex: a vertex, no polish.
        let backend =
            crate::solve::strategy::lp_solver(SolverChoice::HighsSimplex, Limits::default(), &Default::default())
                .unwrap();
        let vertex = problem.mechanism_matrix(&backend.solve(&problem).unwrap().x);
        let vertex_risk = problem.objective_value(&vertex);
        let perturbed = vertex.mapv(|v| v * (1.0 + 1e-10 * (2.0 * rng.random::<f64>() - 1.0)));
        let what = format!("case {case} (|Y| = {n_obs}, |Θ̃| = {n_out}, ε = {eps})");

        let (w, certified, report) =
            repair_and_quantise(&neighbours, eps, &perturbed, DEFAULT_TOTAL, RepairMethod::Refine)
                .unwrap_or_else(|e| panic!("{what}: the refinement declined a vertex: {e}"));
        assert_eq!(certify_weights(&w, neighbours.edges(), eps), Ok(certified), "{what}");
        assert!(certified <= eps, "{what}: certified {certified} > {eps}");
        let refined = released_risk(&cost, &w);
        assert!(
            (refined - vertex_risk).abs() <= 1e-12 * vertex_risk,
            "{what}: released {refined} vs the vertex's {vertex_risk} ({report:?})"
        );

        let (w_lift, _, _) =
            repair_and_quantise(&neighbours, eps, &perturbed, DEFAULT_TOTAL, RepairMethod::LiftMix).unwrap();
        if released_risk(&cost, &w_lift) - vertex_risk > 1e-11 * vertex_risk {
            lift_paid += 1;
        }
    }
    // The cases mean something only where the perturbation costs the lift-and-mix repair.
    assert!(lift_paid >= 6, "the perturbation cost the lift-and-mix repair in only {lift_paid} of 8 cases");
}
