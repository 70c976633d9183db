//! A participant: a thread taking part in a pool's work, either one of its workers or a caller
//! from outside that runs its own call and helps while it waits.
//!
//! Most forks are plain calls: a thread that already holds two private, unshared forks runs
//! further forks as `a(); b()` except one in 64 (`fork_privately`), which costs a counter and two
//! loads. The other forks are *shareable*: the second half waits in a private stack (`frames`),
//! a push and a pop, plus one relaxed load of the pool's state word. Only when that word says a
//! thread is hungry (searching, or asleep beside a free slot) does the participant *share* its
//! oldest private fork, the biggest piece of work it has, by moving it to its shared queue. This
//! is the demand-driven cousin of heartbeat scheduling (chili, spice): forks are private by
//! default and become public on demand, so ordinary recursion needs no sequential cutoff.

use crate::job::JobRef;
use crate::latch::JobLatch;
use crate::placement::Placement;
use crate::registry::{Registry, SharedQueue};
use crate::sleep::{Parker, Wake};
use crate::stats::Counters;
use crate::sync::Arc;
use std::cell::{Cell, UnsafeCell};
use std::ptr;
use std::time::Instant;

/// A private fork: the job and its latch (the job's first field, see `StackJob`).
#[derive(Clone, Copy)]
pub(crate) struct Frame {
    pub(crate) job: JobRef,
    pub(crate) latch: *const JobLatch,
}

thread_local! {
    static CURRENT: Cell<*const Participant> = const { Cell::new(ptr::null()) };
}

/// A thread's membership in one pool.
pub(crate) struct Participant {
    registry: *const Registry,
    index: Option<usize>,
    parker: Arc<Parker>,
    frames: UnsafeCell<Vec<Frame>>,
    /// Frames `[0, shared)` have been moved to the shared queue.
    shared: Cell<usize>,
    /// `forks` at the last flush to the counters.
    flushed_forks: Cell<u64>,
    busy_since: Cell<Option<Instant>>,
    seed: Cell<u64>,
    /// Forks made by this thread, for the task count (every fork's second half runs once, here
    /// or on a thief). Plain-call forks are added in bulk from `plain_set - plain_left`.
    forks: Cell<u64>,
    /// Forks that may still run as plain calls before the next shareable one (see
    /// [`Participant::fork_privately`]); 0 when the thread's private reserve is too small.
    plain_left: Cell<u32>,
    /// `plain_left` when it was last set.
    plain_set: Cell<u32>,
    /// Where a worker sleeps (see placement.rs); `None` for outside callers.
    placement: Option<Placement>,
}

/// One fork in this many is made shareable even when the thread has private forks to spare.
/// The others run as plain calls: a fork that nobody could take is pure overhead, and a thread's
/// oldest private forks (the biggest pieces) are what thieves get anyway. 64 keeps the cost of
/// the shareable path (~100 instructions) to ~2 per fork on average.
const SHARE_EVERY: u32 = 64;

/// How long an idle worker searches before it sleeps. A time, not a count of spin hints: the
/// cost of a `pause` varies tenfold between CPUs (48 rounds of growing pauses took ~300 µs here).
/// 50 µs covers the gap between the frames of a game loop or the phases of a computation, about
/// twice what waking a sleeper costs here (~25 µs), and keeps an idle pool's cost per burst small.
const SEARCH_SPIN: std::time::Duration = std::time::Duration::from_micros(50);

/// How long a thread waiting for a stolen fork spins (helping if it can) before it sleeps. The
/// thief is running that fork right now, so it usually finishes soon; sleeping early would add a
/// wake-up (~25 µs here, more when the scheduler stacks the sleeper behind its waker) to every
/// join whose halves end close together, such as each frame of a game loop.
const WAIT_SPIN: std::time::Duration = std::time::Duration::from_micros(100);

/// A thread keeps at least this many private, unshared forks in reserve before it lets forks run
/// as plain calls, so a hungry thread always finds something to take.
const RESERVE: usize = 2;

/// Restores the previous current participant when dropped.
pub(crate) struct EnterGuard {
    prev: *const Participant,
}

impl Drop for EnterGuard {
    fn drop(&mut self) {
        CURRENT.with(|c| c.set(self.prev));
    }
}

