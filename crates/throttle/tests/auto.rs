//! Auto mode: the pool chooses its own concurrency. The controller is driven with a
//! short interval here so that it changes `k` often while work runs; no test asserts a timing.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use throttle::controller::Reason;
use throttle::Pool;

fn spin(us: u64) {
    let t = Instant::now();
    while t.elapsed() < Duration::from_micros(us) {
        std::hint::spin_loop();
    }
}

fn fib(pool: &Pool, n: u64) -> u64 {
    if n < 2 {
        return n;
    }
    let (a, b) = pool.join(|| fib(pool, n - 1), || fib(pool, n - 2));
    a + b
}

fn fib_serial(n: u64) -> u64 {
    if n < 2 {
        n
    } else {
        fib_serial(n - 1) + fib_serial(n - 2)
    }
}

/// Runs many small spawned tasks for `dur`.
fn busy_for(pool: &Pool, dur: Duration) -> usize {
    busy_until(pool, dur, "", || true)
}

/// How long a test waits for what the controller's thread does while work runs: a hang guard,
/// never a timing target (a loaded host may not run that thread for a while).
const PATIENCE: Duration = Duration::from_secs(120);

/// Runs many small spawned tasks for at least `dur` and until `done()` holds; fails if it still
/// does not after [`PATIENCE`].
fn busy_until(pool: &Pool, dur: Duration, what: &str, done: impl Fn() -> bool) -> usize {
    let ran = AtomicUsize::new(0);
    let start = Instant::now();
    while start.elapsed() < dur || !done() {
        assert!(
            start.elapsed() < PATIENCE,
            "never, in {PATIENCE:?} of work: {what}"
        );
        pool.scope(|s| {
            for _ in 0..64 {
                s.spawn(|_| {
                    spin(50);
                    ran.fetch_add(1, Ordering::Relaxed);
                });
            }
        });
    }
    ran.into_inner()
}

#[test]
fn auto_mode_decides_logs_and_counts() {
    let pool = Pool::builder().threads(4).build().unwrap();
    pool.set_concurrency_auto_every(Duration::from_millis(5))
        .unwrap();
    assert!(pool.is_concurrency_auto());
    let scanned = || {
        pool.controller_log()
            .iter()
            .any(|e| e.reason == Reason::Scan)
    };
    assert!(
        busy_until(
            &pool,
            Duration::from_millis(400),
            "a scan step logged",
            scanned
        ) > 0
    );
    // The controller logs a decision before it applies and counts it, one at a time: the
    // changes in the log lie between the counts read before and after it, plus the one the
    // controller may be applying.
    let counted_before = pool.stats().controller_changes;
    let log = pool.controller_log();
    let counted_after = pool.stats().controller_changes;
    assert!(!log.is_empty(), "the controller scanned, so it logged");
    assert!(log.iter().any(|e| e.reason == Reason::Scan));
    for e in &log {
        assert!(
            (1..=4).contains(&e.old_k) && (1..=4).contains(&e.new_k),
            "{e:?}"
        );
        assert!(e.throughput >= 0.0);
    }
    assert!(log.windows(2).all(|w| w[0].at <= w[1].at));
    let changes = log.iter().filter(|e| e.old_k != e.new_k).count() as u64;
    // Stats count exactly the changes the log shows (the log is far from full here).
    assert!(
        counted_before <= changes && changes <= counted_after + 1,
        "{changes} changes logged, {counted_before} counted before, {counted_after} after"
    );
    assert!((1..=4).contains(&pool.concurrency()));

    // Back to a fixed limit (the controller thread is joined): the decisions in `stats()` are
    // exactly the log's, and the last one is the log's last.
    pool.set_concurrency(2).unwrap();
    let (log, s) = (pool.controller_log(), pool.stats());
    assert_eq!(s.controller_decisions, log.len() as u64);
    assert_eq!(s.controller_last, log.last().copied());
    assert_eq!(
        s.controller_changes,
        log.iter().filter(|e| e.old_k != e.new_k).count() as u64
    );
    let later = pool.stats().since(&s);
    assert_eq!(later.controller_decisions, 0);
    assert_eq!(later.controller_last, s.controller_last);
}

