//! A doorbell for one parked thread: whoever rings it unparks the thread if, and only if, the
//! thread said it is (about to be) asleep. The pool's budget thread parks on one while nobody in
//! the pool runs and it holds no token (`jobserver/budget.rs`).

use std::sync::atomic::{AtomicBool, Ordering};

/// How the pool wakes its budget thread out of the idle sleep: while nobody in the pool runs and
/// it holds no token, the thread parks with no timeout (no timed polling), and a thread that
/// takes a run slot or publishes work rings the bell. The first extra thread is wanted only after
/// someone holds a slot (the implicit one), so nothing is missed.
#[derive(Debug, Default)]
pub(crate) struct Bell {
    /// The budget thread is (about to be) parked: whoever sees it set clears it and unparks.
    asleep: AtomicBool,
    /// The thread to unpark, set once when it starts.
    thread: std::sync::OnceLock<std::thread::Thread>,
}

impl Bell {
    /// Called after taking a run slot or publishing work. One load when the thread is awake (or
    /// the pool has no budget).
    #[inline]
    pub(crate) fn ring(&self) {
        // SeqCst: pairs with the budget thread's SeqCst store of `asleep` and fence before its
        // re-check of the state word: either it sees our slot or work, or we see it asleep. Our
        // side's slot (a SeqCst RMW on the state word) or work (`queued`, SeqCst RMW) comes
        // before this load in the single total order.
        if self.asleep.load(Ordering::SeqCst) && self.asleep.swap(false, Ordering::SeqCst) {
            if let Some(t) = self.thread.get() {
                t.unpark();
            }
        }
    }

    /// Names the thread that [`sleep_unless`](Bell::sleep_unless) parks (the first call wins).
    pub(crate) fn set_thread(&self, thread: std::thread::Thread) {
        let _ = self.thread.set(thread);
    }

    /// Parks the calling thread, the bell's thread, until the bell rings, unless `busy` says
    /// there is a reason to stay awake; a spurious wake-up returns early. `busy` runs after the
    /// thread has said it is asleep, so whatever a ringer did before its look at `asleep` is
    /// seen by `busy` or wakes the thread.
    pub(crate) fn sleep_unless(&self, busy: impl FnOnce() -> bool) {
        self.asleep.store(true, Ordering::SeqCst);
        // SeqCst fence: pairs with `ring` (see there): `busy` sees a slot taken or work published
        // before the ringer looked at `asleep`.
        std::sync::atomic::fence(Ordering::SeqCst);
        if !busy() {
            std::thread::park();
        }
        self.asleep.store(false, Ordering::SeqCst);
    }
}
