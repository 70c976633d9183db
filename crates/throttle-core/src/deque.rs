//! A participant's pending forks: its owner pushes and pops at one end (newest first), other
//! threads steal at the other end (oldest first: the biggest pieces of a recursion).
//!
//! A Chase–Lev deque (Chase and Lev, SPAA 2005) with the C11 orderings of Lê, Pop, Cohen and
//! Zappa Nardelli (PPoPP 2013), over a fixed ring of [`CAPACITY`] slots. Written here rather
//! than taken from crossbeam-deque because the scheduler needs two things that crate does not
//! offer: the *positions* of items (every push gets the next index of an ever-growing count),
//! and a steal that succeeds only if the oldest item was pushed at or after a given position
//! ([`Stealer::steal_from`]). A thread waiting for a fork that a thief took helps only with
//! what that thief pushed since it started the fork, which are exactly the fork's
//! descendants; that is how helping stays isolated (`src/sleep/README.md`, "Isolated helping").
//!
//! A fixed ring needs no memory reclamation (the hard part of a growable deque): a push into a
//! full ring fails and the fork runs as a plain call instead (a recursion with more than
//! [`CAPACITY`] of its thread's forks pending and none stolen; thieves could not use more).
//!
//! The owner's side has no fence: its `pop` issues the light side of an asymmetric fence, and
//! a thief issues the heavy side before it reads `bottom` (`barrier.rs`). Pops run once per
//! fork; steals are rare next to them.
//!
//! The same code runs under `--cfg loom` (its atomics come from `sync.rs`, with a ring of 4
//! slots): the loom models check the deque itself (every item taken exactly once by its owner
//! or a thief, `tests` below) and the protocols around it (sleep/wake, latches, the limit,
//! isolated helping) with the real pushes, take-backs and steals. Loom sees the asymmetric fence
//! in its symmetric form (a fence on both sides, `barrier.rs`).

/// Slots per deque: 16 KiB of memory per participant. Every fork is pushed, so a deque this
/// full means a recursion a thousand levels deep with every level's fork still pending. Four
/// under loom, so that the models also reach a full ring and its wrap-around.
pub(crate) const CAPACITY: usize = if cfg!(loom) { 4 } else { 1024 };

mod imp {
    use super::CAPACITY;
    use crate::barrier;
    use crate::job::JobRef;
    use crate::sync::{Arc, AtomicIsize, AtomicPtr, Ordering};
    use crossbeam_utils::CachePadded;

    /// One slot: a job's two words, each an atomic, so that a thief's read of a slot that the
    /// owner is overwriting is a race on atomics (its result discarded by the failed
    /// compare-exchange that must follow), never undefined behaviour.
    struct Slot {
        data: AtomicPtr<()>,
        exec: AtomicPtr<()>,
    }

    struct Inner {
        /// Index of the oldest item: advanced by thieves (and by the owner taking the last item)
        /// with a compare-exchange.
        top: CachePadded<AtomicIsize>,
        /// Index one past the newest item: written only by the owner.
        bottom: CachePadded<AtomicIsize>,
        /// The ring, in the same allocation: a push finds its slot from the deque's address,
        /// with no load of a separate array's address before it (one dependent load less on
        /// every fork).
        slots: [Slot; CAPACITY],
    }

    impl Inner {
        #[inline(always)]
        fn slot(&self, i: isize) -> &Slot {
            // A power of two: the mask is `rem_euclid`, also for negative indices (which never
            // occur in practice: 2^63 pushes).
            let at = (i as usize) & (CAPACITY - 1);
            // SAFETY: `slots` has `CAPACITY` entries, and the mask keeps `at` below it.
            unsafe { self.slots.get_unchecked(at) }
        }

        #[inline(always)]
        fn read(&self, i: isize) -> JobRef {
            let s = self.slot(i);
            // Relaxed: the Acquire load of `bottom` (thieves) or program order (owner) made the
            // pusher's writes visible; a torn or stale read is discarded by the caller's CAS.
            JobRef::from_raw(
                s.data.load(Ordering::Relaxed),
                s.exec.load(Ordering::Relaxed),
            )
        }
    }

