//! `Pool`: the public face of a registry and its worker threads.

use crate::callsite::{CallSites, Way};
use crate::context::Context;
use crate::controller::auto::{apply_limit, AutoSlot};
use crate::controller::{ControllerEvent, DEFAULT_INTERVAL};
use crate::error::Error;
use crate::hooks::{self, Hooks};
use crate::index_loops::{auto_block, for_range_grain_in, for_range_in, map_reduce_in};
use crate::job::StackJob;
use crate::join::join_in;
use crate::placement::Placement;
use crate::registry::{worker_main, Registry, DEFAULT_STACK_SIZE};
use crate::scope::{scope_in, Scope};
use crate::sleep::{state::MAX_THREADS, Parker};
use crate::stats::Stats;
use crate::sync::Arc;
use crate::worker::Participant;
use std::fmt;
use std::ops::Range;
use std::thread::JoinHandle;
use std::time::Instant;

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

type NameFn = Box<dyn Fn(usize) -> String>;

/// Configures a [`Pool`]; from [`Pool::builder`].
pub struct PoolBuilder {
    threads: Option<usize>,
    name: Option<NameFn>,
    stack_size: Option<usize>,
    stats: bool,
    placement: bool,
    trace_capacity: usize,
    // --- jobserver ---
    #[cfg(not(loom))]
    jobserver: Option<crate::jobserver::Jobserver>,
    /// Install the SIGINT/SIGTERM/exit hooks when joining a jobserver (opt-in).
    exit_hooks: bool,
    auto: bool,
    /// Start, exit and panic handlers (set in hooks.rs).
    pub(crate) hooks: Hooks,
}

impl fmt::Debug for PoolBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PoolBuilder")
            .field("threads", &self.threads)
            .field("stack_size", &self.stack_size)
            .field("stats", &self.stats)
            .field("placement", &self.placement)
            .field("auto", &self.auto)
            .finish_non_exhaustive()
    }
}

impl PoolBuilder {
    /// Number of worker threads (default: the CPUs this process may use; see
    /// [`default_threads`](crate::default_threads)).
    pub fn threads(mut self, n: usize) -> Self {
        self.threads = Some(n);
        self
    }

    /// Names worker `i` with `name(i)` (default: `throttle-{i}`).
    pub fn thread_name(mut self, name: impl Fn(usize) -> String + 'static) -> Self {
        self.name = Some(Box::new(name));
        self
    }

    /// Stack size of each worker in bytes (default: [`DEFAULT_STACK_SIZE`]).
    pub fn stack_size(mut self, bytes: usize) -> Self {
        self.stack_size = Some(bytes);
        self
    }

    /// Whether to keep [`Stats`] (default: on; their cost is measured by `throttle-bench`).
    pub fn stats(mut self, on: bool) -> Self {
        self.stats = on;
        self
    }

    /// Whether a sleeping worker narrows its CPU affinity to a *home* CPU so that the kernel
    /// wakes it there instead of on its waker's CPU (default: off; on Linux, `THROTTLE_PLACEMENT=1`
    /// in the environment turns it on for every pool whose builder does not say). It costs four
    /// system calls and a forced migration per idle sleep and changes the threads' affinity, so
    /// a library does not do it unasked. It never widens
    /// or replaces an affinity set by anyone else: a worker narrows only the mask it has when
    /// it goes to sleep, and restores that mask on waking only if nobody changed it meanwhile.
    /// Homes are spread over the allowed CPUs, and successive pools start at different CPUs.
    /// One case cannot be told apart: a one-CPU mask equal to a worker's home, set while that
    /// worker sleeps, looks like the pool's own narrowing and is undone when it wakes; turn
    /// placement off if you pin the workers yourself.
    /// Why, and what it measured: `src/placement.rs`; `throttle-bench --bench placement`
    /// compares on and off.
    ///
    /// # Examples
    /// ```
    /// let pool = throttle::Pool::builder().threads(2).placement(true).build().unwrap();
    /// assert_eq!(pool.install(|| 1 + 1), 2);
    /// ```
    pub fn placement(mut self, on: bool) -> Self {
        self.placement = on;
        self
    }

