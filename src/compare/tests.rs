//! The comparison engine and the method registry: every exact (or numerically integrated) risk
//! formula against a Monte-Carlo estimate through `release`; UBaPP's optimality against every
//! pure-ε baseline rounded to its output grid; labels of (ε, δ) and minimax UBaPP rows; the
//! options' and the model's input errors; designs solved by the caller; the route a model takes.

use rand::rngs::StdRng;
use rand::SeedableRng;

use super::*;
use crate::eval::{monte_carlo_risk, Privacy, PrivacyKind, RiskMethod};
use crate::guard::Parameter;
use crate::lp::cost_matrix;
use crate::mechanism::Release;
use crate::model::ModelSpec;
use crate::solve::{solve_model, take_solves, SolverChoice};

fn model_from(text: &str) -> Model {
    Model::from_spec(ModelSpec::from_toml(text, "test").unwrap()).unwrap()
}

fn model(trials: u64, points: usize, lower: f64, upper: f64, loss: &str, prior: &str) -> Model {
    model_from(&format!(
        "name = \"t\"\nepsilon = [1.0]\n[parameter]\nlower = {lower}\nupper = {upper}\n\
         grid = {{ kind = \"midpoint\", points = {points} }}\nprior = {prior}\n\
         [observation]\nfamily = \"binomial\"\ntrials = {trials}\n[loss]\nkind = \"{loss}\"\n"
    ))
}

/// A small binomial model with extra top-level lines (e.g. `delta = 0.001`).
fn small_model_with(extra: &str) -> Model {
    model_from(&format!(
        "name = \"small\"\nepsilon = [0.5, 2.0]\n{extra}\n[parameter]\n\
         grid = {{ kind = \"midpoint\", points = 10 }}\nprior = {{ kind = \"uniform\" }}\n\
         [observation]\nfamily = \"binomial\"\ntrials = 8\n[loss]\nkind = \"squared\"\n"
    ))
}

fn options(model: &Model, methods: &[Method]) -> CompareOptions {
    CompareOptions { methods: methods.to_vec(), curve_points: 5, ..CompareOptions::for_model(model) }
}

