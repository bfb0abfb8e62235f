//! Progress on long work. [`Progress`]: an `indicatif` bar on stderr when stderr is a terminal
//! (never under `--json`, never when piped), drawn only once the work has run for about a second.
//! [`SolveProgress`]: a solve's progress as the library reports it — a bar with the solver's
//! progress and an ETA on a terminal, a line every ten seconds in a log, nothing under `--quiet`
//! or `--json`.

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// A progress bar that may be hidden (then every call does nothing).
pub struct Progress {
    bar: Option<ProgressBar>,
}

impl Progress {
    /// `total` steps of `what` (e.g. "ε", "columns"); shown only when `enabled` and stderr is a
    /// terminal.
    pub fn new(total: u64, what: &str, enabled: bool) -> Progress {
        if !(enabled && std::io::stderr().is_terminal()) {
            return Progress { bar: None };
        }
        let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::hidden());
        let style = ProgressStyle::with_template(&format!(
            "{{spinner}} {{pos}}/{{len}} {what} done, {{elapsed}} elapsed {{wide_msg}}"
        ))
        .expect("a valid template");
        bar.set_style(style);
        // Only long work is worth a bar: it appears after a second.
        let shown = bar.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_secs(1));
            if !shown.is_finished() {
                shown.set_draw_target(ProgressDrawTarget::stderr());
                shown.enable_steady_tick(Duration::from_millis(200));
            }
        });
        Progress { bar: Some(bar) }
    }

    /// Set the total.
    pub fn set_length(&self, total: u64) {
        if let Some(b) = &self.bar {
            b.set_length(total);
        }
    }

    /// Set the steps done.
    pub fn set(&self, done: u64) {
        if let Some(b) = &self.bar {
            b.set_position(done);
        }
    }

    /// Remove the bar.
    pub fn finish(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.finish();
    }
}

/// How a solve's progress reaches the user.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shown {
    /// A bar with the solver's progress and an ETA (stderr is a terminal).
    Bar,
    /// A line on stderr every [`log_interval`] (stderr is a file or a pipe: a log).
    Lines,
    /// Nothing (`--quiet`, `--json`).
    Silent,
}

impl Shown {
    /// The bar on a terminal, lines otherwise; nothing when `quiet`.
    pub fn for_stderr(quiet: bool) -> Shown {
        if quiet {
            Shown::Silent
        } else if std::io::stderr().is_terminal() {
            Shown::Bar
        } else {
            Shown::Lines
        }
    }
}

/// Seconds between progress lines in a log: `UBAPP_PROGRESS_SECONDS` when set (a positive
/// number), else 10.
pub fn log_interval() -> Duration {
    std::env::var("UBAPP_PROGRESS_SECONDS")
        .ok()
        .and_then(|s| s.trim().parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s > 0.0 && *s < 1e6)
        .map_or(Duration::from_secs(10), Duration::from_secs_f64)
}

/// What the solve reported last.
struct SolveState {
    eps: Option<f64>,
    index: usize,
    count: usize,
    phase: Option<ubapp::solve::Phase>,
    iteration: Option<(String, u64)>,
    gap: Option<f64>,
    /// The anytime route's certified risk and proven bound, and its iteration.
    bounds: Option<(f64, f64, u64)>,
    done: usize,
    started: Instant,
    eps_started: Instant,
    /// The estimate of the whole solve (seconds), for the ETA before the first ε is done.
    estimate: Option<f64>,
}

impl SolveState {
    /// `ε = 0.5 (1 of 2), output generation round 2 (24 of 66 outputs), clarabel iteration 31,
    /// gap 3.1e-2`.
    fn describe(&self) -> String {
        let mut parts = Vec::new();
        if let Some(eps) = self.eps {
            parts.push(format!("ε = {eps} ({} of {})", self.index + 1, self.count));
        }
        if let Some(phase) = &self.phase {
            parts.push(phase.to_string());
        }
        if let Some((solver, it)) = &self.iteration {
            parts.push(format!("{solver} iteration {it}"));
        }
        if let Some((upper, lower, iteration)) = self.bounds {
            parts.push(format!("iteration {iteration}, risk in [{lower:.6e}, {upper:.6e}]"));
        }
        if let Some(g) = self.gap {
            parts.push(format!("certified gap {g:.1e}"));
        }
        parts.join(", ")
    }

    /// Seconds left, roughly: from the ε already solved, else from the estimate.
    fn eta(&self) -> Option<f64> {
        let elapsed = self.started.elapsed().as_secs_f64();
        if self.done > 0 {
            let per_eps = (self.eps_started - self.started).as_secs_f64() / self.done as f64;
            let in_current = self.eps_started.elapsed().as_secs_f64();
            Some((per_eps * (self.count - self.done) as f64 - in_current).max(0.0))
        } else {
            self.estimate.map(|e| e - elapsed)
        }
    }
}

/// A solve's progress on stderr ([`Shown`]): the library's [`ubapp::solve::ProgressSink`].
pub struct SolveProgress {
    state: std::sync::Arc<std::sync::Mutex<SolveState>>,
    bar: Option<ProgressBar>,
    stop: Option<std::sync::mpsc::Sender<()>>,
    ticker: Option<std::thread::JoinHandle<()>>,
}

/// The sink half, shared with the solve.
struct Sink(std::sync::Arc<std::sync::Mutex<SolveState>>);

