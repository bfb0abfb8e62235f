//! Drawing: line plots (log or linear axes, decade and integer ticks, a legend panel, reference
//! lines, coinciding curves, prior shading) and heat maps of a mechanism P, each written as PNG
//! (bitmap backend) and SVG or returned as SVG text. Which plots a comparison has, and their
//! captions, is [`super::comparison_plots`].

use std::path::Path;
use std::sync::Once;

use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::FontStyle;

use super::ReportError;
use super::Result;
use crate::compare::Heatmap;
use crate::output::write_atomic;

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

/// A horizontal reference line (e.g. the prior-only risk, ε → 0, and the non-private risk, ε → ∞).
#[derive(Debug, Clone)]
pub struct Reference {
    /// Legend entry.
    pub name: String,
    /// Its height.
    pub y: f64,
}

/// A density shaded under the curves, scaled to the lower third of the data area (e.g. the prior
/// of θ under MSE(θ) curves: where the Bayes risk puts its weight).
#[derive(Debug, Clone)]
pub struct Shade {
    /// Legend entry.
    pub name: String,
    /// (x, density) points; only the shape matters (scaled to the plot).
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
    /// Horizontal reference lines.
    pub references: Vec<Reference>,
    /// A density shaded under the curves.
    pub shade: Option<Shade>,
    /// Integer ticks on x (e.g. numbers of trials K).
    pub x_integer: bool,
    /// The x values to label, when every one should be (e.g. each ε of a sweep); at most
    /// 12 are, else the axis's own round ticks.
    pub x_ticks: Vec<f64>,
    /// A line under the legend (e.g. which curves were left out, and where they are).
    pub note: Option<String>,
}

impl LinePlot {
    /// A plot of `series` with no reference lines, no shading and real-valued x ticks.
    pub fn new(title: impl Into<String>, x_label: impl Into<String>, y_label: impl Into<String>) -> LinePlot {
        LinePlot {
            title: title.into(),
            x_label: x_label.into(),
            y_label: y_label.into(),
            x_log: false,
            y_log: false,
            series: Vec::new(),
            references: Vec::new(),
            shade: None,
            x_integer: false,
            x_ticks: Vec::new(),
            note: None,
        }
    }

    /// Keep at most `max` curves: every UBaPP curve (palette colour 0) and reference curve, then
    /// the others with the least mean log-risk (the lowest curves); the note says how many of how
    /// many are shown and that `table` holds them all. Nothing changes when `max` curves or
    /// fewer are drawn.
    pub fn keep_best(&mut self, max: usize, table: &str) {
        if self.series.len() <= max {
            return;
        }
        let kept_always = |s: &Series| s.color == 0 || s.color == REFERENCE_COLOR;
        let level = |s: &Series| {
            let logs: Vec<f64> = s.points.iter().filter(|p| p.1 > 0.0 && p.1.is_finite()).map(|p| p.1.ln()).collect();
            if logs.is_empty() {
                f64::INFINITY
            } else {
                logs.iter().sum::<f64>() / logs.len() as f64
            }
        };
        let always = self.series.iter().filter(|s| kept_always(s)).count();
        let mut others: Vec<(usize, f64)> =
            self.series.iter().enumerate().filter(|(_, s)| !kept_always(s)).map(|(i, s)| (i, level(s))).collect();
        let total_others = others.len();
        others.sort_by(|a, b| a.1.total_cmp(&b.1));
        let room = max.saturating_sub(always);
        let chosen: Vec<usize> = others.iter().take(room).map(|&(i, _)| i).collect();
        let mut index = 0;
        self.series.retain(|s| {
            let keep = kept_always(s) || chosen.contains(&index);
            index += 1;
            keep
        });
        self.note =
            Some(format!("{room} of the {total_others} other methods shown (the lowest on average); {table} has all"));
    }
}

/// The most x values labelled one by one ([`LinePlot::x_ticks`]).
pub(crate) const MAX_LABELLED_TICKS: usize = 12;

/// Relative difference below which two curves count as coinciding (drawn once in the legend as
/// "a = b").
pub const COINCIDE_RELATIVE: f64 = 1e-3;

