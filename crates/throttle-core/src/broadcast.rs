//! Broadcasts: run an operation once on every worker thread of a pool
//! ([`Pool::broadcast`](crate::Pool::broadcast)).
//!
//! The caller posts one job to each worker's *mailbox* (`Registry::post`): a queue that only
//! that worker takes from, when it next looks for work. Posting wakes the worker in whatever
//! state it is (asleep, asleep on a latch, away in another pool); a worker without a slot gets
//! one through the limit queue like any thread with work in hand. A caller that is itself one
//! of the pool's workers runs its own share at once, then waits for the others *helping* (it
//! gives back its slot while it sleeps, so a limit of 1 cannot deadlock). Why no broadcast can
//! hang: `sleep/README.md`, "Broadcast".

use crate::job::{Job, JobRef};
use crate::latch::JobLatch;
use crate::registry::Registry;
use crate::sync::{AtomicUsize, Ordering};
use crate::worker::{with_home, Participant};
use std::any::Any;
use std::cell::UnsafeCell;
use std::fmt;
use std::marker::PhantomData;
use std::panic::{self, AssertUnwindSafe};
use std::ptr;

/// What a [`Pool::broadcast`](crate::Pool::broadcast) operation learns about the thread it runs on.
///
/// # Examples
/// ```
/// let pool = throttle::Pool::new(3).unwrap();
/// let seen = pool.broadcast(|ctx| (ctx.index(), ctx.num_threads()));
/// assert_eq!(seen, [(0, 3), (1, 3), (2, 3)]);
/// ```
pub struct BroadcastContext<'a> {
    index: usize,
    num_threads: usize,
    /// Tied to the call, and neither `Send` nor `Sync` (as rayon's): it describes this thread.
    _marker: PhantomData<&'a *const ()>,
}

impl BroadcastContext<'_> {
    /// The context of worker `index` of a pool of `num_threads` (also for detached broadcasts,
    /// `hooks::spawn_broadcast_in`).
    pub(crate) fn new(index: usize, num_threads: usize) -> Self {
        BroadcastContext {
            index,
            num_threads,
            _marker: PhantomData,
        }
    }

    /// The index of the worker thread running the operation, `0..num_threads()`: the same as
    /// [`current_thread_index`](crate::current_thread_index) there.
    ///
    /// # Examples
    /// ```
    /// let pool = throttle::Pool::new(2).unwrap();
    /// let ok = pool.broadcast(|ctx| Some(ctx.index()) == throttle::current_thread_index());
    /// assert_eq!(ok, [true, true]);
    /// ```
    pub fn index(&self) -> usize {
        self.index
    }

    /// The number of worker threads in the pool: how many times the operation runs.
    ///
    /// # Examples
    /// ```
    /// let pool = throttle::Pool::new(2).unwrap();
    /// assert_eq!(pool.broadcast(|ctx| ctx.num_threads()), [2, 2]);
    /// ```
    pub fn num_threads(&self) -> usize {
        self.num_threads
    }
}

impl fmt::Debug for BroadcastContext<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BroadcastContext")
            .field("index", &self.index)
            .field("num_threads", &self.num_threads)
            .finish()
    }
}

/// What the jobs of one broadcast share, in the caller's frame.
struct Shared<'op, OP> {
    op: &'op OP,
    threads: usize,
    /// Jobs not yet finished, plus one for the caller's own part.
    pending: AtomicUsize,
    /// Set by whoever brings `pending` to zero; the caller waits on it.
    latch: JobLatch,
}

impl<OP> Shared<'_, OP> {
    /// One job (or the caller's own part) is done.
    ///
    /// # Safety
    /// `this` must be live, and each job and the caller call this once. A raw pointer, not
    /// `&self`: once `pending` drops, the caller may return and free the frame while this call
    /// is in progress (the pattern of rust-lang/rust#55005, as in `Scope::job_done`).
    unsafe fn done(this: *const Self) {
        // SAFETY: live until the decrement below lets the last finisher set the latch.
        let pending = unsafe { &(*this).pending };
        // AcqRel: the last finisher sees every other job's result write before it sets the
        // latch, whose Release publishes them all to the caller.
        if pending.fetch_sub(1, Ordering::AcqRel) == 1 {
            // SAFETY: we brought `pending` to zero, so the caller waits for the latch and the
            // frame is live until `set` stores SET; set exactly once.
            unsafe { JobLatch::set(ptr::addr_of!((*this).latch)) };
        }
    }
}

/// Worker `index`'s share of a broadcast, in the caller's frame.
struct BroadcastJob<'op, OP, R> {
    shared: *const Shared<'op, OP>,
    index: usize,
    result: UnsafeCell<Option<std::thread::Result<R>>>,
}

