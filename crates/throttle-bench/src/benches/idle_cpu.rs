//! `idle_cpu`: CPU time a pool of all threads burns while idle, right after
//! a burst of work has woken every worker.
//!
//! Measured as the CPU time of every thread of the process but the calling one (which only
//! sleeps), summed over the threads' CPU clocks before and after a sleep of the calling
//! thread; each sample builds a fresh pool and drops it afterwards (and waits until the previous
//! sample's threads are gone), so no other pool of the run is alive during the window.
//! Reported as CPU seconds per second of idle.
//!
//! Each thread is read through its own CPU clock (`throttle_probe::ThreadClock`), which counts a
//! running thread's time up to the instant. Two other readings would not: the process CPU clock
//! (`CLOCK_PROCESS_CPUTIME_ID`) includes the caller, and `/proc/self/task/<tid>/schedstat`'s
//! first field is the runtime as last *stored*, which for a thread on a CPU lags by up to a
//! scheduler tick. A worker that ran the burst's last tasks until just before the window would
//! then have up to a tick of the *burst's* CPU booked inside the window (a schedstat reading
//! 80 µs into the window can have gained 0.7-1.6 ms, more than two CPUs can run in 80 µs).
//!
//! A fresh pool's first burst can end before its second worker was ever scheduled (a burst is
//! a few ms); that worker then starts inside the window, searches once and sleeps, 70-110 µs
//! of thread start-up, not of idling (`cargo run --release -p throttle --example idle_threads`
//! shows it per thread). So each sample runs one burst to start the pool's threads, lets the
//! pool idle [`WARM_IDLE`], and measures the window after a second burst; rayon's samples do
//! the same.

use std::hint::black_box;
use std::thread::sleep;
use std::time::Duration;

use anyhow::Result;
use rayon::prelude::*;
use throttle_probe::ThreadClock;
use throttle_workloads::kernels::spin;

use super::{peers, Settings};
use crate::harness::{run_interleaved, seconds, Baseline, Case, Report};

/// The idle window of the full run.
const WINDOW: Duration = Duration::from_secs(1);
/// The idle window under `--quick` (the result is scaled to one second).
const QUICK_WINDOW: Duration = Duration::from_millis(300);
/// How long a fresh pool idles between its first burst, which starts its threads, and the
/// measured one: long enough for every thread to have started and gone to sleep.
const WARM_IDLE: Duration = Duration::from_millis(50);
/// Burst size: tasks per thread and spin iterations per task (~a few ms in all).
const BURST_TASKS_PER_THREAD: usize = 64;
const BURST_SPIN: u64 = 20_000;

/// Threads of this process now (`/proc/self/status`), if readable.
fn thread_count() -> Option<usize> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("Threads:"))?
        .trim()
        .parse()
        .ok()
}

/// Waits (up to 2 s) until the process has no more than `base` threads: the previous sample's
/// pool must be gone before this one measures. rayon's `ThreadPool` drop does not join its
/// threads; they wake and exit afterwards, and that CPU time once landed in the *next*
/// sample's idle window (the throttle sample, interleaved after rayon's): 1.5 ms per second
/// where the pool itself burned about 0.1.
fn wait_for_threads(base: usize) {
    let start = std::time::Instant::now();
    while thread_count().is_some_and(|n| n > base) && start.elapsed() < Duration::from_secs(2) {
        sleep(Duration::from_millis(1));
    }
}

/// A clock for every thread of this process but the caller, as the threads are now.
fn other_threads() -> Result<Vec<ThreadClock>> {
    let me = ThreadClock::current().map(|c| c.tid());
    let mut clocks = Vec::new();
    for entry in std::fs::read_dir("/proc/self/task")? {
        let tid = entry?
            .file_name()
            .to_str()
            .and_then(|t| t.parse::<i32>().ok());
        if let Some(clock) = tid
            .filter(|&t| Some(t) != me)
            .and_then(ThreadClock::of_thread)
        {
            clocks.push(clock);
        }
    }
    Ok(clocks)
}

/// CPU seconds per second burned by the process's other threads across `window` of idling.
///
/// Each thread is read twice through one [`ThreadClock`], so both readings are of the same
/// thread even if its id is reused meanwhile; a thread started during the window counts with
/// all its time, and one that ended during it with none (the waits before the window make both
/// rare: every thread of the sample's pool has started and the previous pool's have ended).
fn idle_rate(window: Duration) -> Result<f64> {
    let clocks = other_threads()?;
    let before: Vec<Option<Duration>> = clocks.iter().map(ThreadClock::cpu_time).collect();
    sleep(window);
    let mut gained = Duration::ZERO;
    let mut alive = Vec::new();
    for (clock, before) in clocks.iter().zip(before) {
        if let (Some(before), Some(after)) = (before, clock.cpu_time()) {
            gained += after.saturating_sub(before);
            alive.push(clock.tid());
        }
    }
    for clock in other_threads()? {
        if !alive.contains(&clock.tid()) {
            gained += clock.cpu_time().unwrap_or_default();
        }
    }
    Ok(gained.as_secs_f64() / window.as_secs_f64())
}

/// Runs the bench.
pub fn run(settings: &Settings) -> Result<Report> {
    let window = if settings.quick { QUICK_WINDOW } else { WINDOW };
    let threads = settings.threads;
    let tasks = threads * BURST_TASKS_PER_THREAD;
    let base = thread_count().unwrap_or(usize::MAX);
    let cases = vec![
        Case::new("throttle", threads, move || {
            wait_for_threads(base);
            let pool = peers::throttle_pool(threads)?;
            let burst = || {
                pool.for_range(0..tasks, |_| {
                    black_box(spin(BURST_SPIN));
                })
            };
            burst();
            sleep(WARM_IDLE);
            burst();
            idle_rate(window)
        }),
        Case::new("rayon", threads, move || {
            wait_for_threads(base);
            let pool = peers::rayon_pool(threads)?;
            let burst = || {
                pool.install(|| {
                    (0..tasks).into_par_iter().for_each(|_| {
                        black_box(spin(BURST_SPIN));
                    })
                })
            };
            burst();
            sleep(WARM_IDLE);
            burst();
            idle_rate(window)
        }),
    ];
    let series = run_interleaved(settings.reps, false, cases)?;
    let what = format!(
        "CPU time of the pool's threads per 1 s of idle after a burst (window {} ms, fresh pool of {threads} threads per sample)",
        window.as_millis()
    );
    let baseline = Baseline {
        system: "rayon",
        threads,
        variant: None,
    };
    let mut report = Report::new("idle_cpu", what, baseline, series);
    let throttle = report.median_of("throttle", threads);
    // The target: ≤ 0.1 ms per s, about rayon's idle cost on this host (0.08 ms per s).
    report.target(
        "throttle idle CPU ≤ 0.1 ms per s",
        throttle,
        |c| c <= 0.1e-3,
        seconds,
    );
    Ok(report)
}
