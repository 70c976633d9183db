//! Run CPU-bound parallel work at the right concurrency.
//!
//! `throttle` is a work-stealing thread pool whose concurrency limit is a live quantity, with
//! fork-join ([`join`], [`scope`], [`for_range`], [`map_reduce`]), rayon's data-parallel
//! iterators and parallel sorts ([`iter`], brought in by `use throttle::prelude::*;`), detached
//! tasks ([`spawn`]), a FIFO-fair counting semaphore for any threads ([`Throttle`]), and counters
//! of what the pool did ([`Stats`]).
//!
//! # A tour
//!
//! Recursion forks with [`join`]; no hand-written sequential cutoff is needed: every fork puts its
//! second half on the thread's deque, where any idle thread can steal it, and takes it back
//! (a few dozen instructions, no fence) if nobody did:
//!
//! ```
//! use throttle::Pool;
//!
//! struct Node { value: u64, left: Option<Box<Node>>, right: Option<Box<Node>> }
//!
//! fn sum(node: &Node) -> u64 {
//!     let (l, r) = throttle::join(
//!         || node.left.as_deref().map_or(0, sum),
//!         || node.right.as_deref().map_or(0, sum),
//!     );
//!     node.value + l + r
//! }
//!
//! fn tree(depth: u32) -> Node {
//!     let child = || (depth > 0).then(|| Box::new(tree(depth - 1)));
//!     Node { value: 1, left: child(), right: child() }
//! }
//!
//! let pool = Pool::new(2).unwrap();
//! let t = tree(12);
//! assert_eq!(pool.install(|| sum(&t)), (1 << 13) - 1);
//!
//! // Loops split on demand; results combine in index order.
//! let squares = pool.map_reduce(0..1_000, || 0u64, |i| (i * i) as u64, |a, b| a + b);
//! assert_eq!(squares, 332_833_500);
//!
//! // The limit is live: lower it while work runs, and at most 1 thread runs tasks.
//! pool.set_concurrency(1).unwrap();
//! pool.for_range(0..1_000, |i| { std::hint::black_box(i); });
//! pool.set_concurrency(2).unwrap();
//!
//! let stats = pool.stats();
//! assert!(stats.tasks > 0);
//! ```
//!
//! Data-parallel code reads as it does with rayon; porting a rayon program means changing its
//! `use` lines:
//!
//! ```
//! use throttle::prelude::*;
//!
//! let pool = throttle::Pool::new(2).unwrap();
//! let v: Vec<f64> = (0..100_000).map(|i| i as f64).collect();
//! let (norm2, mut sorted) = pool.install(|| {
//!     let norm2: f64 = v.par_iter().map(|x| x * x).sum();
//!     let mut sorted: Vec<i64> = v.par_iter().map(|&x| (x as i64 * 7919) % 1000).collect();
//!     sorted.par_sort_unstable();
//!     (norm2, sorted)
//! });
//! assert!(norm2 > 0.0 && sorted.windows(2).all(|w| w[0] <= w[1]));
//! sorted.par_iter_mut().for_each(|x| *x *= 2);
//! ```
//!
//! rayon-core's names are here too, on the same runtime: [`ThreadPoolBuilder`] builds a
//! [`ThreadPool`] (a [`Pool`] underneath), and [`scope_fifo`], [`spawn_fifo`], [`broadcast`],
//! [`yield_now`], [`join_context`] and the rest act on the current pool as rayon's do. The
//! facade crates `compat/rayon` and `compat/rayon-core` re-export them under rayon's paths
//! (`docs/rayon.md`).
//!
//! ```
//! let pool = throttle::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
//! let n = pool.install(|| throttle::current_num_threads()); // runs on a worker
//! assert_eq!(n, 2);
//! pool.set_concurrency(1).unwrap(); // and throttle's live limit still applies
//! ```
//!
//! Threads you start yourself can be gated with a [`Throttle`]:
//!
//! ```
//! let gate = throttle::Throttle::new(2); // at most 2 of the 8 threads compute at once
//! std::thread::scope(|s| {
//!     for _ in 0..8 {
//!         s.spawn(|| {
//!             let _permit = gate.acquire();
//!             std::hint::black_box((0..10_000u64).sum::<u64>());
//!         });
//!     }
//! });
//! assert_eq!(gate.available(), 2);
//! ```
//!
//! # Auto mode: the pool chooses `k`
//!
//! [`Pool::set_concurrency_auto`] (or [`PoolBuilder::auto_concurrency`]) hands the limit to a
//! controller that measures the pool every 25 ms while work runs (completed work: loop indices
//! and iterator items as their blocks end, else tasks; busy time; the workers' run-queue wait;
//! every 3.125 ms while it scans, every 50 ms while the pool is idle), scans `k` from
//! the top down, fits a scalability curve, settles on the smallest `k` that gets the throughput,
//! and then stays still until the throughput or the load moves beyond its measured noise.
//! In auto mode, `for_range`, `map_reduce`, the parallel iterators' consumers and the parallel
//! sorts also remember per call site whether a call is too short to pay for threads, and then
//! run it on the calling thread alone.
//! [`Pool::controller_log`] shows the decisions; [`set_concurrency`](Pool::set_concurrency)
//! returns to a fixed limit. The *global* pool (what the free [`join`], [`for_range`] and the
//! parallel iterators use) starts in auto mode when the environment says
//! [`THROTTLE_AUTO=1`](AUTO_ENV), or when the program builds it so first:
//! `Pool::builder().auto_concurrency().build_global()` (example below). A global pool built
//! with [`Pool::builder`] is as the program built it: that builder does not read
//! `THROTTLE_AUTO` (rayon's [`ThreadPoolBuilder`] does, so that rayon programs obey it). The
//! controller itself is a pure state machine, [`controller::Controller`], testable without
//! threads (see `crates/throttle-controller/src/README.md`).
//!
//! ```
//! let pool = throttle::Pool::builder().threads(2).auto_concurrency().build().unwrap();
//! let sum = pool.map_reduce(0..100_000, || 0u64, |i| i as u64, |a, b| a + b);
//! assert_eq!(sum, 4_999_950_000);
//! assert!((1..=2).contains(&pool.concurrency()));
//! pool.set_concurrency(2).unwrap(); // fixed again
//! ```
//!
//! The global pool in auto mode, from the program (first thing in `main`, before anything uses
//! the global pool; or, with no change to the program, `THROTTLE_AUTO=1` in the environment):
//!
//! ```
//! use throttle::prelude::*;
//! throttle::Pool::builder().auto_concurrency().build_global().unwrap();
//! let sum: u64 = (0..100_000u64).into_par_iter().sum();
//! assert_eq!(sum, 4_999_950_000);
//! ```
//!
//! # What every thread did: the timeline
//!
//! [`Pool::start_trace`] and [`Pool::stop_trace`] record what each thread did (runs, steals,
//! shares, sleeps and who woke whom, waits for the limit or in joins, limit changes, controller
//! decisions, jobserver tokens) into per-thread rings; the [`trace::Trace`] exports to the Chrome
//! trace event format for <https://ui.perfetto.dev>, and `throttle frames --timeline` draws it as
//! seed 002's thread-profiler picture. Off by default; off, it costs one relaxed load per event
//! site. For the global pool: `THROTTLE_TRACE=FILE.json` ([`trace::TRACE_ENV`]).
//!
//! # How it works
//!
//! A short glossary: a *participant* is a thread taking part in a pool (a worker, or a caller
//! inside a call); a *run slot* is the right to run the pool's code, and the live limit is the
//! number of slots; a *fork* puts its second half on the participant's deque, where other
//! threads can *steal* it; the *light* and *heavy* sides of an asymmetric fence split one
//! fence's cost between a frequent path that pays nothing and a rare one that pays for both.
//!
//! - Every fork is stealable at once, without its owner's help, whatever the owner does next (a
//!   Chase–Lev deque per participant, callers included): no pending work is ever hidden. (One
//!   exception: a thread with 1 024 of its forks pending and none stolen runs its next fork as
//!   a plain call; thieves could not use more, and they can steal the 1 024.) The
//!   owner's side costs no fence: its push and pop issue the light side of an asymmetric fence,
//!   and thieves and threads going to sleep issue the heavy side (Linux's `membarrier`; a fence
//!   on both sides where it is missing). See `crates/throttle-core/src/worker/fork.rs`,
//!   `crates/throttle-core/src/barrier.rs`, and [`Context`] for forks without a thread-local
//!   lookup.
//! - Idle workers search for ~50 µs, then sleep; whoever publishes work wakes one sleeper,
//!   and only when nobody is searching: the empty → non-empty edge, never a herd. Threads that
//!   wait are sleepers too, woken for work they may run. The protocol and why no wake-up, slot
//!   or permit is lost: `crates/throttle-core/src/sleep/README.md`. Placement of sleeping
//!   workers on home CPUs is off by default ([`PoolBuilder::placement`]).
//! - Whoever waits, helps, isolated: a thread waiting for its own fork runs only that fork's
//!   descendants (what the fork's thief pushed since it started it), so a task holding a lock
//!   never meets, on its own stack, another task taking the same lock; a user's thread runs
//!   nothing but its own call. Never while a panic unwinds: `join` catches a panic, waits for
//!   the other half, then resumes it.
//! - A pool's work always has a runner: a worker waiting inside another pool comes home for
//!   work nobody else takes (as in rayon), and when every thread of a pool is blocked in a
//!   wait that may not run that work, a spare thread (`throttle-spare`) stands in under the limit
//!   and exits after 200 ms idle (`crates/throttle-core/src/spare.rs`).
//! - The calling thread takes part and counts toward the limit. A thread holds at most one slot:
//!   calling into another pool gives back the current pool's slot until the call returns, so pools
//!   nest in any order without deadlock.
//! - The limit holds at every instant for slots, except when every slot holder is blocked in
//!   the kernel (on a lock, in I/O): then the first thread queued for a slot takes one over the
//!   limit after a millisecond, so that a task holding a lock never waits forever behind
//!   threads blocked on it; a lowered limit takes effect at each thread's next task boundary ([`Pool::set_concurrency`] says exactly), and
//!   [`Pool::await_concurrency`] waits for it.
//! - One budget for the whole machine: under a GNU make jobserver (make, cargo, ninja ≥ 1.13,
//!   `throttle run`) the global pool runs at most 1 + (tokens held) threads, asks for a token
//!   only when work waits for another thread and gives it back a few milliseconds after the work
//!   runs out (`THROTTLE_JOBSERVER=off` opts out; explicit pools opt in with
//!   [`PoolBuilder::jobserver`]; threads of your own with [`Throttle::with_jobserver`]).
//!   [`Server`] is the crash-safe jobserver behind `throttle run`. Nothing process-wide by
//!   default: inherited pipe descriptors are used only when provably the jobserver's, no signal
//!   handler or `atexit` hook unless asked ([`jobserver::install_exit_hooks`]).
//!   Protocol and proof sketch: `crates/throttle-core/src/jobserver/README.md`; for users:
//!   `docs/jobserver.md`.

#![warn(missing_docs)]
#![forbid(unsafe_code)]

pub use throttle_core::*;
pub use throttle_iter::{
    array, collections, iter, option, prelude, range, range_inclusive, result, slice, str, string,
    vec,
};

/// The workspace README's Rust example, compiled and run as a doctest so it cannot rot.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
struct ReadmeExample;
