//! Who runs, who searches, who sleeps: the concurrency limit and the sleep/wake protocol.
//!
//! The protocol and the proof sketch of why no wake-up and no slot is ever lost are in
//! `README.md` beside this file (`crates/throttle-core/src/sleep/README.md`). In short:
//!
//! - A thread runs pool code only while it holds a *run slot*; slots are taken only while
//!   `active < limit` ([`Sleep::try_activate`]). Threads over the limit give their slot back at the
//!   next task boundary and wait in the *limit queue* (FIFO), which is served first whenever a slot
//!   frees up ([`Sleep::release`]).
//! - Idle workers search briefly, then give back their slot and sleep in the *idle list*
//!   ([`Sleep::sleep_idle`]). Whoever publishes work calls [`Sleep::notify_work`], which wakes one
//!   sleeper only if nobody is searching and a slot is free: the empty → non-empty edge, never a herd.
//! - A waker moves the sleeper's counts in the state word *for* it (sleeping → searching + active)
//!   under the idle-list lock, so the counts never lie about who can run.

#[cfg(not(loom))]
mod bell;
mod parker;
pub(crate) mod state;

#[cfg(not(loom))]
pub(crate) use bell::Bell;
pub(crate) use parker::Parker;

/// How long an idle worker searches before it sleeps. A time, not a count of spin hints: the
/// cost of a `pause` varies tenfold between CPUs (48 rounds of growing pauses took ~300 µs here).
/// 50 µs covers the gap between the frames of a game loop or the phases of a computation, about
/// twice what waking a sleeper costs here (~25 µs), and keeps an idle pool's cost per burst small.
pub(crate) const SEARCH_SPIN: std::time::Duration = std::time::Duration::from_micros(50);
use state::{State, ONE_ACTIVE, ONE_SEARCHING, ONE_SLEEPING};

use crate::sync::{fence, lock, Arc, AtomicU64, AtomicUsize, Mutex, Ordering};
use crate::trace::model::EventKind;
use crate::trace::recorder::Tracer;
use crossbeam_utils::CachePadded;
#[cfg(not(loom))]
use std::cell::Cell;
use std::collections::VecDeque;

/// How long a thread queued for a slot spins before it sleeps: a searching worker notices the
/// queued thread within one round of its search (well under a microsecond here) and gives way,
/// while a futex sleep and wake-up costs ~25 µs on this project's VM. Short, because a thread
/// without a slot must not take a CPU from the threads that hold one.
const SLOT_SPIN: std::time::Duration = std::time::Duration::from_micros(5);

/// How an idle sleep ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Wake {
    /// Woken with a run slot and counted as searching.
    Searching,
    /// Woken for shutdown: holds no slot.
    Exit,
}

/// How long the thread first in the limit queue waits before it first looks whether the slot
/// holders are all blocked in the kernel ([`Sleep::wait_for_slot`]). Each look reads one small
/// `/proc` file per holder (10-20 µs each here), and a thread queued behind holders that
/// compute may queue for a long time under a low limit, so the looks back off: the interval
/// doubles after each look up to [`STALL_LOOK_MAX`]. A millisecond is ten times a fork wait's
/// spin: a holder blocked that long is not about to resume.
#[cfg(not(loom))]
const STALL_LOOK_FIRST: std::time::Duration = std::time::Duration::from_millis(1);

/// The longest interval between two looks of [`STALL_LOOK_FIRST`]: a queued thread behind
/// holders that compute costs at most one look per 64 ms.
#[cfg(not(loom))]
const STALL_LOOK_MAX: std::time::Duration = std::time::Duration::from_millis(64);

/// A slot taken over the limit by the calling thread ([`Sleep::keeps_taken_slot`]).
#[cfg(not(loom))]
#[derive(Clone, Copy)]
struct Lease {
    /// The pool's sleep state (compared by address only).
    sleep: *const Sleep,
    /// Until when the thread keeps the slot at task boundaries without looking again.
    until: std::time::Instant,
    /// The lease's length, doubled at each renewal.
    length: std::time::Duration,
}

