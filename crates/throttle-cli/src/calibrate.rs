//! Sizing work in time: how many iterations of a kernel take a given CPU time on this machine.

use std::time::{Duration, Instant};

use throttle_workloads::kernels;

/// Seconds one iteration of [`kernels::spin`] takes on the calling thread: the fastest of five
/// timed runs of a short loop, so an interruption does not inflate it.
pub fn spin_seconds_per_iteration() -> f64 {
    const PROBE: u64 = 2_000_000;
    let best = (0..5)
        .map(|_| {
            let start = Instant::now();
            std::hint::black_box(kernels::spin(PROBE));
            start.elapsed()
        })
        .min()
        .unwrap_or(Duration::from_millis(1));
    (best.as_secs_f64() / PROBE as f64).max(1e-12)
}

/// Iterations of [`kernels::spin`] that take about `seconds` of CPU, at least 1.
pub fn spin_iterations_for(seconds: f64) -> u64 {
    ((seconds / spin_seconds_per_iteration()).round() as u64).max(1)
}
