//! What a scan measured: the runs of each value, and the machine they ran on (the experiments'
//! [`Machine`], so every document describes a machine the same way).
//!
//! These are plain data. [`super::analysis`] turns them into statistics and a model; the
//! exporters under [`super::export`] only read them.

use std::time::Duration;

use crate::results::Machine;

/// How the concurrency was varied.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// `-P`/`-L`: one copy of the command per run, its parameter `{NAME}` varied.
    Parameter,
    /// `--procs`: K copies of the same command at once; throughput is K / wall.
    Procs,
    /// One or several commands, no parameter (hyperfine's plain form): each command is one
    /// value, compared with the others.
    Commands,
}

/// One measured run: a single command, or K concurrent copies in `--procs` mode (then the
/// times and switches are summed over the copies, the peak RSS is the largest copy's).
#[derive(Debug, Clone, PartialEq)]
pub struct Run {
    /// The repetition (round) this run belongs to, from 0.
    pub round: usize,
    /// Wall-clock time from the first spawn to the last reaped child.
    pub wall: Duration,
    /// User CPU time of the child(ren), from `wait4`.
    pub user: Duration,
    /// System CPU time of the child(ren), from `wait4`.
    pub system: Duration,
    /// Peak resident set size in KiB (largest copy).
    pub max_rss_kib: u64,
    /// Voluntary context switches (the program blocked or yielded).
    pub voluntary_switches: u64,
    /// Involuntary context switches (the kernel preempted it).
    pub involuntary_switches: u64,
    /// Time runnable but waiting for a CPU; `None` where the kernel does not say.
    pub run_queue_wait: Option<Duration>,
    /// Exit code: the first failing copy's, else 0; `None` when killed by a signal.
    pub exit_code: Option<i32>,
    /// The signal that killed a copy, if one did.
    pub signal: Option<i32>,
}

impl Run {
    /// User plus system time.
    pub fn cpu(&self) -> Duration {
        self.user + self.system
    }

    /// True when every copy exited with status 0.
    pub fn succeeded(&self) -> bool {
        self.exit_code == Some(0) && self.signal.is_none()
    }
}

/// One value of the scanned parameter and its runs.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    /// The value as given (`"4"`).
    pub label: String,
    /// The value as a concurrency level for the model, when it is a positive number.
    pub n: Option<f64>,
    /// Copies run at once (1 unless `--procs`).
    pub copies: usize,
    /// The command as run, the value substituted, for display.
    pub command: String,
    /// The scanned parameter's name and value, when several commands are each scanned over a
    /// parameter (a comparison of commands: the value is not the row's label).
    pub parameter: Option<(String, String)>,
    /// The measured runs (warm-up runs excluded).
    pub runs: Vec<Run>,
}

/// Everything one `throttle scan` measured.
#[derive(Debug, Clone, PartialEq)]
pub struct Scan {
    /// How concurrency was varied.
    pub mode: Mode,
    /// The parameter's name (`n`), or `procs` in `--procs` mode.
    pub parameter: String,
    /// The command template as given, placeholders kept.
    pub template: String,
    /// The values in the order given, with their runs.
    pub points: Vec<Point>,
    /// The machine.
    pub machine: Machine,
    /// True when the scan stopped early (Ctrl-C): some values may have fewer runs.
    pub partial: bool,
    /// Why run-queue wait is missing, when it is.
    pub run_queue_unavailable: Option<String>,
    /// Warm-up runs per value that preceded the measurements.
    pub warmup: usize,
}
