//! `ubapp report`: everything a colleague needs about one model, gathered once ([`Report::build`])
//! and written as a self-contained HTML page and a Markdown page ([`Report::write`]).
//!
//! Every number comes from the library's own routes — `solve` (optimum, references, worst case),
//! `mechanism` (the certificate of the artifact written beside the page), `compare` (the baselines,
//! on the route `ubapp compare` takes, with the designs solved and certified here) — and the page
//! lists the commands that reproduce each.

use std::path::Path;

use super::comparison_plots::{comparison_plots, PlotKind};
use super::mechanism_heatmap_svg;
use super::plot::{heatmap_svg, line_plot_svg, LinePlot, Reference, Series, Shade};
use super::Result;
use crate::analysis::{risk_profile, robustness, robustness_warning, Robustness};
use crate::compare::parties::{compare_parties_solved, PartyComparison, PartyOptions};
use crate::compare::{compare_solved, BaselineOptions, CompareOptions, CompareRoute, Comparison, Design, Heatmap};
use crate::eval::prior_shape;
use crate::mechanism::Release;
use crate::model::{Model, Objective};
use crate::parties::RiskOptions;
use crate::solve::{ReferenceRisks, Solution, SolveOptions, SolvePlan};

/// Largest |Θ̃|·|Y| drawn as a heat map (a cell per entry).
const MAX_HEATMAP_CELLS: usize = 200_000;

/// What to put in a report.
#[derive(Debug, Clone)]
pub struct ReportOptions {
    /// Privacy levels; `None`: the model's list.
    pub eps: Option<Vec<f64>>,
    /// Solver options (as for `solve`).
    pub solve: SolveOptions,
    /// Seed of the baselines' Monte-Carlo risks (as `compare --seed`).
    pub seed: u64,
    /// How the model file is named in the reproducing commands (e.g. its path as given).
    pub model_arg: String,
    /// The model file's text, shown verbatim (optional).
    pub model_text: Option<String>,
    /// The output directory as given (named in the command that reproduces the report).
    pub out_arg: String,
}

/// One ε of the report: the optimum with its references and robustness.
#[derive(Debug, Clone)]
pub struct RiskRow {
    /// ε.
    pub eps: f64,
    /// The optimal Bayes risk (as `solve` reports it).
    pub bayes_risk: f64,
    /// √bayes_risk (squared loss only).
    pub rmse: Option<f64>,
    /// Solver status after our checks.
    pub status: String,
    /// Solver used.
    pub solver: String,
    /// Worst case over the parameter grid (Bayes designs: from the risk profile; minimax: the
    /// program's objective).
    pub worst_case_risk: Option<f64>,
    /// Where a Bayes design's worst case is attained.
    pub worst_case_theta: Option<Vec<f64>>,
    /// A Bayes design's released range and coverage.
    pub robustness: Option<Robustness>,
}

/// The certificate of the artifact written for one ε.
#[derive(Debug, Clone)]
pub struct CertificateRow {
    /// Target ε.
    pub eps: f64,
    /// Certified ε, re-derived from the integer weights.
    pub certified_eps: f64,
    /// Target δ.
    pub delta: f64,
    /// Certified δ.
    pub certified_delta: f64,
    /// The artifact's Bayes risk (after repair and quantisation).
    pub bayes_risk: f64,
    /// `dense` or `compact`.
    pub kind: &'static str,
    /// Its file, relative to the report's directory.
    pub file: String,
}

impl CertificateRow {
    /// The row of `release`, written to `file`.
    fn of(release: &Release, file: &str) -> CertificateRow {
        let cert = release.certificate();
        CertificateRow {
            eps: cert.eps,
            certified_eps: cert.certified_eps,
            delta: cert.delta,
            certified_delta: cert.certified_delta,
            bayes_risk: release.bayes_risk(),
            kind: match release {
                Release::Dense(_) => "dense",
                Release::Compact(_) => "compact",
            },
            file: file.to_string(),
        }
    }
}

/// A figure: its title and SVG text (also written as `file`, relative to the report's directory).
#[derive(Debug, Clone)]
pub struct Figure {
    /// Title.
    pub title: String,
    /// What it shows.
    pub caption: String,
    /// SVG file, relative to the report's directory.
    pub file: String,
    /// The SVG document.
    pub svg: String,
}

/// A command that reproduces some of the report's numbers.
#[derive(Debug, Clone)]
pub struct Reproduce {
    /// Which numbers.
    pub what: String,
    /// The command line.
    pub command: String,
}

