//! `throttle __tasks` (hidden): a throttle program for the jobserver interop tests. Runs `--tasks`
//! CPU-bound tasks of `--micros` µs each on the global pool (which joins the jobserver in its
//! environment by default) and appends one line per task start and stop to `--log`:
//! `S|E <CLOCK_MONOTONIC ns> <pid>`. One `write(2)` per line on an `O_APPEND` file, so lines from
//! many processes never interleave; the monotonic clock is one clock machine-wide, so a sweep
//! over every process's lines gives the machine-wide count of running tasks at each instant.

use clap::Args;
use std::io::Write;
use std::time::{Duration, Instant};

/// Options of the hidden `__tasks` subcommand.
#[derive(Debug, Args)]
pub struct TasksArgs {
    /// Tasks to run.
    #[arg(long, default_value_t = 8)]
    pub tasks: usize,
    /// CPU time each task spins, in microseconds.
    #[arg(long, default_value_t = 20_000)]
    pub micros: u64,
    /// The log file to append to.
    #[arg(long)]
    pub log: std::path::PathBuf,
}

fn now_ns() -> u128 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec to the valid pointer we pass.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u128 * 1_000_000_000 + ts.tv_nsec as u128
}

/// Runs the tasks, logging each start and stop.
pub fn run(args: &TasksArgs) -> anyhow::Result<()> {
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&args.log)
        .map_err(|e| anyhow::anyhow!("opening {}: {e}", args.log.display()))?;
    let pool = throttle::global_pool()?;
    let pid = std::process::id();
    let spin = Duration::from_micros(args.micros);
    pool.for_range_grain(0..args.tasks, 1, |_| {
        // The start is stamped after the task holds its slot and the stop before it gives it back.
        let line = format!("S {} {pid}\n", now_ns());
        let _ = (&log).write_all(line.as_bytes());
        let t = Instant::now();
        while t.elapsed() < spin {
            std::hint::spin_loop();
        }
        let line = format!("E {} {pid}\n", now_ns());
        let _ = (&log).write_all(line.as_bytes());
    });
    Ok(())
}
