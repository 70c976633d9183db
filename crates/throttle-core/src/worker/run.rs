//! Finding and running work: a thread's search of the pool's queues and deques, the run of
//! what it found (a stolen fork records its thief first), and an idle worker's sleep.

use super::{flush_current, Participant};
use crate::job::{Job, JobRef, StackJob, Task};
use crate::latch::JobLatch;
use crate::placement::Placement;
use crate::registry::Taken;
use crate::sleep::{Wake, SEARCH_SPIN};
use crate::stats::Counters;
use crate::sync::spin_over;
use crate::trace::model::{EventKind, Span};
use std::cell::Cell;
use std::time::Instant;

// A stolen fork (or an injected call) runs here, on the thread that took it: what the thread
// does with a job it did not make belongs to the worker, not to the job.
impl<T: Task> Job for StackJob<T> {
    unsafe fn execute(this: *const Self) {
        // SAFETY: `this` is live and not yet run, and only the thread that took the job from a
        // queue runs it (the trait's contract), which is what `run_stolen` asks.
        let this = unsafe { &*this };
        // SAFETY: see above.
        unsafe { this.run_stolen() };
        // The forks this job made are counted before its owner can return (Pool::stats).
        flush_current();
        // SAFETY: `this.latch` is live; after `set` we touch nothing of the job (the owner may
        // free it as soon as it sees the latch set).
        unsafe { JobLatch::set(&this.latch) };
    }
}

impl Participant {
    fn next_seed(&self) -> u64 {
        // xorshift64: cheap victim selection, no shared state.
        let mut x = self.seed.get();
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.seed.set(x);
        x
    }

    pub(crate) fn find_work(&self) -> Option<(JobRef, Taken)> {
        let slot = self.deque.as_ref().map(|_| self.slot);
        self.registry()
            .find_work(self.index, slot, self.deque.as_ref(), self.next_seed())
    }

    /// Looks for work, spinning with growing pauses, for about [`SEARCH_SPIN`].
    ///
    /// A worker that finds a job at its first look stays busy from its last job to this one
    /// (no clock read, no change of the busy count); one that has to spin is idle meanwhile.
    pub(crate) fn search(&self) -> Option<(JobRef, Taken)> {
        if let Some(found) = self.find_work() {
            return Some(found);
        }
        self.end_busy();
        let start = Instant::now();
        let mut round = 0u32;
        loop {
            if let Some(found) = self.find_work() {
                return Some(found);
            }
            if self.registry().sleep.has_limit_waiters() {
                // A thread with work in hand waits for a slot: ours is better used there.
                return None;
            }
            for _ in 0..(1u32 << round.min(6)) {
                std::hint::spin_loop();
            }
            round += 1;
            if spin_over(round, start, SEARCH_SPIN) {
                return None;
            }
        }
    }

    /// Runs a job found in a queue, with the bookkeeping of a task boundary. A worker stays
    /// busy afterwards: it becomes idle when its next search comes up empty ([`Participant::
    /// search`]), or when it sleeps, waits or gives back its slot, so that jobs run back to back
    /// cost no change of the pool-wide busy count between them (`Stats::busy_histogram`).
    pub(crate) fn execute_found(&self, job: JobRef, taken: Taken) {
        if taken.stolen() && self.registry().stats.enabled {
            Counters::add(&self.counters().steals, 1);
        }
        self.trace_run_begin(taken);
        if self.index.is_some() {
            self.begin_busy();
        }
        // SAFETY: the job came out of a queue or deque, so it was published and not yet run;
        // taking it out made us its only runner.
        unsafe { self.run_taken(job) };
        self.flush();
        self.trace(EventKind::End {
            span: Span::Run,
            flow: None,
        });
    }

    /// Records the start of a found job's run (and the steal, if it was one).
    #[inline]
    pub(super) fn trace_run_begin(&self, taken: Taken) {
        if let Some(t) = self.tracing() {
            let now = Instant::now();
            if taken.stolen() {
                let from = taken.victim();
                t.record_at(self.track, now, EventKind::Steal { from });
            }
            let kind = EventKind::Begin {
                span: Span::Run,
                site: None,
            };
            t.record_at(self.track, now, kind);
        }
    }

    /// Runs a job taken from a queue or deque. A fork first records who runs it and from which
    /// deque position, for its owner's isolated helping ([`JobLatch::record_thief`]).
    ///
    /// # Safety
    /// The job was taken out of a queue or deque (so published and not yet run) by this thread.
    #[inline]
    pub(super) unsafe fn run_taken(&self, job: JobRef) {
        let Some(latch) = job.fork_latch() else {
            // SAFETY: forwarded to the caller.
            return unsafe { job.execute() };
        };
        let me = self.deque.as_ref().map(|d| (self.slot, d.next_position()));
        // SAFETY: a fork taken from a queue is live and not yet run (caller's contract).
        unsafe { JobLatch::record_thief(latch, me) };
        if self.deque.is_some() {
            // SAFETY: forwarded to the caller.
            return unsafe { job.execute() };
        }
        // A thread without a deque: its forks go to the injector, tagged with this fork's
        // latch while it runs it, so that the fork's owner can find them (`find_help`).
        let outer = self.frame.replace(latch as usize);
        struct Restore<'a>(&'a Cell<usize>, usize);
        impl Drop for Restore<'_> {
            fn drop(&mut self) {
                self.0.set(self.1);
            }
        }
        let _restore = Restore(&self.frame, outer);
        // SAFETY: forwarded to the caller.
        unsafe { job.execute() };
    }

    /// Sleeps as an idle worker holding a searching slot.
    pub(crate) fn sleep_idle(&self) -> Wake {
        self.idle(true)
    }

    /// Sleeps as an idle worker holding no slot.
    pub(crate) fn sleep_idle_without_slot(&self) -> Wake {
        self.idle(false)
    }

    fn idle(&self, searching: bool) -> Wake {
        self.end_busy();
        self.flush();
        self.give_back_number();
        let registry = self.registry();
        if registry.stats.enabled {
            Counters::add(&self.counters().parks, 1);
        }
        let saved = self.placement.as_ref().and_then(Placement::before_sleep);
        let span = Span::Sleep;
        self.trace(EventKind::Begin { span, site: None });
        let wake = registry.sleep.sleep_idle(
            &self.parker,
            searching,
            || registry.has_work(),
            || self.has_mail(),
        );
        if let Some(t) = self.tracing() {
            let flow = self.parker.take_flow();
            t.record_at(self.track, Instant::now(), EventKind::End { span, flow });
        }
        if let (Some(p), Some(saved)) = (&self.placement, saved) {
            p.after_wake(saved);
        }
        wake
    }
}
