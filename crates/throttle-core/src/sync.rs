//! One door for atomics, locks and thread parking, so that `--cfg loom` can swap std for loom's
//! model-checked versions (the habit of tokio and crossbeam). Everything in the crate that takes
//! part in a cross-thread protocol imports from here, never from `std::sync` directly.

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{
    fence, AtomicBool, AtomicIsize, AtomicPtr, AtomicU32, AtomicU64, AtomicUsize, Ordering,
};
#[cfg(loom)]
pub(crate) use loom::sync::{Arc, Condvar, Mutex, MutexGuard};
#[cfg(loom)]
pub(crate) use loom::thread::{current as current_thread, park, Thread};

#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{
    fence, AtomicBool, AtomicIsize, AtomicPtr, AtomicU32, AtomicU64, AtomicUsize, Ordering,
};
#[cfg(not(loom))]
pub(crate) use std::sync::{Arc, Condvar, Mutex, MutexGuard};
#[cfg(not(loom))]
pub(crate) use std::thread::{current as current_thread, park, Thread};

/// Locks `m`, ignoring poisoning: every critical section in this crate leaves its data consistent
/// before it can panic (they only push, pop and count), so a poisoned lock holds valid data.
/// Whether a time-bounded spin is over after `round` rounds that began at `start`. The clock is
/// read only from the 8th round on (most spins end earlier). Loom models no time, so under loom
/// every spin is a single round: the models explore what happens *after* a spin gives up.
#[inline]
pub(crate) fn spin_over(round: u32, start: std::time::Instant, limit: std::time::Duration) -> bool {
    if cfg!(loom) {
        return true;
    }
    round >= 8 && start.elapsed() >= limit
}

pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    match m.lock() {
        Ok(g) => g,
        Err(poisoned) => poisoned.into_inner(),
    }
}