/// Every method's risk at θ agrees with the Monte-Carlo mean of its releases within 5 standard
/// errors plus 1e-6 (a false failure has probability ≈ 6e-7 per comparison under normality; the
/// seed is fixed, so the test is deterministic). Every disagreement is reported, not only the first.
fn check_against_monte_carlo(m: &Model, eps_list: &[f64], thetas: &[f64], draws: usize) {
    let setting = Setting::of(m).unwrap();
    let opts = BaselineOptions::default();
    let mut rng = StdRng::seed_from_u64(20260521);
    let solutions = solve_model(m, Some(eps_list), SolverChoice::Clarabel).unwrap();
    let mut failures = Vec::new();
    for (ei, &eps) in eps_list.iter().enumerate() {
        let mut ests: Vec<Box<dyn Estimator>> = vec![Box::new(Release::certify(m, &solutions[ei]).unwrap())];
        for method in Method::ALL {
            if let Some(e) = build(method, m, eps, &opts).unwrap() {
                ests.push(e);
            }
        }
        assert!(ests.len() >= 14, "every method applies (got {})", ests.len());
        for est in &ests {
            for &theta in thetas {
                let r = est.risk_at(theta);
                if r.method == RiskMethod::MonteCarlo {
                    continue; // nothing exact to check
                }
                let (mc, se) = monte_carlo_risk(est.as_ref(), &setting, theta, draws, &mut rng);
                if (r.value - mc).abs() > 5.0 * se + 1e-6 {
                    failures.push(format!(
                        "{} at ε = {eps}, θ = {theta} ({:?} loss): formula {} vs Monte Carlo {mc} ± {se}",
                        est.method(),
                        setting.loss,
                        r.value
                    ));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn exact_risks_match_monte_carlo_squared_loss() {
    let m = model(12, 15, 0.0, 1.0, "squared", "{ kind = \"uniform\" }");
    check_against_monte_carlo(&m, &[0.3, 2.0], &[0.13, 0.5, 0.81], 200_000);
}

#[test]
fn exact_risks_match_monte_carlo_absolute_loss_and_a_restricted_interval() {
    // A clamp that binds (Θ = [0.1, 0.8]) and absolute loss exercise the numerical routes.
    let m = model(12, 12, 0.1, 0.8, "absolute", "{ kind = \"beta\", a = 2.0, b = 3.0 }");
    check_against_monte_carlo(&m, &[0.5, 3.0], &[0.15, 0.62], 200_000);
}

#[test]
fn ubapp_beats_every_pure_baseline_rounded_to_its_grid() {
    // Rounding a release to the nearest output point is post-processing, so the rounded baseline is
    // a feasible point of the LP: UBaPP's optimum can only be lower (up to solver tolerance).
    // Every failure over the shipped models is reported, not only the first.
    let opts = BaselineOptions::default();
    let eps_list = [0.01, 0.5, 5.0];
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/models");
    let mut checked = 0;
    let mut failures = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) != Some("toml") {
            continue;
        }
        let m = Model::load(&path).unwrap();
        if Setting::of(&m).is_none() {
            continue;
        }
        // A minimax program minimises the worst case, not the Bayes risk compared here; a
        // constrained design is optimal only among the mechanisms that meet its constraints,
        // which the baselines need not (src/tests/constraints.rs checks those optima).
        if m.objective != Objective::Bayes || !m.constraints().is_empty() {
            continue;
        }
        let cost = cost_matrix(&m, crate::lp::MemoryBudget::available()).unwrap();
        let outputs = m.outputs.values();
        let solutions = solve_model(&m, Some(&eps_list), SolverChoice::Clarabel).unwrap();
        for (s, &eps) in solutions.iter().zip(&eps_list) {
            // The estimator route (Σ_j π_j Σ_y q Σ_k w/T L over the certified release) is the LP
            // objective plus the repair cost the certificate records (priced by the cost matrix).
            let release = Release::certify(&m, s).unwrap();
            let via_trait = bayes_risk(&release, &m).value;
            let repair = release.provenance().repair_risk_cost.unwrap();
            if (via_trait - (s.bayes_risk + repair)).abs() > 1e-9 * s.bayes_risk {
                failures.push(format!("{}: {via_trait} vs {} + {repair}", m.name(), s.bayes_risk));
            }
            for method in Method::ALL {
                let Some(est) = build(method, &m, eps, &opts).unwrap() else { continue };
                if !est.privacy().is_pure() {
                    continue;
                }
                let Some(p) = est.rounded_mechanism(&outputs) else { continue };
                let rounded: f64 = (&cost.t() * &p).sum();
                if s.bayes_risk > rounded * (1.0 + 1e-6) + 1e-12 {
                    failures.push(format!(
                        "{} ε = {eps}: UBaPP {} > rounded {method} {rounded}",
                        m.name(),
                        s.bayes_risk
                    ));
                }
                // The rounded matrix is a mechanism: columns sum to 1.
                for c in p.columns() {
                    if (c.sum() - 1.0).abs() >= 1e-9 {
                        failures.push(format!("{} {method}: column sum {}", m.name(), c.sum()));
                    }
                }
                checked += 1;
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(checked >= 4 * 3 * 6, "checked {checked} (model, ε, baseline) triples");
}

#[test]
fn ubapp_row_of_an_eps_delta_model_is_labelled_eps_delta_with_the_models_delta() {
    let m = small_model_with("delta = 0.001");
    let cmp = compare(&m, &options(&m, &[Method::Ubapp]), &mut |_| {}).unwrap();
    assert_eq!(cmp.rows.len(), 2);
    for r in &cmp.rows {
        assert_eq!(r.privacy, PrivacyKind::EpsDelta, "ε = {}", r.eps);
        assert_eq!(r.delta, 0.001, "ε = {}", r.eps);
        // Its pure-ε violation is expected (up to δ): the note gives the δ spent instead.
        assert!(
            matches!(r.note.solve, Some(SolveNote { check: DpCheck::DeltaSpent { delta, .. }, .. }) if delta == 0.001),
            "{:?}",
            r.note
        );
        let text = r.note.to_string();
        assert!(text.contains("δ spent") && !text.contains("max DP violation"), "{text}");
    }
    for c in &cmp.curves {
        assert_eq!(c.series[0].privacy, Privacy::Approx { eps: c.eps, delta: 0.001 });
    }
}

#[test]
fn ubapp_row_of_a_pure_model_is_labelled_pure_eps() {
    let m = small_model_with("");
    let cmp = compare(&m, &options(&m, &[Method::Ubapp]), &mut |_| {}).unwrap();
    assert!(cmp.rows.iter().all(|r| r.privacy == PrivacyKind::PureEps && r.delta == 0.0), "{:?}", cmp.rows);
}

#[test]
fn minimax_ubapp_row_says_it_is_ranked_on_bayes_risk_and_gives_its_worst_case_risk() {
    let m = small_model_with("objective = \"minimax\"");
    let cmp = compare(&m, &options(&m, &[Method::Ubapp, Method::Lbapp]), &mut |_| {}).unwrap();
    let solutions = solve_model(&m, None, SolverChoice::Auto).unwrap();
    let ubapp_rows: Vec<&Row> = cmp.rows.iter().filter(|r| r.method == Method::Ubapp).collect();
    assert_eq!(ubapp_rows.len(), 2);
    for (r, s) in ubapp_rows.iter().zip(&solutions) {
        let text = r.note.to_string();
        assert!(text.contains("minimax design") && text.contains("ranks on Bayes risk"), "{text}");
        let worst = s.checks.worst_case_risk.expect("a minimax solution reports its worst case");
        let printed = format!("{worst:.6e}");
        assert!(text.contains(&printed), "note {text:?} lacks the worst-case risk {printed}");
        assert!(r.note.minimax_worst_case.is_some());
    }
    assert!(cmp.rows.iter().filter(|r| r.method != Method::Ubapp).all(|r| r.note.is_empty()));
    let caveats = cmp.caveats();
    assert_eq!(caveats.len(), 1);
    assert!(caveats[0].contains("minimax") && caveats[0].contains("ranked on Bayes risk"), "{}", caveats[0]);
}

#[test]
fn a_bayes_model_has_no_caveat() {
    let m = small_model_with("");
    let cmp = compare(&m, &options(&m, &[Method::Ubapp]), &mut |_| {}).unwrap();
    assert!(cmp.caveats().is_empty());
    assert!(cmp.rows[0].note.minimax_worst_case.is_none() && !cmp.rows[0].note.to_string().contains("minimax"));
}

fn poisson_model() -> Model {
    model_from(
        "name = \"counts\"\nepsilon = [1.0]\n[parameter]\nlower = 0.0\nupper = 2.0\n\
         grid = { kind = \"midpoint\", points = 4 }\nprior = { kind = \"uniform\" }\n\
         [observation]\nfamily = \"poisson\"\nrecords = 3\ncap = 2\n[loss]\nkind = \"squared\"\n",
    )
}

#[test]
fn a_poisson_model_is_refused_for_its_family_before_any_option_is_checked() {
    let m = poisson_model();
    // The defaults have no K for a Poisson model: the family is still the reason given.
    let err = compare(&m, &CompareOptions::for_model(&m), &mut |_| {}).unwrap_err();
    assert!(err.is_input());
    assert_eq!(err.to_string(), "model \"counts\": compare supports the binomial family only (this model is poisson)");
    assert!(matches!(
        check_model(&m, "models/counts.toml"),
        Err(CompareError::UnsupportedFamily { model, family: "poisson" }) if model == "models/counts.toml"
    ));
}

#[test]
fn a_binomial_model_under_zero_one_loss_is_refused_for_its_loss() {
    let m = model_from(
        "name = \"t\"\nepsilon = [1.0]\n[parameter]\ngrid = { kind = \"midpoint\", points = 6 }\n\
         prior = { kind = \"uniform\" }\n[observation]\nfamily = \"binomial\"\ntrials = 5\n\
         [loss]\nkind = \"zero-one\"\ntolerance = 0.1\n",
    );
    assert!(matches!(
        check_model(&m, "m.toml"),
        Err(CompareError::UnsupportedLoss { model, loss: "zero-one" }) if model == "m.toml"
    ));
}

#[test]
fn an_empty_eps_list_is_an_input_error_naming_the_flag() {
    let m = small_model_with("");
    let opts = CompareOptions { eps: vec![], ..options(&m, &[Method::Lbapp]) };
    let err = validate(&opts).unwrap_err();
    assert!(err.is_input());
    assert_eq!(err.to_string(), "eps must list at least one privacy level ε > 0");
}

#[test]
fn an_empty_trials_list_is_an_input_error_naming_the_flag() {
    let m = small_model_with("");
    let opts = CompareOptions { trials: vec![], ..options(&m, &[Method::Lbapp]) };
    assert!(matches!(
        validate(&opts),
        Err(CompareError::EmptyList { parameter: Parameter::Trials, what: "number of trials K ≥ 1" })
    ));
}

#[test]
fn an_empty_methods_list_is_an_input_error_naming_the_flag() {
    let m = small_model_with("");
    let opts = options(&m, &[]);
    assert!(matches!(validate(&opts), Err(CompareError::EmptyList { parameter: Parameter::Methods, what: "method" })));
}

#[test]
fn a_non_positive_eps_is_named_by_its_index() {
    let m = small_model_with("");
    let opts = CompareOptions { eps: vec![0.1, -2.0], ..options(&m, &[Method::Lbapp]) };
    assert!(matches!(validate(&opts), Err(CompareError::NonPositiveEps { index: 1, value }) if value == -2.0));
}

#[test]
fn zero_parties_is_an_input_error() {
    let m = small_model_with("");
    let mut opts = options(&m, &[Method::Dssa]);
    opts.baseline.parties = Some(0);
    assert!(matches!(validate(&opts), Err(CompareError::ZeroParties)));
}

#[test]
fn one_curve_point_is_an_input_error() {
    let m = small_model_with("");
    let opts = CompareOptions { curve_points: 1, ..options(&m, &[Method::Lbapp]) };
    assert!(matches!(validate(&opts), Err(CompareError::TooFewCurvePoints { points: 1 })));
}

#[test]
fn method_ids_are_their_serde_spellings() {
    // (The command line's parser takes the same ids: src/cli/values.rs.)
    let mut mismatches = Vec::new();
    for m in Method::ALL {
        let json = serde_json::to_string(&m).unwrap();
        if json != format!("\"{}\"", m.id()) {
            mismatches.push(format!("{m:?}: serde {json}"));
        }
    }
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
}

#[test]
fn rows_serialise_to_the_strings_of_the_csv() {
    let row = Row {
        method: Method::LbappClamped,
        privacy: PrivacyKind::EpsDelta,
        eps: 0.5,
        delta: 1e-5,
        trials: 8,
        parties: Some(2),
        bayes_risk: 0.25,
        bayes_risk_se: 0.0,
        true_risk: 0.5,
        true_risk_se: 0.0,
        risk_method: RiskMethod::Numerical,
        note: Note {
            party: Some(PartyNote::Certified { certified_eps: 0.5, size: 12.0, monte_carlo: false }),
            ..Note::default()
        },
    };
    let json = serde_json::to_value(&row).unwrap();
    assert_eq!(json["method"], "lbapp-clamped");
    assert_eq!(json["privacy"], "eps-delta");
    assert_eq!(json["risk_method"], "numerical-integration");
    assert_eq!(json["note"]["party"]["certified"]["size"], 12.0);
    assert_eq!(
        rows_csv(&[row]).lines().nth(1).unwrap(),
        "lbapp-clamped,eps-delta,0.5,0.00001,8,2,2.5000000000e-1,0.000e0,5.0000000000e-1,0.000e0,numerical-integration,\"each party certified ε ≤ 0.500000; exact over 12 release histograms\""
    );
}

#[test]
fn table_labels_pad_like_strings() {
    assert_eq!(format!("[{:<15}]", Method::Cape), "[cape           ]");
    assert_eq!(format!("[{:>9}]", PrivacyKind::PureEps), "[ pure-eps]");
    assert_eq!(format!("[{:>8}]", RiskMethod::Exact), "[   exact]");
}

/// The UBaPP row is the mechanism `solve --out` releases: its Bayes risk is the LP optimum plus the
/// repair and quantisation cost recorded in the certified artifact (priced there by the cost
/// matrix, here by the estimator's own sum over θ_j, y and θ̃_k), and it is no better than the LP.
#[test]
fn the_ubapp_row_is_the_certified_release_and_differs_by_its_repair_cost() {
    for extra in ["", "delta = 0.001"] {
        let m = small_model_with(extra);
        let cmp = compare(&m, &options(&m, &[Method::Ubapp]), &mut |_| {}).unwrap();
        let solutions = solve_model(&m, None, SolverChoice::Auto).unwrap();
        assert_eq!(cmp.rows.len(), solutions.len());
        for (row, s) in cmp.rows.iter().zip(&solutions) {
            let release = Release::certify(&m, s).unwrap();
            let repair = release.provenance().repair_risk_cost.expect("a dense release records its repair cost");
            let gap = row.bayes_risk - s.bayes_risk;
            assert!(
                (gap - repair).abs() <= 1e-12 * s.bayes_risk + 1e-15,
                "{extra} ε = {}: row − LP = {gap:e}, certified repair cost {repair:e}",
                s.eps
            );
            assert!(gap >= -1e-9 * s.bayes_risk, "ε = {}: the release beats the LP optimum ({gap:e})", s.eps);
            // The heat map shows the released probabilities w/T, not the float P.
            let heat = cmp.heatmaps.iter().find(|h| h.eps == s.eps).unwrap();
            assert_eq!(heat.p, release.probabilities());
        }
    }
}

/// Every built estimator names the method it was built for (rows and curves are keyed by it).
#[test]
fn every_estimator_names_the_method_it_was_built_for() {
    let m = small_model_with("");
    let opts = BaselineOptions { parties: Some(2), ..BaselineOptions::default() };
    let mut built = 0;
    for method in Method::ALL {
        if let Some(est) = build(method, &m, 0.5, &opts).unwrap() {
            assert_eq!(est.method(), method);
            built += 1;
        }
    }
    assert!(built >= 14, "built {built}");
    let s = solve_model(&m, Some(&[0.5]), SolverChoice::Auto).unwrap().remove(0);
    assert_eq!(Release::certify(&m, &s).unwrap().method(), Method::Ubapp);
}

/// Above the compact size the solve takes the compact chain route and the UBaPP row is the compact
/// release (geometric(ε') + remap): its Bayes risk summed by the estimator over θ_j, y and θ̃_k
/// agrees with the artifact's own, computed from the squared-loss moments.
#[test]
fn a_compact_release_is_evaluated_as_sampled() {
    let m = model(5000, 101, 0.0, 1.0, "squared", "{ kind = \"uniform\" }");
    let cmp = compare(&m, &options(&m, &[Method::Ubapp]), &mut |_| {}).unwrap();
    let s = solve_model(&m, None, SolverChoice::Auto).unwrap().remove(0);
    let release = Release::certify(&m, &s).unwrap();
    assert!(matches!(release, Release::Compact(_)), "the compact route was expected at |Θ̃|·|Y| = 505 101");
    let row = &cmp.rows[0];
    let want = release.bayes_risk();
    assert!((row.bayes_risk - want).abs() <= 1e-9 * want, "row {} vs the artifact's {want}", row.bayes_risk);
}

/// Designs solved and certified by the caller give the rows, curves and heat maps the comparison's
/// own solves give, and the comparison then begins no solve.
#[test]
fn designs_given_are_used_instead_of_solving() {
    let m = small_model_with("");
    let opts = options(&m, &[Method::Ubapp, Method::Lbapp]);
    let own = compare(&m, &opts, &mut |_| {}).unwrap();
    let solutions = solve_model(&m, None, opts.solve.clone()).unwrap();
    let releases: Vec<Release> = solutions.iter().map(|s| Release::certify(&m, s).unwrap()).collect();
    for certified in [true, false] {
        let designs: Vec<Design> = solutions
            .iter()
            .zip(&releases)
            .map(|(solution, r)| Design { solution, release: certified.then_some(r) })
            .collect();
        take_solves();
        let given = compare_solved(&m, &opts, Some(&designs), &mut |_| {}).unwrap();
        assert_eq!(take_solves(), Vec::<f64>::new(), "certified releases given: {certified}");
        assert_eq!(given.rows, own.rows);
        assert_eq!(given.curves, own.curves);
        assert_eq!(given.heatmaps.len(), own.heatmaps.len());
        for (a, b) in given.heatmaps.iter().zip(&own.heatmaps) {
            assert_eq!((a.eps, &a.p), (b.eps, &b.p));
        }
    }
}

/// Designs at other ε, of another model, or for a sweep over another K are refused, as the calling
/// code's mistake rather than the user's input.
#[test]
fn designs_that_do_not_fit_the_comparison_are_refused() {
    let m = small_model_with("");
    let opts = options(&m, &[Method::Ubapp]);
    let solutions = solve_model(&m, None, SolverChoice::Auto).unwrap();
    let other = small_model_with("description = \"another\"");
    let foreign = Release::certify(&other, &solve_model(&other, None, SolverChoice::Auto).unwrap()[0]).unwrap();
    let coarse = model(8, 6, 0.0, 1.0, "squared", "{ kind = \"uniform\" }");
    let coarse = solve_model(&coarse, Some(&[0.5]), SolverChoice::Auto).unwrap();
    let design = |i: usize| Design { solution: &solutions[i], release: None };
    let cases: [(CompareOptions, Vec<Design>, &str); 5] = [
        (
            opts.clone(),
            vec![Design { solution: &coarse[0], release: None }, design(1)],
            "design 0's P is (6, 9), not |Θ̃| × |Y| = (10, 9)",
        ),
        (opts.clone(), vec![design(0)], "1 design(s) for 2 value(s) of ε"),
        (opts.clone(), vec![design(1), design(0)], "design 0 is not at ε = 0.5"),
        (
            opts.clone(),
            vec![Design { solution: &solutions[0], release: Some(&foreign) }, design(1)],
            "design 0's release is not model \"small\"'s at ε = 0.5",
        ),
        (
            CompareOptions { trials: vec![8, 16], ..opts.clone() },
            vec![design(0), design(1)],
            "the model's own (K = 8) and the sweep's K are [8, 16]",
        ),
    ];
    for (opts, designs, problem) in cases {
        let err = compare_solved(&m, &opts, Some(&designs), &mut |_| {}).unwrap_err();
        assert!(matches!(&err, CompareError::DesignsMismatch { .. }), "{err}");
        assert!(!err.is_input());
        assert!(err.to_string().contains(problem), "{err}");
    }
}

/// One decision of which comparison a model gets: the single-holder table for Bernoulli records
/// under a scalar loss, the party comparison read as one holder's for what that table does not
/// cover, the party comparison for several parties (asked for, or the model's own).
#[test]
fn the_route_of_a_model() {
    let binomial = small_model_with("");
    assert!(matches!(
        CompareRoute::for_model(&binomial, false, "b.toml"),
        CompareRoute::SingleHolder(s) if s.trials == 8
    ));
    assert!(matches!(CompareRoute::for_model(&binomial, true, "b.toml"), CompareRoute::Parties));
    assert!(matches!(
        CompareRoute::for_model(&poisson_model(), false, "p.toml"),
        CompareRoute::OneHolder(CompareError::UnsupportedFamily { model, .. }) if model == "p.toml"
    ));
    assert!(matches!(CompareRoute::for_model(&poisson_model(), true, "p.toml"), CompareRoute::Parties));
    let parties = small_model_with("[parties]\ncount = 2");
    assert!(matches!(CompareRoute::for_model(&parties, false, "m.toml"), CompareRoute::Parties));
}

/// The party comparison refuses designs of the model at other ε, as the calling code's mistake.
#[test]
fn the_party_comparison_refuses_designs_at_other_eps() {
    let m = small_model_with("[parties]\ncount = 2");
    let opts = parties::PartyOptions {
        eps: vec![0.5, 2.0],
        parties: vec![2],
        delta: 1e-5,
        seed: 0,
        solve: SolveOptions::default(),
        risk: crate::parties::RiskOptions::default(),
    };
    let swapped = solve_model(&m, Some(&[2.0, 0.5]), SolverChoice::Auto).unwrap();
    let err = parties::compare_parties_solved(&m, &opts, Some(&swapped), &mut |_| {}).unwrap_err();
    assert!(matches!(&err, CompareError::DesignsMismatch { .. }) && !err.is_input(), "{err}");
    assert!(err.to_string().contains("design 0 is not at ε = 0.5"), "{err}");
}
