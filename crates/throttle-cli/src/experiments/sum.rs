//! `throttle sum N`: seed 000's program. `tasks` CPU-bound tasks each sum their slice of
//! `1 ..= tasks·chunk`; at most N of them run at once (0 = no limit); the total is checked
//! against the closed form and the wall time printed as `    N -- seconds`, like the seed.
//!
//! This module also holds the one measured run ([`measure_once`]) that `throttle sweep` repeats.

use std::time::Duration;

use clap::{Args, ValueEnum};
use throttle::Pool;
use throttle_probe::Snapshot;
use throttle_workloads::seed_sum;

use crate::error::usage;
use crate::export::OutputArgs;
use crate::results::{Check, Machine, Report, Row, Sample, Section};
use crate::view::units;

/// The most tasks (and so OS threads) a run may create.
pub const MAX_TASKS: usize = 1024;

/// How the tasks are gated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Mode {
    /// One OS thread per task, gated by a `throttle::Throttle` semaphore (the seed's program).
    Threads,
    /// One `throttle::Pool` with one thread per task and `set_concurrency(N)`.
    Pool,
}

impl Mode {
    /// The mode's name in tables and files.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Threads => "threads",
            Mode::Pool => "pool",
        }
    }
}

/// Options of `throttle sum`.
#[derive(Debug, Args)]
#[command(
    about = "Seed 000's program: N concurrent tasks out of 64, sum checked, prints `N -- seconds`",
    long_about = "Seed 000 (\"semaphore throttle\"): 64 CPU-bound tasks, task i summing \
1 + i·chunk ..= (i+1)·chunk, of which at most N run at once (0 = no limit, all contend). The \
total is checked against the closed form n(n+1)/2 (a wrong sum fails the run, exit status 1) \
and the wall time is printed as `    N -- seconds`, like the seed.\n\n\
--mode threads runs one OS thread per task gated by a throttle::Throttle semaphore (the seed); \
--mode pool runs the tasks on a throttle::Pool with one thread per task and set_concurrency(N)."
)]
pub struct SumArgs {
    /// Tasks allowed to run at once, 0..=TASKS (0 = no limit).
    #[arg(value_name = "N", allow_hyphen_values = true)]
    pub n: String,
    /// Number of tasks (and of threads).
    #[arg(long, default_value_t = 64, value_name = "TASKS", allow_negative_numbers = true, value_parser = crate::numbers::whole::<usize>(1, 4096))]
    pub tasks: usize,
    /// Numbers summed per task (default: calibrated so all tasks take about --work-ms serially).
    #[arg(long, value_name = "C", allow_negative_numbers = true, value_parser = crate::numbers::whole::<u64>(1, u64::MAX))]
    pub chunk: Option<u64>,
    /// How many times each task repeats its sum (with --chunk; default 1).
    #[arg(long, value_name = "R", allow_negative_numbers = true, value_parser = crate::numbers::whole::<u32>(1, u64::MAX))]
    pub repeat: Option<u32>,
    /// Serial time of all tasks to calibrate to, in milliseconds (without --chunk).
    #[arg(long, default_value_t = 2000, value_name = "MS", allow_negative_numbers = true, value_parser = crate::numbers::whole::<u64>(1, 86400000))]
    pub work_ms: u64,
    /// How the tasks are gated.
    #[arg(long, value_enum, default_value_t = Mode::Threads)]
    pub mode: Mode,
    /// Also print CPU time, context switches, run-queue wait and the sum check.
    #[arg(long, short)]
    pub verbose: bool,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub output: OutputArgs,
}

/// The work of one batch: how many tasks and how much each sums.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Work {
    /// Number of tasks.
    pub tasks: usize,
    /// Numbers per task.
    pub chunk: u64,
    /// Repetitions of each task's sum.
    pub repeat: u32,
}