    /// The owner's end.
    pub(crate) struct Worker {
        inner: Arc<Inner>,
        /// `CAPACITY` past a value `top` had (it only grows): while `bottom` is below it, the
        /// ring has room, and a push needs no load of `top`, a line that thieves write.
        room_until: std::cell::Cell<isize>,
        /// `barrier::light_is_fence()`, kept here: the owner's fast paths read it beside the
        /// deque's own fields instead of a global.
        fenced: bool,
    }

    /// Another thread's end.
    pub(crate) struct Stealer(Arc<Inner>);

    impl Worker {
        pub(crate) fn new() -> Self {
            let slots = std::array::from_fn(|_| Slot {
                data: AtomicPtr::new(std::ptr::null_mut()),
                exec: AtomicPtr::new(std::ptr::null_mut()),
            });
            Worker::from_inner(Arc::new(Inner {
                top: CachePadded::new(AtomicIsize::new(0)),
                bottom: CachePadded::new(AtomicIsize::new(0)),
                slots,
            }))
        }

        fn from_inner(inner: Arc<Inner>) -> Worker {
            let top = inner.top.load(Ordering::Acquire);
            Worker {
                inner,
                room_until: std::cell::Cell::new(top + CAPACITY as isize),
                fenced: barrier::light_is_fence(),
            }
        }

        /// True if the owner's light fence is a real fence (`barrier::light_is_fence`).
        #[inline(always)]
        pub(crate) fn is_fenced(&self) -> bool {
            self.fenced
        }

        /// The light side of the asymmetric fence (`barrier::light`), for the owner's paths.
        #[inline(always)]
        pub(crate) fn light(&self) {
            barrier::light_with(self.fenced);
        }

        pub(crate) fn stealer(&self) -> Stealer {
            Stealer(self.inner.clone())
        }

        /// Pushes `job` as the newest item and returns its position; gives it back if the ring
        /// is full.
        #[inline(always)]
        pub(crate) fn push(&self, job: JobRef) -> Result<isize, JobRef> {
            let d = &*self.inner;
            let b = d.bottom.load(Ordering::Relaxed);
            if b >= self.room_until.get() {
                // Acquire pairs with thieves' CAS on `top`: a slot is reused only after the
                // steal that emptied it read it.
                let t = d.top.load(Ordering::Acquire);
                self.room_until.set(t + CAPACITY as isize);
                if b - t >= CAPACITY as isize {
                    return Err(job);
                }
            }
            let (data, exec) = job.into_raw();
            let s = d.slot(b);
            s.data.store(data, Ordering::Relaxed);
            s.exec.store(exec, Ordering::Relaxed);
            // Release: the slot's contents before the new bottom; pairs with the Acquire load
            // of `bottom` in `steal`.
            d.bottom.store(b + 1, Ordering::Release);
            Ok(b)
        }

        /// [`Worker::take_back_with`] with the deque's own fence mode, for the loom models.
        #[cfg(all(test, loom))]
        pub(crate) fn take_back(&self, at: isize) -> bool {
            self.take_back_with(at, self.fenced)
        }

        /// Takes back the item this owner pushed at position `at` (see [`Worker::push`]): true
        /// if it was still there. A fork's owner uses it after the first half returned, when
        /// every fork pushed after it was popped or stolen, so the item is the newest one, or
        /// gone: stolen, or popped by the owner itself in a wait inside the first half (then
        /// `bottom` is `at` already; only the owner writes `bottom`). No read of the slot.
        ///
        /// `fenced` must be this deque's [`Worker::is_fenced`]: the caller, which knows it,
        /// passes a constant, and the light fence's check folds away.
        #[inline(always)]
        pub(crate) fn take_back_with(&self, at: isize, fenced: bool) -> bool {
            debug_assert_eq!(fenced, self.fenced);
            let d = &*self.inner;
            if d.bottom.load(Ordering::Relaxed) != at + 1 {
                // Gone: popped by the owner itself (`bottom == at`), or stolen, and a take-back
                // of a later item that was stolen too left `bottom` past it (a failed take-back
                // restores `bottom` to its item's position + 1, which `top` has reached).
                return false;
            }
            d.bottom.store(at, Ordering::Relaxed);
            // The light side of the asymmetric fence, as in `pop` (see there).
            barrier::light_with(fenced);
            let t = d.top.load(Ordering::Relaxed);
            if t < at {
                return true;
            }
            let won = t == at
                && d.top
                    .compare_exchange(t, t + 1, Ordering::SeqCst, Ordering::Relaxed)
                    .is_ok();
            d.bottom.store(at + 1, Ordering::Relaxed);
            won
        }

