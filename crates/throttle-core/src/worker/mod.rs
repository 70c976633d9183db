//! A participant: a thread taking part in a pool's work, either one of its workers or a caller
//! from outside that runs its own call and helps while it waits.
//!
//! Every fork puts its second half on the thread's deque, where any idle thread can steal it at
//! once, without the owner's help: no pending work is ever hidden from an idle thread, however
//! long the first half runs. A fork costs no fence (the owner's side of the deque and of the
//! sleep handshake is the light side of an asymmetric fence, `barrier.rs`) and one relaxed load
//! of the pool's state word, which is also the fork's look at the concurrency limit: every fork
//! is a task boundary. See `src/sleep/README.md`.
//!
//! By role:
//!
//! - this file: the participant itself (its pool, deque, counters, trace track, thread
//!   number), which participant the calling thread is (current, home, spare), busy time and
//!   the flush of counts;
//! - [`fork`]: the fork path (push, take back) and the limit's task boundaries;
//! - [`run`]: finding work (the search), running what was found, an idle worker's sleep;
//! - [`wait`]: waiting for a fork, a scope or a broadcast, and what a waiter may help with;
//! - [`threads`]: the main loops of a pool's threads, its workers and its spares.
//!
//! Arrows: `fork`, `run`, `wait` and `threads` use this file and the registry; nothing here
//! uses them but through `Participant`'s methods.

pub(crate) mod fork;
pub(crate) mod run;
pub(crate) mod threads;
pub(crate) mod wait;

use crate::deque::Worker;
use crate::placement::Placement;
use crate::registry::Registry;
use crate::sleep::Parker;
use crate::stats::Counters;
use crate::sync::Arc;
use crate::trace::model::{EventKind, Span};
use crate::trace::recorder::{TraceSlot, Tracer};
use std::cell::Cell;
use std::ptr;
use std::time::Instant;

#[cfg(not(loom))]
thread_local! {
    static CURRENT: Cell<*const Participant> = const { Cell::new(ptr::null()) };
    /// On a worker thread, the worker's own participant (its *home*), for the thread's whole
    /// life, also while it works for another pool: mail posted to it must reach it there.
    static HOME: Cell<*const Participant> = const { Cell::new(ptr::null()) };
    /// On a spare thread, the spare's own participant, for its whole loop
    /// ([`threads::spare_main`]).
    static SPARE: Cell<*const Participant> = const { Cell::new(ptr::null()) };
}
#[cfg(loom)]
loom::thread_local! {
    static CURRENT: Cell<*const Participant> = Cell::new(ptr::null());
    static HOME: Cell<*const Participant> = Cell::new(ptr::null());
}

/// Loop items a participant gathers before it adds them to the shared counter
/// ([`Participant::count_items`]): 64, so that a block of tiny items (a loop of a few hundred
/// indices has blocks of one) costs a `Cell` add, not an atomic one, while a block of the usual
/// size (a 128th of a thread's share, tens to thousands of items) is published as it ends. The
/// controller reads the counter every 50 ms; a lump of 64 items per thread is far below what
/// an interval holds whenever the rate matters.
const ITEMS_PUBLISH: u64 = 64;

