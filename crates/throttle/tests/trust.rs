//! Regression tests for the findings of a review of the runtime, one or more per finding.
//! Each of them failed (hung, or saw a wrong value) before the fix. None measures time: a hang
//! is caught by a watchdog that fails the test after a generous deadline.

mod common;

use common::debug_count;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Barrier};
use std::time::{Duration, Instant};
use throttle::{Pool, Throttle};

/// Runs `f` on its own thread (with a worker-sized stack) and fails if it has not finished after
/// `secs` seconds: the scenarios below used to hang forever.
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

fn spin_until(flag: &AtomicBool) {
    while !flag.load(Ordering::Acquire) {
        std::hint::spin_loop();
    }
}

fn spin_for(d: Duration) {
    let t = Instant::now();
    while t.elapsed() < d {
        std::hint::spin_loop();
    }
}

// ---- Finding 1: pending work is visible to idle threads without the owner's help ----

/// The second half of a join is stealable while the first half runs a leaf that never forks:
/// `a` waits for `b`, which only another thread can run. Hung forever when forks stayed private
/// until their owner's next fork.
#[test]
fn a_fork_under_a_long_leaf_is_taken_by_an_idle_thread() {
    within(60, "join(wait for b, b)", || {
        let pool = Pool::new(2).unwrap();
        for _ in 0..20 {
            // From outside the pool, and from inside one of its tasks (where a thread's forks
            // used to stay private until its next fork).
            let flag = AtomicBool::new(false);
            pool.join(|| spin_until(&flag), || flag.store(true, Ordering::Release));
            let flag = AtomicBool::new(false);
            pool.install(|| {
                throttle::join(|| spin_until(&flag), || flag.store(true, Ordering::Release))
            });
        }
    });
}

/// The same with the other worker busy when the join starts: it must find `b` once it is free.
#[test]
fn a_busy_worker_takes_the_hidden_half_when_it_frees_up() {
    within(60, "join behind a busy worker", || {
        let pool = Arc::new(Pool::new(2).unwrap());
        for _ in 0..5 {
            let busy_started = Arc::new(AtomicBool::new(false));
            let (p, started) = (pool.clone(), busy_started.clone());
            let busy = std::thread::spawn(move || {
                p.install(|| {
                    started.store(true, Ordering::Release);
                    spin_for(Duration::from_millis(20));
                })
            });
            spin_until(&busy_started);
            let flag = AtomicBool::new(false);
            pool.join(|| spin_until(&flag), || flag.store(true, Ordering::Release));
            busy.join().unwrap();
        }
    });
}

/// A thread waiting in a scope shares its own pending fork: `b` sets the flag the scope's spawn
/// waits for. Hung when the waiting thread could not run (or share) its own private forks.
#[test]
fn a_waiting_thread_runs_or_shares_its_own_pending_fork() {
    within(60, "join(scope(spawn waits for b), b)", || {
        for threads in [1, 2, 3] {
            let pool = Pool::new(threads).unwrap();
            let flag = AtomicBool::new(false);
            pool.join(
                || throttle::scope(|s| s.spawn(|_| spin_until(&flag))),
                || flag.store(true, Ordering::Release),
            );
        }
    });
}

// ---- Finding 2: pools nest in any order without deadlock ----

#[test]
fn nesting_a_b_a_does_not_deadlock() {
    let r = within(60, "a.install(b.install(a.install))", || {
        let a = Pool::new(1).unwrap();
        let b = Pool::new(1).unwrap();
        (0..100)
            .map(|i| a.install(|| b.install(|| a.install(|| i))))
            .sum::<usize>()
    });
    assert_eq!(r, (0..100).sum::<usize>());
}

#[test]
fn crossing_a_to_b_and_b_to_a_at_once_does_not_deadlock() {
    within(60, "A→B and B→A at the same time", || {
        let a = Arc::new(Pool::new(1).unwrap());
        let b = Arc::new(Pool::new(1).unwrap());
        for _ in 0..50 {
            let both_inside = Arc::new(Barrier::new(2));
            let t = {
                let (a, b, gate) = (a.clone(), b.clone(), both_inside.clone());
                std::thread::spawn(move || {
                    b.install(|| {
                        gate.wait();
                        a.install(|| 2)
                    })
                })
            };
            let x = a.install(|| {
                both_inside.wait();
                b.install(|| 1)
            });
            assert_eq!((x, t.join().unwrap()), (1, 2));
        }
    });
}

