//! A thread adopted as worker 0 of a pool (rayon's `ThreadPoolBuilder::use_current_thread`).
//!
//! The building thread becomes the pool's worker 0 for as long as it is adopted: its
//! participant (index 0, worker 0's deque, mail) is the thread's current participant and its
//! home, so `current_thread_index()` is `Some(0)` and its parallel calls run in the pool like a
//! worker's. It does not run the worker loop: the pool's work reaches it only when it calls
//! into the pool, waits in a join or scope, or yields ([`yield_now`](crate::yield_now)).
//!
//! Run slots: an adopted thread holds one of the pool's slots from adoption to release, like a
//! caller inside a call that lasts that long (it took the slot before any other worker
//! started, so one was free). Waiting in a join gives it back and takes it again as for any
//! participant. So with a live limit of 1 the other workers run only while it waits in the
//! pool; with the default limit (the thread count) the pool has as many runners as threads.
//!
//! Release: dropping the pool on the adopted thread, outside any call into the pool, ends the
//! adoption first: the thread runs what only worker 0 could run (its mail and spawn queue; in a
//! pool of one thread, everything queued), gives back its slot and is an outside thread again,
//! so the drop waits for the remaining detached tasks as usual. Dropped elsewhere, the thread
//! stays adopted by the stopped pool until it exits: its parallel calls then run on it alone.
//! (rayon leaks the pool in that case.)

use crate::deque::Worker;
use crate::registry::{Registry, Taken};
use crate::sleep::Parker;
use crate::sync::Arc;
use crate::worker::{with_home, EnterGuard, HomeGuard, Participant};
use std::cell::RefCell;
use std::ptr;

/// The adoption, kept in a thread-local. Fields drop in order: the guards restore the thread's
/// current and home participants before the participant itself goes, and the registry last.
struct Adopted {
    _current: EnterGuard,
    _home: HomeGuard,
    me: Box<Participant>,
    registry: Arc<Registry>,
}

impl Drop for Adopted {
    fn drop(&mut self) {
        // The thread number goes back before the slot (`Participant::give_back_number`).
        self.me.give_back_number();
        self.registry.release_slot();
    }
}

thread_local! {
    static ADOPTED: RefCell<Option<Adopted>> = const { RefCell::new(None) };
}

/// True if the calling thread takes part in some pool (a worker, a caller inside a call, or
/// adopted): it cannot become another pool's worker 0.
pub(crate) fn in_some_pool() -> bool {
    Participant::with_current(|p| p.is_some()) || with_home(|h| h.is_some())
}

/// Makes the calling thread worker 0 of `registry`, with worker 0's `deque`; takes a run slot.
/// The caller checked [`in_some_pool`] is false.
pub(crate) fn adopt(registry: &Arc<Registry>, deque: Worker) {
    debug_assert!(!in_some_pool());
    registry.holders.record(0);
    let parker = Arc::new(Parker::for_current_thread());
    registry.wait_for_slot(&parker);
    // From here on a broadcast can reach this thread's mail (`Registry::post` unparks it).
    registry.register_worker(0, &parker);
    let me = Box::new(Participant::new(registry, Some(0), parker, Some(deque)));
    let adopted = Adopted {
        _current: me.enter(),
        _home: me.enter_home(),
        me,
        registry: registry.clone(),
    };
    ADOPTED.with(|a| *a.borrow_mut() = Some(adopted));
}

/// Ends the calling thread's adoption by `registry`'s pool if it is adopted by it and not
/// inside a call (its current participant is the adopted one itself). First it runs the work
/// that only worker 0 could run (its mail, its spawn queue, and in a pool of one thread
/// everything queued): the pool's drop waits for detached tasks, and nobody else would.
pub(crate) fn release_if_adopted(registry: &Registry) {
    // Out of the thread-local before any job runs: a job that drops a pool on this thread
    // finds no adoption to release here.
    let adopted = ADOPTED.with(|a| {
        let mut a = a.borrow_mut();
        let at_top = a.as_ref().is_some_and(|ad| {
            ad.me.is_in(registry)
                && Participant::with_current(|p| p.is_some_and(|p| ptr::eq(p, &*ad.me)))
        });
        if at_top {
            a.take()
        } else {
            None
        }
    });
    let Some(adopted) = adopted else {
        return;
    };
    let me = &*adopted.me;
    loop {
        if let Some(job) = me.find_local_work() {
            me.execute_found(job, Taken::Own);
        } else if registry.threads() == 1 {
            match me.find_work() {
                Some((job, taken)) => me.execute_found(job, taken),
                None => break,
            }
        } else {
            break;
        }
    }
    me.end_busy();
    // The thread no longer takes part as worker 0: it must not count as a slot holder that
    // computes (`holders.rs`).
    registry.holders.clear(0);
    // Restores the thread-locals and releases the slot.
    drop(adopted);
}