#[cfg(not(loom))]
std::thread_local! {
    /// The calling thread's lease on a slot it took over the limit, if any; cleared when it
    /// gives a slot back ([`Sleep::release`]).
    static LEASE: Cell<Option<Lease>> = const { Cell::new(None) };
}

/// The shared state of the limit and of sleeping workers.
#[derive(Debug)]
pub(crate) struct Sleep {
    /// The packed [`State`]: limit, active, searching, sleeping. Padded: every fork reads it.
    state: CachePadded<AtomicU64>,
    /// Idle workers, most recently asleep last (woken first: its cache is warmest).
    idle: Mutex<Vec<Arc<Parker>>>,
    /// Threads that have work in hand but no slot, in arrival order.
    limit_queue: Mutex<VecDeque<Arc<Parker>>>,
    /// Length of `limit_queue`, readable without its lock.
    limit_waiting: AtomicUsize,
    /// Slots taken over the limit by a queued thread because every holder was blocked
    /// ([`crate::Stats::limit_takeovers`]).
    takeovers: AtomicUsize,
    /// Set once at shutdown; read under the idle lock.
    exiting: Mutex<bool>,
    /// The timeline recorder (here so that wakers can tag their wake-ups; see `trace/`).
    pub(crate) trace: Tracer,
    /// Records a wake-up on the waking thread's track (see [`Sleep::with_tracer`]).
    record_wake: fn(&Tracer, u64),
}

impl Sleep {
    /// A fresh protocol state with `limit` slots.
    #[cfg(test)]
    pub(crate) fn new(limit: usize) -> Sleep {
        Sleep::with_tracer(limit, Tracer::new(0, 1), |tracer, flow| {
            tracer.record_pool(EventKind::Wake { flow });
        })
    }

    /// A fresh protocol state with `limit` slots and the pool's recorder. While a recording is
    /// on, every wake-up is recorded by `record_wake(tracer, flow)` on the waking thread, which
    /// knows on which track of the recorder that thread writes (`worker::record_wake`).
    pub(crate) fn with_tracer(limit: usize, trace: Tracer, record_wake: fn(&Tracer, u64)) -> Sleep {
        Sleep {
            state: CachePadded::new(AtomicU64::new(State::with_limit(limit).0)),
            idle: Mutex::new(Vec::new()),
            limit_queue: Mutex::new(VecDeque::new()),
            limit_waiting: AtomicUsize::new(0),
            takeovers: AtomicUsize::new(0),
            exiting: Mutex::new(false),
            trace,
            record_wake,
        }
    }

    /// While recording, tags the wake-up of `target` with a flow id and records it on the
    /// waker's track (see `trace/README.md`). One relaxed load when not recording.
    #[inline]
    fn trace_wake(&self, target: &Parker) {
        if self.trace.on() {
            let flow = self.trace.next_flow();
            target.set_flow(flow);
            (self.record_wake)(&self.trace, flow);
        }
    }

    /// A relaxed snapshot, for fast-path decisions that a slow path re-checks.
    #[inline]
    pub(crate) fn load(&self) -> State {
        State(self.state.load(Ordering::Relaxed))
    }

    /// Applies `f` to the state until it succeeds; `f` returns `None` to give up.
    fn update(&self, mut f: impl FnMut(State) -> Option<State>) -> Result<State, State> {
        let mut cur = State(self.state.load(Ordering::SeqCst));
        loop {
            let Some(next) = f(cur) else {
                return Err(cur);
            };
            // SeqCst: the state word takes part in the Dekker-style handshakes described in
            // README.md (with `queued` in the registry and `limit_waiting` here).
            match self.state.compare_exchange_weak(
                cur.0,
                next.0,
                Ordering::SeqCst,
                Ordering::SeqCst,
            ) {
                Ok(_) => return Ok(cur),
                Err(actual) => cur = State(actual),
            }
        }
    }

