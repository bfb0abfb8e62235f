//! Hand-written HTML: the index page of a comparison folder, and the escaping every page shares.

use std::fmt::Write as _;

use crate::compare::Comparison;

/// `text` with the five HTML metacharacters escaped.
pub(crate) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// The page style shared by the comparison index and the report (inline: no external resources).
pub(crate) const STYLE: &str = "body{font-family:sans-serif;max-width:1150px;margin:2em auto;padding:0 1em;color:#222;line-height:1.45}\
table{border-collapse:collapse;margin:1em 0;font-size:.92em}th,td{border:1px solid #ccc;padding:.25em .6em;text-align:right}\
th{background:#f2f2f2}td.l,th.l{text-align:left}code,pre{background:#f6f6f6;font-size:.9em}pre{padding:.6em;overflow-x:auto}\
.warn{background:#fff4e0;border-left:4px solid #e69500;padding:.5em 1em}figure{margin:1em 0}svg{max-width:100%;height:auto}\
figcaption{font-size:.9em;color:#555}";

/// The index of a comparison folder: the table and every file, plots shown as images.
pub(crate) fn comparison_index(cmp: &Comparison, files: &[String]) -> String {
    let mut s = String::new();
    let _ = write!(
        s,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>ubapp compare</title><style>{STYLE}</style></head><body>\n<h1>Comparison</h1>\n"
    );
    let _ = writeln!(s, "<p>The table is <a href=\"risk.csv\">risk.csv</a>; the risk(θ) curves are <a href=\"data/mse_theta.csv\">data/mse_theta.csv</a>.</p>");
    let _ = writeln!(
        s,
        "<table><tr><th class=\"l\">method</th><th>privacy</th><th>ε</th><th>δ</th><th>K</th><th>Bayes risk</th><th>true risk</th><th class=\"l\">risk computed by</th></tr>"
    );
    for r in &cmp.rows {
        let _ = writeln!(
            s,
            "<tr><td class=\"l\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.6e}</td><td>{:.6e}</td><td class=\"l\">{}</td></tr>",
            escape(&r.method.to_string()),
            r.privacy,
            r.eps,
            r.delta,
            r.trials,
            r.bayes_risk,
            r.true_risk,
            r.risk_method
        );
    }
    s.push_str("</table>\n");
    for c in cmp.caveats() {
        let _ = writeln!(s, "<p class=\"warn\">{}</p>", escape(&c));
    }
    for (folder, title) in
        [("plots", "Risk vs ε and vs K"), ("mse_theta", "Risk at each θ"), ("heatmaps", "The UBaPP mechanism")]
    {
        let pngs: Vec<&String> =
            files.iter().filter(|f| f.starts_with(&format!("{folder}/")) && f.ends_with(".png")).collect();
        if pngs.is_empty() {
            continue;
        }
        let _ = writeln!(s, "<h2>{title}</h2>");
        for f in pngs {
            let svg = f.trim_end_matches(".png").to_string() + ".svg";
            let _ = writeln!(
                s,
                "<figure><img src=\"{0}\" alt=\"{0}\" width=\"1100\"><figcaption>{0} (<a href=\"{1}\">SVG</a>)</figcaption></figure>",
                escape(f),
                escape(&svg)
            );
        }
    }
    s.push_str("</body></html>\n");
    s
}
