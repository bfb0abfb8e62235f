//! The report's two pages from one [`Report`]: HTML (self-contained, plots as inline SVG) and
//! Markdown (plots linked from `plots/`). Both print every number with [`num`], so a test can
//! compare them with `solve --json`.

use std::fmt::Write as _;

use super::document::Report;
use super::html::{escape, md_code, md_escape, STYLE};
use crate::model::Objective;

/// How every risk is printed: 6 significant digits in scientific notation.
pub fn num(v: f64) -> String {
    format!("{v:.6e}")
}

fn opt(v: Option<f64>) -> String {
    v.map_or_else(|| "–".to_string(), num)
}

fn theta(t: &Option<Vec<f64>>) -> String {
    t.as_ref().map_or_else(|| "–".to_string(), |t| t.iter().map(|v| format!("{v:.4}")).collect::<Vec<_>>().join(", "))
}

/// A table: header cells and rows of cells (the first column left-aligned).
struct Table {
    head: Vec<String>,
    rows: Vec<Vec<String>>,
}

impl Table {
    fn html(&self) -> String {
        let mut s = String::from("<table><tr>");
        for (i, h) in self.head.iter().enumerate() {
            let _ = write!(s, "<th{}>{}</th>", if i == 0 { " class=\"l\"" } else { "" }, escape(h));
        }
        s.push_str("</tr>\n");
        for r in &self.rows {
            s.push_str("<tr>");
            for (i, c) in r.iter().enumerate() {
                let _ = write!(s, "<td{}>{}</td>", if i == 0 { " class=\"l\"" } else { "" }, escape(c));
            }
            s.push_str("</tr>\n");
        }
        s.push_str("</table>\n");
        s
    }

    fn markdown(&self) -> String {
        let cell = |c: &String| md_escape(&c.replace(['\n', '\r'], " "));
        let mut s = format!("| {} |\n", self.head.iter().map(cell).collect::<Vec<_>>().join(" | "));
        s.push_str(&format!(
            "|{}\n",
            self.head.iter().enumerate().map(|(i, _)| if i == 0 { ":---|" } else { "---:|" }).collect::<String>()
        ));
        for r in &self.rows {
            s.push_str(&format!("| {} |\n", r.iter().map(cell).collect::<Vec<_>>().join(" | ")));
        }
        s
    }
}

/// The sections both pages share, as (heading, paragraphs, table) in order.
struct Section {
    heading: String,
    paragraphs: Vec<String>,
    table: Option<Table>,
    warnings: Vec<String>,
}

