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
        None => crate::global::global().threads(),
    }
}

/// The index of the calling thread among its pool's workers (`0..threads`), or `None` on a
/// thread that is not a worker. A caller inside [`install`](crate::Pool::install) usually takes
/// part in the pool's work without being one of its workers (`None`); when every run slot is
/// busy, its call is handed to a worker instead (`Some`).
///
/// # Examples
/// ```
/// let pool = throttle::Pool::new(2).unwrap();
/// assert_eq!(throttle::current_thread_index(), None);
/// let (a, b) = pool.join(|| (), || ());
/// let _ = (a, b);
/// let mut seen = vec![None; 64];
/// pool.scope(|s| {
///     for slot in seen.iter_mut() {
///         s.spawn(move |_| *slot = throttle::current_thread_index());
///     }
/// });
/// assert!(seen.iter().all(|i| i.map_or(true, |i| i < 2)));
/// ```
pub fn current_thread_index() -> Option<usize> {
    Participant::with_current(|p| p.and_then(|p| p.index()))
}
