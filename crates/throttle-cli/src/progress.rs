//! A progress bar on standard error, shown only when standard error is a terminal (so logs and
//! test output stay clean). Measurements are counted in steps; the message names the current one.

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// A progress bar over a known number of measurement steps.
#[derive(Debug)]
pub struct Progress {
    bar: ProgressBar,
}

impl Progress {
    /// A bar of `total` steps headed by `what`; invisible unless stderr is a terminal.
    pub fn new(total: u64, what: &str) -> Progress {
        let bar = if std::io::stderr().is_terminal() {
            let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
            let style = ProgressStyle::with_template(
                "{prefix} [{elapsed_precise}] {wide_bar} {pos}/{len} (eta {eta}) {msg}",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar());
            bar.set_style(style);
            bar.enable_steady_tick(Duration::from_millis(200));
            bar
        } else {
            ProgressBar::hidden()
        };
        bar.set_prefix(what.to_string());
        Progress { bar }
    }

    /// Names the step being measured now.
    pub fn step(&self, message: impl Into<String>) {
        self.bar.set_message(message.into());
    }

    /// Counts one finished step.
    pub fn done_one(&self) {
        self.bar.inc(1);
    }

    /// Removes the bar from the terminal.
    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.bar.finish_and_clear();
    }
}
