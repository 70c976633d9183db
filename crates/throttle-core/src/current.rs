//! Where the calling thread is: its pool's size and its index among that pool's workers.

use crate::worker::Participant;

/// The number of worker threads of the current pool: the pool whose task or
/// [`install`](crate::Pool::install) the calling thread is running, or else the global pool.
///
/// # Panics
/// From outside any pool, if the global pool cannot start (a bad `THROTTLE_THREADS`).
///
/// # Examples
/// ```
/// let pool = throttle::Pool::new(3).unwrap();
/// assert_eq!(pool.install(throttle::current_num_threads), 3);
/// ```
pub fn current_num_threads() -> usize {
    match Participant::with_current(|p| p.map(|p| p.registry().threads())) {
        Some(n) => n,
        None => crate::global::with_default(crate::Pool::threads),
    }
}

/// The calling thread's index in its current pool, `Some(i)` with `i < current_num_threads()`,
/// on every thread that runs the pool's work: its workers, and a caller inside
/// [`install`](crate::Pool::install) (or any call into a pool), which takes part in the work.
/// `None` outside any pool.
///
/// At any instant the threads running a pool's work have distinct indices, so the index can
/// pick a per-thread buffer, with one exception: when every other slot holder is blocked in
/// the kernel (on a lock, in I/O) and a thread takes a slot over the limit
/// ([`Pool::set_concurrency`](crate::Pool::set_concurrency);
/// [`Stats::limit_takeovers`](crate::Stats) counts these), more threads may hold slots than the
/// pool has indices, and that thread then shares one with a blocked thread until one comes
/// free. Code whose tasks block while holding a per-thread buffer should not index by it. A worker has its own index `i` whenever it is free; a caller takes
/// a free one (usually that of a sleeping worker) when it first asks. A thread keeps its index
/// while it runs; it may get another one after it waited (asleep in a join, or for a slot under
/// a lowered limit), so read the index again after a `join` rather than keeping it across one.
///
/// # Examples
/// ```
/// let pool = throttle::Pool::new(2).unwrap();
/// assert_eq!(throttle::current_thread_index(), None);
/// let mine = pool.install(throttle::current_thread_index);
/// assert!(mine.is_some_and(|i| i < 2));
/// let mut seen = vec![None; 64];
/// pool.scope(|s| {
///     for slot in seen.iter_mut() {
///         s.spawn(move |_| *slot = throttle::current_thread_index());
///     }
/// });
/// assert!(seen.iter().all(|i| i.is_some_and(|i| i < 2)));
/// ```
pub fn current_thread_index() -> Option<usize> {
    Participant::with_current(|p| p.map(Participant::thread_index))
}
