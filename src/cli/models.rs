//! `ubapp models [DIR]`: list the model files in a directory with their one-line descriptions.

use std::path::Path;

use ubapp::model::Model;
use ubapp::{Error, Result};

/// Run the command: one line per `*.toml` file (sorted by name); a file that fails to validate is
/// listed with its error and makes the command exit 2 after listing the rest.
pub fn run(dir: &Path) -> Result<()> {
    let entries = std::fs::read_dir(dir)
        .map_err(|e| Error::argument(dir.display().to_string(), format!("is not a readable directory ({e})")))?;
    let mut files: Vec<_> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    if files.is_empty() {
        return Err(Error::argument(dir.display().to_string(), "has no model files (*.toml)"));
    }
    let mut bad = 0;
    for f in &files {
        let file = f.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        match Model::load(f) {
            Ok(m) => {
                let obs = m.family().observation_count();
                outln!(
                    "{file:<34} {:<12} |Θ| = {:<5} |Y| = {:<5} |Θ̃| = {:<5} {}",
                    m.family().name(),
                    if m.exact().is_some() { "exact".to_string() } else { m.theta().len().to_string() },
                    obs,
                    m.outputs().len(),
                    ubapp::guard::text::sanitize(&m.spec().description, 200)
                );
            }
            Err(e) => {
                bad += 1;
                outln!("{file:<34} INVALID: {e}");
            }
        }
    }
    if bad > 0 {
        return Err(Error::argument(
            dir.display().to_string(),
            format!("holds {bad} invalid model files of {} (see above)", files.len()),
        ));
    }
    Ok(())
}
