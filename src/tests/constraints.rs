//! `[constraints]`: closed forms, a hand-solved 2 × 2, an independent Clarabel LP with the
//! constraint rows written out here, the exact checks of the released weights and the refusal of
//! a tampered artifact.
//!
//! Papers: Cormode, Kulkarni & Srivastava, "Constrained private mechanisms for count data"
//! (ICDE 2018: monotone, symmetric, honest); Badanidiyuru et al., "Optimal Unbiased Randomizers"
//! (NeurIPS 2023: unbiased); Kohli & Laskowski, PoPETs 2026 (fixed point).

use clarabel::algebra::CscMatrix;
use clarabel::solver::{DefaultSettingsBuilder, DefaultSolver, IPSolver, SolverStatus, SupportedConeT};

use super::common::parse_model;
use crate::mechanism::Mechanism;
use crate::model::Model;
use crate::solve::{solve_model, SolveOptions, SolverChoice, Status};

/// A binomial model at K trials, a Beta(2, 5) prior on a 40-point midpoint grid (so that the
/// constraints bind), squared loss, the given output values and `[constraints]` lines.
fn binomial_with(trials: u64, eps: f64, outputs: &[f64], constraints: &str) -> Model {
    let values: Vec<String> = outputs.iter().map(|v| format!("{v:?}")).collect();
    parse_model(&format!(
        "name = \"constrained\"\nepsilon = [{eps:?}]\n[parameter]\ngrid = {{ kind = \"midpoint\", points = 40 }}\n\
         prior = {{ kind = \"beta\", a = 2.0, b = 5.0 }}\n[observation]\nfamily = \"binomial\"\ntrials = {trials}\n\
         [output]\ngrid = {{ kind = \"explicit\", values = [{}] }}\n[loss]\nkind = \"squared\"\n[constraints]\n{constraints}\n",
        values.join(", ")
    ))
}

/// 0, 1/K, …, 1.
fn counts_grid(trials: u64) -> Vec<f64> {
    (0..=trials).map(|y| y as f64 / trials as f64).collect()
}

/// The Bayes risk of the solve's LP optimum (one ε).
fn lp_optimum(model: &Model, solver: SolverChoice) -> crate::solve::Solution {
    let mut s = solve_model(model, None, SolveOptions { solver, ..SolveOptions::default() }).expect("solves");
    let s = s.remove(0);
    assert_eq!(s.status, Status::Optimal, "{}", s.solver_detail);
    s
}

