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
        let backend =
            crate::solve::strategy::lp_solver(SolverChoice::HighsIpm, Limits::default(), &Default::default()).unwrap();
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

/// The pricing LP is solved on d/|d|_∞, so that its absolute tolerance (1e-10) is relative to
/// the reduced costs: the bound takes Σ_i min_k, and 1e-10 on reduced costs of order 1e-4 (a large
/// poll's) cost 1e-10·|Y| of bound — the 1.3e-7 that kept a poll of 60 at resolution 10 from
/// certifying. Its multipliers and shortfall must come back in the row's own units: whatever they
/// leave below −σ on reduced costs of order 1e-4 must be rounding. (Small LPs like these are met far
/// inside the tolerance either way; the resolution-10 poll is the measured case, in the benches.)
#[test]
fn a_pricing_lp_meets_its_rows_relative_to_the_reduced_costs() {
    use crate::solve::polish::{row_certificate, DpRows};
    let mut rng = StdRng::seed_from_u64(7);
    for case in 0..8 {
        let n_obs = rng.random_range(40..80);
        let eps = [0.3, 1.0, 2.0][case % 3];
        let problem = Problem::new(Arc::new(random_costs(&mut rng, n_obs, 4)), random_graph(&mut rng, n_obs), eps);
        let dp = DpRows::new(&problem);
        let d: Vec<f64> = (0..n_obs).map(|_| 1e-4 * (rng.random::<f64>() - 0.3)).collect();
        let (row_mu, shortfall, _) = row_certificate(&problem, &dp, 0, &d).unwrap();
        let mut mu = vec![0.0; problem.n_dp_rows()];
        for (r, m) in row_mu {
            mu[r] = m;
        }
        let reduced = problem.reduced_costs(&mu, &[0]);
        let cost: Vec<f64> = (0..n_obs).map(|i| problem.cost[[i, 0]] / problem.scale).collect();
        // reduced costs of d (not of the problem's own row 0): shift by d − c̃.
        let below: f64 = (0..n_obs).map(|i| (-(reduced[0][i] - cost[i] + d[i])).max(0.0)).sum();
        assert!(
            below <= shortfall + 1e-12 * 1e-4 * n_obs as f64,
            "case {case}: reduced costs fall {below:e} below 0 against a shortfall of {shortfall:e}"
        );
    }
}
