//! The pool's shared heart: the workers' queues, the injector, the sleep/limit state, the
//! counters, the mail, the thread numbers. The threads' main loops are in
//! `worker::threads`; the queue types and the sleepers' lists are in [`queues`].

mod queues;

pub(crate) use queues::{SharedQueue, Taken, Waiters, FLUSH_REQUEST};

use crate::deque::{Stealer, Worker};
use crate::job::JobRef;
use crate::sleep::{state::State, Parker, Sleep};
use crate::stats::{Collector, Counters};
use crate::sync::{lock, Arc, AtomicBool, AtomicUsize, Mutex, Ordering};
use crate::trace::recorder::Tracer;
use crossbeam_utils::CachePadded;

/// Default stack size of a worker: 32 MiB of address space. A worker that waits runs its own
/// forks' descendants and its scopes' spawns on top of its stack ("whoever waits, helps"), and,
/// waiting in another pool, its home pool's work, so a worker's stack can hold several
/// computations' recursions at once. Only the pages actually touched
/// cost memory, so a large reservation is cheap insurance against overflow.
pub const DEFAULT_STACK_SIZE: usize = 32 << 20;

/// Everything the pool's threads share.
#[derive(Debug)]
pub(crate) struct Registry {
    pub(crate) sleep: Sleep,
    /// The thieves' ends of every deque of pending forks, by *slot*: `0..threads` are the
    /// workers' own, the rest are lent to the other participants (callers from outside,
    /// spares) while they take part (`claim_slot`). Every fork is pushed on its thread's deque,
    /// so a thread that runs in the pool without one (all lent slots taken) publishes its forks
    /// in the injector instead.
    stealers: Box<[CachePadded<Stealer>]>,
    /// Per lent slot (`threads + i`): whether a participant holds it.
    lent: Box<[CachePadded<AtomicBool>]>,
    /// One past the highest lent slot ever claimed: thieves and sleepers look at slots below
    /// `threads + lent_high`.
    lent_high: CachePadded<AtomicUsize>,
    /// One queue per worker: the jobs spawned on it (scope spawns).
    queues: Box<[CachePadded<SharedQueue>]>,
    /// Forks of callers from outside the pool, their spawns, and injected calls.
    pub(crate) injector: CachePadded<SharedQueue>,
    /// One mailbox per worker: jobs only that worker may run (a broadcast's share, see
    /// `broadcast.rs`). Not looked at by `has_work`: no other thread can take them, so they must
    /// not wake or keep awake anyone but their addressee.
    mail: Box<[CachePadded<SharedQueue>]>,
    /// Each worker's parker, registered when its thread starts (`None` before), so that a
    /// broadcast can wake that very worker.
    parkers: Box<[Mutex<Option<Arc<Parker>>>]>,
    pub(crate) stats: Collector,
    threads: usize,
    /// Per deque slot: threads asleep waiting for a fork that the slot's owner runs (isolated
    /// helping: they can help only with what it pushes, so it wakes one when it pushes and
    /// nobody else would take the work; sleep/README.md, "Isolated helping").
    fork_waiters: Box<[CachePadded<Waiters>]>,
    /// Always 0: the waiter count of a participant without a deque.
    no_fork_waiters: AtomicUsize,
    /// The kernel thread id of each deque's owner, for a thread queued for a slot behind
    /// holders that may all be blocked in the kernel (`holders.rs`).
    pub(crate) holders: crate::holders::Holders,
    /// The pool's worker threads asleep in a wait while *away*: inside a call into another
    /// pool, or in this pool as a caller. Nobody else may be left to run this pool's work (a
    /// pool of one thread whose worker waits in another pool), so a publisher that wakes no
    /// idle worker while a slot is free and nobody searches wakes one of these, and it comes
    /// home to run the work (sleep/README.md, "Away workers").
    away: CachePadded<Waiters>,
    /// rayon's semantics for calls from threads outside every pool: such a call is handed to
    /// one of the workers and the caller blocks, instead of taking part (set for a global pool
    /// built with the rayon-compatible `ThreadPoolBuilder::build_global`).
    hand_outside_calls: std::sync::atomic::AtomicBool,
    /// Spare threads, started when the pool's own threads are all blocked in waits that may
    /// not run its work (spare.rs; sleep/README.md, "Spare threads").
    #[cfg(not(loom))]
    pub(crate) spares: crate::spare::Spares,
    /// Thread numbers in use (`current_thread_index`): `numbers[i]` counts the slot holders
    /// that hold number `i`. A participant takes a number only while it holds a run slot, and
    /// gives it back *before* it gives back the slot, so at most `active` numbers are held, and
    /// while `active ≤ threads` a slot holder without one always finds one free (each count is
    /// then 0 or 1). Locked only by threads that ask for their index and when they give it back.
    numbers: Mutex<Vec<usize>>,
    /// Wakes the pool's budget thread (jobserver) out of its idle sleep when work can arrive.
    #[cfg(not(loom))]
    pub(crate) budget_bell: crate::sleep::Bell,
}

