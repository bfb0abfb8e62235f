//! `plan --curve DIR`: the optimal risk against ε as CSV and a plot, with the reference risks and
//! the target (when one was given).

use std::path::Path;

use super::plot::{write_line_plot, Formats, LinePlot, Reference, Series};
use super::Result;
use crate::analysis::CurvePoint;
use crate::output::{write_atomic, write_dir_atomic};
use crate::solve::ReferenceRisks;

/// What a risk-vs-ε curve shows.
#[derive(Debug, Clone)]
pub struct RiskCurve<'a> {
    /// The model's name (the plot's title).
    pub model: &'a str,
    /// The points.
    pub points: &'a [CurvePoint],
    /// Prior-only and non-private risks.
    pub references: Option<ReferenceRisks>,
    /// The target risk and the ε `plan` found for it.
    pub target: Option<(f64, f64)>,
    /// Squared loss: the CSV adds rmse.
    pub squared: bool,
}

/// The curve as CSV text: eps, bayes_risk, rmse (squared loss), prior_risk, non_private_risk.
pub fn curve_csv(c: &RiskCurve<'_>) -> String {
    let mut s = String::from("eps,bayes_risk,rmse,prior_risk,non_private_risk\n");
    let r = |f: fn(&ReferenceRisks) -> f64| c.references.as_ref().map_or(String::new(), |x| format!("{:.10e}", f(x)));
    for p in c.points {
        let rmse = if c.squared { format!("{:.10e}", p.bayes_risk.max(0.0).sqrt()) } else { String::new() };
        s.push_str(&format!(
            "{},{:.10e},{rmse},{},{}\n",
            p.eps,
            p.bayes_risk,
            r(|x| x.prior_risk),
            r(|x| x.non_private_risk)
        ));
    }
    s
}

/// Write `risk_vs_eps.csv`, `.png` and `.svg` into `dir` (the same rule as a report: a new,
/// empty or earlier-ubapp directory, replaced whole). Returns the file names.
pub fn write_risk_curve(dir: &Path, flag: &str, c: &RiskCurve<'_>) -> Result<Vec<String>> {
    let mut references = Vec::new();
    if let Some(r) = &c.references {
        references.push(Reference { name: "prior only (ε → 0)".into(), y: r.prior_risk });
        references.push(Reference { name: "non-private (ε → ∞)".into(), y: r.non_private_risk });
    }
    let mut series = vec![Series {
        name: "ubapp (optimal)".into(),
        color: 0,
        dashed: false,
        points: c.points.iter().map(|p| (p.eps, p.bayes_risk)).collect(),
    }];
    if let Some((target, eps)) = c.target {
        let (lo, hi) = c.points.iter().fold((eps, eps), |(a, b), p| (a.min(p.eps), b.max(p.eps)));
        series.push(Series {
            name: format!("target {target:.3e}"),
            color: 4,
            dashed: true,
            points: vec![(lo, target), (hi, target)],
        });
        series.push(Series {
            name: format!("plan: ε = {eps:.4}"),
            color: 4,
            dashed: false,
            points: vec![(eps, target)],
        });
    }
    let plot = LinePlot {
        x_log: true,
        y_log: true,
        series,
        references,
        x_ticks: c.points.iter().map(|p| p.eps).collect(),
        ..LinePlot::new(format!("{}: optimal Bayes risk vs ε", c.model), "ε", "Bayes risk")
    };
    let mut files = Vec::new();
    write_dir_atomic::<super::ReportError>(dir, flag, &mut |tmp| {
        files = vec!["risk_vs_eps.csv".to_string()];
        write_atomic(&tmp.join("risk_vs_eps.csv"), curve_csv(c).as_bytes())?;
        files.extend(write_line_plot(tmp, "risk_vs_eps", &plot, Formats::BOTH)?);
        Ok(())
    })?;
    Ok(files)
}