/// A thread's membership in one pool.
pub(crate) struct Participant {
    registry: *const Registry,
    index: Option<usize>,
    parker: Arc<Parker>,
    /// This thread's pending forks (thieves reach them through the registry's stealers): a
    /// worker's own deque, or one lent to a caller or spare for as long as it takes part.
    /// `None` only when every lent deque was taken: its forks then go to the injector.
    deque: Option<Worker>,
    /// The deque's slot in the registry (`Registry::lend_deque`); meaningless without a deque.
    slot: usize,
    /// Whether the deque is lent (given back when the participant drops).
    lent: bool,
    /// `forks` at the last flush to the counters.
    flushed_forks: Cell<u64>,
    /// A value of the state word for which a push needs no look beyond its deque's waiters
    /// (nobody to wake, the pool within its limit): the fork path compares the word it loads
    /// with this one and decodes it only when it differs (it changes only when a thread
    /// starts or stops searching, sleeps, wakes, or the limit moves).
    quiet: Cell<u64>,
    /// Forks announced since the last flush (`Stats::shared`).
    announced: Cell<u64>,
    /// Where threads asleep waiting for a fork this thread runs are counted (its deque slot's
    /// entry in `Registry::fork_waiters`, a count that stays 0 without a deque): one load on
    /// the fork path.
    fork_waiters: *const crate::sync::AtomicUsize,
    busy_since: Cell<Option<Instant>>,
    seed: Cell<u64>,
    /// Forks made by this thread, for the task count (every fork's second half runs once, here
    /// or on a thief).
    forks: Cell<u64>,
    /// Loop indices and iterator items finished since the last flush (`Stats::items`).
    items: Cell<u64>,
    /// For a thread without a deque: the latch address of the stolen fork it runs right now
    /// (0: its own call), the tag of the forks it publishes meanwhile (`run_taken`).
    frame: Cell<usize>,
    /// Where a worker sleeps (see placement.rs); `None` for outside callers or when disabled.
    placement: Option<Placement>,
    /// The ring this thread records its timeline in (trace/); written only by this thread.
    track: TraceSlot,
    /// The *thread number* this participant holds while it holds a run slot and someone asked
    /// ([`Participant::thread_index`]); given back before the slot (see `Registry::numbers`).
    number: Cell<Option<usize>>,
    /// The number it held last (a caller asks for it again first).
    last_number: Cell<usize>,
}

/// Restores the previous current participant when dropped.
pub(crate) struct EnterGuard {
    prev: *const Participant,
}

impl Drop for EnterGuard {
    fn drop(&mut self) {
        CURRENT.with(|c| c.set(self.prev));
    }
}

/// Clears the thread's home participant when its worker loop ends.
pub(crate) struct HomeGuard(());

impl Drop for HomeGuard {
    fn drop(&mut self) {
        HOME.with(|h| h.set(ptr::null()));
    }
}

/// Clears the thread's spare participant when its loop ends.
#[cfg(not(loom))]
pub(crate) struct SpareGuard(());

#[cfg(not(loom))]
impl Drop for SpareGuard {
    fn drop(&mut self) {
        SPARE.with(|s| s.set(ptr::null()));
    }
}

/// True if `p` is the calling thread's spare participant.
#[cfg(not(loom))]
pub(crate) fn is_spare(p: &Participant) -> bool {
    SPARE.with(|s| ptr::eq(s.get(), p))
}

/// The pool of the calling thread if it is a spare (null otherwise). The pointer is valid for
/// as long as the caller's frame: see [`with_own_pool`].
#[cfg(not(loom))]
fn current_spare_pool() -> *const Registry {
    let spare = SPARE.with(Cell::get);
    // SAFETY: SPARE holds the spare's participant from `enter_spare` until the guard's drop,
    // both in `spare_main`'s frame (the participant declared first), and every job (so every
    // caller of this function on that thread) runs inside that frame.
    unsafe { spare.as_ref() }.map_or(ptr::null(), |p| p.registry() as *const Registry)
}

/// The pool of the calling thread if it is a spare taking part, right now, in another call
/// than its own loop (a call into another pool, or its own pool as a caller): asleep there, it
/// counts as blocked in its own pool (`Registry::block_away`).
#[cfg(not(loom))]
pub(crate) fn away_spare_pool(current: &Participant) -> Option<&Registry> {
    let spare = SPARE.with(Cell::get);
    if spare.is_null() || ptr::eq(spare, current) {
        return None;
    }
    // SAFETY: as in `current_spare_pool`: every participant this thread enters lives inside
    // `spare_main`'s frame.
    Some(unsafe { &*spare }.registry())
}

/// The worker participant the calling thread belongs to, if it is a worker thread.
pub(crate) fn with_home<R>(f: impl FnOnce(Option<&Participant>) -> R) -> R {
    let p = HOME.with(|h| h.get());
    // SAFETY: HOME holds a worker's participant from `enter_home` until the guard's drop, and the
    // participant outlives its guard (both live in `worker_main`'s frame, the participant
    // declared first); every job runs inside that frame.
    f(unsafe { p.as_ref() })
}