/// For each series, the index of the first earlier series it coincides with (same x values, every
/// y within [`COINCIDE_RELATIVE`]), if any.
pub fn coinciding(series: &[Series]) -> Vec<Option<usize>> {
    let same = |a: &Series, b: &Series| {
        a.points.len() == b.points.len()
            && !a.points.is_empty()
            && a.points.iter().zip(&b.points).all(|(p, q)| {
                let scale = p.1.abs().max(q.1.abs());
                p.0 == q.0 && (p.1 - q.1).abs() <= COINCIDE_RELATIVE * scale
            })
    };
    let mut out: Vec<Option<usize>> = vec![None; series.len()];
    for i in 0..series.len() {
        out[i] = (0..i).find(|&j| out[j].is_none() && same(&series[j], &series[i]));
    }
    out
}

/// What a plotting backend said when drawing failed (the file is attached by [`render`]).
struct DrawFailed(String);

impl<E: std::error::Error + Send + Sync> From<DrawingAreaErrorKind<E>> for DrawFailed {
    fn from(e: DrawingAreaErrorKind<E>) -> Self {
        DrawFailed(e.to_string())
    }
}

/// A colour per method (fixed order, so a method keeps its colour across plots).
/// The palette index of a reference curve (grey, thin, long dashes), e.g. the non-private risk
/// against K.
pub const REFERENCE_COLOR: usize = usize::MAX;

const REFERENCE_GREY: RGBColor = RGBColor(110, 110, 110);

fn palette(i: usize) -> RGBColor {
    if i == REFERENCE_COLOR {
        return REFERENCE_GREY;
    }
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
        RGBColor(0, 190, 120),
        RGBColor(0, 0, 160),
        RGBColor(230, 25, 75),
        RGBColor(0, 130, 200),
        RGBColor(0, 160, 160),
        RGBColor(240, 130, 0),
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

/// True when a log axis spanning [lo, hi] (log10 values) labels its ticks in scientific form
/// throughout (`1e-3`, `5e-4`, `1e5`): beyond 0.01 to 1000 plain numbers would mix notations.
fn scientific(log: bool, lo: f64, hi: f64) -> bool {
    log && (lo < -2.0 - 1e-9 || hi > 3.0 + 1e-9)
}

fn fmt_axis(log: bool, sci: bool, v: f64) -> String {
    let v = if log { 10f64.powf(v) } else { v };
    if v == 0.0 {
        return "0".into();
    }
    let a = v.abs();
    if !sci && (1e-3..1e5).contains(&a) {
        // Up to 4 significant digits, trailing zeros dropped.
        let digits = (3 - a.log10().floor() as i32).clamp(0, 6) as usize;
        let s = format!("{v:.digits$}");
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        }
    } else {
        let e = a.log10().floor() as i32;
        let m = v / 10f64.powi(e);
        if (m.abs() - 1.0).abs() < 1e-9 {
            format!("1e{e}")
        } else if (m - m.round()).abs() < 1e-6 {
            format!("{}e{e}", m.round())
        } else {
            // Up to four significant digits: ticks 1.65e-3 and 1.75e-3 never both read 1.7e-3.
            let m = format!("{m:.3}");
            format!("{}e{e}", m.trim_end_matches('0').trim_end_matches('.'))
        }
    }
}

/// Tick positions on an axis spanning [lo, hi] (log10 values on a log axis): decades on a log axis
/// (with 2× and 5× when fewer than three decades show), integers on an integer axis, else 1-2-5 steps.
fn ticks(lo: f64, hi: f64, log: bool, integer: bool) -> Vec<f64> {
    let inside = |v: &f64| *v >= lo - 1e-9 && *v <= hi + 1e-9;
    if log {
        let decades: Vec<f64> = ((lo - 1e-9).ceil() as i64..=(hi + 1e-9).floor() as i64).map(|k| k as f64).collect();
        if decades.len() >= 3 {
            let step = decades.len().div_ceil(8);
            return decades.into_iter().step_by(step).collect();
        }
        let mut t: Vec<f64> = (lo.floor() as i64..=hi.ceil() as i64)
            .flat_map(|k| [1.0, 2.0, 5.0].map(|m| k as f64 + f64::log10(m)))
            .filter(inside)
            .collect();
        if t.len() < 3 {
            // Under a decade: every mantissa 1…9, then round values of the axis itself.
            t = (lo.floor() as i64..=hi.ceil() as i64)
                .flat_map(|k| (1..10).map(move |m| k as f64 + f64::log10(m as f64)))
                .filter(inside)
                .collect();
        }
        if t.len() < 2 {
            t = linear_ticks(10f64.powf(lo), 10f64.powf(hi)).into_iter().filter(|v| *v > 0.0).map(f64::log10).collect();
        }
        return t;
    }
    let mut t = linear_ticks(lo, hi);
    if integer {
        t.retain(|v| (v - v.round()).abs() < 1e-9);
        if t.len() < 2 {
            t = (lo.ceil() as i64..=hi.floor() as i64).map(|k| k as f64).collect();
        }
    }
    t
}

