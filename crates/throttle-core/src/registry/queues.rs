//! What the registry's queues hold and who waits on them: a shared job queue with its tags,
//! a list of sleepers a publisher may have to wake by hand, and where a found job came from.

use crate::job::JobRef;
use crate::sleep::Parker;
use crate::sync::{lock, Arc, AtomicUsize, Mutex, Ordering};
use std::collections::VecDeque;

/// A queue of shared jobs. Shares are rare (a fork is shared only when a thread is hungry), so a
/// short mutex is cheaper overall than a lock-free deque's fences on every fork; `len` lets
/// thieves skip empty queues without locking.
///
/// Each job carries a *tag*: the address of the scope that spawned it (0 for other jobs), so
/// that a scope's owner can find its own scope's spawns while it waits (isolated helping).
#[derive(Debug, Default)]
pub(crate) struct SharedQueue {
    jobs: Mutex<VecDeque<(JobRef, usize)>>,
    len: AtomicUsize,
}

impl SharedQueue {
    /// True if the queue looks empty (a relaxed hint; the lock decides). Also a sleeper's look
    /// after its fence (`Registry::has_work`): the length is written under the lock before the
    /// publisher's own fence.
    #[inline]
    pub(crate) fn is_empty(&self) -> bool {
        self.len.load(Ordering::Relaxed) == 0
    }

    /// The number of queued jobs (a relaxed snapshot).
    pub(crate) fn len(&self) -> usize {
        self.len.load(Ordering::Relaxed)
    }

    pub(super) fn push_back(&self, job: JobRef, tag: usize) {
        let mut q = lock(&self.jobs);
        q.push_back((job, tag));
        self.len.store(q.len(), Ordering::Relaxed);
    }

    pub(super) fn pop(&self, back: bool) -> Option<JobRef> {
        if self.is_empty() {
            return None;
        }
        let mut q = lock(&self.jobs);
        let job = if back { q.pop_back() } else { q.pop_front() };
        self.len.store(q.len(), Ordering::Relaxed);
        job.map(|(job, _)| job)
    }

    /// Removes `job` if it is still queued (its owner takes it back). Searches from the back,
    /// where a fork's owner's most recent share sits.
    pub(super) fn remove(&self, job: JobRef) -> bool {
        let mut q = lock(&self.jobs);
        match q.iter().rposition(|(j, _)| *j == job) {
            Some(pos) => {
                q.remove(pos);
                self.len.store(q.len(), Ordering::Relaxed);
                true
            }
            None => false,
        }
    }

    /// True if a job tagged `tag` is queued.
    pub(super) fn has_tagged(&self, tag: usize) -> bool {
        !self.is_empty() && lock(&self.jobs).iter().any(|(_, t)| *t == tag)
    }

    /// Removes the newest job tagged `tag`, if any.
    pub(super) fn take_tagged(&self, tag: usize) -> Option<JobRef> {
        if self.is_empty() {
            return None;
        }
        let mut q = lock(&self.jobs);
        let pos = q.iter().rposition(|(_, t)| *t == tag)?;
        let (job, _) = q.remove(pos)?;
        self.len.store(q.len(), Ordering::Relaxed);
        Some(job)
    }
}

/// Threads asleep that a publisher may have to wake by hand: those waiting for a fork that one
/// worker runs (`Registry::fork_waiters`), or the pool's own workers asleep in a wait inside
/// another call (`Registry::away`).
#[derive(Debug, Default)]
pub(crate) struct Waiters {
    /// Their number, readable without the lock: a publisher's path reads it (one load of a
    /// line only waiters write), plus [`FLUSH_REQUEST`] on a fork owner's entry.
    pub(super) count: AtomicUsize,
    list: Mutex<Vec<Arc<Parker>>>,
}

/// A bit of a fork owner's waiter word (`Registry::fork_waiters`) that asks its owner to move
/// its counts to the shared counters at its next push ([`Registry::request_flush`]). In the
/// waiter word because the push already loads that word and leaves its fast path when it is
/// not zero: asking costs the fork path nothing, and the answer is one slow path per request.
/// The waiter count lives in the bits below; nothing counts that high.
pub(crate) const FLUSH_REQUEST: usize = 1 << (usize::BITS - 1);

impl Waiters {
    /// Adds `me`. The SeqCst count change, then the caller's SeqCst fence and its look for
    /// work, is the waiter's half of the handshake with [`Waiters::wake_one`].
    pub(super) fn register(&self, me: &Arc<Parker>) {
        lock(&self.list).push(me.clone());
        self.count.fetch_add(1, Ordering::SeqCst);
    }

    /// Removes `me` if a wake-up did not remove it already.
    pub(super) fn deregister(&self, me: &Arc<Parker>) {
        let mut list = lock(&self.list);
        if let Some(pos) = list.iter().position(|p| Arc::ptr_eq(p, me)) {
            list.swap_remove(pos);
            self.count.fetch_sub(1, Ordering::SeqCst);
        }
    }

    /// Takes out and unparks the newest waiter, if any. The caller made its work visible and
    /// issued a SeqCst fence before this SeqCst load: either it sees the waiter, or the waiter
    /// (after its registration and fence) sees the work.
    #[inline]
    pub(super) fn wake_one(&self) -> bool {
        if self.count.load(Ordering::SeqCst) & !FLUSH_REQUEST == 0 {
            return false;
        }
        let waiter = {
            let mut list = lock(&self.list);
            let waiter = list.pop();
            if waiter.is_some() {
                self.count.fetch_sub(1, Ordering::SeqCst);
            }
            waiter
        };
        match waiter {
            Some(p) => {
                p.unpark_thread();
                true
            }
            None => false,
        }
    }
}

/// Where `find_work` found a job.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Taken {
    /// The thread's own deque or spawn queue.
    Own,
    /// One of the thread's own forks older than what it waits for (a scope's wait): its own
    /// work, but shallower in its tree than the wait, so such helps are counted apart
    /// (`MAX_OLDER_HELP` in worker/wait.rs).
    OwnOlder,
    /// Worker `i`'s deque or spawn queue (a steal).
    From(usize),
    /// The deque of a participant that is not a worker (a caller, a spare): a steal.
    Caller,
    /// The injector: spawns from outside, and forks of callers without a deque (counted as a
    /// steal).
    Injector,
}

impl Taken {
    /// A steal from deque slot `slot` of a pool of `threads` workers (see `Registry::slots`).
    pub(crate) fn from_slot(slot: usize, threads: usize) -> Taken {
        if slot < threads {
            Taken::From(slot)
        } else {
            Taken::Caller
        }
    }

    /// Taken from someone else (the stats' "steals").
    pub(crate) fn stolen(self) -> bool {
        !matches!(self, Taken::Own | Taken::OwnOlder)
    }

    /// The victim's track index in a trace (`None` for the injector).
    pub(crate) fn victim(self) -> Option<u32> {
        match self {
            Taken::From(i) => Some(i as u32),
            _ => None,
        }
    }
}
