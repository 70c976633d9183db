//! One thread's bounded event buffer: a single writer (the thread the events are about) and a
//! reader that collects the events of one recording session. Safe code only: the slots are
//! atomic words, so a racing read can never be undefined behaviour, and the protocol below makes
//! sure it is never a torn event either. The proof sketch is in `README.md` beside this file.

use crate::sync::{AtomicU64, Ordering};
use std::sync::OnceLock;

/// Words per event: `[time_ns << 8 | code, payload]`.
pub(crate) const WORDS: usize = 2;

/// A ring of `capacity` events, allocated on first use (a pool that is never traced pays one
/// empty `OnceLock` per thread).
#[derive(Debug)]
pub(crate) struct Ring {
    capacity: usize,
    slots: OnceLock<Box<[AtomicU64]>>,
    /// Events ever written: index `i` lives in slot `i % capacity`. Written by the owner only,
    /// with Release after the event's words (pairs with the Acquire load in `collect`).
    head: AtomicU64,
    /// The owner may write index `i` only while `i < limit`; set by `begin` to `head +
    /// capacity`. So within a session no slot is written twice, and a session's events are
    /// never overwritten before its reader collected them (see README.md).
    limit: AtomicU64,
    /// Events the owner could not write because the session's share of the ring was full.
    /// Written by the owner only (load + store, no RMW); read by the collector.
    dropped: AtomicU64,
}

/// Where one session starts in a ring.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Mark {
    head: u64,
    dropped: u64,
}

impl Ring {
    pub(crate) fn new(capacity: usize) -> Ring {
        Ring {
            capacity: capacity.max(1),
            slots: OnceLock::new(),
            head: AtomicU64::new(0),
            limit: AtomicU64::new(0),
            dropped: AtomicU64::new(0),
        }
    }

    /// Allocates the slots, if not yet done (1 MiB at the default capacity: done once, outside
    /// any event).
    pub(crate) fn allocate(&self) {
        self.slots.get_or_init(|| {
            (0..self.capacity * WORDS)
                .map(|_| AtomicU64::new(0))
                .collect()
        });
    }

    /// Opens a session: the owner may write `capacity` more events. Called by the one thread
    /// that starts a recording, before it turns the flag on. Without slots (not yet
    /// allocated) nothing is recorded until [`Ring::allocate`].
    pub(crate) fn begin(&self) -> Mark {
        // Acquire pairs with the owner's Release store of `head`: every event below `head` is
        // complete, and the owner's next write goes to index `head` or later.
        let head = self.head.load(Ordering::Acquire);
        let dropped = self.dropped.load(Ordering::Relaxed);
        // Relaxed: a writer that reads the old (smaller) limit only drops an event too many,
        // and counts it; the limit never shrinks, so no slot of this session can be reused.
        self.limit
            .store(head + self.capacity as u64, Ordering::Relaxed);
        Mark { head, dropped }
    }

    /// Appends one event; called by the owner thread only. No allocation, no lock, no RMW: two
    /// relaxed loads, three relaxed stores and a release store (plain moves on x86).
    #[inline]
    pub(crate) fn push(&self, w0: u64, w1: u64) {
        let Some(slots) = self.slots.get() else {
            return;
        };
        let h = self.head.load(Ordering::Relaxed);
        if h >= self.limit.load(Ordering::Relaxed) {
            let d = self.dropped.load(Ordering::Relaxed);
            self.dropped.store(d + 1, Ordering::Relaxed);
            return;
        }
        let at = (h % self.capacity as u64) as usize * WORDS;
        slots[at].store(w0, Ordering::Relaxed);
        slots[at + 1].store(w1, Ordering::Relaxed);
        // Release pairs with the Acquire load in `collect` (and `begin`).
        self.head.store(h + 1, Ordering::Release);
    }

    /// The events written since `mark` (as word pairs), and how many were dropped. Called by
    /// the thread that stops the recording; the owner may go on writing meanwhile (its later
    /// events are simply not part of this session).
    pub(crate) fn collect(&self, mark: Mark) -> (Vec<[u64; WORDS]>, u64) {
        let dropped = self
            .dropped
            .load(Ordering::Relaxed)
            .wrapping_sub(mark.dropped);
        let Some(slots) = self.slots.get() else {
            return (Vec::new(), dropped);
        };
        // Acquire pairs with the owner's Release store: events [mark.head, head) are complete.
        let head = self.head.load(Ordering::Acquire);
        let end = head.min(mark.head + self.capacity as u64);
        let events = (mark.head..end)
            .map(|i| {
                let at = (i % self.capacity as u64) as usize * WORDS;
                [
                    slots[at].load(Ordering::Relaxed),
                    slots[at + 1].load(Ordering::Relaxed),
                ]
            })
            .collect();
        (events, dropped)
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn a_full_ring_counts_what_it_drops() {
        let r = Ring::new(4);
        r.push(1, 1); // before any session: no storage yet, not recorded
        r.allocate();
        let m = r.begin();
        for i in 0..10 {
            r.push(i << 8, i);
        }
        let (ev, dropped) = r.collect(m);
        assert_eq!(ev.len(), 4);
        assert_eq!(dropped, 6);
        assert_eq!(ev[3], [3 << 8, 3]);
        // A second session starts with a fresh share of the ring.
        let m = r.begin();
        r.push(7, 7);
        let (ev, dropped) = r.collect(m);
        assert_eq!((ev, dropped), (vec![[7, 7]], 0));
    }
}
