//! Progress on long work. [`Progress`]: an `indicatif` bar on stderr when stderr is a terminal
//! (never under `--json`, never when piped), drawn only once the work has run for about a second.
//! [`SolveProgress`]: a solve's progress as the library reports it — on a terminal a bar that
//! moves within one ε too (the certified gap closing towards its target on a log scale, the
//! iterations against their limit, the time against the time limit or the estimate), its line
//! fitted to the terminal's width (the numbers whole, the phase cut); in a log a line every ten
//! seconds with the share done and the ETA; nothing under `--quiet` or `--json`.

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
    /// The first certified gap of the current ε: where the closing gap started from.
    first_gap: Option<f64>,
    /// The anytime route's certified risk and proven bound, and its iteration.
    bounds: Option<(f64, f64, u64)>,
    done: usize,
    started: Instant,
    eps_started: Instant,
    /// The estimate of the whole solve (seconds), for the ETA before the first ε is done.
    estimate: Option<f64>,
    /// The solve's limits: wall-clock seconds (shared by every ε) and each backend's iterations.
    limits: ubapp::solve::Limits,
    /// The certified gap at which the solve of one ε counts as done.
    target_gap: f64,
}

/// The gap the bar counts towards when the solve names none (the anytime route's default).
const TARGET_GAP: f64 = 1e-3;

impl SolveState {
    fn new(count: usize, estimate: Option<f64>) -> SolveState {
        let now = Instant::now();
        SolveState {
            eps: None,
            index: 0,
            count,
            phase: None,
            iteration: None,
            gap: None,
            first_gap: None,
            bounds: None,
            done: 0,
            started: now,
            eps_started: now,
            estimate,
            limits: ubapp::solve::Limits::default(),
            target_gap: TARGET_GAP,
        }
    }

    /// `ε = 0.5 (1 of 2), output generation round 2 (24 of 66 outputs), clarabel iteration 31,
    /// certified gap 3.1e-2`.
    fn describe(&self) -> String {
        let mut parts = Vec::new();
        if let Some(eps) = self.eps {
            parts.push(format!("ε = {eps} ({} of {})", self.index + 1, self.count));
        }
        if let Some(phase) = &self.phase {
            parts.push(phase.to_string());
        }
        parts.extend(self.numbers());
        parts.join(", ")
    }

    /// The solver's own numbers: its iteration, the anytime route's bounds, the certified gap.
    fn numbers(&self) -> Vec<String> {
        let mut parts = Vec::new();
        if let Some((solver, it)) = &self.iteration {
            match self.limits.iterations {
                Some(limit) => parts.push(format!("{solver} iteration {it} of at most {limit}")),
                None => parts.push(format!("{solver} iteration {it}")),
            }
        }
        if let Some((upper, lower, iteration)) = self.bounds {
            parts.push(format!("iteration {iteration}, risk in [{lower:.6e}, {upper:.6e}]"));
        }
        if let Some(g) = self.current_gap() {
            parts.push(format!("certified gap {g:.1e}"));
        }
        parts
    }

    /// The certified gap of the current ε: the route's, else the anytime route's bounds'.
    fn current_gap(&self) -> Option<f64> {
        self.gap.or_else(|| {
            self.bounds
                .and_then(|(u, l, _)| (u.is_finite() && l.is_finite() && u > 0.0).then(|| ((u - l) / u).max(0.0)))
        })
    }

    /// How far the certified gap has closed, from the first one measured towards the target, on a
    /// log scale (0 … 1; `None` before two gaps).
    fn gap_fraction(&self) -> Option<f64> {
        let (first, now) = (self.first_gap?, self.current_gap()?);
        if !(first > self.target_gap && now < first && now > 0.0) {
            return (now <= self.target_gap).then_some(1.0);
        }
        Some(((first / now).ln() / (first / self.target_gap).ln()).clamp(0.0, 1.0))
    }

    /// The seconds one ε is expected to take: the mean of those solved, else the estimate's
    /// share, never beyond the time limit's share.
    fn per_eps(&self) -> Option<f64> {
        let measured = (self.done > 0).then(|| (self.eps_started - self.started).as_secs_f64() / self.done as f64);
        let expected = measured.or_else(|| self.estimate.map(|e| e / self.count.max(1) as f64));
        let share = self.limits.seconds.map(|s| s / self.count.max(1) as f64);
        match (expected, share) {
            (Some(e), Some(s)) => Some(e.min(s)),
            (e, s) => e.or(s),
        }
    }

