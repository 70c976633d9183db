//! Regression tests for the scheduler's waiting: pending work is never
//! hidden from a thread asleep in a join wait, a stolen reserve leaves no fork private, and the
//! serial way of auto mode runs in the pool's context. Each scenario hung or answered wrongly
//! before its fix; none measures time (a hang is caught by a watchdog that prints the pool).

mod common;

use common::debug_count;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Duration;
use throttle::Pool;

/// Runs `f` on its own thread and fails, printing `state()`, if it has not finished after
/// `secs` seconds: the scenarios below used to hang forever. The thread has a 2 MiB stack, the
/// default of `std::thread::spawn` and of the test harness: a caller runs only its own call's
/// tree (isolated helping), so it needs no more.
fn within<R: Send + 'static>(
    secs: u64,
    what: &str,
    state: impl Fn() -> String,
    f: impl FnOnce() -> R + Send + 'static,
) -> R {
    let (tx, rx) = mpsc::channel();
    std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(move || {
            let r = catch_unwind(AssertUnwindSafe(f));
            let _ = tx.send(r);
        })
        .unwrap();
    match rx.recv_timeout(Duration::from_secs(secs)) {
        Ok(Ok(r)) => r,
        Ok(Err(p)) => std::panic::resume_unwind(p),
        Err(_) => panic!(
            "{what}: still not done after {secs} s (hang); pool: {}",
            state()
        ),
    }
}

fn spin_until(flag: &AtomicBool) {
    while !flag.load(Ordering::Acquire) {
        std::hint::spin_loop();
    }
}

/// Waits until `pool`'s `Debug` shows at least `n` for `field` (the watchdog of the test
/// catches a wait that never ends).
fn until_debug_shows(pool: &Pool, field: &str, n: usize) {
    while debug_count(pool, field) < n {
        std::thread::yield_now();
    }
}

/// A worker asleep in a join wait is a sleeper like an idle one: when the thief of its fork
/// pushes new work (here the half that the thief's own first half waits for) and no other
/// thread could run it, the waiting worker is woken for it. Before, it slept on its latch where
/// no publisher could see it, and the pool hung (5 of 6 runs).
#[test]
fn a_thread_asleep_in_a_join_is_woken_for_new_work() {
    let pool = Arc::new(Pool::new(2).unwrap());
    let p = pool.clone();
    within(
        60,
        "join(wait, set) under a stolen half",
        move || format!("{:?}", p),
        move || {
            for round in 0..6 {
                let (tx, rx) = mpsc::channel();
                let me = pool.clone();
                pool.spawn(move || {
                    // On a worker: fork a half that the other worker steals (the first half
                    // waits until it started elsewhere); this worker then waits for it, first
                    // spinning, then asleep (the half waits until it is asleep: blocked, as a
                    // pool thread asleep in a wait counts).
                    let started = AtomicBool::new(false);
                    throttle::join(
                        || spin_until(&started),
                        || {
                            started.store(true, Ordering::Release);
                            until_debug_shows(&me, "blocked", 1);
                            let flag = AtomicBool::new(false);
                            throttle::join(
                                || spin_until(&flag),
                                || flag.store(true, Ordering::Release),
                            );
                        },
                    );
                    tx.send(round).unwrap();
                });
                assert_eq!(rx.recv().unwrap(), round);
            }
        },
    );
}

