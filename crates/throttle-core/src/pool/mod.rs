//! `Pool`: the public face of a registry and its worker threads.

use crate::callsite::{CallSites, Way};
use crate::context::Context;
use crate::controller::auto::AutoSlot;
use crate::error::Error;
use crate::hooks::{self, Hooks};
use crate::index_loops::{auto_block, for_range_grain_in, for_range_in, map_reduce_in};
use crate::job::StackJob;
use crate::join::join_in;
use crate::registry::Registry;
use crate::scope::{scope_in, Scope};
use crate::sleep::Parker;
use crate::stats::Stats;
use crate::sync::Arc;
use crate::worker::Participant;
use std::fmt;
use std::ops::Range;
use std::thread::JoinHandle;
use std::time::Instant;

mod builder;
mod limit;
mod tasks;

pub use builder::{default_threads, PoolBuilder, PLACEMENT_ENV};
pub(crate) use builder::{spawn_std_thread, WorkerStart};
pub(crate) use limit::{serial_in, with_serial_pool};

/// A pool of worker threads with a live concurrency limit.
///
/// Work enters through
/// [`install`](Pool::install), [`join`](Pool::join), [`scope`](Pool::scope),
/// [`for_range`](Pool::for_range) and [`map_reduce`](Pool::map_reduce). The calling thread takes
/// part: it runs its own call, and while it waits, only work of that call (a worker of another
/// pool calling in may also run its own pool's work, which has no other runner then). The live limit
/// ([`set_concurrency`](Pool::set_concurrency)) bounds how many threads hold a *run slot*,
/// callers included; see there for exactly when a lowered limit takes effect.
///
/// Calls may nest across pools in any order (`a.install(|| b.install(|| a.install(..)))`): a
/// thread gives back its slot in one pool while it works for another, so no pool waits on a
/// thread that is away.
///
/// Dropping the pool stops and joins its threads. Dropped from inside one of its own tasks (the
/// last handle moved into a task), it stops its threads without joining them: each exits when
/// it has no more work.
///
/// # Examples
/// ```
/// let pool = throttle::Pool::new(2).unwrap();
/// let (a, b) = pool.join(|| 1 + 1, || 2 + 2);
/// assert_eq!((a, b), (2, 4));
/// let sum = pool.map_reduce(0..1000, || 0u64, |i| i as u64, |a, b| a + b);
/// assert_eq!(sum, 499_500);
/// ```
pub struct Pool {
    registry: Arc<Registry>,
    handles: Vec<JoinHandle<()>>,
    // --- jobserver ---
    /// The machine-wide budget, if the pool joined a jobserver.
    #[cfg(not(loom))]
    budget: Option<crate::jobserver::budget::Budget>,
    /// Auto mode: the controller thread, if on, and its log.
    auto: AutoSlot,
    /// Auto mode: per-call-site memory of loops' costs ("if any at all").
    sites: CallSites,
    /// Handlers and detached tasks (hooks.rs).
    pub(crate) hooks: std::sync::Arc<Hooks>,
}

thread_local! {
    /// The parker of a thread that calls into pools from outside.
    static OUTSIDE_PARKER: Arc<Parker> = Arc::new(Parker::for_current_thread());
}

/// Gives back an outside caller's run slot, also when its call unwinds.
struct SlotGuard<'a>(&'a Registry);

impl Drop for SlotGuard<'_> {
    fn drop(&mut self) {
        self.0.release_slot();
    }
}

impl Pool {
    /// A pool of `threads` worker threads.
    ///
    /// # Errors
    /// See [`PoolBuilder::build`].
    ///
    /// # Examples
    /// ```
    /// let pool = throttle::Pool::new(4).unwrap();
    /// assert_eq!(pool.threads(), 4);
    /// assert!(throttle::Pool::new(0).is_err());
    /// ```
    pub fn new(threads: usize) -> Result<Pool, Error> {
        Pool::builder().threads(threads).build()
    }

