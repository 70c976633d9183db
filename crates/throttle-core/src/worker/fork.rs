//! The fork path: a fork's second half pushed where any thread can steal it and taken back
//! when nobody did, each push and take a task boundary where the concurrency limit is looked
//! at; and a thread's own pending work (`yield_local`, a detached spawn's publication).

use super::Participant;
use crate::deque::Worker;
use crate::job::JobRef;
use crate::latch::JobLatch;
use crate::registry::FLUSH_REQUEST;
use crate::stats::Counters;
use crate::sync::Ordering;
use crate::trace::model::{EventKind, Span};
use std::time::Instant;

/// Where [`Participant::push_fork`] put a fork, for [`Participant::take_fork`].
#[derive(Debug, Clone, Copy)]
pub(crate) enum Pushed {
    /// On the thread's deque, at this position (its owner side pays no fence).
    Deque(isize),
    /// On the thread's deque, at this position, whose owner side fences (`barrier.rs`: no
    /// expedited membarrier on this system; always under loom and Miri).
    FencedDeque(isize),
    /// In the injector (a thread without a deque).
    Injector,
}

impl Participant {
    /// Makes a fork's second half stealable: from here on any thread may run it. Returns false
    /// (and does nothing) if the thread's deque is full: the fork then runs as a plain call.
    ///
    /// The push is the owner's side of two handshakes, and pays for neither with a fence: the
    /// light side of an asymmetric fence (`barrier.rs`) orders the push before one relaxed load
    /// of the state word, and the other sides (a thread about to sleep, a thread registered to
    /// wait for a fork this thread runs) issue the heavy side before they look at the deques.
    /// The same load is the fork's look at the limit: every fork is a task boundary.
    ///
    /// # Safety
    /// If it returns true, `job` must stay valid until it ran (its latch is set) or
    /// [`Participant::take_fork`] returned true for it.
    #[inline(always)]
    pub(crate) unsafe fn push_fork(&self, job: JobRef) -> Option<Pushed> {
        let registry = self.registry();
        let pushed = match &self.deque {
            // One byte says both that there is a deque and that its owner side pays no
            // fence (the deque's `fenced` flag holds `Option`'s niche): one compare for the
            // usual case. The fenced case (no expedited membarrier here; loom and Miri) runs
            // the same code with the fence.
            Some(d) if !d.is_fenced() => Pushed::Deque(self.push_on_deque(d, job, false)?),
            Some(d) => Pushed::FencedDeque(self.push_on_deque(d, job, true)?),
            None => {
                // No deque (every lent one is taken): the injector, tagged with the fork we
                // run, if any, so that its owner can find its descendants.
                let frame = self.frame.get();
                registry.publish_tagged(&registry.injector, job, frame);
                if frame != 0 {
                    // SAFETY: `frame` is the latch of the fork this thread runs right now
                    // (`run_taken`), live until that fork ends, which is after this call.
                    unsafe { JobLatch::notify_owner(frame as *const JobLatch) };
                }
                let state = registry.sleep.load();
                if state.active() > state.limit() {
                    self.pause_for_limit();
                }
                Pushed::Injector
            }
        };
        self.forks.set(self.forks.get().wrapping_add(1));
        Some(pushed)
    }

    /// [`Participant::push_fork`] on this participant's deque `d`, whose `fenced` flag the
    /// caller passes as a constant. `None` if the deque is full.
    #[inline(always)]
    fn push_on_deque(&self, d: &Worker, job: JobRef, fenced: bool) -> Option<isize> {
        let Ok(at) = d.push(job) else {
            // Full: a thousand of this thread's forks wait stealable already.
            return None;
        };
        crate::barrier::light_with(fenced);
        let s = self.registry().sleep.load();
        if s.0 != self.quiet.get() || self.has_fork_waiters() {
            self.look_after_push(s);
        }
        Some(at)
    }

    /// True if a thread sleeps waiting for a fork this thread runs (one relaxed load of a line
    /// that only such waiters write).
    #[inline(always)]
    fn has_fork_waiters(&self) -> bool {
        // SAFETY: it points into the registry (`Registry::fork_waiter_count`), which outlives
        // every participant of the registry.
        unsafe { &*self.fork_waiters }.load(Ordering::Relaxed) > 0
    }

    /// True if a thread sleeps waiting for a fork this thread runs, not counting a flush
    /// request in the same word.
    fn has_fork_waiters_asleep(&self) -> bool {
        // SAFETY: as in `has_fork_waiters`.
        unsafe { &*self.fork_waiters }.load(Ordering::Relaxed) & !FLUSH_REQUEST > 0
    }

    /// A push saw a state word it has not judged yet, or threads waiting for its forks, or a
    /// flush request: answer the request, judge the word, and take the slow path if someone
    /// must be told.
    #[inline(never)]
    fn look_after_push(&self, s: crate::sleep::state::State) {
        // SAFETY: as in `has_fork_waiters`.
        let word = unsafe { &*self.fork_waiters };
        if word.load(Ordering::Relaxed) & FLUSH_REQUEST != 0 {
            // The controller wants fresh counts (`Registry::request_flush`). Cleared first, by
            // a read-modify-write that keeps the waiter count beside it: a request made after
            // this clear is answered at a later push.
            word.fetch_and(!FLUSH_REQUEST, Ordering::Relaxed);
            self.flush();
        }
        if s.after_push_needs_a_look(|| self.has_fork_waiters_asleep()) {
            self.after_push(s);
        } else {
            // Nothing to do for this word with no waiters either: remember it.
            self.quiet.set(s.0);
        }
    }