/// A task of pool A waits (join) for work that itself calls back into A.
#[test]
fn a_join_in_b_whose_stolen_half_calls_into_a() {
    let r = within(60, "A→B join whose half calls A", || {
        let a = Pool::new(1).unwrap();
        let b = Pool::new(2).unwrap();
        a.install(|| {
            b.install(|| {
                let (x, y) = throttle::join(|| a.install(|| 1), || a.install(|| 2));
                x + y
            })
        })
    });
    assert_eq!(r, 3);
}

// ---- Finding 3: nothing else runs on a thread while a panic unwinds ----

#[test]
fn no_task_runs_while_another_tasks_panic_unwinds() {
    std::panic::set_hook(Box::new(|_| {}));
    let ran_while_panicking = Arc::new(AtomicUsize::new(0));
    let innocent_ran = Arc::new(AtomicUsize::new(0));
    let (bad, ran) = (ran_while_panicking.clone(), innocent_ran.clone());
    let outcome = within(60, "panic with a stolen half", move || {
        let pool = Pool::new(2).unwrap();
        let b_started = AtomicBool::new(false);
        catch_unwind(AssertUnwindSafe(|| {
            pool.join(
                || {
                    spin_until(&b_started);
                    panic!("a panics while b runs elsewhere");
                },
                || {
                    b_started.store(true, Ordering::Release);
                    // Work for the panicking thread to pick up while it waits for us.
                    throttle::scope(|s| {
                        for _ in 0..64 {
                            s.spawn(|_| {
                                if std::thread::panicking() {
                                    bad.fetch_add(1, Ordering::SeqCst);
                                }
                                ran.fetch_add(1, Ordering::SeqCst);
                                spin_for(Duration::from_micros(200));
                            });
                        }
                    });
                },
            )
        }))
        .is_err()
    });
    let _ = std::panic::take_hook();
    assert!(outcome, "a's panic reaches the caller");
    assert_eq!(innocent_ran.load(Ordering::SeqCst), 64);
    assert_eq!(
        ran_while_panicking.load(Ordering::SeqCst),
        0,
        "tasks ran inside an unwinding panic"
    );
}

// ---- Finding 5: a lowered limit can be waited for, and holds afterwards ----

#[test]
fn await_concurrency_returns_once_the_lowered_limit_holds() {
    within(120, "await_concurrency", || {
        let threads = 4;
        let pool = Pool::new(threads).unwrap();
        let in_flight = AtomicUsize::new(0);
        let over = AtomicUsize::new(0);
        let phase_low = AtomicBool::new(false);
        let stop = AtomicBool::new(false);
        // Leaves run so far, and those that began in the low phase.
        let (leaves, low_leaves) = (AtomicUsize::new(0), AtomicUsize::new(0));
        let (before, alive) = std::thread::scope(|s| {
            s.spawn(|| {
                while !stop.load(Ordering::SeqCst) {
                    pool.for_range_grain(0..4096, 1, |_| {
                        let n = in_flight.fetch_add(1, Ordering::SeqCst) + 1;
                        if phase_low.load(Ordering::SeqCst) {
                            low_leaves.fetch_add(1, Ordering::SeqCst);
                            if n > 1 {
                                over.fetch_add(1, Ordering::SeqCst);
                            }
                        }
                        leaves.fetch_add(1, Ordering::SeqCst);
                        spin_for(Duration::from_micros(20));
                        in_flight.fetch_sub(1, Ordering::SeqCst);
                    });
                }
            });
            // Lowered once the loops run.
            while leaves.load(Ordering::SeqCst) < 4096 {
                std::thread::yield_now();
            }
            pool.set_concurrency(1).unwrap();
            assert!(pool.await_concurrency(Duration::from_secs(60)));
            // From here on at most one thread holds a slot, so at most one task runs.
            let before = (pool.stats(), debug_count(&pool, "spares"));
            phase_low.store(true, Ordering::SeqCst);
            while low_leaves.load(Ordering::SeqCst) < 4096 {
                std::thread::yield_now();
            }
            stop.store(true, Ordering::SeqCst);
            before
        });
        // The documented exceptions (`Pool::set_concurrency`): a spare standing in, a slot
        // taken over the limit. Neither is expected here; if one came, a second task in
        // flight is no violation.
        let d = pool.stats().since(&before);
        let exception = alive > 0 || d.spares_started > 0 || d.limit_takeovers > 0;
        let over = over.load(Ordering::SeqCst);
        if exception {
            eprintln!("{over} tasks beside another, excused: {d:?}, {alive} spares at first");
        } else {
            assert_eq!(over, 0);
        }
    });
}

// ---- Finding 8: dropping a pool inside its own task ----

