//! The core of the throttle runtime: the work-stealing pool with a live concurrency limit,
//! fork-join ([`join`], [`scope`], [`for_range`], [`map_reduce`]), detached tasks ([`spawn`]),
//! the FIFO-fair semaphore ([`Throttle`]), the stats, the timeline trace, the adaptive
//! controller's sampler and the jobserver client, with rayon-core's names
//! ([`ThreadPool`], [`join_context`], ...).
//!
//! Programs depend on the `throttle` crate, which re-exports everything here together with the
//! parallel iterators and sorts of `throttle-iter` (built on this crate, as rayon is on
//! rayon-core); its documentation is the one to read. This crate knows nothing of iterators:
//! they reach the scheduler through [`seam`], a small door kept for them.
//!
//! Where each concept lives, and which module may use which: `src/README.md`.

#![warn(missing_docs)]

mod adopt;
mod barrier;
mod broadcast;
mod callsite;
mod context;
pub mod controller;
mod current;
mod deque;
mod error;
mod global;
mod holders;
mod hooks;
mod index_loops;
mod inline_call;
mod job;
#[cfg(not(loom))]
pub mod jobserver;
mod join;
mod latch;
#[cfg(all(test, loom))]
mod loom_models;
mod placement;
mod pool;
mod registry;
mod scope;
#[doc(hidden)]
pub mod seam;
mod semaphore;
mod sleep;
#[cfg(not(loom))]
mod spare;
mod stats;
mod sync;
mod thread_pool;
pub mod trace;
mod worker;

pub use broadcast::BroadcastContext;
pub use context::Context;
pub use current::{current_num_threads, current_thread_index};
pub use error::Error;
pub use global::{global_pool, global_threads, spawn, AUTO_ENV, RAYON_THREADS_ENV, THREADS_ENV};
#[cfg(not(loom))]
pub use jobserver::{
    Jobserver, Server, Style, Token, HOOKS_ENV, ID_ENV, JOBSERVER_ENV, RETURN_ID_ENV, SOCKET_ENV,
};
pub use pool::{default_threads, Pool, PoolBuilder, PLACEMENT_ENV};
pub use registry::DEFAULT_STACK_SIZE;
pub use scope::Scope;
pub use semaphore::{Permit, Throttle};
pub use stats::Stats;
pub use thread_pool::{
    broadcast, current_thread_has_pending_tasks, in_place_scope, in_place_scope_fifo, join_context,
    max_num_threads, scope_fifo, spawn_broadcast, spawn_fifo, yield_local, yield_now, CustomSpawn,
    DefaultSpawn, FnContext, ScopeFifo, ThreadBuilder, ThreadPool, ThreadPoolBuildError,
    ThreadPoolBuilder, ThreadSpawn, Yield,
};
#[allow(deprecated)]
pub use thread_pool::{initialize, Configuration};

use worker::Participant;

/// Runs `a` and `b`, potentially in parallel, in the current pool (the pool of the calling
/// worker, or the global pool from outside any pool). See [`Pool::join`].
///
/// # Panics
/// Resumes a panic of `a` or `b`. From outside any pool, panics if the global pool cannot start
/// (a bad `THROTTLE_THREADS`).
///
/// # Examples
/// ```
/// let (a, b) = throttle::join(|| 2 + 2, || "four");
/// assert_eq!((a, b), (4, "four"));
/// ```
pub fn join<A, B, RA, RB>(a: A, b: B) -> (RA, RB)
where
    A: FnOnce() -> RA + Send,
    B: FnOnce() -> RB + Send,
    RA: Send,
    RB: Send,
{
    match current() {
        // SAFETY: see `current`.
        Some(p) => join::join_in(unsafe { &*p }, |_| a(), |_| b()),
        None => global::with_default(|pool| pool.join(a, b)),
    }
}

