//! rayon-core's names on throttle's one runtime: [`ThreadPool`] is a [`Pool`] (a thin wrapper
//! that derefs to it) whose `install`, `join`, `scope` and `scope_fifo` run on a worker thread
//! as rayon's do, [`ThreadPoolBuilder`] builds one, the rayon-named methods that `Pool` lacked
//! are added to `Pool` itself, and the free functions act on the current pool (the pool whose
//! task or `install` the calling thread is running, or else the global pool), as rayon's do.
//!
//! What differs from rayon, on purpose:
//! - From outside any pool, the free functions ([`join`](crate::join), [`scope`](crate::scope),
//!   parallel iterators) let the calling thread take part in the global pool's work instead
//!   of handing the call to a worker; only `ThreadPool`'s methods and [`join_context`] hand it
//!   over.
//! - A detached task's panic without a panic handler is printed, not a process abort.
//! - `breadth_first` is accepted and ignored (rayon deprecated it).
//! - A [`ScopeFifo`]'s tasks start in spawn order across all threads, not only per thread.

mod builder;
mod deprecated;
mod fifo;
mod handle;

pub use builder::{CustomSpawn, DefaultSpawn, ThreadBuilder, ThreadPoolBuildError};
pub use builder::{ThreadPoolBuilder, ThreadSpawn};
#[allow(deprecated)]
pub use deprecated::{initialize, Configuration};
pub use fifo::ScopeFifo;
pub use handle::ThreadPool;

use crate::broadcast::{broadcast_in, BroadcastContext};
use crate::hooks;
use crate::join::join_in;
use crate::scope::{scope_in, Scope};
use crate::worker::Participant;
use crate::Pool;
use fifo::{current_in, in_place_scope_fifo_of, in_place_scope_of, scope_fifo_in};
use std::marker::PhantomData;

/// What [`yield_now`] and [`yield_local`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Yield {
    /// Ran one pending job (and whatever it waited for).
    Executed,
    /// Found nothing to run.
    Idle,
}

/// The maximum number of threads a pool supports; larger requests to
/// [`ThreadPoolBuilder::num_threads`] are reduced to it.
///
/// # Examples
/// ```
/// assert_eq!(throttle::max_num_threads(), 65_535);
/// ```
pub fn max_num_threads() -> usize {
    crate::sleep::state::MAX_THREADS
}

/// Tells a [`join_context`] closure where it runs.
///
/// # Examples
/// ```
/// let pool = throttle::Pool::new(2).unwrap();
/// let (a, _) = pool.install(|| throttle::join_context(|ctx| ctx.migrated(), |_| ()));
/// assert!(!a); // the first closure runs on the calling thread
/// ```
#[derive(Debug)]
pub struct FnContext {
    migrated: bool,
    /// Neither `Send` nor `Sync`: it describes one call on one thread.
    _marker: PhantomData<*mut ()>,
}

impl FnContext {
    fn new(migrated: bool) -> Self {
        FnContext {
            migrated,
            _marker: PhantomData,
        }
    }

    /// True if the closure runs on another thread than the one that called `join_context`
    /// (it was stolen).
    ///
    /// # Examples
    /// See [`FnContext`].
    pub fn migrated(&self) -> bool {
        self.migrated
    }
}

/// [`join`](crate::join), with each closure told whether it runs on another thread than the
/// caller's: the second one when another thread stole it; both when called from outside any
/// pool (the call is handed to a worker of the global pool, as in rayon).
///
/// # Panics
/// As [`join`](crate::join).
///
/// # Examples
/// ```
/// let (a, b) = throttle::join_context(|ctx| ctx.migrated(), |ctx| ctx.migrated());
/// assert!(a && b); // from outside any pool: both ran on a worker
/// let pool = throttle::Pool::new(2).unwrap();
/// let (a, _) = pool.install(|| throttle::join_context(|ctx| ctx.migrated(), |_| ()));
/// assert!(!a); // inside: the first closure runs on the calling thread
/// ```
pub fn join_context<A, B, RA, RB>(a: A, b: B) -> (RA, RB)
where
    A: FnOnce(FnContext) -> RA + Send,
    B: FnOnce(FnContext) -> RB + Send,
    RA: Send,
    RB: Send,
{
    match current() {
        // SAFETY: see `current`.
        Some(p) => join_context_in(unsafe { &*p }, false, a, b),
        // As in rayon: from outside any pool, the call goes to a worker of the global pool,
        // and both closures run away from the calling thread.
        None => crate::global::global().install_on_worker(|| match current() {
            // SAFETY: see `current`.
            Some(p) => join_context_in(unsafe { &*p }, true, a, b),
            None => unreachable!("install_on_worker runs its operation in the pool"),
        }),
    }
}

