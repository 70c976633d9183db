//! Seed 000: sum of an arithmetic progression split over many CPU-bound tasks.
//!
//! Task `i` of `tasks` sums `1 + i·chunk ..= (i + 1)·chunk`, and repeats that
//! `repeat` times so that each task runs long enough to be preempted. The
//! total over all tasks is `1 + 2 + ... + tasks·chunk`, which
//! [`expected_total`] gives in closed form.

use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use throttle::{Pool, Throttle};

/// The number of tasks of the seed's experiment; [`calibrate`] assumes it.
pub const TASKS: usize = 64;

/// The largest chunk [`calibrate`] picks: the seed's own `CHUNK`. With 64
/// tasks the total `64·CHUNK·(64·CHUNK + 1) / 2` still fits a `u64` partial
/// sum per task; longer work is obtained with more repetitions instead.
pub const MAX_CHUNK: u64 = 30_000_000;

/// Sums task `index`'s slice `1 + index·chunk ..= (index + 1)·chunk`,
/// `repeat` times over, and returns the sum (of the last repetition).
///
/// Every addend passes through [`black_box`], so the compiler cannot replace
/// the loop by its closed form: the work stays proportional to
/// `chunk · repeat`, as in the seed (which turned optimisation off).
/// `repeat == 0` is treated as 1.
///
/// # Examples
///
/// ```
/// use throttle_workloads::seed_sum::task_sum;
///
/// // task 1 with chunk 3 sums 4 + 5 + 6
/// assert_eq!(task_sum(1, 3, 2), 15);
/// ```
pub fn task_sum(index: u64, chunk: u64, repeat: u32) -> u64 {
    let base = 1 + index * chunk;
    let mut result = 0u64;
    for _ in 0..repeat.max(1) {
        let mut sum = 0u64;
        let start = black_box(base);
        for value in start..start + chunk {
            sum = sum.wrapping_add(black_box(value));
        }
        result = black_box(sum);
    }
    result
}

/// The closed form of `1 + 2 + ... + tasks·chunk`: what the tasks' sums add up to.
///
/// # Examples
///
/// ```
/// use throttle_workloads::seed_sum::expected_total;
///
/// assert_eq!(expected_total(2, 3), 21); // 1 + 2 + ... + 6
/// ```
pub fn expected_total(tasks: u64, chunk: u64) -> u128 {
    let n = u128::from(tasks) * u128::from(chunk);
    n * (n + 1) / 2
}

/// Runs the seed's program: `tasks` OS threads, each running [`task_sum`] for
/// its index, gated by a [`Throttle`] of `limit` permits (`None` or
/// `Some(0)`: no semaphore, all threads contend). Returns the total.
///
/// # Panics
///
/// If a thread cannot be spawned (the process's thread limit is reached).
///
/// # Examples
///
/// ```
/// use throttle_workloads::seed_sum::{expected_total, run_threads};
///
/// assert_eq!(run_threads(8, 100, 1, None), expected_total(8, 100));
/// ```
pub fn run_threads(tasks: usize, chunk: u64, repeat: u32, limit: Option<usize>) -> u128 {
    run_threads_observed(tasks, chunk, repeat, limit, &|| {})
}

/// [`run_threads`], calling `at_exit` on each task thread as its last act (after its permit is
/// released). A measurement seam: the kernel forgets an exited thread's scheduler statistics,
/// so a caller that wants them (the CLI's run-queue wait) reads them there.
///
/// # Panics
///
/// If a thread cannot be spawned (the process's thread limit is reached).
///
/// # Examples
///
/// ```
/// use std::sync::atomic::{AtomicUsize, Ordering};
/// use throttle_workloads::seed_sum::{expected_total, run_threads_observed};
///
/// let exits = AtomicUsize::new(0);
/// let total = run_threads_observed(4, 100, 1, Some(2), &|| {
///     exits.fetch_add(1, Ordering::Relaxed);
/// });
/// assert_eq!(total, expected_total(4, 100));
/// assert_eq!(exits.into_inner(), 4);
/// ```
pub fn run_threads_observed(
    tasks: usize,
    chunk: u64,
    repeat: u32,
    limit: Option<usize>,
    at_exit: &(dyn Fn() + Sync),
) -> u128 {
    let gate = limit.filter(|&k| k > 0).map(Throttle::new);
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..tasks as u64)
            .map(|index| {
                let gate = gate.as_ref();
                s.spawn(move || {
                    let permit = gate.map(Throttle::acquire);
                    let sum = task_sum(index, chunk, repeat);
                    drop(permit);
                    at_exit();
                    sum
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| match h.join() {
                Ok(sum) => u128::from(sum),
                Err(payload) => std::panic::resume_unwind(payload),
            })
            .sum()
    })
}