fn sections(r: &Report) -> Vec<Section> {
    let mut out = Vec::new();
    out.push(Section {
        heading: "The model".into(),
        paragraphs: std::iter::once(r.description.clone()).chain(r.words.iter().cloned()).collect(),
        table: None,
        warnings: Vec::new(),
    });
    let eps_list = r.eps.iter().map(|e| e.to_string()).collect::<Vec<_>>().join(", ");
    out.push(Section {
        heading: "Privacy".into(),
        paragraphs: vec![if r.delta > 0.0 {
            format!("ε ∈ {{{eps_list}}}, δ = {} ((ε, δ)-differential privacy).", r.delta)
        } else {
            format!("ε ∈ {{{eps_list}}} (pure ε-differential privacy, δ = 0).")
        }],
        table: None,
        warnings: Vec::new(),
    });
    let refs = r.references;
    let mut paragraphs = vec![format!(
        "Bayes risk: the {} loss averaged over the prior and the mechanism's randomness. prior_risk is the best constant release (the prior alone, the ε → 0 limit); non_private_risk the best non-private estimator on the output grid (the ε → ∞ limit); every optimum lies between them.{}",
        r.loss,
        if r.squared { " rmse = √bayes_risk, in θ's units." } else { "" }
    )];
    if refs.is_none() {
        paragraphs.push("The reference risks were skipped: the cost matrix does not fit in memory.".into());
    }
    if let Some(m) = r.parties.as_ref().and_then(|p| p.rows.iter().find_map(|x| x.parties)) {
        paragraphs.push(format!(
            "The model has {m} parties: these are one party's optimal mechanism on its own records; what their \
             releases give together is under \"Several data holders\"."
        ));
    }
    let head: Vec<String> = [
        "ε",
        "bayes_risk",
        "rmse",
        "prior_risk",
        "non_private_risk",
        "worst_case_risk",
        "worst_case_θ",
        "status",
        "solver",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let rows = r
        .rows
        .iter()
        .map(|row| {
            vec![
                row.eps.to_string(),
                num(row.bayes_risk),
                opt(row.rmse),
                opt(refs.map(|x| x.prior_risk)),
                opt(refs.map(|x| x.non_private_risk)),
                opt(row.worst_case_risk),
                theta(&row.worst_case_theta),
                row.status.clone(),
                row.solver.clone(),
            ]
        })
        .collect();
    out.push(Section {
        heading: "Optimal risks".into(),
        paragraphs,
        table: Some(Table { head, rows }),
        warnings: Vec::new(),
    });
    let mut worst = Vec::new();
    for row in &r.rows {
        match (&row.robustness, r.objective) {
            (Some(rob), _) => {
                let range =
                    rob.released_range.iter().map(|[a, b]| format!("[{a:.4}, {b:.4}]")).collect::<Vec<_>>().join(" × ");
                worst.push(format!(
                    "At ε = {}: the design's risk is largest at θ = {}, where it is {}{}; it releases values in {range} ({:.0} % of the parameter range).",
                    row.eps,
                    theta(&row.worst_case_theta),
                    num(rob.worst_case_risk),
                    refs.map_or(String::new(), |x| format!(" ({:.2}× the prior risk)", rob.worst_case_risk / x.prior_risk)),
                    100.0 * rob.range_coverage
                ));
            }
            (None, Objective::Minimax) => worst.push(format!(
                "At ε = {}: a minimax design; its worst-case risk over the parameter grid is {}.",
                row.eps,
                opt(row.worst_case_risk)
            )),
            (None, Objective::Bayes) => worst.push(format!(
                "At ε = {}: the risk profile was not computed (too large, or no dense mechanism).",
                row.eps
            )),
        }
    }
    if r.objective == Objective::Bayes {
        worst.push("A Bayes design is best on average under the prior; where the prior puts little mass it can be poor. For a guarantee at every θ use objective = \"minimax\" in the model file.".into());
    }
    out.push(Section { heading: "Worst case".into(), paragraphs: worst, table: None, warnings: r.warnings.clone() });
    let baselines = match (&r.comparison, &r.no_baselines) {
        (Some(cmp), _) => {
            let head = ["method", "privacy", "ε", "δ", "K", "bayes_risk", "true_risk", "risk computed by"]
                .iter()
                .map(|s| s.to_string())
                .collect();
            let rows = cmp
                .rows
                .iter()
                .map(|x| {
                    vec![
                        x.method.to_string(),
                        x.privacy.to_string(),
                        x.eps.to_string(),
                        x.delta.to_string(),
                        x.trials.to_string(),
                        num(x.bayes_risk),
                        num(x.true_risk),
                        x.risk_method.to_string(),
                    ]
                })
                .collect();
            Section {
                heading: "Baselines".into(),
                paragraphs: vec!["The estimators of the literature at the same ε (risk.csv beside this page). bayes_risk is on the model's discretised prior, like the optimum; true_risk under the continuous prior. (ε, δ) methods are weaker guarantees than pure ε-DP.".into()],
                table: Some(Table { head, rows }),
                warnings: cmp.caveats(),
            }
        }
        (None, _) if r.parties.is_some() => party_section(r.parties.as_ref().expect("checked")),
        (None, why) => Section {
            heading: "Baselines".into(),
            paragraphs: vec![format!(
                "No baselines: {}",
                why.clone().unwrap_or_else(|| "the comparison does not apply to this model".into())
            )],
            table: None,
            warnings: Vec::new(),
        },
    };
    out.push(baselines);
    if let Some(section) = r.comparison.as_ref().and_then(constraints_section) {
        out.push(section);
    }
    let head = ["ε", "certified ε", "δ", "certified δ", "artifact's bayes_risk", "kind", "file"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let rows = r
        .certificates
        .iter()
        .map(|c| {
            vec![
                c.eps.to_string(),
                c.certified_eps.to_string(),
                c.delta.to_string(),
                c.certified_delta.to_string(),
                num(c.bayes_risk),
                c.kind.to_string(),
                c.file.clone(),
            ]
        })
        .collect();
    out.push(Section {
        heading: "Certificates".into(),
        paragraphs: vec!["Each artifact (beside this page) holds the mechanism as integer weights; its privacy was re-derived from them in exact arithmetic (certified ε ≤ ε). `ubapp verify FILE` re-checks it; `ubapp sample FILE --y Y` releases from it; `ubapp posterior FILE --release V` gives the posterior of θ given a release.".into()],
        table: Some(Table { head, rows }),
        warnings: Vec::new(),
    });
    out
}

/// A party model's comparison: what the M releases give together, against one curator.
fn party_section(cmp: &crate::compare::parties::PartyComparison) -> Section {
    let head = ["method", "privacy", "ε", "δ", "records", "M", "bayes_risk", "true_risk", "risk computed by"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let rows = cmp
        .rows
        .iter()
        .map(|x| {
            vec![
                x.method.to_string(),
                x.privacy.to_string(),
                x.eps.to_string(),
                x.delta.to_string(),
                x.trials.to_string(),
                x.parties.map_or("one curator".to_string(), |m| m.to_string()),
                num(x.bayes_risk),
                num(x.true_risk),
                x.risk_method.to_string(),
            ]
        })
        .collect();
    Section {
        heading: "Several data holders".into(),
        paragraphs: vec![
            "The model splits its records among several parties. The optimal risks above are one party's mechanism \
             (ε-DP for its own records, as `ubapp solve` reports it); this table is what the parties' releases give \
             together, aggregated by an analyst, against ubapp run by one trusted curator holding every record \
             (as `ubapp compare` reports it; risk.csv beside this page)."
                .into(),
        ],
        table: Some(Table { head, rows }),
        warnings: cmp.notes.clone(),
    }
}

/// The self-contained HTML page.
pub(crate) fn html(r: &Report) -> String {
    let mut s = String::new();
    let title = format!("ubapp report: {}", r.name);
    let _ = write!(
        s,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{0}</title><style>{STYLE}</style></head><body>\n<h1>{0}</h1>\n",
        escape(&title)
    );
    let all = sections(r);
    let (before, after) = all.split_at(all.len() - 1);
    let section_html = |s: &mut String, sec: &Section| {
        let _ = writeln!(s, "<h2>{}</h2>", escape(&sec.heading));
        for p in &sec.paragraphs {
            let _ = writeln!(s, "<p>{}</p>", escape(p));
        }
        for w in &sec.warnings {
            let _ = writeln!(s, "<p class=\"warn\">{}</p>", escape(w));
        }
        if let Some(t) = &sec.table {
            s.push_str(&t.html());
        }
    };
    for sec in before {
        section_html(&mut s, sec);
        if sec.heading == "The model" {
            if let Some(text) = &r.model_text {
                let _ = writeln!(s, "<details><summary>The model file</summary><pre>{}</pre></details>", escape(text));
            }
        }
    }
    s.push_str("<h2>Figures</h2>\n");
    for f in &r.figures {
        let svg = f.svg.trim_start();
        let svg = svg.strip_prefix("<?xml version=\"1.0\" encoding=\"UTF-8\"?>").unwrap_or(svg);
        let _ = writeln!(
            s,
            "<figure><figcaption><b>{}</b> — {}</figcaption>\n{}\n</figure>",
            escape(&f.title),
            escape(&f.caption),
            svg.trim()
        );
    }
    for sec in after {
        section_html(&mut s, sec);
    }
    s.push_str("<h2>Reproduce</h2>\n<p>Each number above comes from one of these commands (same model file, same ubapp version):</p>\n");
    for c in &r.commands {
        let _ = writeln!(s, "<p>{}:</p><pre>{}</pre>", escape(&c.what), escape(&c.command));
    }
    let _ = writeln!(s, "<p><small>ubapp {}</small></p>\n</body></html>", env!("CARGO_PKG_VERSION"));
    s
}

/// The Markdown page (plots linked from `plots/`).
pub(crate) fn markdown(r: &Report) -> String {
    // Every string is escaped as Markdown shows it literally (a model's name and description are
    // the user's); code blocks are fenced beyond any backticks they hold.
    let e = |t: &str| md_escape(&t.replace(['\n', '\r'], " "));
    let mut s = format!("# ubapp report: {}\n\n", e(&r.name));
    let all = sections(r);
    let (before, after) = all.split_at(all.len() - 1);
    let section_md = |s: &mut String, sec: &Section| {
        let _ = writeln!(s, "## {}\n", e(&sec.heading));
        for p in &sec.paragraphs {
            let _ = writeln!(s, "{}\n", e(p));
        }
        for w in &sec.warnings {
            let _ = writeln!(s, "> **Warning:** {}\n", e(w));
        }
        if let Some(t) = &sec.table {
            let _ = writeln!(s, "{}", t.markdown());
        }
    };
    for sec in before {
        section_md(&mut s, sec);
        if sec.heading == "The model" {
            if let Some(text) = &r.model_text {
                let _ = writeln!(s, "{}\n", md_code(text.trim_end(), "toml"));
            }
        }
    }
    s.push_str("## Figures\n\n");
    for f in &r.figures {
        let _ = writeln!(s, "**{}** — {}\n\n![{}]({})\n", e(&f.title), e(&f.caption), e(&f.title), f.file);
    }
    for sec in after {
        section_md(&mut s, sec);
    }
    s.push_str(
        "## Reproduce\n\nEach number above comes from one of these commands (same model file, same ubapp version):\n\n",
    );
    for c in &r.commands {
        let _ = writeln!(s, "{}:\n\n{}\n", e(&c.what), md_code(&c.command, "sh"));
    }
    let _ = writeln!(s, "ubapp {}", env!("CARGO_PKG_VERSION"));
    s
}

/// The price of the model's `[constraints]`: each constrained optimum beside the unconstrained
/// one on the same grids (Cormode et al. ICDE 2018; Badanidiyuru et al. NeurIPS 2023; Kohli &
/// Laskowski PoPETs 2026). `None` for a model without constraints.
fn constraints_section(cmp: &crate::compare::Comparison) -> Option<Section> {
    use crate::compare::Method;
    let constrained: Vec<&crate::compare::Row> =
        cmp.rows.iter().filter(|x| x.method == Method::Ubapp && x.note.constraints.is_some()).collect();
    if constrained.is_empty() {
        return None;
    }
    let head =
        ["ε", "K", "constraints", "constrained bayes_risk", "unconstrained bayes_risk", "price", "outputs used / 2|Y|"]
            .iter()
            .map(|s| s.to_string())
            .collect();
    let rows = constrained
        .iter()
        .map(|x| {
            let c = x.note.constraints.as_ref().expect("filtered");
            let free = cmp
                .rows
                .iter()
                .find(|f| f.method == Method::UbappUnconstrained && f.eps == x.eps && f.trials == x.trials);
            vec![
                x.eps.to_string(),
                x.trials.to_string(),
                c.label.clone(),
                num(x.bayes_risk),
                free.map_or("—".into(), |f| num(f.bayes_risk)),
                free.map_or("—".into(), |f| format!("{:+.1} %", 100.0 * (x.bayes_risk / f.bayes_risk - 1.0))),
                c.used_outputs.map_or("—".into(), |u| format!("{u} / {}", 2 * c.observations)),
            ]
        })
        .collect();
    Some(Section {
        heading: "The price of the constraints".into(),
        paragraphs: vec!["The design carries the model's [constraints], each a set of linear rows of the same LP; the unconstrained optimum is the same model solved without them (outputs beyond [lower, upper] clamped, which never raises a squared or absolute loss). The price is the constrained risk over the unconstrained one. For an unbiased design, the outputs its optimum uses are set against the 2|Y| that Badanidiyuru et al. (NeurIPS 2023) show suffice. The released artifact's inequalities were checked exactly on its integer weights; its equalities' deviation is bounded in the certificate (docs/constraints.md).".into()],
        table: Some(Table { head, rows }),
        warnings: Vec::new(),
    })
}