    /// A builder for a pool with more options.
    ///
    /// # Examples
    /// ```
    /// let pool = throttle::Pool::builder()
    ///     .threads(2)
    ///     .thread_name(|i| format!("crunch-{i}"))
    ///     .stats(false)
    ///     .build()
    ///     .unwrap();
    /// assert_eq!(pool.install(|| 6 * 7), 42);
    /// ```
    pub fn builder() -> PoolBuilder {
        PoolBuilder::new()
    }

    /// The number of worker threads.
    pub fn threads(&self) -> usize {
        self.registry.threads()
    }

    /// The pool's registry (for hooks.rs).
    pub(crate) fn registry(&self) -> &Registry {
        &self.registry
    }

    /// Runs `op` with the calling thread as a participant of this pool, holding a run slot. If
    /// every slot is taken, the caller queues for one (FIFO) first: searching workers give way
    /// to it at once, busy ones at their next task boundary.
    ///
    /// A thread that takes part in another pool (it runs one of that pool's tasks, or a call
    /// into it) gives back that pool's slot for the duration, and takes one again afterwards. So
    /// a thread holds at most one slot at a time, and a thread blocked on a call into a busy pool
    /// holds none: nesting pools in any order cannot deadlock on slots.
    #[track_caller]
    pub(crate) fn in_pool<R, OP>(&self, op: OP) -> R
    where
        OP: FnOnce(&Participant) -> R + Send,
        R: Send,
    {
        let registry = &*self.registry;
        let current = Participant::with_current(|p| p.map(|p| p as *const Participant));
        // SAFETY: the current participant lives until its `enter` guard drops, which is after
        // this call returns (it is further up this thread's stack).
        let current = current.map(|p| unsafe { &*p });
        if let Some(p) = current.filter(|p| p.is_in(registry)) {
            return op(p);
        }
        if current.is_none() && registry.hands_outside_calls() {
            // rayon's semantics (a global pool built by `ThreadPoolBuilder::build_global`): a
            // thread outside every pool blocks while a worker runs its call. It takes part in
            // no pool, so no worker can be waiting for it.
            return self.hand_to_worker(|| {
                Participant::with_current(|p| op(p.expect("a handed call runs on a worker")))
            });
        }
        let _away = current.map(Participant::suspend);
        let parker = OUTSIDE_PARKER.with(|p| p.clone());
        // The caller runs its own call, never hands it to a worker: a call queued for workers
        // that are all away in other pools would wait for them, and they may wait for it.
        let t0 = Instant::now();
        let waited = registry.wait_for_slot(&parker);
        let _slot = SlotGuard(registry);
        let me = Participant::guest(registry, parker);
        if waited {
            me.add_limit_wait(t0);
            me.trace_limit_wait_since(t0);
        }
        me.trace_call(std::panic::Location::caller());
        let _current = me.enter();
        me.begin_busy();
        op(&me)
    }

    /// Runs `op` inside the pool with an explicit [`Context`]: forks made with
    /// [`Context::join`] skip the thread-local lookup of the free [`join`](crate::join), which
    /// matters on recursions whose leaves cost a few nanoseconds (`throttle-bench --bench fib`
    /// measures both forms).
    ///
    /// # Examples
    /// ```
    /// let pool = throttle::Pool::new(2).unwrap();
    /// let (a, b) = pool.install_cx(|cx| cx.join(|_| 20, |_| 22));
    /// assert_eq!(a + b, 42);
    /// ```
    #[track_caller]
    pub fn install_cx<R, OP>(&self, op: OP) -> R
    where
        OP: FnOnce(&Context) -> R + Send,
        R: Send,
    {
        self.in_pool(|p| op(Context::of(p)))
    }

    /// Runs `op` inside the pool: `join`, `scope`, `for_range` and `map_reduce` called from `op`
    /// use this pool. Returns `op`'s result; a panic in `op` is resumed here.
    ///
    /// # Examples
    /// ```
    /// let pool = throttle::Pool::new(2).unwrap();
    /// let (a, b) = pool.install(|| throttle::join(|| 1, || 2));
    /// assert_eq!(a + b, 3);
    /// ```
    #[track_caller]
    pub fn install<R, OP>(&self, op: OP) -> R
    where
        OP: FnOnce() -> R + Send,
        R: Send,
    {
        self.in_pool(|_| op())
    }