    /// Takes a run slot if one is free (`active < limit`) and no thread is queued for one. For a
    /// thread about to run its own work.
    pub(crate) fn try_activate(&self) -> bool {
        // SeqCst like the queue's own count changes: a newcomer does not overtake a thread that
        // queued before this load (README.md, "the limit queue").
        self.limit_waiting.load(Ordering::SeqCst) == 0 && self.take_slot()
    }

    /// True if some thread waits for a slot (a relaxed hint: searchers and waiters that hold a
    /// slot without work give it up when they see one).
    #[inline]
    pub(crate) fn has_limit_waiters(&self) -> bool {
        self.limit_waiting.load(Ordering::Relaxed) > 0
    }

    /// How many threads wait in the limit queue (a relaxed snapshot, for `Pool`'s `Debug`).
    pub(crate) fn limit_waiting(&self) -> usize {
        self.limit_waiting.load(Ordering::Relaxed)
    }

    /// Takes a run slot if one is free, whoever waits.
    fn take_slot(&self) -> bool {
        self.update(|s| s.has_free_slot().then_some(State(s.0 + ONE_ACTIVE)))
            .is_ok()
    }

    /// Takes a run slot and starts searching, if a slot is free. For a worker looking for work.
    pub(crate) fn try_activate_searching(&self) -> bool {
        self.update(|s| {
            s.has_free_slot()
                .then_some(State(s.0 + ONE_ACTIVE + ONE_SEARCHING))
        })
        .is_ok()
    }

    /// Slots taken over the limit so far because every holder was blocked in the kernel.
    pub(crate) fn takeovers(&self) -> usize {
        self.takeovers.load(Ordering::Relaxed)
    }

    /// Takes a run slot whatever the limit: for a thread queued behind slot holders that are
    /// all blocked in the kernel. Whoever is over the limit gives a slot back at a task boundary.
    #[cfg(not(loom))]
    fn force_activate(&self) {
        self.state.fetch_add(ONE_ACTIVE, Ordering::SeqCst);
    }

    /// A searcher found work. Returns the state before the change.
    pub(crate) fn transition_from_searching(&self) -> State {
        State(self.state.fetch_sub(ONE_SEARCHING, Ordering::SeqCst))
    }

    /// A worker finished a job and searches again (keeping its slot).
    pub(crate) fn transition_to_searching(&self) {
        self.state.fetch_add(ONE_SEARCHING, Ordering::SeqCst);
    }

    /// A searcher gives back its slot without sleeping (it goes to the limit queue instead).
    pub(crate) fn release_searching(&self) {
        self.state
            .fetch_sub(ONE_ACTIVE + ONE_SEARCHING, Ordering::SeqCst);
        self.serve_limit_queue();
    }

    /// Gives back a run slot, handing it to the oldest thread in the limit queue if any.
    /// Returns the state word right after the release.
    pub(crate) fn release(&self) -> State {
        #[cfg(not(loom))]
        LEASE.with(|l| l.set(None));
        let after = State(self.state.fetch_sub(ONE_ACTIVE, Ordering::SeqCst) - ONE_ACTIVE);
        self.serve_limit_queue();
        after
    }

    /// True when more threads hold slots than the limit allows (the limit was lowered).
    #[inline]
    pub(crate) fn over_limit(&self) -> bool {
        let s = self.load();
        s.active() > s.limit()
    }

    /// Gives back the caller's slot if the pool is over its limit. Returns true if it did; the
    /// caller must then get a slot again (e.g. [`Sleep::wait_for_slot`]) before running pool code.
    pub(crate) fn yield_if_over_limit(&self) -> bool {
        let gave_up = self
            .update(|s| (s.active() > s.limit()).then_some(State(s.0 - ONE_ACTIVE)))
            .is_ok();
        if gave_up {
            self.serve_limit_queue();
        }
        gave_up
    }