        /// Takes the newest item, if any.
        #[inline(always)]
        pub(crate) fn pop(&self) -> Option<JobRef> {
            let d = &*self.inner;
            let b = d.bottom.load(Ordering::Relaxed) - 1;
            d.bottom.store(b, Ordering::Relaxed);
            // The light side of an asymmetric fence (barrier.rs): orders our claim of slot `b`
            // (the store above) before our read of `top`, against the heavy side every thief
            // issues between its read of `top` and of `bottom` (`steal_from`): of an owner and
            // a thief racing for one item, at least one sees the other. This is the one fence
            // of the Chase–Lev owner, moved to the thieves, who are rare next to pops.
            self.light();
            let t = d.top.load(Ordering::Relaxed);
            if t > b {
                // Empty.
                d.bottom.store(b + 1, Ordering::Relaxed);
                return None;
            }
            let job = d.read(b);
            if t == b {
                // The last item: race the thieves for it with their own compare-exchange.
                let won = d
                    .top
                    .compare_exchange(t, t + 1, Ordering::SeqCst, Ordering::Relaxed)
                    .is_ok();
                d.bottom.store(b + 1, Ordering::Relaxed);
                return won.then_some(job);
            }
            Some(job)
        }

        /// Items in the deque (exact for the owner, up to concurrent steals).
        #[inline(always)]
        pub(crate) fn len(&self) -> usize {
            let d = &*self.inner;
            let b = d.bottom.load(Ordering::Relaxed);
            let t = d.top.load(Ordering::Relaxed);
            (b - t).max(0) as usize
        }

        /// The position the next push will take: what the owner pushes from now on has a
        /// position at least this (its *mark*, see [`Stealer::steal_from`]).
        #[inline]
        pub(crate) fn next_position(&self) -> isize {
            self.inner.bottom.load(Ordering::Relaxed)
        }
    }

    impl Stealer {
        /// Another owner end of this deque, for a participant that borrows it
        /// (`Registry::lend_deque`).
        ///
        /// # Safety
        /// No other owner end of this deque may be used while the new one is (a deque has one
        /// owner at a time); the previous owner's last operation happens before the new
        /// owner's first (the lender's flag orders them).
        pub(crate) unsafe fn owner(&self) -> Worker {
            Worker::from_inner(self.0.clone())
        }

        /// Takes the oldest item; `None` if the deque is empty. Retries a steal that lost a race
        /// with another thief or the owner (one of them made progress, so this ends).
        pub(crate) fn steal(&self) -> Option<JobRef> {
            self.steal_from(isize::MIN)
        }