    /// The current ε's progress in [0, 0.99]: the largest of the gap closed, the iterations
    /// against their limit, and the time against the time limit's share (or, short of 0.9, the
    /// estimate's).
    fn eps_fraction(&self) -> f64 {
        let in_eps = self.eps_started.elapsed().as_secs_f64();
        let mut f = self.gap_fraction().unwrap_or(0.0);
        if let (Some((_, it)), Some(limit)) = (&self.iteration, self.limits.iterations) {
            f = f.max(*it as f64 / f64::from(limit.max(1)));
        }
        if let Some(s) = self.limits.seconds {
            f = f.max(in_eps / (s / self.count.max(1) as f64));
        } else if let Some(per) = self.per_eps().filter(|p| *p > 0.0) {
            f = f.max(0.9 * (in_eps / per).min(1.0));
        }
        if f.is_finite() {
            f.clamp(0.0, 0.99)
        } else {
            0.0
        }
    }

    /// The whole solve's progress in [0, 1]: the ε done plus the current one's fraction.
    fn fraction(&self) -> f64 {
        if self.count == 0 {
            return 0.0;
        }
        let current = if self.done < self.count { self.eps_fraction() } else { 0.0 };
        ((self.done as f64 + current) / self.count as f64).min(1.0)
    }

    /// Seconds left, roughly: the current ε from its closing gap (once it has closed a tenth of
    /// the way) or from the ε already solved or the estimate, the ε after it at the same pace;
    /// never beyond what the time limit leaves.
    fn eta(&self) -> Option<f64> {
        let elapsed = self.started.elapsed().as_secs_f64();
        let in_eps = self.eps_started.elapsed().as_secs_f64();
        let per_eps = self.per_eps();
        let current = match self.gap_fraction().filter(|f| *f >= 0.1) {
            Some(f) => Some(in_eps * (1.0 - f) / f),
            None => per_eps.map(|p| p - in_eps),
        }?;
        let after = per_eps.unwrap_or(0.0) * self.count.saturating_sub(self.done + 1) as f64;
        let mut left = current.max(0.0) + after;
        if let Some(s) = self.limits.seconds {
            left = left.min((s - elapsed).max(0.0));
        }
        // 0: past the estimate with nothing closing (said so rather than counted down).
        Some(left)
    }

    /// `ETA ~3 min (rough)` (without `(rough)` when `short`), `past the estimate`, or `at the
    /// time limit` (the solve then keeps its best certified mechanism).
    fn eta_text(&self, short: bool) -> Option<String> {
        let at_limit = self.limits.seconds.is_some_and(|s| self.started.elapsed().as_secs_f64() >= s);
        self.eta().map(|e| match (e > 0.0, at_limit) {
            (_, true) => "at the time limit".to_string(),
            (true, false) if short => format!("ETA ~{}", seconds(e)),
            (true, false) => format!("ETA ~{} (rough)", seconds(e)),
            (false, false) => "past the estimate".to_string(),
        })
    }

    /// The bar's message in at most `width` characters: the numbers first, in short forms (the
    /// ε and the solve's share done, the solver's iteration and gap, the ETA, the anytime route's
    /// bounds, the time elapsed), each whole or not at all, then the phase, cut with `…` where the
    /// width ends.
    fn bar_message(&self, width: usize) -> String {
        let mut numbers = Vec::new();
        if self.count > 0 {
            let current = (self.index + 1).min(self.count);
            numbers.push(format!("ε {current}/{}: {:.0} %", self.count, 100.0 * self.fraction()));
        }
        if let Some((solver, it)) = &self.iteration {
            match self.limits.iterations {
                Some(limit) => numbers.push(format!("{solver} iter {it}/{limit}")),
                None => numbers.push(format!("{solver} iter {it}")),
            }
        }
        if let Some(g) = self.current_gap() {
            numbers.push(format!("gap {g:.1e}"));
        }
        numbers.extend(self.eta_text(true));
        if let Some((upper, lower, iteration)) = self.bounds {
            numbers.push(format!("iter {iteration}, risk in [{lower:.4e}, {upper:.4e}]"));
        }
        numbers.push(format!("{} elapsed", seconds(self.started.elapsed().as_secs_f64())));
        let mut line = String::new();
        for n in numbers {
            let sep = if line.is_empty() { 0 } else { 2 };
            if line.chars().count() + sep + n.chars().count() > width {
                continue;
            }
            if !line.is_empty() {
                line.push_str(", ");
            }
            line.push_str(&n);
        }
        let phase = match (self.eps, &self.phase) {
            (Some(eps), Some(p)) => format!("ε = {eps}: {p}"),
            (Some(eps), None) => format!("ε = {eps}"),
            (None, Some(p)) => p.to_string(),
            (None, None) => String::new(),
        };
        let room = width.saturating_sub(line.chars().count() + 2);
        if !phase.is_empty() && room >= 4 {
            line.push_str("; ");
            line.push_str(&truncate(&phase, room));
        }
        line
    }
}

