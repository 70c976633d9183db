//! `limit_response`: how long a lowered limit takes to be in force. While all threads run a
//! workload, the limit drops from all to 1 and the bench times `Pool::await_concurrency`: the
//! time until no more than one thread holds a run slot. The bound depends on the workload: a
//! thread gives its slot back at its next task boundary, so fine-grained forks respond within
//! microseconds and a leaf that never forks holds its slot until it ends (`coarse`, 1 ms
//! leaves, bounds the response by about that).

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::{bail, Result};
use throttle::Pool;
use throttle_workloads::kernels::spin_for;

use super::{peers, Settings};
use crate::harness::{median, run_interleaved, seconds, Baseline, Case, Report};

/// Limit drops per sample (the sample is their median).
const DROPS: usize = 20;
const QUICK_DROPS: usize = 5;

fn fib(n: u32) -> u64 {
    if n < 2 {
        return u64::from(n);
    }
    let (a, b) = throttle::join(|| fib(n - 1), || fib(n - 2));
    a + b
}

/// Times `drops` limit drops while `load` runs in the pool from a background thread.
fn sample(pool: &Pool, drops: usize, load: &(dyn Fn() + Sync)) -> Result<f64> {
    let all = pool.threads();
    let stop = AtomicBool::new(false);
    let mut times = Vec::with_capacity(drops);
    std::thread::scope(|s| -> Result<()> {
        s.spawn(|| {
            while !stop.load(Ordering::Relaxed) {
                pool.install(load);
            }
        });
        for _ in 0..drops {
            std::thread::sleep(Duration::from_millis(5));
            let start = Instant::now();
            pool.set_concurrency(1)?;
            if !pool.await_concurrency(Duration::from_secs(10)) {
                stop.store(true, Ordering::Relaxed);
                bail!("the limit was not in force after 10 s");
            }
            times.push(start.elapsed().as_secs_f64());
            pool.set_concurrency(all)?;
        }
        stop.store(true, Ordering::Relaxed);
        Ok(())
    })?;
    Ok(median(&times))
}

/// Runs the bench.
pub fn run(settings: &Settings) -> Result<Report> {
    let threads = settings.threads.max(2);
    let drops = if settings.quick { QUICK_DROPS } else { DROPS };
    let pool = peers::throttle_pool(threads)?;
    let pool = &pool;
    let cases = vec![
        Case::new("throttle", threads, move || {
            sample(pool, drops, &|| {
                std::hint::black_box(fib(25));
            })
        })
        .variant("fib"),
        Case::new("throttle", threads, move || {
            sample(pool, drops, &|| {
                pool.for_range(0..100_000, |i| {
                    std::hint::black_box(i);
                })
            })
        })
        .variant("for_range"),
        Case::new("throttle", threads, move || {
            sample(pool, drops, &|| {
                pool.for_range_grain(0..64, 1, |_| spin_for(Duration::from_millis(1)))
            })
        })
        .variant("coarse"),
    ];
    let series = run_interleaved(settings.reps, false, cases)?;
    let what = format!(
        "time from set_concurrency(1) until at most 1 of {threads} threads holds a slot \
         (median of {drops} drops per sample), under fib(25) joins, a for_range of 10⁵ \
         indices, and 1 ms leaves"
    );
    let baseline = Baseline {
        system: "throttle",
        threads,
        variant: Some("fib"),
    };
    let mut report = Report::new("limit_response", what, baseline, series);
    for v in ["fib", "for_range", "coarse"] {
        if let Some(s) = report.find_variant("throttle", threads, Some(v)) {
            let line = format!(
                "{v}: a lowered limit was in force after {} (median; max {})",
                seconds(s.median()),
                seconds(s.max())
            );
            report.notes.push(line);
        }
    }
    Ok(report)
}
