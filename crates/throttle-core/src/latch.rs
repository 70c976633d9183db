//! A latch: the "this job is done" signal a fork's owner (or a scope, or an injected call's
//! caller) waits on.
//!
//! The owner registers itself only when it is about to sleep, so a fork costs no reference
//! count: three states, `UNSET → SET` when the job ends before the owner sleeps, and
//! `UNSET → SLEEPING → SET` when the owner sleeps first. Whoever moves the latch to `SET` must
//! not touch it afterwards (the owner may free it at once), so the setter reads the owner's
//! parker *before* its final store, which is safe because a `SLEEPING` owner cannot leave until
//! it sees `SET`.

use crate::sleep::Parker;
use crate::sync::{fence, Arc, AtomicU32, AtomicU64, Ordering};
use std::cell::UnsafeCell;

const UNSET: u32 = 0;
const SLEEPING: u32 = 1;
const SET: u32 = 2;

/// Set once by the thread that finished the job; probed, spun on, then slept on by the owner.
pub(crate) struct JobLatch {
    state: AtomicU32,
    /// Whom to unpark. Written by the owner only while the state is `UNSET`, before its
    /// `UNSET → SLEEPING` exchange; read by the setter, and by a thread that must wake the owner
    /// for new work (a thief recording itself, a fork's thief without a deque or a scope's
    /// spawner publishing: `notify_owner`), only after it saw `SLEEPING`, and before the setter
    /// can take it.
    owner: UnsafeCell<Option<Arc<Parker>>>,
    /// For a fork: who took it from a queue and runs it ([`JobLatch::thief`]): 0 while not
    /// recorded, `i + 1` for worker `i`, [`NO_DEQUE`] for a thread without a deque.
    thief: AtomicU32,
    /// For a fork: the thief's next deque position when it started the job. Until the job
    /// ends, everything the thief pushes from that position on descends from the job.
    mark: AtomicU64,
}

/// [`JobLatch::thief`]'s code for a thread that has no deque (an outside caller).
const NO_DEQUE: u32 = u32::MAX;

/// Who runs a stolen fork.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Thief {
    /// Not recorded yet (the fork was not taken, or its thief is about to record itself).
    Unknown,
    /// The owner of deque `slot` (`Registry::lend_deque`), which started the fork when its
    /// deque's next position was `mark`.
    Deque {
        /// The thief's deque slot.
        slot: usize,
        /// Its deque position when it started the fork.
        mark: isize,
    },
    /// A thread without a deque: nothing of the fork's is stealable from it.
    NoDeque,
}

impl JobLatch {
    pub(crate) fn new() -> JobLatch {
        JobLatch {
            state: AtomicU32::new(UNSET),
            owner: UnsafeCell::new(None),
            thief: AtomicU32::new(0),
            mark: AtomicU64::new(0),
        }
    }

    /// Records the thread about to run this fork (`deque`: its deque's slot and next position,
    /// or `None` for a thread without a deque), and wakes the owner if it already sleeps on the
    /// latch, so that it can look at the thief's deque (isolated helping, sleep/README.md).
    ///
    /// # Safety
    /// `this` must be a live fork that the caller took from a queue and has not run yet.
    pub(crate) unsafe fn record_thief(this: *const JobLatch, deque: Option<(usize, isize)>) {
        // SAFETY: live until the job runs (caller's contract), and we run it after this.
        let latch = unsafe { &*this };
        let code = match deque {
            Some((slot, mark)) => {
                latch.mark.store(mark as u64, Ordering::Relaxed);
                slot as u32 + 1
            }
            None => NO_DEQUE,
        };
        // Release publishes `mark` with it. The store, the SeqCst fence, then the load of the
        // state pairs with the owner's registration (SLEEPING), its heavy fence, then its read
        // of `thief` in `sleep_in_wait` (a Dekker handshake: fences, because
        // SeqCst loads and stores alone are not ordered against each other by loom's model):
        // either the owner sees us recorded, or we see it asleep and unpark it.
        latch.thief.store(code, Ordering::SeqCst);
        fence(Ordering::SeqCst);
        if latch.state.load(Ordering::SeqCst) == SLEEPING {
            // SAFETY: SLEEPING means the owner wrote `owner` before its Release exchange, which
            // our SeqCst load synchronizes with; nobody writes it again before the job ends
            // (only the setter takes it, and the setter is this thread, later).
            if let Some(owner) = unsafe { (*latch.owner.get()).as_ref() } {
                owner.unpark_thread();
            }
        }
    }

    /// This latch's address: the tag of the forks a thief without a deque publishes while it
    /// runs the job (see `Participant::run_taken`).
    pub(crate) fn tag(&self) -> usize {
        self as *const JobLatch as usize
    }

    /// Called after publishing work that the latch's owner may run while it waits: by the
    /// thief of a fork, for work that descends from the fork, and by a scope's spawner, for a
    /// spawn of the scope. Wakes the owner if it sleeps on the latch, so that it can help. The
    /// fence pairs with the owner's after its registration (`sleep_in_wait`): either we see it
    /// asleep, or it sees our publication.
    ///
    /// # Safety
    /// `this` must be live and must not be set before this call returns: the latch of a fork
    /// the caller runs right now, or of a scope whose pending count the caller holds up (its
    /// body, or one of its spawns, running).
    pub(crate) unsafe fn notify_owner(this: *const JobLatch) {
        // SAFETY: forwarded to the caller.
        unsafe { JobLatch::notify_owner_if(this, || true) }
    }

