//! Progress of a solve: what the route and every backend report while they work, to a sink the
//! caller passes in [`super::SolveOptions::progress`] (a terminal bar, periodic log lines, or
//! nothing). Reporting never changes a result, and a solve without a sink reports to no one.
//!
//! A backend reports only what it alone knows (its iterations, through its own callback); the
//! route reports the ε being solved, the phase (assembly, output-generation rounds, the whole LP,
//! certification) and every certified gap it measures.

use std::fmt;
use std::sync::Arc;

use super::timing::{Phase as TimedPhase, Timings};
use super::Status;

/// Where a solve of one ε is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Phase {
    /// Building the cost matrix and the LP.
    Assembling,
    /// Output generation: the LP restricted to `outputs` of `total` outputs, round `round`.
    OutputRound {
        /// 1, 2, …
        round: usize,
        /// Outputs in the restricted LP.
        outputs: usize,
        /// Outputs of the full LP.
        total: usize,
    },
    /// A backend on the whole LP.
    WholeLp,
    /// The exact chain solver.
    Chain,
    /// Repair, quantisation and the exact checks of the mechanism to release.
    Certifying,
    /// The anytime route's first-order iterations, with checkpoints that certify both bounds.
    FirstOrder,
    /// The anytime route's decomposition: round `round` of the pieces' exact LPs, `pieces` of
    /// them.
    Decomposition {
        /// 1, 2, …
        round: usize,
        /// Pieces in this round.
        pieces: usize,
    },
}

impl fmt::Display for Phase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Phase::Assembling => f.write_str("assembling the LP"),
            Phase::OutputRound { round, outputs, total } => {
                write!(f, "output generation round {round} ({outputs} of {total} outputs)")
            }
            Phase::WholeLp => f.write_str("whole LP"),
            Phase::Chain => f.write_str("chain solver"),
            Phase::Certifying => f.write_str("certifying"),
            Phase::FirstOrder => f.write_str("first-order iterations"),
            Phase::Decomposition { round, pieces } => write!(f, "decomposition round {round} ({pieces} pieces)"),
        }
    }
}

/// One thing a solve reports (a sink ignores what it does not show; more may be added).
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub enum Event<'a> {
    /// Work on `eps`, the `index`-th (from 0) of `count` privacy levels, starts.
    Eps {
        /// The privacy level.
        eps: f64,
        /// Its position in the list, from 0.
        index: usize,
        /// How many privacy levels the solve has.
        count: usize,
    },
    /// A phase of the current ε starts.
    Phase(Phase),
    /// The anytime route's best certified pair at a checkpoint: the proven risk of the mechanism
    /// it would release and the proven lower bound on the optimum (unscaled).
    Bounds {
        /// The certified mechanism's risk (∞ before the first).
        upper: f64,
        /// The proven lower bound (−∞ before the first).
        lower: f64,
        /// Iterations so far.
        iteration: u64,
    },
    /// A backend finished an iteration.
    Iteration {
        /// The backend, e.g. `clarabel`.
        solver: &'a str,
        /// Iterations so far.
        iteration: u64,
    },
    /// The relative gap between the best point so far and a lower bound on the optimum that our
    /// checks certify (never the backend's own estimate).
    Gap(f64),
    /// The current ε is solved.
    Solved {
        /// The privacy level.
        eps: f64,
        /// Its status after our checks.
        status: Status,
        /// Its certified relative gap, when measured.
        gap: Option<f64>,
    },
}

/// What receives a solve's [`Event`]s. Called on the solving thread, between iterations: keep
/// it cheap (store the event; draw elsewhere).
pub trait ProgressSink: Send + Sync {
    /// One event.
    fn report(&self, event: Event<'_>);
}

/// A handle on an optional [`ProgressSink`] and an optional [`Timings`] recorder, cheap to clone
/// and to call.
#[derive(Clone, Default)]
pub struct Progress {
    sink: Option<Arc<dyn ProgressSink>>,
    timings: Option<Timings>,
}

impl Progress {
    /// Report to `sink`.
    pub fn to(sink: Arc<dyn ProgressSink>) -> Progress {
        Progress { sink: Some(sink), timings: None }
    }

    /// Report to no one (the default).
    pub fn none() -> Progress {
        Progress::default()
    }

    /// The same reporting, and each phase's seconds recorded in `timings` (read them with
    /// [`Timings::finished`] once the solve returns).
    pub fn with_timings(self, timings: Timings) -> Progress {
        Progress { timings: Some(timings), ..self }
    }

    /// True when a sink listens (a backend may then install its callback).
    pub fn is_listening(&self) -> bool {
        self.sink.is_some()
    }

    /// Pass `event` to the sink, if any.
    pub fn report(&self, event: Event<'_>) {
        if let Some(sink) = &self.sink {
            sink.report(event);
        }
    }

    /// Time a phase named `name` (under the phase open on this thread) until the returned guard
    /// drops; nothing is recorded without a recorder.
    pub(crate) fn time(&self, name: &str) -> TimedPhase {
        self.timings.as_ref().map_or_else(TimedPhase::none, |t| t.open(name))
    }

    /// Record `seconds` the caller measured for a phase named `name` (under the open one).
    pub(crate) fn add_time(&self, name: &str, seconds: f64) {
        if let Some(t) = &self.timings {
            t.add(name, seconds);
        }
    }

    /// The recorder, if any.
    pub(crate) fn timings(&self) -> Option<&Timings> {
        self.timings.as_ref()
    }

    /// [`Event::Phase`].
    pub fn phase(&self, phase: Phase) {
        self.report(Event::Phase(phase));
    }

    /// [`Event::Gap`], when there is a gap.
    pub fn gap(&self, gap: Option<f64>) {
        if let Some(g) = gap.filter(|g| g.is_finite()) {
            self.report(Event::Gap(g));
        }
    }
}

impl fmt::Debug for Progress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(if self.sink.is_some() { "Progress(sink)" } else { "Progress(none)" })
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;

    #[derive(Default)]
    struct Recorder(Mutex<Vec<String>>);

    impl ProgressSink for Recorder {
        fn report(&self, event: Event<'_>) {
            self.0.lock().unwrap().push(format!("{event:?}"));
        }
    }

    #[test]
    fn events_reach_the_sink_and_none_reaches_no_one() {
        let recorder = Arc::new(Recorder::default());
        let progress = Progress::to(recorder.clone());
        progress.phase(Phase::WholeLp);
        progress.gap(None);
        progress.gap(Some(f64::NAN));
        progress.gap(Some(0.5));
        assert_eq!(*recorder.0.lock().unwrap(), vec!["Phase(WholeLp)".to_string(), "Gap(0.5)".to_string()]);
        let silent = Progress::none();
        assert!(!silent.is_listening());
        silent.phase(Phase::Assembling);
    }
}
