//! Results equal the serial answer for random sizes and random nesting, from inside the pool and
//! from many outside threads at once.

use proptest::prelude::*;
use std::sync::atomic::{AtomicU64, Ordering};
use throttle::Pool;

/// A random nested computation: a recursive sum over a range that forks with `join`, spawns
/// with `scope`, loops with `for_range` and reduces with `map_reduce`, chosen by the range.
fn nested(lo: u64, hi: u64, salt: u64) -> u64 {
    let len = hi - lo;
    if len <= 4 {
        return (lo..hi).sum();
    }
    let mid = lo + len / 2;
    match (lo ^ salt) % 4 {
        0 => {
            let (a, b) = throttle::join(|| nested(lo, mid, salt), || nested(mid, hi, salt));
            a + b
        }
        1 => {
            let total = AtomicU64::new(0);
            throttle::scope(|s| {
                s.spawn(|_| {
                    total.fetch_add(nested(lo, mid, salt), Ordering::Relaxed);
                });
                s.spawn(|_| {
                    total.fetch_add(nested(mid, hi, salt), Ordering::Relaxed);
                });
            });
            total.into_inner()
        }
        2 => {
            let total = AtomicU64::new(0);
            let step = len.div_ceil(3);
            throttle::for_range(0..3, |k| {
                let a = (lo + k as u64 * step).min(hi);
                let b = (a + step).min(hi);
                total.fetch_add(nested(a, b, salt), Ordering::Relaxed);
            });
            total.into_inner()
        }
        _ => throttle::map_reduce(
            0..2,
            || 0u64,
            |k| {
                if k == 0 {
                    nested(lo, mid, salt)
                } else {
                    nested(mid, hi, salt)
                }
            },
            |a, b| a + b,
        ),
    }
}

fn serial_sum(lo: u64, hi: u64) -> u64 {
    (lo..hi).sum()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn nested_matches_serial(threads in 1usize..5, hi in 0u64..5_000, salt in any::<u64>()) {
        let pool = Pool::new(threads).unwrap();
        prop_assert_eq!(pool.install(|| nested(0, hi, salt)), serial_sum(0, hi));
    }

    #[test]
    fn map_reduce_keeps_order(threads in 1usize..5, n in 0usize..3_000) {
        let pool = Pool::new(threads).unwrap();
        let s = pool.map_reduce(0..n, Vec::new, |i| vec![i], |mut a, b| { a.extend(b); a });
        prop_assert_eq!(s, (0..n).collect::<Vec<_>>());
    }

    #[test]
    fn for_range_visits_each_index_once(threads in 1usize..5, n in 0usize..20_000, grain in 0usize..300) {
        let pool = Pool::new(threads).unwrap();
        let seen: Vec<AtomicU64> = (0..n).map(|_| AtomicU64::new(0)).collect();
        pool.for_range(0..n, |i| { seen[i].fetch_add(1, Ordering::Relaxed); });
        prop_assert!(seen.iter().all(|c| c.swap(0, Ordering::Relaxed) == 1));
        pool.for_range_grain(0..n, grain, |i| { seen[i].fetch_add(1, Ordering::Relaxed); });
        prop_assert!(seen.iter().all(|c| c.load(Ordering::Relaxed) == 1));
    }
}

#[test]
fn many_outside_threads_at_once() {
    let pool = Pool::new(2).unwrap();
    std::thread::scope(|s| {
        for t in 0..8u64 {
            let pool = &pool;
            s.spawn(move || {
                for round in 0..20u64 {
                    let hi = 500 + t * 37 + round * 11;
                    assert_eq!(pool.install(|| nested(0, hi, t ^ round)), serial_sum(0, hi));
                    let (a, b) = pool.join(|| nested(0, hi, round), || serial_sum(0, hi));
                    assert_eq!(a, b);
                }
            });
        }
    });
}

#[test]
fn global_pool_free_functions() {
    assert_eq!(nested(0, 10_000, 7), serial_sum(0, 10_000));
}

#[test]
fn nested_pools() {
    let outer = Pool::new(2).unwrap();
    let inner = Pool::new(2).unwrap();
    let r = outer.install(|| {
        let (a, b) = throttle::join(
            || inner.install(|| nested(0, 3_000, 1)),
            || nested(0, 3_000, 2),
        );
        a + b
    });
    assert_eq!(r, 2 * serial_sum(0, 3_000));
}
