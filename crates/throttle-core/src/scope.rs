//! `scope`: spawn any number of tasks that may borrow from the caller; wait for all at the end.

use crate::job::HeapJob;
use crate::latch::JobLatch;
use crate::registry::Registry;
use crate::sync::{lock, AtomicBool, AtomicUsize, Mutex, Ordering};
use crate::worker::Participant;
use std::any::Any;
use std::marker::PhantomData;
use std::panic::{self, AssertUnwindSafe};
use std::ptr;

/// A scope in which tasks can be spawned; see [`scope`](crate::scope) and
/// [`Pool::scope`](crate::Pool::scope).
///
/// Every task spawned in the scope has finished when the scope call returns. A panic in the scope
/// body or in any task is resumed by the scope call after all tasks finished.
pub struct Scope<'scope> {
    registry: *const Registry,
    /// Tasks not yet finished, plus one for the scope body.
    pending: AtomicUsize,
    /// Tasks spawned but not started yet: while some are, the scope's owner looks for them
    /// (queued with the scope's address as their tag) when it waits.
    unstarted: AtomicUsize,
    panic: Mutex<Option<Box<dyn Any + Send>>>,
    latch: JobLatch,
    /// Whether the scope's owner runs the scope's spawns while it waits (a worker, or a spare
    /// in its own pool; not a user's thread): only then does a spawn wake it. Written by the
    /// owner before its wait, so before it can sleep on the latch.
    owner_takes_spawns: AtomicBool,
    /// Invariant in `'scope`, like rayon's: spawned closures may borrow exactly `'scope`.
    _marker: PhantomData<fn(&'scope ()) -> &'scope ()>,
}

// SAFETY: [1] `registry` points at the pool's registry, which outlives the scope (the scope call
// borrows the pool, or runs on one of its workers); [2] `pending` and `panic` are thread-safe;
// [3] the latch is set exactly once, by whoever finishes the last task, which is the access
// pattern `JobLatch` is made for.
unsafe impl Send for Scope<'_> {}
// SAFETY: as for Send: all shared access goes through atomics, a mutex, or the latch protocol.
unsafe impl Sync for Scope<'_> {}

/// A `Send` wrapper for the scope pointer captured by spawned jobs.
struct ScopePtr<'scope>(*const Scope<'scope>);
// SAFETY: `Scope` is Sync, so sharing a pointer to it across threads is fine; the scope outlives
// every job (it waits for `pending` to reach zero).
unsafe impl Send for ScopePtr<'_> {}

