//! A per-thread wait flag: the handle a thread sleeps on and another thread wakes it through.

use crate::sync::{current_thread, park, AtomicBool, AtomicU64, Ordering, Thread};

/// One thread's "I am waiting to be handed something" flag plus its OS thread handle.
///
/// The protocol is always: the waiter calls [`Parker::prepare`] while it registers itself in some
/// list (under that list's lock), then [`Parker::wait`]; a waker removes it from the list (under the
/// same lock) and calls [`Parker::wake`]. `wake` before `wait` is not lost: the flag is already clear
/// and `wait` returns at once. Spurious OS wake-ups are absorbed by the loop on the flag, and a stale
/// OS unpark token only makes some later `park` return early, which every loop here tolerates.
#[derive(Debug)]
pub(crate) struct Parker {
    waiting: AtomicBool,
    /// Set when an idle worker was moved from the idle list to the limit queue for its mail
    /// ([`super::Sleep::wake_for_mail`]): it then wakes holding a slot but not counted as
    /// searching. Written under the idle lock before the move, read by the owner after its wait
    /// (the wake's Release store and the locks on the way order the two).
    moved_to_queue: AtomicBool,
    thread: Thread,
    /// The CPU this thread sleeps on, if its sleeps are steered (see `placement.rs`).
    home: Option<usize>,
    /// The flow id of the wake-up that ends the current wait, while a trace records (0: none).
    /// Written by the waker before `wake` (whose Release store publishes it), read by the owner
    /// after its wait (see `trace/README.md`).
    flow: AtomicU64,
}

impl Parker {
    /// A parker for the calling thread.
    pub(crate) fn for_current_thread() -> Parker {
        Parker::with_home(None)
    }

    /// A parker for the calling thread, which sleeps on CPU `home`.
    pub(crate) fn with_home(home: Option<usize>) -> Parker {
        Parker {
            waiting: AtomicBool::new(false),
            moved_to_queue: AtomicBool::new(false),
            thread: current_thread(),
            home,
            flow: AtomicU64::new(0),
        }
    }

    /// The CPU this thread sleeps on, if steered.
    pub(crate) fn home(&self) -> Option<usize> {
        self.home
    }

    /// Marks the owner as waiting. Call while registering in a wait list, before releasing its lock.
    pub(crate) fn prepare(&self) {
        self.waiting.store(true, Ordering::Relaxed);
    }

    /// Withdraws a [`Parker::prepare`] that no waker will answer (the owner took itself back out
    /// of the list it registered in, under that list's lock).
    #[cfg(not(loom))]
    pub(crate) fn unprepare(&self) {
        self.waiting.store(false, Ordering::Relaxed);
    }

    /// Sleeps until a waker has called [`Parker::wake`] since the last [`Parker::prepare`].
    pub(crate) fn wait(&self) {
        // Acquire pairs with the Release store in `wake`: what the waker did for us before waking
        // us (a slot transferred in the state word) happens-before our return.
        while self.waiting.load(Ordering::Acquire) {
            park();
        }
    }

    /// Marks an idle sleeper as moved to the limit queue (see the field).
    pub(crate) fn mark_moved_to_queue(&self) {
        self.moved_to_queue.store(true, Ordering::Relaxed);
    }

    /// True if the owner was moved from the idle list to the limit queue and has not woken
    /// since. Read under the limit queue's lock, which the move held when it queued the owner.
    #[cfg(not(loom))]
    pub(crate) fn is_moved_to_queue(&self) -> bool {
        self.moved_to_queue.load(Ordering::Relaxed)
    }

    /// True (once) if the owner was moved from the idle list to the limit queue.
    pub(crate) fn take_moved_to_queue(&self) -> bool {
        self.moved_to_queue.swap(false, Ordering::Relaxed)
    }

    /// True while the owner waits for a [`Parker::wake`] (Acquire, as in [`Parker::wait`]).
    #[cfg(not(loom))]
    pub(crate) fn is_waiting(&self) -> bool {
        self.waiting.load(Ordering::Acquire)
    }

    /// Spins for up to `spin` in case the wake-up comes soon; true if it came.
    pub(crate) fn spin_for_wake(&self, spin: std::time::Duration) -> bool {
        let start = std::time::Instant::now();
        let mut round = 0u32;
        // Acquire as in `wait`.
        while self.waiting.load(Ordering::Acquire) {
            std::hint::spin_loop();
            round += 1;
            if cfg!(loom) || (round % 32 == 0 && start.elapsed() >= spin) {
                return false;
            }
        }
        true
    }

    /// [`Parker::wait`] for at most `limit`; true if the wake-up came.
    #[cfg(not(loom))]
    pub(crate) fn wait_timeout(&self, limit: std::time::Duration) -> bool {
        let start = std::time::Instant::now();
        // Acquire as in `wait`.
        while self.waiting.load(Ordering::Acquire) {
            let Some(left) = limit.checked_sub(start.elapsed()) else {
                return false;
            };
            std::thread::park_timeout(left);
        }
        true
    }

    /// Hands the wake-up to the owner.
    pub(crate) fn wake(&self) {
        // Release pairs with the Acquire load in `wait`.
        self.waiting.store(false, Ordering::Release);
        self.thread.unpark();
    }

    /// Tags the coming wake-up with a trace flow id (call before [`Parker::wake`]).
    pub(crate) fn set_flow(&self, flow: u64) {
        self.flow.store(flow, Ordering::Relaxed);
    }

    /// The flow id of the wake-up that ended the owner's last wait, if a trace tagged it.
    pub(crate) fn take_flow(&self) -> Option<u64> {
        match self.flow.swap(0, Ordering::Relaxed) {
            0 => None,
            f => Some(f),
        }
    }

    /// Unparks the owner thread without touching the flag (for latches, which carry their own state).
    pub(crate) fn unpark_thread(&self) {
        self.thread.unpark();
    }
}
