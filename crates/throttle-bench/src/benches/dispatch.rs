//! `dispatch_hot` and `dispatch_cold`: the latency of `pool.join(|| (), || ())`
//! called from a thread outside the pool.

use std::thread::sleep;
use std::time::{Duration, Instant};

use anyhow::Result;

use super::{peers, Settings};
use crate::harness::{median, run_interleaved, seconds, Baseline, Case, Report};

/// Back-to-back calls per hot sample (the sample is their median).
const HOT_CALLS: usize = 20_000;
const QUICK_HOT_CALLS: usize = 2_000;
/// Idle time before each cold call.
const COLD_IDLE: Duration = Duration::from_millis(20);
/// Cold calls per sample (the sample is their median).
const COLD_CALLS: usize = 10;
const QUICK_COLD_CALLS: usize = 5;

/// Times `calls` joins, each after `idle` (if any), and returns the median.
fn sample(calls: usize, idle: Option<Duration>, join: &dyn Fn() -> ((), ())) -> f64 {
    let times: Vec<f64> = (0..calls)
        .map(|_| {
            if let Some(idle) = idle {
                sleep(idle);
            }
            let start = Instant::now();
            std::hint::black_box(join());
            start.elapsed().as_secs_f64()
        })
        .collect();
    median(&times)
}

fn run(
    settings: &Settings,
    bench: &'static str,
    calls: usize,
    idle: Option<Duration>,
) -> Result<Report> {
    let threads = settings.threads;
    let pool = peers::throttle_pool(threads)?;
    let rayon = peers::rayon_pool(threads)?;
    let (pool, rayon) = (&pool, &rayon);
    let cases = vec![
        Case::new("throttle", threads, move || {
            Ok(sample(calls, idle, &|| pool.join(|| (), || ())))
        }),
        Case::new("rayon", threads, move || {
            Ok(sample(calls, idle, &|| rayon.join(|| (), || ())))
        }),
    ];
    let series = run_interleaved(settings.reps, true, cases)?;
    let what = match idle {
        None => format!(
            "pool.join(|| (), || ()) from outside, back to back; per-call median of {calls} calls"
        ),
        Some(d) => format!(
            "pool.join(|| (), || ()) from outside after {} ms idle; median of {calls} calls",
            d.as_millis()
        ),
    };
    let baseline = Baseline {
        system: "rayon",
        threads,
        variant: None,
    };
    let mut report = Report::new(bench, what, baseline, series);
    let limit = if idle.is_none() { 2e-6 } else { 30e-6 };
    let throttle = report.median_of("throttle", threads);
    report.target(
        format!("throttle median ≤ {}", seconds(limit)),
        throttle,
        |t| t <= limit,
        seconds,
    );
    Ok(report)
}

/// Runs `dispatch_hot`.
pub fn run_hot(settings: &Settings) -> Result<Report> {
    let calls = if settings.quick {
        QUICK_HOT_CALLS
    } else {
        HOT_CALLS
    };
    run(settings, "dispatch_hot", calls, None)
}

/// Runs `dispatch_cold`.
pub fn run_cold(settings: &Settings) -> Result<Report> {
    let calls = if settings.quick {
        QUICK_COLD_CALLS
    } else {
        COLD_CALLS
    };
    run(settings, "dispatch_cold", calls, Some(COLD_IDLE))
}
