//! What a pool runs around its work: the builder's `start_handler`, `exit_handler` and
//! `panic_handler`, and detached tasks ([`Pool::spawn`], [`spawn`](crate::spawn)).
//!
//! A pool's [`Hooks`] live beside its registry: workers call the start and exit handlers
//! around their main loop, and every detached task carries the hooks it was spawned with, so a
//! panic in it reaches its pool's panic handler and its end is counted. Dropping a pool waits
//! for its detached tasks to finish before it stops the workers, so none is lost (a task that
//! never ends keeps the drop waiting). The free [`spawn`](crate::spawn) finds the hooks of the
//! current pool in a small table keyed by the pool's registry (entered by `build`, removed by
//! `drop`).

use crate::job::HeapJob;
use crate::registry::Registry;
// std, not `crate::sync`: these locks guard bookkeeping, not a scheduler protocol, and the
// table must be a `static` (loom's mutex cannot be built in a const).
use crate::worker::Participant;
use crate::{Pool, PoolBuilder};
use std::any::Any;
use std::collections::VecDeque;
use std::panic::{self, AssertUnwindSafe};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

type IndexFn = Arc<dyn Fn(usize) + Send + Sync>;
type PanicFn = Arc<dyn Fn(Box<dyn Any + Send>) + Send + Sync>;

/// A pool's handlers and its count of unfinished detached tasks.
#[derive(Default)]
pub(crate) struct Hooks {
    start: Option<IndexFn>,
    exit: Option<IndexFn>,
    panic: Option<PanicFn>,
    /// Detached tasks spawned and not yet finished.
    detached: Mutex<usize>,
    all_done: Condvar,
    /// Tasks of `spawn_fifo`, oldest first; each spawned job runs the oldest.
    fifo: Mutex<VecDeque<Task>>,
}

type Task = Box<dyn FnOnce() + Send>;

impl Hooks {
    /// Runs a worker's main loop between the start and exit handlers. A handler's panic goes
    /// to the panic handler if there is one (as in rayon), else it is printed; the worker goes
    /// on either way.
    pub(crate) fn run_worker(&self, index: usize, main: impl FnOnce()) {
        if let Some(start) = &self.start {
            self.handler_outcome(
                "start_handler",
                panic::catch_unwind(AssertUnwindSafe(|| start(index))),
            );
        }
        main();
        if let Some(exit) = &self.exit {
            self.handler_outcome(
                "exit_handler",
                panic::catch_unwind(AssertUnwindSafe(|| exit(index))),
            );
        }
    }

    fn handler_outcome(&self, which: &str, outcome: std::thread::Result<()>) {
        if let Err(payload) = outcome {
            match &self.panic {
                Some(handler) => report(
                    "panic_handler",
                    panic::catch_unwind(AssertUnwindSafe(|| handler(payload))),
                ),
                None => report(which, Err(payload)),
            }
        }
    }

    /// Hands the payload of a detached task's panic to the panic handler (default: print it).
    fn task_panicked(&self, payload: Box<dyn Any + Send>) {
        match &self.panic {
            Some(handler) => report(
                "panic_handler",
                panic::catch_unwind(AssertUnwindSafe(|| handler(payload))),
            ),
            None => eprintln!(
                "throttle: a spawned task panicked: {} (set PoolBuilder::panic_handler to handle it)",
                message(&*payload)
            ),
        }
    }

    fn task_done(&self) {
        let mut n = lock(&self.detached);
        *n -= 1;
        if *n == 0 {
            self.all_done.notify_all();
        }
    }

    /// True if some detached task has not finished yet.
    pub(crate) fn has_detached(&self) -> bool {
        *lock(&self.detached) > 0
    }

    /// Waits until every detached task finished (from `Pool::drop`). Does not wait on a thread
    /// that takes part in this pool (a task dropping the last handle to its own pool), which
    /// would wait for itself.
    pub(crate) fn wait_for_detached(&self, registry: &Registry) {
        if Participant::with_current(|p| p.is_some_and(|p| p.is_in(registry))) {
            return;
        }
        let mut n = lock(&self.detached);
        while *n > 0 {
            n = match self.all_done.wait(n) {
                Ok(g) => g,
                Err(poisoned) => poisoned.into_inner(),
            };
        }
    }
}

/// Locks `m`, ignoring poisoning: the guarded data is a count or a table that every critical
/// section leaves consistent.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn message(payload: &(dyn Any + Send)) -> &str {
    payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("(a non-string payload)")
}

fn report(which: &str, outcome: std::thread::Result<()>) {
    if let Err(payload) = outcome {
        eprintln!("throttle: the {which} panicked: {}", message(&*payload));
    }
}

/// The hooks of live pools, by registry address.
static TABLE: Mutex<Vec<(usize, Arc<Hooks>)>> = Mutex::new(Vec::new());

pub(crate) fn register(registry: &Registry, hooks: &Arc<Hooks>) {
    lock(&TABLE).push((registry as *const Registry as usize, hooks.clone()));
}

pub(crate) fn unregister(registry: &Registry) {
    let key = registry as *const Registry as usize;
    lock(&TABLE).retain(|(k, _)| *k != key);
}

fn hooks_of(registry: &Registry) -> Option<Arc<Hooks>> {
    let key = registry as *const Registry as usize;
    lock(&TABLE)
        .iter()
        .find(|(k, _)| *k == key)
        .map(|(_, h)| h.clone())
}