/// Everything in a report.
#[derive(Debug)]
pub struct Report {
    /// The model's name.
    pub name: String,
    /// The model's description.
    pub description: String,
    /// The model in words, one sentence per section.
    pub words: Vec<String>,
    /// The model file's text.
    pub model_text: Option<String>,
    /// The ε list.
    pub eps: Vec<f64>,
    /// δ (0 for pure ε-DP).
    pub delta: f64,
    /// Squared loss (RMSE reported).
    pub squared: bool,
    /// The loss's name.
    pub loss: String,
    /// Bayes or minimax.
    pub objective: Objective,
    /// Prior-only and non-private risks (`None` when the cost matrix does not fit in memory).
    pub references: Option<ReferenceRisks>,
    /// One row per ε.
    pub rows: Vec<RiskRow>,
    /// Robustness warnings.
    pub warnings: Vec<String>,
    /// The certificate of each artifact.
    pub certificates: Vec<CertificateRow>,
    /// The baselines (binomial models with one data holder).
    pub comparison: Option<Comparison>,
    /// The party comparison (models with `[parties]`: what `ubapp compare` reports for them).
    pub parties: Option<PartyComparison>,
    /// Why there are no baselines, when there are none.
    pub no_baselines: Option<String>,
    /// The figures.
    pub figures: Vec<Figure>,
    /// Commands that reproduce the numbers.
    pub commands: Vec<Reproduce>,
    /// Seed of the baselines' Monte-Carlo risks.
    pub seed: u64,
    /// The certified releases and their files, relative to the report's directory.
    pub(super) artifacts: Vec<(String, Release)>,
}

/// `v` as a file-name tag: 0.5 → "0.5".
fn tag(v: f64) -> String {
    format!("{v}")
}

impl Report {
    /// Solve `model` at each ε, build and certify each artifact, run the baselines where they
    /// apply and draw the figures. `progress` gets one line per step.
    pub fn build(model: &Model, opts: &ReportOptions, progress: &mut dyn FnMut(&str)) -> Result<Report> {
        let eps: Vec<f64> = opts.eps.clone().unwrap_or_else(|| model.epsilons().to_vec());
        crate::model::validate_epsilons(&eps, crate::guard::Parameter::Eps.spelled())?;
        progress(&format!("solving {} value(s) of ε", eps.len()));
        // One plan: the solve, its reference risks and the certifications read one cost matrix.
        let plan = SolvePlan::checked(model, Some(&eps), opts.solve.clone())?;
        let solutions = plan.solve_each(&mut |_| {})?;
        let references = plan.reference_risks().ok();
        let squared = model.loss().name() == "squared";
        let bayes = model.objective() == Objective::Bayes;
        let mut warnings = Vec::new();
        let mut rows = Vec::new();
        for s in &solutions {
            let rob = if bayes && s.status.has_solution() && s.has_dense_p() { robustness(model, &s.p) } else { None };
            if let (Some(r), Some(refs)) = (&rob, &references) {
                warnings.extend(robustness_warning(s.eps, s.bayes_risk, refs, r));
            }
            rows.push(RiskRow {
                eps: s.eps,
                bayes_risk: s.bayes_risk,
                rmse: squared.then(|| s.bayes_risk.max(0.0).sqrt()),
                status: s.status.to_string(),
                solver: s.solver.clone(),
                worst_case_risk: rob.as_ref().map(|r| r.worst_case_risk).or(s.checks.worst_case_risk),
                worst_case_theta: rob.as_ref().map(|r| r.worst_case_theta.clone()),
                robustness: rob,
            });
        }
        progress("certifying the mechanisms");
        // Each usable solution certified once: its artifact, its certificate and the comparison's
        // UBaPP row.
        let releases: Vec<Option<Release>> = solutions
            .iter()
            .map(|s| s.status.has_solution().then(|| Release::certify_planned(&plan, s)).transpose())
            .collect::<std::result::Result<_, _>>()?;
        let files: Vec<String> =
            solutions.iter().map(|s| format!("artifacts/mechanism-eps{}.json", tag(s.eps))).collect();
        let certificates: Vec<CertificateRow> = files
            .iter()
            .zip(&releases)
            .filter_map(|(file, release)| release.as_ref().map(|r| CertificateRow::of(r, file)))
            .collect();
        let (comparison, parties, no_baselines) = baselines(model, opts, &eps, &solutions, &releases, progress)?;
        let artifacts = files.into_iter().zip(releases).filter_map(|(file, r)| r.map(|r| (file, r))).collect();
        let mut report = Report {
            name: model.name().to_string(),
            description: model.spec().description.clone(),
            words: in_words(model),
            model_text: opts.model_text.clone(),
            eps: eps.clone(),
            delta: model.delta(),
            squared,
            loss: model.loss().name().to_string(),
            objective: model.objective(),
            references,
            rows,
            warnings,
            certificates,
            comparison,
            parties,
            no_baselines,
            figures: Vec::new(),
            commands: Vec::new(),
            seed: opts.seed,
            artifacts,
        };
        progress("drawing the figures");
        report.figures = report.draw(model, &solutions)?;
        report.commands = report.reproduce(&opts.model_arg, &opts.out_arg);
        Ok(report)
    }

