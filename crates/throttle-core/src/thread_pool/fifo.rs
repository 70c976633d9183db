//! `ScopeFifo` and the in-place scopes: rayon's scope variants on throttle's [`Scope`].
//!
//! A FIFO scope is a [`Scope`] plus a queue of its tasks, oldest first. `spawn_fifo` puts the
//! task in the queue and spawns an ordinary job that runs whichever task is oldest when the job
//! starts. Jobs are taken in any order (a thread takes its own newest job first, thieves the
//! oldest), but each takes the queue's oldest task, so tasks start in the order they were
//! spawned. One job per task: every task runs once. rayon keeps one such queue per thread;
//! one queue per scope orders a scope's tasks across all threads, a stronger promise.

use crate::registry::Registry;
use crate::scope::{scope_in, Scope};
use crate::worker::Participant;
use crate::Pool;
use std::collections::VecDeque;
use std::panic::{self, AssertUnwindSafe};
use std::sync::{Mutex, MutexGuard};

type FifoTask<'scope> = Box<dyn FnOnce(&ScopeFifo<'scope>) + Send + 'scope>;

/// A scope whose tasks start in the order they were spawned; see
/// [`scope_fifo`](crate::scope_fifo).
///
/// # Examples
/// ```
/// use std::sync::Mutex;
/// let order = Mutex::new(Vec::new());
/// let pool = throttle::Pool::new(1).unwrap();
/// pool.scope_fifo(|s| {
///     for i in 0..4 {
///         let order = &order;
///         s.spawn_fifo(move |_| order.lock().unwrap().push(i));
///     }
/// });
/// assert_eq!(order.into_inner().unwrap(), [0, 1, 2, 3]);
/// ```
pub struct ScopeFifo<'scope> {
    scope: Scope<'scope>,
    queue: Mutex<VecDeque<FifoTask<'scope>>>,
}

/// A `Send` pointer to the FIFO scope, captured by its jobs.
struct FifoPtr<'scope>(*const ScopeFifo<'scope>);

// SAFETY: `ScopeFifo` is Sync (a `Scope`, which is, and a mutex of `Send` tasks), and it
// outlives every job that holds this pointer: the scope call waits for all of them.
unsafe impl Send for FifoPtr<'_> {}
// SAFETY: as for Send: the pointer is only read, to a Sync value that outlives its users.
unsafe impl Sync for FifoPtr<'_> {}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A task never runs under the lock, so a poisoned queue is still consistent.
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl<'scope> ScopeFifo<'scope> {
    fn new(registry: &Registry) -> Self {
        ScopeFifo {
            scope: Scope::new(registry),
            queue: Mutex::new(VecDeque::new()),
        }
    }

    /// Spawns `task` into the scope: it may run on any thread of the pool, and starts after
    /// the scope's tasks spawned before it (in any thread) have started.
    ///
    /// # Examples
    /// ```
    /// let mut v = vec![0; 3];
    /// throttle::scope_fifo(|s| {
    ///     for (i, x) in v.iter_mut().enumerate() {
    ///         s.spawn_fifo(move |_| *x = i * 2);
    ///     }
    /// });
    /// assert_eq!(v, [0, 2, 4]);
    /// ```
    pub fn spawn_fifo<BODY>(&self, body: BODY)
    where
        BODY: FnOnce(&ScopeFifo<'scope>) + Send + 'scope,
    {
        lock(&self.queue).push_back(Box::new(body));
        let me = FifoPtr(self);
        self.scope.spawn(move |_| {
            let me = me;
            // SAFETY: the FIFO scope outlives this job (see `FifoPtr`).
            let fifo = unsafe { &*me.0 };
            let oldest = lock(&fifo.queue).pop_front();
            if let Some(task) = oldest {
                task(fifo);
            }
        });
    }
}

impl<'scope> ScopeFifo<'scope> {
    /// Spawns `body` once on every worker thread of the scope's pool; see
    /// [`Scope::spawn_broadcast`].
    ///
    /// # Examples
    /// ```
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    /// let pool = throttle::Pool::new(2).unwrap();
    /// let n = AtomicUsize::new(0);
    /// pool.scope_fifo(|s| s.spawn_broadcast(|_, _| { n.fetch_add(1, Ordering::Relaxed); }));
    /// assert_eq!(n.into_inner(), 2);
    /// ```
    pub fn spawn_broadcast<BODY>(&self, body: BODY)
    where
        BODY: Fn(&ScopeFifo<'scope>, crate::BroadcastContext<'_>) + Send + Sync + 'scope,
    {
        let me = FifoPtr(self);
        self.scope.spawn_broadcast(move |_, ctx| {
            let me = &me;
            // SAFETY: the FIFO scope outlives this job (see `FifoPtr`).
            body(unsafe { &*me.0 }, ctx)
        });
    }
}

impl std::fmt::Debug for ScopeFifo<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScopeFifo").finish_non_exhaustive()
    }
}