/// Publishes `task` as a detached task of `registry`, whose hooks are `hooks`.
pub(crate) fn spawn_in<F>(registry: &Registry, hooks: Arc<Hooks>, task: F)
where
    F: FnOnce() + Send + 'static,
{
    *lock(&hooks.detached) += 1;
    let run = move || {
        if let Err(payload) = panic::catch_unwind(AssertUnwindSafe(task)) {
            hooks.task_panicked(payload);
        }
        // Counted when it finishes, as a scope spawn is (completed work; see `Stats::tasks`).
        crate::worker::flush_current_and_count_spawn();
        hooks.task_done();
    };
    // SAFETY: [1] `run` is 'static, so it borrows nothing that could end before it runs; [2] a
    // published job is executed exactly once by whoever takes it out of a queue, and the pool
    // does not stop its workers before every detached task finished (`Pool::drop` waits), so
    // the job is not left unexecuted.
    let job = unsafe { HeapJob::into_job_ref(run) };
    Participant::with_current(|p| match p {
        Some(p) if p.is_in(registry) => p.publish(job),
        _ => registry.publish(&registry.injector, job),
    });
}

/// Publishes `task` as a detached task of `registry` that starts in FIFO order with the pool's
/// other `spawn_fifo` tasks: the task joins the pool's FIFO queue, and a plain detached job
/// (which a thread may take in any order) runs whichever task is oldest there when it starts.
/// One job per task, so every task runs once.
pub(crate) fn spawn_fifo_in<F>(registry: &Registry, hooks: Arc<Hooks>, task: F)
where
    F: FnOnce() + Send + 'static,
{
    lock(&hooks.fifo).push_back(Box::new(task));
    let queue = hooks.clone();
    spawn_in(registry, hooks, move || {
        let oldest = lock(&queue.fifo).pop_front();
        if let Some(task) = oldest {
            task();
        }
    });
}

/// Posts a detached job running `op` to every worker of `registry` (the mailbox: only that
/// worker runs it); panics go to the panic handler, and dropping the pool waits for them.
pub(crate) fn spawn_broadcast_in<OP>(registry: &Registry, hooks: Arc<Hooks>, op: OP)
where
    OP: Fn(crate::BroadcastContext<'_>) + Send + Sync + 'static,
{
    let threads = registry.threads();
    let op = Arc::new(op);
    *lock(&hooks.detached) += threads;
    for index in 0..threads {
        let (op, hooks) = (op.clone(), hooks.clone());
        let run = move || {
            let ctx = crate::BroadcastContext::new(index, threads);
            if let Err(payload) = panic::catch_unwind(AssertUnwindSafe(|| op(ctx))) {
                hooks.task_panicked(payload);
            }
            crate::worker::flush_current_and_count_spawn();
            hooks.task_done();
        };
        // SAFETY: [1] `run` is 'static; [2] a posted job runs exactly once, by worker `index`
        // (`Registry::post`), and `Pool::drop` waits for every detached job before it stops
        // the workers, so none is left in a mailbox.
        unsafe {
            let job = HeapJob::into_job_ref(run);
            registry.post(index, job);
        }
    }
}

/// The registry and hooks of the pool the calling thread takes part in, if any.
pub(crate) fn current_target() -> Option<(*const Registry, Arc<Hooks>)> {
    Participant::with_current(|p| {
        p.and_then(|p| hooks_of(p.registry()).map(|h| (p.registry() as *const Registry, h)))
    })
}

/// Spawns a detached task in the current pool (the pool whose task or `install` the calling
/// thread runs, or else the global pool). The task may run on any of the pool's threads, after
/// this call returns; its panic goes to the pool's panic handler (see
/// [`PoolBuilder::panic_handler`]), and dropping the pool waits for it. To wait for tasks or
/// borrow from the caller, use [`scope`](crate::scope) instead.
///
/// # Panics
/// From outside any pool, if the global pool cannot start (a bad `THROTTLE_THREADS`).
///
/// # Examples
/// ```
/// use std::sync::mpsc::channel;
/// let (tx, rx) = channel();
/// throttle::spawn(move || tx.send(6 * 7).unwrap());
/// assert_eq!(rx.recv().unwrap(), 42);
/// ```
pub fn spawn<F>(task: F)
where
    F: FnOnce() + Send + 'static,
{
    match current_target() {
        // SAFETY: the registry belongs to the pool the calling thread takes part in right now,
        // so it is alive for the duration of this call.
        Some((registry, hooks)) => spawn_in(unsafe { &*registry }, hooks, task),
        None => crate::global::with_default(|pool| pool.spawn(task)),
    }
}

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
        self.hooks.start = Some(Arc::new(handler));
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
        self.hooks.exit = Some(Arc::new(handler));
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
        H: Fn(Box<dyn Any + Send>) + Send + Sync + 'static,
    {
        self.hooks.panic = Some(Arc::new(handler));
        self
    }

    /// Builds the pool and makes it the global pool, the one the free functions
    /// ([`join`](crate::join), [`spawn`](crate::spawn), parallel iterators, ...) use outside any
    /// pool. Call it before any parallel work: the global pool starts on first use.
    ///
    /// # Errors
    /// The global pool has already started (an earlier `build_global`, or a free function called
    /// before), or [`build`](PoolBuilder::build) failed.
    ///
    /// # Examples
    /// ```
    /// throttle::Pool::builder().threads(2).build_global().unwrap();
    /// assert_eq!(throttle::current_num_threads(), 2);
    /// let again = throttle::Pool::builder().threads(3).build_global();
    /// assert!(again.unwrap_err().to_string().contains("already started"));
    /// ```
    pub fn build_global(self) -> Result<(), crate::Error> {
        if crate::global::started() {
            return Err(crate::Error::global_started());
        }
        crate::global::install_global(self.build()?)
    }
}