    fn draw(&self, model: &Model, solutions: &[Solution]) -> Result<Vec<Figure>> {
        let mut figures = Vec::new();
        let mut add = |title: String, caption: &str, stem: String, svg: String| {
            figures.push(Figure { title, caption: caption.to_string(), file: format!("plots/{stem}.svg"), svg });
        };
        if let Some(cmp) = &self.comparison {
            for (_, stem, kind) in comparison_plots(cmp) {
                let (title, caption, svg) = match kind {
                    PlotKind::Line(plot) => {
                        let caption = if stem.starts_with("mse_theta") {
                            "The risk at each θ of every method at this ε. Shaded: the prior's density (scaled), \
                             where the Bayes risk puts its weight; a Bayes design may be poor where it is thin."
                        } else {
                            "Bayes risk of every method. Grey: the prior-only risk (ε → 0, dotted) and the \
                             non-private risk on the output grid (ε → ∞, dashed)."
                        };
                        let caption = match &plot.note {
                            Some(note) => format!("{caption} Shown: {note}."),
                            None => caption.to_string(),
                        };
                        (plot.title.clone(), caption, line_plot_svg(&plot)?)
                    }
                    PlotKind::Heatmap(h) => (
                        format!("The UBaPP mechanism at ε = {}", h.eps),
                        "Pr(release | y) of the optimal design (colour ∝ √P so small probabilities show).".to_string(),
                        heatmap_svg(h)?,
                    ),
                };
                add(title, &caption, stem, svg);
            }
            return Ok(figures);
        }
        // Models compare does not handle: UBaPP alone, from the solutions.
        if let (Some(refs), true) = (&self.references, self.rows.len() > 1) {
            let plot = LinePlot {
                x_log: true,
                y_log: true,
                series: vec![Series {
                    name: "ubapp".into(),
                    color: 0,
                    dashed: false,
                    points: self.rows.iter().map(|r| (r.eps, r.bayes_risk)).collect(),
                }],
                references: vec![
                    Reference { name: "prior only (ε → 0)".into(), y: refs.prior_risk },
                    Reference { name: "non-private (ε → ∞)".into(), y: refs.non_private_risk },
                ],
                x_ticks: self.rows.iter().map(|r| r.eps).collect(),
                ..LinePlot::new("Optimal Bayes risk vs ε", "ε", "Bayes risk")
            };
            add(
                plot.title.clone(),
                "The optimum at each ε between the prior-only (dotted) and non-private (dashed) references.",
                "risk_vs_eps".into(),
                line_plot_svg(&plot)?,
            );
        }
        for s in solutions.iter().filter(|s| s.status.has_solution() && s.has_dense_p()) {
            if model.theta().dim() == 1 {
                if let Some(profile) = risk_profile(model, &s.p) {
                    let shape = prior_shape(model);
                    let plot = LinePlot {
                        y_log: true,
                        series: vec![Series {
                            name: "ubapp".into(),
                            color: 0,
                            dashed: false,
                            points: model.theta().values().into_iter().zip(profile).collect(),
                        }],
                        shade: (!shape.is_empty())
                            .then(|| Shade { name: "prior density of θ (scaled)".into(), points: shape }),
                        ..LinePlot::new(format!("risk at θ, ε = {}", s.eps), "θ", "risk at θ")
                    };
                    add(
                        plot.title.clone(),
                        "The optimal design's risk at each θ of the parameter grid; shaded: the prior's density (scaled).",
                        format!("risk_theta_eps{}", tag(s.eps)),
                        line_plot_svg(&plot)?,
                    );
                }
            }
            let (outputs, n_obs) = (model.outputs(), model.family().observation_count());
            if outputs.len() * n_obs > MAX_HEATMAP_CELLS {
                continue;
            }
            let title = format!("The UBaPP mechanism at ε = {}", s.eps);
            let caption = "Pr(release | y) of the optimal design.";
            if outputs.dim() == 1 {
                let h = Heatmap { eps: s.eps, trials: 0, p: s.p.clone(), outputs: outputs.values() };
                add(title, caption, format!("heatmap_ubapp_eps{}", tag(s.eps)), heatmap_svg(&h)?);
            } else if outputs.dim() == 3 {
                let obs = model.family().observations();
                if obs.dim() == 3 {
                    let panels = super::default_panels(&obs);
                    let svg = mechanism_heatmap_svg(outputs, &obs, &s.p, &panels, &title)?;
                    add(title, caption, format!("heatmap_ubapp_eps{}", tag(s.eps)), svg);
                }
            }
        }
        Ok(figures)
    }