/// The same with a loop in that position: its blocks must spread to the worker that waits in
/// the join (before, all 200 iterations ran on one worker while the other slept in its join).
#[test]
fn a_loop_under_a_stolen_half_reaches_the_waiting_worker() {
    let pool = Arc::new(Pool::new(2).unwrap());
    let p = pool.clone();
    let spread = within(
        60,
        "for_range under a stolen half",
        move || format!("{:?}", p),
        move || {
            let (tx, rx) = mpsc::channel();
            let me = pool.clone();
            pool.spawn(move || {
                let threads = std::sync::Mutex::new(std::collections::HashSet::new());
                let started = AtomicBool::new(false);
                throttle::join(
                    || spin_until(&started),
                    || {
                        started.store(true, Ordering::Release);
                        // The other worker is asleep in its join wait before the loop starts.
                        until_debug_shows(&me, "blocked", 1);
                        let both = AtomicUsize::new(0);
                        throttle::for_range_grain(0..200, 1, |_| {
                            threads.lock().unwrap().insert(std::thread::current().id());
                            // Each iteration waits until two threads took part: a loop that
                            // only one thread can run never ends (the watchdog reports it).
                            while threads.lock().unwrap().len() < 2 {
                                std::hint::spin_loop();
                            }
                            both.fetch_add(1, Ordering::Relaxed);
                        });
                        assert_eq!(both.into_inner(), 200);
                    },
                );
                tx.send(threads.into_inner().unwrap().len()).unwrap();
            });
            rx.recv().unwrap()
        },
    );
    // Two at least: the woken worker and the thief (a spare may stand in beside them).
    assert!(
        spread >= 2,
        "the loop ran on one thread while the other slept"
    );
}

/// A caller's forks that thieves took are not counted as its reserve any more: after its first
/// two forks were stolen and run, its next fork is shareable, so a first half that waits for its
/// second half completes. Before, the count of the caller's forks in the injector went down only
/// when the caller took one back, so this join ran as a plain call and hung.
#[test]
fn a_stolen_reserve_leaves_no_fork_private() {
    let pool = Arc::new(Pool::new(2).unwrap());
    let p = pool.clone();
    within(
        60,
        "join after the reserve was stolen",
        move || format!("{:?}", p),
        move || {
            for _ in 0..10 {
                let (r1, r2) = (AtomicBool::new(false), AtomicBool::new(false));
                pool.install(|| {
                    throttle::join(
                        || {
                            throttle::join(
                                || {
                                    // Both older forks were taken by the worker and ran.
                                    spin_until(&r1);
                                    spin_until(&r2);
                                    let flag = AtomicBool::new(false);
                                    throttle::join(
                                        || spin_until(&flag),
                                        || flag.store(true, Ordering::Release),
                                    );
                                },
                                || r2.store(true, Ordering::Release),
                            )
                        },
                        || r1.store(true, Ordering::Release),
                    )
                });
            }
        },
    );
}

/// The same on a worker: its deque's live length is its reserve, so once thieves took its two
/// older forks, its next fork is shareable.
#[test]
fn a_workers_stolen_reserve_leaves_no_fork_private() {
    let pool = Arc::new(Pool::new(3).unwrap());
    let p = pool.clone();
    within(
        60,
        "worker join after the reserve was stolen",
        move || format!("{:?}", p),
        move || {
            for _ in 0..10 {
                let (tx, rx) = mpsc::channel();
                pool.spawn(move || {
                    let (r1, r2) = (AtomicBool::new(false), AtomicBool::new(false));
                    throttle::join(
                        || {
                            throttle::join(
                                || {
                                    spin_until(&r1);
                                    spin_until(&r2);
                                    let flag = AtomicBool::new(false);
                                    throttle::join(
                                        || spin_until(&flag),
                                        || flag.store(true, Ordering::Release),
                                    );
                                },
                                || r2.store(true, Ordering::Release),
                            )
                        },
                        || r1.store(true, Ordering::Release),
                    );
                    tx.send(()).unwrap();
                });
                rx.recv().unwrap();
            }
        },
    );
}

/// No fork is ever hidden, whatever its thread does: the reproduction, where the two
/// older forks are still pending when the innermost `join` is made, and are taken by the other
/// threads only *while* its first half spins on what its second half sets. Before, that join
/// ran as a plain call (its thread held two older stealable forks at that moment) and its
/// second half was invisible to every other thread: it hung in 5 of 5 runs. Now every fork's
/// second half is on its thread's deque, where an idle thread takes it without the owner's
/// help. From a caller and from a worker, on a pool of 2.
#[test]
fn a_fork_made_beside_older_pending_forks_is_never_hidden() {
    let pool = Arc::new(Pool::new(2).unwrap());
    let p = pool.clone();
    within(
        60,
        "join(join(join(spin_until(flag), set(flag)), ..), ..)",
        move || format!("{:?}", p),
        move || {
            let nested = || {
                let flag = AtomicBool::new(false);
                throttle::join(
                    || {
                        throttle::join(
                            || {
                                throttle::join(
                                    || spin_until(&flag),
                                    || flag.store(true, Ordering::Release),
                                )
                            },
                            || (),
                        )
                    },
                    || (),
                );
            };
            for _ in 0..20 {
                pool.install(nested);
                let (tx, rx) = mpsc::channel();
                pool.spawn(move || {
                    nested();
                    tx.send(()).unwrap();
                });
                rx.recv().unwrap();
            }
        },
    );
}