        /// Takes the oldest item if it was pushed at position `mark` or later (see
        /// [`Worker::next_position`]); `None` if there is no such item.
        pub(crate) fn steal_from(&self, mark: isize) -> Option<JobRef> {
            let d = &*self.0;
            loop {
                // Acquire pairs with other thieves' (and the owner's) CAS on `top`.
                let t = d.top.load(Ordering::Acquire);
                if t < mark {
                    return None;
                }
                // A cheap look first: an empty deque costs no barrier. (A stale `bottom` here
                // only makes us miss an item pushed just now, which the callers' own
                // handshakes cover: a thread about to sleep looks again after a heavy fence.)
                if t >= d.bottom.load(Ordering::Acquire) {
                    return None;
                }
                // The heavy side of the owner's light fence in `pop` (barrier.rs): after it,
                // an owner that claimed item `t` (or any item up to it) has made that claim
                // visible, or will see our CAS on `top` when it reads `top`.
                barrier::heavy();
                // Acquire pairs with the Release store of `bottom` in `push`: the slot's
                // contents are visible.
                let b = d.bottom.load(Ordering::Acquire);
                if t >= b {
                    return None;
                }
                let job = d.read(t);
                // SeqCst like the owner's CAS for the last item. Success makes `job` ours: the
                // slot could only have been overwritten after `top` moved past `t`.
                if d.top
                    .compare_exchange(t, t + 1, Ordering::SeqCst, Ordering::Relaxed)
                    .is_ok()
                {
                    return Some(job);
                }
                std::hint::spin_loop();
            }
        }

        /// True if the oldest item was pushed at position `mark` or later (a hint for a thread
        /// deciding whether to sleep; the Acquire loads pair with the owner's and thieves'
        /// writes as in `steal_from`, and the caller's own SeqCst fence comes before).
        pub(crate) fn has_from(&self, mark: isize) -> bool {
            let d = &*self.0;
            let t = d.top.load(Ordering::Acquire);
            let b = d.bottom.load(Ordering::Acquire);
            t >= mark && t < b
        }

        /// Items in the deque (a relaxed snapshot).
        pub(crate) fn len(&self) -> usize {
            let d = &*self.0;
            let b = d.bottom.load(Ordering::Relaxed);
            let t = d.top.load(Ordering::Relaxed);
            (b - t).max(0) as usize
        }

        /// True if the deque looks empty (a hint).
        pub(crate) fn is_empty(&self) -> bool {
            let d = &*self.0;
            let b = d.bottom.load(Ordering::Acquire);
            let t = d.top.load(Ordering::Acquire);
            b <= t
        }
    }

    impl std::fmt::Debug for Stealer {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("Stealer")
        }
    }
}

pub(crate) use imp::{Stealer, Worker};

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::job::JobRef;

    /// Never run: the deque only moves jobs.
    unsafe fn never(_: *const ()) {
        unreachable!("a test job ran");
    }

    fn job(n: usize) -> JobRef {
        // Distinct fake pointers (even, so untagged); never executed.
        let exec: unsafe fn(*const ()) = never;
        JobRef::from_raw((n * 8) as *mut (), exec as *mut ())
    }

    fn id(j: JobRef) -> usize {
        j.into_raw().0 as usize / 8
    }

    #[test]
    fn owner_pops_newest_thieves_steal_oldest() {
        let w = Worker::new();
        let s = w.stealer();
        for n in 1..=4 {
            w.push(job(n)).unwrap();
        }
        assert_eq!(w.len(), 4);
        assert_eq!(s.steal().map(id), Some(1));
        assert_eq!(w.pop().map(id), Some(4));
        assert_eq!(s.steal().map(id), Some(2));
        assert_eq!(w.pop().map(id), Some(3));
        assert_eq!(w.pop().map(id), None);
        assert_eq!(s.steal().map(id), None);
        assert!(s.is_empty());
    }

    #[test]
    fn steal_from_takes_only_items_at_or_after_the_mark() {
        let w = Worker::new();
        let s = w.stealer();
        w.push(job(1)).unwrap();
        let mark = w.next_position();
        w.push(job(2)).unwrap();
        w.push(job(3)).unwrap();
        // The oldest item (1) is older than the mark: nothing may be taken.
        assert_eq!(s.steal_from(mark).map(id), None);
        assert_eq!(s.steal().map(id), Some(1));
        assert_eq!(s.steal_from(mark).map(id), Some(2));
        assert_eq!(s.steal_from(mark).map(id), Some(3));
        assert_eq!(s.steal_from(mark).map(id), None);
    }

    #[test]
    fn a_full_ring_refuses_and_wraps_around() {
        let w = Worker::new();
        let s = w.stealer();
        for n in 0..CAPACITY {
            w.push(job(n + 1)).unwrap();
        }
        assert!(w.push(job(9999)).is_err());
        for round in 0..3 * CAPACITY {
            assert_eq!(s.steal().map(id), Some(round + 1));
            w.push(job(round + CAPACITY + 1)).unwrap();
        }
        assert_eq!(w.len(), CAPACITY);
    }

    /// Every item pushed is taken exactly once, by the owner or one of the thieves.
    #[test]
    fn concurrent_pops_and_steals_take_each_item_once() {
        use std::sync::atomic::{AtomicBool, Ordering};
        use std::sync::Mutex;
        let w = Worker::new();
        let taken = Mutex::new(Vec::new());
        let done = AtomicBool::new(false);
        std::thread::scope(|scope| {
            for _ in 0..3 {
                let s = w.stealer();
                let (taken, done) = (&taken, &done);
                scope.spawn(move || {
                    let mut mine = Vec::new();
                    while !done.load(Ordering::Acquire) || !s.is_empty() {
                        if let Some(j) = s.steal() {
                            mine.push(id(j));
                        }
                    }
                    taken.lock().unwrap().extend(mine);
                });
            }
            let mut mine = Vec::new();
            for n in 1..=200_000 {
                while w.push(job(n)).is_err() {
                    if let Some(j) = w.pop() {
                        mine.push(id(j));
                    }
                }
                if n % 3 == 0 {
                    if let Some(j) = w.pop() {
                        mine.push(id(j));
                    }
                }
            }
            while let Some(j) = w.pop() {
                mine.push(id(j));
            }
            done.store(true, Ordering::Release);
            taken.lock().unwrap().extend(mine);
        });
        let mut all = taken.into_inner().unwrap();
        all.sort_unstable();
        assert_eq!(all.len(), 200_000, "an item was lost or taken twice");
        assert!(all.iter().enumerate().all(|(i, &n)| n == i + 1));
    }
}