    fn reproduce(&self, model_arg: &str, out_arg: &str) -> Vec<Reproduce> {
        let eps_list = self.eps.iter().map(|e| tag(*e)).collect::<Vec<_>>().join(",");
        let quote = |s: &str| {
            if s.chars().all(|c| c.is_ascii_alphanumeric() || "/._-+=,".contains(c)) {
                s.to_string()
            } else {
                format!("'{}'", s.replace('\'', r"'\''"))
            }
        };
        let m = quote(model_arg);
        let mut out = vec![Reproduce {
            what: "the optimal risks, references, RMSE and worst cases (one JSON object per ε)".into(),
            command: format!("ubapp solve {m} --eps {eps_list} --json"),
        }];
        for c in &self.certificates {
            out.push(Reproduce {
                what: format!("the certified mechanism at ε = {} and its certificate", c.eps),
                command: format!(
                    "ubapp solve {m} --eps {} --out {} && ubapp verify {} --model {m}",
                    tag(c.eps),
                    quote(Path::new(&c.file).file_name().map_or(&c.file[..], |n| n.to_str().unwrap_or(&c.file))),
                    quote(Path::new(&c.file).file_name().map_or(&c.file[..], |n| n.to_str().unwrap_or(&c.file)))
                ),
            });
        }
        if self.comparison.is_some() {
            out.push(Reproduce {
                what: "the baselines table and the plots".into(),
                command: format!(
                    "ubapp compare {m} --eps {eps_list} --seed {} --out compare-{}",
                    self.seed,
                    quote(&self.name)
                ),
            });
        }
        if self.parties.is_some() {
            out.push(Reproduce {
                what: "the party comparison table".into(),
                command: format!(
                    "ubapp compare {m} --eps {eps_list} --seed {} --out compare-{}",
                    self.seed,
                    quote(&self.name)
                ),
            });
        }
        out.push(Reproduce {
            what: "this report".into(),
            command: format!("ubapp report {m} --eps {eps_list} --seed {} --out {}", self.seed, quote(out_arg)),
        });
        out
    }
}

/// What `model`'s designs are compared with, by the route `ubapp compare` takes
/// ([`CompareRoute::for_model`]), on the designs solved and certified here (`releases`: each
/// solution's, where it has one): the single-holder comparison, the party comparison, or why
/// there are no baselines.
fn baselines(
    model: &Model,
    opts: &ReportOptions,
    eps: &[f64],
    solutions: &[Solution],
    releases: &[Option<Release>],
    progress: &mut dyn FnMut(&str),
) -> Result<(Option<Comparison>, Option<PartyComparison>, Option<String>)> {
    match CompareRoute::for_model(model, false, &format!("model \"{}\"", model.name())) {
        CompareRoute::Parties => {
            progress(&format!("comparing {} parties' releases", model.parties()));
            let popts = PartyOptions {
                eps: eps.to_vec(),
                parties: vec![model.parties()],
                delta: BaselineOptions::default().delta,
                seed: opts.seed,
                solve: opts.solve.clone(),
                risk: RiskOptions { seed: opts.seed, ..RiskOptions::default() },
            };
            Ok((None, Some(compare_parties_solved(model, &popts, Some(solutions), &mut |_| {})?), None))
        }
        CompareRoute::SingleHolder(setting) => {
            progress("evaluating the baselines");
            let copts = CompareOptions {
                eps: eps.to_vec(),
                trials: vec![setting.trials],
                solve: opts.solve.clone(),
                baseline: BaselineOptions { seed: opts.seed, ..Default::default() },
                ..CompareOptions::for_model(model)
            };
            let designs: Vec<Design> = solutions
                .iter()
                .zip(releases)
                .map(|(solution, release)| Design { solution, release: release.as_ref() })
                .collect();
            Ok((Some(compare_solved(model, &copts, Some(&designs), &mut |_| {})?), None, None))
        }
        CompareRoute::OneHolder(why) => Ok((None, None, Some(why.to_string()))),
    }
}

