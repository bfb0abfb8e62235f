//! A comparison's plots: which there are (risk vs ε per K, risk vs K per ε, risk(θ) curves, the
//! UBaPP mechanism's heat maps), their series, reference lines and captions, and the folder each
//! is written to. The drawing itself is [`super::plot`].

use std::path::Path;

use super::plot::{write_heatmap, write_line_plot, Formats, LinePlot, Reference, Series, Shade, REFERENCE_COLOR};
use super::Result;
use crate::compare::{Comparison, Heatmap, Method, Row};
use crate::eval::{PrivacyKind, ScalarLoss};

/// One series per method of `rows` (in first-seen order): the rows that `x` maps to Some(x),
/// plotted as (x, bayes_risk); (ε, δ) methods dashed and labelled so.
pub fn risk_series(rows: &[Row], x: &dyn Fn(&Row) -> Option<f64>) -> Vec<Series> {
    let mut methods: Vec<(Method, bool)> = Vec::new();
    for r in rows {
        let m = (r.method, r.privacy == PrivacyKind::EpsDelta);
        if !methods.contains(&m) {
            methods.push(m);
        }
    }
    methods
        .iter()
        .map(|&(m, approx)| Series {
            name: legend(m, approx),
            color: method_color(m),
            dashed: approx,
            points: rows
                .iter()
                .filter(|r| r.method == m && (r.privacy == PrivacyKind::EpsDelta) == approx)
                .filter_map(|r| x(r).map(|v| (v, r.bayes_risk)))
                .collect(),
        })
        .filter(|s| !s.points.is_empty())
        .collect()
}

fn legend(method: Method, approx: bool) -> String {
    if approx {
        format!("{method} (ε,δ)")
    } else {
        method.to_string()
    }
}

/// The palette index of a method: its place in [`Method::ALL`] (UBaPP first, drawn wider).
fn method_color(method: Method) -> usize {
    Method::ALL.iter().position(|&m| m == method).unwrap_or(0)
}

/// The most curves a plot draws (UBaPP's and references included): beyond, the lowest others
/// ([`LinePlot::keep_best`]), said in the legend and the caption.
pub(crate) const MAX_CURVES: usize = 8;

/// Number formatting for file names: 0.001 → "0.001", 5 → "5".
fn tag(v: f64) -> String {
    format!("{v}")
}

/// The reference lines of a risk plot at K: prior-only (ε → 0) and non-private (ε → ∞), if known.
pub fn reference_lines(cmp: &Comparison, trials: u64) -> Vec<Reference> {
    cmp.references
        .iter()
        .filter(|r| r.trials == trials)
        .flat_map(|r| {
            [
                Reference { name: "prior only (ε → 0)".into(), y: r.prior_risk },
                Reference { name: "non-private (ε → ∞)".into(), y: r.non_private_risk },
            ]
        })
        .collect()
}

/// The axis labels of a comparison's risk plots and risk(θ) plots.
fn labels(loss: ScalarLoss) -> (&'static str, &'static str) {
    match loss {
        ScalarLoss::Squared => ("Bayes risk (MSE)", "MSE(θ)"),
        ScalarLoss::Absolute => ("Bayes risk", "expected loss at θ"),
    }
}

