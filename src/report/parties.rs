//! The party comparison's files: `risk.csv` (the same columns as every comparison: `parties`,
//! `risk_method` and the standard errors among them), `notes.txt` (which methods apply and why
//! not), and two plots: Bayes risk against the number of parties M at fixed records in all, and
//! against ε at each M.

use std::path::Path;

use super::comparison_plots::{risk_series, MAX_CURVES};
use super::plot::{write_line_plot, Formats, LinePlot, Series};
use super::Result;
use crate::compare::parties::PartyComparison;
use crate::compare::{rows_csv, Method};
use crate::model::Model;
use crate::output::{write_atomic, write_dir_atomic};

/// Write `risk.csv`, `notes.txt`, the plots of `cmp` and `index.html` (the model in words, the
/// best method per M and ε, the notes, the plots with captions, every row ranked) into `dir`,
/// whole: `dir` must not exist, be empty or hold an earlier output of ubapp (replaced whole; see
/// [`check_report_dir`](super::check_report_dir)). Returns the files written.
pub fn write_party_comparison(dir: &Path, cmp: &PartyComparison, model: &Model) -> Result<Vec<String>> {
    let mut files = Vec::new();
    write_dir_atomic::<super::ReportError>(dir, crate::guard::Parameter::Out.spelled(), &mut |tmp| {
        files = fill_party_comparison(tmp, cmp, model)?;
        Ok(())
    })?;
    Ok(files)
}

/// The files of [`write_party_comparison`], into the (temporary) directory `dir`.
fn fill_party_comparison(dir: &Path, cmp: &PartyComparison, model: &Model) -> Result<Vec<String>> {
    let mut files = vec!["risk.csv".to_string(), "notes.txt".to_string()];
    write_atomic(&dir.join("risk.csv"), rows_csv(&cmp.rows).as_bytes())?;
    let notes: String = cmp.notes.iter().map(|n| format!("{n}\n")).collect();
    write_atomic(&dir.join("notes.txt"), notes.as_bytes())?;
    let mut eps: Vec<f64> = cmp.rows.iter().map(|r| r.eps).collect();
    eps.sort_by(f64::total_cmp);
    eps.dedup();
    let mut parties: Vec<u64> = cmp.rows.iter().filter_map(|r| r.parties).collect();
    parties.sort_unstable();
    parties.dedup();
    let total = cmp.rows.iter().find(|r| r.method == Method::Ubapp).map(|r| r.trials);
    if parties.len() > 1 {
        for &e in &eps {
            let mut series = risk_series(&cmp.rows, &|r| (r.eps == e).then_some(r.parties? as f64));
            // The one-curator optimum does not depend on M: a flat reference line.
            if let Some(c) = cmp.rows.iter().find(|r| r.method == Method::Ubapp && r.eps == e) {
                series.insert(
                    0,
                    Series {
                        name: "ubapp (one curator, on the output grid)".into(),
                        color: 0,
                        dashed: false,
                        points: parties.iter().map(|&m| (m as f64, c.bayes_risk)).collect(),
                    },
                );
            }
            let records = total.map_or(String::new(), |t| format!(", {t} records in all"));
            let mut plot = LinePlot {
                x_log: true,
                y_log: true,
                x_integer: true,
                series,
                x_ticks: parties.iter().map(|&m| m as f64).collect(),
                ..LinePlot::new(format!("Bayes risk vs parties M, ε = {e}{records}"), "M (parties)", "Bayes risk")
            };
            plot.keep_best(MAX_CURVES, "risk.csv");
            files.extend(write_line_plot(dir, &format!("risk_vs_parties_eps{e}"), &plot, Formats::BOTH)?);
        }
    }
    if eps.len() > 1 && parties.is_empty() {
        // One data holder: every method against ε on one plot.
        let series = risk_series(&cmp.rows, &|r| Some(r.eps));
        let mut plot = LinePlot {
            x_log: true,
            y_log: true,
            series,
            x_ticks: eps.clone(),
            ..LinePlot::new("Bayes risk vs ε, one data holder".to_string(), "ε", "Bayes risk")
        };
        plot.keep_best(MAX_CURVES, "risk.csv");
        files.extend(write_line_plot(dir, "risk_vs_eps", &plot, Formats::BOTH)?);
    }
    if eps.len() > 1 {
        for &m in &parties {
            let series = risk_series(&cmp.rows, &|r| (r.parties.is_none_or(|p| p == m)).then_some(r.eps));
            let mut plot = LinePlot {
                x_log: true,
                y_log: true,
                series,
                x_ticks: eps.clone(),
                ..LinePlot::new(format!("Bayes risk vs ε, M = {m} parties"), "ε (per party)", "Bayes risk")
            };
            plot.keep_best(MAX_CURVES, "risk.csv");
            files.extend(write_line_plot(dir, &format!("risk_vs_eps_M{m}"), &plot, Formats::BOTH)?);
        }
    }
    let index = super::html::party_index(cmp, &files, model);
    write_atomic(&dir.join("index.html"), index.as_bytes())?;
    files.push("index.html".to_string());
    Ok(files)
}
