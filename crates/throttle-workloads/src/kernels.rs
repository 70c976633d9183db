//! Small per-element kernels for parallel loops.

use std::hint::black_box;

/// A busy loop of `iterations` steps that the compiler cannot remove or
/// shorten; returns a value that depends on every step.
///
/// # Examples
///
/// ```
/// use throttle_workloads::kernels::spin;
///
/// assert_eq!(spin(0), 0);
/// assert_ne!(spin(1000), 0);
/// ```
pub fn spin(iterations: u64) -> u64 {
    let mut acc = 0u64;
    for i in 0..iterations {
        acc = black_box(
            acc.wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(i | 1),
        );
    }
    acc
}

/// Spins for `cpu` of this thread's CPU time (not wall time: a leaf that shares its core with
/// another takes longer, as real work would). Reads the thread's CPU clock every few
/// microseconds of work.
///
/// # Examples
///
/// ```
/// use std::time::{Duration, Instant};
/// use throttle_workloads::kernels::spin_for;
///
/// let t = Instant::now();
/// spin_for(Duration::from_millis(2));
/// assert!(t.elapsed() >= Duration::from_millis(2));
/// ```
pub fn spin_for(cpu: std::time::Duration) {
    let start = thread_cpu();
    while thread_cpu().saturating_sub(start) < cpu {
        black_box(spin(2_000));
    }
}

/// CPU time of the calling thread so far.
fn thread_cpu() -> std::time::Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec and the clock id is a constant the kernel knows.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID) failed");
    std::time::Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// A compute-bound map: a chain of 16 dependent square roots and
/// multiply-adds (tens of nanoseconds per element, almost no memory traffic
/// per unit of work). Finite for every finite `x`.
///
/// # Examples
///
/// ```
/// use throttle_workloads::kernels::compute_map;
///
/// assert!(compute_map(2.0).is_finite());
/// ```
pub fn compute_map(x: f64) -> f64 {
    let mut y = x.abs() + 1.0;
    for _ in 0..16 {
        y = (y * 1.000_001 + 0.5).sqrt() + 0.25;
    }
    y
}

/// A memory-bound map: one multiply-add per element, so a loop over a large
/// array is limited by memory bandwidth.
///
/// # Examples
///
/// ```
/// use throttle_workloads::kernels::memory_map;
///
/// assert_eq!(memory_map(1.0), 2.5);
/// ```
pub fn memory_map(x: f64) -> f64 {
    x * 2.0 + 0.5
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernels_are_deterministic_and_finite() {
        assert_eq!(spin(100), spin(100));
        for x in [-1e300, -1.0, 0.0, 1.0, 1e300] {
            assert!(compute_map(x).is_finite());
            assert_eq!(compute_map(x), compute_map(x));
        }
        assert_eq!(memory_map(0.0), 0.5);
    }
}