/// The decisions and their reasons are in the trace as well as in the log. The
/// controller records every step in the trace (holds included) and logs those that are not a
/// hold or idle; over a trace that covers the whole auto period, the two lists agree one for
/// one, `k` and reason, and every change of the limit the trace shows is a decision's `k`.
#[test]
fn the_trace_records_every_decision_of_the_controller() {
    let pool = Pool::builder()
        .threads(4)
        .trace_capacity(1 << 16)
        .build()
        .unwrap();
    pool.start_trace();
    pool.set_concurrency_auto_every(Duration::from_millis(5))
        .unwrap();
    let logged = || !pool.controller_log().is_empty();
    assert!(
        busy_until(
            &pool,
            Duration::from_millis(300),
            "a decision logged",
            logged
        ) > 0
    );
    // Back to a fixed limit: the controller thread is joined, so it decides nothing more.
    pool.set_concurrency(4).unwrap();
    let trace = pool.stop_trace();
    assert_eq!(trace.dropped(), 0, "the ring held the whole run");
    let log = pool.controller_log();
    assert!(!log.is_empty(), "the controller scanned, so it logged");
    let mut traced: Vec<(u64, u32, Reason)> = trace
        .tracks()
        .iter()
        .flat_map(|t| &t.events)
        .filter_map(|e| match e.kind {
            throttle::trace::EventKind::Controller { k, reason } => Some((e.at_ns, k, reason)),
            _ => None,
        })
        .collect();
    traced.sort_by_key(|d| d.0);
    let holds = traced
        .iter()
        .filter(|d| matches!(d.2, Reason::Hold | Reason::Idle))
        .count();
    let logged: Vec<(u32, Reason)> = log.iter().map(|e| (e.new_k as u32, e.reason)).collect();
    let in_trace: Vec<(u32, Reason)> = traced
        .iter()
        .filter(|d| !matches!(d.2, Reason::Hold | Reason::Idle))
        .map(|d| (d.1, d.2))
        .collect();
    assert_eq!(
        in_trace, logged,
        "({holds} holds and idles in the trace besides)"
    );
    // Each limit the trace shows after the start was set by a decision with that `k`, or by
    // the switch back to a fixed 4.
    let chosen: Vec<u32> = logged.iter().map(|d| d.0).collect();
    for (at, k) in trace.limit().into_iter().skip(1) {
        assert!(
            chosen.contains(&k) || k == 4,
            "the limit became {k} at {at} ns, which no decision chose: {logged:?}"
        );
    }
}

#[test]
fn builder_starts_in_auto_mode_and_stats_off_is_refused() {
    let pool = Pool::builder()
        .threads(2)
        .auto_concurrency()
        .build()
        .unwrap();
    assert!(pool.is_concurrency_auto());
    let quiet = Pool::builder().threads(2).stats(false).build().unwrap();
    let e = quiet.set_concurrency_auto().unwrap_err();
    assert!(e.to_string().contains("stats"), "{e}");
    assert!(Pool::builder()
        .threads(2)
        .stats(false)
        .auto_concurrency()
        .build()
        .is_err());
}

