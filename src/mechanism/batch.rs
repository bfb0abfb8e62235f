//! Repeated releases and what they spend: n independent draws of an ε-DP mechanism from the same
//! data are (n·ε)-DP by basic composition (and (n·ε, n·δ)-DP for an (ε, δ) mechanism).

use rand::Rng;
use serde::Serialize;

use super::Mechanism;

/// Draws for one observation and the privacy they spend together.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Batch {
    /// The output indices drawn, in order.
    pub indices: Vec<usize>,
    /// n·certified_eps: the ε of releasing all of them (basic composition).
    pub eps_spent: f64,
    /// n·certified_delta (0 for a pure-ε mechanism).
    pub delta_spent: f64,
}

impl Mechanism {
    /// The (ε, δ) that `n` releases from the same data spend by basic composition:
    /// (n·certified_eps, n·certified_delta).
    pub fn composed(&self, n: u64) -> (f64, f64) {
        composed(n, self.certified_eps(), self.certified_delta())
    }

    /// `n` independent draws for observation index `i`, with the privacy they spend together.
    pub fn sample_spending<R: Rng + ?Sized>(&self, i: usize, n: usize, rng: &mut R) -> Batch {
        let (eps_spent, delta_spent) = self.composed(n as u64);
        Batch { indices: self.sample_batch(i, n, rng), eps_spent, delta_spent }
    }

    /// The index of the released value `value` (its coordinates) in Θ̃: an exact match, else the
    /// nearest output within 1e-9 of the grid's scale (values printed by `ubapp sample` round-trip
    /// exactly); `None` if no output is that close.
    pub fn output_index(&self, value: &[f64]) -> Option<usize> {
        match self.match_output(value) {
            OutputMatch::Exact(k) => Some(k),
            _ => None,
        }
    }

    /// How a typed release value matches the output grid Θ̃ (distances in the largest
    /// coordinate difference): the output it is (to 1e-9 of the grid's scale), the output it
    /// rounds to (closer to it than half the distance from it to any other output: a value typed
    /// with fewer digits than `sample` prints), or only the nearest output, as a hint.
    pub fn match_output(&self, value: &[f64]) -> OutputMatch {
        let out = self.model().outputs();
        if out.dim() != value.len() || out.is_empty() {
            return OutputMatch::WrongDimension { expected: out.dim() };
        }
        let dist = |a: &[f64], b: &[f64]| a.iter().zip(b).map(|(x, y)| (x - y).abs()).fold(0.0, f64::max);
        let point = |k: usize| out.point(k).to_vec();
        let scale = out.points().iter().fold(1.0f64, |m, v| m.max(v.abs()));
        let (k, d) = (0..out.len())
            .map(|k| (k, dist(&point(k), value)))
            .min_by(|a, b| a.1.total_cmp(&b.1))
            .expect("the grid is not empty");
        if d <= 1e-9 * scale {
            return OutputMatch::Exact(k);
        }
        let step = (0..out.len()).filter(|&j| j != k).map(|j| dist(&point(j), &point(k))).fold(f64::INFINITY, f64::min);
        if d < step / 2.0 {
            OutputMatch::Rounded(k)
        } else {
            OutputMatch::Outside { nearest: k }
        }
    }
}

/// How a typed release value matches a mechanism's output grid ([`Mechanism::match_output`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputMatch {
    /// The value is output `k`.
    Exact(usize),
    /// The value rounds to output `k`: it is within half a grid step of it.
    Rounded(usize),
    /// The value is no output's; `nearest` is the closest one.
    Outside {
        /// The nearest output's index.
        nearest: usize,
    },
    /// The value has the wrong number of coordinates.
    WrongDimension {
        /// The outputs' dimension.
        expected: usize,
    },
}

/// n·ε and n·δ by basic composition, rounded up where the float product falls below the exact one
/// (a privacy claim never rounds in its own favour; `mul_add` gives the product's rounding error
/// exactly, n being exact as a double).
pub(crate) fn composed(n: u64, eps: f64, delta: f64) -> (f64, f64) {
    let times = |x: f64| {
        let p = n as f64 * x;
        if (n as f64).mul_add(x, -p) > 0.0 {
            crate::certify::exact::next_up(p)
        } else {
            p
        }
    };
    (times(eps), times(delta))
}