    /// The rare part of a push: someone may need waking, or the pool is over its limit.
    #[cold]
    #[inline(never)]
    fn after_push(&self, state: crate::sleep::state::State) {
        self.trace(EventKind::Share);
        self.announced.set(self.announced.get() + 1);
        let registry = self.registry();
        registry.after_push(self.slot, state);
        if state.active() > state.limit() {
            self.pause_for_limit();
        }
    }

    /// Takes a pushed fork back if no other thread has it. Returns false if another thread (or
    /// this one, while it waited for something else) took it: its latch tells when it is done.
    #[inline(always)]
    pub(crate) fn take_fork(&self, pushed: Pushed, job: JobRef) -> bool {
        // The fork is the newest item if it is still in the deque: every fork pushed after it
        // was popped or stolen before `a` returned.
        let taken = match pushed {
            Pushed::Deque(at) => {
                // SAFETY: `push_fork` pushes on the deque only if there is one, and a
                // participant's deque never goes away while it forks.
                unsafe { self.deque.as_ref().unwrap_unchecked() }.take_back_with(at, false)
            }
            Pushed::FencedDeque(at) => {
                // SAFETY: as above.
                unsafe { self.deque.as_ref().unwrap_unchecked() }.take_back_with(at, true)
            }
            Pushed::Injector => self.registry().take_back(&self.registry().injector, job),
        };
        if taken {
            // A task boundary, as the push was: the second half is a task of its own, and a
            // thread that ran the first half for a while may be over a limit lowered since.
            // (Without this look, `for_range_grain` ran a fork's two leaves as one task and
            // started the second beside another thread's leaf under a limit of 1.) The quiet
            // word is within the limit: only another word needs decoding.
            let s = self.registry().sleep.load();
            if s.0 != self.quiet.get() && s.active() > s.limit() {
                self.pause_after_take();
            }
        }
        taken
    }

    /// [`Participant::pause_for_limit`] out of line, so that the fork path's look at the limit
    /// stays one load and a branch.
    #[cold]
    #[inline(never)]
    fn pause_after_take(&self) {
        self.pause_for_limit();
    }

    /// A task boundary outside a fork (a loop block): gives up the slot while the pool is over
    /// its limit.
    #[inline]
    pub(crate) fn poll_limit(&self) {
        if self.registry().sleep.over_limit() {
            self.pause_for_limit();
        }
    }

    /// Gives up this thread's slot while the pool is over its limit, at a task boundary (inside
    /// a task, or a worker's between top-level tasks), and queues for one again. Its pending
    /// forks stay stealable by the threads that keep running. A thread in the middle of a task
    /// may hold a lock that the slot holders it queues behind are blocked on: then they are all
    /// blocked in the kernel, and it takes a slot over the limit after a short while
    /// (`Sleep::wait_for_slot`; sleep/README.md, "Slot holders blocked in the kernel").
    pub(crate) fn pause_for_limit(&self) {
        let registry = self.registry();
        if !registry.sleep.over_limit() {
            return;
        }
        // A thread that took its slot over the limit keeps it while the holders stay blocked.
        #[cfg(not(loom))]
        if registry
            .sleep
            .keeps_taken_slot(|| !registry.holders.another_computes())
        {
            return;
        }
        self.give_back_number();
        if registry.sleep.yield_if_over_limit() {
            self.end_busy();
            let t0 = Instant::now();
            registry.wait_for_slot(&self.parker);
            self.add_limit_wait(t0);
            self.trace_span_since(Span::LimitWait, t0);
            self.begin_busy();
        }
    }

    pub(crate) fn add_limit_wait(&self, since: Instant) {
        if self.registry().stats.enabled {
            Counters::add(
                &self.counters().limit_wait_ns,
                since.elapsed().as_nanos() as u64,
            );
        }
    }

    /// True if this thread's deque holds a fork no thread took yet (a relaxed look).
    #[inline]
    pub(crate) fn has_pending_forks(&self) -> bool {
        self.deque.as_ref().is_some_and(|d| d.len() > 0)
    }

    /// True if this thread has pending work of its own: forks in its deque (a caller's: in the
    /// injector), spawns in its spawn queue, or mail (`current_thread_has_pending_tasks`).
    pub(crate) fn has_local_work(&self) -> bool {
        let registry = self.registry();
        let forks = match &self.deque {
            Some(d) => d.len(),
            None => 0,
        };
        forks > 0
            || self
                .index
                .is_some_and(|i| !registry.queue_of(Some(i)).is_empty() || registry.has_mail(i))
    }

    /// Takes one job of this thread's own, never another's: its newest fork, then its mail,
    /// then its newest spawn (`yield_local`).
    pub(crate) fn find_local_work(&self) -> Option<JobRef> {
        if let Some(job) = self.deque.as_ref().and_then(Worker::pop) {
            return Some(job);
        }
        let i = self.index?;
        let registry = self.registry();
        registry.take_mail(i).or_else(|| registry.pop_own_spawn(i))
    }

    /// Publishes a heap job (a detached spawn) in this participant's spawn queue.
    pub(crate) fn publish(&self, job: JobRef) {
        self.publish_tagged(job, 0);
    }

    /// Publishes a scope's spawn, tagged with the scope's address, in this participant's
    /// spawn queue.
    pub(crate) fn publish_tagged(&self, job: JobRef, tag: usize) {
        let registry = self.registry();
        registry.publish_tagged(registry.queue_of(self.index), job, tag);
    }
}
