//! The anytime route (`solve::anytime`): its certified interval [proven bound, risk of the
//! certified mechanism] must contain the optimum that Clarabel finds on the whole LP (an
//! independent interior point, its answer certified by our own bound), on seeded random graphs —
//! disconnected ones and costs of no symmetry included — and on every bundled model with the plain
//! program; an early stop must give a wider interval that still contains it; and the mechanism it
//! releases must pass the artifact's exact checks when written and read back.
#![cfg(feature = "clarabel")]

use std::sync::Arc;

use rand::{rngs::StdRng, RngExt, SeedableRng};

use crate::lp::{cost_matrix, Incidence, MemoryBudget, Problem, Support};
use crate::mechanism::Release;
use crate::model::Neighbours;
use crate::solve::anytime::pieces;
use crate::solve::{anytime, solve_lp, solve_model, Limits, Solution, SolveOptions, SolverChoice, Status};

use super::common::{bundled_models, components};
use super::outputs::{random_costs, random_graph};

/// The whole LP by Clarabel: its certified interval [bound, released risk] (it contains the
/// optimum whatever its width; at most 1e-5 wide, so that containing it means something).
fn reference(cost: &Arc<ndarray::Array2<f64>>, neighbours: &Neighbours, eps: f64) -> (f64, f64) {
    let problem = Problem::try_new(cost.clone(), neighbours.clone(), eps, MemoryBudget::available()).unwrap();
    let options = SolveOptions { output_generation: false, ..SolveOptions::from(SolverChoice::Clarabel) };
    let s = solve_lp(&problem, &[SolverChoice::Clarabel], "test", &options, 0.0).unwrap();
    let gap = s.checks.relative_gap.unwrap_or(f64::INFINITY);
    assert!(gap <= 1e-5, "Clarabel's reference is not certified: {}", s.solver_detail);
    (s.checks.dual_bound.unwrap(), s.checks.certified_objective.unwrap())
}

fn anytime(cost: &Arc<ndarray::Array2<f64>>, neighbours: &Neighbours, eps: f64, options: &SolveOptions) -> Solution {
    let incidence = Incidence::new(neighbours).unwrap();
    anytime::solve_eps(cost, &incidence, eps, "test", options, Some(20.0), 0.0).unwrap()
}

/// Case `case` of a seeded series: 8–23 observations on a random graph (disconnected in about a
/// quarter), 6–23 outputs of random costs, ε cycling through 0.3, 0.8, 1.5 and 3.
fn random_case(rng: &mut StdRng, case: usize) -> (Arc<ndarray::Array2<f64>>, Neighbours, f64) {
    let n_obs = rng.random_range(8..24usize);
    let n_out = rng.random_range(6..24usize);
    let eps = [0.3, 0.8, 1.5, 3.0][case % 4];
    let cost = Arc::new(random_costs(rng, n_obs, n_out));
    (cost, random_graph(rng, n_obs), eps)
}

/// [lower, upper] of a solution: its proven bound and its certified mechanism's proven risk.
fn interval(s: &Solution) -> (f64, f64) {
    (s.checks.dual_bound.unwrap(), s.checks.certified_objective.unwrap())
}

/// The interval contains every point of the reference's (which contains the optimum).
fn contains(what: &str, (lower, upper): (f64, f64), (ref_lower, ref_upper): (f64, f64)) {
    assert!(lower <= upper, "{what}: empty interval [{lower}, {upper}]");
    assert!(lower <= ref_upper * (1.0 + 1e-12), "{what}: bound {lower} above the optimum (≤ {ref_upper})");
    assert!(upper >= ref_lower * (1.0 - 1e-12), "{what}: mechanism {upper} below the optimum (≥ {ref_lower})");
}

