//! What a pool runs around its work: the builder's `start_handler`, `exit_handler` and
//! `panic_handler`, and detached tasks ([`Pool::spawn`](crate::Pool::spawn),
//! [`spawn`](crate::spawn)).
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
use std::any::Any;
use std::collections::VecDeque;
use std::panic::{self, AssertUnwindSafe};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

pub(crate) type IndexFn = Arc<dyn Fn(usize) + Send + Sync>;
pub(crate) type PanicFn = Arc<dyn Fn(Box<dyn Any + Send>) + Send + Sync>;

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
    /// Sets the handler each worker runs when it starts.
    pub(crate) fn set_start(&mut self, handler: IndexFn) {
        self.start = Some(handler);
    }

    /// Sets the handler each worker runs when it stops.
    pub(crate) fn set_exit(&mut self, handler: IndexFn) {
        self.exit = Some(handler);
    }

    /// Sets the handler that receives panics of detached tasks and of the other handlers.
    pub(crate) fn set_panic(&mut self, handler: PanicFn) {
        self.panic = Some(handler);
    }

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