/// The same LP solved by Clarabel with every row written out here, independently of `lp`:
/// variables P\[k,i\] at i·|Θ̃| + k, column sums = 1, the DP rows on y ~ y ± 1, and the
/// constraint rows from their definitions (equalities in Clarabel's zero cone).
fn clarabel_reference(model: &Model) -> f64 {
    let cost = crate::lp::cost_matrix(model, crate::guard::MemoryBudget::from_env()).unwrap();
    let (n_obs, n_out) = cost.dim();
    let eps = model.epsilons()[0];
    let out = model.outputs().values();
    let var = |k: usize, i: usize| i * n_out + k;
    let c = model.constraints();
    let mut eq: Vec<(Vec<(usize, f64)>, f64)> = Vec::new();
    let mut le: Vec<(Vec<(usize, f64)>, f64)> = Vec::new();
    for i in 0..n_obs {
        eq.push(((0..n_out).map(|k| (var(k, i), 1.0)).collect(), 1.0));
    }
    for i in 0..n_obs - 1 {
        for k in 0..n_out {
            le.push((vec![(var(k, i), 1.0), (var(k, i + 1), -eps.exp())], 0.0));
            le.push((vec![(var(k, i + 1), 1.0), (var(k, i), -eps.exp())], 0.0));
        }
    }
    let natural = |y: usize| y as f64 / (n_obs - 1) as f64;
    if c.names.monotone {
        // Pr(θ̃ ≥ v | y) nondecreasing in y, for every output value v.
        for &v in &out {
            let above: Vec<usize> = (0..n_out).filter(|&k| out[k] >= v).collect();
            for i in 0..n_obs - 1 {
                le.push((above.iter().flat_map(|&k| [(var(k, i), 1.0), (var(k, i + 1), -1.0)]).collect(), 0.0));
            }
        }
    }
    if c.names.symmetric {
        for i in 0..n_obs {
            for k in 0..n_out {
                let mirror = (0..n_out).find(|&m| (out[m] - (1.0 - out[k])).abs() < 1e-9).unwrap();
                if var(k, i) < var(mirror, n_obs - 1 - i) {
                    eq.push((vec![(var(k, i), 1.0), (var(mirror, n_obs - 1 - i), -1.0)], 0.0));
                }
            }
        }
    }
    if c.names.honest {
        for i in 0..n_obs {
            if let Some(h) = (0..n_out).find(|&k| (out[k] - natural(i)).abs() < 1e-9) {
                for k in (0..n_out).filter(|&k| k != h) {
                    le.push((vec![(var(k, i), 1.0), (var(h, i), -1.0)], 0.0));
                }
            }
        }
    }
    if c.names.unbiased {
        for i in 0..n_obs {
            eq.push(((0..n_out).map(|k| (var(k, i), out[k])).collect(), natural(i)));
        }
    }
    if let Some(z) = c.fixed() {
        for k in 0..n_out {
            eq.push(((0..n_obs).map(|i| (var(k, i), z[i])).collect(), z[k]));
        }
    }
    // P ≥ 0 as −P ≤ 0.
    for v in 0..n_obs * n_out {
        le.push((vec![(v, -1.0)], 0.0));
    }
    let n = n_obs * n_out;
    let rows: Vec<&(Vec<(usize, f64)>, f64)> = eq.iter().chain(&le).collect();
    let mut by_col: Vec<Vec<(usize, f64)>> = vec![Vec::new(); n];
    for (r, (terms, _)) in rows.iter().enumerate() {
        for &(v, a) in terms {
            by_col[v].push((r, a));
        }
    }
    let (mut colptr, mut rowval, mut nzval) = (vec![0], Vec::new(), Vec::new());
    for col in &by_col {
        for &(r, a) in col {
            rowval.push(r);
            nzval.push(a);
        }
        colptr.push(rowval.len());
    }
    let a = CscMatrix::new(rows.len(), n, colptr, rowval, nzval);
    let b: Vec<f64> = rows.iter().map(|(_, b)| *b).collect();
    let scale = cost.iter().copied().fold(0.0, f64::max);
    let q: Vec<f64> = (0..n).map(|v| cost[[v / n_out, v % n_out]] / scale).collect();
    let cones = [SupportedConeT::ZeroConeT(eq.len()), SupportedConeT::NonnegativeConeT(le.len())];
    let settings = DefaultSettingsBuilder::default()
        .verbose(false)
        .tol_gap_abs(1e-12)
        .tol_gap_rel(1e-12)
        .tol_feas(1e-12)
        .build()
        .unwrap();
    let mut solver = DefaultSolver::new(&CscMatrix::zeros((n, n)), &q, &a, &b, &cones, settings).unwrap();
    solver.solve();
    assert!(
        matches!(solver.solution.status, SolverStatus::Solved | SolverStatus::AlmostSolved),
        "{:?}",
        solver.solution.status
    );
    solver.solution.obj_val * scale
}

fn assert_close(ours: f64, reference: f64, what: &str) {
    assert!(
        (ours - reference).abs() <= 1e-7 * reference.abs().max(1e-3),
        "{what}: {ours} vs the reference {reference}"
    );
}

