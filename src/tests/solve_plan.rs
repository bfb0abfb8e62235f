//! A solve's plan builds the cost matrix at most once: the estimate (the outputs output generation
//! starts from), the solve, the reference risks and the certified release all read the plan's, in
//! `solve`, `compare`, `report` and the bindings alike.

use crate::analysis::SolveSummary;
use crate::compare::{compare, CompareOptions, Method};
use crate::lp::take_builds;
use crate::mechanism::Release;
use crate::model::Model;
use crate::report::{Report, ReportOptions};
use crate::solve::{solve_model, SolveOptions, SolvePlan};

use super::common::bundled;

/// What `ubapp solve --out` does with one plan: the checks and the estimate, the solve, the
/// summary (reference risks), the certified release. Returns the cost matrices built.
fn builds_per_solve(model: &Model) -> usize {
    let eps: Vec<f64> = model.epsilons.iter().copied().take(2).collect();
    take_builds();
    let plan = SolvePlan::checked(model, Some(&eps), SolveOptions::default()).unwrap();
    assert!(plan.refusal().is_none(), "{}: {:?}", model.name(), plan.estimate());
    let solutions = plan.solve_each(&mut |_| {}).unwrap();
    assert_eq!(solutions.len(), eps.len());
    let summary = SolveSummary::of_plan(&plan, &solutions);
    assert!(summary.refs.is_some(), "{}: the reference risks", model.name());
    Release::certify_planned(&plan, &solutions[0]).unwrap();
    take_builds()
}

/// The models whose solves need the dense cost matrix on every route that reads it: the LP
/// route by output generation (the estimate builds the matrix to find its first outputs) with
/// and without a symmetry, the dense chain solver on a loss without moments, and exact costs.
fn models() -> Vec<&'static str> {
    let mut v = vec![
        "count-unbiased-k10.toml",
        "prevalence-asymmetric-loss.toml",
        "click-through-exact.toml",
        "rare-event-beta.toml",
        "bernoulli-minimax-k30.toml",
    ];
    if cfg!(feature = "highs") {
        v.push("vote-share-3way-small.toml");
    }
    v
}

#[test]
fn a_solve_builds_the_cost_matrix_once() {
    for name in models() {
        let model = bundled(name);
        let builds = builds_per_solve(&model);
        assert_eq!(builds, 1, "{name}: the plan, the solve, the summary and the release built {builds} cost matrices");
    }
}

#[test]
fn solve_model_builds_the_cost_matrix_at_most_once() {
    for name in models() {
        let model = bundled(name);
        let eps: Vec<f64> = model.epsilons.iter().copied().take(2).collect();
        take_builds();
        solve_model(&model, Some(&eps), SolveOptions::default()).unwrap();
        let builds = take_builds();
        assert!(builds <= 1, "{name}: solve_model built {builds} cost matrices");
    }
}

#[test]
fn the_dry_run_builds_nothing_the_moments_answer() {
    // The compact-capable squared-loss chain: no cost matrix for the estimate, the solve or the
    // reference risks (the moments answer).
    let model = bundled("bernoulli-k100.toml");
    take_builds();
    let plan = SolvePlan::new(&model, None, SolveOptions::default()).unwrap();
    plan.reference_risks().unwrap();
    assert_eq!(take_builds(), 0);
}

/// A solve, then the certification of each ε's design, as `compare`, `report` and the bindings
/// (Python's `Solution.mechanism`, R's `ubapp_certify`) run them: on the squared-loss chain the
/// moments answer the reference risks and the dense chain route builds the cost matrix once; every
/// release is priced by that matrix, not by one of its own.
#[test]
fn a_solve_then_its_certifications_build_the_cost_matrix_once() {
    let model = bundled("bernoulli-k100.toml");
    let eps: Vec<f64> = model.epsilons.iter().copied().take(2).collect();

    take_builds();
    let opts = CompareOptions { eps: eps.clone(), methods: vec![Method::Ubapp], ..CompareOptions::for_model(&model) };
    let cmp = compare(&model, &opts, &mut |_| {}).unwrap();
    assert_eq!(cmp.rows.len(), eps.len());
    assert_eq!(take_builds(), 1, "compare: the solve's matrix prices both releases");

    let report_opts = ReportOptions {
        eps: Some(eps.clone()),
        solve: SolveOptions::default(),
        seed: 0,
        model_arg: "model.toml".into(),
        model_text: None,
        out_arg: "out".into(),
    };
    let report = Report::build(&model, &report_opts, &mut |_| {}).unwrap();
    assert_eq!(report.certificates.len(), eps.len());
    // The comparison's geometric baseline (truncated geometric + Bayes remap) prices its remap
    // with a cost matrix of its own at each ε; every other build is the solve's one.
    let geometric = eps.len();
    assert_eq!(take_builds(), 1 + geometric, "report: the solve, its references, its releases and its comparison");

    let rows = crate::bindings::solve_rows(&model, Some(&eps), "auto", None, None).unwrap();
    for row in &rows {
        row.certify(&model).unwrap();
    }
    assert_eq!(take_builds(), 1, "the bindings: a solve, then each row's mechanism");
}
