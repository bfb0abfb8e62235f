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
        // Exactly half-way between two outputs (to round-off): neither is nearer, so neither is taken.
        if let Some(other) = (0..out.len()).find(|&j| j != k && dist(&point(j), value) - d <= 1e-9 * scale) {
            let (nearest, other) = if k < other { (k, other) } else { (other, k) };
            return OutputMatch::Halfway { nearest, other };
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
    /// The value lies half-way between two outputs (to round-off): refused, as neither is nearer.
    Halfway {
        /// The lower-indexed of the two outputs.
        nearest: usize,
        /// The other.
        other: usize,
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

impl Mechanism {
    /// Output `k` as people write it: coordinates in their shortest form, joined by commas.
    pub fn output_text(&self, k: usize) -> String {
        self.model().outputs().point(k).iter().map(|&v| crate::guard::text::number(v)).collect::<Vec<_>>().join(",")
    }

    /// What to tell the user about a typed release `typed` (given as `name`: a flag or a keyword)
    /// that matched as `m`: `Ok(None)` for an exact match, `Ok(Some(note))` for a value rounded to
    /// the nearest output, a [`ReleaseRefusal`] for a value outside the grid, half-way between two
    /// outputs, or of the wrong dimension. The command line and the bindings say the same words.
    pub fn release_words(
        &self,
        name: &str,
        typed: &str,
        m: OutputMatch,
    ) -> std::result::Result<Option<String>, ReleaseRefusal> {
        let typed = typed.to_string();
        match m {
            OutputMatch::Exact(_) => Ok(None),
            OutputMatch::Rounded(k) => Ok(Some(format!(
                "note: {name} {typed} taken as the output {} (the nearest; within half a grid step)",
                self.output_text(k)
            ))),
            OutputMatch::Halfway { nearest, other } => Err(ReleaseRefusal::Halfway {
                typed,
                nearest: self.output_text(nearest),
                other: self.output_text(other),
            }),
            OutputMatch::Outside { nearest } => {
                Err(ReleaseRefusal::Outside { typed, outputs: self.n_outputs(), nearest: self.output_text(nearest) })
            }
            OutputMatch::WrongDimension { expected } => {
                let got = typed.split(',').count();
                Err(ReleaseRefusal::WrongDimension { typed, got, expected })
            }
        }
    }
}

/// Why a typed release names no output of the mechanism (see [`Mechanism::release_words`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReleaseRefusal {
    /// It lies half-way between two outputs.
    #[error("{typed} lies half-way between the outputs {nearest} and {other}, so it names neither; give the value that was released")]
    Halfway {
        /// The release as typed.
        typed: String,
        /// One of the two outputs.
        nearest: String,
        /// The other.
        other: String,
    },
    /// It lies outside the output grid.
    #[error("{typed} is not an output of the mechanism (|Θ̃| = {outputs}); the nearest output is {nearest}")]
    Outside {
        /// The release as typed.
        typed: String,
        /// |Θ̃|.
        outputs: usize,
        /// The nearest output.
        nearest: String,
    },
    /// It has the wrong number of coordinates.
    #[error("{typed} has {got} coordinate(s); the mechanism's outputs have {expected}")]
    WrongDimension {
        /// The release as typed.
        typed: String,
        /// Its coordinates.
        got: usize,
        /// The outputs' coordinates.
        expected: usize,
    },
}
