//! Hand-written HTML: the index page of a comparison folder, and the escaping every page shares.

use std::fmt::Write as _;

use crate::compare::parties::PartyComparison;
use crate::compare::{Comparison, Row};
use crate::model::Model;

/// Whether a page shows `c` as `\u{..}`: a control character other than a line break or a tab
/// (ESC could recolour a terminal the page is printed on), or a bidirectional override (U+202E
/// would reverse the text after it).
fn invisible(c: char) -> bool {
    crate::guard::text::needs_escape(c) && !matches!(c, '\n' | '\t' | '\r')
}

/// `text` with the five HTML metacharacters escaped, and every invisible character made visible.
pub(crate) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c if invisible(c) => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

/// `text` as Markdown shows it literally: HTML metacharacters as entities (no tag, such as a
/// model name's `<script>`, reaches the page), Markdown's own punctuation backslash-escaped (no
/// link, emphasis, heading or table cell is made from it), invisible characters made visible.
pub(crate) fn md_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '\\' | '`' | '*' | '_' | '[' | ']' | '#' | '|' | '!' => {
                out.push('\\');
                out.push(c);
            }
            c if invisible(c) => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

/// `text` as a fenced Markdown code block in `lang`: a fence longer than any run of backticks in
/// it (so the text cannot close it), invisible characters made visible.
pub(crate) fn md_code(text: &str, lang: &str) -> String {
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest.max(2) + 1);
    let shown: String =
        text.chars().map(|c| if invisible(c) { format!("\\u{{{:x}}}", c as u32) } else { c.to_string() }).collect();
    format!("{fence}{lang}\n{shown}\n{fence}")
}

/// The page style shared by the comparison index and the report (inline: no external resources).
pub(crate) const STYLE: &str = "body{font-family:sans-serif;max-width:1150px;margin:2em auto;padding:0 1em;color:#222;line-height:1.45}\
table{border-collapse:collapse;margin:1em 0;font-size:.92em}th,td{border:1px solid #ccc;padding:.25em .6em;text-align:right}\
th{background:#f2f2f2}td.l,th.l{text-align:left}code,pre{background:#f6f6f6;font-size:.9em}pre{padding:.6em;overflow-x:auto}\
.warn{background:#fff4e0;border-left:4px solid #e69500;padding:.5em 1em}figure{margin:1em 0}svg{max-width:100%;height:auto}\
figcaption{font-size:.9em;color:#555}";

/// The model a comparison page is about: its name, description and sentences in words.
pub(crate) fn model_header(model: &Model, what: &str) -> String {
    let name = escape(model.name());
    let mut s = format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{name}: {what} (ubapp)</title><style>{STYLE}</style></head><body>\n<h1>{name}: {what}</h1>\n"
    );
    if !model.spec().description.is_empty() {
        let _ = writeln!(s, "<p><em>{}</em></p>", escape(&model.spec().description));
    }
    s.push_str("<ul>\n");
    for w in super::document::in_words(model) {
        let _ = writeln!(s, "<li>{}</li>", escape(&w));
    }
    s.push_str("</ul>\n");
    s
}

/// Distinct values of `f` over `rows`, sorted.
fn distinct<T: PartialOrd + Copy>(rows: &[Row], f: impl Fn(&Row) -> T) -> Vec<T> {
    let mut v: Vec<T> = rows.iter().map(f).collect();
    v.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
    v.dedup_by(|a, b| a == b);
    v
}

/// "0.1, 1 and 5".
fn listed<T: std::fmt::Display>(v: &[T]) -> String {
    let parts: Vec<String> = v.iter().map(ToString::to_string).collect();
    match parts.len() {
        0 => String::new(),
        1 => parts[0].clone(),
        n => format!("{} and {}", parts[..n - 1].join(", "), parts[n - 1]),
    }
}

/// The rows of one case, best (least Bayes risk) first.
fn ranked<'a>(rows: impl Iterator<Item = &'a Row>) -> Vec<&'a Row> {
    let mut v: Vec<&Row> = rows.collect();
    v.sort_by(|a, b| a.bayes_risk.total_cmp(&b.bayes_risk));
    v
}

