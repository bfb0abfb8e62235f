//! Progress on long work: an `indicatif` bar on stderr when stderr is a terminal (never under
//! `--json`, never when piped), drawn only once the work has run for about a second.

use std::io::IsTerminal;
use std::time::Duration;

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

    /// What is being worked on now.
    pub fn message(&self, msg: String) {
        if let Some(b) = &self.bar {
            b.set_message(msg);
        }
    }

    /// One more step done.
    pub fn inc(&self) {
        if let Some(b) = &self.bar {
            b.inc(1);
        }
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

    /// Run `f` with the bar out of the way (for printing to stdout).
    pub fn suspend<T>(&self, f: impl FnOnce() -> T) -> T {
        match &self.bar {
            Some(b) => b.suspend(f),
            None => f(),
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