/// rayon's promise for `current_thread_index`: `Some(i)`, `i < current_num_threads()`, on
/// every thread that runs the pool's work (callers inside `install` included; they got `None`
/// before, so `buffers[current_thread_index().unwrap()]` panicked), and no two threads running
/// at the same instant share an index, also while several callers take part and the limit
/// changes under them.
#[test]
fn thread_indices_are_unique_among_running_threads() {
    let pool = Arc::new(Pool::new(3).unwrap());
    let in_use: Arc<Vec<AtomicBool>> = Arc::new((0..3).map(|_| AtomicBool::new(false)).collect());
    let done = Arc::new(AtomicBool::new(false));
    let limits = {
        let (pool, done) = (pool.clone(), done.clone());
        std::thread::spawn(move || {
            let mut k = 1;
            while !done.load(Ordering::Relaxed) {
                pool.set_concurrency(k).unwrap();
                k = k % 3 + 1;
                std::thread::sleep(Duration::from_micros(300));
            }
            pool.set_concurrency(3).unwrap();
        })
    };
    let callers: Vec<_> = (0..4)
        .map(|_| {
            let (pool, in_use) = (pool.clone(), in_use.clone());
            std::thread::spawn(move || {
                for _ in 0..20 {
                    let mine = pool.install(throttle::current_thread_index);
                    assert!(
                        mine.is_some_and(|i| i < 3),
                        "caller inside install: {mine:?}"
                    );
                    pool.install(|| {
                        throttle::for_range(0..2_000, |_| {
                            let i = throttle::current_thread_index().expect("a pool thread");
                            assert!(i < throttle::current_num_threads());
                            assert!(
                                !in_use[i].swap(true, Ordering::AcqRel),
                                "two running threads have index {i}"
                            );
                            for _ in 0..50 {
                                std::hint::spin_loop();
                            }
                            in_use[i].store(false, Ordering::Release);
                        })
                    });
                }
            })
        })
        .collect();
    for c in callers {
        c.join().unwrap();
    }
    done.store(true, Ordering::Relaxed);
    limits.join().unwrap();
}

/// rayon#592: a task takes a `Mutex` and calls `join` while other tasks take the same mutex.
/// While it waits for its stolen half, it helps only with that half's descendants, so it never
/// runs one of the other tasks on its stack (which would lock the mutex it holds: a deadlock).
/// Before, a waiter ran any pending work, and this hung.
#[test]
fn a_task_holding_a_lock_never_runs_another_that_takes_it() {
    lock_across_join(Pool::new(3).unwrap(), false);
}

/// [`a_task_holding_a_lock_never_runs_another_that_takes_it`] under a limit below the pool's
/// threads: 2 of 3. The owner holding the lock sleeps in its fork wait and gives back its slot;
/// an idle worker is woken for the queued tasks, so no spare starts; that worker and the thief
/// block on the lock *holding* the two slots, and the owner, woken, queues for a slot behind
/// them. Until 2026-11-28 it queued forever (1 of 1 runs hung here, state `active: 2,
/// waiting_for_slot: 1, blocked: 1`; and so with the take-over below disabled). Now the first
/// thread in the limit queue, after a millisecond, sees every slot holder blocked in the kernel
/// and takes a slot over the limit (sleep/README.md, "Slot holders blocked in the kernel").
#[test]
fn a_task_holding_a_lock_finishes_under_a_lower_limit() {
    let pool = Pool::new(3).unwrap();
    pool.set_concurrency(2).unwrap();
    lock_across_join(pool, false);
}