#[test]
fn random_graphs_bracket_the_whole_optimum_and_an_early_stop_still_does() {
    let mut rng = StdRng::seed_from_u64(4242);
    let mut disconnected = 0;
    for case in 0..12 {
        let (cost, neighbours, eps) = random_case(&mut rng, case);
        let (n_obs, n_out) = cost.dim();
        let edges: Vec<(usize, usize)> = neighbours.edges().collect();
        let components = components(n_obs, &edges);
        disconnected += usize::from(components > 1);
        let what = format!("case {case} (|Y| = {n_obs}, |Θ̃| = {n_out}, ε = {eps}, {components} components)");
        let exact = reference(&cost, &neighbours, eps);

        let full = anytime(&cost, &neighbours, eps, &SolveOptions { gap: Some(1e-4), ..SolveOptions::default() });
        contains(&what, interval(&full), exact);
        // `optimal` exactly where the certified gap is within the exact routes' 1e-7 (a run may
        // close the gap that far before it notices the target is met).
        let expected = if full.checks.relative_gap.unwrap() <= 1e-7 { Status::Optimal } else { Status::CertifiedGap };
        assert_eq!(full.status, expected, "{what}: {}", full.solver_detail);
        assert!(
            full.checks.relative_gap.unwrap() <= 1e-4,
            "{what}: gap {} ({})",
            full.checks.relative_gap.unwrap(),
            full.solver_detail
        );
        assert!(full.checks.max_dp_violation <= 0.0, "{what}: the release violates DP");

        // A hundred iterations: a wider interval, still around the optimum.
        let early_options = SolveOptions {
            gap: Some(1e-9),
            limits: Limits { iterations: Some(1), ..Limits::default() },
            ..SolveOptions::default()
        };
        let early = anytime(&cost, &neighbours, eps, &early_options);
        contains(&format!("{what}, stopped early"), interval(&early), exact);
        assert!(
            early.checks.relative_gap.unwrap() >= full.checks.relative_gap.unwrap(),
            "{what}: the early stop is narrower ({}) than the full run ({})",
            early.solver_detail,
            full.solver_detail
        );
    }
    assert!(disconnected >= 2, "only {disconnected} disconnected graphs among the 12");
}

#[test]
fn bundled_plain_models_are_bracketed_and_their_release_verifies() {
    let mut solved = 0;
    for path in bundled_models() {
        let model = crate::model::Model::load(&path).unwrap();
        let what = path.file_name().unwrap().to_string_lossy().to_string();
        let eps = model.epsilons[model.epsilons.len() / 2];
        let options = SolveOptions {
            solver: SolverChoice::Anytime,
            gap: Some(1e-2),
            limits: Limits { seconds: Some(3.0), ..Limits::default() },
            ..SolveOptions::default()
        };
        if !model.is_plain_program() {
            let refused = solve_model(&model, Some(&[eps]), options).unwrap_err().to_string();
            assert!(refused.contains("plain Bayes program"), "{what}: {refused}");
            continue;
        }
        let cost = Arc::new(cost_matrix(&model, MemoryBudget::available()).unwrap());
        if cost.len() > 60_000 {
            continue; // the larger bundled polls: benches, not tests
        }
        let s = &solve_model(&model, Some(&[eps]), options).unwrap()[0];
        let exact = reference(&cost, &model.family.neighbours(), eps);
        contains(&what, interval(s), exact);
        assert!(matches!(s.status, Status::CertifiedGap | Status::Optimal), "{what}: {}", s.solver_detail);
        // What --out would write: certified, saved, read back and checked again.
        let release = Release::certify(&model, s).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("m.json");
        release.save(&file).unwrap();
        let loaded = Release::load(&file).unwrap();
        assert!(loaded.certified_eps() <= eps, "{what}: certified ε {}", loaded.certified_eps());
        assert!((loaded.bayes_risk() - s.bayes_risk).abs() <= 1e-12 * s.bayes_risk, "{what}");
        solved += 1;
    }
    assert!(solved >= 5, "only {solved} bundled models solved by the anytime route");
}

