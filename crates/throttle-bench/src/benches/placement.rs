//! `placement`: what steering a woken worker to its home CPU is worth (`PoolBuilder::placement`,
//! see `crates/throttle-core/src/placement.rs`). The same pool twice, placement on and off,
//! interleaved, on the two workloads where wake-ups decide the time: fib(28) on all threads
//! (each run starts by waking the workers) and a cold join after 20 ms of idle.

use std::time::Duration;

use anyhow::{Context, Result};
use throttle::Pool;

use super::Settings;
use crate::harness::{median, run_interleaved, time, Baseline, Case, Report};

fn fib(n: u32) -> u64 {
    if n < 2 {
        return u64::from(n);
    }
    let (a, b) = throttle::join(|| fib(n - 1), || fib(n - 2));
    a + b
}

fn pool(threads: usize, placement: bool) -> Result<Pool> {
    Pool::builder()
        .threads(threads)
        .placement(placement)
        .build()
        .context("building a throttle pool")
}

/// Median wall time of `calls` cold joins, each after 20 ms idle.
fn cold(pool: &Pool, calls: usize) -> f64 {
    let times: Vec<f64> = (0..calls)
        .map(|_| {
            std::thread::sleep(Duration::from_millis(20));
            time(|| pool.join(|| (), || ())).0
        })
        .collect();
    median(&times)
}

/// Runs the bench.
pub fn run(settings: &Settings) -> Result<Report> {
    let threads = settings.threads;
    let (n, calls) = if settings.quick { (24, 5) } else { (28, 20) };
    let on = pool(threads, true)?;
    let off = pool(threads, false)?;
    let (on, off) = (&on, &off);
    let cases = vec![
        Case::new("fib", threads, move || Ok(time(|| on.install(|| fib(n))).0)).variant("on"),
        Case::new(
            "fib",
            threads,
            move || Ok(time(|| off.install(|| fib(n))).0),
        )
        .variant("off"),
        Case::new("cold_join", threads, move || Ok(cold(on, calls))).variant("on"),
        Case::new("cold_join", threads, move || Ok(cold(off, calls))).variant("off"),
    ];
    let series = run_interleaved(settings.reps, true, cases)?;
    let what = format!(
        "placement on vs off: fib({n}) wall time, and a join after 20 ms idle (median of {calls})"
    );
    let baseline = Baseline {
        system: "fib",
        threads,
        variant: Some("off"),
    };
    let mut report = Report::new("placement", what, baseline, series);
    for system in ["fib", "cold_join"] {
        let on = report
            .find_variant(system, threads, Some("on"))
            .map(|s| s.median());
        let off = report
            .find_variant(system, threads, Some("off"))
            .map(|s| s.median());
        if let (Some(on), Some(off)) = (on, off) {
            report
                .notes
                .push(format!("{system}: placement on ÷ off = {:.3}", on / off));
        }
    }
    Ok(report)
}