    /// Blocks until the caller holds a run slot. Threads that have to wait get slots in the
    /// order they queued (FIFO); a thread that arrives while nobody is queued takes a free slot
    /// at once. Returns true if the caller had to wait.
    ///
    /// The thread first in the queue looks now and then (after [`STALL_LOOK_FIRST`], then at
    /// doubling intervals up to [`STALL_LOOK_MAX`]) whether the slot holders are `stalled`: all
    /// of them blocked in the kernel. Then it leaves the queue and takes a slot over the limit
    /// (README.md, "Slot holders blocked in the kernel"); whoever is over the limit gives a
    /// slot back at its next task boundary, as after a lowered limit.
    pub(crate) fn wait_for_slot(&self, me: &Arc<Parker>, stalled: impl Fn() -> bool) -> bool {
        if self.try_activate() {
            return false;
        }
        {
            let mut queue = lock(&self.limit_queue);
            me.prepare();
            queue.push_back(me.clone());
            // SeqCst pairs with the SeqCst load in `serve_limit_queue`: either a releaser sees
            // us queued, or our own `serve_limit_queue` below sees its freed slot.
            self.limit_waiting.fetch_add(1, Ordering::SeqCst);
        }
        // Serve the queue ourselves: a slot may have freed up before we were queued, and its
        // releaser saw nobody waiting. We may be the one served (then `wait` returns at once).
        self.serve_limit_queue();
        // A searching worker hands its slot over within a microsecond or so: spin that long
        // before paying for a futex sleep and wake-up.
        if me.spin_for_wake(SLOT_SPIN) {
            return true;
        }
        #[cfg(not(loom))]
        {
            let mut look = STALL_LOOK_FIRST;
            while !me.wait_timeout(look) {
                if self.take_over_if_stalled(me, &stalled) {
                    return true;
                }
                look = (look * 2).min(STALL_LOOK_MAX);
            }
        }
        #[cfg(loom)]
        {
            let _ = stalled;
            me.wait();
        }
        true
    }

    /// If `me` is the first looker in the limit queue and the slot holders are `stalled`,
    /// takes `me` out of the queue holding a slot over the limit, and returns true. False if
    /// `me` is not the first looker, the holders are not stalled, or `me` was served meanwhile
    /// (then its wake-up is on its way, with a slot). The first looker is the oldest queued
    /// thread that waits here: an idle worker moved to the queue for its mail
    /// (`wake_for_mail`) waits in `sleep_idle` and never looks, so it must not keep the
    /// threads behind it from looking.
    #[cfg(not(loom))]
    fn take_over_if_stalled(&self, me: &Arc<Parker>, stalled: impl Fn() -> bool) -> bool {
        let position = |queue: &VecDeque<Arc<Parker>>| {
            let first = queue.iter().position(|p| !p.is_moved_to_queue())?;
            Arc::ptr_eq(&queue[first], me).then_some(first)
        };
        // The look at the holders reads files: not under the queue's lock.
        if position(&lock(&self.limit_queue)).is_none() || !stalled() {
            return false;
        }
        let mut queue = lock(&self.limit_queue);
        let Some(at) = position(&queue) else {
            // Served meanwhile (threads join at the back, and only a server takes one out):
            // the wake comes.
            return false;
        };
        queue.remove(at);
        // SeqCst as in `serve_limit_queue`.
        self.limit_waiting.fetch_sub(1, Ordering::SeqCst);
        // Our own `prepare` is undone: nobody will wake this registration.
        me.unprepare();
        self.force_activate();
        self.takeovers.fetch_add(1, Ordering::Relaxed);
        LEASE.with(|l| {
            l.set(Some(Lease {
                sleep: self,
                until: std::time::Instant::now() + STALL_LOOK_FIRST,
                length: STALL_LOOK_FIRST,
            }))
        });
        true
    }