impl Participant {
    /// A participant of `registry`, which must outlive it.
    pub(crate) fn new(registry: &Registry, index: Option<usize>, parker: Arc<Parker>) -> Self {
        Participant {
            registry,
            index,
            parker,
            frames: UnsafeCell::new(Vec::with_capacity(64)),
            shared: Cell::new(0),
            flushed_forks: Cell::new(0),
            busy_since: Cell::new(None),
            seed: Cell::new(0x9E37_79B9_7F4A_7C15 ^ index.map_or(0, |i| i as u64 + 1)),
            forks: Cell::new(0),
            plain_left: Cell::new(0),
            plain_set: Cell::new(0),
            placement: None,
        }
    }

    /// Steers this worker's wake-ups (see placement.rs).
    pub(crate) fn with_placement(mut self, placement: Placement) -> Self {
        self.placement = Some(placement);
        self
    }

    /// Makes `self` the thread's current participant until the guard drops.
    pub(crate) fn enter(&self) -> EnterGuard {
        EnterGuard {
            prev: CURRENT.with(|c| c.replace(self)),
        }
    }

    /// The thread's current participant, if it takes part in some pool.
    #[inline(always)]
    pub(crate) fn with_current<R>(f: impl FnOnce(Option<&Participant>) -> R) -> R {
        let p = CURRENT.with(|c| c.get());
        // SAFETY: CURRENT only ever holds a participant between `enter` and the guard's drop,
        // and the participant outlives its guard (both live in the same stack frame, the
        // participant declared first).
        f(unsafe { p.as_ref() })
    }

    #[inline]
    pub(crate) fn registry(&self) -> &Registry {
        // SAFETY: a participant never outlives its registry: workers hold an `Arc<Registry>` for
        // their whole life, outside callers borrow the `Pool` for the call.
        unsafe { &*self.registry }
    }

    /// This participant's worker index, or `None` for a caller from outside.
    pub(crate) fn index(&self) -> Option<usize> {
        self.index
    }

    pub(crate) fn is_in(&self, registry: &Registry) -> bool {
        ptr::eq(self.registry, registry)
    }

    fn queue(&self) -> &SharedQueue {
        self.registry().queue_of(self.index)
    }

    fn counters(&self) -> &Counters {
        self.registry().stats.counters(self.index)
    }

    #[allow(clippy::mut_from_ref)]
    #[inline]
    fn frames(&self) -> &mut Vec<Frame> {
        // SAFETY: `frames` is touched only by the owning thread (the participant is !Sync by its
        // Cell fields and is reached only through the thread-local CURRENT or the stack frame
        // that created it), and no reference returned here is held across a call that could
        // re-enter: callers use it for one push/pop/index and drop it.
        unsafe { &mut *self.frames.get() }
    }

    /// True if this fork can run as a plain call: the thread already holds enough private forks
    /// for thieves, and this is not the one fork in [`SHARE_EVERY`] that is made shareable anyway.
    /// Such a fork skips the limit and hunger checks, so both take effect within at most
    /// `SHARE_EVERY` forks (well under a microsecond of fork overhead).
    ///
    /// A countdown makes this one load, a test and a store: the reserve can only change when a
    /// shareable fork is pushed, popped or shared, and each of those recomputes the countdown
    /// ([`Participant::rebudget`]).
    #[inline(always)]
    pub(crate) fn fork_privately(&self) -> bool {
        let n = self.plain_left.get();
        if n > 0 {
            self.plain_left.set(n - 1);
            true
        } else {
            false
        }
    }

    /// Recomputes how many forks may run as plain calls, after the private reserve changed:
    /// [`SHARE_EVERY`] - 1 if the thread holds at least [`RESERVE`] unshared forks, else 0.
    #[inline]
    fn rebudget(&self) {
        self.settle_plain_forks();
        // No underflow: `shared <= frames.len()` always holds (pop_frame lowers it).
        let n = if self.frames().len() - self.shared.get() >= RESERVE {
            SHARE_EVERY - 1
        } else {
            0
        };
        self.plain_left.set(n);
        self.plain_set.set(n);
    }

    /// Adds the plain-call forks made since the countdown was last set to `forks`.
    fn settle_plain_forks(&self) {
        let done = self.plain_set.get() - self.plain_left.get();
        self.plain_set.set(self.plain_left.get());
        self.forks
            .set(self.forks.get().wrapping_add(u64::from(done)));
    }

