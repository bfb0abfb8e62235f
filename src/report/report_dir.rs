//! A report's directory, written atomically: its figures, certified artifacts, the baselines'
//! table and the two renderings of [`Report`].

use std::path::Path;

use super::document::Report;
use super::render;
use super::Result;
use crate::output::OutputError;
use crate::output::{write_atomic, write_dir_atomic};

impl Report {
    /// Write the report into `dir`: `report.html` (self-contained: styles inline, plots as inline
    /// SVG), `report.md`, `plots/*.svg`, the artifacts (`artifacts/*.json`) and `risk.csv` of the
    /// baselines. `dir` must not exist, be empty, or be an earlier output of ubapp (replaced
    /// whole); the directory is written next to it and renamed into place, so a failure leaves no
    /// partial report. `flag` names the option in errors.
    pub fn write(&self, dir: &Path, flag: &str) -> Result<()> {
        write_dir_atomic(dir, flag, &mut |tmp| {
            let io = |p: &Path| {
                let p = p.to_path_buf();
                move |source| super::ReportError::from(OutputError::Io { path: p, source })
            };
            for sub in ["plots", "artifacts"] {
                std::fs::create_dir_all(tmp.join(sub)).map_err(io(&tmp.join(sub)))?;
            }
            for f in &self.figures {
                write_atomic(&tmp.join(&f.file), f.svg.as_bytes())?;
            }
            for (file, a) in &self.artifacts {
                a.save(&tmp.join(file))?;
            }
            if let Some(cmp) = &self.comparison {
                write_atomic(&tmp.join("risk.csv"), crate::compare::rows_csv(&cmp.rows).as_bytes())?;
            }
            if let Some(cmp) = &self.parties {
                write_atomic(&tmp.join("risk.csv"), crate::compare::rows_csv(&cmp.rows).as_bytes())?;
            }
            write_atomic(&tmp.join("report.html"), render::html(self).as_bytes())?;
            write_atomic(&tmp.join("report.md"), render::markdown(self).as_bytes())?;
            Ok(())
        })
    }
}
