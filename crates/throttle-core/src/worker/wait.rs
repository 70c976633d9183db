//! Waiting: for a fork, a scope or a broadcast. A waiter spins a little while it helps with
//! what belongs to what it waits for (never a stranger's task: sleep/README.md, "Isolated
//! helping"), comes home for its own pool's work when it waits away from home, and then sleeps
//! without a run slot, registered where the work it may run would appear.

use super::{on_worker_thread, with_home, Participant};
use crate::job::JobRef;
use crate::latch::{JobLatch, Thief};
use crate::registry::Taken;
use crate::stats::Counters;
use crate::sync::{spin_over, AtomicUsize, Ordering};
use crate::trace::model::{EventKind, Span};
use std::cell::Cell;
use std::time::Instant;

#[cfg(not(loom))]
thread_local! {
    /// Jobs this thread runs on its stack while it waits for something (nested helps), in
    /// any pool.
    static HELP_DEPTH: Cell<u32> = const { Cell::new(0) };
    /// Of those, the thread's own forks older than the wait that ran them (`Taken::OwnOlder`).
    static OLDER_HELP: Cell<u32> = const { Cell::new(0) };
}
#[cfg(loom)]
loom::thread_local! {
    static HELP_DEPTH: Cell<u32> = Cell::new(0);
    static OLDER_HELP: Cell<u32> = Cell::new(0);
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

impl Participant {
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
        if super::is_spare(self) {
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
            // registry/mod.rs). Registered before the sleeps' fences and looks (`home_needs_us`).
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
            let spare_pool = super::away_spare_pool(self);
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
}