/// The registry of the pool the calling thread belongs to: a worker's home pool, or a spare's
/// pool; `None` on a thread of no pool.
pub(crate) fn with_own_pool<R>(f: impl FnOnce(Option<&Registry>) -> R) -> R {
    #[cfg(not(loom))]
    {
        let spare = current_spare_pool();
        // SAFETY: a spare's registry outlives `spare_main`'s frame (it holds an `Arc`), and
        // every caller on that thread runs inside that frame; the reference lives only for `f`.
        if let Some(spare) = unsafe { spare.as_ref() } {
            return f(Some(spare));
        }
    }
    with_home(|h| f(h.map(Participant::registry)))
}

/// True if the calling thread is some pool's worker thread.
fn on_worker_thread() -> bool {
    HOME.with(|h| !h.get().is_null())
}

/// Counts the forks of the current thread's participant, if any, in the shared counters. Called
/// by a stolen job before it sets its latch, so that `Pool::stats` read right after the call that
/// waited for the job includes them.
pub(crate) fn flush_current() {
    Participant::with_current(|p| {
        if let Some(p) = p {
            p.flush();
        }
    });
}

/// Records a wake-up made by the calling thread (`Sleep` tags the woken thread's parker with
/// `flow`): in the caller's own ring if it takes part in the pool of `tracer`, else on the pool
/// track.
pub(crate) fn record_wake(tracer: &Tracer, flow: u64) {
    let kind = EventKind::Wake { flow };
    Participant::with_current(|p| match p {
        Some(p) if ptr::eq(p.registry().trace(), tracer) && p.track != TraceSlot::None => {
            tracer.record_at(p.track, Instant::now(), kind);
        }
        _ => tracer.record_pool(kind),
    });
}

/// [`flush_current`] at the end of a scope spawn, counting that spawn as one task: a spawn is
/// counted when it *finishes*, so the count is completed work (what the adaptive controller
/// learns from), and in the same add as the forks it made.
pub(crate) fn flush_current_and_count_spawn() {
    Participant::with_current(|p| {
        if let Some(p) = p {
            p.flush_counting(1);
        }
    });
}

impl Participant {
    /// Worker `index` of `registry` (which must outlive it), with its own deque.
    pub(crate) fn new(
        registry: &Registry,
        index: Option<usize>,
        parker: Arc<Parker>,
        deque: Option<Worker>,
    ) -> Self {
        let slot = index.unwrap_or(usize::MAX);
        Participant::with_deque(registry, index, parker, deque, slot, false)
    }

    /// A participant of `registry` that is not one of its workers (a caller from outside, a
    /// spare): it borrows a deque of the registry's lent ones while it exists, and gives it
    /// back when it drops (`Registry::lend_deque`).
    pub(crate) fn guest(registry: &Registry, parker: Arc<Parker>) -> Self {
        match registry.lend_deque() {
            Some((slot, deque)) => {
                Participant::with_deque(registry, None, parker, Some(deque), slot, true)
            }
            None => Participant::with_deque(registry, None, parker, None, usize::MAX, false),
        }
    }

    fn with_deque(
        registry: &Registry,
        index: Option<usize>,
        parker: Arc<Parker>,
        deque: Option<Worker>,
        slot: usize,
        lent: bool,
    ) -> Self {
        let fork_waiters = registry.fork_waiter_count(deque.as_ref().map(|_| slot));
        if index.is_none() && deque.is_none() {
            // A caller or spare beyond the lent deques: its thread id is recorded apart
            // (`holders.rs`; a lent deque's borrower is recorded with the deque).
            registry.holders.record_without_deque();
        }
        Participant {
            registry,
            index,
            parker,
            deque,
            slot,
            lent,
            flushed_forks: Cell::new(0),
            quiet: Cell::new(u64::MAX),
            announced: Cell::new(0),
            fork_waiters,
            busy_since: Cell::new(None),
            seed: Cell::new(0x9E37_79B9_7F4A_7C15 ^ (slot as u64).wrapping_add(1)),
            forks: Cell::new(0),
            items: Cell::new(0),
            frame: Cell::new(0),
            placement: None,
            track: match index {
                Some(i) => TraceSlot::Worker(i),
                None => registry.trace().claim_caller(),
            },
            number: Cell::new(None),
            last_number: Cell::new(index.unwrap_or(0)),
        }
    }