/// A comparison's plots, each with its sub-folder and file stem, in the order an index lists them.
pub(crate) fn comparison_plots(cmp: &Comparison) -> Vec<(&'static str, String, PlotKind<'_>)> {
    let (risk_label, curve_label) = labels(cmp.loss);
    let mut out = Vec::new();
    let mut trials: Vec<u64> = cmp.rows.iter().map(|r| r.trials).collect();
    trials.sort_unstable();
    trials.dedup();
    let mut eps: Vec<f64> = cmp.rows.iter().map(|r| r.eps).collect();
    eps.sort_by(f64::total_cmp);
    eps.dedup();
    let series_of = |x: &dyn Fn(&Row) -> Option<f64>| risk_series(&cmp.rows, x);
    if eps.len() > 1 {
        for &k in &trials {
            let mut plot = LinePlot {
                x_log: true,
                y_log: true,
                series: series_of(&|r| (r.trials == k).then_some(r.eps)),
                references: reference_lines(cmp, k),
                x_ticks: eps.clone(),
                ..LinePlot::new(format!("Bayes risk vs ε, K = {k}"), "ε", risk_label)
            };
            plot.keep_best(MAX_CURVES, "risk.csv");
            out.push(("plots", format!("risk_vs_eps_K{k}"), PlotKind::Line(Box::new(plot))));
        }
    }
    if trials.len() > 1 {
        for &e in &eps {
            // The non-private risk depends on K: drawn as a curve; the prior-only one does not.
            let mut series = series_of(&|r| (r.eps == e).then_some(r.trials as f64));
            let np: Vec<(f64, f64)> = cmp.references.iter().map(|r| (r.trials as f64, r.non_private_risk)).collect();
            if np.len() > 1 {
                series.push(Series {
                    name: "non-private (ε → ∞)".into(),
                    color: REFERENCE_COLOR,
                    dashed: true,
                    points: np,
                });
            }
            let references = cmp
                .references
                .first()
                .map(|r| vec![Reference { name: "prior only (ε → 0)".into(), y: r.prior_risk }])
                .unwrap_or_default();
            let mut plot = LinePlot {
                x_log: true,
                y_log: true,
                x_integer: true,
                series,
                references,
                x_ticks: trials.iter().map(|&k| k as f64).collect(),
                ..LinePlot::new(format!("Bayes risk vs K, ε = {e}"), "K (trials)", risk_label)
            };
            plot.keep_best(MAX_CURVES, "risk.csv");
            out.push(("plots", format!("risk_vs_trials_eps{}", tag(e)), PlotKind::Line(Box::new(plot))));
        }
    }
    for c in &cmp.curves {
        let mut plot = LinePlot {
            y_log: true,
            series: c
                .series
                .iter()
                .map(|s| Series {
                    name: legend(s.method, !s.privacy.is_pure()),
                    color: method_color(s.method),
                    dashed: !s.privacy.is_pure(),
                    points: c.thetas.iter().copied().zip(s.risk.iter().copied()).collect(),
                })
                .collect(),
            shade: (!cmp.prior_shape.is_empty())
                .then(|| Shade { name: "prior density of θ (scaled)".into(), points: cmp.prior_shape.clone() }),
            ..LinePlot::new(format!("risk at θ, ε = {}, K = {}", c.eps, c.trials), "θ", curve_label)
        };
        plot.keep_best(MAX_CURVES, "data/mse_theta.csv");
        out.push(("mse_theta", format!("mse_theta_eps{}_K{}", tag(c.eps), c.trials), PlotKind::Line(Box::new(plot))));
    }
    for h in &cmp.heatmaps {
        out.push(("heatmaps", format!("heatmap_ubapp_eps{}_K{}", tag(h.eps), h.trials), PlotKind::Heatmap(h)));
    }
    out
}

/// What each of a comparison's plots shows, in words, by "folder/stem" (the index's captions).
pub(crate) fn comparison_captions(cmp: &Comparison) -> Vec<(String, String)> {
    let (risk_label, _) = labels(cmp.loss);
    comparison_plots(cmp)
        .into_iter()
        .map(|(folder, stem, kind)| {
            let caption = match (&kind, folder) {
                (PlotKind::Heatmap(h), _) => format!(
                    "The UBaPP mechanism at ε = {}{}: the probability of each release (vertical) given each \
                     observation y (horizontal); the colour is √P, so that small probabilities stay visible.",
                    h.eps,
                    if h.trials > 0 { format!(", K = {}", h.trials) } else { String::new() }
                ),
                (PlotKind::Line(plot), "mse_theta") => format!(
                    "{}: each method's risk when the true parameter is θ (log scale), the prior's density shaded \
                     behind; the Bayes risk is this curve averaged over the prior.",
                    capitalised(&plot.title)
                ),
                (PlotKind::Line(plot), _) => format!(
                    "{}: every method's {risk_label} (log scale, lower is better); dashed lines are (ε, δ) methods \
                     and the grey references are the limits ε → 0 (prior only) and ε → ∞ (no privacy).",
                    capitalised(&plot.title)
                ),
            };
            let caption = match &kind {
                PlotKind::Line(plot) => match &plot.note {
                    Some(note) => format!("{caption} Shown: {note}."),
                    None => caption,
                },
                PlotKind::Heatmap(_) => caption,
            };
            (format!("{folder}/{stem}"), caption)
        })
        .collect()
}

fn capitalised(s: &str) -> String {
    let mut c = s.chars();
    c.next().map_or(String::new(), |f| f.to_uppercase().chain(c).collect())
}

/// A plot to draw: lines or a mechanism's heat map.
pub(crate) enum PlotKind<'a> {
    Line(Box<LinePlot>),
    Heatmap(&'a Heatmap),
}

/// All plots of a comparison, each in its sub-folder of `dir`; returns the paths relative to `dir`.
pub(crate) fn write_all(dir: &Path, cmp: &Comparison) -> Result<Vec<String>> {
    let mut files = Vec::new();
    for (folder, stem, kind) in comparison_plots(cmp) {
        let sub = dir.join(folder);
        std::fs::create_dir_all(&sub).map_err(super::io_error(&sub))?;
        let written = match kind {
            PlotKind::Line(plot) => write_line_plot(&sub, &stem, &plot, Formats::BOTH)?,
            PlotKind::Heatmap(h) => write_heatmap(&sub, &stem, h, Formats::BOTH)?,
        };
        files.extend(written.into_iter().map(|f| format!("{folder}/{f}")));
    }
    Ok(files)
}
