//! A participant: a thread taking part in a pool's work, either one of its workers or a caller
//! from outside that runs its own call and helps while it waits.
//!
//! Every fork puts its second half on the thread's deque, where any idle thread can steal it at
//! once, without the owner's help: no pending work is ever hidden from an idle thread, however
//! long the first half runs. A fork costs no fence (the owner's side of the deque and of the
//! sleep handshake is the light side of an asymmetric fence, `barrier.rs`) and one relaxed load
//! of the pool's state word, which is also the fork's look at the concurrency limit: every fork
//! is a task boundary. See `src/sleep/README.md`.

use crate::deque::Worker;
use crate::job::{Job, JobRef, StackJob, Task};
use crate::latch::{JobLatch, Thief};
use crate::placement::Placement;
use crate::registry::{Registry, Taken, FLUSH_REQUEST};
use crate::sleep::{Parker, Wake, SEARCH_SPIN};
use crate::stats::Counters;
use crate::sync::{spin_over, Arc, AtomicUsize, Ordering};
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
    /// Jobs this thread runs on its stack while it waits for something (nested helps), in
    /// any pool.
    static HELP_DEPTH: Cell<u32> = const { Cell::new(0) };
    /// Of those, the thread's own forks older than the wait that ran them (`Taken::OwnOlder`).
    static OLDER_HELP: Cell<u32> = const { Cell::new(0) };
}
#[cfg(loom)]
loom::thread_local! {
    static CURRENT: Cell<*const Participant> = Cell::new(ptr::null());
    static HOME: Cell<*const Participant> = Cell::new(ptr::null());
    static HELP_DEPTH: Cell<u32> = Cell::new(0);
    static OLDER_HELP: Cell<u32> = Cell::new(0);
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

/// How long a thread waiting for a stolen fork spins (helping if it can) before it sleeps. The
/// thief is running that fork right now, so it usually finishes soon; sleeping early would add a
/// wake-up (~25 µs here, more when the scheduler stacks the sleeper behind its waker) to every
/// join whose halves end close together, such as each frame of a game loop.
const WAIT_SPIN: std::time::Duration = std::time::Duration::from_micros(100);

/// What a waiting thread may run (see `Participant::wait_loop`): only work that belongs to
/// what it waits for, never a stranger's (sleep/README.md, "Isolated helping"). Every wait
/// runs the thread's own mail first.
#[derive(Debug, Clone, Copy)]
pub(crate) enum WaitKind<'a> {
    /// Waiting for its own fork: only the fork's descendants, from its thief's deque.
    Fork,
    /// Waiting for a scope: its own older forks, then, on one of the pool's own threads, the
    /// scope's own spawns not started yet (`unstarted` counts them; they are queued tagged
    /// `tag`).
    Scope {
        /// Spawns of the scope not started yet (a hint: the queues decide).
        unstarted: &'a AtomicUsize,
        /// The scope's tag in the queues.
        tag: usize,
    },
    /// Waiting for a broadcast, or for a fork past the helping bound: nothing but mail.
    Mail,
}

/// What a sleeping waiter is registered with, besides its latch (`Participant::sleep_in_wait`).
#[derive(Debug, Clone, Copy)]
enum Watch<'a> {
    /// The thief of the awaited fork, as recorded when the waiter went to sleep.
    Thief(Thief),
    /// The scope's spawners (every spawn wakes a scope owner asleep on the scope's latch).
    Spawns {
        /// Spawns of the scope not started yet.
        unstarted: &'a AtomicUsize,
        /// The scope's tag in the queues.
        tag: usize,
    },
    /// Nothing: only the latch (and mail) wakes the waiter.
    Nothing,
}