    /// Pushes a private fork; returns its index.
    #[inline(always)]
    pub(crate) fn push_frame(&self, frame: Frame) -> usize {
        let frames = self.frames();
        frames.push(frame);
        let index = frames.len() - 1;
        self.rebudget();
        index
    }

    /// Pops the fork at `index` (the top). Returns true if it had been shared.
    #[inline(always)]
    pub(crate) fn pop_frame(&self, index: usize) -> bool {
        let frames = self.frames();
        debug_assert_eq!(frames.len(), index + 1, "forks are popped in LIFO order");
        frames.truncate(index);
        let was_shared = index < self.shared.get();
        if was_shared {
            self.shared.set(index);
        }
        self.rebudget();
        was_shared
    }

    /// Counts a fork made outside `join_in` (a loop's on-demand split).
    #[inline(always)]
    pub(crate) fn count_fork(&self) {
        self.forks.set(self.forks.get().wrapping_add(1));
    }

    /// Called at every fork and at loop boundaries: one relaxed load, and the slow path only
    /// when a thread is hungry or the pool is over its limit.
    #[inline(always)]
    pub(crate) fn poll(&self) {
        if self.registry().sleep.load().wants_attention() {
            self.poll_slow();
        }
    }

    #[cold]
    #[inline(never)]
    fn poll_slow(&self) {
        let s = self.registry().sleep.load();
        if s.active() > s.limit() {
            self.pause_for_limit();
        } else if self.queue().is_empty() {
            self.share_oldest();
        }
    }

    /// Moves the oldest private fork to the shared queue. Returns false if there is none.
    fn share_oldest(&self) -> bool {
        let i = self.shared.get();
        let Some(frame) = self.frames().get(i).copied() else {
            return false;
        };
        // SAFETY: the frame's job is live (its owner, below us on this stack, is waiting in
        // `join` for it) and not yet published, so we may record its owner.
        unsafe { (*frame.latch).set_owner(self.parker.clone()) };
        self.shared.set(i + 1);
        self.rebudget();
        if self.registry().stats.enabled {
            Counters::add(&self.counters().shared, 1);
        }
        self.registry().publish(self.queue(), frame.job);
        true
    }

    /// Gives up this thread's slot while the pool is over its limit. Before it waits, it shares
    /// all its private forks so the threads that keep running can take them.
    pub(crate) fn pause_for_limit(&self) {
        while self.share_oldest() {}
        let sleep = &self.registry().sleep;
        if sleep.yield_if_over_limit() {
            self.end_busy();
            let t0 = Instant::now();
            sleep.wait_for_slot(&self.parker);
            self.add_limit_wait(t0);
            self.begin_busy();
        }
    }

    fn add_limit_wait(&self, since: Instant) {
        if self.registry().stats.enabled {
            Counters::add(
                &self.counters().limit_wait_ns,
                since.elapsed().as_nanos() as u64,
            );
        }
    }

    /// Takes a shared fork back if no thief has it yet.
    pub(crate) fn take_back(&self, job: JobRef) -> bool {
        self.registry().take_back(self.queue(), job)
    }

    /// Publishes a heap job (a scope spawn) in this participant's queue.
    pub(crate) fn publish(&self, job: JobRef) {
        self.registry().publish(self.queue(), job);
    }

    fn next_seed(&self) -> u64 {
        // xorshift64: cheap victim selection, no shared state.
        let mut x = self.seed.get();
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.seed.set(x);
        x
    }

    /// Looks for work, spinning with growing pauses, for about [`SEARCH_SPIN`].
    pub(crate) fn search(&self) -> Option<(JobRef, bool)> {
        let registry = self.registry();
        let start = Instant::now();
        let mut round = 0u32;
        loop {
            if let Some(found) = registry.find_work(self.index, self.next_seed()) {
                return Some(found);
            }
            for _ in 0..(1u32 << round.min(6)) {
                std::hint::spin_loop();
            }
            round += 1;
            // Read the clock only after the first, short rounds: most searches end there.
            if round >= 8 && start.elapsed() >= SEARCH_SPIN {
                return None;
            }
        }
    }