    /// [`JobLatch::notify_owner`], waking the owner only if `wanted()`, which is asked after
    /// the owner was seen asleep: what the owner wrote before it registered is visible to it
    /// (the registration's Release, our SeqCst load's Acquire).
    ///
    /// # Safety
    /// As for [`JobLatch::notify_owner`].
    pub(crate) unsafe fn notify_owner_if(this: *const JobLatch, wanted: impl FnOnce() -> bool) {
        // SAFETY: live while its job runs (caller's contract).
        let latch = unsafe { &*this };
        fence(Ordering::SeqCst);
        if latch.state.load(Ordering::SeqCst) == SLEEPING && wanted() {
            // SAFETY: as in `record_thief`: SLEEPING means `owner` was written before the
            // owner's exchange, and only the setter takes it, which cannot run before this
            // call returns (caller's contract).
            if let Some(owner) = unsafe { (*latch.owner.get()).as_ref() } {
                owner.unpark_thread();
            }
        }
    }

    /// Who runs this fork, as far as recorded. SeqCst: see [`JobLatch::record_thief`].
    pub(crate) fn thief(&self) -> Thief {
        match self.thief.load(Ordering::SeqCst) {
            0 => Thief::Unknown,
            NO_DEQUE => Thief::NoDeque,
            code => Thief::Deque {
                slot: (code - 1) as usize,
                // Written before the SeqCst store of `thief` that we just read.
                mark: self.mark.load(Ordering::Relaxed) as isize,
            },
        }
    }

    /// True once the job is done. Acquire pairs with the Release of the setter's final store or
    /// exchange: the job's result is visible after this returns true.
    #[inline]
    pub(crate) fn probe(&self) -> bool {
        self.state.load(Ordering::Acquire) == SET
    }

    /// Registers the calling thread (`me`, its parker) as the owner to unpark when the latch
    /// is set. Returns false if the latch is already set (then nothing was registered and the
    /// owner must not sleep). Idempotent: a second call after a successful one only re-checks.
    /// After a registration the owner must not leave the latch's frame before the latch is
    /// set, which `Participant::wait_until` ensures.
    pub(crate) fn register_sleeper(&self, me: &Arc<Parker>) -> bool {
        if self.probe() {
            return false;
        }
        // Relaxed: only we move the state to SLEEPING, so SLEEPING here is our own earlier
        // registration; anything else is re-checked by the exchange below.
        if self.state.load(Ordering::Relaxed) == UNSET {
            // SAFETY: the state is not SLEEPING (only we move it there), so no setter reads
            // `owner` now; a setter that sets the latch meanwhile never touches `owner` on that
            // path.
            unsafe { *self.owner.get() = Some(me.clone()) };
            // Release (as part of SeqCst) publishes the write of `owner` to the setter, whose
            // Acquire load of SLEEPING pairs with it; SeqCst also orders it before the owner's
            // read of `thief` (see `record_thief`). Acquire on failure pairs with the setter's
            // Release (the result is ready).
            if self
                .state
                .compare_exchange(UNSET, SLEEPING, Ordering::SeqCst, Ordering::Acquire)
                .is_err()
            {
                // Already SET: the setter took the UNSET → SET path and never read `owner`.
                // SAFETY: the latch is set, so no other thread accesses it any more.
                unsafe { *self.owner.get() = None };
                return false;
            }
        }
        true
    }

    /// Marks the job done and wakes its owner if it sleeps.
    ///
    /// # Safety
    /// `this` must be live and set at most once. After the latch is `SET` its owner may free it,
    /// so nothing of it is touched afterwards (hence a raw pointer, not `&self`: no reference may
    /// outlive the store that lets the owner go, see rust-lang/rust#55005).
    pub(crate) unsafe fn set(this: *const JobLatch) {
        // SAFETY: `this` is live until our final store or exchange (caller's contract).
        let state = unsafe { &(*this).state };
        // Acquire pairs with the owner's Release exchange to SLEEPING (its `owner` write).
        let mut cur = state.load(Ordering::Acquire);
        loop {
            if cur == SLEEPING {
                // SAFETY: the owner sleeps until it sees SET, so the latch is live and the owner
                // no longer writes `owner`; we are the only setter.
                let owner = unsafe { (*(*this).owner.get()).take() };
                // Release publishes the job's result (pairs with `probe`). The latch
                // may be freed from here on; `owner` is our own reference.
                state.store(SET, Ordering::Release);
                if let Some(owner) = owner {
                    owner.unpark_thread();
                }
                return;
            }
            debug_assert_eq!(cur, UNSET, "a latch is set once");
            // Release publishes the result to an owner that probes; Acquire on failure pairs
            // with the owner's exchange to SLEEPING as above.
            match state.compare_exchange_weak(UNSET, SET, Ordering::Release, Ordering::Acquire) {
                Ok(_) => return,
                Err(actual) => cur = actual,
            }
        }
    }
}