impl<'op, OP, R> BroadcastJob<'op, OP, R>
where
    OP: Fn(BroadcastContext<'_>) -> R + Sync,
{
    /// Runs the operation for this job's index and keeps its result or panic.
    ///
    /// # Safety
    /// `this` and its `shared` are live, and nobody else touches `result` now (the job runs
    /// once, and the caller reads results only after the latch is set).
    unsafe fn run(this: *const Self) {
        // SAFETY: live (caller's contract); the references end before `Shared::done`.
        let (job, shared) = unsafe { (&*this, &*(*this).shared) };
        let ctx = BroadcastContext::new(job.index, shared.threads);
        let r = panic::catch_unwind(AssertUnwindSafe(|| (shared.op)(ctx)));
        // SAFETY: exclusive access (caller's contract); the write happens-before the caller's
        // read through `pending` (AcqRel) and the latch (Release/Acquire).
        unsafe { *job.result.get() = Some(r) };
    }
}

impl<'op, OP, R> Job for BroadcastJob<'op, OP, R>
where
    OP: Fn(BroadcastContext<'_>) -> R + Sync,
{
    unsafe fn execute(this: *const Self) {
        // SAFETY: [1] the job is live until `done` below (the caller waits for the latch);
        // [2] it was posted to one worker's mailbox and taken out once, so this is its only run.
        let shared = unsafe {
            Self::run(this);
            (*this).shared
        };
        // Count the forks the operation made before the caller can return (Pool::stats).
        crate::worker::flush_current();
        // SAFETY: live until this call lets the caller go; called once per job.
        unsafe { Shared::done(shared) };
    }
}

/// Runs `op` once on every worker of `p`'s pool; see [`Pool::broadcast`](crate::Pool::broadcast).
pub(crate) fn broadcast_in<OP, R>(p: &Participant, op: &OP) -> Vec<R>
where
    OP: Fn(BroadcastContext<'_>) -> R + Sync,
    R: Send,
{
    let registry: &Registry = p.registry();
    let threads = registry.threads();
    // The caller's own share, if it is one of this pool's workers (possibly away from its own
    // loop: in a call into another pool that called back into this one).
    let home = with_home(|h| {
        h.filter(|h| h.is_in(registry))
            .map(|h| h as *const Participant)
    });
    // SAFETY: the home participant outlives every job and call on this thread (`with_home`).
    let home = home.map(|h| unsafe { &*h });
    let mine = home.and_then(Participant::index);
    let shared = Shared {
        op,
        threads,
        pending: AtomicUsize::new(threads - usize::from(mine.is_some()) + 1),
        latch: JobLatch::new(),
    };
    let jobs: Vec<BroadcastJob<'_, OP, R>> = (0..threads)
        .map(|index| BroadcastJob {
            shared: &shared,
            index,
            result: UnsafeCell::new(None),
        })
        .collect();
    for job in jobs.iter().filter(|j| Some(j.index) != mine) {
        // SAFETY: [1] `jobs` and `shared` live in this frame, not moved, until the latch is
        // set, which needs every posted job to have run (`pending`); [2] a posted job is run
        // exactly once, by its worker (`Registry::post`).
        unsafe { registry.post(job.index, JobRef::new(job)) };
    }
    if let (Some(home), Some(i)) = (home, mine) {
        // Run our share as that worker (`current_thread_index` inside `op` is `i`).
        let _as_worker = (!ptr::eq(home, p)).then(|| home.enter());
        // SAFETY: our own job was not posted, and this is its only run; live in this frame.
        unsafe { BroadcastJob::run(&jobs[i]) };
    }
    // SAFETY: `shared` is live until we return; the caller's one call.
    unsafe { Shared::done(&shared) };
    // Helping, and asleep without a slot once there is nothing to help with (`wait_until`).
    p.wait_until(&shared.latch);
    collect(jobs)
}

/// The results in index order, or the lowest index's panic once all results are dropped.
fn collect<OP, R>(jobs: Vec<BroadcastJob<'_, OP, R>>) -> Vec<R> {
    let mut out = Vec::with_capacity(jobs.len());
    let mut first_panic: Option<Box<dyn Any + Send>> = None;
    for job in jobs {
        match job.result.into_inner() {
            Some(Ok(r)) => out.push(r),
            Some(Err(payload)) => {
                first_panic.get_or_insert(payload);
            }
            None => unreachable!("every broadcast job ran before the latch was set"),
        }
    }
    if let Some(payload) = first_panic {
        drop(out);
        panic::resume_unwind(payload);
    }
    out
}