/// A caller queued for the only slot behind a holder blocked in the kernel takes a slot over
/// the limit, once: the holder (a caller inside `install`, limit 1 of 2) blocks until the
/// queued caller's call has run, which needs a slot. Hung forever before 2026-11-28.
#[test]
fn a_caller_queued_behind_a_blocked_holder_takes_a_slot_over_the_limit() {
    let pool = Arc::new(Pool::new(2).unwrap());
    pool.set_concurrency(1).unwrap();
    let p = pool.clone();
    within(
        60,
        "a caller queued behind a blocked slot holder",
        move || format!("{:?}", p),
        move || {
            let (holder, go_tx) = blocked_holder(&pool);
            pool.install(move || go_tx.send(()).unwrap());
            holder.join().unwrap();
            assert_eq!(pool.stats().limit_takeovers, 1);
            assert_eq!(pool.concurrency(), 1, "the limit is unchanged");
        },
    );
}

/// A caller that holds a slot of `pool` inside `install`, blocked in the kernel until the
/// returned sender sends; returns once it holds the slot.
fn blocked_holder(pool: &Arc<Pool>) -> (std::thread::JoinHandle<()>, mpsc::Sender<()>) {
    let (inside_tx, inside_rx) = mpsc::channel();
    let (go_tx, go_rx) = mpsc::channel::<()>();
    let pool = pool.clone();
    let holder = std::thread::spawn(move || {
        pool.install(move || {
            inside_tx.send(()).unwrap();
            go_rx.recv().unwrap();
        })
    });
    inside_rx.recv().unwrap();
    (holder, go_tx)
}

/// A thread that took a slot over the limit keeps it while the holder it went around stays
/// blocked: it forks 2,047 times (a task boundary each) under one take-over. Without the
/// take-over's lease it gave the slot back at each boundary and took it again a millisecond
/// later (a helper's review, 2026-11-28): one take-over per boundary.
#[test]
fn a_slot_taken_over_the_limit_is_kept_while_the_holder_stays_blocked() {
    fn tree(depth: u32) -> u64 {
        if depth == 0 {
            return 1;
        }
        let (a, b) = throttle::join(|| tree(depth - 1), || tree(depth - 1));
        a + b
    }
    let pool = Arc::new(Pool::new(2).unwrap());
    pool.set_concurrency(1).unwrap();
    let p = pool.clone();
    within(
        60,
        "forks under a slot taken over the limit",
        move || format!("{:?}", p),
        move || {
            let (holder, go_tx) = blocked_holder(&pool);
            let leaves = pool.install(|| tree(11));
            go_tx.send(()).unwrap();
            holder.join().unwrap();
            assert_eq!(leaves, 2048);
            assert_eq!(pool.stats().limit_takeovers, 1);
        },
    );
}

/// rayon#592 with a scope in the stolen half: the owner holds the lock and waits for its
/// stolen half, whose thief waits in a scope, while every other task takes the lock. A scope's
/// wait runs only the thread's own older forks and the scope's own spawns. Before 2026-11-28 a
/// worker thread's scope wait ran work of any origin, fewer than 64 jobs deep: the thief took a
/// task that locks the owner's lock, blocked on it on its own stack, and the stolen half never
/// ended (1 of 1 runs hung here).
#[test]
fn a_stolen_half_waiting_for_a_scope_runs_no_task_that_takes_the_owners_lock() {
    lock_across_join(Pool::new(3).unwrap(), true);
}