impl<'scope> Scope<'scope> {
    /// Spawns `task` into the scope. It may run on any thread of the pool, and may spawn more.
    ///
    /// # Examples
    /// ```
    /// let mut parts = vec![0u64; 4];
    /// throttle::scope(|s| {
    ///     for (i, part) in parts.iter_mut().enumerate() {
    ///         s.spawn(move |_| *part = (i as u64 + 1) * 10);
    ///     }
    /// });
    /// assert_eq!(parts, [10, 20, 30, 40]);
    /// ```
    pub fn spawn<F>(&self, task: F)
    where
        F: FnOnce(&Scope<'scope>) + Send + 'scope,
    {
        self.pending.fetch_add(1, Ordering::Relaxed);
        self.unstarted.fetch_add(1, Ordering::Relaxed);
        let ptr = ScopePtr(self);
        let run = move || {
            let ptr = ptr;
            {
                // SAFETY: the scope is alive until `pending` reaches zero, which needs this
                // job's `job_done` below; the reference ends before that call.
                let scope = unsafe { &*ptr.0 };
                scope.unstarted.fetch_sub(1, Ordering::Relaxed);
                if let Err(p) = panic::catch_unwind(AssertUnwindSafe(|| task(scope))) {
                    scope.record_panic(p);
                }
            }
            // This task, and the forks it made, are counted before the scope's owner can
            // return.
            crate::worker::flush_current_and_count_spawn();
            // SAFETY: the scope is alive (our task is still pending), and we touch it through a
            // raw pointer only, so no reference to it outlives the decrement.
            unsafe { Scope::job_done(ptr.0) };
        };
        // SAFETY: [1] `run` borrows only `'scope` data, and the scope call does not return before
        // every spawned job ran (`pending`); [2] a published job is run exactly once by whoever
        // takes it out of a queue.
        let job = unsafe { HeapJob::into_job_ref(run) };
        // SAFETY: see the `Send` impl: the registry outlives the scope.
        let registry = unsafe { &*self.registry };
        let tag = self.tag();
        Participant::with_current(|p| match p {
            Some(p) if p.is_in(registry) => p.publish_tagged(job, tag),
            _ => registry.publish_tagged(&registry.injector, job, tag),
        });
        // The scope's owner may sleep in its wait, which runs the scope's own spawns on one of
        // the pool's threads (`Participant::wait_for_scope`): wake it for this one. A user's
        // thread runs none, and waking it would cost it a slot for nothing. Relaxed: read after
        // the owner was seen asleep, which it wrote before (`notify_owner_if`).
        // SAFETY: the scope is alive and its latch unset until its pending count reaches
        // zero, which our caller holds up (the body, or a spawned task of this scope, runs).
        unsafe {
            JobLatch::notify_owner_if(&self.latch, || {
                self.owner_takes_spawns.load(Ordering::Relaxed)
            })
        };
    }

    /// The tag of this scope's spawns in the pool's queues: its address.
    fn tag(&self) -> usize {
        self as *const Scope<'scope> as usize
    }

    /// Spawns `body` once on every worker thread of the scope's pool, each with its
    /// [`BroadcastContext`](crate::BroadcastContext): the worker runs it when it next looks for
    /// work (a sleeping worker is woken). The scope waits for all of them.
    ///
    /// # Examples
    /// ```
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    /// let pool = throttle::Pool::new(3).unwrap();
    /// let sum = AtomicUsize::new(0);
    /// pool.scope(|s| {
    ///     s.spawn_broadcast(|_, ctx| { sum.fetch_add(ctx.index() + 1, Ordering::Relaxed); });
    /// });
    /// assert_eq!(sum.into_inner(), 1 + 2 + 3);
    /// ```
    pub fn spawn_broadcast<BODY>(&self, body: BODY)
    where
        BODY: Fn(&Scope<'scope>, crate::BroadcastContext<'_>) + Send + Sync + 'scope,
    {
        // SAFETY: see the `Send` impl: the registry outlives the scope.
        let registry = unsafe { &*self.registry };
        let threads = registry.threads();
        self.pending.fetch_add(threads, Ordering::Relaxed);
        let body = std::sync::Arc::new(body);
        for index in 0..threads {
            let (body, ptr) = (body.clone(), ScopePtr(self));
            let run = move || {
                let ptr = ptr;
                {
                    // SAFETY: as in `spawn`: the scope lives until this job's `job_done`.
                    let scope = unsafe { &*ptr.0 };
                    let ctx = crate::BroadcastContext::new(index, threads);
                    if let Err(p) = panic::catch_unwind(AssertUnwindSafe(|| body(scope, ctx))) {
                        scope.record_panic(p);
                    }
                }
                crate::worker::flush_current_and_count_spawn();
                // SAFETY: as in `spawn`.
                unsafe { Scope::job_done(ptr.0) };
            };
            // SAFETY: [1] `run` borrows only `'scope` data, and the scope does not return
            // before every job ran (`pending`); [2] a posted job is run exactly once, by
            // worker `index` (`Registry::post`), and the pool's workers outlive the scope.
            unsafe {
                let job = HeapJob::into_job_ref(run);
                registry.post(index, job);
            }
        }
    }

    fn record_panic(&self, payload: Box<dyn Any + Send>) {
        let mut slot = lock(&self.panic);
        if slot.is_none() {
            *slot = Some(payload);
        }
    }

    /// One task (or the body) is done.
    ///
    /// # Safety
    /// `this` must be live, and each task (and the body) calls this once. A raw pointer, not
    /// `&self`: once `pending` drops, the owner may return and free the scope while this call
    /// is still in progress, so no reference to it may live across the decrement (the pattern
    /// of rust-lang/rust#55005).
    unsafe fn job_done(this: *const Scope<'scope>) {
        // SAFETY: live until the decrement below lets the last finisher set the latch.
        let pending = unsafe { &(*this).pending };
        // AcqRel: the last finisher sees every other task's writes before it sets the latch,
        // which publishes them to the scope's owner.
        if pending.fetch_sub(1, Ordering::AcqRel) == 1 {
            // SAFETY: we brought `pending` to zero, so the owner waits for the latch and the
            // scope is live until `set` stores SET; set exactly once (pending hits zero once).
            unsafe { JobLatch::set(ptr::addr_of!((*this).latch)) };
        }
    }
}

impl<'scope> Scope<'scope> {
    /// A scope of `registry`'s pool, with the body's one pending count.
    pub(crate) fn new(registry: &Registry) -> Self {
        Scope {
            registry,
            pending: AtomicUsize::new(1),
            unstarted: AtomicUsize::new(0),
            panic: Mutex::new(None),
            latch: JobLatch::new(),
            owner_takes_spawns: AtomicBool::new(false),
            _marker: PhantomData,
        }
    }

    /// The body returned (or unwound): drops its pending count. Called once.
    pub(crate) fn body_done(&self) {
        // SAFETY: the owner calls this once, and keeps the scope alive until `wait` returned.
        unsafe { Scope::job_done(self) };
    }

    /// Waits for every task, helping as `p` (a participant of the scope's pool).
    pub(crate) fn wait(&self, p: &Participant) {
        self.owner_takes_spawns
            .store(p.runs_own_spawns(), Ordering::Relaxed);
        p.wait_for_scope(&self.latch, &self.unstarted, self.tag());
    }

    /// After `wait`: the body's result, or the first task's panic, or the body's panic.
    pub(crate) fn into_result<R>(self, body: std::thread::Result<R>) -> R {
        if let Some(payload) = lock(&self.panic).take() {
            panic::resume_unwind(payload);
        }
        match body {
            Ok(r) => r,
            Err(payload) => panic::resume_unwind(payload),
        }
    }
}

pub(crate) fn scope_in<'scope, F, R>(p: &Participant, body: F) -> R
where
    F: FnOnce(&Scope<'scope>) -> R,
{
    let scope = Scope::new(p.registry());
    let result = panic::catch_unwind(AssertUnwindSafe(|| body(&scope)));
    scope.body_done();
    scope.wait(p);
    scope.into_result(result)
}