impl Work {
    /// Validates `--tasks`, `--chunk` and `--repeat`, calibrating when no chunk is given.
    pub fn from_flags(
        tasks: usize,
        chunk: Option<u64>,
        repeat: Option<u32>,
        serial_target: Duration,
    ) -> anyhow::Result<Work> {
        if tasks == 0 || tasks > MAX_TASKS {
            return Err(usage(
                "--tasks",
                &tasks.to_string(),
                &format!("must be 1..={MAX_TASKS}"),
            ));
        }
        if repeat == Some(0) {
            return Err(usage("--repeat", "0", "must be at least 1"));
        }
        let (chunk, repeat) = match chunk {
            Some(0) => return Err(usage("--chunk", "0", "must be at least 1")),
            Some(c) => {
                // Each task's partial sum must fit a u64: (tasks·chunk)² / 2 < 2^64.
                let n = tasks as u128 * c as u128;
                let fits = n
                    .checked_mul(n + 1)
                    .is_some_and(|twice| twice / 2 <= u64::MAX as u128);
                if !fits {
                    return Err(usage(
                        "--chunk",
                        &c.to_string(),
                        "too large: the partial sums would overflow 64 bits",
                    ));
                }
                (c, repeat.unwrap_or(1))
            }
            None => {
                // calibrate() sizes the seed's 64 tasks; scale the target to this task count.
                let scaled = serial_target.mul_f64(seed_sum::TASKS as f64 / tasks as f64);
                seed_sum::calibrate(scaled)
            }
        };
        Ok(Work {
            tasks,
            chunk,
            repeat,
        })
    }

    /// The closed form of the total.
    pub fn expected(&self) -> u128 {
        seed_sum::expected_total(self.tasks as u64, self.chunk)
    }
}

/// Parses the N argument of `sum`: `0..=tasks`, else a usage error naming `<N>`.
pub fn parse_limit(raw: &str, tasks: usize) -> anyhow::Result<usize> {
    let why = format!("must be 0..={tasks} (0 = no limit)");
    match raw.trim().parse::<i64>() {
        Ok(n) if n >= 0 && n as u64 <= tasks as u64 => Ok(n as usize),
        _ => Err(usage("<N>", raw, &why)),
    }
}

/// The level's label: `0 (no limit)` for 0, else the number.
pub fn level_label(level: usize) -> String {
    if level == 0 {
        "0 (no limit)".to_string()
    } else {
        level.to_string()
    }
}

/// The run-queue waits of exiting task threads, each read by the thread itself.
#[derive(Default)]
struct ThreadWaits {
    nanos: std::sync::atomic::AtomicU64,
    unavailable: std::sync::Mutex<Option<String>>,
}

impl ThreadWaits {
    fn record(&self) {
        match throttle_probe::schedstat::thread() {
            Ok(s) => {
                let ns = u64::try_from(s.run_queue_wait.as_nanos()).unwrap_or(u64::MAX);
                self.nanos
                    .fetch_add(ns, std::sync::atomic::Ordering::Relaxed);
            }
            Err(e) => {
                let mut slot = self.unavailable.lock().unwrap_or_else(|p| p.into_inner());
                slot.get_or_insert(e.reason);
            }
        }
    }

    fn total(&self) -> Result<Duration, String> {
        let slot = self.unavailable.lock().unwrap_or_else(|p| p.into_inner());
        match slot.as_ref() {
            Some(reason) => Err(reason.clone()),
            None => Ok(Duration::from_nanos(
                self.nanos.load(std::sync::atomic::Ordering::Relaxed),
            )),
        }
    }
}

/// Runs the batch once in `mode` at `level` and measures it with the probe. `pool` must be
/// `Some` in pool mode. Returns the sample and the sum check.
///
/// In threads mode the task threads exit before the span ends, and Linux drops an exited thread's
/// schedstat, so the process-wide sum would miss nearly all of it. Instead each task thread reads
/// its own `/proc/thread-self/schedstat` as its last act and the waits are summed (exact for
/// those threads; the main thread, which only spawns and joins, is left out).
pub fn measure_once(
    mode: Mode,
    level: usize,
    work: &Work,
    pool: Option<&Pool>,
) -> anyhow::Result<(Sample, Check)> {
    let limit = (level > 0).then_some(level);
    let thread_waits = ThreadWaits::default();
    let before = Snapshot::now();
    let got = match (mode, pool) {
        (Mode::Threads, _) => {
            seed_sum::run_threads_observed(work.tasks, work.chunk, work.repeat, limit, &|| {
                thread_waits.record()
            })
        }
        (Mode::Pool, Some(pool)) => {
            seed_sum::run_pool(pool, work.tasks, work.chunk, work.repeat, limit)
        }
        (Mode::Pool, None) => anyhow::bail!("internal error: pool mode without a pool"),
    };
    let span = before.elapsed();
    let mut sample = Sample::from_span(&span);
    if mode == Mode::Threads {
        sample.run_queue_wait = Some(thread_waits.total());
    }
    let expected = work.expected();
    let check = Check {
        expected: expected.to_string(),
        got: got.to_string(),
        ok: expected == got,
    };
    Ok((sample, check))
}