/// The decomposition's pieces are disjoint, connected and within their size, its stitched point
/// is column-stochastic, and its proven bound never exceeds the whole LP's optimum.
fn decomposition_rounds(
    what: &str,
    cost: &Arc<ndarray::Array2<f64>>,
    neighbours: &Neighbours,
    eps: f64,
    piece_size: usize,
    rounds: usize,
) -> (f64, Vec<f32>) {
    let incidence = Incidence::new(neighbours).unwrap();
    let (n_obs, n_out) = cost.dim();
    let mut lam = vec![0f32; 2 * incidence.n_edges() * n_out];
    let mut x = vec![0f32; n_obs * n_out];
    let mut bound = f64::NEG_INFINITY;
    let mut adjacent = vec![Vec::new(); n_obs];
    for (a, b) in neighbours.edges() {
        adjacent[a].push(b);
        adjacent[b].push(a);
    }
    let mut last: Option<pieces::Partition> = None;
    for round in 0..rounds {
        // As the route does: the first partition by the rule, the later ones across the last.
        let partition = match &last {
            None => pieces::Partition::new(cost, &incidence, eps, round, piece_size),
            Some(previous) => previous.across(&incidence, round, piece_size),
        };
        let mut owner = vec![usize::MAX; n_obs];
        for (p, piece) in partition.pieces().iter().enumerate() {
            assert!(!piece.is_empty() && piece.len() <= piece_size, "{what}: a piece of {}", piece.len());
            for &i in piece {
                assert_eq!(owner[i as usize], usize::MAX, "{what}: observation {i} in two pieces");
                owner[i as usize] = p;
            }
            // Connected: everything reached from its first observation within the piece.
            let mut seen = vec![piece[0] as usize];
            let mut next = 0;
            while next < seen.len() {
                let i = seen[next];
                next += 1;
                for &j in &adjacent[i] {
                    if owner[j] == p && !seen.contains(&j) {
                        seen.push(j);
                    }
                }
            }
            assert_eq!(seen.len(), piece.len(), "{what}: piece {p} is not connected");
        }
        // The share of cut edges, counted here from the pieces' members.
        let (mut touching, mut cut) = (0, 0);
        for (a, b) in neighbours.edges() {
            if owner[a] != usize::MAX || owner[b] != usize::MAX {
                touching += 1;
                cut += usize::from(owner[a] != owner[b]);
            }
        }
        let expected = cut as f64 / f64::from(touching.max(1));
        assert!((partition.cut_share(&incidence) - expected).abs() < 1e-12, "{what}: cut share");
        pieces::solve_pieces(cost, &incidence, eps, &partition, &mut lam, &mut x, None);
        for i in 0..n_obs {
            let column = &x[i * n_out..(i + 1) * n_out];
            let sum: f32 = column.iter().sum();
            assert!(column.iter().all(|&v| v >= 0.0) && (sum - 1.0).abs() <= 1e-5, "{what}: column {i} sums to {sum}");
        }
        bound = bound.max(crate::certify::exact_plain_bound(cost, &incidence, eps, &lam, 1.0));
        if let Some(previous) = &last {
            assert_eq!(partition.active(), previous.active(), "{what}: the same observations, cut elsewhere");
        }
        last = Some(partition);
    }
    (bound, x)
}

#[test]
fn the_decomposition_bound_never_exceeds_the_whole_optimum_and_proves_more_than_no_privacy() {
    let mut rng = StdRng::seed_from_u64(777);
    let mut above_non_private = 0;
    for case in 0..12 {
        let (cost, neighbours, eps) = random_case(&mut rng, case);
        let (n_obs, n_out) = cost.dim();
        let what = format!("case {case} (|Y| = {n_obs}, |Θ̃| = {n_out}, ε = {eps})");
        let (_, optimum) = reference(&cost, &neighbours, eps);
        let (bound, _) = decomposition_rounds(&what, &cost, &neighbours, eps, 6, 2);
        assert!(bound <= optimum * (1.0 + 1e-12), "{what}: bound {bound} above the optimum {optimum}");
        let non_private = crate::certify::non_private_bound(&cost);
        above_non_private += usize::from(bound > non_private * (1.0 + 1e-9));
    }
    assert!(above_non_private >= 9, "the decomposition proved more than no privacy in {above_non_private} of 12 cases");
}

