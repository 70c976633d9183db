//! A latch: the "this job is done" signal a fork's owner waits on.

use crate::sleep::Parker;
use crate::sync::{park, Arc, AtomicU32, Ordering};
use std::cell::UnsafeCell;

const UNSET: u32 = 0;
const SLEEPING: u32 = 1;
const SET: u32 = 2;

/// Set once by the thread that ran a job; probed, spun on, then slept on by the job's owner.
pub(crate) struct JobLatch {
    state: AtomicU32,
    /// Whom to unpark when the owner sleeps. Written by the owner before the job is published,
    /// taken by the setter before it sets the state.
    owner: UnsafeCell<Option<Arc<Parker>>>,
}

impl JobLatch {
    pub(crate) fn new() -> JobLatch {
        JobLatch {
            state: AtomicU32::new(UNSET),
            owner: UnsafeCell::new(None),
        }
    }

    /// Records who waits on this latch.
    ///
    /// # Safety
    /// Call only from the owner, before the job is published to other threads.
    pub(crate) unsafe fn set_owner(&self, owner: Arc<Parker>) {
        // SAFETY: not yet published, so nobody else can access `owner` (caller's contract).
        unsafe { *self.owner.get() = Some(owner) };
    }

    /// True once the job is done. Acquire pairs with the AcqRel swap in `set`: the job's result
    /// is visible after this returns true.
    #[inline]
    pub(crate) fn probe(&self) -> bool {
        self.state.load(Ordering::Acquire) == SET
    }

    /// Sleeps until the latch is set. The owner's parker must have been recorded.
    pub(crate) fn wait_asleep(&self) {
        // Acquire on success/failure pairs with the AcqRel swap in `set`.
        if self
            .state
            .compare_exchange(UNSET, SLEEPING, Ordering::Acquire, Ordering::Acquire)
            .is_err()
        {
            return; // already SET
        }
        while self.state.load(Ordering::Acquire) != SET {
            park();
        }
    }

    /// Marks the job done and wakes its owner if it sleeps.
    ///
    /// # Safety
    /// `this` must be live and set at most once. After the state is SET the latch may be freed
    /// by its owner, so nothing of it is touched afterwards (the owner's parker is moved out first).
    pub(crate) unsafe fn set(this: *const JobLatch) {
        // SAFETY: the owner does not touch `owner` after publishing the job until it sees SET,
        // and we are the only setter; `this` is live until our swap below.
        let owner = unsafe { (*(*this).owner.get()).take() };
        // SAFETY: `this` is still live here (the owner waits for SET).
        // AcqRel: Release publishes the job's result to the owner (pairs with `probe` and the
        // loads in `wait_asleep`); Acquire orders our read of `owner` before the owner's free.
        let prev = unsafe { (*this).state.swap(SET, Ordering::AcqRel) };
        if prev == SLEEPING {
            if let Some(owner) = owner {
                owner.unpark_thread();
            }
        }
    }
}