    /// The pool's recorder if a recording is on (one relaxed load).
    #[inline(always)]
    fn tracing(&self) -> Option<&Tracer> {
        let t = self.registry().trace();
        if t.on() {
            Some(t)
        } else {
            None
        }
    }

    /// Records `kind` now on this thread's track, if a recording is on.
    #[inline]
    pub(crate) fn trace(&self, kind: EventKind) {
        if let Some(t) = self.tracing() {
            t.record_at(self.track, Instant::now(), kind);
        }
    }

    /// Records a span that already happened, `[from, now)`, ended by this thread's last
    /// wake-up if one was tagged.
    fn trace_span_since(&self, span: Span, from: Instant) {
        if let Some(t) = self.tracing() {
            t.record_at(self.track, from, EventKind::Begin { span, site: None });
            let flow = self.parker.take_flow();
            t.record_at(self.track, Instant::now(), EventKind::End { span, flow });
        }
    }

    /// Starts the `Call` span of an outside caller at `site`; it ends when the participant drops.
    pub(crate) fn trace_call(&self, site: &'static std::panic::Location<'static>) {
        if let Some(t) = self.tracing() {
            let site = Some(t.site(site));
            t.record_at(
                self.track,
                Instant::now(),
                EventKind::Begin {
                    span: Span::Call,
                    site,
                },
            );
        }
    }

    /// Records an outside caller's wait for its first slot (`Pool::install` and friends).
    pub(crate) fn trace_limit_wait_since(&self, from: Instant) {
        self.trace_span_since(Span::LimitWait, from);
    }

    /// Steers this worker's wake-ups (see placement.rs).
    pub(crate) fn with_placement(mut self, placement: Option<Placement>) -> Self {
        self.placement = placement;
        self
    }

    /// Makes `self` the thread's current participant until the guard drops.
    pub(crate) fn enter(&self) -> EnterGuard {
        EnterGuard {
            prev: CURRENT.with(|c| c.replace(self)),
        }
    }

    /// Makes `self` (a spare's participant) the thread's spare until the guard drops.
    #[cfg(not(loom))]
    pub(crate) fn enter_spare(&self) -> SpareGuard {
        SPARE.with(|s| s.set(self));
        SpareGuard(())
    }

    /// Makes `self` (a worker's participant) the thread's home until the guard drops.
    pub(crate) fn enter_home(&self) -> HomeGuard {
        debug_assert!(self.index.is_some(), "only workers have a home");
        HOME.with(|h| h.set(self));
        HomeGuard(())
    }

    /// True if this worker has mail (work only it may run).
    fn has_mail(&self) -> bool {
        self.index.is_some_and(|i| self.registry().has_mail(i))
    }

    /// True if this participant is one of its pool's own threads: a worker at home, or a spare.
    fn is_pool_thread(&self) -> bool {
        #[cfg(not(loom))]
        if is_spare(self) {
            return true;
        }
        self.index.is_some() && self.home_away().is_none()
    }

    /// The calling thread's home worker participant if the thread is a worker *away* from
    /// home right now: it takes part in another pool (a call into it), or in its own pool as
    /// a caller (`install` from inside another pool's task).
    fn home_away(&self) -> Option<&Participant> {
        let home = with_home(|h| h.map(|h| h as *const Participant))?;
        // SAFETY: see `with_home`: the home participant outlives every job on this thread,
        // and so every participant this thread enters later (they live further up its stack).
        let home = unsafe { &*home };
        (!ptr::eq(home, self)).then_some(home)
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

    /// The calling thread's number in `0..threads`, unique among the threads that hold a run
    /// slot of this pool right now ([`crate::current_thread_index`]). Taken on first use while
    /// the thread holds its slot (a worker asks for its own index first, a caller for the
    /// number it had last), and kept until the thread gives back its slot. Must be called
    /// with a slot held (every caller runs pool code, so it holds one).
    pub(crate) fn thread_index(&self) -> usize {
        if let Some(n) = self.number.get() {
            return n;
        }
        let n = self.registry().take_number(self.last_number.get());
        self.number.set(Some(n));
        self.last_number.set(n);
        n
    }

    /// Gives back the thread number, if this participant holds one; called before every
    /// release of its run slot (so that numbers held never outnumber slots held).
    #[inline]
    pub(crate) fn give_back_number(&self) {
        if let Some(n) = self.number.take() {
            self.registry().give_back_number(n);
        }
    }

    pub(crate) fn is_in(&self, registry: &Registry) -> bool {
        ptr::eq(self.registry, registry)
    }

    fn counters(&self) -> &Counters {
        self.registry().stats.counters(self.index)
    }

    /// Gives up this thread's slot while it works for another pool (see `Pool::install`);
    /// the guard takes a slot again when dropped.
    pub(crate) fn suspend(&self) -> Suspended<'_> {
        self.flush();
        self.give_back_number();
        self.end_busy();
        self.registry().release_slot();
        Suspended(self)
    }