    // --- jobserver ---
    /// Joins a machine-wide budget: the pool runs at most 1 + (tokens held) threads at once,
    /// asks `js` for a token only when work waits for another thread, and gives it back a few
    /// milliseconds after the work runs out (see `src/jobserver/README.md`). The global pool
    /// joins the jobserver in its environment by default
    /// ([`JOBSERVER_ENV`](crate::JOBSERVER_ENV) opts out); explicit pools join only through
    /// this.
    ///
    /// # Examples
    /// ```
    /// // No jobserver in the environment: nothing to join, and the pool runs as usual.
    /// std::env::remove_var("MAKEFLAGS");
    /// std::env::remove_var("CARGO_MAKEFLAGS");
    /// std::env::remove_var("MFLAGS");
    /// let mut b = throttle::Pool::builder().threads(2);
    /// if let Some(js) = throttle::Jobserver::from_env() {
    ///     b = b.jobserver(js);
    /// }
    /// assert_eq!(b.build().unwrap().install(|| 2 + 2), 4);
    /// ```
    #[cfg(not(loom))]
    pub fn jobserver(mut self, js: crate::jobserver::Jobserver) -> Self {
        self.jobserver = Some(js);
        self
    }

    /// Whether joining a jobserver also installs the process-wide hooks that give its tokens back
    /// on SIGINT, SIGTERM and exit ([`install_exit_hooks`](crate::jobserver::install_exit_hooks);
    /// default: off, so the pool changes no signal disposition and registers no `atexit`). For
    /// the global pool, `THROTTLE_JOBSERVER_HOOKS=1` ([`HOOKS_ENV`](crate::jobserver::HOOKS_ENV))
    /// does the same.
    ///
    /// # Examples
    /// ```
    /// let pool = throttle::Pool::builder().threads(2).jobserver_exit_hooks(true).build().unwrap();
    /// assert_eq!(pool.install(|| 3), 3); // no jobserver joined: nothing installed
    /// ```
    pub fn jobserver_exit_hooks(mut self, on: bool) -> Self {
        self.exit_hooks = on;
        self
    }

    /// Starts the pool in auto mode: it chooses its own concurrency; see
    /// [`Pool::set_concurrency_auto`]. Building then fails if stats are off.
    ///
    /// # Examples
    /// ```
    /// let pool = throttle::Pool::builder().threads(2).auto_concurrency().build().unwrap();
    /// assert!(pool.is_concurrency_auto());
    /// ```
    pub fn auto_concurrency(mut self) -> Self {
        self.auto = true;
        self
    }

    /// The size of each thread's timeline ring, in events (default
    /// [`trace::DEFAULT_CAPACITY`](crate::trace::recorder::DEFAULT_CAPACITY)); see
    /// [`Pool::start_trace`]. The rings are allocated at the first `start_trace` only.
    ///
    /// # Examples
    /// ```
    /// let pool = throttle::Pool::builder().threads(1).trace_capacity(4).build().unwrap();
    /// pool.start_trace();
    /// pool.for_range_grain(0..1000, 1, |i| { std::hint::black_box(i); });
    /// let trace = pool.stop_trace();
    /// assert_eq!(trace.capacity, 4);
    /// assert!(trace.dropped() > 0);
    /// ```
    pub fn trace_capacity(mut self, events: usize) -> Self {
        self.trace_capacity = events.max(1);
        self
    }

    /// Starts the threads.
    ///
    /// # Errors
    /// Zero threads, more than 65 535 threads, or a thread the OS refuses to start.
    pub fn build(self) -> Result<Pool, Error> {
        self.build_with(false, &mut spawn_std_thread)
    }

