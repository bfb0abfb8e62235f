//! Where a solve's time goes: the seconds of each phase of each ε (assembly, each backend's
//! iterations and, in the block interior point, its factorisations and the Schur complement, the
//! repricing, the polish, the certification, each fallback), recorded while the solve runs and
//! read by the caller afterwards (`solve --json`'s `phases`).
//!
//! A [`Timings`] recorder travels inside [`super::Progress`], so every part of a solve that
//! reports progress can time itself. Phases nest: a phase's own seconds exclude the phases timed
//! inside it, whose names are prefixed by their parent's (`block-ipm: polish`), so the phases of
//! one ε are disjoint and sum to its wall-clock time; what no phase claimed is `other`. Phases
//! are timed on the solving thread only (the parallel parts time themselves as one phase).

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use serde::Serialize;

/// One phase's wall-clock seconds.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PhaseTime {
    /// What ran, e.g. `assembly`, `block-ipm: Schur complement forming`, `block-ipm: polish`.
    pub phase: String,
    /// Its own seconds (those of the phases timed inside it excluded).
    pub seconds: f64,
}

/// Where one ε's time went.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PhaseTimes {
    /// The privacy level.
    pub eps: f64,
    /// Wall-clock seconds from the start of this ε's work (for the first ε, the shared assembly
    /// included) to its answer.
    pub seconds: f64,
    /// Disjoint phases in the order they ended; their seconds sum to `seconds` (the last,
    /// `other` — `chain solver` or `anytime route` on those routes, which are not broken down —
    /// holds what no phase claimed).
    pub phases: Vec<PhaseTime>,
    /// Threads the parallel parts may use (rayon's pool; the block interior point's workers are
    /// as many, at most one per output).
    pub threads: usize,
}

/// A recorder of phase times, cheap to clone (every clone records into the same place). Attach
/// one to a solve with [`super::Progress::with_timings`]; read it with [`Timings::finished`].
#[derive(Clone, Default)]
pub struct Timings(Arc<Mutex<Recorder>>);

#[derive(Default)]
struct Recorder {
    /// When the current ε's work began.
    began: Option<Instant>,
    /// The open phases, outermost first.
    stack: Vec<Frame>,
    /// The current ε's phases so far.
    phases: Vec<PhaseTime>,
    /// Every finished ε's.
    finished: Vec<PhaseTimes>,
}

struct Frame {
    name: String,
    start: Instant,
    /// Seconds claimed by the phases timed inside it.
    inner: f64,
}

impl Recorder {
    /// `name` under the open phase.
    fn full_name(&self, name: &str) -> String {
        match self.stack.last() {
            Some(frame) => format!("{}: {name}", frame.name),
            None => name.to_string(),
        }
    }

    fn add(&mut self, full: String, seconds: f64) {
        if let Some(frame) = self.stack.last_mut() {
            frame.inner += seconds;
        }
        match self.phases.iter_mut().find(|p| p.phase == full) {
            Some(p) => p.seconds += seconds,
            None => self.phases.push(PhaseTime { phase: full, seconds }),
        }
    }
}

impl Timings {
    /// A fresh recorder.
    pub fn new() -> Timings {
        Timings::default()
    }

    fn lock(&self) -> MutexGuard<'_, Recorder> {
        // A panic while recording loses at most a phase's time: keep recording.
        self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Where every ε solved so far went, in the order they were solved.
    pub fn finished(&self) -> Vec<PhaseTimes> {
        self.lock().finished.clone()
    }

    /// The work on a new ε begins now.
    pub(crate) fn begin_eps(&self) {
        let mut r = self.lock();
        r.began = Some(Instant::now());
        r.stack.clear();
        r.phases.clear();
    }

    /// The current ε (`eps`) is answered: its phases, with what none claimed as `rest`.
    pub(crate) fn finish_eps(&self, eps: f64, rest: &str) {
        let mut r = self.lock();
        let seconds = r.began.take().map_or(0.0, |t| t.elapsed().as_secs_f64());
        // Phases left open (an error unwound past them) end now.
        while !r.stack.is_empty() {
            close(&mut r);
        }
        // Phases under a millisecond are folded into the rest.
        let mut phases = std::mem::take(&mut r.phases);
        phases.retain(|p| p.seconds >= 1e-3);
        let claimed: f64 = phases.iter().map(|p| p.seconds).sum();
        if seconds > claimed {
            phases.push(PhaseTime { phase: rest.to_string(), seconds: seconds - claimed });
        }
        r.finished.push(PhaseTimes { eps, seconds, phases, threads: rayon::current_num_threads() });
    }