/// Each constraint's optimum, solved by the product's route, equals the independent Clarabel LP
/// within 1e-7; its certified release carries the constraint (checked exactly) and its bound is
/// proven in directed rounding.
#[test]
fn each_constrained_optimum_agrees_with_an_independent_clarabel_lp() {
    let k = 8;
    let wide: Vec<f64> = (0..=12).map(|j| -0.5 + j as f64 * (2.0 / 12.0)).collect();
    let cases = [
        ("monotone = true", counts_grid(k)),
        ("symmetric = true", counts_grid(k)),
        ("honest = true", counts_grid(k)),
        ("unbiased = true", wide),
        ("fixed_point = { values = [1, 2, 3, 4, 5, 4, 3, 2, 1] }", counts_grid(k)),
        ("monotone = true\nsymmetric = true\nhonest = true", counts_grid(k)),
    ];
    for (lines, outputs) in cases {
        let model = binomial_with(k, 1.0, &outputs, lines);
        let reference = clarabel_reference(&model);
        // The unconstrained optimum on the same outputs (the unbiased case's outputs lie beyond
        // [0, 1], which only an unbiased design may list: its floor is then the plain program's
        // on the clipped outputs, not compared here).
        let plain = if lines.contains("unbiased") {
            0.0
        } else {
            lp_optimum(&binomial_with(k, 1.0, &outputs, ""), SolverChoice::Auto).bayes_risk
        };
        for solver in [SolverChoice::Auto, SolverChoice::Highs] {
            let s = lp_optimum(&model, solver);
            assert_close(s.bayes_risk, reference, lines);
            assert!(s.checks.dual_bound_exact && s.checks.dual_bound.unwrap() <= s.bayes_risk * (1.0 + 1e-9));
            assert!(s.bayes_risk >= plain * (1.0 - 1e-9), "{lines}: a constraint cannot lower the risk");
            eprintln!("{lines}: {} (unconstrained {plain})", s.bayes_risk);
            let m = Mechanism::from_solution(&model, &s).unwrap();
            let carried = m.constraints().expect("the release records its constraints");
            assert_eq!(carried.names, model.constraints().names);
            if let Some(b) = carried.max_bias.or(carried.max_fixed_point_error) {
                assert!(b <= crate::certify::MAX_EQUALITY_ERROR, "{lines}: {b}");
            }
        }
    }
}

/// The route: no chain solver, output generation or orbit LP for a constrained model, and
/// `--solver chain` refused with a sentence.
#[test]
fn a_constrained_model_goes_to_the_whole_lp() {
    let model = binomial_with(6, 1.0, &counts_grid(6), "monotone = true");
    let route = crate::solve::Route::for_model(&model, SolverChoice::Auto).unwrap();
    assert!(matches!(route, crate::solve::Route::Lp { .. }), "{route:?}");
    assert!(route.reason().to_string().contains("[constraints]"), "{}", route.reason());
    let refused = crate::solve::Route::for_model(&model, SolverChoice::Chain).unwrap_err().to_string();
    assert!(refused.contains("[constraints]"), "{refused}");
}

/// `auto`'s order on a chain or band: the block interior point first on the plain program (and
/// after the chain solver), Clarabel first on a program it does not solve.
#[test]
fn chains_and_bands_go_to_the_block_interior_point_on_the_plain_program() {
    use crate::solve::Route;
    let band = |extra: &str| {
        let text = format!(
            "name = \"m\"\nepsilon = [0.5]\n{extra}\n[parameter]\nlower = 0.0\nupper = 4.0\n\
             grid = {{ kind = \"midpoint\", points = 10 }}\nprior = {{ kind = \"uniform\" }}\n\
             [observation]\nfamily = \"poisson\"\nrecords = 5\ncap = 3\n[loss]\nkind = \"absolute\"\n"
        );
        parse_model(&text)
    };
    let first = |route: &Route| match route {
        Route::Lp { backends, .. } => backends[0],
        Route::Chain { fallback, .. } => fallback[0],
        Route::Anytime { .. } => panic!("{route:?}"),
    };
    let plain = Route::for_model(&band(""), SolverChoice::Auto).unwrap();
    assert_eq!(first(&plain), SolverChoice::BlockIpm, "{plain:?}");
    assert!(plain.reason().to_string().contains("block interior point first"), "{}", plain.reason());
    let delta = Route::for_model(&band("delta = 0.001"), SolverChoice::Auto).unwrap();
    assert_eq!(first(&delta), SolverChoice::Clarabel, "{delta:?}");
    let chain = Route::for_model(&binomial_with(6, 1.0, &counts_grid(6), ""), SolverChoice::Auto).unwrap();
    assert!(matches!(chain, Route::Chain { .. }), "{chain:?}");
    assert_eq!(first(&chain), SolverChoice::BlockIpm, "{chain:?}");
}

