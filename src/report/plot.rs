//! Plots of a comparison: risk vs ε (log–log) per K, risk vs K per ε, risk(θ) curves, and heat maps
//! of the UBaPP mechanism P. Each is written as PNG (bitmap backend) and SVG.

use std::path::Path;
use std::sync::Once;

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::FontStyle;

use super::ReportError;
use crate::compare::{Comparison, Heatmap, Method, Row};
use crate::eval::{PrivacyKind, ScalarLoss};
use crate::output::write_atomic;
use crate::Result;

const FONT: &str = "sans-serif";

fn init_font() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // The bytes are a valid TrueType font shipped by the `dejavu` crate.
        plotters::style::register_font(FONT, FontStyle::Normal, dejavu::sans::regular())
            .unwrap_or_else(|_| panic!("the embedded DejaVu Sans font parses"));
    });
}

/// One line of a line plot.
#[derive(Debug, Clone)]
pub struct Series {
    /// Legend entry.
    pub name: String,
    /// Palette index.
    pub color: usize,
    /// Dashed (used for (ε, δ) methods).
    pub dashed: bool,
    /// (x, y) points; non-positive values are dropped on log axes.
    pub points: Vec<(f64, f64)>,
}

/// A line plot.
#[derive(Debug, Clone)]
pub struct LinePlot {
    /// Title.
    pub title: String,
    /// x-axis label.
    pub x_label: String,
    /// y-axis label.
    pub y_label: String,
    /// Logarithmic x axis.
    pub x_log: bool,
    /// Logarithmic y axis.
    pub y_log: bool,
    /// The lines.
    pub series: Vec<Series>,
}

/// What a plotting backend said when drawing failed (the file is attached by [`render`]).
struct DrawFailed(String);

impl<E: std::error::Error + Send + Sync> From<DrawingAreaErrorKind<E>> for DrawFailed {
    fn from(e: DrawingAreaErrorKind<E>) -> Self {
        DrawFailed(e.to_string())
    }
}

/// A colour per method (fixed order, so a method keeps its colour across plots).
fn palette(i: usize) -> RGBColor {
    const P: [RGBColor; 19] = [
        RGBColor(0, 0, 0),
        RGBColor(31, 119, 180),
        RGBColor(255, 127, 14),
        RGBColor(44, 160, 44),
        RGBColor(214, 39, 40),
        RGBColor(148, 103, 189),
        RGBColor(140, 86, 75),
        RGBColor(227, 119, 194),
        RGBColor(127, 127, 127),
        RGBColor(188, 189, 34),
        RGBColor(23, 190, 207),
        RGBColor(0, 90, 50),
        RGBColor(120, 0, 120),
        RGBColor(200, 150, 0),
        RGBColor(0, 0, 160),
        RGBColor(230, 25, 75),
        RGBColor(0, 130, 200),
        RGBColor(128, 128, 0),
        RGBColor(170, 110, 40),
    ];
    P[i % P.len()]
}

fn tf(log: bool, v: f64) -> Option<f64> {
    if log {
        (v > 0.0 && v.is_finite()).then(|| v.log10())
    } else {
        v.is_finite().then_some(v)
    }
}

fn fmt_axis(log: bool, v: f64) -> String {
    if log {
        let p = 10f64.powf(v);
        if (1.0..1e5).contains(&p) {
            if p >= 10.0 {
                format!("{p:.0}")
            } else {
                format!("{p:.1}")
            }
        } else if (v - v.round()).abs() < 1e-9 {
            format!("1e{}", v.round() as i64)
        } else {
            format!("{p:.1e}")
        }
    } else if v.abs() >= 1000.0 || (v != 0.0 && v.abs() < 0.01) {
        format!("{v:.1e}")
    } else {
        format!("{}", (v * 1000.0).round() / 1000.0)
    }
}