impl Registry {
    /// A registry for `threads` workers, and the owner ends of their deques (one per worker, in
    /// index order, to be moved to the worker threads).
    #[cfg(all(test, loom))]
    pub(crate) fn new(threads: usize, stats: bool) -> (Registry, Vec<Worker>) {
        Registry::with_trace_capacity(threads, stats, crate::trace::recorder::DEFAULT_CAPACITY)
    }

    /// [`Registry::new`] with trace rings of `capacity` events per thread.
    pub(crate) fn with_trace_capacity(
        threads: usize,
        stats: bool,
        capacity: usize,
    ) -> (Registry, Vec<Worker>) {
        crate::barrier::init();
        let lent = lent_slots(threads);
        let mut deques: Vec<Worker> = (0..threads + lent).map(|_| Worker::new()).collect();
        let stealers = deques
            .iter()
            .map(|d| CachePadded::new(d.stealer()))
            .collect();
        // The lent slots' owner ends are made again from their stealers when claimed.
        deques.truncate(threads);
        let registry = Registry {
            sleep: Sleep::with_tracer(
                threads,
                Tracer::new(threads, capacity),
                crate::worker::record_wake,
            ),
            stealers,
            lent: (0..lent).map(|_| CachePadded::default()).collect(),
            lent_high: CachePadded::new(AtomicUsize::new(0)),
            queues: (0..threads).map(|_| CachePadded::default()).collect(),
            injector: CachePadded::default(),
            mail: (0..threads).map(|_| CachePadded::default()).collect(),
            parkers: (0..threads).map(|_| Mutex::new(None)).collect(),
            stats: Collector::new(threads, stats),
            threads,
            numbers: Mutex::new(vec![0; threads]),
            fork_waiters: (0..threads + lent)
                .map(|_| CachePadded::default())
                .collect(),
            no_fork_waiters: AtomicUsize::new(0),
            holders: crate::holders::Holders::new(threads + lent),
            away: CachePadded::default(),
            hand_outside_calls: std::sync::atomic::AtomicBool::new(false),
            #[cfg(not(loom))]
            spares: Default::default(),
            #[cfg(not(loom))]
            budget_bell: crate::sleep::Bell::default(),
        };
        (registry, deques)
    }

    pub(crate) fn threads(&self) -> usize {
        self.threads
    }

    /// Lends a deque to a participant that is not one of the workers (a caller, a spare) for
    /// as long as it takes part: its slot and owner end. `None` when every lent slot is taken
    /// (more such threads at once than [`lent_slots`]): the participant then publishes its
    /// forks in the injector.
    pub(crate) fn lend_deque(&self) -> Option<(usize, Worker)> {
        let i = self.lent.iter().position(|flag| {
            !flag.load(Ordering::Relaxed)
                && flag
                    .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
                    .is_ok()
        })?;
        // SeqCst, and before the participant's first push: a sleeper's heavy fence and then its
        // load of `lent_high` (`has_work`) sees this slot, or our push comes after its fence
        // and our look at the state word sees it asleep (barrier.rs).
        self.lent_high.fetch_max(i + 1, Ordering::SeqCst);
        let slot = self.threads + i;
        self.holders.record(slot);
        // SAFETY: the `lent` flag we just set makes us the slot's only owner until
        // `return_deque`; the previous owner left it empty (`return_deque`'s contract).
        let owner = unsafe { self.stealers[slot].owner() };
        Some((slot, owner))
    }