#[test]
fn one_piece_per_component_with_every_output_nominated_is_the_whole_lp() {
    // Three outputs: all nominated; pieces as large as the graph: each component one piece, so
    // the decomposition is the whole LP, solved by the block interior point and proven in
    // directed rounding — an independent route to Clarabel's optimum.
    let mut rng = StdRng::seed_from_u64(31);
    for case in 0..6 {
        let n_obs = rng.random_range(8..24usize);
        let eps = [0.3, 0.8][case % 2];
        let cost = Arc::new(random_costs(&mut rng, n_obs, 3));
        let neighbours = random_graph(&mut rng, n_obs);
        let what = format!("case {case} (|Y| = {n_obs}, ε = {eps})");
        let (lower, upper) = reference(&cost, &neighbours, eps);
        let (bound, x) = decomposition_rounds(&what, &cost, &neighbours, eps, n_obs, 1);
        assert!(bound <= upper * (1.0 + 1e-12), "{what}: bound {bound} above the optimum ≤ {upper}");
        assert!(bound >= lower * (1.0 - 1e-7), "{what}: bound {bound} short of the optimum ≥ {lower}");
        let risk: f64 = (0..n_obs).map(|i| (0..3).map(|k| cost[[i, k]] * x[i * 3 + k] as f64).sum::<f64>()).sum();
        assert!((risk - upper).abs() <= 1e-5 * upper, "{what}: the pieces' point has risk {risk}, the optimum {upper}");
    }
}

#[test]
fn the_support_bound_is_the_whole_bound_of_its_rows_spread() {
    // Any multipliers on the kept rows, spread over every DP row with zeros elsewhere: the
    // support's proven bound and the whole program's are the same theorem with the same
    // roundings per column (the columns' sum, on every core, may be added in another order: a
    // few units in the last place); a reach beyond the diameter keeps every output.
    let mut rng = StdRng::seed_from_u64(77);
    for case in 0..8 {
        let (cost, neighbours, eps) = random_case(&mut rng, case);
        let (n_obs, n_out) = cost.dim();
        let incidence = Incidence::new(&neighbours).unwrap();
        let whole = Support::full(&incidence, n_out).unwrap();
        let wide = Support::near_rule(&cost, &incidence, n_obs).unwrap();
        assert_eq!(wide.outputs(), whole.outputs(), "case {case}: reach {n_obs} keeps every output");
        assert_eq!(wide.pairs(), whole.pairs(), "case {case}");
        for reach in [0, 1, 2] {
            let support = Support::near_rule(&cost, &incidence, reach).unwrap();
            assert!(support.slots() >= n_obs && support.slots() <= n_obs * n_out, "case {case}");
            // The runs the iteration reads are the pairs, in order, and maximal.
            for e in 0..incidence.n_edges() {
                let ((first, kept), (run_first, runs)) = (support.pairs_of(e), support.runs_of(e));
                assert_eq!(first, run_first, "case {case}, edge {e}");
                let expanded: Vec<(u32, u32)> =
                    runs.iter().flat_map(|r| (0..r.len).map(move |j| (r.at_a + j, r.at_b + j))).collect();
                assert_eq!(expanded, kept, "case {case}, edge {e}");
                assert!(runs
                    .windows(2)
                    .all(|w| w[0].at_a + w[0].len != w[1].at_a || w[0].at_b + w[0].len != w[1].at_b));
            }
            let lam: Vec<f32> = (0..support.rows()).map(|_| rng.random_range(-0.2f32..1.0) * 0.05).collect();
            let mut dense = vec![0f32; 2 * incidence.n_edges() * n_out];
            support.spread_rows(&incidence, &lam, &mut dense);
            let sparse = crate::certify::exact_support_bound(&cost, &incidence, &support, eps, &lam, 1.0, None);
            let spread = crate::certify::exact_plain_bound(&cost, &incidence, eps, &dense, 1.0);
            assert!(
                (sparse - spread).abs() <= 1e-12 * spread.abs(),
                "case {case}, reach {reach}: {sparse} vs {spread}"
            );
        }
    }
}

