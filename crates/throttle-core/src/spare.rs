//! Spare threads: stand-ins for a pool's own threads while they are blocked.
//!
//! A thread waiting for its own fork runs only that fork's descendants (isolated helping,
//! sleep/README.md), so it may sleep while work of its pool waits. The pool's other threads
//! may be busy, so the work would wait for one of them and the blocked thread's slot would go
//! unused; all of a pool's threads can even be blocked at once (three pools nesting at random
//! did it: every worker of one pool waited for a fork while a caller's scope spawns sat
//! queued, and nothing else could run them). Running the queued work on a blocked waiter's
//! stack would break isolation (a task holding a lock would meet another task taking it, as in
//! rayon#592), so instead the pool starts a *spare* thread, as Java's fork-join pool
//! compensates for a blocked joiner: it takes the blocked thread's place under the pool's
//! limit (it runs only while it holds a run slot), runs whatever work it finds, and goes away
//! after a short idle time. The protocol is in sleep/README.md, "Spare threads".
//!
//! This file keeps the counts and the idle spares; it knows nothing of what a spare runs. The
//! pool hands it, when it is built, how to start one ([`Spares::enable`]); the spare's loop is
//! `worker::threads::spare_main`.

use crate::sleep::Parker;
use crate::sync::{lock, Arc, AtomicUsize, Mutex, Ordering};
use std::sync::OnceLock;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How long an idle spare waits to be reused before it exits.
const SPARE_IDLE: Duration = Duration::from_millis(200);

/// How often a blocked thread looks whether its pool's work has a runner (the *starvation
/// check*). The publishers' and blockers' handshakes start a spare when every thread of the
/// pool is blocked; this look is the backstop for any state those counts miss, as .NET's thread
/// pool injects a thread when its queue makes no progress. A thread that slept blocked this
/// long and then sees work queued, nobody searching and a slot free, starts a spare. Only
/// blocked threads wake for it, and only while they are blocked, so an idle pool costs nothing;
/// a blocked thread pays a wake-up and a few loads every period. Long enough that a pool whose
/// other threads are only busy (they come to the work when done) rarely sees it.
pub(crate) const STARVATION_CHECK: Duration = Duration::from_millis(100);

/// Most spares alive per pool. Each one stands in for a blocked thread, and blocked threads
/// are bounded by the pool's threads plus its spares, so this only caps a runaway: past it, a
/// pool whose every thread is blocked waits as it did without spares.
const MAX_SPARES: usize = 256;

/// A pool's spares and its count of blocked threads.
#[derive(Default, Debug)]
pub(crate) struct Spares {
    /// The pool's own threads (workers at home, spares) asleep in a wait that runs none of the
    /// pool's other work. SeqCst: the waiter's increment, then the fence in its
    /// `Registry::release_slot`, pairs with a publisher's fence and load of this count.
    blocked: AtomicUsize,
    /// `State::alive`, readable without the lock.
    alive_count: AtomicUsize,
    /// Spares started since the pool was built (for [`Stats::spares_started`](crate::Stats)).
    started: AtomicUsize,
    /// Starvation checks that found work without a runner.
    rescues: AtomicUsize,
    state: Mutex<State>,
    /// How to start a spare (set when the pool is built, [`Spares::enable`]).
    start: OnceLock<Start>,
}

/// The body of a new spare thread.
pub(crate) type SpareBody = Box<dyn FnOnce() + Send>;

/// How a pool starts its spares: the stack size of a spare thread (the pool's worker stack
/// size), and what makes a new spare's body (`None` once the pool is gone).
struct Start {
    stack_size: usize,
    body: Box<dyn Fn() -> Option<SpareBody> + Send + Sync>,
}

impl std::fmt::Debug for Start {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Start")
            .field("stack_size", &self.stack_size)
            .finish_non_exhaustive()
    }
}

#[derive(Default, Debug)]
struct State {
    /// Idle spares, newest last.
    idle: Vec<Arc<Parker>>,
    /// Spares alive (running, idle or about to exit).
    alive: usize,
    exiting: bool,
    handles: Vec<JoinHandle<()>>,
}

impl Spares {
    /// Makes spares possible: a spare thread gets `stack_size` bytes of stack and runs what
    /// `body` returns, if it returns a body (it returns none once the pool is going away).
    pub(crate) fn enable(
        &self,
        stack_size: usize,
        body: impl Fn() -> Option<SpareBody> + Send + Sync + 'static,
    ) {
        let body = Box::new(body);
        let _ = self.start.set(Start { stack_size, body });
    }

    /// The calling thread, one of the pool's own, is about to sleep in a wait that runs none
    /// of the pool's other work. Must come before the waiter gives back its slot.
    pub(crate) fn block(&self) {
        self.blocked.fetch_add(1, Ordering::SeqCst);
    }

    /// The blocked thread woke.
    pub(crate) fn unblock(&self) {
        self.blocked.fetch_sub(1, Ordering::SeqCst);
    }