    /// True if the calling thread, over the limit at a task boundary, keeps its slot: it took
    /// it over the limit (`take_over_if_stalled`) and its lease runs, or the lease ended and
    /// the holders are still `stalled` (then the lease is renewed for twice as long, up to
    /// [`STALL_LOOK_MAX`]). Otherwise it should give the slot back as any thread over the limit.
    /// Without the lease, a thread that took over would give the slot back at its very next
    /// task boundary while the holders stay blocked, and take it again a millisecond later:
    /// one task boundary per millisecond for as long as they block.
    #[cfg(not(loom))]
    pub(crate) fn keeps_taken_slot(&self, stalled: impl FnOnce() -> bool) -> bool {
        let Some(lease) = LEASE
            .with(Cell::get)
            .filter(|l| std::ptr::eq(l.sleep, self))
        else {
            return false;
        };
        let now = std::time::Instant::now();
        if now < lease.until {
            return true;
        }
        if !stalled() {
            LEASE.with(|l| l.set(None));
            return false;
        }
        let length = (lease.length * 2).min(STALL_LOOK_MAX);
        LEASE.with(|l| {
            l.set(Some(Lease {
                until: now + length,
                length,
                ..lease
            }))
        });
        true
    }

    /// Hands free slots to queued limit waiters, oldest first. Each waiter leaves the queue
    /// holding a slot taken on its behalf.
    fn serve_limit_queue(&self) {
        // Our caller just freed a slot, raised the limit or queued itself (an RMW); this fence
        // pairs with the same fence of the other parties: either we see the waiter, or it (in
        // its own call here) sees the slot.
        fence(Ordering::SeqCst);
        while self.limit_waiting.load(Ordering::SeqCst) > 0 {
            let mut queue = lock(&self.limit_queue);
            if queue.is_empty() || !self.take_slot() {
                return;
            }
            let waiter = queue.pop_front().expect("checked non-empty under the lock");
            // SeqCst: keeps the count in the same total order as the increment in
            // `wait_for_slot`; the queue itself is guarded by the lock we hold.
            self.limit_waiting.fetch_sub(1, Ordering::SeqCst);
            drop(queue);
            self.trace_wake(&waiter);
            waiter.wake();
        }
    }

    /// Changes the limit. Raising it hands the new slots to queued limit waiters at once; waking
    /// idle workers for queued work is the caller's job ([`Sleep::notify_work`]).
    pub(crate) fn set_limit(&self, limit: usize) {
        let _ = self.update(|s| Some(s.with_new_limit(limit)));
        self.trace.record_pool(EventKind::Limit { k: limit as u32 });
        self.serve_limit_queue();
    }

    /// Called by whoever just published work (after making it visible with a SeqCst RMW on the
    /// registry's `queued` counter, or a push on a deque): wakes one idle worker if nobody
    /// searches and a slot is free. Returns true if it woke one.
    #[cfg(all(test, loom))]
    pub(crate) fn notify_work(&self) -> bool {
        self.notify_work_state().1
    }

    /// [`Sleep::notify_work`], also returning the state word it read.
    pub(crate) fn notify_work_state(&self) -> (State, bool) {
        // Pairs with the fence in `sleep_idle` (README.md, "no lost wake-up").
        fence(Ordering::SeqCst);
        let s = State(self.state.load(Ordering::SeqCst));
        if s.searching() == 0 && s.sleeping() > 0 && s.has_free_slot() {
            return (s, self.wake_one_idle());
        }
        (s, false)
    }

    /// [`Sleep::wake_one_idle`] for a publisher that already read the state word after its own
    /// fence (a pusher's light one, `barrier.rs`).
    pub(crate) fn wake_idle(&self) -> bool {
        self.wake_one_idle()
    }

    /// Wakes the most recently idle worker, moving it to searching with a slot. False if none is
    /// asleep or no slot is free.
    fn wake_one_idle(&self) -> bool {
        let mut idle = lock(&self.idle);
        if idle.is_empty() {
            return false;
        }
        let moved = self.update(|s| {
            (s.has_free_slot() && s.sleeping() > 0)
                .then_some(State(s.0 - ONE_SLEEPING + ONE_ACTIVE + ONE_SEARCHING))
        });
        if moved.is_err() {
            return false;
        }
        // Prefer the most recent sleeper whose home CPU is not ours: the kernel must then start
        // it on that (idle) CPU instead of stacking it on this busy one (see placement.rs).
        let here = crate::placement::current_cpu();
        let pos = idle
            .iter()
            .rposition(|p| p.home().is_none() || p.home() != here)
            .unwrap_or(idle.len() - 1);
        let sleeper = idle.remove(pos);
        drop(idle);
        self.trace_wake(&sleeper);
        sleeper.wake();
        true
    }