/// The limit the controller sets is enforced like a user's: a task starts beside no more tasks
/// than the largest limit in force since its thread's previous task began (a lowered limit
/// takes effect at each thread's next task boundary; see `tests/limit.rs`). The limits in
/// force come from the controller's log, which holds each decision (`at`, since the pool was
/// built) before the controller applies it: from one entry to the next the limit is that
/// entry's `old_k` or `new_k`. Each task notes when its thread's previous task began and when
/// it had counted itself in flight, and the check is made afterwards against the whole log,
/// with the pool's birth between two clock reads: no grace period, so a thread preempted for
/// any time cannot make a false violation. A spare thread or a slot taken over the limit (the
/// documented exceptions, `Pool::set_concurrency`) would excuse the run.
#[test]
fn in_flight_stays_within_the_controllers_limit() {
    use std::cell::Cell;
    use std::sync::Mutex;
    thread_local! {
        /// When this thread's previous task began.
        static PREV_BEGIN: Cell<Option<Instant>> = const { Cell::new(None) };
    }
    let threads = 4;
    let born_after = Instant::now();
    let pool = Pool::new(threads).unwrap();
    let born_before = Instant::now();
    pool.set_concurrency_auto_every(Duration::from_millis(2))
        .unwrap();
    let in_flight = AtomicUsize::new(0);
    // (previous task's begin, instant after counting in flight, tasks then in flight) of every
    // task that started beside another one.
    let crowded = Mutex::new(Vec::<(Instant, Instant, usize)>::new());
    let changed = || pool.stats().controller_changes > 0;
    let start = Instant::now();
    while start.elapsed() < Duration::from_millis(500) || !changed() {
        assert!(
            start.elapsed() < PATIENCE,
            "the controller changed k not once in {PATIENCE:?}"
        );
        pool.scope(|sc| {
            for _ in 0..32 {
                sc.spawn(|_| {
                    let begin = Instant::now();
                    let now = in_flight.fetch_add(1, Ordering::SeqCst) + 1;
                    let counted = Instant::now();
                    let prev = PREV_BEGIN.with(|p| p.replace(Some(begin)));
                    if let (true, Some(prev)) = (now > 1, prev) {
                        crowded.lock().unwrap().push((prev, counted, now));
                    }
                    spin(20);
                    in_flight.fetch_sub(1, Ordering::SeqCst);
                });
            }
        });
    }
    // Fixed again: the controller thread is joined, and its log is complete.
    pool.set_concurrency(threads).unwrap();
    let (log, stats) = (pool.controller_log(), pool.stats());
    assert_eq!(
        log.len() as u64,
        stats.controller_decisions,
        "no entry dropped"
    );
    // The largest limit in force at some time of `[from, to]` after the pool's birth: the
    // entry in force at `from` (before the first entry, the scan's start at all threads) and
    // every later one up to `to`.
    let largest = |from: Duration, to: Duration| {
        let (mut at_from, mut later) = (threads, 0);
        for e in &log {
            let k = e.old_k.max(e.new_k);
            if e.at <= from {
                at_from = k;
            } else if e.at <= to {
                later = later.max(k);
            }
        }
        at_from.max(later)
    };
    let violations: Vec<_> = crowded
        .into_inner()
        .unwrap()
        .into_iter()
        .filter(|&(prev, counted, now)| {
            // The birth lies between the two reads around `Pool::new`: the window is taken
            // as wide as that allows.
            let from = prev.saturating_duration_since(born_before);
            let to = counted.saturating_duration_since(born_after);
            now > largest(from, to)
        })
        .collect();
    let excused = stats.spares_started > 0 || stats.limit_takeovers > 0;
    if excused {
        eprintln!(
            "{} tasks over the limit, excused: {} spares, {} take-overs",
            violations.len(),
            stats.spares_started,
            stats.limit_takeovers
        );
    } else {
        assert!(
            violations.is_empty(),
            "{} tasks started beside more than the limit: {:?}",
            violations.len(),
            &violations[..violations.len().min(5)]
        );
    }
    assert!(
        stats.controller_changes > 0,
        "the controller changed k at least once"
    );
}