/// "Best method per ε" (per K too when there are several): the winner, its risk, UBaPP's, the
/// runner-up. `case` names the case in the first cells.
fn best_table(cases: &[(String, Vec<&Row>)], case_header: &str) -> String {
    let mut s = format!(
        "<table><tr><th class=\"l\">{case_header}</th><th class=\"l\">best method</th><th>its Bayes risk</th><th class=\"l\">runner-up</th><th>ubapp's Bayes risk</th><th>ubapp's rank</th></tr>\n"
    );
    let mut off_grid = false;
    let mut constrained = false;
    for (case, rows) in cases {
        let Some(best) = rows.first() else { continue };
        let runner = rows.get(1).map_or("-".to_string(), |r| format!("{} ({:.3e})", r.method, r.bayes_risk));
        let ubapp = rows.iter().find(|r| r.method == crate::compare::Method::Ubapp);
        constrained |= ubapp.is_some_and(|u| u.note.constraints.is_some());
        let (u_risk, u_rank) = match ubapp {
            Some(u) => {
                // Equal risks (to 1e-9 relative: the same mechanism found twice) share a rank.
                let above = rank_of(rows, u.bayes_risk) - 1;
                let tied = rows.iter().filter(|r| (r.bayes_risk - u.bayes_risk).abs() <= u.bayes_risk * TIE).count();
                if above > 0 {
                    off_grid = true;
                }
                let tie = if tied > 1 { " (tied)" } else { "" };
                (format!("{:.3e}", u.bayes_risk), format!("{} of {}{tie}", above + 1, rows.len()))
            }
            None => ("-".into(), "-".into()),
        };
        let _ = writeln!(
            s,
            "<tr><td class=\"l\">{case}</td><td class=\"l\"><b>{}</b> ({})</td><td>{:.3e}</td><td class=\"l\">{}</td><td>{u_risk}</td><td>{u_rank}</td></tr>",
            escape(&best.method.to_string()),
            best.privacy,
            best.bayes_risk,
            escape(&runner)
        );
    }
    s.push_str("</table>\n");
    if off_grid && constrained {
        s.push_str(
            "<p class=\"warn\">Where a method ranks above ubapp: ubapp here is the optimum among ε-DP mechanisms on the \
             output grid that also meet the model's [constraints]; the other methods (ubapp-unconstrained among them) \
             need not meet them, and the difference is the constraints' price (below).</p>\n",
        );
    } else if off_grid {
        s.push_str(
            "<p class=\"warn\">Where a method ranks above ubapp: ubapp is the optimum among ε-DP mechanisms that \
             release one of the output grid's values; a method that releases a real number off that grid (a posterior \
             mean, a clamped noisy estimate) or spends δ is outside that class and can have a lower risk. A finer \
             output grid narrows the difference.</p>\n",
        );
    }
    s
}

/// The index of a comparison for one data holder of a family outside the binomial table (the
/// party machinery with every record at one holder): the best method per ε, the notes, the plot,
/// every row ranked.
fn single_holder_index(cmp: &PartyComparison, files: &[String], model: &Model, eps: &[f64]) -> String {
    let mut s = model_header(model, "one data holder");
    let _ = writeln!(
        s,
        "<p>One data holder releases an ε-DP estimate of θ from every record. Compared at ε = {}: <b>ubapp</b>, the optimum among ε-DP mechanisms on the output grid, against noise added to the model's sufficient statistic (the notes say which). Lower Bayes risk is better. The table is <a href=\"risk.csv\">risk.csv</a>; the notes are <a href=\"notes.txt\">notes.txt</a>.</p>",
        listed(eps)
    );
    let cases: Vec<(String, Vec<&Row>)> = eps
        .iter()
        .map(|&e| (format!("ε = {e}"), ranked(cmp.rows.iter().filter(|r| r.eps == e))))
        .filter(|(_, rows)| !rows.is_empty())
        .collect();
    s.push_str("<h2>Best method per ε</h2>\n");
    s.push_str(&best_table(&cases, "ε"));
    for n in &cmp.notes {
        let _ = writeln!(s, "<p class=\"warn\">{}</p>", escape(n));
    }
    let captions = vec![("risk_vs_eps".to_string(), "Bayes risk against ε (log scales, lower is better).".to_string())];
    let figs = figures(files.iter(), &captions);
    if !figs.is_empty() {
        let _ = writeln!(s, "<h2>Plots</h2>\n{figs}");
    }
    s.push_str("<h2>Every method, ranked</h2>\n");
    s.push_str(&rows_table(&cases, "ε"));
    s.push_str("</body></html>\n");
    s
}