/// Runs the same tasks on `pool`, one task per index, with the pool's live
/// concurrency limit set to `limit` (`None` or `Some(0)`: all of the pool's
/// threads; larger than the pool: clamped to it). The previous limit is
/// restored afterwards. Returns the total.
///
/// # Examples
///
/// ```
/// use throttle_workloads::seed_sum::{expected_total, run_pool};
///
/// let pool = throttle::Pool::new(2).unwrap();
/// assert_eq!(run_pool(&pool, 16, 100, 1, Some(1)), expected_total(16, 100));
/// ```
pub fn run_pool(pool: &Pool, tasks: usize, chunk: u64, repeat: u32, limit: Option<usize>) -> u128 {
    let threads = pool.threads().max(1);
    let k = limit
        .filter(|&k| k > 0)
        .unwrap_or(threads)
        .clamp(1, threads);
    let previous = pool.concurrency();
    let sums: Vec<AtomicU64> = (0..tasks).map(|_| AtomicU64::new(0)).collect();
    // `k` and `previous` are within 1..=threads, so the pool cannot refuse them.
    let _ = pool.set_concurrency(k);
    pool.for_range_grain(0..tasks, 1, |i| {
        sums[i].store(task_sum(i as u64, chunk, repeat), Ordering::Relaxed);
    });
    let _ = pool.set_concurrency(previous);
    sums.iter()
        .map(|s| u128::from(s.load(Ordering::Relaxed)))
        .sum()
}

/// Picks `(chunk, repeat)` so that running all [`TASKS`] tasks one after the
/// other takes about `target` on this machine.
///
/// It times a short [`task_sum`] (the fastest of a few tries, to skip
/// interruptions), scales linearly, and keeps `chunk ≤ MAX_CHUNK` by raising
/// `repeat` instead. The answer is at least `(1, 1)`.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use throttle_workloads::seed_sum::calibrate;
///
/// let (chunk, repeat) = calibrate(Duration::from_millis(10));
/// assert!(chunk >= 1 && repeat >= 1);
/// ```
pub fn calibrate(target: Duration) -> (u64, u32) {
    const PROBE_CHUNK: u64 = 1 << 18;
    let per_element = (0..5)
        .map(|_| {
            let start = Instant::now();
            black_box(task_sum(0, PROBE_CHUNK, 1));
            start.elapsed().as_secs_f64() / PROBE_CHUNK as f64
        })
        .fold(f64::INFINITY, f64::min)
        .max(1e-12);
    let elements_per_task = target.as_secs_f64() / per_element / TASKS as f64;
    if elements_per_task <= MAX_CHUNK as f64 {
        ((elements_per_task as u64).max(1), 1)
    } else {
        let repeat = (elements_per_task / MAX_CHUNK as f64).ceil();
        let chunk = (elements_per_task / repeat) as u64;
        (chunk.max(1), repeat.min(f64::from(u32::MAX)) as u32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn naive(index: u64, chunk: u64) -> u64 {
        (1 + index * chunk..=(index + 1) * chunk).sum()
    }

    #[test]
    fn task_sum_matches_naive_sum() {
        for chunk in [1, 2, 7, 100] {
            for index in 0..5 {
                assert_eq!(task_sum(index, chunk, 3), naive(index, chunk));
            }
        }
        assert_eq!(task_sum(3, 0, 1), 0);
    }

    #[test]
    fn task_sums_add_up_to_closed_form() {
        for (tasks, chunk) in [(1, 1), (4, 10), (64, 1000)] {
            let total: u128 = (0..tasks).map(|i| u128::from(task_sum(i, chunk, 1))).sum();
            assert_eq!(total, expected_total(tasks, chunk));
        }
    }

    #[test]
    fn threads_match_closed_form_at_every_limit() {
        for limit in [None, Some(0), Some(1), Some(3), Some(64)] {
            assert_eq!(run_threads(64, 500, 1, limit), expected_total(64, 500));
        }
    }

    #[test]
    fn pool_matches_closed_form_and_restores_limit() {
        let pool = Pool::new(2).expect("a pool of 2 threads");
        for limit in [None, Some(0), Some(1), Some(2), Some(64)] {
            assert_eq!(run_pool(&pool, 64, 500, 2, limit), expected_total(64, 500));
            assert_eq!(pool.concurrency(), 2);
        }
    }

    #[test]
    fn calibrate_gives_usable_sizes() {
        let (chunk, repeat) = calibrate(Duration::from_millis(5));
        assert!((1..=MAX_CHUNK).contains(&chunk));
        assert!(repeat >= 1);
    }
}
