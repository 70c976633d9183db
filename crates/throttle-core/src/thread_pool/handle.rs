//! `ThreadPool`: a [`Pool`] whose calls run on its worker threads, as rayon's do.

use crate::{BroadcastContext, Pool, Scope, ScopeFifo};
use std::fmt;
use std::mem::ManuallyDrop;
use std::ops::Deref;

/// rayon-core's thread pool: a [`Pool`] (every throttle method is reachable through `Deref`:
/// the live limit, stats, trace, ...) whose [`install`](ThreadPool::install),
/// [`join`](ThreadPool::join), [`scope`](ThreadPool::scope) and
/// [`scope_fifo`](ThreadPool::scope_fifo) run their operation on one of the pool's worker
/// threads, as rayon's do, so that it sees a worker's stack size, name and thread-locals.
/// `Pool`'s methods of the same names run it on the calling thread, which takes part in the
/// pool. From a thread that already takes part in a pool, both run it on that thread.
///
/// Dropping a `ThreadPool` does not block, as in rayon: it tells the workers to stop without
/// joining them (each exits once idle, after its exit handler), and if detached tasks
/// ([`spawn`](Pool::spawn) and friends) are still pending, a short-lived thread waits for them
/// before it stops the workers. (Dropping a [`Pool`] waits for both on the dropping thread.)
///
/// # Examples
/// ```
/// let pool = throttle::ThreadPoolBuilder::new()
///     .num_threads(2)
///     .thread_name(|i| format!("calc-{i}"))
///     .build()
///     .unwrap();
/// let name = pool.install(|| std::thread::current().name().unwrap().to_owned());
/// assert!(name.starts_with("calc-"));
/// pool.set_concurrency(1).unwrap(); // throttle's live limit, on the same pool
/// let pool: throttle::Pool = pool.into_pool();
/// assert_eq!(pool.threads(), 2);
/// ```
pub struct ThreadPool {
    /// Always live; taken out only by `drop` (and `into_pool`, which forgets `self`).
    pool: ManuallyDrop<Pool>,
}

impl ThreadPool {
    /// Runs `op` on one of the pool's worker threads and returns its result; the calling thread
    /// blocks meanwhile (on a thread that takes part in a pool, `op` runs right there).
    /// Parallel work inside `op` (`join`, `scope`, parallel iterators) uses this pool.
    ///
    /// # Panics
    /// Resumes a panic of `op`.
    ///
    /// # Examples
    /// ```
    /// let pool = throttle::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
    /// let (i, n) =
    ///     pool.install(|| (throttle::current_thread_index(), throttle::current_num_threads()));
    /// assert!(i.unwrap() < 2);
    /// assert_eq!(n, 2);
    /// ```
    pub fn install<OP, R>(&self, op: OP) -> R
    where
        OP: FnOnce() -> R + Send,
        R: Send,
    {
        self.pool.install_on_worker(op)
    }

    /// Runs `a` and `b`, potentially in parallel, on the pool's threads; see
    /// [`join`](crate::join).
    ///
    /// # Panics
    /// Resumes a panic of `a` or `b`.
    ///
    /// # Examples
    /// ```
    /// let pool = throttle::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
    /// assert_eq!(pool.join(|| 1, || 2), (1, 2));
    /// ```
    pub fn join<A, B, RA, RB>(&self, a: A, b: B) -> (RA, RB)
    where
        A: FnOnce() -> RA + Send,
        B: FnOnce() -> RB + Send,
        RA: Send,
        RB: Send,
    {
        self.install(|| crate::join(a, b))
    }

    /// Creates a [`Scope`] whose body runs on one of the pool's threads; see
    /// [`scope`](crate::scope).
    ///
    /// # Panics
    /// Resumes the first panic of the body or a task, after all tasks finished.
    ///
    /// # Examples
    /// ```
    /// let pool = throttle::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
    /// let mut v = [0; 3];
    /// pool.scope(|s| {
    ///     for (i, x) in v.iter_mut().enumerate() {
    ///         s.spawn(move |_| *x = i);
    ///     }
    /// });
    /// assert_eq!(v, [0, 1, 2]);
    /// ```
    pub fn scope<'scope, OP, R>(&self, op: OP) -> R
    where
        OP: FnOnce(&Scope<'scope>) -> R + Send,
        R: Send,
    {
        self.install(|| crate::scope(op))
    }

    /// Creates a [`ScopeFifo`] whose body runs on one of the pool's threads; see
    /// [`scope_fifo`](crate::scope_fifo).
    ///
    /// # Panics
    /// As [`scope`](ThreadPool::scope).
    ///
    /// # Examples
    /// ```
    /// let pool = throttle::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
    /// let order = std::sync::Mutex::new(Vec::new());
    /// pool.scope_fifo(|s| {
    ///     for i in 0..3 {
    ///         let order = &order;
    ///         s.spawn_fifo(move |_| order.lock().unwrap().push(i));
    ///     }
    /// });
    /// assert_eq!(order.into_inner().unwrap(), [0, 1, 2]);
    /// ```
    pub fn scope_fifo<'scope, OP, R>(&self, op: OP) -> R
    where
        OP: FnOnce(&ScopeFifo<'scope>) -> R + Send,
        R: Send,
    {
        self.install(|| crate::scope_fifo(op))
    }

    /// Runs `op` once on every worker thread; see [`Pool::broadcast`].
    ///
    /// # Panics
    /// As [`Pool::broadcast`].
    ///
    /// # Examples
    /// ```
    /// let pool = throttle::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
    /// assert_eq!(pool.broadcast(|ctx| ctx.index()), [0, 1]);
    /// ```
    pub fn broadcast<OP, R>(&self, op: OP) -> Vec<R>
    where
        OP: Fn(BroadcastContext<'_>) -> R + Sync,
        R: Send,
    {
        self.pool.broadcast(op)
    }

    /// The throttle pool inside.
    ///
    /// # Examples
    /// See [`ThreadPool`].
    pub fn into_pool(self) -> Pool {
        let mut this = ManuallyDrop::new(self);
        // SAFETY: `this` is never dropped (ManuallyDrop), so the pool is taken out exactly once
        // and never used again.
        unsafe { ManuallyDrop::take(&mut this.pool) }
    }
}

impl From<Pool> for ThreadPool {
    /// Gives a throttle pool rayon's calling conventions.
    fn from(pool: Pool) -> Self {
        ThreadPool {
            pool: ManuallyDrop::new(pool),
        }
    }
}

impl Drop for ThreadPool {
    fn drop(&mut self) {
        // An adopted thread (use_current_thread) ends its adoption here, on its own thread.
        crate::adopt::release_if_adopted(self.pool.registry());
        // SAFETY: `drop` runs once and the field is not used afterwards.
        let mut pool = unsafe { ManuallyDrop::take(&mut self.pool) };
        pool.detach_threads();
        if !pool.hooks.has_detached() {
            return drop(pool); // stops the workers at once
        }
        // rayon's drop does not wait for spawned tasks (they may wait for the dropping thread):
        // a reaper thread waits for them and then stops the workers. If it cannot start, the
        // failed spawn drops its closure, and with it the pool, here.
        let _ = std::thread::Builder::new()
            .name("throttle-reaper".into())
            .spawn(move || drop(pool));
    }
}

impl Deref for ThreadPool {
    type Target = Pool;

    fn deref(&self) -> &Pool {
        &self.pool
    }
}

impl fmt::Debug for ThreadPool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("ThreadPool").field(&self.pool).finish()
    }
}