/// About 6 ticks at multiples of 1, 2 or 5 × 10^k.
fn linear_ticks(lo: f64, hi: f64) -> Vec<f64> {
    let span = (hi - lo).max(1e-12);
    let raw = span / 6.0;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0].iter().map(|m| m * mag).find(|s| *s >= raw).unwrap_or(10.0 * mag);
    let first = (lo / step).ceil() as i64;
    let last = (hi / step).floor() as i64;
    (first..=last).map(|i| i as f64 * step).collect()
}

/// A linear axis on [lo, hi] whose ticks are the given values (decades, integers, 1-2-5 steps).
struct Ticked {
    lo: f64,
    hi: f64,
    ticks: Vec<f64>,
}

impl Ranged for Ticked {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, v: &f64, limit: (i32, i32)) -> i32 {
        let f = (v - self.lo) / (self.hi - self.lo);
        limit.0 + (f * (limit.1 - limit.0) as f64 + 1e-3).floor() as i32
    }

    fn key_points<Hint: KeyPointHint>(&self, hint: Hint) -> Vec<f64> {
        if hint.weight().allow_light_points() {
            Vec::new()
        } else {
            self.ticks.clone()
        }
    }

    fn range(&self) -> std::ops::Range<f64> {
        self.lo..self.hi
    }
}

/// Width of the legend panel right of the data area.
const LEGEND_WIDTH: u32 = 270;

/// One legend entry: how to draw its sample, and its text.
enum Key {
    /// A line sample; `dash` = (dash, gap) in pixels for a dashed line.
    Line {
        color: RGBColor,
        width: u32,
        dash: Option<(u32, u32)>,
        /// Curves drawn dashed over this one because they coincide with it (their colours).
        over: Vec<RGBColor>,
    },
    Box(RGBAColor),
    /// Text alone (a note under the entries).
    Note,
}

/// The dash patterns a curve may take (`None`: solid), in the order a repeated colour takes them.
const DASHES: [Option<(u32, u32)>; 6] = [None, Some((6, 4)), Some((2, 3)), Some((12, 4)), Some((3, 8)), Some((16, 2))];

/// Each curve's dash pattern and marker (0 circle, 1 triangle, 2 cross): its own pattern ((ε, δ)
/// methods dashed, reference curves in long dashes, the others solid) unless a curve before it
/// has the same colour and pattern — then the next pattern free for that colour, and the next
/// marker — so that no two curves of a plot look alike, however many share a colour.
fn styles(series: &[Series]) -> Vec<(Option<(u32, u32)>, usize)> {
    let mut taken: Vec<(RGBColor, Option<(u32, u32)>)> = Vec::new();
    series
        .iter()
        .map(|s| {
            let c = palette(s.color);
            let own = if s.color == REFERENCE_COLOR {
                Some((10, 5))
            } else if s.dashed {
                Some((6, 4))
            } else {
                None
            };
            let same_colour = taken.iter().filter(|(t, _)| *t == c).count();
            let dash = std::iter::once(own)
                .chain(DASHES)
                .find(|d| !taken.contains(&(c, *d)))
                .unwrap_or(DASHES[same_colour % DASHES.len()]);
            taken.push((c, dash));
            (dash, same_colour)
        })
        .collect()
}

