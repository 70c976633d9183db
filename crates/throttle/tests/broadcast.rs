//! `Pool::broadcast`: every worker runs the operation once, from outside and inside the pool,
//! under any limit, while the limit changes, nested, across pools, with panics. None measures
//! time: a hang is caught by a watchdog that fails the test after a generous deadline.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};
use throttle::{BroadcastContext, Pool};

/// Runs `f` on its own thread and fails if it has not finished after `secs` seconds.
fn within<R: Send + 'static>(secs: u64, what: &str, f: impl FnOnce() -> R + Send + 'static) -> R {
    let (tx, rx) = mpsc::channel();
    std::thread::Builder::new()
        .stack_size(throttle::DEFAULT_STACK_SIZE)
        .spawn(move || {
            let r = catch_unwind(AssertUnwindSafe(f));
            let _ = tx.send(r);
        })
        .unwrap();
    match rx.recv_timeout(Duration::from_secs(secs)) {
        Ok(Ok(r)) => r,
        Ok(Err(p)) => std::panic::resume_unwind(p),
        Err(_) => panic!("{what}: still not done after {secs} s (hang)"),
    }
}

/// What a correct broadcast returns on `threads` workers: each index once, in order, each run
/// on the worker it names.
fn check(results: &[(usize, usize, Option<usize>)], threads: usize) {
    assert_eq!(results.len(), threads);
    for (i, &(index, n, current)) in results.iter().enumerate() {
        assert_eq!(index, i, "results in thread-index order");
        assert_eq!(n, threads);
        assert_eq!(current, Some(i), "op {i} ran on worker {current:?}");
    }
}

fn probe(ctx: BroadcastContext<'_>) -> (usize, usize, Option<usize>) {
    (
        ctx.index(),
        ctx.num_threads(),
        throttle::current_thread_index(),
    )
}

#[test]
fn from_outside_every_worker_runs_once() {
    within(60, "broadcast from outside", || {
        for threads in [1, 2, 3, 5] {
            let pool = Pool::new(threads).unwrap();
            for _ in 0..20 {
                check(&pool.broadcast(probe), threads);
            }
        }
    });
}

#[test]
fn from_inside_a_task_and_a_worker() {
    within(60, "broadcast from inside", || {
        let pool = Pool::new(3).unwrap();
        for _ in 0..20 {
            // From a caller inside `install` (not a worker).
            check(&pool.install(|| pool.broadcast(probe)), 3);
            // From tasks that run on workers (scope spawns run wherever a thread is free).
            let out = Mutex::new(Vec::new());
            pool.scope(|s| {
                for _ in 0..4 {
                    s.spawn(|_| {
                        // Not under the lock: a waiting broadcast helps, and may run the
                        // other tasks here.
                        let r = pool.broadcast(probe);
                        out.lock().unwrap().push(r);
                    });
                }
            });
            for r in out.into_inner().unwrap() {
                check(&r, 3);
            }
        }
    });
}

/// The case that hung a per-worker-mailbox design: a broadcast from inside a task with a limit
/// of 1. The caller holds the only slot; the workers asleep must be moved to the limit queue,
/// and the caller must give its slot back while it waits.
#[test]
fn from_inside_a_task_at_limit_one() {
    within(60, "broadcast inside a task, limit 1", || {
        for threads in [1, 2, 4] {
            let pool = Pool::new(threads).unwrap();
            pool.set_concurrency(1).unwrap();
            for _ in 0..20 {
                check(&pool.install(|| pool.broadcast(probe)), threads);
                check(&pool.broadcast(probe), threads);
                let out = pool.install(|| {
                    let (a, b) = throttle::join(|| pool.broadcast(probe), || pool.broadcast(probe));
                    (a, b)
                });
                check(&out.0, threads);
                check(&out.1, threads);
            }
        }
    });
}

/// At most `k` operations run at once (they run under the limit like any task).
#[test]
fn ops_run_at_most_k_at_a_time() {
    within(60, "broadcast under a limit", || {
        let pool = Pool::new(4).unwrap();
        for k in 1..=4 {
            pool.set_concurrency(k).unwrap();
            let running = AtomicUsize::new(0);
            let peak = AtomicUsize::new(0);
            let r = pool.broadcast(|ctx| {
                let now = running.fetch_add(1, Ordering::SeqCst) + 1;
                peak.fetch_max(now, Ordering::SeqCst);
                std::thread::sleep(Duration::from_millis(2));
                running.fetch_sub(1, Ordering::SeqCst);
                ctx.index()
            });
            assert_eq!(r, [0, 1, 2, 3]);
            assert!(peak.load(Ordering::SeqCst) <= k, "limit {k}, peak {peak:?}");
        }
    });
}

#[test]
fn while_the_limit_changes() {
    within(120, "broadcast while the limit changes", || {
        let pool = Arc::new(Pool::new(4).unwrap());
        let stop = Arc::new(AtomicBool::new(false));
        let changer = {
            let (pool, stop) = (pool.clone(), stop.clone());
            std::thread::spawn(move || {
                let mut k = 1;
                while !stop.load(Ordering::Relaxed) {
                    pool.set_concurrency(k).unwrap();
                    k = k % 4 + 1;
                    std::thread::sleep(Duration::from_micros(200));
                }
            })
        };
        for round in 0..300 {
            match round % 3 {
                0 => check(&pool.broadcast(probe), 4),
                1 => check(&pool.install(|| pool.broadcast(probe)), 4),
                _ => {
                    // Busy workers too: a parallel loop beside the broadcast.
                    let (r, _) = pool.join(
                        || pool.broadcast(probe),
                        || {
                            pool.for_range(0..10_000, |i| {
                                std::hint::black_box(i);
                            })
                        },
                    );
                    check(&r, 4);
                }
            }
        }
        stop.store(true, Ordering::Relaxed);
        changer.join().unwrap();
    });
}

