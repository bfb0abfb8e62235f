//! Reproduce the figures of the UBaPP paper (Lakshminarayanan & Rojas, IFAC 2023) on its worked
//! example (K Bernoulli trials, uniform prior, squared loss, 100-point grid), with the baselines
//! of the literature beside it:
//!
//! - MSE vs ε at K = 100;
//! - MSE vs K at ε = 10⁻³ and at ε = 5;
//! - heat maps of the UBaPP mechanism at ε = 10⁻⁴, 10⁻¹, 5 (K = 100).
//!
//! `cargo run --release --example reproduce_paper [-- OUT_DIR]` (default `docs/figures`; `make paper`).
//! Writes PNGs and prints every number plotted (the same rows `ubapp compare` writes).

use std::path::PathBuf;

use ubapp::compare::{compare, rows_csv, BaselineOptions, CompareOptions, Method};
use ubapp::model::Model;
use ubapp::report::{reference_lines, risk_series, write_heatmap, write_line_plot, Formats, LinePlot};
use ubapp::solve::SolveOptions;

fn main() -> ubapp::Result<()> {
    let out = PathBuf::from(std::env::args().nth(1).unwrap_or_else(|| "docs/figures".into()));
    std::fs::create_dir_all(&out).map_err(|source| ubapp::Error::Io { path: out.clone(), source })?;
    let model = Model::load(&PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/models/bernoulli-k100.toml")))?;
    let methods = vec![
        Method::Ubapp,
        Method::Lbapp,
        Method::LbappClamped,
        Method::Geometric,
        Method::SmithSa,
        Method::Cssa,
        Method::LeiPh,
        Method::Cape,
    ];
    let base = CompareOptions {
        eps: vec![1e-4, 3e-4, 1e-3, 3e-3, 1e-2, 3e-2, 0.1, 0.3, 1.0, 2.0, 5.0],
        trials: vec![100],
        methods: methods.clone(),
        baseline: BaselineOptions::default(),
        solve: SolveOptions::default(),
        curve_points: 2,
    };
    let mut progress = |s: &str| eprintln!("{s}");

    // Figure 1: MSE vs ε at K = 100 (log–log).
    let by_eps = compare(&model, &base, &mut progress)?;
    print!("{}", rows_csv(&by_eps.rows));
    let plot = LinePlot {
        x_log: true,
        y_log: true,
        series: risk_series(&by_eps.rows, &|r| Some(r.eps)),
        references: reference_lines(&by_eps, 100),
        ..LinePlot::new("Bayes risk (MSE) vs ε, K = 100", "ε", "Bayes risk (MSE)")
    };
    write_line_plot(&out, "paper_mse_vs_eps_K100", &plot, Formats::PNG)?;

    // Figures 2–3: MSE vs K at ε = 1e-3 and ε = 5.
    for eps in [1e-3, 5.0] {
        let opts = CompareOptions { eps: vec![eps], trials: vec![10, 20, 50, 100, 200, 400], ..base.clone() };
        let by_k = compare(&model, &opts, &mut progress)?;
        print!("{}", rows_csv(&by_k.rows).lines().skip(1).map(|l| format!("{l}\n")).collect::<String>());
        let plot = LinePlot {
            x_log: true,
            y_log: true,
            x_integer: true,
            series: risk_series(&by_k.rows, &|r| Some(r.trials as f64)),
            ..LinePlot::new(format!("Bayes risk (MSE) vs K, ε = {eps}"), "K (trials)", "Bayes risk (MSE)")
        };
        write_line_plot(&out, &format!("paper_mse_vs_K_eps{eps}"), &plot, Formats::PNG)?;
    }

    // Figures 4–6: heat maps of P.
    let opts = CompareOptions { eps: vec![1e-4, 0.1, 5.0], methods: vec![Method::Ubapp], ..base.clone() };
    let maps = compare(&model, &opts, &mut progress)?;
    for h in &maps.heatmaps {
        write_heatmap(&out, &format!("paper_heatmap_eps{}", h.eps), h, Formats::PNG)?;
        // How far P is from a release independent of y (largest total-variation distance between
        // two columns) and from a deterministic one (smallest, over y, of the largest entry).
        let cols: Vec<Vec<f64>> = h.p.columns().into_iter().map(|c| c.to_vec()).collect();
        let mut tv: f64 = 0.0;
        for a in &cols {
            for b in &cols {
                tv = tv.max(0.5 * a.iter().zip(b).map(|(x, y)| (x - y).abs()).sum::<f64>());
            }
        }
        let min_top = cols.iter().map(|c| c.iter().copied().fold(0.0, f64::max)).fold(1.0, f64::min);
        let support: usize = cols.iter().map(|c| c.iter().filter(|&&v| v > 1e-6).count()).max().unwrap_or(0);
        eprintln!(
            "heat map ε = {}: max TV distance between columns {tv:.4}; min over y of max_k P[k, y] {min_top:.4}; \
             largest support {support} output(s)",
            h.eps
        );
    }
    eprintln!("figures written to {}", out.display());
    Ok(())
}
