//! Solve a three-category multinomial model at one ε and draw the mechanism over the simplex.
//!
//! ```sh
//! cargo run --release --example vote_share_heatmap -- models/vote-share-3way-small.toml 1.0 vote-share.svg
//! cargo run --release --example vote_share_heatmap -- models/vote-share-3way.toml 2.0 vote-share-3way.svg highs
//! ```

use std::path::PathBuf;

use ubapp::model::Model;
use ubapp::report::{default_panels, mechanism_heatmap_svg};
use ubapp::solve::{solve_model, SolverChoice};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let model_path = PathBuf::from(args.first().map_or("models/vote-share-3way-small.toml", String::as_str));
    let eps: f64 = args.get(1).map_or(Ok(1.0), |s| s.parse())?;
    let out = PathBuf::from(args.get(2).map_or("vote-share.svg", String::as_str));
    let solver: SolverChoice = args.get(3).map_or("auto", String::as_str).parse()?;
    let model = Model::load(&model_path)?;
    let s = &solve_model(&model, Some(&[eps]), solver)?[0];
    let obs = model.family().observations();
    let title = format!("{} at ε = {eps}: Bayes risk {:.4e} ({})", model.name(), s.bayes_risk, s.status);
    let svg = mechanism_heatmap_svg(model.outputs(), &obs, &s.p, &default_panels(&obs), &title)?;
    std::fs::write(&out, svg.as_bytes())?;
    println!("{title}; wrote {}", out.display());
    Ok(())
}