    /// Lets the worker threads go: when the pool is dropped it stops them but does not join
    /// them (rayon's `ThreadPool` drop; they exit once idle, after their exit handlers).
    pub(crate) fn detach_threads(&mut self) {
        self.handles.clear();
    }

    /// Runs `op` on one of the pool's worker threads and blocks the calling thread until it
    /// returned (rayon's `ThreadPool::install`, see `thread_pool/`): `op` sees a worker's
    /// stack size, name and thread-locals. A thread that already takes part in a pool (this
    /// one or another) runs `op` itself, as [`install`](Pool::install) does: handing the call
    /// away and blocking would idle a thread that the call may need (a pool of one thread
    /// calling back into itself through another pool).
    ///
    /// The blocked caller holds no run slot and takes no part in the pool.
    pub(crate) fn install_on_worker<R, OP>(&self, op: OP) -> R
    where
        OP: FnOnce() -> R + Send,
        R: Send,
    {
        if Participant::with_current(|p| p.is_some()) {
            return self.install(op);
        }
        self.hand_to_worker(op)
    }

    /// Publishes `op` for the workers and blocks the calling thread, which takes part in no
    /// pool, until one of them ran it; returns its result or resumes its panic.
    fn hand_to_worker<R, OP>(&self, op: OP) -> R
    where
        OP: FnOnce() -> R + Send,
        R: Send,
    {
        let job = StackJob::new(op);
        let registry = &*self.registry;
        // The job lives in this frame until its latch is set (the wait below; nothing between
        // can unwind), and a published job is run exactly once, by whoever takes it.
        registry.publish(&registry.injector, job.as_job_ref());
        let parker = OUTSIDE_PARKER.with(|p| p.clone());
        if job.latch.register_sleeper(&parker) {
            // The setter unparks this thread after its final store; a token left from an
            // earlier unpark only costs another look.
            while !job.latch.probe() {
                crate::sync::park();
            }
        }
        match job.into_thread_result() {
            Ok(r) => r,
            Err(payload) => std::panic::resume_unwind(payload),
        }
    }

    /// Runs `a` and `b`, potentially in parallel, and returns both results.
    ///
    /// `a` runs on the calling thread; `b` runs there too unless another thread is hungry for
    /// work, in which case it may be run by that thread. A panic in either is resumed here (after
    /// both finished; `a`'s panic wins).
    ///
    /// # Examples
    /// ```
    /// fn fib(n: u64) -> u64 {
    ///     if n < 2 { return n; }
    ///     let (a, b) = throttle::join(|| fib(n - 1), || fib(n - 2));
    ///     a + b
    /// }
    /// let pool = throttle::Pool::new(2).unwrap();
    /// assert_eq!(pool.install(|| fib(20)), 6765);
    /// ```
    #[track_caller]
    pub fn join<A, B, RA, RB>(&self, a: A, b: B) -> (RA, RB)
    where
        A: FnOnce() -> RA + Send,
        B: FnOnce() -> RB + Send,
        RA: Send,
        RB: Send,
    {
        self.in_pool(|p| join_in(p, |_| a(), |_| b()))
    }