/// Switching between auto and fixed limits while nested fork-join runs: results stay right,
/// and once fixed, the controller (joined) never overrides the user's k.
#[test]
fn switching_auto_and_fixed_while_work_runs() {
    let pool = Pool::new(4).unwrap();
    let done = AtomicBool::new(false);
    std::thread::scope(|s| {
        s.spawn(|| {
            let mut i = 0;
            while !done.load(Ordering::SeqCst) {
                if i % 2 == 0 {
                    pool.set_concurrency_auto_every(Duration::from_millis(1))
                        .unwrap();
                } else {
                    pool.set_concurrency(1 + i % 4).unwrap();
                }
                i += 1;
                std::thread::sleep(Duration::from_millis(3));
            }
        });
        let want = fib_serial(20);
        for _ in 0..30 {
            assert_eq!(fib(&pool, 20), want);
            let sum = pool.map_reduce(0..10_000, || 0u64, |i| i as u64, |a, b| a + b);
            assert_eq!(sum, 49_995_000);
        }
        done.store(true, Ordering::SeqCst);
    });
    pool.set_concurrency(2).unwrap();
    assert!(!pool.is_concurrency_auto());
    busy_for(&pool, Duration::from_millis(30));
    assert_eq!(pool.concurrency(), 2);
}

/// Panics in auto mode reach the caller and the pool keeps working and deciding.
#[test]
fn panics_in_auto_mode() {
    let pool = Pool::new(3).unwrap();
    pool.set_concurrency_auto_every(Duration::from_millis(1))
        .unwrap();
    let prev = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    for i in 0..200u64 {
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            pool.join(
                || {
                    spin(100);
                    if i % 3 == 0 {
                        panic!("boom {i}");
                    }
                },
                || spin(100),
            )
        }));
        assert_eq!(r.is_err(), i % 3 == 0);
    }
    std::panic::set_hook(prev);
    assert_eq!(fib(&pool, 18), fib_serial(18));
    assert!(pool.is_concurrency_auto());
}

/// Stress: random-depth nested joins across two pools in auto mode with a 1 ms interval, so
/// limits change under deep nesting.
#[test]
fn nested_work_across_two_auto_pools() {
    let a = Pool::new(3).unwrap();
    let b = Pool::new(2).unwrap();
    a.set_concurrency_auto_every(Duration::from_millis(1))
        .unwrap();
    b.set_concurrency_auto_every(Duration::from_millis(1))
        .unwrap();
    for round in 0..20u64 {
        let n = 14 + round % 5;
        let (x, y) = a.join(|| b.install(|| fib(&a, n)), || fib(&b, n));
        assert_eq!(x, fib_serial(n));
        assert_eq!(y, fib_serial(n));
    }
}

/// "If any at all": in auto mode a loop too short to pay for threads runs on the calling
/// thread alone (counted in `Stats::serial_calls`), after its call site has measured both ways.
#[test]
fn short_loops_run_serially_after_learning() {
    let pool = Pool::builder()
        .threads(2)
        .auto_concurrency()
        .build()
        .unwrap();
    let total = AtomicUsize::new(0);
    // Learned when 48 of the last 64 calls ran serially (at most 1 in 16 explores the pool).
    // The site times its calls, and on a loaded host a preempted call misleads it for a while,
    // so the calls go on until that holds (a hang guard of two minutes ends them).
    let mut recent = std::collections::VecDeque::new();
    let start = std::time::Instant::now();
    let mut calls = 0;
    for call in 0.. {
        let before = pool.stats().serial_calls;
        pool.for_range(0..4, |i| {
            total.fetch_add(i, Ordering::Relaxed);
        });
        calls += 1;
        if call >= 136 {
            recent.push_back(pool.stats().serial_calls == before + 1);
            if recent.len() > 64 {
                recent.pop_front();
            }
        }
        let serial = recent.iter().filter(|&&s| s).count();
        if recent.len() == 64 && serial >= 48 {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "after {call} calls, {serial} of the last 64 ran serially"
        );
    }
    assert_eq!(total.into_inner(), calls * 6);
}