/// Binomial chain, uniform prior: the geometric + remap optimum is already monotone (a Bayes
/// remap of a monotone-likelihood-ratio channel is monotone), so the monotone optimum equals the
/// unconstrained one.
#[test]
fn on_a_uniform_binomial_chain_the_monotone_optimum_is_the_unconstrained_one() {
    for (k, eps) in [(10u64, 0.5), (10, 2.0), (25, 1.0)] {
        let text = |extra: &str| {
            format!(
                "name = \"m\"\nepsilon = [{eps:?}]\n[parameter]\ngrid = {{ kind = \"midpoint\", points = 50 }}\n\
                 prior = {{ kind = \"uniform\" }}\n[observation]\nfamily = \"binomial\"\ntrials = {k}\n\
                 [output]\ngrid = {{ kind = \"midpoint\", points = 30 }}\n[loss]\nkind = \"squared\"\n{extra}"
            )
        };
        let plain = parse_model(&text(""));
        let free = lp_optimum(&plain, SolverChoice::Auto);
        assert!(free.solver.contains("chain"), "{}", free.solver);
        let monotone = parse_model(&text("[constraints]\nmonotone = true\n"));
        // The chain optimum is monotone: its violation of the tails' order is nil.
        assert!(crate::certify::float_violation(monotone.constraints(), &free.p) <= 1e-9);
        let constrained = lp_optimum(&monotone, SolverChoice::Auto);
        assert_close(constrained.bayes_risk, free.bayes_risk, &format!("K = {k}, ε = {eps}"));
    }
}

/// K = 1: the least-risk unbiased ε-DP release is randomized response rescaled (Badanidiyuru et
/// al. 2023). Derivation: keep the bit with p = e^ε/(1 + e^ε), release r ∈ {0, 1}, estimate
/// (r − (1 − p))/(2p − 1), i.e. outputs a = −(1 − p)/(2p − 1) and b = p/(2p − 1); E\[θ̃ | y = 1\] =
/// (p·p − (1 − p)²)/(2p − 1) = 1 and E\[θ̃ | y = 0\] = 0. For any unbiased release the risk splits
/// as E(y − θ)² + Σ_y m(y)·Var(θ̃ | y) (the cross term vanishes by unbiasedness); RR's columns
/// are as far apart as ε allows, which minimises both variances at once.
#[test]
fn unbiased_at_one_trial_is_randomized_response_rescaled() {
    for eps in [0.5f64, 1.0, 2.0] {
        let p = eps.exp() / (1.0 + eps.exp());
        let (a, b) = (-(1.0 - p) / (2.0 * p - 1.0), p / (2.0 * p - 1.0));
        // Outputs: RR's two, and others beyond and between them.
        let mut outputs = vec![a - 1.0, a, -0.2, 0.0, 0.5, 1.0, 1.2, b, b + 1.0];
        outputs.sort_by(f64::total_cmp);
        let model = binomial_with(1, eps, &outputs, "unbiased = true");
        let s = lp_optimum(&model, SolverChoice::Auto);
        // RR's risk on the model's own grid: Σ_j π_j Σ_y q_j(y) Σ_{r} P_RR(r | y)(θ_j − θ̃_r)².
        let theta = model.theta().values();
        let rr = |y: usize, out: f64| match (y, out == b) {
            (1, true) | (0, false) => p,
            _ => 1.0 - p,
        };
        let risk: f64 = theta
            .iter()
            .zip(model.prior())
            .map(|(&t, &w)| {
                let q = [1.0 - t, t];
                w * (0..2).map(|y| q[y] * [a, b].iter().map(|&o| rr(y, o) * (t - o).powi(2)).sum::<f64>()).sum::<f64>()
            })
            .sum();
        assert_close(s.bayes_risk, risk, &format!("ε = {eps}"));
        // And the optimum puts its mass on a and b.
        let (ia, ib) = (outputs.iter().position(|&o| o == a).unwrap(), outputs.iter().position(|&o| o == b).unwrap());
        for i in 0..2 {
            assert!(s.p[[ia, i]] + s.p[[ib, i]] > 1.0 - 1e-6, "ε = {eps}, y = {i}: {:?}", s.p.column(i));
        }
    }
}