    /// Gives back a lent deque slot.
    ///
    /// # Safety
    /// `slot` came from [`Registry::lend_deque`], its deque is empty (every fork pushed on it
    /// was taken back or has run), and the owner end is no longer used.
    pub(crate) unsafe fn return_deque(&self, slot: usize) {
        debug_assert!(
            self.stealers[slot].is_empty(),
            "a lent deque comes back empty"
        );
        self.holders.clear(slot);
        // Release: our last pops happen before the next owner's pushes.
        self.lent[slot - self.threads].store(false, Ordering::Release);
    }

    /// Deque slots a thief or sleeper must look at: the workers' and the lent ones ever used.
    #[inline]
    fn live_slots(&self) -> usize {
        self.threads + self.lent_high.load(Ordering::SeqCst)
    }

    /// The pool's timeline recorder.
    #[inline(always)]
    pub(crate) fn trace(&self) -> &Tracer {
        &self.sleep.trace
    }

    /// The queue a participant publishes spawns into: its own, or the injector for outside
    /// callers.
    pub(crate) fn queue_of(&self, index: Option<usize>) -> &SharedQueue {
        match index {
            Some(i) => &self.queues[i],
            None => &self.injector,
        }
    }

    /// Publishes `job` in `queue` and wakes a sleeper if nobody would otherwise see it.
    pub(crate) fn publish(&self, queue: &SharedQueue, job: JobRef) {
        self.publish_tagged(queue, job, 0);
    }

    /// [`Registry::publish`] for a scope's spawn, tagged with the scope's address.
    pub(crate) fn publish_tagged(&self, queue: &SharedQueue, job: JobRef, tag: usize) {
        // The queue's length is written under its lock; `publish_wake`'s SeqCst fence orders it
        // before our load of the state word, against a sleeper's state RMW, heavy fence and
        // look at every queue's length (`has_work`; sleep/README.md: either we see the
        // sleeper, or it sees our job). No count every publisher writes.
        queue.push_back(job, tag);
        self.publish_wake();
        #[cfg(not(loom))]
        self.budget_bell.ring();
    }

    /// Called by the owner of deque `slot` right after it pushed a fork and read `state` (the
    /// light side of an asymmetric fence between the two, `barrier.rs`; a sleeper issues the
    /// heavy side before it looks at the deques, sleep/README.md): wakes an idle sleeper if
    /// nobody searches and a slot is free, else a thread waiting for a fork this owner runs.
    pub(crate) fn after_push(&self, slot: usize, state: State) {
        if state.searching() > 0 {
            return;
        }
        if state.idle_sleeper_usable() && self.sleep.wake_idle() {
            if self.stats.enabled {
                Counters::add(&self.stats.outside.wakeups, 1);
            }
            return;
        }
        // Nobody idle could take it: a thread waiting for a fork we run can. Only if none
        // sleeps does the work need another runner (a woken waiter still counts as blocked
        // until it runs, and would start a spare needlessly).
        if !self.wake_fork_waiter(slot) && state.has_free_slot() {
            self.find_runner();
        }
    }

    /// The count of threads asleep waiting for a fork that the owner of deque `slot` runs
    /// (the owner reads it after every push, relaxed: the waiter's heavy fence after
    /// registering makes the handshake, `barrier.rs`), or of nobody (`None`: a participant
    /// without a deque, whose forks nobody waits on that way). Lives as long as the registry.
    pub(crate) fn fork_waiter_count(&self, slot: Option<usize>) -> *const AtomicUsize {
        match slot {
            Some(slot) => &self.fork_waiters[slot].count,
            None => &self.no_fork_waiters,
        }
    }

    /// Asks every participant that owns a deque to move its fork and item counts to the
    /// shared counters at its next push (`Participant::look_after_push`). A participant counts
    /// its forks in a plain cell and publishes them when its call or task ends; a sort or a
    /// recursion that one call runs for a second would otherwise reach the counters, and the
    /// controller, only at its end. Called by the controller before it reads the counters: one
    /// relaxed read-modify-write per deque, on a line that only fork waiters otherwise write.
    pub(crate) fn request_flush(&self) {
        for w in self.fork_waiters.iter() {
            w.count.fetch_or(FLUSH_REQUEST, Ordering::Relaxed);
        }
    }

    /// Takes `job` back from `queue` if no thief has taken it yet.
    pub(crate) fn take_back(&self, queue: &SharedQueue, job: JobRef) -> bool {
        queue.remove(job)
    }