    /// Open a phase named `name` (under the open one); it ends when the returned guard drops.
    pub(crate) fn open(&self, name: &str) -> Phase {
        let mut r = self.lock();
        let name = r.full_name(name);
        r.stack.push(Frame { name, start: Instant::now(), inner: 0.0 });
        Phase { timings: Some(self.clone()), depth: r.stack.len() }
    }

    /// `seconds` measured by the caller for a phase named `name` under the open one.
    pub(crate) fn add(&self, name: &str, seconds: f64) {
        let mut r = self.lock();
        let full = r.full_name(name);
        r.add(full, seconds);
    }
}

/// End the innermost open phase.
fn close(r: &mut Recorder) {
    if let Some(frame) = r.stack.pop() {
        let elapsed = frame.start.elapsed().as_secs_f64();
        let own = (elapsed - frame.inner).max(0.0);
        if let Some(parent) = r.stack.last_mut() {
            parent.inner += elapsed;
        }
        match r.phases.iter_mut().find(|p| p.phase == frame.name) {
            Some(p) => p.seconds += own,
            None => r.phases.push(PhaseTime { phase: frame.name, seconds: own }),
        }
    }
}

/// An open phase: it ends when dropped (and closes any phase opened inside it and left open).
#[must_use = "the phase ends when this is dropped"]
pub(crate) struct Phase {
    timings: Option<Timings>,
    depth: usize,
}

impl Phase {
    /// A phase that records nothing (no recorder attached).
    pub(crate) fn none() -> Phase {
        Phase { timings: None, depth: 0 }
    }
}

impl Drop for Phase {
    fn drop(&mut self) {
        if let Some(t) = &self.timings {
            let mut r = t.lock();
            while r.stack.len() >= self.depth && self.depth > 0 {
                close(&mut r);
            }
        }
    }
}

/// A duration for a reader: `42 s` below two minutes, `17 min` below two hours, else `4.9 h`.
pub fn seconds_in_words(s: f64) -> String {
    if s < 120.0 {
        format!("{:.0} s", s.max(0.0))
    } else if s < 7200.0 {
        format!("{:.0} min", s / 60.0)
    } else {
        format!("{:.1} h", s / 3600.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spin(seconds: f64) {
        let t = Instant::now();
        while t.elapsed().as_secs_f64() < seconds {
            std::hint::spin_loop();
        }
    }

    #[test]
    fn nested_phases_are_disjoint_and_sum_to_the_whole() {
        let timings = Timings::new();
        timings.begin_eps();
        {
            let _a = timings.open("assembly");
            spin(0.01);
        }
        {
            let _b = timings.open("block-ipm");
            spin(0.01);
            timings.add("Schur complement forming", 0.005);
            {
                let _p = timings.open("polish");
                spin(0.02);
            }
        }
        spin(0.005);
        timings.finish_eps(0.5, "other");
        let done = timings.finished();
        assert_eq!(done.len(), 1);
        let names: Vec<&str> = done[0].phases.iter().map(|p| p.phase.as_str()).collect();
        assert_eq!(
            names,
            ["assembly", "block-ipm: Schur complement forming", "block-ipm: polish", "block-ipm", "other"]
        );
        let sum: f64 = done[0].phases.iter().map(|p| p.seconds).sum();
        assert!((sum - done[0].seconds).abs() < 1e-9, "{sum} vs {}", done[0].seconds);
        let polish = done[0].phases[2].seconds;
        assert!(polish >= 0.02, "{polish}");
        // The block's own time excludes what was timed inside it (≥ 0.01 s of its own).
        let own = done[0].phases[3].seconds;
        assert!((0.005..0.02).contains(&own), "{own}");
        assert!(done[0].threads >= 1);
    }

    #[test]
    fn a_phase_left_open_ends_with_its_parent_or_its_eps() {
        let timings = Timings::new();
        timings.begin_eps();
        let outer = timings.open("outer");
        std::mem::forget(timings.open("inner"));
        spin(0.002);
        drop(outer);
        let _left = timings.open("left open");
        spin(0.002);
        timings.finish_eps(1.0, "other");
        let names: Vec<String> = timings.finished()[0].phases.iter().map(|p| p.phase.clone()).collect();
        assert!(names.contains(&"outer: inner".to_string()) && names.contains(&"left open".to_string()), "{names:?}");
    }
}