/// K = 1, outputs {0, 1}, a prior leaning to 0: P = \[\[1 − a, 1 − b\], \[a, b\]\] with a = P(1 | 0),
/// b = P(1 | 1). The risk is linear in (a, b); the DP rows b ≤ e^ε a, a ≤ e^ε b,
/// 1 − a ≤ e^ε(1 − b), 1 − b ≤ e^ε(1 − a) make a quadrilateral, and each constraint a line or half
/// plane: the optimum is the best vertex, found here by intersecting every pair of boundary lines.
#[test]
fn a_hand_solved_two_by_two_with_each_constraint() {
    let eps: f64 = 0.7;
    let e = eps.exp();
    let text = |lines: &str| {
        format!(
            "name = \"two\"\nepsilon = [{eps:?}]\n[parameter]\ngrid = {{ kind = \"explicit\", values = [0.1, 0.6] }}\n\
             prior = {{ kind = \"weights\", values = [0.8, 0.2] }}\n[observation]\nfamily = \"binomial\"\ntrials = 1\n\
             [output]\ngrid = {{ kind = \"explicit\", values = [0.0, 1.0] }}\n[loss]\nkind = \"squared\"\n[constraints]\n{lines}\n"
        )
    };
    // Risk(a, b) = Σ_j π_j [ (1 − θ_j)((1 − a)θ_j² + a(1 − θ_j)²) + θ_j((1 − b)θ_j² + b(1 − θ_j)²) ].
    let risk = |a: f64, b: f64| {
        [(0.1, 0.8), (0.6, 0.2)]
            .iter()
            .map(|&(t, w): &(f64, f64)| {
                w * ((1.0 - t) * ((1.0 - a) * t * t + a * (1.0 - t).powi(2))
                    + t * ((1.0 - b) * t * t + b * (1.0 - t).powi(2)))
            })
            .sum::<f64>()
    };
    // Lines αa + βb = γ.
    let dp = [(-e, 1.0, 0.0), (1.0, -e, 0.0), (-1.0, e, e - 1.0), (e, -1.0, e - 1.0)];
    let in_dp = |a: f64, b: f64| {
        let t = 1e-12;
        b <= e * a + t && a <= e * b + t && 1.0 - a <= e * (1.0 - b) + t && 1.0 - b <= e * (1.0 - a) + t
    };
    let z = [0.3, 0.7];
    // (the model's lines, the constraint's boundary lines αa + βb = γ, its feasible set)
    type Line = (f64, f64, f64);
    type Feasible = Box<dyn Fn(f64, f64) -> bool>;
    let cases: Vec<(&str, Vec<Line>, Feasible)> = vec![
        ("monotone = true", vec![(-1.0, 1.0, 0.0)], Box::new(|a: f64, b: f64| b >= a - 1e-12)),
        ("symmetric = true", vec![(1.0, 1.0, 1.0)], Box::new(|a: f64, b: f64| (a + b - 1.0).abs() < 1e-12)),
        (
            "honest = true",
            vec![(1.0, 0.0, 0.5), (0.0, 1.0, 0.5)],
            Box::new(|a: f64, b: f64| a <= 0.5 + 1e-12 && b >= 0.5 - 1e-12),
        ),
        // P z = z: (1 − a) z0 + (1 − b) z1 = z0, i.e. z0·a + z1·b = z1.
        (
            "fixed_point = { values = [0.3, 0.7] }",
            vec![(z[0], z[1], z[1])],
            Box::new(move |a: f64, b: f64| (z[0] * a + z[1] * b - z[1]).abs() < 1e-12),
        ),
    ];
    // The unconstrained optimum: the best vertex of the quadrilateral (0, 0), (1, 1), RR and its flip.
    let (lo, hi) = (1.0 / (1.0 + e), e / (1.0 + e));
    let free =
        [(0.0, 0.0), (1.0, 1.0), (lo, hi), (hi, lo)].iter().map(|&(a, b)| risk(a, b)).fold(f64::INFINITY, f64::min);
    for (lines, extra, feasible) in cases {
        let all: Vec<(f64, f64, f64)> = dp.iter().copied().chain(extra).collect();
        let mut best = f64::INFINITY;
        for (x, l1) in all.iter().enumerate() {
            for l2 in &all[x + 1..] {
                let det = l1.0 * l2.1 - l1.1 * l2.0;
                if det.abs() < 1e-14 {
                    continue;
                }
                let a = (l1.2 * l2.1 - l1.1 * l2.2) / det;
                let b = (l1.0 * l2.2 - l1.2 * l2.0) / det;
                if in_dp(a, b) && feasible(a, b) {
                    best = best.min(risk(a, b));
                }
            }
        }
        let s = lp_optimum(&parse_model(&text(lines)), SolverChoice::Auto);
        assert_close(s.bayes_risk, best, lines);
        eprintln!("{lines}: {best} (unconstrained {free})");
        if !lines.starts_with("monotone") {
            assert!(best > free * (1.0 + 1e-4), "{lines} should bind here: {best} vs {free}");
        }
    }
    // Unbiasedness needs outputs beyond {0, 1}: refused before any solve, naming the field.
    let refused = Model::from_spec(crate::model::ModelSpec::from_toml(&text("unbiased = true"), "two.toml").unwrap())
        .unwrap_err()
        .to_string();
    assert!(refused.contains("constraints.unbiased") && refused.contains("beyond"), "{refused}");
}