fn draw_lines<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    plot: &LinePlot,
) -> std::result::Result<(), DrawFailed> {
    root.fill(&WHITE)?;
    let pts: Vec<Vec<(f64, f64)>> = plot
        .series
        .iter()
        .map(|s| s.points.iter().filter_map(|&(x, y)| Some((tf(plot.x_log, x)?, tf(plot.y_log, y)?))).collect())
        .collect();
    let all: Vec<(f64, f64)> = pts.iter().flatten().copied().collect();
    if all.is_empty() {
        return Ok(());
    }
    let (mut x0, mut x1) = all.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |a, p| (a.0.min(p.0), a.1.max(p.0)));
    let (mut y0, mut y1) = all.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |a, p| (a.0.min(p.1), a.1.max(p.1)));
    if x1 - x0 < 1e-12 {
        x0 -= 0.5;
        x1 += 0.5;
    }
    let pad = ((y1 - y0) * 0.05).max(1e-3);
    y0 -= pad;
    y1 += pad;
    let mut chart = ChartBuilder::on(root)
        .caption(&plot.title, (FONT, 22))
        .margin(12)
        .x_label_area_size(45)
        .y_label_area_size(75)
        .build_cartesian_2d(x0..x1, y0..y1)?;
    let (xl, yl) = (plot.x_log, plot.y_log);
    chart
        .configure_mesh()
        .x_desc(plot.x_label.as_str())
        .y_desc(plot.y_label.as_str())
        .label_style((FONT, 14))
        .axis_desc_style((FONT, 16))
        .x_label_formatter(&move |v| fmt_axis(xl, *v))
        .y_label_formatter(&move |v| fmt_axis(yl, *v))
        .light_line_style(RGBColor(235, 235, 235))
        .draw()?;
    for (s, p) in plot.series.iter().zip(pts) {
        let c = palette(s.color);
        // UBaPP (colour 0) is drawn wider so that methods matching it (e.g. the geometric mechanism)
        // leave it visible around them.
        let width = if s.color == 0 { 5 } else { 2 };
        let style = ShapeStyle { color: c.to_rgba(), filled: false, stroke_width: width };
        let anno = if s.dashed {
            chart.draw_series(DashedLineSeries::new(p.clone(), 6, 4, style))?
        } else {
            chart.draw_series(LineSeries::new(p.clone(), style))?
        };
        anno.label(s.name.as_str()).legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], style));
        if p.len() <= 12 {
            chart.draw_series(p.iter().map(|&q| Circle::new(q, 3, c.filled())))?;
        }
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.85))
        .border_style(RGBColor(180, 180, 180))
        .label_font((FONT, 13))
        .draw()?;
    Ok(root.present()?)
}

/// A sequential colour map (dark blue → yellow), t ∈ [0, 1].
fn colormap(t: f64) -> RGBColor {
    let stops = [
        (0.0, (255.0, 255.0, 255.0)),
        (0.02, (220.0, 230.0, 245.0)),
        (0.3, (70.0, 130.0, 190.0)),
        (0.7, (30.0, 40.0, 120.0)),
        (1.0, (0.0, 0.0, 0.0)),
    ];
    let t = t.clamp(0.0, 1.0);
    for w in stops.windows(2) {
        let ((a, ca), (b, cb)) = (w[0], w[1]);
        if t <= b {
            let f = if b > a { (t - a) / (b - a) } else { 0.0 };
            let mix = |x: f64, y: f64| (x + f * (y - x)).round() as u8;
            return RGBColor(mix(ca.0, cb.0), mix(ca.1, cb.1), mix(ca.2, cb.2));
        }
    }
    RGBColor(0, 0, 0)
}