#[test]
fn the_coordinate_ascent_raises_the_proven_bound_and_never_past_the_optimum() {
    // Random multipliers on the kept rows of 8 random graphs at reach 1 and a reach beyond the
    // diameter: the polished multipliers' proven bound is at least the start's (every step
    // raises the float bound or keeps it; the f32 write-back may cost a few units in the last
    // place), at most the whole LP's optimum (Clarabel), and what the sweep reports in floats is
    // what is then proven.
    let mut rng = StdRng::seed_from_u64(78);
    let mut raised = 0;
    for case in 0..8 {
        let (cost, neighbours, eps) = random_case(&mut rng, case);
        let (n_obs, _) = cost.dim();
        let incidence = Incidence::new(&neighbours).unwrap();
        let (_, optimum_at_most) = reference(&cost, &neighbours, eps);
        for reach in [1, n_obs] {
            let support = Support::near_rule(&cost, &incidence, reach).unwrap();
            let mut lam: Vec<f32> = (0..support.rows()).map(|_| rng.random_range(-0.2f32..1.0) * 0.05).collect();
            let before = crate::certify::exact_support_bound(&cost, &incidence, &support, eps, &lam, 1.0, None);
            let float = anytime::ascent::polish(&cost, &incidence, &support, eps.exp(), &mut lam, 1.0, 3);
            let after = crate::certify::exact_support_bound(&cost, &incidence, &support, eps, &lam, 1.0, None);
            let ulp = 1e-9 * (before.abs() + after.abs());
            assert!(after >= before - ulp, "case {case}, reach {reach}: {before} → {after}");
            assert!(after <= optimum_at_most * (1.0 + 1e-12), "case {case}: {after} above the optimum");
            assert!((float - after).abs() <= 1e-5 * after.abs().max(1e-3), "case {case}: {float} vs {after}");
            raised += usize::from(after > before + ulp);
        }
    }
    assert!(raised >= 8, "the ascent raised the bound in only {raised} of 16 cases");
}

/// A path of `n_obs` observations and `n_out` outputs, each output the non-private choice on a
/// stretch of the path (squared loss under weights of no symmetry, `phase` shifting them).
fn chain_case(n_obs: usize, n_out: usize, phase: f64) -> (Arc<ndarray::Array2<f64>>, Neighbours) {
    let weight = |i: usize| 1.0 + 0.5 * ((i as f64) * 0.37 + phase).sin();
    let cost = Arc::new(ndarray::Array2::from_shape_fn((n_obs, n_out), |(i, k)| {
        let (y, t) = (i as f64 / (n_obs - 1) as f64, k as f64 / (n_out - 1) as f64);
        weight(i) * ((y - t).powi(2) + 0.01) / n_obs as f64
    }));
    (cost, Neighbours::Graph { len: n_obs, edges: (1..n_obs).map(|i| (i - 1, i)).collect() })
}