/// The model in words: one sentence per section, from the validated spec.
pub(crate) fn in_words(model: &Model) -> Vec<String> {
    let spec = model.spec();
    let fields = |v: serde_json::Value, skip: &str| -> String {
        let Some(o) = v.as_object() else { return String::new() };
        let parts: Vec<String> = o
            .iter()
            .filter(|(k, _)| *k != skip)
            .map(|(k, v)| {
                let text = match v {
                    serde_json::Value::Array(a) if a.len() > 8 => format!("[{} values]", a.len()),
                    v => v.to_string().trim_matches('"').to_string(),
                };
                format!("{k} = {text}")
            })
            .collect();
        if parts.is_empty() {
            String::new()
        } else {
            format!(" ({})", parts.join(", "))
        }
    };
    let json = |v: serde_json::Result<serde_json::Value>| v.unwrap_or(serde_json::Value::Null);
    let obs = json(serde_json::to_value(&spec.observation));
    let family = obs.get("family").and_then(|f| f.as_str()).unwrap_or("?").to_string();
    let prior = json(serde_json::to_value(&spec.parameter.prior));
    let grid = json(serde_json::to_value(&spec.parameter.grid));
    let kind = |v: &serde_json::Value| v.get("kind").and_then(|k| k.as_str()).unwrap_or("?").to_string();
    let p = &spec.parameter;
    let mut words = vec![
        format!("Data: the {family} family{}; the release depends on the data only through its sufficient statistic y, and datasets differing in one record are neighbours.", fields(obs.clone(), "family")),
        format!(
            "Parameter: θ in [{}, {}] with a {} prior{}, discretised on a {} grid{}: {}.",
            p.lower,
            p.upper,
            kind(&prior),
            fields(prior.clone(), "kind"),
            kind(&grid),
            fields(grid.clone(), "kind"),
            if model.exact().is_some() {
                "exact costs: no parameter grid".to_string()
            } else {
                format!("{} points", model.theta().len())
            }
        ),
        format!(
            "Releases: one of {} values (the output grid){}.",
            model.outputs().len(),
            model.release_reach().map_or(String::new(), |note| format!("; {note}"))
        ),
        format!("Loss: {}.", model.loss().name()),
    ];
    let privacy = if model.delta() > 0.0 {
        format!("(ε, δ)-differential privacy with δ = {}", model.delta())
    } else {
        "pure ε-differential privacy".to_string()
    };
    words.push(format!(
        "Design: the {} estimator under {privacy}, found by linear programming (UBaPP) and certified exactly.",
        match model.objective() {
            Objective::Bayes => "Bayes-optimal (least risk averaged over the prior)",
            Objective::Minimax => "minimax (least worst-case risk over the parameter grid)",
        }
    ));
    if !model.constraints().is_empty() {
        words.push(format!(
            "Constraints: {} — the design is the least-risk one among the ε-DP mechanisms that meet them (docs/constraints.md).",
            model.constraints().names.label()
        ));
    }
    words
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::solve::take_solves;

    fn bundled(name: &str) -> Model {
        Model::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("models").join(name)).unwrap()
    }

    fn options() -> ReportOptions {
        ReportOptions {
            eps: None,
            solve: SolveOptions::default(),
            seed: 0,
            model_arg: "model.toml".into(),
            model_text: None,
            out_arg: "out".into(),
        }
    }

    /// The report solves each ε once: its comparison's UBaPP rows are the designs it certified.
    #[test]
    fn a_report_solves_each_eps_once() {
        let model = bundled("bernoulli-k100.toml");
        take_solves();
        let report = Report::build(&model, &options(), &mut |_| {}).unwrap();
        assert_eq!(take_solves(), model.epsilons());
        let cmp = report.comparison.expect("a binomial model has the baselines");
        let ubapp: Vec<f64> =
            cmp.rows.iter().filter(|r| r.method == crate::compare::Method::Ubapp).map(|r| r.bayes_risk).collect();
        assert_eq!(ubapp.len(), report.certificates.len());
        for (row, c) in ubapp.iter().zip(&report.certificates) {
            assert!((row - c.bayes_risk).abs() <= 1e-9 * c.bayes_risk, "ε = {}: {row} vs {}", c.eps, c.bayes_risk);
        }
    }

    /// A party model's report solves one party's design at each ε once (the party comparison reuses
    /// it), and the one curator's once.
    #[test]
    fn a_party_models_report_solves_one_partys_design_once() {
        let model = bundled("hospitals-5-parties.toml");
        take_solves();
        let report = Report::build(&model, &options(), &mut |_| {}).unwrap();
        let eps = model.epsilons();
        assert_eq!(take_solves(), [eps, eps].concat(), "the model's designs, then the curator's");
        assert!(report.parties.is_some());
    }
}