fn draw_lines<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    plot: &LinePlot,
) -> std::result::Result<(), DrawFailed> {
    root.fill(&WHITE)?;
    let (main, legend_area) = root.split_horizontally(root.dim_in_pixel().0.saturating_sub(LEGEND_WIDTH));
    let pts: Vec<Vec<(f64, f64)>> = plot
        .series
        .iter()
        .map(|s| s.points.iter().filter_map(|&(x, y)| Some((tf(plot.x_log, x)?, tf(plot.y_log, y)?))).collect())
        .collect();
    let refs: Vec<(usize, f64)> =
        plot.references.iter().enumerate().filter_map(|(i, r)| Some((i, tf(plot.y_log, r.y)?))).collect();
    let all: Vec<(f64, f64)> = pts.iter().flatten().copied().collect();
    if all.is_empty() {
        return Ok(());
    }
    let (mut x0, mut x1) = all.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |a, p| (a.0.min(p.0), a.1.max(p.0)));
    // The y range is the curves'; a reference line joins it only when it lies near them, so that a
    // far prior-only risk never squashes the methods into one band (it is marked at the edge).
    let (mut y0, mut y1) =
        all.iter().map(|p| p.1).fold((f64::INFINITY, f64::NEG_INFINITY), |a, y| (a.0.min(y), a.1.max(y)));
    let near = (y1 - y0).max(if plot.y_log { 0.5 } else { 0.0 });
    let mut off_scale: Vec<(usize, bool)> = Vec::new();
    for &(i, y) in &refs {
        if y > y1 + near {
            off_scale.push((i, true));
        } else if y < y0 - near {
            off_scale.push((i, false));
        } else {
            y0 = y0.min(y);
            y1 = y1.max(y);
        }
    }
    if x1 - x0 < 1e-12 {
        x0 -= 0.5;
        x1 += 0.5;
    }
    let pad = ((y1 - y0) * 0.05).max(1e-3);
    y0 -= pad;
    y1 += pad;
    if !off_scale.is_empty() {
        // Room for the edge's label.
        y1 += (y1 - y0) * 0.06;
    }
    let x_ticks = match plot.x_ticks.iter().filter_map(|&v| tf(plot.x_log, v)).collect::<Vec<f64>>() {
        t if t.len() >= 2 && t.len() <= MAX_LABELLED_TICKS => t,
        _ => ticks(x0, x1, plot.x_log, plot.x_integer),
    };
    let (xl, yl) = (plot.x_log, plot.y_log);
    let (xs, ys) = (scientific(xl, x0, x1), scientific(yl, y0, y1));
    let mut chart = ChartBuilder::on(&main)
        .caption(&plot.title, (FONT, 22))
        .margin(12)
        .x_label_area_size(45)
        .y_label_area_size(80)
        .build_cartesian_2d(
            Ticked { lo: x0, hi: x1, ticks: x_ticks },
            Ticked { lo: y0, hi: y1, ticks: ticks(y0, y1, yl, false) },
        )?;
    chart
        .configure_mesh()
        .x_desc(plot.x_label.as_str())
        .y_desc(plot.y_label.as_str())
        .label_style((FONT, 14))
        .axis_desc_style((FONT, 16))
        .x_label_formatter(&move |v| fmt_axis(xl, xs, *v))
        .y_label_formatter(&move |v| fmt_axis(yl, ys, *v))
        .bold_line_style(RGBColor(225, 225, 225))
        .draw()?;
    let mut keys: Vec<(Key, String)> = Vec::new();
    if let Some(shade) = &plot.shade {
        let top = shade.points.iter().map(|p| p.1).fold(0.0, f64::max);
        if top > 0.0 {
            let fill = RGBColor(120, 170, 220).mix(0.25);
            let h = (y1 - y0) / 3.0;
            let area: Vec<(f64, f64)> =
                shade.points.iter().filter_map(|&(x, d)| Some((tf(xl, x)?, y0 + h * (d / top).max(0.0)))).collect();
            let mut polygon = area;
            if let (Some(&(first, _)), Some(&(last, _))) = (polygon.first(), polygon.last()) {
                polygon.push((last, y0));
                polygon.push((first, y0));
            }
            chart.draw_series(std::iter::once(Polygon::new(polygon, fill.filled())))?;
            keys.push((Key::Box(fill), shade.name.clone()));
        }
    }
    for &(i, y) in &refs {
        let style = ShapeStyle { color: REFERENCE_GREY.to_rgba(), filled: false, stroke_width: 1 };
        // Prior-only dotted, non-private dash-dot-like (longer dashes): told apart by the pattern.
        let (dash, gap) = if i == 0 { (2, 4) } else { (10, 5) };
        let mut name = plot.references[i].name.clone();
        match off_scale.iter().find(|(j, _)| *j == i) {
            // Far outside the curves: drawn along the edge it lies beyond, with its value.
            Some(&(_, above)) => {
                let edge = if above { y1 } else { y0 };
                let value = if yl { 10f64.powf(y) } else { y };
                let arrow = if above { "↑" } else { "↓" };
                let text = format!("{arrow} {name} = {value:.3e} ({} the plot)", if above { "above" } else { "below" });
                chart.draw_series(DashedLineSeries::new(vec![(x0, edge), (x1, edge)], dash, gap, style))?;
                let font = (FONT, 13).into_font().color(&REFERENCE_GREY);
                let at = if above { y1 - (y1 - y0) * 0.015 } else { y0 + (y1 - y0) * 0.045 };
                chart.draw_series(std::iter::once(Text::new(text, (x0 + (x1 - x0) * 0.01, at), font)))?;
                name = format!("{name}: {value:.3e}, {} the plot", if above { "above" } else { "below" });
            }
            None => {
                chart.draw_series(DashedLineSeries::new(vec![(x0, y), (x1, y)], dash, gap, style))?;
            }
        }
        keys.push((Key::Line { color: REFERENCE_GREY, width: 1, dash: Some((dash, gap)), over: Vec::new() }, name));
    }
    let same = coinciding(&plot.series);
    // UBaPP (colour 0) is drawn wider so that methods matching it (e.g. the geometric mechanism)
    // leave it visible around them.
    let width_of = |s: &Series| match s.color {
        0 => 5,
        REFERENCE_COLOR => 1,
        _ => 2,
    };
    let looks = styles(&plot.series);
    let mut key_of: Vec<Option<usize>> = vec![None; plot.series.len()];
    for (idx, s) in plot.series.iter().enumerate() {
        let c = palette(s.color);
        match same[idx] {
            // A coinciding curve joins the legend entry of the one it matches, its colour too.
            Some(first) => {
                if let Some(k) = key_of[first] {
                    keys[k].1 = format!("{} = {}", keys[k].1, s.name);
                    if let Key::Line { over, .. } = &mut keys[k].0 {
                        over.push(c);
                    }
                }
            }
            None => {
                key_of[idx] = Some(keys.len());
                let key = Key::Line { color: c, width: width_of(s), dash: looks[idx].0, over: Vec::new() };
                keys.push((key, s.name.clone()));
            }
        }
    }
    // The paper's main baseline (LBaPP, colour 1) is drawn last, over the curves it nearly
    // coincides with (the Laplace count at small ε); the legend keeps the table's order.
    let mut order: Vec<usize> = (0..plot.series.len()).collect();
    order.sort_by_key(|&i| plot.series[i].color == 1);
    for idx in order {
        let (s, p) = (&plot.series[idx], &pts[idx]);
        let c = palette(s.color);
        let style = ShapeStyle { color: c.to_rgba(), filled: false, stroke_width: width_of(s) };
        // A coinciding curve is dashed over the one it matches, so that both show.
        let dash = looks[idx].0.or(same[idx].map(|_| (6, 4)));
        match dash {
            Some((d, g)) => chart.draw_series(DashedLineSeries::new(p.clone(), d, g, style))?,
            None => chart.draw_series(LineSeries::new(p.clone(), style))?,
        };
        if p.len() <= 12 {
            match looks[idx].1 % 3 {
                0 => chart.draw_series(p.iter().map(|&q| Circle::new(q, 3, c.filled())))?,
                1 => chart.draw_series(p.iter().map(|&q| TriangleMarker::new(q, 5, c.filled())))?,
                _ => chart.draw_series(p.iter().map(|&q| Cross::new(q, 4, ShapeStyle::from(c).stroke_width(2))))?,
            };
        }
    }
    if let Some(note) = &plot.note {
        keys.push((Key::Note, note.clone()));
    }
    draw_legend(&legend_area, &keys)?;
    Ok(root.present()?)
}