/// `text` in at most `width` characters, cut with `…`.
fn truncate(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        return text.to_string();
    }
    let mut cut: String = text.chars().take(width.saturating_sub(1)).collect();
    cut.push('…');
    cut
}

/// The terminal's width in columns (stderr's), else `COLUMNS`, else 80.
pub fn terminal_width() -> usize {
    // SAFETY: TIOCGWINSZ writes a `winsize` into the zeroed struct it is given, nothing else.
    let mut ws: libc::winsize = unsafe { std::mem::zeroed() };
    let asked = unsafe { libc::ioctl(libc::STDERR_FILENO, libc::TIOCGWINSZ, &mut ws) };
    if asked == 0 && ws.ws_col > 0 {
        return usize::from(ws.ws_col);
    }
    std::env::var("COLUMNS").ok().and_then(|c| c.trim().parse().ok()).filter(|c| *c > 0).unwrap_or(80)
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
                s.first_gap = None;
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
        if s.first_gap.is_none() {
            s.first_gap = s.current_gap().filter(|g| g.is_finite() && *g > 0.0);
        }
    }
}

impl SolveProgress {
    /// Progress of a solve of `count` ε shown as `shown`; `estimate` (seconds, from the same
    /// estimate as `--dry-run`) gives the ETA until the first ε is solved.
    pub fn new(count: usize, estimate: Option<f64>, shown: Shown) -> SolveProgress {
        let state = std::sync::Arc::new(std::sync::Mutex::new(SolveState::new(count, estimate)));
        let bar = (shown == Shown::Bar).then(solve_bar);
        let (stop, stopped) = std::sync::mpsc::channel::<()>();
        let ticker = match (shown, &bar) {
            (Shown::Bar, Some(bar)) => Some(bar_ticker(state.clone(), bar.clone(), stopped)),
            (Shown::Lines, _) => Some(line_ticker(state.clone(), stopped)),
            _ => None,
        };
        SolveProgress { state, bar, stop: Some(stop), ticker }
    }

    /// The solve's limits (time and iterations) and the certified gap it stops at (`None`: the
    /// anytime route's default), against which the bar measures one ε's progress.
    pub fn set_limits(&self, limits: ubapp::solve::Limits, gap: Option<f64>) {
        let mut s = self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        s.limits = limits;
        s.target_gap = gap.unwrap_or(TARGET_GAP);
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

pub use ubapp::solve::seconds_in_words as seconds;

/// Steps of the bar: the solve's share done, in thousandths.
const BAR_STEPS: u64 = 1000;

/// Columns the bar's spinner and `[…]` take before the message.
const BAR_COLUMNS: usize = 26;

/// The bar of a solve: its share done (the ε solved and the current one's progress).
fn solve_bar() -> ProgressBar {
    let bar = ProgressBar::with_draw_target(Some(BAR_STEPS), ProgressDrawTarget::stderr());
    let style =
        ProgressStyle::with_template("{spinner} [{bar:20}] {msg}").expect("a valid template").progress_chars("=> ");
    bar.set_style(style);
    bar.enable_steady_tick(Duration::from_millis(200));
    bar
}

/// The thread that keeps the bar current (its share done, the numbers, the phase, fitted to the
/// terminal's width at each tick) until `stopped` hears from the owner.
fn bar_ticker(
    state: std::sync::Arc<std::sync::Mutex<SolveState>>,
    bar: ProgressBar,
    stopped: std::sync::mpsc::Receiver<()>,
) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        while stopped.recv_timeout(Duration::from_millis(500)) == Err(std::sync::mpsc::RecvTimeoutError::Timeout) {
            let s = state.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            let width = terminal_width().saturating_sub(BAR_COLUMNS + 1);
            bar.set_position((s.fraction() * BAR_STEPS as f64) as u64);
            bar.set_message(s.bar_message(width));
        }
    })
}

/// The thread that writes a progress line every [`log_interval`] until `stopped` hears from the
/// owner (stderr is a log, not a terminal): where the solve is, its share done, the time elapsed
/// and the ETA.
fn line_ticker(
    state: std::sync::Arc<std::sync::Mutex<SolveState>>,
    stopped: std::sync::mpsc::Receiver<()>,
) -> std::thread::JoinHandle<()> {
    let interval = log_interval();
    std::thread::spawn(move || {
        while stopped.recv_timeout(interval) == Err(std::sync::mpsc::RecvTimeoutError::Timeout) {
            let s = state.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            let line = log_line(&s);
            drop(s);
            use std::io::Write as _;
            let _ = writeln!(std::io::stderr(), "{line}");
        }
    })
}