/// Tasks of which every fourth takes a lock and joins while holding it, the others run 20 µs
/// (and, with `scope_in_half`, take the lock too, while the lock holder's second half runs a
/// scope of two spawns instead of plain work).
fn lock_across_join(pool: Pool, scope_in_half: bool) {
    let pool = Arc::new(pool);
    let p = pool.clone();
    within(
        60,
        "join while holding a lock other tasks take",
        move || format!("{:?}", p),
        move || {
            let m = std::sync::Mutex::new(0u64);
            let task = |i: u64| {
                if i % 4 != 0 {
                    // Most tasks leave the lock alone (unless `scope_in_half`), so threads are
                    // free to steal.
                    let _held = scope_in_half.then(|| m.lock().unwrap());
                    busy(i, 20);
                    return;
                }
                let mut held = m.lock().unwrap();
                let started = AtomicBool::new(false);
                let (a, b) = throttle::join(
                    || {
                        // Give a free thread the time to take the second half (bounded, so the
                        // test does not depend on it), then wait for it holding the lock.
                        let t = std::time::Instant::now();
                        while !started.load(Ordering::Acquire)
                            && t.elapsed() < Duration::from_millis(2)
                        {
                            std::hint::spin_loop();
                        }
                        busy(i, 1)
                    },
                    || {
                        started.store(true, Ordering::Release);
                        if !scope_in_half {
                            return busy(i + 1, 200);
                        }
                        throttle::scope(|s| {
                            s.spawn(move |_| {
                                busy(i, 200);
                            });
                            s.spawn(move |_| {
                                busy(i + 1, 200);
                            });
                        });
                        1
                    },
                );
                *held += a.min(1) + b.min(1);
            };
            for _ in 0..10 {
                pool.install(|| {
                    throttle::scope(|s| {
                        for i in 0..64 {
                            let task = &task;
                            s.spawn(move |_| task(i));
                        }
                    })
                });
            }
            assert_eq!(*m.lock().unwrap(), 10 * 16 * 2);
        },
    );
}

/// About `micros` µs of work that returns at least 1.
fn busy(seed: u64, micros: u64) -> u64 {
    let start = std::time::Instant::now();
    let mut x = seed | 1;
    while start.elapsed() < Duration::from_micros(micros) {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
    }
    x | 1
}

/// A pool thread queued for a run slot of *another* pool cannot run its own pool's work
/// meanwhile, so it counts as blocked there and a spare stands in. Here pool A's only worker
/// calls into pool B, whose only slot an outside caller holds until a job of A has run: with
/// the worker queued in B's limit queue and not counted, A's job had no runner and both calls
/// waited for each other forever (the stress test's rare hang had this shape: a pool with all
/// its threads neither running nor asleep, work queued).
#[test]
fn a_thread_queued_in_another_pools_limit_queue_is_stood_in_for() {
    let a = Arc::new(Pool::new(1).unwrap());
    let b = Arc::new(Pool::new(1).unwrap());
    let (pa, pb) = (a.clone(), b.clone());
    within(
        60,
        "a job of A while A's worker queues for B's slot",
        move || format!("A: {pa:?}; B: {pb:?}"),
        move || {
            for _ in 0..5 {
                let ran = Arc::new(AtomicBool::new(false));
                let holding = Arc::new(AtomicBool::new(false));
                let (in_b_tx, in_b_rx) = mpsc::channel();
                // An outside caller holds B's only slot until A's job has run.
                let holder = {
                    let (b, ran, holding) = (b.clone(), ran.clone(), holding.clone());
                    std::thread::spawn(move || {
                        b.install(|| {
                            holding.store(true, Ordering::Release);
                            spin_until(&ran);
                        })
                    })
                };
                spin_until(&holding);
                // A's only worker calls into B and queues there for the slot.
                {
                    let b = b.clone();
                    a.spawn(move || {
                        b.install(|| ());
                        in_b_tx.send(()).unwrap();
                    });
                }
                // A's worker queues for B's slot before the job below is published.
                until_debug_shows(&b, "waiting_for_slot", 1);
                let ran2 = ran.clone();
                a.spawn(move || ran2.store(true, Ordering::Release));
                holder.join().unwrap();
                in_b_rx.recv().unwrap();
            }
        },
    );
}

/// A fresh pool of two workers, one blocked in a fork wait (its half stolen, nothing of it
/// to help with), the other busy with the stolen half until the returned flag is set; the
/// receiver hears when the fork is done. Only a spare can run work published now.
fn blocked_and_busy() -> (Arc<Pool>, Arc<AtomicBool>, mpsc::Receiver<()>) {
    let pool = Arc::new(Pool::new(2).unwrap());
    let stolen = Arc::new(AtomicBool::new(false));
    let ran = Arc::new(AtomicBool::new(false));
    let (tx, rx) = mpsc::channel();
    let (s, r) = (stolen.clone(), ran.clone());
    pool.spawn(move || {
        throttle::join(
            || spin_until(&s),
            || {
                s.store(true, Ordering::Release);
                spin_until(&r);
            },
        );
        tx.send(()).unwrap();
    });
    spin_until(&stolen);
    // The owner finishes its half at once, finds nothing of the stolen one to help with, and
    // sleeps blocked.
    while !format!("{pool:?}").contains("blocked: 1") {
        std::thread::yield_now();
    }
    (pool, ran, rx)
}

