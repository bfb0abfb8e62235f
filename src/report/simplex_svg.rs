//! A heat map of a mechanism over the 2-simplex as a hand-written SVG (no plotting dependency):
//! one ternary panel per chosen observation y, each output point θ̃_k drawn as a disc whose colour
//! is Pr(release θ̃_k | y), and a cross at the empirical shares y / K.

use std::fmt::Write as _;

use ndarray::Array2;

use super::ReportError;
use crate::model::Grid;

const PANEL: f64 = 240.0;
const MARGIN: f64 = 24.0;

/// Ternary coordinates of a point (a, b, c) of the simplex in a unit triangle with vertices
/// e1 = (0, 0), e2 = (1, 0), e3 = (½, √3/2); y grows downwards in SVG, so it is flipped.
fn ternary(p: &[f64]) -> (f64, f64) {
    let s = p[0] + p[1] + p[2];
    let (b, c) = (p[1] / s, p[2] / s);
    (b + c / 2.0, 1.0 - c * 3f64.sqrt() / 2.0)
}

/// White → dark blue for v ∈ [0, 1].
fn colour(v: f64) -> String {
    let v = v.clamp(0.0, 1.0);
    let lerp = |a: f64, b: f64| (a + (b - a) * v).round() as u8;
    format!("#{:02x}{:02x}{:02x}", lerp(255.0, 8.0), lerp(255.0, 48.0), lerp(255.0, 107.0))
}

/// The SVG text: `p` is |Θ̃| × |Y| (P[k, i]); `panels` are the observation indices to draw; the
/// colour scale of each panel runs from 0 to that column's largest probability.
pub fn mechanism_heatmap_svg(
    outputs: &Grid,
    observations: &Grid,
    p: &Array2<f64>,
    panels: &[usize],
    title: &str,
) -> Result<String, ReportError> {
    if outputs.dim() != 3 || observations.dim() != 3 {
        return Err(ReportError::NotSimplex {
            dim: if outputs.dim() != 3 { outputs.dim() } else { observations.dim() },
        });
    }
    if p.dim() != (outputs.len(), observations.len()) {
        return Err(ReportError::Shape { shape: p.dim(), outputs: outputs.len(), observations: observations.len() });
    }
    if let Some(&index) = panels.iter().find(|&&i| i >= observations.len()) {
        return Err(ReportError::PanelOutOfRange { index, observations: observations.len() });
    }
    let cols = panels.len().clamp(1, 3);
    let rows = panels.len().div_ceil(cols).max(1);
    let (w, h) = (cols as f64 * (PANEL + MARGIN) + MARGIN, rows as f64 * (PANEL + 2.0 * MARGIN) + 2.0 * MARGIN);
    // Disc radius ≈ half the lattice spacing (n ≈ R²/2 points for resolution R).
    let r = 0.5 * PANEL / (2.0 * outputs.len() as f64).sqrt();
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w:.0}" height="{h:.0}" viewBox="0 0 {w:.0} {h:.0}" font-family="sans-serif" font-size="11">"#
    );
    let _ = writeln!(s, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(s, r#"<text x="{MARGIN}" y="16" font-size="13">{}</text>"#, escape(title));
    for (n, &i) in panels.iter().enumerate() {
        let (ox, oy) =
            (MARGIN + (n % cols) as f64 * (PANEL + MARGIN), 2.0 * MARGIN + (n / cols) as f64 * (PANEL + 2.0 * MARGIN));
        let at = |pt: &[f64]| {
            let (x, y) = ternary(pt);
            (ox + x * PANEL, oy + (y - (1.0 - 3f64.sqrt() / 2.0)) * PANEL)
        };
        let y = observations.point(i).to_vec();
        let label: Vec<String> = y.iter().map(|v| format!("{v}")).collect();
        let _ = writeln!(s, r#"<g><text x="{ox:.1}" y="{:.1}">y = ({})</text>"#, oy - 6.0, label.join(", "));
        let corners = [at(&[1.0, 0.0, 0.0]), at(&[0.0, 1.0, 0.0]), at(&[0.0, 0.0, 1.0])];
        let _ = writeln!(
            s,
            r#"<polygon points="{:.1},{:.1} {:.1},{:.1} {:.1},{:.1}" fill="none" stroke="black"/>"#,
            corners[0].0, corners[0].1, corners[1].0, corners[1].1, corners[2].0, corners[2].1
        );
        let col = p.column(i);
        let top = col.iter().copied().fold(0.0, f64::max).max(f64::MIN_POSITIVE);
        for k in 0..outputs.len() {
            let (cx, cy) = at(outputs.point(k).as_slice().expect("grid rows are contiguous"));
            let _ = writeln!(
                s,
                r#"<circle cx="{cx:.1}" cy="{cy:.1}" r="{r:.1}" fill="{}"><title>θ̃ = {:?}: {:.4}</title></circle>"#,
                colour(col[k] / top),
                outputs.point(k).to_vec(),
                col[k]
            );
        }
        let (mx, my) = at(&y);
        let _ = writeln!(
            s,
            r#"<path d="M{:.1},{:.1} L{:.1},{:.1} M{:.1},{:.1} L{:.1},{:.1}" stroke="red" stroke-width="2"/>"#,
            mx - 5.0,
            my - 5.0,
            mx + 5.0,
            my + 5.0,
            mx - 5.0,
            my + 5.0,
            mx + 5.0,
            my - 5.0
        );
        let _ = writeln!(
            s,
            r#"<text x="{:.1}" y="{:.1}">1</text><text x="{:.1}" y="{:.1}">2</text><text x="{:.1}" y="{:.1}">3</text></g>"#,
            corners[0].0 - 10.0,
            corners[0].1 + 12.0,
            corners[1].0 + 3.0,
            corners[1].1 + 12.0,
            corners[2].0 - 3.0,
            corners[2].1 - 4.0
        );
    }
    let _ = writeln!(
        s,
        r#"<text x="{MARGIN}" y="{:.0}">disc colour: Pr(release θ̃ | y) relative to the column's largest (white 0 → blue max); red cross: y / K</text>"#,
        h - 8.0
    );
    s.push_str("</svg>\n");
    Ok(s)
}

fn escape(t: &str) -> String {
    super::html::escape(t)
}

/// Observation indices nearest to the corners, the centre and the edge midpoints of the simplex
/// (in that order, without repeats): a default choice of panels.
pub fn default_panels(observations: &Grid) -> Vec<usize> {
    let targets = [
        [1.0, 0.0, 0.0],
        [0.0, 1.0, 0.0],
        [0.0, 0.0, 1.0],
        [1.0 / 3.0, 1.0 / 3.0, 1.0 / 3.0],
        [0.5, 0.5, 0.0],
        [0.0, 0.5, 0.5],
    ];
    let mut out = Vec::new();
    for t in targets {
        let best = (0..observations.len())
            .min_by(|&a, &b| {
                let d = |i: usize| {
                    let p = observations.point(i);
                    let s = p.sum().max(f64::MIN_POSITIVE);
                    p.iter().zip(&t).map(|(x, y)| (x / s - y).powi(2)).sum::<f64>()
                };
                d(a).total_cmp(&d(b))
            })
            .expect("Y is not empty");
        if !out.contains(&best) {
            out.push(best);
        }
    }
    out
}