    /// A searching worker that found nothing gives back its slot and sleeps until woken.
    ///
    /// `has_work` is re-checked after the worker is counted as sleeping (the other half of the
    /// handshake with [`Sleep::notify_work`]); if it finds work and a slot is free, the worker
    /// takes itself back out at once.
    ///
    /// `searching` says whether the caller holds a slot and is counted as searching (a worker
    /// that found nothing) or holds nothing (a worker that just started or yielded to the limit).
    ///
    /// `has_mail` says whether the caller has mail (work only it may run, `Registry::post`). It
    /// is re-checked after the worker is in the idle list (the poster looks in that list under
    /// the same lock after posting); with mail, the worker wakes itself as a poster would
    /// ([`Sleep::wake_for_mail`]): at once if a slot is free, else through the limit queue.
    pub(crate) fn sleep_idle(
        &self,
        me: &Arc<Parker>,
        searching: bool,
        has_work: impl Fn() -> bool,
        has_mail: impl Fn() -> bool,
    ) -> Wake {
        {
            let mut idle = lock(&self.idle);
            if *lock(&self.exiting) {
                drop(idle);
                if searching {
                    self.release_searching();
                }
                return Wake::Exit;
            }
            me.prepare();
            idle.push(me.clone());
            let delta = if searching {
                ONE_SLEEPING.wrapping_sub(ONE_SEARCHING + ONE_ACTIVE)
            } else {
                ONE_SLEEPING
            };
            // SeqCst: this RMW, then the SeqCst load of the registry's `queued` in `has_work`,
            // is the sleeper's half of the handshake with `notify_work` (README.md, step 3).
            self.state.fetch_add(delta, Ordering::SeqCst);
        }
        if searching {
            self.serve_limit_queue();
        }
        // Pairs with the publishers' fences (`notify_work_state`; a pusher's light one,
        // barrier.rs): either the publisher sees us asleep, or we see its work here.
        crate::barrier::heavy();
        if has_work() {
            let mut idle = lock(&self.idle);
            if let Some(pos) = idle.iter().position(|p| Arc::ptr_eq(p, me)) {
                let back = self.update(|s| {
                    s.has_free_slot()
                        .then_some(State(s.0 - ONE_SLEEPING + ONE_ACTIVE + ONE_SEARCHING))
                });
                if back.is_ok() {
                    idle.remove(pos);
                    return Wake::Searching;
                }
                // No slot: the slot holders will find the work when they next search.
            }
        }
        if has_mail() {
            // Only we can run it: wake ourselves as a poster would (a no-op if a poster
            // already took us out of the idle list).
            self.wake_for_mail(me);
        }
        me.wait();
        // Woken through the limit queue (for mail, with no slot free at the time): we hold a
        // slot but are not counted as searching yet.
        let moved = me.take_moved_to_queue();
        if *lock(&self.exiting) {
            if moved {
                self.release();
            }
            return Wake::Exit;
        }
        if moved {
            self.transition_to_searching();
        }
        Wake::Searching
    }