    /// Creates a [`Scope`] in which tasks can be spawned; returns when the body and all tasks
    /// finished.
    ///
    /// # Examples
    /// ```
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    /// let pool = throttle::Pool::new(2).unwrap();
    /// let count = AtomicUsize::new(0);
    /// pool.scope(|s| {
    ///     for _ in 0..10 {
    ///         s.spawn(|_| { count.fetch_add(1, Ordering::Relaxed); });
    ///     }
    /// });
    /// assert_eq!(count.into_inner(), 10);
    /// ```
    #[track_caller]
    pub fn scope<'scope, OP, R>(&self, op: OP) -> R
    where
        OP: FnOnce(&Scope<'scope>) -> R + Send,
        R: Send,
    {
        self.in_pool(|p| scope_in(p, op))
    }

    /// Calls `f(i)` for every `i` in `range`, in parallel, with automatic grain: the loop splits
    /// only when another thread is hungry for work.
    ///
    /// # Examples
    /// ```
    /// use std::sync::atomic::{AtomicU64, Ordering};
    /// let pool = throttle::Pool::new(2).unwrap();
    /// let total = AtomicU64::new(0);
    /// pool.for_range(0..100, |i| { total.fetch_add(i as u64, Ordering::Relaxed); });
    /// assert_eq!(total.into_inner(), 4950);
    /// ```
    #[track_caller]
    pub fn for_range<F>(&self, range: Range<usize>, f: F)
    where
        F: Fn(usize) + Sync + Send,
    {
        let serial = |range: Range<usize>| {
            // On the calling thread alone, but still belonging to this pool
            // (`serial_in`). The body through a closure of our own, not `&f`: core's
            // `FnMut for &F` does not inline into the loop (`inline_call.rs`), which cost
            // a call per index (a call of 16 one-spin jobs ran 164 instructions this way, 98
            // as a plain loop; callgrind).
            serial_in(self, || range.for_each(crate::inline_call::inlined(&f)))
        };
        let parallel = |range: Range<usize>| {
            let block = auto_block(range.len(), self.threads());
            self.in_pool(|p| for_range_in(p, range, block, &f))
        };
        if self.auto.is_on_fast() {
            // The common call of a short loop in auto mode, serial and untimed, runs inline
            // (`remembered_at`), the rest out of line.
            let site = std::panic::Location::caller();
            return self.remembered_at(site, range.len(), |way| match way {
                Way::Serial => serial(range),
                Way::Parallel => parallel(range),
            });
        }
        parallel(range)
    }

    /// Like [`for_range`](Pool::for_range), but splits eagerly into pieces of at most `grain`
    /// indices (a `grain` of 0 is taken as 1).
    ///
    /// # Examples
    /// ```
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    /// let pool = throttle::Pool::new(2).unwrap();
    /// let calls = AtomicUsize::new(0);
    /// pool.for_range_grain(0..64, 8, |_| { calls.fetch_add(1, Ordering::Relaxed); });
    /// assert_eq!(calls.into_inner(), 64);
    /// ```
    #[track_caller]
    pub fn for_range_grain<F>(&self, range: Range<usize>, grain: usize, f: F)
    where
        F: Fn(usize) + Sync + Send,
    {
        self.in_pool(|p| for_range_grain_in(p, range, grain.max(1), &f))
    }

    /// Maps every index of `range` with `map` and combines the results with `reduce`, in
    /// parallel. `reduce` must be associative and `identity()` its neutral element; the order of
    /// combination follows the range, so non-commutative reductions are fine.
    ///
    /// # Examples
    /// ```
    /// let pool = throttle::Pool::new(2).unwrap();
    /// let s = pool.map_reduce(0..5, String::new, |i| i.to_string(), |a, b| a + &b);
    /// assert_eq!(s, "01234");
    /// ```
    #[track_caller]
    pub fn map_reduce<T, ID, M, RD>(
        &self,
        range: Range<usize>,
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
        let serial = |range: Range<usize>| {
            serial_in(self, || {
                range.fold(identity(), |acc, i| reduce(acc, map(i)))
            })
        };
        let parallel = |range: Range<usize>| {
            let block = auto_block(range.len(), self.threads());
            self.in_pool(|p| map_reduce_in(p, range, block, &identity, &map, &reduce))
        };
        if self.auto.is_on_fast() {
            let site = std::panic::Location::caller();
            return self.remembered_at(site, range.len(), |way| match way {
                Way::Serial => serial(range),
                Way::Parallel => parallel(range),
            });
        }
        parallel(range)
    }

    /// Starts recording the pool's timeline: every thread appends what it does (runs, steals,
    /// shares, sleeps and wake-ups, waits for the limit or in joins, busy marks, limit changes,
    /// controller decisions, jobserver tokens) to its own ring. A running recording is
    /// discarded and a new one starts. The cost while off is one relaxed load per event site;
    /// see the `trace` module and `src/trace/README.md`.
    ///
    /// Callers from outside the pool are recorded if their call starts while the recording is
    /// on (up to 8 at once). Busy marks (the concurrency level) need the stats (the default).
    ///
    /// # Examples
    /// ```
    /// let pool = throttle::Pool::new(2).unwrap();
    /// pool.start_trace();
    /// pool.for_range(0..100, |i| { std::hint::black_box(i); });
    /// let trace = pool.stop_trace();
    /// assert!(trace.duration > std::time::Duration::ZERO);
    /// ```
    pub fn start_trace(&self) {
        self.registry.trace().start(self.concurrency());
    }

    /// Stops the recording and returns it (an empty trace if none was running). Events that
    /// did not fit a thread's ring are counted in [`trace::Track::dropped`](crate::trace::Track).
    ///
    /// # Examples
    /// ```
    /// let pool = throttle::Pool::new(2).unwrap();
    /// assert!(pool.stop_trace().tracks().is_empty());
    /// pool.start_trace();
    /// pool.join(|| 1, || 2);
    /// let trace = pool.stop_trace();
    /// assert_eq!(trace.tracks().len(), 2 + 1 + 1); // two workers, the caller, the pool track
    /// ```
    pub fn stop_trace(&self) -> crate::trace::model::Trace {
        self.registry.trace().stop()
    }

    /// What the pool did so far; see [`Stats`].
    pub fn stats(&self) -> Stats {
        let mut s = self.registry.stats.snapshot();
        (s.controller_decisions, s.controller_last) = self.auto.decisions();
        s.serial_calls = self.sites.serial_calls();
        s.spares_started = self.registry.spares_started() as u64;
        s.starvation_rescues = self.registry.starvation_rescues() as u64;
        s.limit_takeovers = self.registry.sleep.takeovers() as u64;
        s
    }
}

/// The pool's size and limit, and a relaxed snapshot of who holds, waits for or sleeps without a
/// run slot (sleep/README.md): enough to see in a hung test's report where each thread is.
impl fmt::Debug for Pool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let registry = &*self.registry;
        let state = registry.sleep.load();
        let mail: Vec<usize> = (0..self.threads())
            .filter(|&i| registry.has_mail(i))
            .collect();
        f.debug_struct("Pool")
            .field("threads", &self.threads())
            .field("concurrency", &state.limit())
            .field("active", &state.active())
            .field("searching", &state.searching())
            .field("sleeping", &state.sleeping())
            .field("waiting_for_slot", &registry.sleep.limit_waiting())
            .field("queued", &registry.queued())
            .field("pending_forks", &registry.pending_forks())
            .field("mail_for", &mail)
            .field("spares", &registry.spares_alive())
            .field("blocked", &registry.blocked_threads())
            .field(
                "fences",
                &if crate::barrier::expedited() {
                    "asymmetric (membarrier)"
                } else {
                    "symmetric"
                },
            )
            .finish()
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        // A thread adopted as worker 0 (`adopt.rs`) that drops its pool becomes an outside
        // thread again first, so that it waits for the detached tasks like any other.
        crate::adopt::release_if_adopted(&self.registry);
        self.auto.stop();
        // Inside one of its own tasks, `wait_for_detached` does not wait (the task would wait for
        // itself); the detached tasks still run, the workers drain the queues first.
        self.hooks.wait_for_detached(&self.registry);
        // --- jobserver: tokens go back before the threads stop ---
        #[cfg(not(loom))]
        drop(self.budget.take());
        let me = std::thread::current().id();
        let inside = self.handles.iter().any(|h| h.thread().id() == me);
        hooks::unregister(&self.registry);
        self.registry.terminate();
        #[cfg(not(loom))]
        let spares = self.registry.terminate_spares();
        if inside {
            // The last handle dropped inside one of our own tasks: joining would wait for this
            // very thread (and for workers that may wait on it). Detach them all; each exits
            // when it runs out of work, and the registry lives on in their `Arc`s until then.
            self.handles.clear();
            return;
        }
        for h in self.handles.drain(..) {
            // A worker never panics out of its loop (jobs catch their panics); if one did, the
            // pool is going away anyway and the panic was already reported on stderr.
            let _ = h.join();
        }
        // Spares exit once idle (their loop sees the pool exiting).
        #[cfg(not(loom))]
        for h in spares {
            let _ = h.join();
        }
    }
}