/// How many helped jobs a worker thread may have on its stack at once and still come home,
/// from a wait in another pool, to run its home pool's work (`Participant::run_home_away`).
/// Each such job can hold a whole subtree of another computation, so this bounds the stack (a
/// 32 MiB worker stack holds 64 paths of any reasonable recursion). Past it a worker away from
/// home does not come home for work: it counts as blocked there, and when work waits with its
/// slot free and the other threads busy, a spare thread stands in (spare.rs; sleep/README.md).
const MAX_STRANGER_HELP: u32 = 64;

/// How many of its own older forks a thread may have running at once in scope waits on its
/// stack. Every fork is pushed, so a thread waiting for a scope at depth `d` of a recursion has
/// up to `d` forks of its ancestors pending; each is shallower than the wait, and running one
/// there stacks its whole subtree on top of the wait. Unbounded, such helps nest `d` deep and
/// the stack grows as `d²` (a 2 MiB caller overflowed on the stress test's random trees at
/// depth ~50); bounded, it stays `MAX_OLDER_HELP · d`. Past the bound the forks stay stealable
/// for the other threads. One is what liveness asks for (`tests/trust.rs`: a scope's spawn
/// that waits for the fork made just before the scope).
const MAX_OLDER_HELP: u32 = 4;

/// A bound on all helped jobs on one stack, descendants included. Descendant helping is bounded
/// by the depth of the fork's tree already (each helped job is deeper than the last); this is a
/// safety net far above any real recursion.
const MAX_HELP: u32 = 4096;

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
        let spare = crate::spare::current_spare_pool();
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

/// Counts one helped job on this thread's stack until dropped (also on unwinding).
struct HelpDepth(());

impl HelpDepth {
    fn enter() -> HelpDepth {
        HELP_DEPTH.with(|d| d.set(d.get() + 1));
        HelpDepth(())
    }
}

impl Drop for HelpDepth {
    fn drop(&mut self) {
        HELP_DEPTH.with(|d| d.set(d.get() - 1));
    }
}

/// Counts one of the thread's own older forks run in a scope's wait until dropped.
struct OlderHelp(());

impl OlderHelp {
    fn enter() -> OlderHelp {
        OLDER_HELP.with(|d| d.set(d.get() + 1));
        OlderHelp(())
    }
}

impl Drop for OlderHelp {
    fn drop(&mut self) {
        OLDER_HELP.with(|d| d.set(d.get() - 1));
    }
}

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