    /// True if any queue or deque holds a job: the sleepers' and releasers' look, after their
    /// fence (sleep/README.md). Loads every queue's length and every deque's ends: a cost that
    /// grows with threads, paid per sleep and per release, never per task.
    pub(crate) fn has_work(&self) -> bool {
        !self.injector.is_empty()
            || self.queues.iter().any(|q| !q.is_empty())
            || self.stealers[..self.live_slots()]
                .iter()
                .any(|s| !s.is_empty())
    }

    /// Finds a job: the thread's own deque and spawn queue (newest first), then the other
    /// workers' deques and queues and the injector (oldest first: the largest pieces), starting
    /// at a pseudo-random victim. Returns the job and whether it was stolen from someone else.
    pub(crate) fn find_work(
        &self,
        me: Option<usize>,
        my_slot: Option<usize>,
        own: Option<&Worker>,
        seed: u64,
    ) -> Option<(JobRef, Taken)> {
        if let Some(job) = own.and_then(Worker::pop) {
            return Some((job, Taken::Own));
        }
        if let Some(i) = me {
            if let Some(job) = self.take_mail(i) {
                return Some((job, Taken::Own));
            }
        }
        if let Some(i) = me {
            if let Some(job) = self.queues[i].pop(true) {
                return Some((job, Taken::Own));
            }
        }
        let n = self.queues.len();
        let start = (seed % (n as u64 + 1)) as usize;
        for k in 0..=n {
            let v = (start + k) % (n + 1);
            if v == n {
                if let Some(job) = self.injector.pop(false) {
                    return Some((job, Taken::Injector));
                }
                continue;
            }
            if Some(v) == me {
                continue;
            }
            if let Some(job) = self.stealers[v].steal() {
                return Some((job, Taken::From(v)));
            }
            // `pop` locks only a queue that looks non-empty.
            if let Some(job) = self.queues[v].pop(false) {
                return Some((job, Taken::From(v)));
            }
        }
        // The lent deques (callers', spares'): after the workers', which hold most forks.
        for slot in self.threads..self.live_slots() {
            if Some(slot) == my_slot {
                continue;
            }
            if let Some(job) = self.stealers[slot].steal() {
                return Some((job, Taken::Caller));
            }
        }
        None
    }

    /// Takes a job spawned by the scope tagged `tag` from any queue (the thread's own first),
    /// for that scope's owner while it waits. Locks only queues that look non-empty.
    pub(crate) fn take_scope_spawn(&self, me: Option<usize>, tag: usize) -> Option<JobRef> {
        let own = me.map(|i| &*self.queues[i]);
        let queues = own
            .into_iter()
            .chain(std::iter::once(&*self.injector))
            .chain(self.queues.iter().map(|q| &**q));
        for q in queues {
            if let Some(job) = q.take_tagged(tag) {
                return Some(job);
            }
        }
        None
    }

    /// True if a job spawned by the scope tagged `tag` is queued anywhere, for that scope's
    /// owner about to sleep. Locks only queues that look non-empty.
    pub(crate) fn has_scope_spawn(&self, tag: usize) -> bool {
        std::iter::once(&*self.injector)
            .chain(self.queues.iter().map(|q| &**q))
            .any(|q| q.has_tagged(tag))
    }

    /// Takes the newest job tagged `tag` from the injector (a fork a thread without a deque made
    /// while it ran the stolen fork whose latch is `tag`).
    pub(crate) fn take_tagged_injected(&self, tag: usize) -> Option<JobRef> {
        self.injector.take_tagged(tag)
    }

    /// True if the injector holds a job tagged `tag` (under its lock).
    pub(crate) fn injector_has_tagged(&self, tag: usize) -> bool {
        self.injector.has_tagged(tag)
    }

    /// Worker `index`'s deque, for a thread waiting for a fork that `index` runs.
    pub(crate) fn stealer(&self, index: usize) -> &Stealer {
        &self.stealers[index]
    }

    /// Registers `me` as asleep waiting for a fork that worker `thief` runs. The SeqCst count
    /// change, then the caller's SeqCst fence and look at the thief's deque, is the waiter's
    /// half of the handshake with [`Registry::wake_fork_waiter`].
    pub(crate) fn register_fork_waiter(&self, thief: usize, me: &Arc<Parker>) {
        self.fork_waiters[thief].register(me);
    }