/// The rank of a risk among `rows`: one more than the number of rows strictly better (beyond
/// the tie tolerance), so tied rows share it.
fn rank_of(rows: &[&Row], risk: f64) -> usize {
    rows.iter().filter(|r| r.bayes_risk < risk * (1.0 - TIE) && (risk - r.bayes_risk).abs() > risk.abs() * TIE).count()
        + 1
}

/// Relative difference under which two risks are the same (a tie in the ranking).
const TIE: f64 = 1e-9;

/// The full table, ranked within each case.
fn rows_table(cases: &[(String, Vec<&Row>)], case_header: &str) -> String {
    let mut s = format!(
        "<table><tr><th class=\"l\">{case_header}</th><th>rank</th><th class=\"l\">method</th><th>privacy</th><th>δ</th><th>Bayes risk</th><th>true risk</th><th class=\"l\">risk computed by</th></tr>\n"
    );
    for (case, rows) in cases {
        for r in rows.iter() {
            // Equal risks (to 1e-9 relative) share a rank: 1, 1, 3 (as the best table says "tied").
            let rank = rank_of(rows, r.bayes_risk);
            let _ = writeln!(
                s,
                "<tr><td class=\"l\">{case}</td><td>{rank}</td><td class=\"l\">{}</td><td>{}</td><td>{}</td><td>{:.6e}</td><td>{:.6e}</td><td class=\"l\">{}</td></tr>",
                escape(&r.method.to_string()),
                r.privacy,
                r.delta,
                r.bayes_risk,
                r.true_risk,
                r.risk_method
            );
        }
    }
    s.push_str("</table>\n");
    s
}

/// The PNG files among `files` as figures (PNG shown, SVG linked), each with its caption (keyed
/// by the path without extension).
fn figures<'a>(files: impl Iterator<Item = &'a String>, captions: &[(String, String)]) -> String {
    let mut s = String::new();
    for f in files.filter(|f| f.ends_with(".png")) {
        let stem = f.trim_end_matches(".png");
        let caption = captions.iter().find(|(k, _)| k == stem).map_or(f.as_str(), |(_, c)| c.as_str());
        let _ = writeln!(
            s,
            "<figure><img src=\"{0}\" alt=\"{2}\" width=\"1100\"><figcaption>{2} (<a href=\"{1}\">SVG</a>, <a href=\"{0}\">PNG</a>)</figcaption></figure>",
            escape(f),
            escape(&format!("{stem}.svg")),
            escape(caption)
        );
    }
    s
}

/// The index of a comparison folder: the model in words, the best method per case, every row
/// ranked, the caveats and every plot with a caption saying what it shows.
pub(crate) fn comparison_index(cmp: &Comparison, files: &[String], model: &Model) -> String {
    let mut s = model_header(model, "UBaPP against the literature's estimators");
    let eps = distinct(&cmp.rows, |r| r.eps);
    let trials = distinct(&cmp.rows, |r| r.trials);
    let several_k = trials.len() > 1;
    let _ = writeln!(
        s,
        "<p>Compared at ε = {}{}; every risk is the Bayes risk under the model's prior (lower is better). \
         The table is <a href=\"risk.csv\">risk.csv</a>; the risk(θ) curves are <a href=\"data/mse_theta.csv\">data/mse_theta.csv</a>.</p>",
        listed(&eps),
        if trials.iter().any(|&k| k > 0) { format!(", K = {}", listed(&trials)) } else { String::new() }
    );
    let cases: Vec<(String, Vec<&Row>)> = trials
        .iter()
        .flat_map(|&k| eps.iter().map(move |&e| (k, e)))
        .map(|(k, e)| {
            let case = if several_k { format!("K = {k}, ε = {e}") } else { format!("ε = {e}") };
            (case, ranked(cmp.rows.iter().filter(|r| r.trials == k && r.eps == e)))
        })
        .filter(|(_, rows)| !rows.is_empty())
        .collect();
    let header = if several_k { "K, ε" } else { "ε" };
    let _ = writeln!(s, "<h2>Best method per {}</h2>", if several_k { "K and ε" } else { "ε" });
    s.push_str(&best_table(&cases, header));
    let prices = cmp.constraint_prices();
    if !prices.is_empty() {
        s.push_str("<h2>The price of the constraints</h2>\n<ul>\n");
        for p in &prices {
            let _ = writeln!(s, "<li>{}</li>", escape(p));
        }
        s.push_str("</ul>\n");
    }
    for c in cmp.caveats().into_iter().filter(|c| !prices.contains(c)) {
        let _ = writeln!(s, "<p class=\"warn\">{}</p>", escape(&c));
    }
    let captions = super::comparison_plots::comparison_captions(cmp);
    for (folder, title) in
        [("plots", "Risk vs ε and vs K"), ("mse_theta", "Risk at each θ"), ("heatmaps", "The UBaPP mechanism")]
    {
        let figs = figures(files.iter().filter(|f| f.starts_with(&format!("{folder}/"))), &captions);
        if !figs.is_empty() {
            let _ = writeln!(s, "<h2>{title}</h2>\n{figs}");
        }
    }
    s.push_str("<h2>Every method, ranked</h2>\n");
    s.push_str(&rows_table(&cases, header));
    s.push_str("</body></html>\n");
    s
}

