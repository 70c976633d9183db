//! Every unsafe path of the runtime in cases small enough for Miri, which checks them for
//! undefined behaviour (use after free of a latch or a scope, data races, aliasing):
//!
//! ```sh
//! cargo +nightly miri test -p throttle --test miri
//! ```
//!
//! They also run as ordinary tests.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use throttle::{Pool, Throttle};

fn fib(n: u64) -> u64 {
    if n < 2 {
        return n;
    }
    let (a, b) = throttle::join(|| fib(n - 1), || fib(n - 2));
    a + b
}

fn fib_cx(cx: &throttle::Context, n: u64) -> u64 {
    if n < 2 {
        return n;
    }
    let (a, b) = cx.join(|cx| fib_cx(cx, n - 1), |cx| fib_cx(cx, n - 2));
    a + b
}

#[test]
fn joins_stolen_or_taken_back() {
    let pool = Pool::new(2).unwrap();
    assert_eq!(pool.install(|| fib(10)), 55);
    assert_eq!(pool.install_cx(|cx| fib_cx(cx, 10)), 55);
    for i in 0..10u64 {
        let (a, b) = pool.join(|| i * 2, || i * 3);
        assert_eq!((a, b), (i * 2, i * 3));
    }
}

#[test]
fn scopes_borrow_and_finish() {
    let pool = Pool::new(2).unwrap();
    let mut v = vec![0u64; 8];
    pool.scope(|s| {
        for (i, x) in v.iter_mut().enumerate() {
            s.spawn(move |_| *x = i as u64 * 10);
        }
    });
    assert_eq!(v, [0, 10, 20, 30, 40, 50, 60, 70]);
    let hits = AtomicUsize::new(0);
    pool.for_range(0..100, |_| {
        hits.fetch_add(1, Ordering::Relaxed);
    });
    assert_eq!(hits.into_inner(), 100);
    assert_eq!(pool.map_reduce(0..50, || 0, |i| i, |a, b| a + b), 1225);
}

#[test]
fn panics_wait_for_stolen_halves() {
    let pool = Pool::new(2).unwrap();
    for _ in 0..3 {
        let r = catch_unwind(AssertUnwindSafe(|| {
            pool.join(|| panic!("a"), || fib(8));
        }));
        assert!(r.is_err());
        let r = catch_unwind(AssertUnwindSafe(|| {
            pool.scope(|s| {
                s.spawn(|_| panic!("task"));
                s.spawn(|_| {
                    fib(6);
                });
            })
        }));
        assert!(r.is_err());
    }
    assert_eq!(pool.install(|| fib(8)), 21);
}

#[test]
fn pools_nest_across_each_other() {
    let a = Pool::new(1).unwrap();
    let b = Pool::new(1).unwrap();
    assert_eq!(a.install(|| b.install(|| a.install(|| fib(6)))), 8);
}

#[test]
fn the_semaphore_hands_permits_over() {
    let gate = Throttle::new(1);
    std::thread::scope(|s| {
        for _ in 0..3 {
            s.spawn(|| drop(gate.acquire()));
        }
    });
    assert!(gate
        .acquire_timeout(std::time::Duration::from_millis(1))
        .is_some());
    assert_eq!(gate.available(), 1);
}

/// The data-parallel layer's unsafe paths: in-place `collect` (also of a type that counts its
/// drops, with a panic in the middle), `into_par_iter` of a `Vec`, `par_chunks_mut`, and both
/// parallel sorts.
#[test]
fn iterators_collect_sort_and_drop_exactly_once() {
    use std::sync::atomic::AtomicIsize;
    use throttle::prelude::*;

    static LIVE: AtomicIsize = AtomicIsize::new(0);
    struct Counted(u64);
    impl Counted {
        fn new(v: u64) -> Counted {
            LIVE.fetch_add(1, Ordering::SeqCst);
            Counted(v)
        }
    }
    impl Drop for Counted {
        fn drop(&mut self) {
            LIVE.fetch_sub(1, Ordering::SeqCst);
        }
    }

    let pool = Pool::new(2).unwrap();
    pool.install(|| {
        let v: Vec<Counted> = (0..40u64).into_par_iter().map(Counted::new).collect();
        assert_eq!(v.iter().map(|c| c.0).sum::<u64>(), 780);
        let doubled: Vec<u64> = v.into_par_iter().map(|c| c.0 * 2).collect();
        assert_eq!(doubled[39], 78);
        let r = catch_unwind(AssertUnwindSafe(|| {
            (0..40u64)
                .into_par_iter()
                .map(|i| {
                    if i == 17 {
                        panic!("in map");
                    }
                    Counted::new(i)
                })
                .collect::<Vec<_>>()
        }));
        assert!(r.is_err());
        assert_eq!(
            LIVE.load(Ordering::SeqCst),
            0,
            "a Counted leaked or dropped twice"
        );

        let mut grid = vec![0u32; 64];
        grid.par_chunks_mut(8)
            .enumerate()
            .for_each(|(row, chunk)| chunk.iter_mut().for_each(|x| *x = row as u32));
        assert_eq!(grid[63], 7);

        let mut a: Vec<u64> = (0..60u64).map(|i| (i * 37) % 61).collect();
        let mut b = a.clone();
        a.par_sort_unstable();
        b.par_sort();
        let mut want = a.clone();
        want.sort();
        assert_eq!(a, want);
        assert_eq!(b, want);
    });
}