    /// Wakes the idle worker `who` for mail (work only it may run, `Registry::post`), if it is
    /// asleep in the idle list. With a slot free it wakes holding one, as searching (as in
    /// [`Sleep::wake_one_idle`]). With none free it leaves the idle list for the limit queue,
    /// counted in neither (`sleeping - 1`, `limit_waiting + 1`), and wakes when a slot is
    /// handed to it there, FIFO like any thread with work in hand: so it sleeps while the slot
    /// holders run, and no count ever claims a slot for a thread that is asleep.
    pub(crate) fn wake_for_mail(&self, who: &Arc<Parker>) {
        let mut idle = lock(&self.idle);
        let Some(pos) = idle.iter().position(|p| Arc::ptr_eq(p, who)) else {
            // Not asleep in the list: running, searching, queued for a slot, or asleep on a
            // latch (the poster unparks that one).
            return;
        };
        idle.remove(pos);
        let woke = self.update(|s| {
            s.has_free_slot()
                .then_some(State(s.0 - ONE_SLEEPING + ONE_ACTIVE + ONE_SEARCHING))
        });
        if woke.is_ok() {
            drop(idle);
            who.wake();
            return;
        }
        who.mark_moved_to_queue();
        // SeqCst like every state-word change (README.md).
        self.state.fetch_sub(ONE_SLEEPING, Ordering::SeqCst);
        {
            // Lock order: idle, then limit_queue (no path takes them the other way round).
            let mut queue = lock(&self.limit_queue);
            // Its parker is still marked waiting (from `sleep_idle`'s `prepare`).
            queue.push_back(who.clone());
            // SeqCst as in `wait_for_slot`: pairs with the load in `serve_limit_queue`.
            self.limit_waiting.fetch_add(1, Ordering::SeqCst);
        }
        drop(idle);
        // A slot freed between the failed update and the queueing was seen by no releaser as
        // wanted: serve the queue ourselves, as `wait_for_slot` does.
        self.serve_limit_queue();
    }

    /// Shutdown: wakes every idle worker with [`Wake::Exit`]; later sleepers return at once.
    pub(crate) fn wake_all_for_exit(&self) {
        let mut idle = lock(&self.idle);
        *lock(&self.exiting) = true;
        let n = idle.len() as u64;
        // SeqCst like every state-word change; at shutdown only consistency of the counts matters.
        self.state.fetch_sub(n * ONE_SLEEPING, Ordering::SeqCst);
        for p in idle.drain(..) {
            p.wake();
        }
    }
}

#[cfg(all(test, loom))]
mod loom_models {
    //! Model checks of the protocol with loom: `RUSTFLAGS="--cfg loom" cargo test -p throttle
    //! --release --lib loom_models`. Small on purpose: two or three threads, one or two jobs.

    use super::*;
    use crate::sync::AtomicUsize;
    use loom::thread;

    /// A queue as the registry has it: a count of jobs, bumped with SeqCst by the publisher.
    struct World {
        sleep: Sleep,
        queued: AtomicUsize,
        done: AtomicUsize,
    }

    impl World {
        fn publish(&self) {
            self.queued.fetch_add(1, Ordering::SeqCst);
            self.sleep.notify_work();
        }

        fn take(&self) -> bool {
            let mut n = self.queued.load(Ordering::SeqCst);
            while n > 0 {
                match self
                    .queued
                    .compare_exchange(n, n - 1, Ordering::SeqCst, Ordering::SeqCst)
                {
                    Ok(_) => return true,
                    Err(actual) => n = actual,
                }
            }
            false
        }

        /// A worker: search once, else sleep (with the re-check), until `jobs` were done.
        fn worker(&self, me: &Arc<Parker>, jobs: usize) {
            let mut searching = self.sleep.try_activate_searching();
            loop {
                if self.done.load(Ordering::SeqCst) == jobs {
                    if searching {
                        self.sleep.release_searching();
                    }
                    return;
                }
                if !searching {
                    match self.sleep.sleep_idle(
                        me,
                        false,
                        || self.queued.load(Ordering::SeqCst) > 0,
                        || false,
                    ) {
                        Wake::Searching => searching = true,
                        Wake::Exit => return,
                    }
                    continue;
                }
                if self.take() {
                    self.sleep.transition_from_searching();
                    self.done.fetch_add(1, Ordering::SeqCst);
                    self.sleep.transition_to_searching();
                    continue;
                }
                match self.sleep.sleep_idle(
                    me,
                    true,
                    || self.queued.load(Ordering::SeqCst) > 0,
                    || false,
                ) {
                    Wake::Searching => {}
                    Wake::Exit => return,
                }
            }
        }
    }