/// Runs a FIFO scope with `p` as the participant that runs the body and waits.
pub(crate) fn scope_fifo_in<'scope, OP, R>(p: &Participant, op: OP) -> R
where
    OP: FnOnce(&ScopeFifo<'scope>) -> R,
{
    let fifo = ScopeFifo::new(p.registry());
    let result = panic::catch_unwind(AssertUnwindSafe(|| op(&fifo)));
    fifo.scope.body_done();
    fifo.scope.wait(p);
    fifo.scope.into_result(result)
}

/// An in-place scope of `pool` for a thread that does not take part in it: the body runs here,
/// as plain code of this thread (its spawns go to the pool's injector); then the thread takes
/// part in the pool to wait for the tasks, helping with them.
pub(crate) fn in_place_scope_outside<'scope, OP, R>(pool: &Pool, op: OP) -> R
where
    OP: FnOnce(&Scope<'scope>) -> R,
{
    let scope = Scope::new(pool.registry());
    let result = panic::catch_unwind(AssertUnwindSafe(|| op(&scope)));
    scope.body_done();
    pool.in_pool(|p| scope.wait(p));
    scope.into_result(result)
}

/// [`in_place_scope_outside`] for a FIFO scope.
pub(crate) fn in_place_scope_fifo_outside<'scope, OP, R>(pool: &Pool, op: OP) -> R
where
    OP: FnOnce(&ScopeFifo<'scope>) -> R,
{
    let fifo = ScopeFifo::new(pool.registry());
    let result = panic::catch_unwind(AssertUnwindSafe(|| op(&fifo)));
    fifo.scope.body_done();
    pool.in_pool(|p| fifo.scope.wait(p));
    fifo.scope.into_result(result)
}

/// An in-place scope in `pool`: on a thread that takes part in it, an ordinary scope run here;
/// elsewhere, [`in_place_scope_outside`].
pub(crate) fn in_place_scope_of<'scope, OP, R>(pool: &Pool, op: OP) -> R
where
    OP: FnOnce(&Scope<'scope>) -> R,
{
    match current_in(pool.registry()) {
        // SAFETY: see `current_in`.
        Some(p) => scope_in(unsafe { &*p }, op),
        None => in_place_scope_outside(pool, op),
    }
}

/// [`in_place_scope_of`] for a FIFO scope.
pub(crate) fn in_place_scope_fifo_of<'scope, OP, R>(pool: &Pool, op: OP) -> R
where
    OP: FnOnce(&ScopeFifo<'scope>) -> R,
{
    match current_in(pool.registry()) {
        // SAFETY: see `current_in`.
        Some(p) => scope_fifo_in(unsafe { &*p }, op),
        None => in_place_scope_fifo_outside(pool, op),
    }
}

/// The calling thread's participant if it takes part in `registry`'s pool. The pointer stays
/// valid for any call made from the caller's frame (the participant is further up the stack).
pub(crate) fn current_in(registry: &Registry) -> Option<*const Participant> {
    Participant::with_current(|p| {
        p.filter(|p| p.is_in(registry))
            .map(|p| p as *const Participant)
    })
}
