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
use crate::sync::{Arc, AtomicU32, Ordering};
use std::cell::UnsafeCell;

const UNSET: u32 = 0;
const SLEEPING: u32 = 1;
const SET: u32 = 2;

/// Set once by the thread that finished the job; probed, spun on, then slept on by the owner.
pub(crate) struct JobLatch {
    state: AtomicU32,
    /// Whom to unpark. Written by the owner only while the state is `UNSET`, before its
    /// `UNSET → SLEEPING` exchange; read by the setter only after it saw `SLEEPING`.
    owner: UnsafeCell<Option<Arc<Parker>>>,
}

impl JobLatch {
    pub(crate) fn new() -> JobLatch {
        JobLatch {
            state: AtomicU32::new(UNSET),
            owner: UnsafeCell::new(None),
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
            // Release publishes the write of `owner` to the setter, whose Acquire load of
            // SLEEPING pairs with it; Acquire on failure pairs with the setter's Release (the
            // result is ready).
            if self
                .state
                .compare_exchange(UNSET, SLEEPING, Ordering::Release, Ordering::Acquire)
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
                // Release publishes the job's result (pairs with `probe`/`wait_asleep`). The latch
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