    /// Runs a job found in a queue, with the bookkeeping of a task boundary.
    pub(crate) fn execute_found(&self, job: JobRef, stolen: bool) {
        if stolen && self.registry().stats.enabled {
            Counters::add(&self.counters().steals, 1);
        }
        let track = self.index.is_some();
        if track {
            self.begin_busy();
        }
        // SAFETY: the job came out of a queue, so it was published and not yet run; taking it
        // out of the queue (under its lock) made us its only runner.
        unsafe { job.execute() };
        if track {
            self.end_busy();
        }
        // A task boundary: publish the forks this job made, so `Pool::stats` taken right after
        // the call that waited for this job counts them.
        self.flush();
    }

    /// Waits until `latch` is set, running other work meanwhile. Holds a run slot on entry and
    /// on return; gives it back while asleep.
    pub(crate) fn wait_until(&self, latch: &JobLatch) {
        let registry = self.registry();
        while !latch.probe() {
            let start = Instant::now();
            let mut round = 0u32;
            let found = loop {
                if latch.probe() {
                    return;
                }
                if let Some(found) = registry.find_work(self.index, self.next_seed()) {
                    break Some(found);
                }
                for _ in 0..(1u32 << round.min(6)) {
                    std::hint::spin_loop();
                }
                round += 1;
                if round >= 8 && start.elapsed() >= WAIT_SPIN {
                    break None;
                }
            };
            if let Some((job, stolen)) = found {
                // A task boundary: honour a lowered limit before running more.
                if registry.sleep.over_limit() {
                    self.pause_for_limit();
                }
                self.flush();
                self.execute_found_while_waiting(job, stolen);
                continue;
            }
            // Nothing to help with: sleep until the latch is set, without a slot. Publishers
            // cannot see latch sleepers, so after giving back the slot (a SeqCst RMW) we look at
            // the queues once more (a SeqCst load): work published after our last search is
            // either seen here, or its publisher saw our free slot and woke an idle worker.
            self.end_busy();
            registry.release_slot();
            if registry.has_queued() && !latch.probe() {
                let t0 = Instant::now();
                if registry.sleep.wait_for_slot(&self.parker) {
                    self.add_limit_wait(t0);
                }
                self.begin_busy();
                continue;
            }
            latch.wait_asleep();
            let t0 = Instant::now();
            if registry.sleep.wait_for_slot(&self.parker) {
                self.add_limit_wait(t0);
            }
            self.begin_busy();
        }
    }

    fn execute_found_while_waiting(&self, job: JobRef, stolen: bool) {
        if stolen && self.registry().stats.enabled {
            Counters::add(&self.counters().steals, 1);
        }
        // SAFETY: as in `execute_found`.
        unsafe { job.execute() };
    }

    /// Starts a stretch of busy time (stats).
    pub(crate) fn begin_busy(&self) {
        if self.registry().stats.enabled && self.busy_since.get().is_none() {
            self.busy_since
                .set(Some(self.registry().stats.busy_changed(1)));
        }
    }

    /// Ends a stretch of busy time (stats).
    pub(crate) fn end_busy(&self) {
        if let Some(since) = self.busy_since.take() {
            let now = self.registry().stats.busy_changed(-1);
            Counters::add(
                &self.counters().busy_ns,
                now.saturating_duration_since(since).as_nanos() as u64,
            );
        }
    }

    /// Moves the inline task count to the shared counters.
    pub(crate) fn flush(&self) {
        self.settle_plain_forks();
        let forks = self.forks.get();
        let n = forks.wrapping_sub(self.flushed_forks.replace(forks));
        if n > 0 && self.registry().stats.enabled {
            Counters::add(&self.counters().tasks, n);
        }
    }

    /// Counts a job published for others to run (a scope spawn): one task.
    pub(crate) fn count_published_task(&self) {
        if self.registry().stats.enabled {
            Counters::add(&self.counters().tasks, 1);
        }
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
        self.flush();
        let registry = self.registry();
        if registry.stats.enabled {
            Counters::add(&self.counters().parks, 1);
        }
        if let Some(p) = &self.placement {
            p.before_sleep();
        }
        let wake = registry
            .sleep
            .sleep_idle(&self.parker, searching, || registry.has_queued());
        if let Some(p) = &self.placement {
            p.after_wake();
        }
        wake
    }

    /// The parker of this participant's thread.
    pub(crate) fn parker(&self) -> &Arc<Parker> {
        &self.parker
    }
}

impl Drop for Participant {
    fn drop(&mut self) {
        self.flush();
        self.end_busy();
    }
}