/// A released artifact whose weights break a recorded constraint, whose record is removed or
/// whose stated bound is lowered is refused by `verify` (the loader).
#[test]
fn a_tampered_constrained_artifact_is_refused() {
    let wide: Vec<f64> = (0..=12).map(|j| -0.5 + j as f64 * (2.0 / 12.0)).collect();
    let model = binomial_with(6, 1.0, &counts_grid(6), "symmetric = true\nmonotone = true");
    let m = Mechanism::from_solution(&model, &lp_optimum(&model, SolverChoice::Auto)).unwrap();
    let json = m.to_json();
    let text = serde_json::to_string(&json).unwrap();
    assert!(Mechanism::from_json_str(&text, "good.json").is_ok());
    // One unit moved between two outputs of column 0: ε-DP and the Bayes risk (to 1e-9) still
    // stand, the reflection does not.
    let mut edited = json.clone();
    let col = edited["columns"][0].as_array_mut().unwrap();
    let (w0, w1) = (col[0].as_u64().unwrap(), col[1].as_u64().unwrap());
    col[0] = (w0 - 1).into();
    col[1] = (w1 + 1).into();
    let refused = Mechanism::from_json_str(&edited.to_string(), "bad.json").unwrap_err().to_string();
    assert!(refused.contains("bad.json") && refused.contains("[constraints]"), "{refused}");
    // The record removed.
    let mut edited = json.clone();
    edited.as_object_mut().unwrap().remove("constraints");
    let refused = Mechanism::from_json_str(&edited.to_string(), "bad.json").unwrap_err().to_string();
    assert!(refused.contains("constraints") && refused.contains("missing"), "{refused}");
    // An unbiased artifact's stated bias lowered below what its weights show.
    let model = binomial_with(6, 1.0, &wide, "unbiased = true");
    let m = Mechanism::from_solution(&model, &lp_optimum(&model, SolverChoice::Auto)).unwrap();
    let mut edited = m.to_json();
    let bias = edited["constraints"]["max_bias"].as_f64().unwrap();
    assert!(bias > 0.0 && bias <= crate::certify::MAX_EQUALITY_ERROR, "{bias}");
    edited["constraints"]["max_bias"] = (bias / 4.0).into();
    let refused = Mechanism::from_json_str(&edited.to_string(), "bad.json").unwrap_err().to_string();
    assert!(refused.contains("max_bias"), "{refused}");
}