/// Builds a pool of one thread per task, for pool mode.
pub fn task_pool(tasks: usize) -> anyhow::Result<Pool> {
    Pool::new(tasks).map_err(|e| anyhow::anyhow!("creating a pool of {tasks} threads: {e}"))
}

/// Runs `throttle sum`.
pub fn run(args: &SumArgs, machine: Machine) -> anyhow::Result<Report> {
    let work = Work::from_flags(
        args.tasks,
        args.chunk,
        args.repeat,
        Duration::from_millis(args.work_ms),
    )?;
    let level = parse_limit(&args.n, work.tasks)?;
    let pool = match args.mode {
        Mode::Pool => Some(task_pool(work.tasks)?),
        Mode::Threads => None,
    };
    let (sample, check) = measure_once(args.mode, level, &work, pool.as_ref())?;
    let mut report = Report::new("sum", machine);
    report.param("tasks", work.tasks);
    report.param("chunk", work.chunk);
    report.param("repeat", work.repeat);
    report.param("mode", args.mode.name());
    report.param("level", level);
    report.param("expected_sum", work.expected().to_string());
    let mut section = Section::new(
        "sum",
        "seed 000: one batch",
        "mode",
        "concurrent tasks",
        true,
    );
    let x = if level == 0 { work.tasks } else { level } as f64;
    if let Some(mut row) = Row::from_samples(
        args.mode.name(),
        level as u64,
        &level_label(level),
        x,
        &[sample],
    ) {
        row.check = Some(check);
        section.rows.push(row);
    }
    report.sections.push(section);
    Ok(report)
}

/// The seed's output line (`    N -- seconds`), plus details with `--verbose`.
pub fn render(report: &Report, verbose: bool) -> String {
    let Some(row) = report.sections.first().and_then(|s| s.rows.first()) else {
        return String::new();
    };
    let mut out = format!("{:>5} -- {:.3}\n", row.level, row.wall.median);
    if verbose {
        let p = |k: &str| {
            report
                .parameters
                .get(k)
                .map_or(String::new(), |v| v.to_string())
        };
        out.push_str(&format!(
            "mode {}, {} tasks × chunk {} × repeat {}\n",
            row.series,
            p("tasks"),
            p("chunk"),
            p("repeat")
        ));
        out.push_str(&format!(
            "user {}, system {}, CPU/wall {}, switches {} voluntary / {} involuntary\n",
            units::secs(row.user),
            units::secs(row.system),
            units::ratio(row.cpu_per_wall),
            units::events(row.voluntary_switches),
            units::events(row.involuntary_switches)
        ));
        match (&row.run_queue_wait, &row.run_queue_wait_unavailable) {
            (Some(w), _) => out.push_str(&format!("run-queue wait {}\n", units::secs(*w))),
            (None, Some(why)) => out.push_str(&format!("run-queue wait unavailable: {why}\n")),
            (None, None) => {}
        }
        if let Some(c) = &row.check {
            let verdict = if c.ok { "ok" } else { "WRONG" };
            out.push_str(&format!(
                "sum {} (expected {}): {verdict}\n",
                c.got, c.expected
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::is_usage;

    #[test]
    fn limit_bounds() {
        assert_eq!(parse_limit("0", 64).expect("ok"), 0);
        assert_eq!(parse_limit("64", 64).expect("ok"), 64);
        for bad in ["65", "-1", "abc", ""] {
            let e = parse_limit(bad, 64).unwrap_err();
            assert!(is_usage(&e));
            assert_eq!(
                e.to_string(),
                format!("invalid value '{bad}' for '<N>': must be 0..=64 (0 = no limit)")
            );
        }
    }

    #[test]
    fn work_flags_are_checked() {
        assert!(Work::from_flags(0, Some(10), None, Duration::ZERO).is_err());
        assert!(Work::from_flags(64, Some(0), None, Duration::ZERO).is_err());
        assert!(Work::from_flags(64, Some(u64::MAX / 2), None, Duration::ZERO).is_err());
        let w = Work::from_flags(8, Some(100), None, Duration::ZERO).expect("valid");
        assert_eq!((w.tasks, w.chunk, w.repeat), (8, 100, 1));
    }

    #[test]
    fn one_run_sums_right() {
        let work = Work::from_flags(8, Some(1000), None, Duration::ZERO).expect("valid");
        let (sample, check) = measure_once(Mode::Threads, 2, &work, None).expect("runs");
        assert!(check.ok, "{check:?}");
        assert!(sample.wall > Duration::ZERO);
    }
}