/// The legend in its own panel, right of the data area (it never hides a curve).
fn draw_legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    keys: &[(Key, String)],
) -> std::result::Result<(), DrawFailed> {
    let font = (FONT, 13).into_font().color(&BLACK);
    let mut y = 50;
    for (key, text) in keys {
        // Long entries ("a = b = c") wrap at " = ", a note at its words.
        let mut lines: Vec<String> = vec![String::new()];
        let pieces: Vec<String> = match key {
            Key::Note => text.split(' ').map(str::to_string).collect(),
            _ => text
                .split(" = ")
                .enumerate()
                .map(|(i, p)| if i == 0 { p.to_string() } else { format!("= {p}") })
                .flat_map(|p| if p.chars().count() > 28 { p.split(' ').map(str::to_string).collect() } else { vec![p] })
                .collect(),
        };
        let (indent, chars) = if matches!(key, Key::Note) { (8, 36) } else { (46, 28) };
        for piece in pieces {
            let last = lines.last_mut().expect("one line");
            if !last.is_empty() && last.chars().count() + piece.chars().count() > chars {
                lines.push(piece);
            } else {
                if !last.is_empty() {
                    last.push(' ');
                }
                last.push_str(&piece);
            }
        }
        match key {
            Key::Line { color, width, dash, over } => {
                let dashed = |style: ShapeStyle, (dash, gap): (u32, u32)| -> std::result::Result<(), DrawFailed> {
                    let (dash, gap) = (dash as i32, gap as i32);
                    let mut x = 8;
                    while x < 38 {
                        area.draw(&PathElement::new(vec![(x, y), ((x + dash).min(38), y)], style))?;
                        x += dash + gap;
                    }
                    Ok(())
                };
                let style = ShapeStyle { color: color.to_rgba(), filled: false, stroke_width: *width };
                match *dash {
                    Some(d) => dashed(style, d)?,
                    None => area.draw(&PathElement::new(vec![(8, y), (38, y)], style))?,
                }
                // The coinciding curves, dashed over it as on the plot.
                for c in over {
                    dashed(ShapeStyle { color: c.to_rgba(), filled: false, stroke_width: 2 }, (6, 4))?;
                }
            }
            Key::Box(c) => {
                area.draw(&Rectangle::new([(8, y - 6), (38, y + 6)], c.filled()))?;
            }
            Key::Note => {}
        }
        for (li, line) in lines.iter().enumerate() {
            area.draw(&Text::new(line.clone(), (indent, y - 7 + 17 * li as i32), font.clone()))?;
        }
        y += 17 * lines.len() as i32 + 8;
    }
    Ok(())
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
    let (main, bar) = root.split_horizontally(root.dim_in_pixel().0.saturating_sub(130));
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
        .caption(
            if h.trials > 0 {
                format!("UBaPP mechanism: Pr(release | y), ε = {}, K = {}", h.eps, h.trials)
            } else {
                format!("UBaPP mechanism: Pr(release | y), ε = {}", h.eps)
            },
            (FONT, 20),
        )
        .margin(12)
        .x_label_area_size(45)
        .y_label_area_size(60)
        .build_cartesian_2d(-0.5f64..(n_obs as f64 - 0.5), ylo..yhi)?;
    chart
        .configure_mesh()
        .disable_mesh()
        .x_desc(if h.trials > 0 { "observation y (successes)" } else { "observation y" })
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
        .y_label_area_size(70)
        .build_cartesian_2d(0f64..1f64, 0f64..1f64)?;
    cb.configure_mesh()
        .disable_mesh()
        .disable_x_axis()
        .y_labels(6)
        .y_label_formatter(&|v| format!("{:.2}", v * v)) // the bar is drawn in √P
        .y_desc("Pr(release | y), colour ∝ √P")
        .label_style((FONT, 12))
        .axis_desc_style((FONT, 13))
        .draw()?;
    cb.draw_series((0..100).map(|i| {
        let t = i as f64 / 100.0;
        Rectangle::new([(0.0, t), (1.0, t + 0.01)], colormap(t + 0.005).filled())
    }))?;
    Ok(root.present()?)
}