/// Per-call-site memory under concurrency, with many sites: results are always right.
#[test]
fn call_site_memory_is_correct_under_concurrency() {
    let pool = Pool::builder()
        .threads(3)
        .auto_concurrency()
        .build()
        .unwrap();
    // Each closure below is a different call site of map_reduce/for_range.
    fn site_a(pool: &Pool, n: usize) -> u64 {
        pool.map_reduce(0..n, || 0u64, |i| i as u64, |a, b| a + b)
    }
    fn site_b(pool: &Pool, n: usize) -> u64 {
        let s = AtomicUsize::new(0);
        pool.for_range(0..n, |i| {
            s.fetch_add(i, Ordering::Relaxed);
        });
        s.into_inner() as u64
    }
    fn site_c(pool: &Pool, n: usize) -> String {
        pool.map_reduce(0..n, String::new, |i| (i % 10).to_string(), |a, b| a + &b)
    }
    std::thread::scope(|s| {
        for t in 0..4 {
            let pool = &pool;
            s.spawn(move || {
                for round in 0..300usize {
                    let n = (round * 7 + t * 13) % 3000;
                    let want = (n as u64) * (n as u64).saturating_sub(1) / 2;
                    assert_eq!(site_a(pool, n), want);
                    assert_eq!(site_b(pool, n), want);
                    let str_n = n % 50;
                    let want_s: String = (0..str_n).map(|i| (i % 10).to_string()).collect();
                    assert_eq!(site_c(pool, str_n), want_s);
                }
            });
        }
    });
}

/// The serial way runs in the pool's context: inside it `current_num_threads()` is this pool's
/// (not the global pool's), and a `join` forks in this pool, never starting the global one.
/// Before, the serial way ran the body outside any pool.
#[test]
fn the_serial_way_runs_in_the_pools_context() {
    let threads = throttle::global_threads().unwrap() + 3;
    let pool = Pool::builder()
        .threads(threads)
        .auto_concurrency()
        .build()
        .unwrap();
    let mut serial = 0;
    // 300 calls, and on until one ran the serial way: a site whose first parallel call was
    // slow (over `ALWAYS_PARALLEL`, a preempted call on a loaded host) tries the serial way
    // only after a later timed parallel call was fast.
    let start = Instant::now();
    for call in 0.. {
        if call >= 300 && serial > 0 {
            break;
        }
        assert!(
            start.elapsed() < PATIENCE,
            "no call ran the serial way in {call} calls: the test saw nothing"
        );
        let before = pool.stats().serial_calls;
        let seen = AtomicUsize::new(0);
        pool.for_range(0..2, |_| {
            seen.store(throttle::current_num_threads(), Ordering::Relaxed);
            let (a, b) = throttle::join(throttle::current_num_threads, || 1);
            assert_eq!((a, b), (threads, 1));
        });
        assert_eq!(seen.into_inner(), threads);
        let sum = pool.map_reduce(
            0..2,
            || 0,
            |_| throttle::current_num_threads(),
            |a, b| a + b,
        );
        assert_eq!(sum, 2 * threads);
        serial += (pool.stats().serial_calls - before) as usize;
    }
}

/// The controller's k-independent work signal (`Stats::items`): a loop counts every index it
/// finished, at k = 1 (where it makes no tasks) as at k = 2, and so does a parallel iterator.
/// Before, a loop at k = 1 counted nothing, and auto mode took such intervals for idle ones.
#[test]
fn loops_count_their_items_at_every_k() {
    use throttle::prelude::*;
    let pool = Pool::new(2).unwrap();
    for k in [1, 2] {
        pool.set_concurrency(k).unwrap();
        let before = pool.stats();
        pool.for_range(0..10_000, |i| {
            std::hint::black_box(i);
        });
        let sum = pool.map_reduce(0..5_000, || 0u64, |i| i as u64, |a, b| a + b);
        assert_eq!(sum, 4_999 * 5_000 / 2);
        let got: u64 = pool.install(|| (0..3_000u64).into_par_iter().sum());
        assert_eq!(got, 2_999 * 3_000 / 2);
        let d = pool.stats().since(&before);
        assert_eq!(d.items, 18_000, "items counted at k = {k}");
    }
}