    /// No lost wake-up: a job published while the only worker decides to sleep is always run.
    /// If the worker slept forever, loom would report a deadlock (the main thread joins it).
    #[test]
    fn published_work_is_never_stranded() {
        loom::model(|| {
            let world = Arc::new(World {
                sleep: Sleep::new(1),
                queued: AtomicUsize::new(0),
                done: AtomicUsize::new(0),
            });
            let w = world.clone();
            let worker = thread::spawn(move || {
                let me = Arc::new(Parker::for_current_thread());
                w.worker(&me, 1);
            });
            world.publish();
            // The test's end: wait until the job ran, then shut the worker down.
            while world.done.load(Ordering::SeqCst) < 1 {
                thread::yield_now();
            }
            world.sleep.wake_all_for_exit();
            worker.join().unwrap();
            assert_eq!(world.queued.load(Ordering::SeqCst), 0);
        });
    }

    /// The limit: with one slot and two threads wanting it, never two hold it; a released slot
    /// reaches the queued waiter (no lost hand-off).
    #[test]
    fn slots_are_exclusive_and_handed_over() {
        loom::model(|| {
            let sleep = Arc::new(Sleep::new(1));
            let holders = Arc::new(AtomicUsize::new(0));
            let spawn = |sleep: Arc<Sleep>, holders: Arc<AtomicUsize>| {
                thread::spawn(move || {
                    let me = Arc::new(Parker::for_current_thread());
                    sleep.wait_for_slot(&me, || false);
                    assert_eq!(
                        holders.fetch_add(1, Ordering::SeqCst),
                        0,
                        "two slot holders"
                    );
                    holders.fetch_sub(1, Ordering::SeqCst);
                    sleep.release();
                })
            };
            let a = spawn(sleep.clone(), holders.clone());
            let b = spawn(sleep.clone(), holders.clone());
            a.join().unwrap();
            b.join().unwrap();
            let s = sleep.load();
            assert_eq!((s.active(), s.limit()), (0, 1));
        });
    }

    /// Raising the limit hands the new slot to a waiter at once.
    #[test]
    fn raising_the_limit_admits_a_waiter() {
        loom::model(|| {
            let sleep = Arc::new(Sleep::new(1));
            assert!(sleep.try_activate());
            let s2 = sleep.clone();
            let waiter = thread::spawn(move || {
                let me = Arc::new(Parker::for_current_thread());
                s2.wait_for_slot(&me, || false);
                s2.release();
            });
            sleep.set_limit(2);
            waiter.join().unwrap();
            sleep.release();
            assert_eq!(sleep.load().active(), 0);
        });
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::time::Duration;

    /// Threads queued for a slot get it in the order they queued, and a newcomer does not
    /// overtake them.
    #[test]
    fn queued_threads_get_slots_in_order_and_newcomers_wait() {
        let sleep = Arc::new(Sleep::new(1));
        assert!(sleep.try_activate());
        let order = Arc::new(Mutex::new(Vec::new()));
        let mut waiters = Vec::new();
        for id in 0..3 {
            let (s, order) = (sleep.clone(), order.clone());
            waiters.push(std::thread::spawn(move || {
                let me = Arc::new(Parker::for_current_thread());
                assert!(s.wait_for_slot(&me, || false), "the only slot is held");
                lock(&order).push(id);
                s.release();
            }));
            // Let this waiter queue before the next one starts.
            while sleep.limit_waiting.load(Ordering::SeqCst) < id + 1 {
                std::thread::sleep(Duration::from_millis(1));
            }
        }
        assert!(!sleep.try_activate(), "a newcomer overtook queued threads");
        sleep.release();
        for w in waiters {
            w.join().unwrap();
        }
        assert_eq!(*lock(&order), [0, 1, 2]);
        assert_eq!(sleep.load().active(), 0);
    }
}
