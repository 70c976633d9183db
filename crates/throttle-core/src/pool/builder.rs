//! `PoolBuilder`: how a pool is configured and built, and how its worker threads start.

use super::Pool;
use crate::callsite::CallSites;
use crate::controller::auto::AutoSlot;
use crate::error::Error;
use crate::hooks::{self, Hooks};
use crate::placement::Placement;
use crate::registry::{Registry, DEFAULT_STACK_SIZE};
use crate::sleep::state::MAX_THREADS;
use crate::sync::Arc;
#[cfg(not(loom))]
use crate::worker::threads::spare_main;
use crate::worker::threads::worker_main;
use std::fmt;
use std::thread::JoinHandle;

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
    /// The builder [`Pool::builder`] returns: every option at its default.
    pub(super) fn new() -> PoolBuilder {
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

    /// Whether to keep [`Stats`](crate::Stats) (default: on; their cost is measured by `throttle-bench`).
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
            None => default_threads(),
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
        {
            // A spare's body holds the registry only from its start: a pool being dropped
            // starts none.
            let weak = Arc::downgrade(&registry);
            registry
                .spares
                .enable(self.stack_size.unwrap_or(DEFAULT_STACK_SIZE), move || {
                    let registry = weak.upgrade()?;
                    let body: crate::spare::SpareBody = Box::new(move || spare_main(registry));
                    Some(body)
                });
        }
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

impl PoolBuilder {
    /// Calls `handler(index)` on each worker thread when it starts, before it runs any task
    /// (to pin it, name it in a profiler, set up thread-local state, ...). A panic in the
    /// handler goes to the [`panic_handler`](PoolBuilder::panic_handler) if one is set, else
    /// it is printed; the worker goes on either way.
    ///
    /// # Examples
    /// ```
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    /// use std::sync::Arc;
    /// let started = Arc::new(AtomicUsize::new(0));
    /// let s = started.clone();
    /// let pool = throttle::Pool::builder()
    ///     .threads(2)
    ///     .start_handler(move |_index| { s.fetch_add(1, Ordering::SeqCst); })
    ///     .build()
    ///     .unwrap();
    /// drop(pool); // joins the workers, so both have started
    /// assert_eq!(started.load(Ordering::SeqCst), 2);
    /// ```
    pub fn start_handler<H>(mut self, handler: H) -> Self
    where
        H: Fn(usize) + Send + Sync + 'static,
    {
        self.hooks.set_start(std::sync::Arc::new(handler));
        self
    }

    /// Calls `handler(index)` on each worker thread when it stops (when the pool is dropped).
    /// A panic in it is handled as one in the start handler.
    ///
    /// # Examples
    /// ```
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    /// use std::sync::Arc;
    /// let exited = Arc::new(AtomicUsize::new(0));
    /// let e = exited.clone();
    /// let pool = throttle::Pool::builder()
    ///     .threads(3)
    ///     .exit_handler(move |_index| { e.fetch_add(1, Ordering::SeqCst); })
    ///     .build()
    ///     .unwrap();
    /// drop(pool);
    /// assert_eq!(exited.load(Ordering::SeqCst), 3);
    /// ```
    pub fn exit_handler<H>(mut self, handler: H) -> Self
    where
        H: Fn(usize) + Send + Sync + 'static,
    {
        self.hooks.set_exit(std::sync::Arc::new(handler));
        self
    }

    /// Receives the panic payload of a detached task ([`Pool::spawn`], [`spawn`](crate::spawn))
    /// that panicked, or of a start or exit handler (default: print it to stderr). Panics of `join`, `scope`, `install` and
    /// the parallel iterators are not handled here: they reach their caller.
    ///
    /// # Examples
    /// ```
    /// use std::sync::mpsc::channel;
    /// let (tx, rx) = channel();
    /// let tx = std::sync::Mutex::new(tx);
    /// let pool = throttle::Pool::builder()
    ///     .threads(2)
    ///     .panic_handler(move |payload| {
    ///         let msg = payload.downcast_ref::<&str>().copied().unwrap_or("?");
    ///         tx.lock().unwrap().send(msg.to_string()).unwrap();
    ///     })
    ///     .build()
    ///     .unwrap();
    /// pool.spawn(|| panic!("oops"));
    /// assert_eq!(rx.recv().unwrap(), "oops");
    /// ```
    pub fn panic_handler<H>(mut self, handler: H) -> Self
    where
        H: Fn(Box<dyn std::any::Any + Send>) + Send + Sync + 'static,
    {
        self.hooks.set_panic(std::sync::Arc::new(handler));
        self
    }
}

/// The CPUs this process may really use: the affinity mask and the cgroup CPU quota, as
/// `std::thread::available_parallelism` reads them on Linux (1 if unknown).
///
/// # Examples
/// ```
/// assert!(throttle::default_threads() >= 1);
/// ```
pub fn default_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}