#[cfg(all(test, loom))]
mod loom_tests {
    //! The deque itself under loom (`RUSTFLAGS="--cfg loom" cargo test -p throttle --release
    //! --lib deque`): its owner's take-back and pop against thieves' steals, with the fences in
    //! their symmetric form (`barrier.rs`).

    use super::*;
    use crate::job::JobRef;
    use loom::thread;

    /// Never run: the deque only moves jobs.
    unsafe fn never(_: *const ()) {
        unreachable!("a test job ran");
    }

    fn job(n: usize) -> JobRef {
        let exec: unsafe fn(*const ()) = never;
        JobRef::from_raw((n * 8) as *mut (), exec as *mut ())
    }

    fn id(j: JobRef) -> usize {
        j.into_raw().0 as usize / 8
    }

    /// Chase–Lev's double take, if the owner's fence were missing: the owner takes back its
    /// newest two items while two thieves steal one each; every item is taken exactly once.
    #[test]
    fn every_item_is_taken_once_by_the_owner_or_a_thief() {
        let mut builder = loom::model::Builder::new();
        builder.preemption_bound = Some(3);
        builder.check(|| {
            let w = Worker::new();
            let thieves: Vec<_> = (0..2)
                .map(|_| {
                    let s = w.stealer();
                    thread::spawn(move || s.steal().map(id))
                })
                .collect();
            let at1 = w.push(job(1)).unwrap();
            let at2 = w.push(job(2)).unwrap();
            let at3 = w.push(job(3)).unwrap();
            let mut mine = Vec::new();
            if w.take_back(at3) {
                mine.push(3);
            }
            if w.take_back(at2) {
                mine.push(2);
            }
            if w.take_back(at1) {
                mine.push(1);
            }
            let mut all = mine;
            for t in thieves {
                all.extend(t.join().unwrap());
            }
            // Whatever no one took is still there for a last steal.
            while let Some(j) = w.stealer().steal() {
                all.push(id(j));
            }
            all.sort_unstable();
            assert_eq!(all, [1, 2, 3], "an item lost or taken twice");
        });
    }
}