/// Panics propagate after every op ran; the other results are dropped; the pool still works.
#[test]
fn a_panic_propagates_after_all_ops_ran() {
    within(60, "broadcast with panics", || {
        static DROPS: AtomicUsize = AtomicUsize::new(0);
        #[derive(Debug)]
        struct Counted;
        impl Drop for Counted {
            fn drop(&mut self) {
                DROPS.fetch_add(1, Ordering::SeqCst);
            }
        }
        let pool = Pool::new(4).unwrap();
        for limit in [4, 1] {
            pool.set_concurrency(limit).unwrap();
            DROPS.store(0, Ordering::SeqCst);
            let ran = AtomicUsize::new(0);
            let err = catch_unwind(AssertUnwindSafe(|| {
                pool.broadcast(|ctx| {
                    ran.fetch_add(1, Ordering::SeqCst);
                    if ctx.index() % 2 == 1 {
                        panic!("op {}", ctx.index());
                    }
                    Counted
                })
            }))
            .unwrap_err();
            assert_eq!(ran.load(Ordering::SeqCst), 4, "every op ran");
            assert_eq!(
                err.downcast_ref::<String>().map(String::as_str),
                Some("op 1"),
                "the lowest index's panic"
            );
            assert_eq!(
                DROPS.load(Ordering::SeqCst),
                2,
                "the two results were dropped"
            );
            check(&pool.broadcast(probe), 4);
            // From inside, too.
            let err = catch_unwind(AssertUnwindSafe(|| {
                pool.install(|| pool.broadcast(|ctx| assert_ne!(ctx.index(), 2)))
            }));
            assert!(err.is_err());
            check(&pool.install(|| pool.broadcast(probe)), 4);
        }
    });
}

/// Every op broadcasts again: each worker is the caller of one inner broadcast and runs its
/// share of all the others while it waits.
#[test]
fn nested_broadcast() {
    within(120, "nested broadcast", || {
        let pool = Pool::new(3).unwrap();
        for limit in [3, 2, 1] {
            pool.set_concurrency(limit).unwrap();
            for _ in 0..10 {
                let r = pool.broadcast(|outer| {
                    let inner = pool.broadcast(probe);
                    check(&inner, 3);
                    outer.index()
                });
                assert_eq!(r, [0, 1, 2]);
            }
        }
    });
}

/// A worker of pool A is away in pool B, waiting there (asleep on a latch) for work that waits
/// for A's broadcast, which needs that very worker: it must run its share from B.
#[test]
fn a_worker_away_in_another_pool_runs_its_share() {
    within(120, "broadcast across pools", || {
        let a = Pool::new(2).unwrap();
        let b = Pool::new(2).unwrap();
        for limit in [2, 1] {
            a.set_concurrency(limit).unwrap();
            b.set_concurrency(limit).unwrap();
            for _ in 0..10 {
                let out = a.broadcast(|_| {
                    // Every A worker goes into B; there one half of a join broadcasts on A
                    // while the other half waits for it.
                    b.install(|| {
                        let (r, _) = throttle::join(
                            || a.broadcast(probe),
                            || std::thread::sleep(Duration::from_millis(1)),
                        );
                        check(&r, 2);
                    })
                });
                assert_eq!(out.len(), 2);
                let r = b.install(|| a.broadcast(probe));
                check(&r, 2);
            }
        }
    });
}

/// Many broadcasts from several threads at once (outside callers and tasks), with random
/// limits: each one completes.
#[test]
fn stress_many_concurrent_broadcasts() {
    within(300, "broadcast stress", || {
        let pool = Arc::new(Pool::new(3).unwrap());
        let rounds = std::env::var("THROTTLE_BROADCAST_ROUNDS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(250usize);
        let start = Instant::now();
        let callers: Vec<_> = (0..3)
            .map(|t| {
                let pool = pool.clone();
                std::thread::spawn(move || {
                    let mut seed = 0x9E37_79B9_7F4A_7C15u64 ^ t;
                    for _ in 0..rounds {
                        seed ^= seed << 13;
                        seed ^= seed >> 7;
                        seed ^= seed << 17;
                        if t == 0 {
                            pool.set_concurrency(1 + (seed % 3) as usize).unwrap();
                        }
                        match seed % 4 {
                            0 => check(&pool.broadcast(probe), 3),
                            1 => check(&pool.install(|| pool.broadcast(probe)), 3),
                            2 => pool.scope(|s| {
                                s.spawn(|_| check(&pool.broadcast(probe), 3));
                                s.spawn(|_| {
                                    pool.for_range(0..1000, |i| {
                                        std::hint::black_box(i);
                                    })
                                });
                            }),
                            _ => {
                                let r = pool.broadcast(|_| pool.broadcast(|c| c.index()));
                                assert!(r.iter().all(|v| *v == [0, 1, 2]));
                            }
                        }
                    }
                })
            })
            .collect();
        for c in callers {
            c.join().unwrap();
        }
        let _ = start;
    });
}