fn draw_heatmap<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, h: &Heatmap) -> std::result::Result<(), DrawFailed> {
    root.fill(&WHITE)?;
    let (main, bar) = root.split_horizontally(root.dim_in_pixel().0.saturating_sub(90));
    let n_obs = h.p.ncols();
    let mut order: Vec<usize> = (0..h.outputs.len()).collect();
    order.sort_by(|&a, &b| h.outputs[a].total_cmp(&h.outputs[b]));
    let (lo, hi) = (h.outputs[order[0]], h.outputs[order[order.len() - 1]]);
    // Each output k occupies the band between the midpoints to its neighbours.
    let edges: Vec<(f64, f64)> = order
        .iter()
        .enumerate()
        .map(|(r, _)| {
            let below = if r == 0 {
                lo - 0.5 * (h.outputs[order[1.min(order.len() - 1)]] - lo)
            } else {
                0.5 * (h.outputs[order[r - 1]] + h.outputs[order[r]])
            };
            let above = if r + 1 == order.len() {
                hi + 0.5 * (hi - h.outputs[order[r.saturating_sub(1)]])
            } else {
                0.5 * (h.outputs[order[r]] + h.outputs[order[r + 1]])
            };
            (below, above)
        })
        .collect();
    let (ylo, yhi) = (edges[0].0, edges[edges.len() - 1].1);
    let (ylo, yhi) = if yhi > ylo { (ylo, yhi) } else { (ylo - 0.5, ylo + 0.5) };
    let mut chart = ChartBuilder::on(&main)
        .caption(format!("UBaPP mechanism: Pr(release | y), ε = {}, K = {}", h.eps, h.trials), (FONT, 20))
        .margin(12)
        .x_label_area_size(45)
        .y_label_area_size(60)
        .build_cartesian_2d(-0.5f64..(n_obs as f64 - 0.5), ylo..yhi)?;
    chart
        .configure_mesh()
        .disable_mesh()
        .x_desc("observation y (successes)")
        .y_desc("released value")
        .x_label_formatter(&|v| format!("{}", v.round() as i64))
        .label_style((FONT, 14))
        .axis_desc_style((FONT, 16))
        .draw()?;
    let cells = (0..n_obs).flat_map(|i| {
        order.iter().zip(&edges).map(move |(&k, &(a, b))| {
            let v = h.p[[k, i]].max(0.0).sqrt(); // √P: small probabilities stay visible
            Rectangle::new([(i as f64 - 0.5, a), (i as f64 + 0.5, b)], colormap(v).filled())
        })
    });
    chart.draw_series(cells)?;
    // Colour bar.
    let mut cb = ChartBuilder::on(&bar)
        .margin_top(40)
        .margin_bottom(57)
        .margin_right(10)
        .y_label_area_size(40)
        .build_cartesian_2d(0f64..1f64, 0f64..1f64)?;
    cb.configure_mesh()
        .disable_mesh()
        .disable_x_axis()
        .y_labels(6)
        .y_label_formatter(&|v| format!("{:.2}", v * v)) // the bar is drawn in √P
        .label_style((FONT, 12))
        .draw()?;
    cb.draw_series((0..100).map(|i| {
        let t = i as f64 / 100.0;
        Rectangle::new([(0.0, t), (1.0, t + 0.01)], colormap(t + 0.005).filled())
    }))?;
    Ok(root.present()?)
}

const SIZE: (u32, u32) = (900, 600);

/// Which files to write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Formats {
    /// Write `stem.png`.
    pub png: bool,
    /// Write `stem.svg`.
    pub svg: bool,
}

impl Formats {
    /// PNG and SVG.
    pub const BOTH: Formats = Formats { png: true, svg: true };
    /// PNG only (e.g. figures committed to the repository).
    pub const PNG: Formats = Formats { png: true, svg: false };
}