/// The index of a party comparison's folder: the model in words, the best method per M and ε
/// (the one-curator UBaPP optimum beside each), every row ranked, the notes (which methods do
/// not apply, and why an aggregate can beat the grid-restricted optimum) and the plots.
pub(crate) fn party_index(cmp: &PartyComparison, files: &[String], model: &Model) -> String {
    let eps = distinct(&cmp.rows, |r| r.eps);
    let parties: Vec<u64> = {
        let mut v: Vec<u64> = cmp.rows.iter().filter_map(|r| r.parties).collect();
        v.sort_unstable();
        v.dedup();
        v
    };
    if parties.is_empty() {
        return single_holder_index(cmp, files, model, &eps);
    }
    let mut s = model_header(model, "several data holders");
    let _ = writeln!(
        s,
        "<p>The records are split among M = {} parties, each releasing an ε-DP value of its own records; \
         an aggregator combines the releases. Compared at ε = {} (per party) against <b>ubapp</b>, one trusted \
         curator holding every record. Lower Bayes risk is better. The table is <a href=\"risk.csv\">risk.csv</a>; \
         the notes are <a href=\"notes.txt\">notes.txt</a>.</p>",
        listed(&parties),
        listed(&eps)
    );
    let cases: Vec<(String, Vec<&Row>)> = parties
        .iter()
        .flat_map(|&m| eps.iter().map(move |&e| (m, e)))
        .map(|(m, e)| {
            let rows = cmp.rows.iter().filter(|r| r.eps == e && (r.parties == Some(m) || r.parties.is_none()));
            (format!("M = {m}, ε = {e}"), ranked(rows))
        })
        .filter(|(_, rows)| !rows.is_empty())
        .collect();
    s.push_str("<h2>Best method per M and ε</h2>\n");
    s.push_str(&best_table(&cases, "M, ε"));
    for n in &cmp.notes {
        let _ = writeln!(s, "<p class=\"warn\">{}</p>", escape(n));
    }
    let captions: Vec<(String, String)> = files
        .iter()
        .filter(|f| f.ends_with(".png"))
        .map(|f| {
            let stem = f.trim_end_matches(".png").to_string();
            let caption = if stem.starts_with("risk_vs_parties") {
                "Bayes risk against the number of parties M at fixed records in all (log scales, lower is better); \
                 the flat line is the one-curator UBaPP optimum, which releases a point of the output grid."
            } else {
                "Bayes risk against ε per party at this M (log scales, lower is better); dashed lines are (ε, δ) methods."
            };
            (stem, caption.to_string())
        })
        .collect();
    let figs = figures(files.iter(), &captions);
    if !figs.is_empty() {
        let _ = writeln!(s, "<h2>Plots</h2>\n{figs}");
    }
    s.push_str("<h2>Every method, ranked</h2>\n");
    s.push_str(&rows_table(&cases, "M, ε"));
    s.push_str("</body></html>\n");
    s
}
