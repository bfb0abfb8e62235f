//! `ubapp models [DIR]`: list the model files in a directory with their one-line descriptions.

use std::path::{Path, PathBuf};

use ubapp::model::Model;
use ubapp::{Error, Result};

/// The models bundled with this build (the source repository's `models/`), listed when the
/// default directory is not there (`ubapp` run outside a clone).
const BUNDLED: &[(&str, &str)] = &[
    ("bernoulli-approx-dp-k30.toml", include_str!("../../models/bernoulli-approx-dp-k30.toml")),
    ("bernoulli-k100-fine-output.toml", include_str!("../../models/bernoulli-k100-fine-output.toml")),
    ("bernoulli-k100-paper-grid.toml", include_str!("../../models/bernoulli-k100-paper-grid.toml")),
    ("bernoulli-k100.toml", include_str!("../../models/bernoulli-k100.toml")),
    ("bernoulli-minimax-k30.toml", include_str!("../../models/bernoulli-minimax-k30.toml")),
    ("click-through-exact.toml", include_str!("../../models/click-through-exact.toml")),
    ("click-through-robust.toml", include_str!("../../models/click-through-robust.toml")),
    ("click-through.toml", include_str!("../../models/click-through.toml")),
    ("count-unbiased-k10.toml", include_str!("../../models/count-unbiased-k10.toml")),
    ("hospitals-5-parties.toml", include_str!("../../models/hospitals-5-parties.toml")),
    ("prevalence-asymmetric-loss.toml", include_str!("../../models/prevalence-asymmetric-loss.toml")),
    ("prevalence-imperfect-test.toml", include_str!("../../models/prevalence-imperfect-test.toml")),
    ("rare-event-beta.toml", include_str!("../../models/rare-event-beta.toml")),
    ("rare-events-poisson-cap3.toml", include_str!("../../models/rare-events-poisson-cap3.toml")),
    ("vote-share-3way-small.toml", include_str!("../../models/vote-share-3way-small.toml")),
    ("vote-share-3way.toml", include_str!("../../models/vote-share-3way.toml")),
];

/// Flags of `models`.
#[derive(clap::Args)]
pub struct Args {
    /// Directory of model files (default: ./models, else the models bundled with ubapp).
    dir: Option<PathBuf>,
}

/// Run the command on the directory given, else on `./models`.
pub fn run(a: Args) -> Result<()> {
    let named = a.dir.is_some();
    list(&a.dir.unwrap_or_else(|| PathBuf::from("models")), named)
}

/// One line per `*.toml` file (sorted by name); a file that fails to validate is
/// listed with its error and makes the command exit 2 after listing the rest. Without a `models`
/// directory here (and none named), the models bundled with this build are listed instead.
fn list(dir: &Path, named: bool) -> Result<()> {
    if !named && !dir.exists() {
        return list_bundled(dir);
    }
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

/// The bundled models by name and description (their text: no model file is read).
fn list_bundled(dir: &Path) -> Result<()> {
    outln!(
        "no {} directory here; the models bundled with ubapp {} (the source repository's models/):",
        dir.display(),
        env!("CARGO_PKG_VERSION")
    );
    for (file, text) in BUNDLED {
        let description = text
            .parse::<toml::Table>()
            .ok()
            .and_then(|t| t.get("description").and_then(|d| d.as_str()).map(str::to_string))
            .unwrap_or_default();
        outln!("{file:<34} {description}");
    }
    outln!("(run `ubapp models DIR` on a directory of model files; a model's text: the repository's models/FILE)");
    Ok(())
}