    /// Starts a stretch of busy time (stats).
    pub(crate) fn begin_busy(&self) {
        if self.registry().stats.enabled && self.busy_since.get().is_none() {
            let now = self.registry().stats.busy_changed(1);
            self.busy_since.set(Some(now));
            if let Some(t) = self.tracing() {
                t.record_at(self.track, now, EventKind::Busy);
            }
        }
    }

    /// Ends a stretch of busy time (stats).
    pub(crate) fn end_busy(&self) {
        if let Some(since) = self.busy_since.take() {
            let now = self.registry().stats.busy_changed(-1);
            if let Some(t) = self.tracing() {
                t.record_at(self.track, now, EventKind::Idle);
            }
            Counters::add(
                &self.counters().busy_ns,
                now.saturating_duration_since(since).as_nanos() as u64,
            );
        }
    }

    /// Moves the inline task count to the shared counters.
    pub(crate) fn flush(&self) {
        self.flush_counting(0);
    }

    /// [`flush`](Participant::flush), adding `extra` finished tasks.
    pub(crate) fn flush_counting(&self, extra: u64) {
        let forks = self.forks.get();
        let n = forks.wrapping_sub(self.flushed_forks.replace(forks)) + extra;
        let announced = self.announced.replace(0);
        let items = self.items.replace(0);
        if self.registry().stats.enabled {
            if n > 0 {
                Counters::add(&self.counters().tasks, n);
                Counters::add(&self.counters().shared, announced);
                self.trace(EventKind::Tasks { n });
            }
            if items > 0 {
                Counters::add(&self.counters().items, items);
            }
        }
    }

    /// Counts `n` loop indices or iterator items finished (a block ended; `Stats::items`).
    /// Once [`ITEMS_PUBLISH`] have gathered they go to the shared counter at once, not at the
    /// next flush: a thread that runs a whole loop alone (a caller at `k = 1`) flushes only
    /// when the call ends, and the controller would see each call as one lump.
    #[inline]
    pub(crate) fn count_items(&self, n: usize) {
        let local = self.items.get().wrapping_add(n as u64);
        if local >= ITEMS_PUBLISH && self.registry().stats.enabled {
            self.items.set(0);
            Counters::add(&self.counters().items, local);
        } else {
            self.items.set(local);
        }
    }
}

impl Drop for Participant {
    fn drop(&mut self) {
        self.flush();
        self.give_back_number();
        self.end_busy();
        if self.index.is_none() {
            let span = Span::Call;
            self.trace(EventKind::End { span, flow: None });
            self.registry().trace().release_caller(self.track);
        }
        if self.index.is_none() && !self.lent && self.deque.is_none() {
            self.registry().holders.forget_without_deque();
        }
        if self.lent {
            // Drop the owner end first: the slot's next owner makes a new one.
            drop(self.deque.take());
            // SAFETY: the deque is empty: every fork this participant pushed was taken back
            // or ran before its join returned, and a participant drops only after its call.
            unsafe { self.registry().return_deque(self.slot) };
        }
    }
}

/// A participant away working for another pool; takes a slot of its own pool back on drop.
pub(crate) struct Suspended<'a>(&'a Participant);

impl Drop for Suspended<'_> {
    fn drop(&mut self) {
        let p = self.0;
        let t0 = Instant::now();
        if p.registry().wait_for_slot(&p.parker) {
            p.add_limit_wait(t0);
        }
        p.begin_busy();
    }
}