/// Fork-join work is counted in the same units at every `k` (a k-independent signal for
/// joins): every fork is published and counted, taken back or stolen, so `fib(20)` is the
/// same number of tasks at `k = 1` as at `k = 2`, and the same number as spawns when a scope
/// runs its spawns at either `k`.
#[test]
fn joins_and_spawns_count_the_same_at_every_k() {
    let pool = Pool::new(2).unwrap();
    let mut counted = Vec::new();
    for k in [1, 2, 1] {
        pool.set_concurrency(k).unwrap();
        let before = pool.stats();
        assert_eq!(pool.install(|| fib(&pool, 20)), fib_serial(20));
        pool.scope(|s| {
            for _ in 0..100 {
                s.spawn(|_| spin(1));
            }
        });
        counted.push(pool.stats().since(&before).tasks);
    }
    // fib(20) makes fib(21) - 1 = 10 945 forks (a join at every call above n = 1).
    let forks = fib_serial(21) - 1;
    assert_eq!(counted, vec![forks + 100; 3], "tasks at k = 1, 2, 1");
}

/// The counter moves while a loop runs, not only when it ends: a caller that runs a whole
/// loop alone (`k = 1`: nobody splits it off) flushed its count when the call returned, so
/// the controller saw each call as one lump, and an interval inside a call longer than the
/// interval as idle. (Measured with `examples/auto_newcomer -- 3 1 par_iter`: every scan
/// point read 1 M items / 50 ms ≈ 20 M items/s, at `k = 1` as at `k = 2`.) Here the loop reads
/// the counter halfway through itself.
#[test]
fn the_item_counter_moves_during_a_loop_at_k_1() {
    use std::sync::atomic::{AtomicU64, Ordering};
    use throttle::prelude::*;
    let pool = Pool::new(2).unwrap();
    pool.set_concurrency(1).unwrap();
    let n = 100_000usize;
    for how in ["for_range", "par_iter"] {
        let before = pool.stats().items;
        let halfway = AtomicU64::new(0);
        let body = |i: usize| {
            if i == n / 2 {
                halfway.store(pool.stats().items - before, Ordering::Relaxed);
            }
        };
        match how {
            "for_range" => pool.for_range(0..n, body),
            _ => pool.install(|| (0..n).into_par_iter().for_each(body)),
        }
        let seen = halfway.into_inner();
        // Blocks of about 800 indices, counted as each ends: all but the last one or two of
        // the first half (the slack is for blocks of any size the loop chooses).
        assert!(
            seen >= (n / 2 - 4096) as u64,
            "{how}: {seen} items counted halfway through {n}"
        );
        assert_eq!(pool.stats().items - before, n as u64, "{how}");
    }
}

/// Forks reach the shared counters while the call that makes them runs, in auto mode: the
/// controller asks each participant to publish its counts at its next push before it reads
/// them. Before, a participant published its forks when its call or task ended, so a sort or
/// a recursion that one call ran for a second reached the controller only at its end (in
/// rayon-demo's mergesort the scan's second sample came 0.85 s after the first). Here one
/// call forks until the test has seen its forks counted from outside; without the requests
/// the count stays where it was until the call returns, and the watchdog fails the test.
#[test]
fn forks_of_a_long_call_reach_the_counters_while_it_runs() {
    // One thread: nobody steals a fork and publishes it when the stolen task ends.
    let pool = Pool::new(1).unwrap();
    pool.set_concurrency_auto_every(Duration::from_millis(10))
        .unwrap();
    let seen = AtomicBool::new(false);
    let before = pool.stats().tasks;
    std::thread::scope(|s| {
        let call = s.spawn(|| {
            pool.install(|| {
                let mut rounds = 0u64;
                while !seen.load(Ordering::Relaxed) {
                    assert_eq!(fib(&pool, 12), fib_serial(12));
                    rounds += 1;
                }
                rounds
            })
        });
        let watchdog = Instant::now();
        let mut counted = true;
        while pool.stats().tasks == before {
            if watchdog.elapsed() > PATIENCE {
                counted = false;
                break;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        // Ends the call before judging, so that a failure does not leave it running.
        seen.store(true, Ordering::Relaxed);
        assert!(call.join().unwrap() > 0);
        assert!(
            counted,
            "no fork counted in {PATIENCE:?} while the call ran (stats: {:?})",
            pool.stats()
        );
    });
}