/// Draws a plot on a PNG bitmap.
type DrawPng<'a> = dyn for<'b> Fn(&DrawingArea<BitMapBackend<'b>, Shift>) -> std::result::Result<(), DrawFailed> + 'a;
/// Draws a plot on an SVG document.
type DrawSvg<'a> = dyn for<'b> Fn(&DrawingArea<SVGBackend<'b>, Shift>) -> std::result::Result<(), DrawFailed> + 'a;

/// Render with `draw` to `dir/stem.png` and `dir/stem.svg`, each atomically.
fn render(dir: &Path, stem: &str, formats: Formats, draw: &DrawPng, draw_svg: &DrawSvg) -> Result<Vec<String>> {
    init_font();
    let fail = |what: &str, m: DrawFailed| ReportError::Draw { file: dir.join(what), message: m.0 };
    let mut files = Vec::new();
    // PNG: draw into a pixel buffer, encode, write atomically.
    let png_name = format!("{stem}.png");
    if formats.png {
        let mut buf = vec![255u8; (SIZE.0 * SIZE.1 * 3) as usize];
        {
            let root = BitMapBackend::with_buffer(&mut buf, SIZE).into_drawing_area();
            draw(&root).map_err(|m| fail(&png_name, m))?;
        }
        let mut png = Vec::new();
        encode_png(&buf, SIZE, &mut png).map_err(|source| ReportError::Encode { file: dir.join(&png_name), source })?;
        write_atomic(&dir.join(&png_name), &png)?;
        files.push(png_name);
    }
    let svg_name = format!("{stem}.svg");
    if formats.svg {
        let mut svg = String::new();
        {
            let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
            draw_svg(&root).map_err(|m| fail(&svg_name, m))?;
        }
        write_atomic(&dir.join(&svg_name), svg.as_bytes())?;
        files.push(svg_name);
    }
    Ok(files)
}

/// Encode an RGB buffer as PNG.
fn encode_png(rgb: &[u8], size: (u32, u32), out: &mut Vec<u8>) -> std::result::Result<(), png::EncodingError> {
    let mut enc = png::Encoder::new(out, size.0, size.1);
    enc.set_color(png::ColorType::Rgb);
    enc.set_depth(png::BitDepth::Eight);
    enc.set_compression(png::Compression::Best);
    let mut w = enc.write_header()?;
    w.write_image_data(rgb)
}

/// Write a line plot as `stem.png` and/or `stem.svg` in `dir`.
pub fn write_line_plot(dir: &Path, stem: &str, plot: &LinePlot, formats: Formats) -> Result<Vec<String>> {
    render(dir, stem, formats, &|r| draw_lines(r, plot), &|r| draw_lines(r, plot))
}

/// Write a heat map of a UBaPP mechanism as `stem.png` and/or `stem.svg` in `dir`.
pub fn write_heatmap(dir: &Path, stem: &str, h: &Heatmap, formats: Formats) -> Result<Vec<String>> {
    render(dir, stem, formats, &|r| draw_heatmap(r, h), &|r| draw_heatmap(r, h))
}

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

/// Number formatting for file names: 0.001 → "0.001", 5 → "5".
fn tag(v: f64) -> String {
    format!("{v}")
}

/// All plots of a comparison; returns the file names.
pub(crate) fn write_all(dir: &Path, cmp: &Comparison) -> Result<Vec<String>> {
    let mut files = Vec::new();
    let (risk_label, curve_label) = match cmp.loss {
        ScalarLoss::Squared => ("Bayes risk (MSE)", "MSE(θ)"),
        ScalarLoss::Absolute => ("Bayes risk", "expected loss at θ"),
    };
    let mut trials: Vec<u64> = cmp.rows.iter().map(|r| r.trials).collect();
    trials.sort_unstable();
    trials.dedup();
    let mut eps: Vec<f64> = cmp.rows.iter().map(|r| r.eps).collect();
    eps.sort_by(f64::total_cmp);
    eps.dedup();
    let series_of = |x: &dyn Fn(&Row) -> Option<f64>| risk_series(&cmp.rows, x);
    if eps.len() > 1 {
        for &k in &trials {
            let plot = LinePlot {
                title: format!("Bayes risk vs ε, K = {k}"),
                x_label: "ε".into(),
                y_label: risk_label.into(),
                x_log: true,
                y_log: true,
                series: series_of(&|r| (r.trials == k).then_some(r.eps)),
            };
            files.extend(write_line_plot(dir, &format!("risk_vs_eps_K{k}"), &plot, Formats::BOTH)?);
        }
    }
    if trials.len() > 1 {
        for &e in &eps {
            let plot = LinePlot {
                title: format!("Bayes risk vs K, ε = {e}"),
                x_label: "K (trials)".into(),
                y_label: risk_label.into(),
                x_log: true,
                y_log: true,
                series: series_of(&|r| (r.eps == e).then_some(r.trials as f64)),
            };
            files.extend(write_line_plot(dir, &format!("risk_vs_trials_eps{}", tag(e)), &plot, Formats::BOTH)?);
        }
    }
    for c in &cmp.curves {
        let plot = LinePlot {
            title: format!("risk at θ, ε = {}, K = {}", c.eps, c.trials),
            x_label: "θ".into(),
            y_label: curve_label.into(),
            x_log: false,
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
        };
        files.extend(write_line_plot(
            dir,
            &format!("mse_theta_eps{}_K{}", tag(c.eps), c.trials),
            &plot,
            Formats::BOTH,
        )?);
    }
    for h in &cmp.heatmaps {
        files.extend(write_heatmap(dir, &format!("heatmap_ubapp_eps{}_K{}", tag(h.eps), h.trials), h, Formats::BOTH)?);
    }
    Ok(files)
}