/// Isolation costs no parallelism where the pool has a slot to spare: a worker blocked in a fork
/// wait (its half stolen, nothing of it to help with) gave back its slot; an unrelated spawn
/// published then, while the pool's other worker is busy with the stolen half, goes to a spare at
/// once. Were a spare started only when *every* thread was blocked, the spawn would wait for the
/// blocked thread's periodic starvation check (100 ms later; counted in
/// `Stats::starvation_rescues`) or for the busy worker. Here the busy half waits for the spawn, so
/// only a spare can run it; each round uses a fresh pool, so no idle spare of an earlier round is
/// there to wake.
///
/// Told apart by counts, not by time: under that rule every spare of a round is started by a
/// starvation check (one rescue each), so a round never starts more spares than it has
/// rescues; started at once, a round has one spare more than the checks started. A loaded
/// host may keep the spare's thread from running for 100 ms, and then a check rescues too
/// (and starts a second spare), which changes nothing here. The bound allows one round in five
/// that looks like that rule: a check that saw the spawn queued, then found the spare idle
/// after it had run the spawn, wakes it instead of starting one.
#[test]
fn a_blocked_waiters_slot_goes_to_a_spare_at_once() {
    let rounds = 5;
    let late = within(
        60,
        "an unrelated spawn beside a blocked waiter and a busy worker",
        || String::from("(pools of this test are per round)"),
        move || {
            let mut late = 0;
            for _ in 0..rounds {
                let (pool, ran, rx) = blocked_and_busy();
                let r = ran.clone();
                pool.spawn(move || r.store(true, Ordering::Release));
                rx.recv().unwrap();
                let stats = pool.stats();
                assert!(stats.spares_started >= 1, "{stats:?}");
                if stats.spares_started <= stats.starvation_rescues {
                    eprintln!("a round started no spare but by starvation checks: {stats:?}");
                    late += 1;
                }
            }
            late
        },
    );
    assert!(
        late <= 1,
        "{late} of {rounds} rounds started their spares by starvation checks only"
    );
}

/// A spare thread that waits for its own scope runs the scope's spawns itself, as a worker
/// does. Spares once waited like a user's thread, for other threads to run their spawns, and
/// counted as blocked meanwhile, so every scope on a spare started one more spare: on the
/// stress test's random trees, 256 spares (the cap) ended up asleep in scope waits with their
/// spawns queued and no thread left to run them, a hang in 2 of 6 runs of 16 M tasks.
///
/// [`blocked_and_busy`]: worker A blocked in a fork wait, worker B busy with the stolen half
/// until a spawn runs. The spawn runs on a spare (the only free runner) and opens
/// a scope of three spawns; they must all run on that spare, with no second spare started.
#[test]
fn a_spare_runs_its_own_scopes_spawns() {
    within(
        60,
        "a scope on a spare beside a blocked waiter and a busy worker",
        || String::from("(pools of this test are per round)"),
        || {
            for _ in 0..3 {
                let (pool, ran, rx) = blocked_and_busy();
                let (r, (spawns_tx, spawns_rx)) = (ran.clone(), mpsc::channel());
                pool.spawn(move || {
                    let owner = std::thread::current().id();
                    throttle::scope(|s| {
                        for _ in 0..3 {
                            let spawns_tx = spawns_tx.clone();
                            s.spawn(move |_| {
                                spawns_tx.send(std::thread::current().id()).unwrap();
                            });
                        }
                    });
                    spawns_tx.send(owner).unwrap();
                    r.store(true, Ordering::Release);
                });
                rx.recv().unwrap();
                let threads: Vec<_> = spawns_rx.iter().take(4).collect();
                let stats = pool.stats();
                assert!(
                    threads.iter().all(|t| *t == threads[3]),
                    "the scope's spawns ran on other threads than its owner: {stats:?}"
                );
                // One spare for the blocked waiter; a starvation check may start another when
                // a loaded host keeps the first one's thread from running for 100 ms, but the
                // scope's wait must start none.
                assert!(
                    stats.spares_started >= 1
                        && stats.spares_started <= 1 + stats.starvation_rescues,
                    "{stats:?}"
                );
            }
        },
    );
}