/// The proven bound with and without the tail rows of `support` under multipliers `lam`, after
/// checking that it is at most the whole LP's optimum and the plain float g of the support's
/// rows and the tail rows spread over every DP row (an independent sum).
fn bounds_with_tails(
    what: &str,
    cost: &Arc<ndarray::Array2<f64>>,
    neighbours: &Neighbours,
    eps: f64,
    support: &Support,
    lam: &[f32],
) -> (f64, f64) {
    let (n_obs, n_out) = cost.dim();
    let incidence = Incidence::new(neighbours).unwrap();
    let (_, optimum_at_most) = reference(cost, neighbours, eps);
    let rows = anytime::tails::tail_row_list(cost, &incidence, support, eps, lam, 1.0);
    let tails = crate::certify::TailRows::new(n_obs, &rows);
    let without = crate::certify::exact_support_bound(cost, &incidence, support, eps, lam, 1.0, None);
    let with = crate::certify::exact_support_bound(cost, &incidence, support, eps, lam, 1.0, Some(&tails));
    assert!(with <= optimum_at_most * (1.0 + 1e-12), "{what}: {with} above the optimum");
    let mut spread = vec![0f32; 2 * incidence.n_edges() * n_out];
    support.spread_rows(&incidence, lam, &mut spread);
    let mut mu: Vec<f64> = spread.iter().map(|&v| (v as f64).max(0.0)).collect();
    for &(i, j, k, m) in &rows {
        assert!(m > 0.0, "{what}: a tail row of multiplier {m}");
        let at_i = incidence.at(i as usize);
        let own = at_i.iter().find(|&&(own, _)| incidence.neighbour(i as usize, own) == j as usize).unwrap().0;
        mu[own as usize * n_out + k as usize] += m;
    }
    let rho = eps.exp();
    let g: f64 = (0..n_obs)
        .map(|i| {
            let mut reduced = cost.row(i).to_vec();
            for &(own, other) in incidence.at(i) {
                for (k, r) in reduced.iter_mut().enumerate() {
                    *r += mu[own as usize * n_out + k] - rho * mu[other as usize * n_out + k];
                }
            }
            reduced.into_iter().fold(f64::INFINITY, f64::min)
        })
        .sum();
    assert!((g - with).abs() <= 1e-9 * g.abs().max(1e-6), "{what}: proven {with}, float {g}");
    (without, with)
}

#[test]
fn rows_beyond_the_support_lift_capped_columns_and_stay_below_the_optimum() {
    // Multipliers on the rows of a narrow support: on 8 random graphs polished by the ascent from
    // random ones, on 6 chains whose support leaves most outputs out those of 3,000 iterations
    // on the support, polished (as the route's checkpoints find them; at ε = 0.2 and 0.3 on one
    // or two hops still far from the support's optimum, their bounds below zero). The rows `tails` adds beyond the support never lower the
    // proven bound, which stays at most the whole LP's optimum (Clarabel) and is the float g of
    // every row spread; on the chains, where left-out outputs cap the columns, they raise it.
    let mut rng = StdRng::seed_from_u64(80);
    for case in 0..8 {
        let (cost, neighbours, eps) = random_case(&mut rng, case);
        let incidence = Incidence::new(&neighbours).unwrap();
        let support = Support::near_rule(&cost, &incidence, 1).unwrap();
        let mut lam: Vec<f32> = (0..support.rows()).map(|_| rng.random_range(0.0f32..1.0) * 0.05).collect();
        anytime::ascent::polish(&cost, &incidence, &support, eps.exp(), &mut lam, 1.0, 3);
        let what = format!("random case {case}");
        let (without, with) = bounds_with_tails(&what, &cost, &neighbours, eps, &support, &lam);
        assert!(with >= without - 1e-9 * (without.abs() + with.abs()), "{what}: {without} → {with}");
    }
    let mut raised = 0;
    for case in 0..6 {
        let (n_obs, eps, reach) = (40 + 8 * case, [0.2f64, 0.3][case % 2], 1 + case % 2);
        let n_out = n_obs / 3;
        let (cost, neighbours) = chain_case(n_obs, n_out, case as f64);
        let incidence = Incidence::new(&neighbours).unwrap();
        let support = Support::near_rule(&cost, &incidence, reach).unwrap();
        let (lam, scale) = anytime::iterated_multipliers(&cost, &incidence, &support, eps, 3000);
        let mut lam: Vec<f32> = lam.iter().map(|&l| (l as f64 * scale) as f32).collect();
        anytime::ascent::polish(&cost, &incidence, &support, eps.exp(), &mut lam, 1.0, 3);
        let what = format!("chain {case} (|Y| = {n_obs}, |Θ̃| = {n_out}, ε = {eps}, reach {reach})");
        let (without, with) = bounds_with_tails(&what, &cost, &neighbours, eps, &support, &lam);
        let ulp = 1e-9 * (without.abs() + with.abs());
        assert!(with >= without - ulp, "{what}: {without} → {with}");
        raised += usize::from(with > without * (1.0 + 1e-6));
    }
    assert!(raised >= 4, "the tail rows raised the bound on only {raised} of 6 chains");
}