    /// [`build`](PoolBuilder::build) with the worker threads started by `spawn` (the rayon
    /// names' `spawn_handler`, `thread_pool/builder.rs`). `spawn` gets each worker's start and
    /// must run it on a new thread; it returns the thread's handle if the pool may join it on
    /// drop (`None`: the thread belongs to the spawner, and the pool only tells it to stop).
    /// With `adopt`, the calling thread becomes worker 0 (`adopt.rs`) and `spawn` starts the
    /// others.
    pub(crate) fn build_with(self, adopt: bool, spawn: &mut Spawner<'_>) -> Result<Pool, Error> {
        let threads = match self.threads {
            Some(n) => n,
            None => crate::default_threads(),
        };
        if threads == 0 {
            return Err(Error::zero_threads());
        }
        if threads > MAX_THREADS {
            return Err(Error::too_many_threads(threads));
        }
        if adopt && crate::adopt::in_some_pool() {
            return Err(Error::already_in_pool());
        }
        let (registry, deques) =
            Registry::with_trace_capacity(threads, self.stats, self.trace_capacity);
        let registry = Arc::new(registry);
        #[cfg(not(loom))]
        registry
            .spares
            .enable(&registry, self.stack_size.unwrap_or(DEFAULT_STACK_SIZE));
        let hooks = std::sync::Arc::new(self.hooks);
        hooks::register(&registry, &hooks);
        let mut pool = Pool {
            registry,
            handles: Vec::with_capacity(threads),
            #[cfg(not(loom))]
            budget: None,
            auto: AutoSlot::new(),
            sites: CallSites::new(threads),
            hooks,
        };
        let homes = if self.placement {
            Placement::homes_for_new_pool()
        } else {
            None
        };
        // Each name is asked for just before its thread starts (as rayon does): a naming
        // function that panics leaves the threads before it started, and the partial pool's
        // drop stops them.
        let name_of = |index: usize| self.name.as_ref().map(|f| f(index));
        let mut names = Vec::with_capacity(threads);
        let mut workers = deques.into_iter().enumerate();
        if adopt {
            // Before any other worker starts, so a run slot is free for it.
            let (_, deque) = workers.next().expect("a pool has at least one thread");
            names.push(name_of(0).unwrap_or_else(|| "throttle-0".to_string()));
            crate::adopt::adopt(&pool.registry, deque);
        }
        for (index, deque) in workers {
            let registry = pool.registry.clone();
            let placement = homes.as_ref().map(|h| h.for_worker(index));
            let hooks = pool.hooks.clone();
            let start = WorkerStart {
                index,
                name: name_of(index),
                stack_size: self.stack_size,
                run: Box::new(move || {
                    hooks.run_worker(index, || worker_main(registry, index, deque, placement))
                }),
            };
            names.push(start.name_or_default());
            // On failure, `pool` drops here and stops the threads already started.
            if let Some(handle) = spawn(start).map_err(Error::spawn)? {
                pool.handles.push(handle);
            }
        }
        pool.registry.trace().set_names(names);
        // --- jobserver ---
        #[cfg(not(loom))]
        if let Some(js) = self.jobserver {
            if self.exit_hooks {
                crate::jobserver::install_exit_hooks();
            }
            let budget = crate::jobserver::budget::Budget::start(js, pool.registry.clone());
            pool.budget = Some(budget.map_err(Error::spawn)?);
        }
        if self.auto {
            pool.set_concurrency_auto()?;
        }
        Ok(pool)
    }
}

/// The environment variable that turns CPU placement on by default
/// ([`PoolBuilder::placement`]): `1`, `on`, `yes` or `true`.
pub const PLACEMENT_ENV: &str = "THROTTLE_PLACEMENT";

fn placement_from_env() -> bool {
    std::env::var(PLACEMENT_ENV).is_ok_and(|v| matches!(v.trim(), "1" | "on" | "yes" | "true"))
}

/// What it takes to start one worker thread: its index, the name and stack size the builder
/// was given (`None` if not), and the worker's main loop, to be run on the new thread.
pub(crate) struct WorkerStart {
    pub(crate) index: usize,
    pub(crate) name: Option<String>,
    pub(crate) stack_size: Option<usize>,
    pub(crate) run: Box<dyn FnOnce() + Send>,
}

impl WorkerStart {
    /// The thread name throttle gives worker `index` when the builder named none.
    pub(crate) fn name_or_default(&self) -> String {
        self.name
            .clone()
            .unwrap_or_else(|| format!("throttle-{}", self.index))
    }
}

/// Starts a worker thread; see [`PoolBuilder::build_with`].
pub(crate) type Spawner<'a> =
    dyn FnMut(WorkerStart) -> std::io::Result<Option<JoinHandle<()>>> + 'a;