thread_local! {
    /// Set on the thread whose stack the tests below measure.
    static MEASURED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// On the measured thread, lowers `low` to the address of the caller's frame.
#[inline(never)]
fn note_depth(low: &AtomicUsize) {
    let here = 0u8;
    if MEASURED.with(std::cell::Cell::get) {
        let at = std::hint::black_box(&here) as *const u8 as usize;
        low.fetch_min(at, Ordering::Relaxed);
    }
}

/// A binary tree of joins `depth` deep.
fn own_tree(depth: u32, low: &AtomicUsize) -> u64 {
    note_depth(low);
    if depth == 0 {
        return 1;
    }
    let (a, b) = throttle::join(|| own_tree(depth - 1, low), || own_tree(depth - 1, low));
    a + b
}

/// A chain of joins whose *pushed* halves hold the rest of the chain: a thread that takes one
/// runs up to `n` levels of it on its stack.
fn stranger_chain(n: u32, low: &AtomicUsize) -> u64 {
    note_depth(low);
    if n == 0 {
        return 1;
    }
    let (_, rest) = throttle::join(|| (), || stranger_chain(n - 1, low));
    rest + 1
}

/// The deepest stack, in bytes below its entry, that a caller on a 2 MiB thread reaches while
/// it waits for a stolen half. A worker of the pool steals the half and holds on to it until
/// the test lets it go, 50 ms after the caller began to wait. With `strangers`, four chains of
/// 2 000 joins are spawned into the pool first, while the caller and that worker hold both of
/// its run slots, so they wait in its queue when the caller begins to wait.
fn caller_stack_use(strangers: bool) -> usize {
    let pool = Pool::new(2).unwrap();
    let low = Arc::new(AtomicUsize::new(usize::MAX));
    let (started, queued, released) = (
        AtomicBool::new(false),
        AtomicBool::new(false),
        AtomicBool::new(false),
    );
    std::thread::scope(|s| {
        let caller = std::thread::Builder::new()
            .stack_size(2 << 20)
            .spawn_scoped(s, || {
                MEASURED.with(|m| m.set(true));
                let top = 0u8;
                let top = std::hint::black_box(&top) as *const u8 as usize;
                let (a, b) = pool.install(|| {
                    throttle::join(
                        || {
                            spin_until(&started);
                            spin_until(&queued);
                            own_tree(6, &low)
                        },
                        || {
                            started.store(true, Ordering::Release);
                            spin_until(&released);
                            own_tree(6, &low)
                        },
                    )
                });
                assert_eq!((a, b), (64, 64));
                top - low.load(Ordering::Relaxed)
            })
            .unwrap();
        spin_until(&started);
        if strangers {
            for _ in 0..4 {
                let low = low.clone();
                pool.spawn(move || assert_eq!(stranger_chain(2_000, &low), 2_001));
            }
        }
        queued.store(true, Ordering::Release);
        std::thread::sleep(Duration::from_millis(50));
        released.store(true, Ordering::Release);
        caller.join().unwrap()
    })
}

/// A caller's stack holds its own tree only (stack use stays O(depth of the caller's own tree)).
/// While the caller waits for its stolen half, stranger chains 2 000 joins deep wait in the pool's
/// queue. A caller that helped with any work while it waited (as rayon's workers do) would run
/// them on its own stack: hundreds of KiB on top of its tree. Here its deepest frame among the
/// strangers may be at most twice as deep as alone, plus 64 KiB.
#[test]
fn a_callers_stack_holds_its_own_tree_only() {
    let alone = caller_stack_use(false);
    let crowded = caller_stack_use(true);
    eprintln!("caller's deepest stack: {alone} bytes alone, {crowded} among stranger chains");
    assert!(
        crowded <= 2 * alone + (64 << 10),
        "the caller's stack reached {crowded} bytes among strangers, {alone} alone"
    );
}