/// One progress line of a log: `progress: ε = 0.5 (1 of 1), whole LP, clarabel iteration 31,
/// 37 % done, 2 min elapsed, ETA ~3 min (rough)`.
fn log_line(s: &SolveState) -> String {
    let what = s.describe();
    let mut tail = vec![format!("{:.0} % done", 100.0 * s.fraction())];
    tail.push(format!("{} elapsed", seconds(s.started.elapsed().as_secs_f64())));
    tail.extend(s.eta_text(false));
    if what.is_empty() {
        format!("progress: starting, {}", tail.join(", "))
    } else {
        format!("progress: {what}, {}", tail.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ubapp::solve::Phase;

    /// One ε of a whole LP, Clarabel at iteration 31 and a certified gap closed from 1e-1 to 1e-2
    /// (a third of the way to 1e-4, on a log scale).
    fn one_long_eps() -> SolveState {
        let mut s = SolveState::new(1, Some(600.0));
        s.eps = Some(0.5);
        s.phase = Some(Phase::OutputRound { round: 12, outputs: 1234, total: 56826 });
        s.iteration = Some(("clarabel".into(), 31));
        s.first_gap = Some(1e-1);
        s.gap = Some(1e-2);
        s.target_gap = 1e-4;
        s
    }

    #[test]
    fn one_eps_moves_with_its_closing_gap() {
        let s = one_long_eps();
        let f = s.fraction();
        assert!((f - 1.0 / 3.0).abs() < 0.01, "{f}");
        let mut closer = one_long_eps();
        closer.gap = Some(1e-3);
        assert!(closer.fraction() > f + 0.3, "{} after {f}", closer.fraction());
        // Reached: the bar stops short of full until the ε is solved.
        closer.gap = Some(1e-5);
        assert_eq!(closer.fraction(), 0.99);
    }

    #[test]
    fn one_eps_moves_with_its_iterations_against_the_limit() {
        let mut s = one_long_eps();
        s.gap = None;
        s.first_gap = None;
        s.estimate = None;
        assert_eq!(s.fraction(), 0.0);
        s.limits.iterations = Some(100);
        assert!((s.fraction() - 0.31).abs() < 1e-9, "{}", s.fraction());
        assert!(s.bar_message(200).contains("clarabel iter 31/100"), "{}", s.bar_message(200));
        assert!(log_line(&s).contains("clarabel iteration 31 of at most 100"), "{}", log_line(&s));
    }

    #[test]
    fn the_bar_fits_the_width_and_cuts_the_phase_never_the_numbers() {
        let s = one_long_eps();
        for width in [40, 60, 80, 100, 200] {
            let line = s.bar_message(width);
            assert!(line.chars().count() <= width, "{width}: {line}");
            // Every number shown is whole: the percentage first, the iteration as long as it fits.
            assert!(line.starts_with("ε 1/1: 33 %"), "{line}");
            assert!(line.contains("clarabel iter 31,"), "{width}: {line}");
        }
        // An 80-column terminal leaves the message 53: every number shows.
        let eighty = s.bar_message(80 - BAR_COLUMNS - 1);
        assert!(eighty.contains("gap 1.0e-2, ETA ~"), "{eighty}");
        let wide = s.bar_message(200);
        assert!(wide.ends_with("; ε = 0.5: output generation round 12 (1234 of 56826 outputs)"), "{wide}");
        // Narrower than the phase: it is cut with an ellipsis, the numbers before it stay whole.
        let narrow = s.bar_message(100);
        assert!(narrow.ends_with('…'), "{narrow}");
        assert!(narrow.contains(" elapsed; ε = 0.5: output"), "{narrow}");
    }

    #[test]
    fn log_lines_carry_the_eta_and_the_share_done() {
        let s = one_long_eps();
        let line = log_line(&s);
        assert!(line.starts_with("progress: ε = 0.5 (1 of 1), output generation round 12"), "{line}");
        assert!(line.contains("33 % done"), "{line}");
        assert!(line.contains("ETA ~"), "{line}");
        // With no estimate, no gap and no limit there is nothing to base an ETA on.
        let mut bare = SolveState::new(1, None);
        bare.eps = Some(0.5);
        assert!(!log_line(&bare).contains("ETA"), "{}", log_line(&bare));
    }

    #[test]
    fn the_eta_never_passes_the_time_limit() {
        let mut s = one_long_eps();
        s.estimate = Some(1e6);
        s.gap = None;
        s.first_gap = None;
        s.limits.seconds = Some(60.0);
        let eta = s.eta().unwrap();
        assert!(eta <= 60.0 && eta > 50.0, "{eta}");
    }
}