/// The last handle of a pool is dropped by one of the pool's own tasks: no panic (joining the
/// current thread), no deadlock (waiting for the very task that drops it), and the task's
/// work is still done.
#[test]
fn the_last_handle_dropped_inside_its_own_task() {
    within(60, "drop inside own task", || {
        for _ in 0..20 {
            let pool = Arc::new(Pool::new(2).unwrap());
            let (tx, rx) = mpsc::channel();
            let last = pool.clone();
            let outer_dropped = Arc::new(AtomicBool::new(false));
            let dropped = outer_dropped.clone();
            pool.spawn(move || {
                spin_until(&dropped);
                let n = last.install(|| throttle::join(|| 20, || 22));
                // The outer handle is gone: this drop is the pool's last.
                assert_eq!(Arc::strong_count(&last), 1);
                drop(last);
                tx.send(n.0 + n.1).unwrap();
            });
            drop(pool);
            outer_dropped.store(true, Ordering::Release);
            assert_eq!(rx.recv().unwrap(), 42);
        }
    });
}

// ---- Finding 9: loops at the end of the index space ----

#[test]
fn loops_ending_at_usize_max_stay_in_range() {
    let pool = Pool::new(2).unwrap();
    let lo = usize::MAX - 600_000;
    let seen = AtomicUsize::new(0);
    let outside = AtomicUsize::new(0);
    pool.for_range(lo..usize::MAX, |i| {
        if i < lo {
            outside.fetch_add(1, Ordering::Relaxed);
        }
        seen.fetch_add(1, Ordering::Relaxed);
    });
    assert_eq!(outside.load(Ordering::Relaxed), 0);
    assert_eq!(seen.load(Ordering::Relaxed), 600_000);
    let n = pool.map_reduce(
        lo..usize::MAX,
        || 0usize,
        |i| usize::from(i >= lo),
        |a, b| a + b,
    );
    assert_eq!(n, 600_000);
    let n = throttle::map_reduce(usize::MAX - 10..usize::MAX, || 0, |_| 1, |a, b| a + b);
    assert_eq!(n, 10);
}

// ---- Finding 10: the histogram never counts time twice; a finished call's tasks are counted ----

#[test]
fn busy_histogram_adds_up_to_at_most_the_elapsed_time() {
    let pool = Pool::new(4).unwrap();
    std::thread::scope(|s| {
        for _ in 0..12 {
            s.spawn(|| {
                for _ in 0..2_000 {
                    pool.join(|| std::hint::black_box(1), || std::hint::black_box(2));
                }
            });
        }
    });
    let st = pool.stats();
    let total: Duration = st.busy_histogram.iter().sum();
    assert!(
        total <= st.elapsed,
        "histogram {total:?} > elapsed {:?}",
        st.elapsed
    );
    // Every thread that was busy was counted somewhere: the histogram is not empty.
    assert!(st.busy_histogram.iter().skip(1).any(|d| !d.is_zero()));
}

fn fib(n: u32) -> u64 {
    if n < 2 {
        return n as u64;
    }
    let (a, b) = throttle::join(|| fib(n - 1), || fib(n - 2));
    a + b
}

/// Joins made by `fib(n)`: one per inner node of the call tree.
fn joins(n: u32) -> u64 {
    if n < 2 {
        0
    } else {
        1 + joins(n - 1) + joins(n - 2)
    }
}

#[test]
fn a_finished_calls_tasks_are_counted_when_it_returns() {
    let pool = Pool::new(2).unwrap();
    for _ in 0..300 {
        let before = pool.stats().tasks;
        assert_eq!(pool.install(|| fib(12)), 144);
        let after = pool.stats().tasks;
        assert_eq!(after - before, joins(12));
    }
}

// ---- Finding 11: a timeout too large for the clock ----

#[test]
fn acquire_timeout_with_duration_max_is_no_timeout() {
    let gate = Throttle::new(1);
    let p = gate.acquire_timeout(Duration::MAX);
    assert!(p.is_some());
}

// ---- Finding 12: threads queued for a slot are served in order ----

#[test]
fn a_limited_pool_finishes_many_outside_callers() {
    // Many outside callers compete for one slot; each must be served (FIFO queue, no lost slot).
    within(120, "many callers, one slot", || {
        let pool = Pool::new(2).unwrap();
        pool.set_concurrency(1).unwrap();
        std::thread::scope(|s| {
            for t in 0..8u64 {
                let pool = &pool;
                s.spawn(move || {
                    for i in 0..200u64 {
                        let (x, y) = pool.join(|| t, || i);
                        assert_eq!((x, y), (t, i));
                    }
                });
            }
        });
        let s = pool.stats();
        assert!(s.tasks >= 8 * 200);
    });
}