/// The default spawner: a `std` thread named `throttle-{i}` (or the builder's name) with
/// [`DEFAULT_STACK_SIZE`] (or the builder's size), joined when the pool drops.
pub(crate) fn spawn_std_thread(start: WorkerStart) -> std::io::Result<Option<JoinHandle<()>>> {
    std::thread::Builder::new()
        .name(start.name_or_default())
        .stack_size(start.stack_size.unwrap_or(DEFAULT_STACK_SIZE))
        .spawn(start.run)
        .map(Some)
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
        PoolBuilder {
            threads: None,
            name: None,
            stack_size: None,
            stats: true,
            placement: cfg!(target_os = "linux") && placement_from_env(),
            trace_capacity: crate::trace::recorder::DEFAULT_CAPACITY,
            #[cfg(not(loom))]
            jobserver: None,
            exit_hooks: false,
            auto: false,
            hooks: Hooks::default(),
        }
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
            // (`global::serial_in`). The body through a closure of our own, not `&f`: core's
            // `FnMut for &F` does not inline into the loop (`iter/inline_call.rs`), which cost
            // a call per index (a call of 16 one-spin jobs ran 164 instructions this way, 98
            // as a plain loop; callgrind).
            crate::global::serial_in(self, || {
                range.for_each(crate::iter::inline_call::inlined(&f))
            })
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
            crate::global::serial_in(self, || {
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

    /// Sets the live concurrency limit `k`: at most `k` threads hold a *run slot* of this pool,
    /// callers included, and only slot holders start tasks.
    ///
    /// Exactly what is promised:
    /// - Raising the limit takes effect at once: queued threads get the new slots, and a sleeping
    ///   worker is woken if work is waiting.
    /// - Lowering it is cooperative: a thread over the limit gives back its slot at its next
    ///   *task boundary*: when it forks or takes a fork back to run its second half, when a job
    ///   or loop block ends, or when it waits. A task that runs for a long time without forking
    ///   keeps its slot until it ends: code cannot be interrupted. So for a short while after a
    ///   lowering, more than `k` threads may still run; [`Pool::await_concurrency`] waits until
    ///   that is over. `throttle-bench --bench limit_response` measures how long it takes. The
    ///   exact bound: once the limit has been `k` since a thread's previous leaf began (a loop
    ///   block, or a fork's half that does not fork), that thread looks before its next leaf,
    ///   so it starts none beside `k` other slot holders (`tests/limit.rs`).
    /// - From then on, at no instant do more than `k` threads hold slots.
    /// - One exception: the limit counts threads that can compute. When a thread has queued for
    ///   a slot for a millisecond or more and the kernel reports every slot holder blocked (on a
    ///   lock, in I/O, asleep: none runnable), the first thread in the queue takes a slot over
    ///   the limit (`Stats::limit_takeovers` counts these). Without it, a task that holds a lock
    ///   while it waits for its fork, behind slot holders blocked on that lock, would wait
    ///   forever. Whoever is over the limit gives a slot back at its next task boundary, as
    ///   after a lowering. Holders are known by their kernel thread ids (workers, spares, and
    ///   callers that took part with one of the pool's lent deques); on a system without
    ///   `/proc` no slot is ever taken over.
    ///
    /// # Errors
    /// `k` outside `1..=threads`.
    ///
    /// # Examples
    /// ```
    /// let pool = throttle::Pool::new(4).unwrap();
    /// pool.set_concurrency(2).unwrap();
    /// assert_eq!(pool.concurrency(), 2);
    /// assert!(pool.set_concurrency(0).is_err());
    /// assert!(pool.set_concurrency(5).is_err());
    /// ```
    pub fn set_concurrency(&self, k: usize) -> Result<(), Error> {
        if k == 0 || k > self.threads() {
            return Err(Error::concurrency(k, self.threads()));
        }
        // A fixed limit ends auto mode (the controller thread is joined first, so its last
        // decision cannot land after ours).
        self.auto.stop();
        // --- jobserver: the budget caps the user's limit ---
        #[cfg(not(loom))]
        if let Some(b) = &self.budget {
            b.set_user_limit(k);
            return Ok(());
        }
        apply_limit(&self.registry, k);
        Ok(())
    }

    /// Waits until no more threads hold run slots than the limit allows (after
    /// [`set_concurrency`](Pool::set_concurrency) lowered it), or until `timeout` passes.
    /// Returns true if the pool is within its limit.
    ///
    /// Called from inside one of the pool's tasks, the caller's own slot counts: with a limit of
    /// 1 and another thread busy, it cannot succeed before that thread yields.
    ///
    /// # Examples
    /// ```
    /// use std::time::Duration;
    /// let pool = throttle::Pool::new(2).unwrap();
    /// pool.set_concurrency(1).unwrap();
    /// assert!(pool.await_concurrency(Duration::from_secs(10)));
    /// ```
    pub fn await_concurrency(&self, timeout: std::time::Duration) -> bool {
        use std::time::Duration;
        let start = std::time::Instant::now();
        let mut pause = Duration::from_micros(50);
        loop {
            let s = self.registry.sleep.load();
            if s.active() <= s.limit() {
                return true;
            }
            let waited = start.elapsed();
            if waited >= timeout {
                return false;
            }
            // A limit takes effect within a task boundary, usually microseconds: poll (yielding
            // the CPU) for the first 100 µs, then sleep with a growing pause up to 1 ms, rather
            // than add a notification to the hot path. A sleep shorter than ~50 µs is not worth
            // asking for: the kernel's timer slack rounds it up to that.
            if waited < Duration::from_micros(100) {
                std::thread::yield_now();
                continue;
            }
            std::thread::sleep(pause.min(timeout - waited));
            pause = (pause * 2).min(Duration::from_millis(1));
        }
    }

    /// The current concurrency limit (in auto mode, the controller's current choice): the
    /// effective one, min(user limit, 1 + tokens held), if the pool joined a jobserver.
    pub fn concurrency(&self) -> usize {
        self.registry.sleep.load().limit()
    }

    // --- jobserver ---
    /// The jobserver tokens the pool holds now, or `None` if it joined no jobserver. The pool
    /// runs at most 1 + this many threads.
    ///
    /// # Examples
    /// ```
    /// let pool = throttle::Pool::new(2).unwrap();
    /// assert_eq!(pool.jobserver_tokens(), None);
    /// ```
    #[cfg(not(loom))]
    pub fn jobserver_tokens(&self) -> Option<usize> {
        self.jobserver_tokens_inner()
    }

    /// Gives back the jobserver tokens no running work needs, at once (see `global.rs`).
    #[cfg(not(loom))]
    pub(crate) fn flush_jobserver_tokens(&self) {
        if let Some(b) = &self.budget {
            b.flush(std::time::Duration::from_millis(200));
        }
    }

    #[cfg(not(loom))]
    fn jobserver_tokens_inner(&self) -> Option<usize> {
        self.budget.as_ref().map(|b| b.tokens())
    }

    /// The limit set by [`set_concurrency`](Pool::set_concurrency) (or the thread count), before
    /// the jobserver's cap.
    #[cfg(not(loom))]
    pub fn user_concurrency(&self) -> usize {
        match &self.budget {
            Some(b) => b.user_limit(),
            None => self.concurrency(),
        }
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

/// Auto mode: the pool chooses its own concurrency (`throttle-controller/src/README.md`).
impl Pool {
    /// Lets the pool choose its concurrency `k` in `1..=threads()` and keep choosing as the
    /// work changes. A controller thread measures the pool (completed work, busy time, the
    /// workers' run-queue wait) every half [`DEFAULT_INTERVAL`] while work runs, every
    /// sixteenth of it while it scans and every whole one while the pool is idle, and sets the
    /// limit through the same machinery as [`set_concurrency`](Pool::set_concurrency), which
    /// ends auto mode. It starts cold: a scan from `k = threads()` down, a fit, then it stays
    /// still until the throughput or the run-queue wait shifts beyond their measured noise.
    /// Calling it again restarts from cold.
    ///
    /// The throughput it learns from is completed work per second in units that exist at every
    /// `k`: loop indices and iterator items as their blocks end when loops ran, else tasks
    /// (forks, each published and counted at every `k`, and spawns). It learns best from work
    /// made of many units of similar cost; see `throttle-controller/src/README.md` for what it cannot see.
    ///
    /// # Errors
    /// The pool was built with `.stats(false)` (the controller reads the counters), or the OS
    /// refused to start the controller thread.
    ///
    /// # Examples
    /// ```
    /// let pool = throttle::Pool::new(2).unwrap();
    /// pool.set_concurrency_auto().unwrap();
    /// assert!(pool.is_concurrency_auto());
    /// let k = pool.concurrency();
    /// assert!((1..=2).contains(&k));
    /// pool.set_concurrency(1).unwrap(); // back to a fixed limit
    /// assert!(!pool.is_concurrency_auto());
    /// ```
    pub fn set_concurrency_auto(&self) -> Result<(), Error> {
        self.set_concurrency_auto_every(DEFAULT_INTERVAL)
    }

    /// [`set_concurrency_auto`](Pool::set_concurrency_auto) with another controller interval
    /// (at least 1 ms).
    ///
    /// # Errors
    /// As [`set_concurrency_auto`](Pool::set_concurrency_auto).
    pub fn set_concurrency_auto_every(&self, interval: std::time::Duration) -> Result<(), Error> {
        if !self.registry.stats.enabled {
            return Err(Error::auto_needs_stats());
        }
        let interval = interval.max(std::time::Duration::from_millis(1));
        // --- jobserver: the budget caps the controller's choice like a user's ---
        #[cfg(not(loom))]
        if let Some(b) = &self.budget {
            return self
                .auto
                .start(&self.registry, interval, Box::new(b.user_limit_setter()))
                .map_err(Error::spawn);
        }
        let registry = self.registry.clone();
        self.auto
            .start(
                &self.registry,
                interval,
                Box::new(move |k| apply_limit(&registry, k)),
            )
            .map_err(Error::spawn)
    }

    /// Auto mode's "if any at all": runs a loop of `len` indices the way its call site's
    /// memory says is cheaper (serially on the calling thread, or split in the pool) and
    /// records what it cost when the memory asks for a timing. A serial run is plain code on
    /// the calling thread (no run slot, no set-up) that still belongs to this pool
    /// (`global::serial_in`, which `run` applies): `current_num_threads()` inside it is this
    /// pool's, and a `join` in it forks here. Inline: a serial, untimed call, the common one,
    /// runs here with `run`'s way known; the rest goes to [`remembered_way`](Pool::remembered_way).
    ///
    /// `site` is the call site, taken by the caller (`#[track_caller]` from the user's line):
    /// `for_range`, `map_reduce`, and the parallel iterators' consumers and sorts
    /// (`iter/runtime.rs`). Before the fast path was here, one closure handed down to the
    /// out-of-line part moved its captures on every call, about 60 instructions per call of
    /// 16 one-spin jobs (`examples/auto_call_cost.rs` as of f29fd09: 407.7 against about 345,
    /// the plain loop 148.8).
    #[inline]
    pub(crate) fn remembered_at<R>(
        &self,
        site: &'static std::panic::Location<'static>,
        len: usize,
        run: impl FnOnce(Way) -> R,
    ) -> R {
        let (way, timed) = self.sites.choose(site, len);
        if way == Way::Serial && !timed {
            return run(Way::Serial);
        }
        self.remembered_way(site, len, way, timed, run)
    }

    /// [`remembered_at`](Pool::remembered_at) once the site's memory has chosen `way`, and
    /// whether to time it: runs it, and records what it cost if timed. Out of line: the
    /// callers keep a serial, untimed call inline and come here for the rest.
    #[inline(never)]
    fn remembered_way<R>(
        &self,
        site: &'static std::panic::Location<'static>,
        len: usize,
        way: Way,
        timed: bool,
        run: impl FnOnce(Way) -> R,
    ) -> R {
        if !timed {
            return run(way);
        }
        // Whether a parallel run had one run slot on a pool of several threads (`alone`, see
        // `CallSites::record`): the limit at its start and at its end, so that a run during
        // which the controller raised the limit is recorded.
        let one_slot = || self.threads() > 1 && self.concurrency() == 1;
        let alone_at_start = way == Way::Parallel && one_slot();
        let start = Instant::now();
        let r = run(way);
        let took = start.elapsed();
        let alone = alone_at_start && one_slot();
        self.sites.record(site, way, len, took, alone);
        r
    }

    /// Whether data-parallel calls consult their call site's memory: in auto mode only (a
    /// relaxed load, may lag a concurrent switch by a call).
    pub(crate) fn remembers_call_sites(&self) -> bool {
        self.auto.is_on_fast()
    }

    /// Whether the pool chooses its own concurrency.
    pub fn is_concurrency_auto(&self) -> bool {
        self.auto.is_on()
    }

    /// The controller's recent decisions, oldest first (bounded: the last 1024 that were not
    /// "hold"). Kept after a switch back to a fixed limit.
    pub fn controller_log(&self) -> Vec<ControllerEvent> {
        self.auto.log()
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
