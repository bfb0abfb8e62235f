//! Repricing (`solve::reprice`): multipliers rebuilt row by row from a vertex's own column prices
//! must turn a loose certificate into a tight one without ever claiming a bound above the
//! optimum. The vertex comes from HiGHS; the multipliers of its unused output rows are loosened on
//! purpose (each scaled by a random factor in [0, 0.5]: what a solver's dual infeasibility does,
//! or a restricted LP's lift, which leaves them 0), and the optimum is checked against Clarabel on
//! the whole LP.
#![cfg(all(feature = "highs", feature = "clarabel"))]

use std::sync::Arc;
use std::time::Duration;

use rand::{rngs::StdRng, RngExt, SeedableRng};

use crate::lp::Problem;
use crate::solve::{reprice::reprice, solve_lp, Limits, SolveOptions, SolverChoice, Status};

use super::common::rel_diff;
use super::outputs::{random_costs, random_graph};

#[test]
fn repriced_multipliers_certify_a_vertex_whose_own_do_not() {
    let mut rng = StdRng::seed_from_u64(2026);
    let mut repaired = 0;
    for case in 0..8 {
        let (n_obs, n_out) = (rng.random_range(12..24), rng.random_range(6..12));
        let eps = [0.3, 0.8, 1.5][case % 3];
        let problem = Problem::new(Arc::new(random_costs(&mut rng, n_obs, n_out)), random_graph(&mut rng, n_obs), eps);
        let backend = SolverChoice::HighsIpm.backend(Limits::default(), &Default::default()).unwrap();
        let raw = backend.solve(&problem).unwrap();
        let objective = problem.objective_value(&problem.mechanism_matrix(&raw.x));
        // The bound in the objective's units: μ is in the scaled LP's.
        let bound_of = |mu: &[f64]| problem.lagrangian_bound(&mu.iter().map(|m| m * problem.scale).collect::<Vec<_>>());
        let mu = raw.dp_multipliers.clone().expect("HiGHS gives multipliers");
        let p = problem.mechanism_matrix(&raw.x);
        let unused: Vec<bool> = (0..n_out).map(|k| p.row(k).iter().all(|&v| v < 1e-9)).collect();
        let loosened: Vec<f64> = mu
            .iter()
            .enumerate()
            .map(|(r, &m)| if unused[r % n_out] { m * 0.5 * rng.random::<f64>() } else { m })
            .collect();
        let loose = bound_of(&loosened);
        // The test means something only where the loosened bound is visibly loose.
        if (objective - loose) / objective < 1e-6 {
            continue;
        }
        let repriced = reprice(&problem, &raw.x, &loosened, Duration::from_secs(60)).unwrap();
        let bound = bound_of(&repriced.dp_multipliers);
        let whole =
            solve_lp(&problem, &[SolverChoice::Clarabel], "test", &SolveOptions::from(SolverChoice::Clarabel), 0.0)
                .unwrap();
        assert_eq!(whole.status, Status::Optimal, "case {case}: {}", whole.solver_detail);
        let optimum = whole.bayes_risk;
        assert!(bound <= optimum * (1.0 + 1e-9), "case {case}: bound {bound} above the optimum {optimum}");
        assert!(bound >= loose, "case {case}: repricing lowered the bound {loose} to {bound}");
        assert!(
            rel_diff(bound, objective) < 1e-8,
            "case {case}: repriced bound {bound} vs vertex objective {objective} (loosened {loose}, {} rows priced)",
            repriced.rows_priced
        );
        repaired += 1;
    }
    assert!(repaired >= 5, "only {repaired} of 8 cases had a loose certificate to repair");
}
