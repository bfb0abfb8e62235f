//! `ubapp verify FILE [--json]`: re-derive the certificate of a mechanism file from its weights
//! (certified ε, and for δ > 0 the certified δ).

use std::path::PathBuf;

use ubapp::Result;

use super::trust::TrustArgs;

/// Flags of `verify`.
#[derive(clap::Args)]
pub struct Args {
    /// Mechanism file written by `ubapp solve --out`.
    file: PathBuf,
    /// Print the result as JSON.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    trust: TrustArgs,
}

/// Run the command: exit 0 with the certificate, or an input error (exit 2) with one sentence.
pub fn run(args: Args) -> Result<()> {
    let Args { file, json, trust } = args;
    let file = file.as_path();
    let (m, checked) = super::trust::load(file, &trust)?;
    if json {
        let mut v = m.verified_json();
        let o = v.as_object_mut().expect("an object");
        o.insert("file".into(), file.display().to_string().into());
        o.insert("checked_against".into(), checked.json().into());
        outln!("{}", serde_json::to_string_pretty(&v).expect("JSON values serialise"));
    } else {
        let claim = if m.delta() > 0.0 {
            format!("(ε, δ)-DP with certified δ = {} ≤ delta = {} at eps = {}", m.certified_delta(), m.delta(), m.eps())
        } else {
            format!("certified ε = {} ≤ eps = {}", m.certified_eps(), m.eps())
        };
        let form = m.form_words();
        outln!(
            "{}: OK, {claim} (model {}, |Y| = {}, |Θ̃| = {}, {form}, Bayes risk {:.10e})",
            file.display(),
            ubapp::guard::text::sanitize(m.model().name(), ubapp::guard::text::QUOTE_CHARS),
            m.n_observations(),
            m.n_outputs(),
            m.bayes_risk()
        );
        if let Some(c) = m.constraints() {
            outln!("{}", constraints_sentence(c));
        }
        outln!("model fingerprint {}", m.fingerprint());
        outln!("{}", checked.sentence());
    }
    Ok(())
}

/// What the weights carry of the model's `[constraints]`, as checked on load.
fn constraints_sentence(c: &ubapp::mechanism::ConstraintCertificate) -> String {
    let mut s = format!("constraints: {} (inequalities checked exactly on the integer weights", c.names.label());
    if let Some(b) = c.max_bias {
        s += &format!("; |E[θ̃ | y] − estimate| ≤ {b:.3e}");
    }
    if let Some(b) = c.max_fixed_point_error {
        s += &format!("; |(P z)_k − z_k| ≤ {b:.3e}");
    }
    s + ")"
}