    /// Removes `me` from worker `thief`'s waiters if a wake-up did not remove it already.
    pub(crate) fn deregister_fork_waiter(&self, thief: usize, me: &Arc<Parker>) {
        self.fork_waiters[thief].deregister(me);
    }

    /// Called by worker `index` after it pushed a fork that no idle worker was woken for:
    /// wakes one thread asleep waiting for a fork this worker runs (it can help with the new
    /// one, which descends from it). The caller's push and SeqCst fence (in
    /// `Sleep::notify_work_state`) come before this SeqCst load.
    /// True if it woke one.
    #[inline]
    pub(crate) fn wake_fork_waiter(&self, slot: usize) -> bool {
        self.fork_waiters[slot].wake_one()
    }

    /// Work has no runner here (no idle worker was woken, nobody searches, a slot is free):
    /// call one of the pool's workers home from a wait elsewhere, or else, if some of the
    /// pool's threads are blocked, let a spare stand in for one (spare.rs): the free slot is a
    /// blocked thread's, and isolation must not cost its parallelism.
    #[inline]
    fn find_runner(&self) {
        if !self.away.wake_one() {
            #[cfg(not(loom))]
            self.spares.stand_in();
        }
    }

    /// Hands calls from threads outside every pool to the workers from now on (rayon's
    /// semantics; see the field).
    pub(crate) fn hand_outside_calls_to_workers(&self) {
        self.hand_outside_calls
            .store(true, std::sync::atomic::Ordering::Relaxed);
    }