#[test]
fn the_rule_depth_is_the_farthest_observation_from_a_change_of_rule() {
    // A path of 10 observations, output 0 the cheapest on the first three, output 1 on the rest:
    // the boundary is the edge (2, 3), and observation 9 is 6 hops from it. Two components, one
    // of constant rule: the other's depth counts. A constant rule everywhere: 0.
    let path = |n: usize| (1..n).map(|i| (i - 1, i)).collect::<Vec<_>>();
    let cost = ndarray::Array2::from_shape_fn((10, 2), |(i, k)| if (i >= 3) == (k == 1) { 0.0 } else { 1.0 });
    let incidence = Incidence::new(&Neighbours::Graph { len: 10, edges: path(10) }).unwrap();
    assert_eq!(Support::rule_depth(&cost, &incidence), 6);
    let mut edges = path(10);
    edges.extend((11..14).map(|i| (i - 1, i)));
    let cost =
        ndarray::Array2::from_shape_fn((14, 2), |(i, k)| if (3..10).contains(&i) == (k == 1) { 0.0 } else { 1.0 });
    let incidence = Incidence::new(&Neighbours::Graph { len: 14, edges }).unwrap();
    assert_eq!(Support::rule_depth(&cost, &incidence), 6);
    let constant = ndarray::Array2::from_shape_fn((10, 2), |(_, k)| k as f64);
    let incidence = Incidence::new(&Neighbours::Graph { len: 10, edges: path(10) }).unwrap();
    assert_eq!(Support::rule_depth(&constant, &incidence), 0);
}

#[test]
fn a_chain_whose_support_leaves_most_outputs_out_is_still_bracketed() {
    // 80 observations on a path, 16 outputs, costs that make each output the non-private choice
    // on a stretch of about five observations, ε = 3 (the support's reach ln(10⁶)/3: 5 hops):
    // each column keeps a few outputs, the bound and the repair still range over all of them.
    let (n_obs, n_out, eps) = (80, 16, 3.0);
    let (cost, neighbours) = chain_case(n_obs, n_out, 0.0);
    let incidence = Incidence::new(&neighbours).unwrap();
    let support = Support::near_rule(&cost, &incidence, 5).unwrap();
    assert!(support.slots() < n_obs * n_out / 2, "the support keeps {} of {}", support.slots(), n_obs * n_out);
    let exact = reference(&cost, &neighbours, eps);
    let s = anytime(&cost, &neighbours, eps, &SolveOptions { gap: Some(1e-4), ..SolveOptions::default() });
    contains("the chain", interval(&s), exact);
    assert!(s.checks.relative_gap.unwrap() <= 1e-4, "{}", s.solver_detail);
    assert!(s.checks.max_dp_violation <= 0.0, "the release violates DP");
}

#[test]
fn gap_outside_the_unit_interval_is_refused_before_any_work() {
    let model = super::common::bundled("vote-share-3way-small.toml");
    for gap in [0.0, 1.0, -0.5, f64::NAN] {
        let options = SolveOptions { solver: SolverChoice::Anytime, gap: Some(gap), ..SolveOptions::default() };
        let refused = solve_model(&model, None, options).unwrap_err().to_string();
        assert!(refused.contains("gap must lie in (0, 1)"), "{gap}: {refused}");
    }
}
