//! A pool's work that its caller does not wait for ([`Pool::spawn`]) or that every worker runs
//! once ([`Pool::broadcast`]).

use super::Pool;
use crate::broadcast::{broadcast_in, BroadcastContext};
use crate::hooks::spawn_in;
#[cfg(doc)]
use crate::PoolBuilder;

impl Pool {
    /// Spawns a detached task: `task` runs on one of the pool's threads, after this call
    /// returns. A panic in it goes to the panic handler (see [`PoolBuilder::panic_handler`];
    /// by default it is printed and the pool goes on). Dropping the pool waits for its detached
    /// tasks. To wait for tasks or borrow from the caller, use [`Pool::scope`] instead.
    ///
    /// # Examples
    /// ```
    /// use std::sync::mpsc::channel;
    /// let pool = throttle::Pool::new(2).unwrap();
    /// let (tx, rx) = channel();
    /// for i in 0..4u64 {
    ///     let tx = tx.clone();
    ///     pool.spawn(move || tx.send(i * i).unwrap());
    /// }
    /// drop(tx);
    /// assert_eq!(rx.iter().sum::<u64>(), 14);
    /// ```
    pub fn spawn<F>(&self, task: F)
    where
        F: FnOnce() + Send + 'static,
    {
        spawn_in(self.registry(), self.hooks.clone(), task);
    }

    /// Runs `op` once on every worker thread of the pool and returns the results in thread-index
    /// order (as rayon's `ThreadPool::broadcast`). Use it for per-thread setup or teardown:
    /// thread-local caches, affinity, counters.
    ///
    /// Each worker runs its `op` when it next looks for work: at once if it is idle (a sleeping
    /// worker is woken for it), after its current task if it is busy. A caller that is one of
    /// the pool's workers runs its own share at once; any caller then waits, running other work
    /// of the pool meanwhile.
    ///
    /// **Under the live limit.** The operations run under the pool's limit `k` like any task:
    /// at most `k` of them at a time (fewer if other tasks hold slots), each on its own worker,
    /// in the order the workers get slots. With `k < threads`, a worker that has no slot sleeps
    /// until one is handed to it; so an `op` that waits for *another* worker's `op` (a barrier
    /// across all of them) deadlocks unless `k == threads`, and a barrier of `k + 1` or more
    /// parties is never reached. Lowering or raising the limit during a broadcast is fine.
    ///
    /// # Panics
    /// If any `op` panics, the panic (the lowest thread index's, if several did) is resumed here
    /// after every `op` has finished and the other results have been dropped.
    ///
    /// # Examples
    /// ```
    /// let pool = throttle::Pool::new(4).unwrap();
    /// let squares = pool.broadcast(|ctx| ctx.index() * ctx.index());
    /// assert_eq!(squares, [0, 1, 4, 9]);
    ///
    /// // Also from inside the pool, and with a limit below the thread count.
    /// pool.set_concurrency(1).unwrap();
    /// let n = pool.install(|| pool.broadcast(|_| 1).len());
    /// assert_eq!(n, 4);
    /// ```
    pub fn broadcast<OP, R>(&self, op: OP) -> Vec<R>
    where
        OP: Fn(BroadcastContext<'_>) -> R + Sync,
        R: Send,
    {
        let op = &op;
        self.in_pool(|p| broadcast_in(p, op))
    }
}