    /// Whether calls from outside every pool are handed to the workers.
    pub(crate) fn hands_outside_calls(&self) -> bool {
        self.hand_outside_calls
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Spare threads alive (spare.rs; also shown by `Pool`'s `Debug`).
    pub(crate) fn spares_alive(&self) -> usize {
        #[cfg(not(loom))]
        return self.spares.alive();
        #[cfg(loom)]
        0
    }

    /// Spare threads started since the pool was built (spare.rs; [`crate::Stats`]).
    pub(crate) fn spares_started(&self) -> usize {
        #[cfg(not(loom))]
        return self.spares.started();
        #[cfg(loom)]
        0
    }

    /// Starvation checks that found work without a runner (spare.rs; [`crate::Stats`]).
    pub(crate) fn starvation_rescues(&self) -> usize {
        #[cfg(not(loom))]
        return self.spares.rescues();
        #[cfg(loom)]
        0
    }

    /// The pool's own threads counted as blocked now (spare.rs; a relaxed snapshot for `Pool`'s
    /// `Debug`, which the stress tests' watchdog prints).
    pub(crate) fn blocked_threads(&self) -> usize {
        #[cfg(not(loom))]
        return self.spares.blocked();
        #[cfg(loom)]
        0
    }

    /// The calling thread, one of this pool's own at home, is about to sleep in a wait that
    /// runs none of the pool's other work (before it gives back its slot).
    pub(crate) fn block(&self) {
        #[cfg(not(loom))]
        self.spares.block();
    }

    /// One of this pool's workers, away in a wait it cannot leave to come home (past the
    /// helping bound), is about to sleep: counted as blocked, then, as its release of the other
    /// pool's slot does not look here, it looks for work without a runner itself.
    pub(crate) fn block_away(&self) {
        self.block();
        // Pairs with a publisher's fence (a pusher's light one, barrier.rs): it sees the count,
        // or we see its work.
        crate::barrier::heavy();
        if self.wants_help(false) {
            self.find_runner();
        }
    }

    /// A blocked thread woke (for any reason, or for its periodic look): if work still waits
    /// with nobody searching and a slot free, the pool is starving whatever its counts say,
    /// and a spare stands in (spare.rs, "starvation check").
    #[cfg(not(loom))]
    pub(crate) fn check_starvation(&self) {
        crate::barrier::heavy();
        if self.wants_help(false) {
            self.spares.starving();
        }
    }

    /// The blocked thread woke.
    pub(crate) fn unblock(&self) {
        #[cfg(not(loom))]
        self.spares.unblock();
    }

    /// Registers `me`, a worker thread of this pool, as asleep while away. The SeqCst count
    /// change, then the caller's SeqCst fence and [`Registry::wants_help`], is the sleeper's
    /// half of the handshake with the publishers' [`Registry::publish_wake`].
    pub(crate) fn register_away(&self, me: &Arc<Parker>) {
        self.away.register(me);
    }

    /// Removes `me` from the away sleepers if a wake-up did not remove it already.
    pub(crate) fn deregister_away(&self, me: &Arc<Parker>) {
        self.away.deregister(me);
    }

    /// True if work waits here that no one is about to take: nobody searches and a slot is
    /// free, or the asking thread `holds` one of this pool's slots already (an away worker
    /// should come home for it).
    pub(crate) fn wants_help(&self, holds: bool) -> bool {
        let s = self.sleep.load();
        s.searching() == 0 && (holds || s.has_free_slot()) && self.has_work()
    }

    /// Takes the newest job in worker `index`'s spawn queue (`yield_local`).
    pub(crate) fn pop_own_spawn(&self, index: usize) -> Option<JobRef> {
        self.queues[index].pop(true)
    }

    /// Takes a free thread number, `preferred` if it is free (see the field `numbers`).
    pub(crate) fn take_number(&self, preferred: usize) -> usize {
        let mut numbers = lock(&self.numbers);
        let pick = if numbers.get(preferred) == Some(&0) {
            Some(preferred)
        } else {
            numbers.iter().position(|&holders| holders == 0)
        };
        // Some unless more threads hold slots than the pool has threads, which happens only
        // while a thread holds a slot it took over the limit because every other slot holder
        // was blocked in the kernel (sleep/README.md, "Slot holders blocked in the kernel"):
        // then it shares the least shared number until one comes free. Counted, so that the
        // first holder to give a shared number back leaves it taken by the other.
        let n = pick.unwrap_or_else(|| (0..numbers.len()).min_by_key(|&i| numbers[i]).unwrap_or(0));
        numbers[n] += 1;
        n
    }

    /// Gives back a number from [`Registry::take_number`].
    pub(crate) fn give_back_number(&self, n: usize) {
        let mut numbers = lock(&self.numbers);
        numbers[n] = numbers[n].saturating_sub(1);
    }

    /// Forks pending on each deque that holds any, as `(slot, forks)` (a relaxed snapshot, for
    /// `Pool`'s `Debug`, which the stress tests' watchdog prints).
    pub(crate) fn pending_forks(&self) -> Vec<(usize, usize)> {
        self.stealers[..self.live_slots()]
            .iter()
            .enumerate()
            .map(|(slot, s)| (slot, s.len()))
            .filter(|&(_, n)| n > 0)
            .collect()
    }

    /// Jobs in the shared queues and the injector (a relaxed snapshot that reads every queue's
    /// length, for `Pool`'s `Debug`).
    pub(crate) fn queued(&self) -> usize {
        self.injector.len() + self.queues.iter().map(|q| q.len()).sum::<usize>()
    }

    /// True if worker `index` has mail (a relaxed hint; see `post` for the handshake).
    #[inline]
    pub(crate) fn has_mail(&self, index: usize) -> bool {
        !self.mail[index].is_empty()
    }

    /// Takes the oldest job in worker `index`'s mailbox. Mail is always the worker's own work
    /// (posted to it alone), never a steal.
    pub(crate) fn take_mail(&self, index: usize) -> Option<JobRef> {
        self.mail[index].pop(false)
    }

    /// Registers worker `index`'s parker; from here on `post` can wake it. The worker looks for
    /// mail after this (its first search, or its idle re-check), so mail posted before is seen.
    pub(crate) fn register_worker(&self, index: usize, parker: &Arc<Parker>) {
        *lock(&self.parkers[index]) = Some(parker.clone());
    }

    /// Posts `job` to worker `index`'s mailbox: only that worker runs it, when it next looks for
    /// work, in whatever state it is now (sleep/README.md, "Broadcast"):
    /// - holding a slot (running or searching): its next `find_work` sees the mail;
    /// - asleep in the idle list: woken holding a slot, or moved to the limit queue if none is
    ///   free (`Sleep::wake_for_mail`);
    /// - asleep on a latch (here or, as a thread away in another pool, there): unparked, its
    ///   latch wait ends early for mail (`Participant::sleep_in_wait`), and it queues for a slot;
    /// - queued for a slot, or not started yet: it searches once it has a slot.
    ///
    /// # Safety
    /// `job` must stay valid until it ran; a posted job is run exactly once, by worker `index`.
    pub(crate) unsafe fn post(&self, index: usize, job: JobRef) {
        self.mail[index].push_back(job, 0);
        // The parker is read under its lock after the push: a worker that registers later
        // looks for mail after registering (the lock orders our push before its look).
        let parker = lock(&self.parkers[index]).clone();
        if let Some(parker) = parker {
            // The idle lock orders this against the worker's own idle push: either we find it
            // asleep in the list, or it re-checks its mail after pushing itself (`sleep_idle`).
            self.sleep.wake_for_mail(&parker);
            // A worker asleep on a latch is not in the idle list: unpark its thread; its latch
            // wait re-checks the mail (park/unpark synchronize, so it sees our push). A thread
            // that is not parked keeps a token that ends some later park early: harmless.
            parker.unpark_thread();
        }
    }

    /// Shutdown: wake everyone so they exit.
    pub(crate) fn terminate(&self) {
        self.sleep.wake_all_for_exit();
    }

    /// Shutdown of the spares: wakes the idle ones and returns every spare's handle to join.
    #[cfg(not(loom))]
    pub(crate) fn terminate_spares(&self) -> Vec<std::thread::JoinHandle<()>> {
        self.spares.terminate()
    }
}

impl Registry {
    /// Gives back a run slot. A publisher that found every slot busy woke nobody, so after the
    /// release we look for work and wake a sleeper for it (the release is a SeqCst RMW on the
    /// state word, then `has_work` SeqCst loads: the mirror of `publish`).
    pub(crate) fn release_slot(&self) {
        let after = self.sleep.release();
        // While a thread searches, it finds the work (or looks again before it sleeps): no
        // look, and no heavy fence, needed here (the common case when a caller leaves).
        if after.searching() > 0 {
            return;
        }
        // Pairs with the publishers' fences (a pusher's light one, barrier.rs; a queue
        // publisher's SeqCst fence in `Sleep::notify_work_state`).
        crate::barrier::heavy();
        if self.has_work() {
            self.publish_wake();
        }
    }

    /// Blocks until the caller holds a run slot (FIFO among waiting threads); returns true if it
    /// had to wait.
    ///
    /// A thread of *another* pool (a worker, or a spare) that has to queue here cannot run its
    /// own pool's work meanwhile: it counts as blocked there while it queues, so that a spare
    /// can stand in for it (`Registry::block_away`; sleep/README.md, "Spare threads stand in
    /// for blocked ones"). Without that, a pool whose threads were all queued in other pools'
    /// limit queues, or blocked at home, kept its queued work without a runner.
    pub(crate) fn wait_for_slot(&self, me: &Arc<Parker>) -> bool {
        let waited = self.sleep.try_activate()
            || crate::worker::with_own_pool(|own| {
                let own = own.filter(|own| !std::ptr::eq(*own, self));
                if let Some(own) = own {
                    own.block_away();
                }
                let waited = self
                    .sleep
                    .wait_for_slot(me, || !self.holders.another_computes());
                if let Some(own) = own {
                    own.unblock();
                }
                waited
            });
        #[cfg(not(loom))]
        self.budget_bell.ring();
        waited
    }

    /// Wakes one sleeper for work that is already queued: an idle worker if one sleeps, nobody
    /// searches and a slot is free; with no idle worker, one of the pool's workers asleep away
    /// (the work may have no other runner).
    pub(crate) fn publish_wake(&self) {
        let (state, woke) = self.sleep.notify_work_state();
        if woke {
            if self.stats.enabled {
                Counters::add(&self.stats.outside.wakeups, 1);
            }
        } else if state.searching() == 0 && state.has_free_slot() {
            self.find_runner();
        }
    }
}

/// Deques lent to participants that are not workers (callers from outside, spares), beyond the
/// workers' own: enough for as many such threads at once as the pool has workers, and a few
/// more (a thread beyond that publishes its forks in the injector, slower but correct). Each
/// is a ring of `deque::CAPACITY` slots (16 KiB).
pub(crate) fn lent_slots(threads: usize) -> usize {
    // One under loom: the models have one caller at most, and fewer atomics keep them small.
    if cfg!(loom) {
        1
    } else {
        threads + 4
    }
}