/// [`flush_current`] at the end of a scope spawn, counting that spawn as one task: a spawn is
/// counted when it *finishes*, so the count is completed work (what the adaptive controller
/// learns from), and in the same add as the forks it made.
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
        if crate::spare::is_spare(self) {
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

    /// True if the calling thread is a worker whose home pool needs it: mail for it, or, away
    /// from home, work that nobody is about to take there (and a helped job more is allowed
    /// on this stack). Asked by a sleeper, which holds no slot.
    fn home_needs_us(&self) -> bool {
        with_home(|h| h.is_some_and(Participant::has_mail))
            || self.home_away().is_some_and(|home| {
                HELP_DEPTH.with(Cell::get) < MAX_STRANGER_HELP && home.registry().wants_help(false)
            })
    }

    /// Runs home work while the calling thread waits away from home (see
    /// [`Participant::home_away`]): its home worker's mail, which nobody else may run, and,
    /// when nobody at home is about to take it, the home pool's work, which may have no other
    /// runner (its workers may all be away). Called by a waiter holding a slot of `self`'s
    /// pool; returns true if it ran anything.
    ///
    /// A thread holds at most one slot: if the home pool is another pool, we give back this
    /// pool's slot, take a home slot (queueing for it for mail; for other work only if one is
    /// free), run as the home worker until nothing is left, give that slot back and queue for
    /// one here again, as a call from here into the home pool would.
    fn run_home_away(&self) -> bool {
        let Some(home) = self.home_away() else {
            return false;
        };
        let home_registry = home.registry();
        let mail = home.has_mail();
        let may_help = HELP_DEPTH.with(Cell::get) < MAX_STRANGER_HELP;
        let same_pool = self.is_in(home_registry);
        if !(mail || (may_help && home_registry.wants_help(same_pool))) {
            return false;
        }
        if !same_pool {
            self.flush();
            self.give_back_number();
            self.end_busy();
            self.registry().release_slot();
            if mail {
                home_registry.wait_for_slot(&home.parker);
            } else if !home_registry.sleep.try_activate() {
                // The slot went to someone else, who will find the work.
                self.registry().wait_for_slot(&self.parker);
                self.begin_busy();
                return false;
            }
        }
        let mut ran = false;
        {
            let _at_home = home.enter();
            let index = home.index.expect("a worker");
            loop {
                let found = match home_registry.take_mail(index) {
                    Some(job) => Some((job, Taken::Own)),
                    None if may_help => home.find_work(),
                    None => None,
                };
                let Some((job, taken)) = found else { break };
                let _depth = HelpDepth::enter();
                home.execute_found(job, taken);
                ran = true;
            }
            home.end_busy();
        }
        if !same_pool {
            home.give_back_number();
            home_registry.release_slot();
            self.registry().wait_for_slot(&self.parker);
            self.begin_busy();
        }
        ran
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
    fn trace_run_begin(&self, taken: Taken) {
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

    /// Waits until the latch of a broadcast is set, running nothing but this thread's own mail
    /// (its share of this or another broadcast): the other shares run on the threads they are
    /// addressed to. One of the pool's own threads counts as blocked meanwhile, so that a spare
    /// may stand in for it; a user's thread gives its slot to the pool. Never while a panic
    /// unwinds: callers catch panics first. Holds a run slot on entry and on return; gives it
    /// back while asleep, and while the pool is over its limit.
    pub(crate) fn wait_until(&self, latch: &JobLatch) {
        if latch.probe() {
            return;
        }
        let span = Span::JoinWait;
        self.trace(EventKind::Begin { span, site: None });
        self.wait_loop(latch, WaitKind::Mail);
        self.trace(EventKind::End { span, flow: None });
    }

    /// Waits until a scope's latch is set: runs its own older forks, then, on a worker thread
    /// or a spare in its own pool, the scope's own spawns not started yet (wherever they are
    /// queued; they descend from the scope), and nothing else.
    pub(crate) fn wait_for_scope(&self, latch: &JobLatch, unstarted: &AtomicUsize, tag: usize) {
        if latch.probe() {
            return;
        }
        let span = Span::JoinWait;
        self.trace(EventKind::Begin { span, site: None });
        self.wait_loop(latch, WaitKind::Scope { unstarted, tag });
        self.trace(EventKind::End { span, flow: None });
    }

    /// True if this participant runs its scope's own spawns while it waits for the scope: on
    /// a worker thread (at home or away), or as a spare in its own pool (see `find_help`).
    pub(crate) fn runs_own_spawns(&self) -> bool {
        #[cfg(not(loom))]
        if crate::spare::is_spare(self) {
            return true;
        }
        on_worker_thread()
    }

    /// The newest of this worker's own pending forks, for a scope's wait.
    fn take_own_fork(&self) -> Option<JobRef> {
        self.deque.as_ref().and_then(crate::deque::Worker::pop)
    }

    /// Waits until the latch of this thread's own fork is set, helping *only* with the fork's
    /// descendants: what the fork's thief pushed on its deque since it started the fork
    /// (isolated helping, sleep/README.md). So a thread never runs a stranger's task on its
    /// stack (a task holding a lock cannot meet another task taking the same lock on its own
    /// stack), and each helped job is deeper in the fork's tree than the last, so the stack
    /// holds one path of the caller's own tree. An outside caller does not help at all.
    pub(crate) fn wait_for_fork(&self, latch: &JobLatch) {
        if latch.probe() {
            return;
        }
        let span = Span::JoinWait;
        self.trace(EventKind::Begin { span, site: None });
        let kind = if HELP_DEPTH.with(Cell::get) < MAX_HELP {
            WaitKind::Fork
        } else {
            WaitKind::Mail
        };
        self.wait_loop(latch, kind);
        self.trace(EventKind::End { span, flow: None });
    }

    /// The loop of the waits above: spin (helping as `kind` allows) for about [`WAIT_SPIN`],
    /// then sleep without a slot until the latch is set or new work for us appears.
    fn wait_loop(&self, latch: &JobLatch, kind: WaitKind<'_>) {
        let registry = self.registry();
        // One of the pool's own threads, at home (no wait runs the pool's other work): a spare
        // may stand in while it sleeps (spare.rs).
        let blocks = self.is_pool_thread();
        while !latch.probe() {
            let start = Instant::now();
            let mut round = 0u32;
            let found = loop {
                if latch.probe() {
                    return;
                }
                if let Some(found) = self.find_help(latch, kind) {
                    break Some(found);
                }
                if self.run_home_away() {
                    continue;
                }
                if registry.sleep.over_limit() {
                    // Waiting with a slot counts against the limit: give it back.
                    self.pause_for_limit();
                }
                if registry.sleep.has_limit_waiters() {
                    // Another thread has work in hand and needs our slot: sleep now.
                    break None;
                }
                for _ in 0..(1u32 << round.min(6)) {
                    std::hint::spin_loop();
                }
                round += 1;
                if spin_over(round, start, WAIT_SPIN) {
                    break None;
                }
            };
            if let Some((job, taken)) = found {
                // A task boundary: honour a lowered limit before running more.
                if registry.sleep.over_limit() {
                    self.pause_for_limit();
                }
                self.flush();
                if taken.stolen() && registry.stats.enabled {
                    Counters::add(&self.counters().steals, 1);
                }
                self.trace_run_begin(taken);
                let _depth = HelpDepth::enter();
                let _older = (taken == Taken::OwnOlder).then(OlderHelp::enter);
                // SAFETY: as in `execute_found`.
                unsafe { self.run_taken(job) };
                self.trace(EventKind::End {
                    span: Span::Run,
                    flow: None,
                });
                continue;
            }
            self.give_back_number();
            self.end_busy();
            let t0 = Instant::now();
            // Asleep away from home: our home pool's publishers may need us (see `away` in
            // registry.rs). Registered before the sleeps' fences and looks (`home_needs_us`).
            // Past the helping bound it cannot come home: to its home pool it is blocked, and a
            // spare may stand in for it.
            let home_bound = HELP_DEPTH.with(Cell::get) >= MAX_STRANGER_HELP;
            let away = self.home_away().map(|home| {
                if home_bound {
                    home.registry().block_away();
                } else {
                    home.registry().register_away(&self.parker);
                }
                home.registry()
            });
            // A spare asleep in another call than its own loop is blocked for its own pool.
            #[cfg(not(loom))]
            let spare_pool = crate::spare::away_spare_pool(self);
            #[cfg(not(loom))]
            if let Some(pool) = spare_pool {
                pool.block_away();
            }
            // Counted before the sleep gives back the slot (its `release_slot` looks for work
            // that then has no runner).
            if blocks {
                registry.block();
            }
            let watch = match kind {
                WaitKind::Fork => Watch::Thief(latch.thief()),
                WaitKind::Scope { unstarted, tag } if self.runs_own_spawns() => {
                    Watch::Spawns { unstarted, tag }
                }
                WaitKind::Scope { .. } | WaitKind::Mail => Watch::Nothing,
            };
            self.sleep_in_wait(latch, watch, blocks);
            if let Some(home_registry) = away {
                if home_bound {
                    home_registry.unblock();
                } else {
                    home_registry.deregister_away(&self.parker);
                }
            }
            if blocks {
                registry.unblock();
            }
            #[cfg(not(loom))]
            if let Some(pool) = spare_pool {
                pool.unblock();
            }
            self.trace_span_since(Span::JoinSleep, t0);
            self.begin_busy();
        }
    }

    /// Work a waiter may run now: its mail, then what `kind` allows (see [`WaitKind`]).
    fn find_help(&self, latch: &JobLatch, kind: WaitKind<'_>) -> Option<(JobRef, Taken)> {
        // Mail first, whatever the wait: a broadcast's share addressed to this very worker,
        // which nobody else may run (a broadcast that includes a waiting worker would wait for
        // it forever otherwise).
        if let Some(i) = self.index {
            if let Some(job) = self.registry().take_mail(i) {
                return Some((job, Taken::Own));
            }
        }
        match kind {
            WaitKind::Mail => None,
            WaitKind::Scope { unstarted, tag } => {
                // Its own older forks first (what the scope's body may wait for, as plain code
                // would run them; its own call, also for a user's thread). A user's thread
                // runs nothing else: its scope's spawns are taken by the pool's threads, to
                // which it gives its slot while it sleeps (a spawn may block on a lock, and a
                // user's thread blocked so would hold a slot that a task owning the lock may
                // need to resume: rayon#592's test in `tests/waiting.rs` hung that way). A
                // worker thread, or a spare in its own pool, runs the scope's own spawns next.
                // A spare must: it counts as blocked while it sleeps, so if it left them to
                // others, each scope on a spare would start another spare, up to the cap, where
                // all of them slept with their spawns queued (the stress test's hang,
                // `a_spare_runs_its_own_scopes_spawns`). In its own pool, a spare blocked on a
                // lock in a spawn is a spare standing in, and a lock holder queued behind it
                // takes a slot over the limit ("Slot holders blocked in the kernel"); in another
                // pool it is a stranger, so there it runs nothing, as a user's thread. Nobody runs a stranger's work here: a task that holds a lock across
                // the scope would meet, on its own stack, a task that takes the lock
                // (`a_stolen_half_waiting_for_a_scope_runs_no_task_that_takes_the_owners_lock`).
                if OLDER_HELP.with(Cell::get) < MAX_OLDER_HELP {
                    if let Some(job) = self.take_own_fork() {
                        return Some((job, Taken::OwnOlder));
                    }
                }
                if !self.runs_own_spawns() || unstarted.load(Ordering::Relaxed) == 0 {
                    return None;
                }
                let job = self.registry().take_scope_spawn(self.index, tag)?;
                Some((job, Taken::Own))
            }
            WaitKind::Fork => {
                let (index, mark) = match latch.thief() {
                    Thief::Deque { slot, mark } => (slot, mark),
                    // A thread without a deque (an outside caller) runs the fork: its forks
                    // made while it runs it are in the injector, tagged with the fork's latch.
                    Thief::NoDeque => {
                        let job = self.registry().take_tagged_injected(latch.tag())?;
                        return Some((job, Taken::Injector));
                    }
                    Thief::Unknown => return None,
                };
                let job = self.registry().stealer(index).steal_from(mark)?;
                if latch.probe() {
                    // The fork ended while we stole: the job may have been pushed after it, by
                    // a thief that moved on. Not ours to run: hand it to the pool.
                    let registry = self.registry();
                    registry.publish(&registry.injector, job);
                    return None;
                }
                // Pushed at or after the mark while the fork was still running: a descendant.
                Some((job, Taken::from_slot(index, self.registry().threads())))
            }
        }
    }

    /// Asleep in a wait, without a slot (given to a spare worker if work waits and this is one
    /// of the pool's own threads), registered on the latch and with what `watch` names, so that
    /// whoever queues work this wait may run wakes it: a fork's thief when it pushes, a
    /// scope's spawner when it spawns. Wakes early when a fork's thief records itself (we slept
    /// while it was [`Thief::Unknown`]) or for home mail. Returns holding a slot.
    ///
    /// With `blocked` (one of the pool's own threads, counted as blocked), it wakes now and then
    /// for the starvation check. On waking it queues for a slot like any thread (a lock it
    /// holds that the slot holders are blocked on is `Sleep::wait_for_slot`'s business).
    fn sleep_in_wait(&self, latch: &JobLatch, watch: Watch<'_>, blocked: bool) {
        let registry = self.registry();
        // Gives the slot back (SeqCst RMW, fence), and wakes an idle worker if work waits.
        // First, before any registration: nothing below may block for long between our
        // registrations and our park (a wake-up must find us runnable or parked). The queue
        // locks of `has_scope_spawn` are the one exception, and harmless: the only wake-up
        // they could delay is a spawner's, whose push we then see under the lock.
        registry.release_slot();
        let thief_deque = match watch {
            Watch::Thief(Thief::Deque { slot: index, mark }) => {
                registry.register_fork_waiter(index, &self.parker);
                Some((index, mark))
            }
            _ => None,
        };
        let registered = latch.register_sleeper(&self.parker);
        // Pairs with the thief's light fence after its push (`Participant::push_fork`, before
        // its look at its waiters), its fence after recording itself
        // (`JobLatch::record_thief`), and a spawner's fence after its publication
        // (`JobLatch::notify_owner`): either it sees our registrations, or we see its push or
        // its record below. Heavy: the thief's push side pays no fence (barrier.rs).
        crate::barrier::heavy();
        // One park: any wake-up (the thief's, the spawner's, the latch's, mail, the thief
        // recording itself) sends us back to `wait_loop`, which looks again and, with nothing
        // to do, sleeps again registered afresh (a wake-up by the thief removed our
        // registration).
        let ready = match watch {
            // The thief's deque holds a descendant.
            Watch::Thief(Thief::Deque { slot, mark }) => registry.stealer(slot).has_from(mark),
            // A thief without a deque published one, tagged with our latch (its
            // `notify_owner` after the publish pairs with our registration and fence).
            Watch::Thief(Thief::NoDeque) => registry.injector_has_tagged(latch.tag()),
            Watch::Thief(Thief::Unknown) => latch.thief() != Thief::Unknown,
            // A spawn of our scope is queued (the spawner's `notify_owner` after its publish
            // pairs with our registration and fence).
            Watch::Spawns { unstarted, tag } => {
                unstarted.load(Ordering::SeqCst) > 0 && registry.has_scope_spawn(tag)
            }
            Watch::Nothing => false,
        };
        if registered && !ready && !self.home_needs_us() && !latch.probe() {
            #[cfg(not(loom))]
            if blocked {
                // The starvation check (spare.rs, `STARVATION_CHECK`): a blocked thread wakes
                // now and then to see whether its pool's work has had no runner since.
                let parked = Instant::now();
                std::thread::park_timeout(crate::spare::STARVATION_CHECK);
                if parked.elapsed() >= crate::spare::STARVATION_CHECK {
                    registry.check_starvation();
                }
            } else {
                crate::sync::park();
            }
            #[cfg(loom)]
            {
                // Loom has no timed park, and no spares to start.
                let _ = blocked;
                crate::sync::park();
            }
        }
        if let Some((index, _)) = thief_deque {
            registry.deregister_fork_waiter(index, &self.parker);
        }
        self.take_slot_after_sleep();
    }

    /// Queues for a run slot after a sleep that gave it back.
    fn take_slot_after_sleep(&self) {
        let t0 = Instant::now();
        if self.registry().wait_for_slot(&self.parker) {
            self.add_limit_wait(t0);
            self.trace_span_since(Span::LimitWait, t0);
        }
    }

    /// Runs a job taken from a queue or deque. A fork first records who runs it and from which
    /// deque position, for its owner's isolated helping ([`JobLatch::record_thief`]).
    ///
    /// # Safety
    /// The job was taken out of a queue or deque (so published and not yet run) by this thread.
    #[inline]
    unsafe fn run_taken(&self, job: JobRef) {
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