/// Creates a [`Scope`] in the current pool; see [`Pool::scope`].
///
/// # Panics
/// Resumes the first panic of the body or of a spawned task, after all tasks finished.
///
/// # Examples
/// ```
/// let mut v = vec![1, 2, 3];
/// throttle::scope(|s| {
///     for x in v.iter_mut() {
///         s.spawn(move |_| *x *= 10);
///     }
/// });
/// assert_eq!(v, [10, 20, 30]);
/// ```
pub fn scope<'scope, OP, R>(op: OP) -> R
where
    OP: FnOnce(&Scope<'scope>) -> R + Send,
    R: Send,
{
    match current() {
        // SAFETY: see `current`.
        Some(p) => scope::scope_in(unsafe { &*p }, op),
        None => global::with_default(|pool| pool.scope(op)),
    }
}

/// Calls `f(i)` for every `i` in `range` in parallel, in the current pool; see
/// [`Pool::for_range`].
///
/// # Examples
/// ```
/// use std::sync::atomic::{AtomicUsize, Ordering};
/// let hits = AtomicUsize::new(0);
/// throttle::for_range(0..1000, |_| { hits.fetch_add(1, Ordering::Relaxed); });
/// assert_eq!(hits.into_inner(), 1000);
/// ```
#[track_caller]
pub fn for_range<F>(range: std::ops::Range<usize>, f: F)
where
    F: Fn(usize) + Sync + Send,
{
    match current() {
        Some(p) => {
            // SAFETY: see `current`.
            let p = unsafe { &*p };
            let block = index_loops::auto_block(range.len(), p.registry().threads());
            index_loops::for_range_in(p, range, block, &f)
        }
        None => global::with_default(|pool| pool.for_range(range, f)),
    }
}

/// [`for_range`] with a forced grain; see [`Pool::for_range_grain`].
///
/// # Examples
/// ```
/// use std::sync::atomic::{AtomicUsize, Ordering};
/// let hits = AtomicUsize::new(0);
/// throttle::for_range_grain(0..100, 10, |_| { hits.fetch_add(1, Ordering::Relaxed); });
/// assert_eq!(hits.into_inner(), 100);
/// ```
pub fn for_range_grain<F>(range: std::ops::Range<usize>, grain: usize, f: F)
where
    F: Fn(usize) + Sync + Send,
{
    match current() {
        // SAFETY: see `current`.
        Some(p) => index_loops::for_range_grain_in(unsafe { &*p }, range, grain.max(1), &f),
        None => global::with_default(|pool| pool.for_range_grain(range, grain, f)),
    }
}

/// Parallel map and reduce over `range` in the current pool; see [`Pool::map_reduce`].
///
/// # Examples
/// ```
/// let n = throttle::map_reduce(0..10, || 0, |i| i, |a, b| a + b);
/// assert_eq!(n, 45);
/// ```
#[track_caller]
pub fn map_reduce<T, ID, M, RD>(
    range: std::ops::Range<usize>,
    identity: ID,
    map: M,
    reduce: RD,
) -> T
where
    T: Send,
    ID: Fn() -> T + Sync + Send,
    M: Fn(usize) -> T + Sync + Send,
    RD: Fn(T, T) -> T + Sync + Send,
{
    match current() {
        Some(p) => {
            // SAFETY: see `current`.
            let p = unsafe { &*p };
            let block = index_loops::auto_block(range.len(), p.registry().threads());
            index_loops::map_reduce_in(p, range, block, &identity, &map, &reduce)
        }
        None => global::with_default(|pool| pool.map_reduce(range, identity, map, reduce)),
    }
}

/// The calling thread's current participant, as a raw pointer. It stays valid for the duration
/// of any call made from here: it is further up this thread's stack, and its `enter` guard
/// restores the previous one only when that frame returns.
#[inline(always)]
fn current() -> Option<*const Participant> {
    Participant::with_current(|p| p.map(|p| p as *const Participant))
}