impl ubapp::solve::ProgressSink for Sink {
    fn report(&self, event: ubapp::solve::Event<'_>) {
        use ubapp::solve::Event;
        let mut s = self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        match event {
            Event::Eps { eps, index, count } => {
                s.eps = Some(eps);
                s.index = index;
                s.count = count;
                s.phase = None;
                s.iteration = None;
                s.gap = None;
                s.bounds = None;
                s.eps_started = Instant::now();
            }
            Event::Phase(p) => {
                s.phase = Some(p);
                s.iteration = None;
            }
            Event::Iteration { solver, iteration } => s.iteration = Some((solver.to_string(), iteration)),
            Event::Gap(g) => s.gap = Some(g),
            Event::Bounds { upper, lower, iteration } => s.bounds = Some((upper, lower, iteration)),
            Event::Solved { .. } => s.done += 1,
            // An event added to the library later is not shown until it is handled here.
            _ => {}
        }
    }
}

impl SolveProgress {
    /// Progress of a solve of `count` ε shown as `shown`; `estimate` (seconds, from the same
    /// estimate as `--dry-run`) gives the ETA until the first ε is solved.
    pub fn new(count: usize, estimate: Option<f64>, shown: Shown) -> SolveProgress {
        let now = Instant::now();
        let state = std::sync::Arc::new(std::sync::Mutex::new(SolveState {
            eps: None,
            index: 0,
            count,
            phase: None,
            iteration: None,
            gap: None,
            bounds: None,
            done: 0,
            started: now,
            eps_started: now,
            estimate,
        }));
        let bar = (shown == Shown::Bar).then(|| solve_bar(count));
        let (stop, stopped) = std::sync::mpsc::channel::<()>();
        let ticker = match (shown, &bar) {
            (Shown::Bar, Some(bar)) => Some(bar_ticker(state.clone(), bar.clone(), stopped)),
            (Shown::Lines, _) => Some(line_ticker(state.clone(), stopped)),
            _ => None,
        };
        SolveProgress { state, bar, stop: Some(stop), ticker }
    }

    /// The handle the solve reports to (nowhere when silent).
    pub fn handle(&self) -> ubapp::solve::Progress {
        if self.ticker.is_none() {
            return ubapp::solve::Progress::none();
        }
        ubapp::solve::Progress::to(std::sync::Arc::new(Sink(self.state.clone())))
    }

    /// Run `f` with the bar out of the way (for printing to stdout).
    pub fn suspend<T>(&self, f: impl FnOnce() -> T) -> T {
        match &self.bar {
            Some(b) => b.suspend(f),
            None => f(),
        }
    }

    /// Stop reporting and remove the bar.
    pub fn finish(&mut self) {
        drop(self.stop.take());
        if let Some(t) = self.ticker.take() {
            let _ = t.join();
        }
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}

impl Drop for SolveProgress {
    fn drop(&mut self) {
        self.finish();
    }
}

/// `45 s`, `3 min`, `1.5 h`.
pub fn seconds(s: f64) -> String {
    if s < 120.0 {
        format!("{:.0} s", s.max(0.0))
    } else if s < 7200.0 {
        format!("{:.0} min", s / 60.0)
    } else {
        format!("{:.1} h", s / 3600.0)
    }
}

/// The bar of a solve of `count` ε.
fn solve_bar(count: usize) -> ProgressBar {
    let bar = ProgressBar::with_draw_target(Some(count as u64), ProgressDrawTarget::stderr());
    let style = ProgressStyle::with_template("{spinner} [{bar:20}] {pos}/{len} ε, {elapsed} {wide_msg}")
        .expect("a valid template")
        .progress_chars("=> ");
    bar.set_style(style);
    bar.enable_steady_tick(Duration::from_millis(200));
    bar
}

/// The thread that keeps the bar's message current (where the solve is, and the ETA) until
/// `stopped` hears from the owner.
fn bar_ticker(
    state: std::sync::Arc<std::sync::Mutex<SolveState>>,
    bar: ProgressBar,
    stopped: std::sync::mpsc::Receiver<()>,
) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        while stopped.recv_timeout(Duration::from_millis(500)) == Err(std::sync::mpsc::RecvTimeoutError::Timeout) {
            let s = state.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            // The ETA first: a narrow terminal cuts the end of the line.
            let eta = s.eta().map_or(String::new(), |e| {
                if e > 0.0 {
                    format!("ETA ~{} (rough); ", seconds(e))
                } else {
                    "past the estimate; ".to_string()
                }
            });
            bar.set_position(s.done as u64);
            bar.set_message(format!("{eta}{}", s.describe()));
        }
    })
}

/// The thread that writes a progress line every [`log_interval`] until `stopped` hears from the
/// owner (stderr is a log, not a terminal).
fn line_ticker(
    state: std::sync::Arc<std::sync::Mutex<SolveState>>,
    stopped: std::sync::mpsc::Receiver<()>,
) -> std::thread::JoinHandle<()> {
    let interval = log_interval();
    std::thread::spawn(move || {
        while stopped.recv_timeout(interval) == Err(std::sync::mpsc::RecvTimeoutError::Timeout) {
            let s = state.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            let what = s.describe();
            let elapsed = seconds(s.started.elapsed().as_secs_f64());
            drop(s);
            let line = if what.is_empty() {
                format!("progress: starting, {elapsed} elapsed")
            } else {
                format!("progress: {what}, {elapsed} elapsed")
            };
            use std::io::Write as _;
            let _ = writeln!(std::io::stderr(), "{line}");
        }
    })
}
