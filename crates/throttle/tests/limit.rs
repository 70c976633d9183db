//! The live concurrency limit: an in-flight counter inside tasks never exceeds the limit in force,
//! while another thread changes the limit at random.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use throttle::Pool;

/// A tiny deterministic RNG (xorshift64*), so failures reproduce.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
}

fn spin(us: u64) {
    let t = Instant::now();
    while t.elapsed() < Duration::from_micros(us) {
        std::hint::spin_loop();
    }
}

/// A lowered limit takes effect at each thread's next task boundary, so a task already past its
/// check may still start. The test therefore keeps a `ceiling` that is raised *before* the limit
/// rises and lowered only a grace period *after* the limit falls (workers cross a boundary every
/// ~20 µs here, the grace is 20 ms). Every task checks that, when it started, the tasks in flight
/// (itself included) did not exceed the ceiling.
#[test]
fn in_flight_never_exceeds_limit_while_it_changes() {
    let threads = 4;
    let pool = Pool::new(threads).unwrap();
    let in_flight = AtomicUsize::new(0);
    let violations = AtomicUsize::new(0);
    let max_seen = AtomicUsize::new(0);
    let ceiling = AtomicUsize::new(threads);
    let changes = AtomicUsize::new(0);
    let done = AtomicBool::new(false);

    std::thread::scope(|s| {
        s.spawn(|| {
            let mut rng = Rng(0x1234_5678);
            let mut current = threads;
            while !done.load(Ordering::SeqCst) {
                let k = 1 + (rng.next() % threads as u64) as usize;
                if k >= current {
                    ceiling.store(k, Ordering::SeqCst);
                    pool.set_concurrency(k).unwrap();
                } else {
                    pool.set_concurrency(k).unwrap();
                    std::thread::sleep(Duration::from_millis(20));
                    ceiling.store(k, Ordering::SeqCst);
                }
                changes.fetch_add(1, Ordering::Relaxed);
                current = k;
                spin(200 + rng.next() % 800);
            }
        });

        for round in 0..40 {
            let work = |_: usize| {
                let before = ceiling.load(Ordering::SeqCst);
                let now = in_flight.fetch_add(1, Ordering::SeqCst) + 1;
                let after = ceiling.load(Ordering::SeqCst);
                max_seen.fetch_max(now, Ordering::Relaxed);
                if now > before.max(after) {
                    violations.fetch_add(1, Ordering::Relaxed);
                }
                spin(20);
                in_flight.fetch_sub(1, Ordering::SeqCst);
            };
            match round % 3 {
                0 => pool.for_range_grain(0..400, 1, work),
                1 => pool.for_range(0..400, work),
                _ => pool.scope(|s| {
                    for i in 0..200 {
                        s.spawn(move |_| work(i));
                    }
                }),
            }
        }
        done.store(true, Ordering::SeqCst);
    });
    assert_eq!(violations.load(Ordering::Relaxed), 0);
    assert!(
        changes.load(Ordering::Relaxed) > 1,
        "the limit never changed"
    );
    assert!(max_seen.load(Ordering::Relaxed) >= 1);
}

/// With the limit fixed at k, tasks never overlap more than k, callers included.
#[test]
fn fixed_limit_is_exact() {
    for k in 1..=3 {
        let pool = Pool::new(3).unwrap();
        pool.set_concurrency(k).unwrap();
        let in_flight = AtomicUsize::new(0);
        let max_seen = AtomicUsize::new(0);
        pool.for_range_grain(0..300, 1, |_| {
            let now = in_flight.fetch_add(1, Ordering::SeqCst) + 1;
            max_seen.fetch_max(now, Ordering::SeqCst);
            spin(50);
            in_flight.fetch_sub(1, Ordering::SeqCst);
        });
        let m = max_seen.load(Ordering::SeqCst);
        assert!(m <= k, "k = {k}: saw {m} tasks at once");
    }
}

#[test]
fn raising_the_limit_resumes_parked_workers() {
    let pool = Pool::new(2).unwrap();
    pool.set_concurrency(1).unwrap();
    let n = AtomicUsize::new(0);
    pool.for_range_grain(0..100, 1, |_| {
        n.fetch_add(1, Ordering::Relaxed);
    });
    pool.set_concurrency(2).unwrap();
    pool.for_range_grain(0..100, 1, |_| {
        n.fetch_add(1, Ordering::Relaxed);
    });
    assert_eq!(n.into_inner(), 200);
    assert_eq!(pool.concurrency(), 2);
}