    /// Spares started since the pool was built.
    pub(crate) fn started(&self) -> usize {
        self.started.load(Ordering::SeqCst)
    }

    /// Threads counted as blocked (a snapshot, for `Pool`'s `Debug`).
    pub(crate) fn blocked(&self) -> usize {
        self.blocked.load(Ordering::Relaxed)
    }

    /// Spares alive. A spare that starts after a blocked thread looked was started for
    /// another blocked thread, which looks again when it wakes.
    pub(crate) fn alive(&self) -> usize {
        self.alive_count.load(Ordering::SeqCst)
    }

    /// Called by a publisher whose work has no runner (no idle worker woken, nobody searching,
    /// a slot free, no worker away to call home): if some of the pool's threads are blocked,
    /// wakes an idle spare, or starts one if the blocked threads outnumber the spares that
    /// run (a blocked thread gave back the free slot; the other threads are busy, and the
    /// work would wait for one of them to finish). The publisher's SeqCst fence comes before
    /// this load.
    #[inline]
    pub(crate) fn stand_in(&self) {
        let blocked = self.blocked.load(Ordering::SeqCst);
        if blocked > 0 {
            self.wake_or_start(blocked, false);
        }
    }

    /// A blocked thread saw work waiting with nobody searching and a slot free after it had
    /// slept (`Registry::check_starvation`): wakes an idle spare, or starts one, without the
    /// every-thread-is-blocked rule of [`Spares::stand_in`] (the counts may not see why the
    /// work has no runner). Still at most [`MAX_SPARES`].
    #[cold]
    pub(crate) fn starving(&self) {
        self.rescues.fetch_add(1, Ordering::Relaxed);
        self.wake_or_start(usize::MAX, true);
    }

    /// Times the starvation check found work without a runner (for
    /// [`Stats::starvation_rescues`](crate::Stats)).
    pub(crate) fn rescues(&self) -> usize {
        self.rescues.load(Ordering::Relaxed)
    }

    /// Wakes an idle spare, or starts one if `blocked` (the count the caller read) outnumbers
    /// the spares that run or are blocked themselves (idle ones are in the list, so `alive`
    /// counts those): one stand-in per blocked thread. `starving` starts one in any case.
    #[cold]
    fn wake_or_start(&self, blocked: usize, starving: bool) {
        let mut state = lock(&self.state);
        if state.exiting {
            return;
        }
        if let Some(spare) = state.idle.pop() {
            drop(state);
            spare.wake();
            return;
        }
        // Idle spares are in the list, so `alive` here counts spares running or blocked.
        if (!starving && blocked <= state.alive) || state.alive >= MAX_SPARES {
            return;
        }
        let Some(start) = self.start.get() else {
            return;
        };
        let Some(body) = (start.body)() else {
            return;
        };
        let spawned = std::thread::Builder::new()
            .name("throttle-spare".to_string())
            .stack_size(start.stack_size)
            .spawn(body);
        // A failed spawn leaves the pool as it would be without spares.
        if let Ok(handle) = spawned {
            state.alive += 1;
            self.alive_count.store(state.alive, Ordering::SeqCst);
            self.started.fetch_add(1, Ordering::SeqCst);
            // Spares that timed out are gone: forget their handles (a pool that is never
            // dropped, such as the global one, would keep them all otherwise).
            state.handles.retain(|h| !h.is_finished());
            state.handles.push(handle);
        }
    }

    /// An idle spare waits to be reused. False if it should exit (timed out, or the pool is
    /// going away).
    pub(crate) fn idle_wait(&self, me: &Arc<Parker>) -> bool {
        {
            let mut state = lock(&self.state);
            if state.exiting {
                state.alive -= 1;
                self.alive_count.store(state.alive, Ordering::SeqCst);
                return false;
            }
            me.prepare();
            state.idle.push(me.clone());
        }
        let deadline = Instant::now() + SPARE_IDLE;
        while me.is_waiting() {
            let now = Instant::now();
            if now >= deadline {
                break;
            }
            std::thread::park_timeout(deadline - now);
        }
        let mut state = lock(&self.state);
        if let Some(pos) = state.idle.iter().position(|p| Arc::ptr_eq(p, me)) {
            // Nobody took us out: time to go.
            state.idle.remove(pos);
            me.unprepare();
            state.alive -= 1;
            self.alive_count.store(state.alive, Ordering::SeqCst);
            return false;
        }
        // A waker took us out under the lock; its wake-up follows.
        drop(state);
        me.wait();
        let mut state = lock(&self.state);
        if state.exiting {
            state.alive -= 1;
            self.alive_count.store(state.alive, Ordering::SeqCst);
            return false;
        }
        true
    }

    /// Shutdown: wakes the idle spares so they exit, and returns every spare's handle to join.
    pub(crate) fn terminate(&self) -> Vec<JoinHandle<()>> {
        let mut state = lock(&self.state);
        state.exiting = true;
        for spare in state.idle.drain(..) {
            spare.wake();
        }
        std::mem::take(&mut state.handles)
    }
}
