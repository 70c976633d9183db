//! The live concurrency limit: an in-flight counter inside tasks never exceeds the limit in force,
//! while another thread changes the limit at random.

mod common;

use common::debug_count;
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;
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

/// A lowered limit takes effect at each thread's next task boundary, so a leaf already past
/// its thread's look at the limit may still start. The exact bound (`Pool::set_concurrency`):
/// a leaf starts beside no more leaves than the largest limit in force since its thread's
/// previous leaf began. Times are tickets of one SeqCst counter, never clock readings, so no
/// grace period is involved that a preempted thread could outlast: the changer takes a ticket
/// *before* it raises the limit and *after* it lowers it, and notes each; every leaf takes one
/// as it begins and one after it has counted itself in flight, and the leaves that started
/// beside others are judged afterwards against the changer's notes. The documented exceptions
/// (a spare standing in, a slot taken over the limit) are told apart as in
/// [`no_leaf_starts_beside_another_once_a_thread_saw_limit_one`]: the changer samples both
/// counts at each change, and a leaf whose window meets a stretch with either is not judged.
#[test]
fn in_flight_never_exceeds_limit_while_it_changes() {
    thread_local! {
        static PREV_BEGIN: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
    }
    let threads = 4;
    let pool = Pool::new(threads).unwrap();
    let seq = AtomicU64::new(1);
    // (ticket, the most the limit can be from that ticket until the next entry's).
    let limits = Mutex::new(vec![(0u64, threads)]);
    // (ticket, whether a spare or a take-over was seen since the previous sample).
    let samples = Mutex::new(vec![(0u64, false)]);
    let in_flight = AtomicUsize::new(0);
    // (previous leaf's begin ticket, ticket after counting in flight, leaves then in flight)
    // of the leaves that started beside another one.
    let crowded = Mutex::new(Vec::<(u64, u64, usize)>::new());
    let max_seen = AtomicUsize::new(0);
    let changes = AtomicUsize::new(0);
    let done = AtomicBool::new(false);
    let exceptions = || {
        let s = pool.stats();
        (
            s.spares_started,
            s.limit_takeovers,
            debug_count(&pool, "spares"),
        )
    };

    std::thread::scope(|s| {
        s.spawn(|| {
            let mut rng = Rng(0x1234_5678);
            let mut current = threads;
            let mut last = exceptions();
            let mut sample = || {
                let now = exceptions();
                let seen = now.0 != last.0 || now.1 != last.1 || now.2 > 0 || last.2 > 0;
                let ticket = seq.fetch_add(1, Ordering::SeqCst);
                samples.lock().unwrap().push((ticket, seen));
                last = now;
            };
            while !done.load(Ordering::SeqCst) {
                let k = 1 + (rng.next() % threads as u64) as usize;
                if k >= current {
                    let ticket = seq.fetch_add(1, Ordering::SeqCst);
                    limits.lock().unwrap().push((ticket, k));
                    pool.set_concurrency(k).unwrap();
                } else {
                    pool.set_concurrency(k).unwrap();
                    let ticket = seq.fetch_add(1, Ordering::SeqCst);
                    limits.lock().unwrap().push((ticket, k));
                }
                sample();
                changes.fetch_add(1, Ordering::Relaxed);
                current = k;
                spin(200 + rng.next() % 800);
            }
            // After every leaf: closes the last stretch.
            sample();
        });

        for round in 0..40 {
            let work = |_: usize| {
                let begin = seq.fetch_add(1, Ordering::SeqCst);
                let now = in_flight.fetch_add(1, Ordering::SeqCst) + 1;
                let counted = seq.fetch_add(1, Ordering::SeqCst);
                let prev = PREV_BEGIN.with(|p| p.replace(begin));
                max_seen.fetch_max(now, Ordering::Relaxed);
                // A thread's first leaf has no previous one: it may have looked at any time.
                if now > 1 && prev != 0 {
                    crowded.lock().unwrap().push((prev, counted, now));
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
    let (limits, samples) = (limits.into_inner().unwrap(), samples.into_inner().unwrap());
    // The most the limit was at some ticket of `[from, to]`: the entry in force at `from` and
    // every later one up to `to`.
    let largest = |from: u64, to: u64| {
        let (mut at_from, mut later) = (threads, 0);
        for &(t, k) in &limits {
            if t <= from {
                at_from = k;
            } else if t <= to {
                later = later.max(k);
            }
        }
        at_from.max(later)
    };
    // Whether a stretch between two samples that meets `[from, to]` saw an exception.
    let excused = |from: u64, to: u64| {
        samples
            .windows(2)
            .any(|w| w[1].1 && w[1].0 >= from && w[0].0 <= to)
    };
    let crowded = crowded.into_inner().unwrap();
    let over: Vec<(u64, u64, usize)> = crowded
        .iter()
        .copied()
        .filter(|&(from, to, now)| now > largest(from, to))
        .collect();
    let (excused, real): (Vec<(u64, u64, usize)>, Vec<_>) =
        over.iter().partition(|&&(f, t, _)| excused(f, t));
    eprintln!(
        "{} leaves started beside others; {} over the limit, {} of them beside a spare or a \
         take-over",
        crowded.len(),
        over.len(),
        excused.len()
    );
    assert!(
        real.is_empty(),
        "{} leaves started over the limit: {:?}",
        real.len(),
        &real[..real.len().min(5)]
    );
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

/// The exact form of the promise: once the limit has been 1 since a thread's previous leaf
/// *began*, that thread crosses a task boundary (and looks at the limit) before its next leaf,
/// so it starts no leaf while another thread's leaf is in flight. No grace period: a leaf that
/// began before the fall may finish, but no thread starts one after seeing the new limit.
///
/// An adversarial stress run once found ~2 violations per 20 M leaves of
/// `for_range_grain`: a thread that took its own fork back (`take_fork`) ran the second half's
/// leaf with no look at the limit, so a fork's two leaves counted as one task. Taking a fork
/// back is a task boundary now. Then, on a quiet host, about 4 % of leaves still started over
/// the limit: forks made as plain calls (while two older forks of the thread were pending) did
/// not look at all. Every fork is pushed and taken back now, and looks both times.
///
/// The one documented exception ([`Pool::set_concurrency`]): while a spare thread stands in, a
/// thread that slept in a wait takes its slot back over the limit and nobody pauses mid-task.
/// With the caller taking part, a spare does start here now and then (about one per 3 s run:
/// both workers asleep in fork waits while the caller's older forks wait in its deque), so a
/// period of limit 1 counts only if no spare was alive at any moment of it: none alive at its
/// start and at its end, and none started in between (`Stats::spares_started`). Before the
/// exception was measured apart, 3 % to 16 % of leaves were counted over the limit, all in
/// periods with a spare.
///
/// Why a claimed violation is real: `one_since` is a ticket of `seq` (SeqCst RMWs) taken after
/// `set_concurrency(1)` returned, and a leaf's `begin` ticket comes later in `seq`'s order, so
/// the new limit is visible to the thread's next check. `in_flight` is incremented before
/// `one_since` is read: if the limit rose in between, the read sees that (or a newer fall).
#[test]
fn no_leaf_starts_beside_another_once_a_thread_saw_limit_one() {
    let threads = 2;
    let pool = Pool::new(threads).unwrap();
    let seq = AtomicU64::new(1);
    // The `seq` ticket taken after the limit last fell to 1; u64::MAX while it is above 1.
    let one_since = AtomicU64::new(u64::MAX);
    let in_flight = AtomicUsize::new(0);
    // Violations by the ticket of the period of limit 1 they happened in.
    let violations = Mutex::new(HashMap::<u64, usize>::new());
    // Periods of limit 1 during which no spare was alive.
    let clean = Mutex::new(HashSet::<u64>::new());
    let leaves = AtomicUsize::new(0);
    let done = AtomicBool::new(false);
    // (spares started so far, spares alive now): `Stats` and the pool's `Debug`.
    let spares = || {
        let debug = format!("{pool:?}");
        let at = debug
            .find("spares: ")
            .expect("Pool's Debug shows its spares")
            + 8;
        let alive: usize = debug[at..]
            .split(|c: char| !c.is_ascii_digit())
            .next()
            .and_then(|n| n.parse().ok())
            .expect("a count of spares");
        (pool.stats().spares_started, alive)
    };
    thread_local! {
        static PREV_BEGIN: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
    }
    std::thread::scope(|s| {
        s.spawn(|| {
            let mut rng = Rng(0x5EED_0004);
            while !done.load(Ordering::Relaxed) {
                pool.set_concurrency(1).unwrap();
                let before = spares();
                let ticket = seq.fetch_add(1, Ordering::SeqCst);
                one_since.store(ticket, Ordering::SeqCst);
                spin(200 + rng.next() % 800);
                one_since.store(u64::MAX, Ordering::SeqCst);
                let after = spares();
                if before.1 == 0 && after.1 == 0 && before.0 == after.0 {
                    clean.lock().unwrap().insert(ticket);
                }
                pool.set_concurrency(threads).unwrap();
                spin(100 + rng.next() % 400);
            }
            pool.set_concurrency(threads).unwrap();
        });
        let deadline = Instant::now() + Duration::from_secs(3);
        while Instant::now() < deadline {
            pool.for_range_grain(0..4096, 1, |_| {
                let begin = seq.fetch_add(1, Ordering::SeqCst);
                let now = in_flight.fetch_add(1, Ordering::SeqCst) + 1;
                let since = one_since.load(Ordering::SeqCst);
                let prev = PREV_BEGIN.with(|p| p.replace(begin));
                if now > 1 && since != u64::MAX && since < prev {
                    *violations.lock().unwrap().entry(since).or_default() += 1;
                }
                spin(5);
                in_flight.fetch_sub(1, Ordering::SeqCst);
                leaves.fetch_add(1, Ordering::Relaxed);
            });
        }
        done.store(true, Ordering::Relaxed);
    });
    let (violations, clean, n) = (
        violations.into_inner().unwrap(),
        clean.into_inner().unwrap(),
        leaves.into_inner(),
    );
    let (real, excused): (Vec<_>, Vec<_>) = violations.iter().partition(|(t, _)| clean.contains(t));
    let count = |v: &[(&u64, &usize)]| v.iter().map(|(_, c)| **c).sum::<usize>();
    let (v, e) = (count(&real), count(&excused));
    eprintln!(
        "{n} leaves; {v} started beside another after their thread saw the limit at 1 with no \
         spare alive; {e} more in {} periods with a spare ({} spares started)",
        excused.len(),
        pool.stats().spares_started
    );
    assert_eq!(
        v, 0,
        "{v} of {n} leaves started over the limit with no spare alive"
    );
}

/// Taking one's own fork back is a task boundary, checked without statistics: a thread whose
/// first half lowered the limit to 1, while another thread's task holds the other slot, must
/// not start its second half until that task is over.
///
/// A caller holds one slot in a task that runs until this test releases it; the main thread
/// takes the other slot and forks. Its first half lowers the limit; nobody steals the second
/// half (no slot is free, so no worker is woken), so the fork is taken back, over the limit.
/// With the look at the limit, the thread gives back its slot there and gets one only when
/// the long task has ended; without it, the second half ran at once beside the long task.
/// The release comes 100 ms after the first half: a slower host only makes the failure it
/// guards against harder to see, never this test fail.
#[test]
fn a_fork_taken_back_after_the_limit_fell_waits_for_the_slot() {
    let pool = Pool::new(2).unwrap();
    let (holding, release, long_done) = (
        AtomicBool::new(false),
        AtomicBool::new(false),
        AtomicBool::new(false),
    );
    let lowered = AtomicBool::new(false);
    std::thread::scope(|s| {
        s.spawn(|| {
            pool.install(|| {
                holding.store(true, Ordering::SeqCst);
                while !release.load(Ordering::SeqCst) {
                    std::hint::spin_loop();
                }
                long_done.store(true, Ordering::SeqCst);
            });
        });
        s.spawn(|| {
            while !lowered.load(Ordering::SeqCst) {
                std::thread::yield_now();
            }
            std::thread::sleep(Duration::from_millis(100));
            release.store(true, Ordering::SeqCst);
        });
        while !holding.load(Ordering::SeqCst) {
            std::thread::yield_now();
        }
        let ((), second_saw_the_long_task_over) = pool.install(|| {
            pool.join(
                || {
                    pool.set_concurrency(1).unwrap();
                    lowered.store(true, Ordering::SeqCst);
                },
                || long_done.load(Ordering::SeqCst),
            )
        });
        assert!(
            second_saw_the_long_task_over,
            "the second half started beside another task under a limit of 1"
        );
    });
    assert_eq!(pool.stats().spares_started, 0, "no thread was blocked");
}
