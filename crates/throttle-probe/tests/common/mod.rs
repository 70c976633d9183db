//! Helpers shared by the integration tests.

use std::time::Duration;

use throttle_probe::thread_cpu_time;

/// Spins on the calling thread until it has used `cpu` of CPU time (by the thread CPU clock), so
/// the amount of work does not depend on how fast or loaded the machine is.
pub fn burn_thread_cpu(cpu: Duration) -> u64 {
    let start = thread_cpu_time();
    let mut acc = 0u64;
    loop {
        for i in 0..10_000u64 {
            acc = std::hint::black_box(acc.wrapping_mul(6364136223846793005).wrapping_add(i));
        }
        if thread_cpu_time() - start >= cpu {
            return acc;
        }
    }
}

/// `|a - b| / b`.
pub fn relative_error(a: Duration, b: Duration) -> f64 {
    (a.as_secs_f64() - b.as_secs_f64()).abs() / b.as_secs_f64()
}