/// [`join_context`] on participant `p`; `injected`: the call came from outside the pool.
fn join_context_in<A, B, RA, RB>(p: &Participant, injected: bool, a: A, b: B) -> (RA, RB)
where
    A: FnOnce(FnContext) -> RA + Send,
    B: FnOnce(FnContext) -> RB + Send,
    RA: Send,
    RB: Send,
{
    let home = p as *const Participant as usize;
    join_in(
        p,
        |_| a(FnContext::new(injected)),
        // Another participant than the forking one runs `b`: another thread.
        move |q| {
            b(FnContext::new(
                injected || q as *const Participant as usize != home,
            ))
        },
    )
}

/// The calling thread's current participant; valid for any call made from the caller's frame.
fn current() -> Option<*const Participant> {
    Participant::with_current(|p| p.map(|p| p as *const Participant))
}

/// Creates a [`ScopeFifo`] in the current pool: like [`scope`](crate::scope), but its tasks
/// start in the order they were spawned.
///
/// # Panics
/// Resumes the first panic of the body or of a task, after all tasks finished.
///
/// # Examples
/// ```
/// use std::sync::atomic::{AtomicUsize, Ordering};
/// let n = AtomicUsize::new(0);
/// throttle::scope_fifo(|s| {
///     for _ in 0..8 {
///         s.spawn_fifo(|_| { n.fetch_add(1, Ordering::Relaxed); });
///     }
/// });
/// assert_eq!(n.into_inner(), 8);
/// ```
pub fn scope_fifo<'scope, OP, R>(op: OP) -> R
where
    OP: FnOnce(&ScopeFifo<'scope>) -> R + Send,
    R: Send,
{
    match current() {
        // SAFETY: see `current`.
        Some(p) => scope_fifo_in(unsafe { &*p }, op),
        None => crate::global::with_default(|pool| pool.scope_fifo(op)),
    }
}

/// Creates a [`Scope`] whose body runs on the calling thread, as plain code of it, rather
/// than inside the pool: the body need not be `Send`, and thread-locals are the caller's.
/// Tasks go to the current pool (or the global pool); the call returns when all finished.
///
/// # Panics
/// Resumes the first panic of the body or of a task, after all tasks finished.
///
/// # Examples
/// ```
/// use std::rc::Rc;
/// let not_send = Rc::new(5); // a body that holds an Rc: not `Send`
/// let mut out = [0; 2];
/// throttle::in_place_scope(|s| {
///     let k = *not_send;
///     for (i, x) in out.iter_mut().enumerate() {
///         s.spawn(move |_| *x = i * k);
///     }
/// });
/// assert_eq!(out, [0, 5]);
/// ```
pub fn in_place_scope<'scope, OP, R>(op: OP) -> R
where
    OP: FnOnce(&Scope<'scope>) -> R,
{
    match current() {
        // SAFETY: see `current`.
        Some(p) => scope_in(unsafe { &*p }, op),
        None => crate::global::with_default(|pool| fifo::in_place_scope_outside(pool, op)),
    }
}

/// [`in_place_scope`] for a [`ScopeFifo`].
///
/// # Panics
/// As [`in_place_scope`].
///
/// # Examples
/// ```
/// let mut out = [0; 3];
/// throttle::in_place_scope_fifo(|s| {
///     for (i, x) in out.iter_mut().enumerate() {
///         s.spawn_fifo(move |_| *x = i + 1);
///     }
/// });
/// assert_eq!(out, [1, 2, 3]);
/// ```
pub fn in_place_scope_fifo<'scope, OP, R>(op: OP) -> R
where
    OP: FnOnce(&ScopeFifo<'scope>) -> R,
{
    match current() {
        // SAFETY: see `current`.
        Some(p) => scope_fifo_in(unsafe { &*p }, op),
        None => crate::global::with_default(|pool| fifo::in_place_scope_fifo_outside(pool, op)),
    }
}

/// Spawns a detached task in the current pool, like [`spawn`](crate::spawn), that starts after
/// the pool's `spawn_fifo` tasks spawned before it.
///
/// # Panics
/// From outside any pool, if the global pool cannot start (a bad `THROTTLE_THREADS`).
///
/// # Examples
/// ```
/// use std::sync::mpsc::channel;
/// let (tx, rx) = channel();
/// throttle::spawn_fifo(move || tx.send(7).unwrap());
/// assert_eq!(rx.recv().unwrap(), 7);
/// ```
pub fn spawn_fifo<F>(task: F)
where
    F: FnOnce() + Send + 'static,
{
    match hooks::current_target() {
        // SAFETY: the registry belongs to the pool the calling thread takes part in right now,
        // so it is alive for the duration of this call.
        Some((registry, h)) => hooks::spawn_fifo_in(unsafe { &*registry }, h, task),
        None => crate::global::with_default(|pool| pool.spawn_fifo(task)),
    }
}

/// Runs `op` once on every worker thread of the current pool and returns the results in
/// thread-index order; see [`Pool::broadcast`].
///
/// # Panics
/// As [`Pool::broadcast`].
///
/// # Examples
/// ```
/// let pool = throttle::Pool::new(3).unwrap();
/// let idx = pool.install(|| throttle::broadcast(|ctx| ctx.index()));
/// assert_eq!(idx, [0, 1, 2]);
/// ```
pub fn broadcast<OP, R>(op: OP) -> Vec<R>
where
    OP: Fn(BroadcastContext<'_>) -> R + Sync,
    R: Send,
{
    match current() {
        // SAFETY: see `current`.
        Some(p) => broadcast_in(unsafe { &*p }, &op),
        None => crate::global::with_default(|pool| pool.broadcast(op)),
    }
}

/// Spawns a detached task on every worker thread of the current pool; see
/// [`Pool::spawn_broadcast`].
///
/// # Panics
/// From outside any pool, if the global pool cannot start (a bad `THROTTLE_THREADS`).
///
/// # Examples
/// ```
/// use std::sync::mpsc::channel;
/// let (tx, rx) = channel();
/// let tx = std::sync::Mutex::new(tx);
/// throttle::spawn_broadcast(move |ctx| tx.lock().unwrap().send(ctx.num_threads()).unwrap());
/// let n = rx.recv().unwrap();
/// assert_eq!(rx.iter().take(n - 1).count(), n - 1);
/// ```
pub fn spawn_broadcast<OP>(op: OP)
where
    OP: Fn(BroadcastContext<'_>) + Send + Sync + 'static,
{
    match hooks::current_target() {
        // SAFETY: as in `spawn_fifo`.
        Some((registry, h)) => hooks::spawn_broadcast_in(unsafe { &*registry }, h, op),
        None => crate::global::with_default(|pool| pool.spawn_broadcast(op)),
    }
}

/// Runs one pending job of the calling thread's pool, if there is one: its own newest work
/// first, else another thread's oldest. `None` if the thread takes part in no pool.
///
/// # Examples
/// ```
/// assert_eq!(throttle::yield_now(), None); // not in a pool
/// let pool = throttle::Pool::new(1).unwrap();
/// let y = pool.install(|| {
///     throttle::spawn(|| ());
///     throttle::yield_now()
/// });
/// assert!(y.is_some());
/// ```
pub fn yield_now() -> Option<Yield> {
    let p = current()?;
    // SAFETY: see `current`.
    Some(yield_in(unsafe { &*p }))
}

/// Runs one pending job of the calling thread's own (its forks, its spawns, its mail), never
/// another thread's. `None` if the thread takes part in no pool.
///
/// # Examples
/// ```
/// assert_eq!(throttle::yield_local(), None);
/// let pool = throttle::Pool::new(1).unwrap();
/// let y = pool.install(|| throttle::yield_local());
/// assert_eq!(y, Some(throttle::Yield::Idle));
/// ```
pub fn yield_local() -> Option<Yield> {
    let p = current()?;
    // SAFETY: see `current`.
    Some(yield_local_in(unsafe { &*p }))
}

/// Whether the calling thread has pending work of its own (forks others could steal, spawns,
/// mail); `None` if it takes part in no pool.
///
/// # Examples
/// ```
/// assert_eq!(throttle::current_thread_has_pending_tasks(), None);
/// let pool = throttle::Pool::new(1).unwrap();
/// assert!(pool.install(throttle::current_thread_has_pending_tasks).is_some());
/// ```
pub fn current_thread_has_pending_tasks() -> Option<bool> {
    Participant::with_current(|p| p.map(Participant::has_local_work))
}

fn yield_in(p: &Participant) -> Yield {
    match p.find_work() {
        Some((job, taken)) => {
            p.execute_found(job, taken);
            Yield::Executed
        }
        None => Yield::Idle,
    }
}

fn yield_local_in(p: &Participant) -> Yield {
    match p.find_local_work() {
        Some(job) => {
            p.execute_found(job, crate::registry::Taken::Own);
            Yield::Executed
        }
        None => Yield::Idle,
    }
}

/// rayon-core's `ThreadPool` methods that throttle's `Pool` did not have under these names.
impl Pool {
    /// The number of worker threads (rayon's name for [`Pool::threads`]).
    ///
    /// # Examples
    /// ```
    /// let pool = throttle::Pool::new(3).unwrap();
    /// assert_eq!(pool.current_num_threads(), 3);
    /// ```
    pub fn current_num_threads(&self) -> usize {
        self.threads()
    }

    /// [`current_thread_index`](crate::current_thread_index) if the calling thread takes part
    /// in this pool, else `None`.
    ///
    /// # Examples
    /// ```
    /// let pool = throttle::Pool::new(2).unwrap();
    /// assert_eq!(pool.current_thread_index(), None);
    /// let seen = pool.broadcast(|_| pool.current_thread_index());
    /// assert_eq!(seen, [Some(0), Some(1)]);
    /// ```
    pub fn current_thread_index(&self) -> Option<usize> {
        current_in(self.registry())?;
        crate::current_thread_index()
    }

    /// [`current_thread_has_pending_tasks`](crate::current_thread_has_pending_tasks) if the
    /// calling thread takes part in this pool, else `None`.
    ///
    /// # Examples
    /// ```
    /// let pool = throttle::Pool::new(2).unwrap();
    /// assert_eq!(pool.current_thread_has_pending_tasks(), None);
    /// assert!(pool.install(|| pool.current_thread_has_pending_tasks()).is_some());
    /// ```
    pub fn current_thread_has_pending_tasks(&self) -> Option<bool> {
        let p = current_in(self.registry())?;
        // SAFETY: see `current_in`.
        Some(unsafe { &*p }.has_local_work())
    }

    /// Creates a [`ScopeFifo`] in this pool; see [`scope_fifo`](crate::scope_fifo).
    ///
    /// # Panics
    /// As [`scope_fifo`](crate::scope_fifo).
    ///
    /// # Examples
    /// ```
    /// let pool = throttle::Pool::new(2).unwrap();
    /// let mut v = [0u8; 4];
    /// pool.scope_fifo(|s| {
    ///     for x in v.iter_mut() {
    ///         s.spawn_fifo(move |_| *x = 1);
    ///     }
    /// });
    /// assert_eq!(v, [1; 4]);
    /// ```
    #[track_caller]
    pub fn scope_fifo<'scope, OP, R>(&self, op: OP) -> R
    where
        OP: FnOnce(&ScopeFifo<'scope>) -> R + Send,
        R: Send,
    {
        self.in_pool(|p| scope_fifo_in(p, op))
    }

    /// Creates a [`Scope`] whose tasks run in this pool and whose body runs on the calling
    /// thread; see [`in_place_scope`](crate::in_place_scope).
    ///
    /// # Panics
    /// As [`in_place_scope`](crate::in_place_scope).
    ///
    /// # Examples
    /// ```
    /// let pool = throttle::Pool::new(2).unwrap();
    /// let me = std::thread::current().id();
    /// let mut ran_here = false;
    /// let mut sizes = [0; 2];
    /// pool.in_place_scope(|s| {
    ///     ran_here = std::thread::current().id() == me;
    ///     for n in sizes.iter_mut() {
    ///         s.spawn(|_| *n = throttle::current_num_threads()); // tasks run in the pool
    ///     }
    /// });
    /// assert!(ran_here);
    /// assert_eq!(sizes, [2, 2]);
    /// ```
    pub fn in_place_scope<'scope, OP, R>(&self, op: OP) -> R
    where
        OP: FnOnce(&Scope<'scope>) -> R,
    {
        in_place_scope_of(self, op)
    }

    /// [`in_place_scope`](Pool::in_place_scope) for a [`ScopeFifo`].
    ///
    /// # Panics
    /// As [`in_place_scope`](crate::in_place_scope).
    ///
    /// # Examples
    /// ```
    /// let pool = throttle::Pool::new(1).unwrap();
    /// let order = std::sync::Mutex::new(Vec::new());
    /// pool.in_place_scope_fifo(|s| {
    ///     for i in 0..3 {
    ///         let order = &order;
    ///         s.spawn_fifo(move |_| order.lock().unwrap().push(i));
    ///     }
    /// });
    /// assert_eq!(order.into_inner().unwrap(), [0, 1, 2]);
    /// ```
    pub fn in_place_scope_fifo<'scope, OP, R>(&self, op: OP) -> R
    where
        OP: FnOnce(&ScopeFifo<'scope>) -> R,
    {
        in_place_scope_fifo_of(self, op)
    }

    /// Spawns a detached task, like [`Pool::spawn`], that starts after this pool's
    /// `spawn_fifo` tasks spawned before it.
    ///
    /// # Examples
    /// ```
    /// use std::sync::mpsc::channel;
    /// let pool = throttle::Pool::new(1).unwrap();
    /// let (tx, rx) = channel();
    /// let gate = std::sync::Arc::new(std::sync::Barrier::new(2));
    /// let g = gate.clone();
    /// pool.spawn(move || { g.wait(); }); // holds the only worker until we look
    /// for i in 0..5 {
    ///     let tx = tx.clone();
    ///     pool.spawn_fifo(move || tx.send(i).unwrap());
    /// }
    /// gate.wait();
    /// drop(tx);
    /// assert_eq!(rx.iter().collect::<Vec<_>>(), [0, 1, 2, 3, 4]);
    /// ```
    pub fn spawn_fifo<F>(&self, task: F)
    where
        F: FnOnce() + Send + 'static,
    {
        hooks::spawn_fifo_in(self.registry(), self.hooks.clone(), task);
    }

    /// Spawns a detached task on every worker thread: `op` runs once per worker, with its
    /// index, when that worker next looks for work. Panics go to the panic handler; dropping
    /// the pool waits for the tasks.
    ///
    /// # Examples
    /// ```
    /// use std::sync::mpsc::channel;
    /// let pool = throttle::Pool::new(3).unwrap();
    /// let (tx, rx) = channel();
    /// let tx = std::sync::Mutex::new(tx);
    /// pool.spawn_broadcast(move |ctx| tx.lock().unwrap().send(ctx.index()).unwrap());
    /// let mut seen: Vec<usize> = rx.iter().take(3).collect();
    /// seen.sort();
    /// assert_eq!(seen, [0, 1, 2]);
    /// ```
    pub fn spawn_broadcast<OP>(&self, op: OP)
    where
        OP: Fn(BroadcastContext<'_>) + Send + Sync + 'static,
    {
        hooks::spawn_broadcast_in(self.registry(), self.hooks.clone(), op);
    }

    /// [`yield_now`](crate::yield_now) if the calling thread takes part in this pool, else
    /// `None`.
    ///
    /// # Examples
    /// ```
    /// let pool = throttle::Pool::new(1).unwrap();
    /// assert_eq!(pool.yield_now(), None);
    /// assert!(pool.install(|| pool.yield_now()).is_some());
    /// ```
    pub fn yield_now(&self) -> Option<Yield> {
        let p = current_in(self.registry())?;
        // SAFETY: see `current_in`.
        Some(yield_in(unsafe { &*p }))
    }

    /// [`yield_local`](crate::yield_local) if the calling thread takes part in this pool, else
    /// `None`.
    ///
    /// # Examples
    /// ```
    /// let pool = throttle::Pool::new(1).unwrap();
    /// assert_eq!(pool.yield_local(), None);
    /// assert_eq!(pool.install(|| pool.yield_local()), Some(throttle::Yield::Idle));
    /// ```
    pub fn yield_local(&self) -> Option<Yield> {
        let p = current_in(self.registry())?;
        // SAFETY: see `current_in`.
        Some(yield_local_in(unsafe { &*p }))
    }
}