const SIZE: (u32, u32) = (1100, 600);

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

/// A line plot as SVG text (for embedding in a page).
pub fn line_plot_svg(plot: &LinePlot) -> Result<String> {
    svg_string(&|r| draw_lines(r, plot))
}

/// A UBaPP mechanism's heat map as SVG text (for embedding in a page).
pub fn heatmap_svg(h: &Heatmap) -> Result<String> {
    svg_string(&|r| draw_heatmap(r, h))
}

fn svg_string(draw: &DrawSvg) -> Result<String> {
    init_font();
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        draw(&root).map_err(|m| ReportError::Draw { file: "inline.svg".into(), message: m.0 })?;
    }
    Ok(svg)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn series(name: &str, color: usize, points: Vec<(f64, f64)>) -> Series {
        Series { name: name.into(), color, dashed: false, points }
    }

    /// The labels of an axis: the tick values as text, from the log10 positions.
    fn labels(lo: f64, hi: f64) -> Vec<String> {
        let (l, h) = (lo.log10(), hi.log10());
        ticks(l, h, true, false).into_iter().map(|t| fmt_axis(true, scientific(true, l, h), t)).collect()
    }

    #[test]
    fn narrow_log_axes_tick_at_round_values() {
        // Under a factor of two: once 0.3981 and 0.2512 (10^-0.4, 10^-0.6).
        for (lo, hi) in [(0.24, 0.41), (0.13, 0.14), (0.45, 0.62), (1.2e-3, 1.9e-3), (0.2, 0.5)] {
            let l = labels(lo, hi);
            assert!(l.len() >= 2, "{lo}..{hi}: {l:?}");
            // Round: three significant digits at most (0.132 in steps of 0.002, never 0.3981).
            for t in &l {
                let mantissa = t.split('e').next().unwrap().replace('.', "");
                let digits = mantissa.trim_start_matches('0').trim_end_matches('0');
                assert!(digits.len() <= 3, "{lo}..{hi}: {t} in {l:?}");
            }
        }
        assert_eq!(labels(0.24, 0.41), ["0.3", "0.4"]);
        // In scientific form too, every label distinct.
        let sci = labels(1.58e-3, 1.83e-3);
        let mut distinct = sci.clone();
        distinct.dedup();
        assert_eq!(sci, distinct);
        assert!(sci.contains(&"1.65e-3".to_string()), "{sci:?}");
    }

    #[test]
    fn no_two_curves_look_alike_past_the_palette() {
        let many: Vec<Series> = (0..45).map(|i| series(&format!("m{i}"), i % 21, vec![(1.0, 1.0)])).collect();
        let looks = styles(&many);
        for i in 0..many.len() {
            for j in 0..i {
                let same = palette(many[i].color) == palette(many[j].color) && looks[i].0 == looks[j].0;
                assert!(!same, "{i} and {j} look alike");
            }
        }
    }

    #[test]
    fn a_crowded_plot_keeps_ubapp_and_the_lowest_others_and_says_so() {
        let mut plot = LinePlot::new("t", "x", "y");
        plot.series.push(series("ubapp", 0, vec![(1.0, 5.0)]));
        for i in 1..=14 {
            plot.series.push(series(&format!("m{i}"), i, vec![(1.0, i as f64)]));
        }
        plot.keep_best(8, "risk.csv");
        let names: Vec<&str> = plot.series.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["ubapp", "m1", "m2", "m3", "m4", "m5", "m6", "m7"]);
        assert_eq!(
            plot.note.as_deref(),
            Some("7 of the 14 other methods shown (the lowest on average); risk.csv has all")
        );
    }

    #[test]
    fn every_eps_is_labelled_and_a_far_reference_sits_at_the_edge() {
        let eps = [1e-4, 1e-3, 1e-2, 0.1, 1.0, 5.0];
        let plot = LinePlot {
            x_log: true,
            y_log: true,
            series: vec![series("ubapp", 0, eps.iter().map(|&e| (e, 1e-3 * (1.0 + 1.0 / (1.0 + e)))).collect())],
            references: vec![
                Reference { name: "prior only (ε → 0)".into(), y: 8.335e-2 },
                Reference { name: "non-private (ε → ∞)".into(), y: 1.0e-3 },
            ],
            x_ticks: eps.to_vec(),
            ..LinePlot::new("t", "ε", "risk")
        };
        let svg = line_plot_svg(&plot).unwrap();
        for label in ["1e-4", "1e-3", "1e-2", "1e-1", "1e0", "5e0"] {
            assert!(svg.lines().any(|l| l.trim() == label), "no tick {label}");
        }
        assert!(svg.contains("↑ prior only (ε → 0) = 8.335e-2 (above the plot)"), "no edge label");
        // The near reference stays in place, unlabelled on the plot.
        assert!(!svg.contains("non-private (ε → ∞) = "), "the near reference moved");
    }
}
