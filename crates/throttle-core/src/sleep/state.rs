//! The pool's one packed state word: the concurrency limit and who holds, searches and sleeps.
//!
//! Packing the four counts in one `AtomicU64` lets a fork read everything it needs in a single
//! relaxed load, and lets each transition change several counts in one atomic step, so no
//! observer ever sees a worker counted twice or not at all.

use std::fmt;

/// Bits per field. 16 bits allow 65 535 threads; `Pool::builder` rejects more.
const BITS: u32 = 16;
const MASK: u64 = (1 << BITS) - 1;
const LIMIT_SHIFT: u32 = 0;
const ACTIVE_SHIFT: u32 = BITS;
const SEARCHING_SHIFT: u32 = 2 * BITS;
const SLEEPING_SHIFT: u32 = 3 * BITS;

/// Largest thread count the packed word can represent.
pub(crate) const MAX_THREADS: usize = MASK as usize;

/// One unit of each field, for `fetch_add`/`fetch_sub`.
pub(crate) const ONE_ACTIVE: u64 = 1 << ACTIVE_SHIFT;
pub(crate) const ONE_SEARCHING: u64 = 1 << SEARCHING_SHIFT;
pub(crate) const ONE_SLEEPING: u64 = 1 << SLEEPING_SHIFT;

/// A decoded snapshot of the state word.
///
/// - `limit`: the live concurrency limit `k` (1..=threads).
/// - `active`: threads holding a run slot: running tasks or searching for them. A thread runs pool
///   code only while it holds a slot, and a slot is only taken while `active < limit`.
/// - `searching`: active workers looking for work (a subset of `active`). Work pushed while one
///   searches needs no wake-up: the searcher will find it or re-check before it sleeps.
/// - `sleeping`: workers parked in the idle list, holding no slot.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) struct State(pub(crate) u64);

impl State {
    /// A state with the given limit and no threads counted.
    pub(crate) fn with_limit(limit: usize) -> State {
        debug_assert!((1..=MAX_THREADS).contains(&limit));
        State((limit as u64) << LIMIT_SHIFT)
    }

    fn field(self, shift: u32) -> usize {
        ((self.0 >> shift) & MASK) as usize
    }

    /// The concurrency limit.
    pub(crate) fn limit(self) -> usize {
        self.field(LIMIT_SHIFT)
    }

    /// Threads holding a run slot.
    pub(crate) fn active(self) -> usize {
        self.field(ACTIVE_SHIFT)
    }

    /// Active workers searching for work.
    pub(crate) fn searching(self) -> usize {
        self.field(SEARCHING_SHIFT)
    }

    /// Workers asleep in the idle list.
    pub(crate) fn sleeping(self) -> usize {
        self.field(SLEEPING_SHIFT)
    }

    /// True when a free slot exists.
    pub(crate) fn has_free_slot(self) -> bool {
        self.active() < self.limit()
    }

    /// Whether a thread that just pushed a fork must do more than that (`Participant::
    /// after_push`): wake an idle sleeper into a free slot while nobody searches, wake a thread
    /// waiting for one of its forks (`waiters`, asked only when it matters), or give back its
    /// slot because the pool is over its limit. Ordered for the common cases: a busy pool
    /// (`active == limit`, nobody waiting) costs two compares and the waiters' look.
    #[inline(always)]
    pub(crate) fn after_push_needs_a_look(self, waiters: impl FnOnce() -> bool) -> bool {
        let (limit, active) = (self.limit(), self.active());
        if active >= limit {
            active > limit || (self.searching() == 0 && waiters())
        } else {
            self.searching() == 0 && (self.sleeping() > 0 || waiters())
        }
    }

    /// True when an idle sleeper could be woken into a free slot.
    #[inline]
    pub(crate) fn idle_sleeper_usable(self) -> bool {
        self.sleeping() > 0 && self.active() < self.limit()
    }

    /// True when a fork should leave its fast path: a thief is hungry, a sleeper could be put to
    /// use, or more threads run than the limit allows.
    #[inline]
    pub(crate) fn wants_attention(self) -> bool {
        let (limit, active) = (self.limit(), self.active());
        self.searching() > 0 || active > limit || (self.sleeping() > 0 && active < limit)
    }

    /// This state with the limit replaced.
    pub(crate) fn with_new_limit(self, limit: usize) -> State {
        State((self.0 & !(MASK << LIMIT_SHIFT)) | ((limit as u64) << LIMIT_SHIFT))
    }
}

impl fmt::Debug for State {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("State")
            .field("limit", &self.limit())
            .field("active", &self.active())
            .field("searching", &self.searching())
            .field("sleeping", &self.sleeping())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_round_trip() {
        let s = State(State::with_limit(3).0 + 2 * ONE_ACTIVE + ONE_SEARCHING + 4 * ONE_SLEEPING);
        assert_eq!(
            (s.limit(), s.active(), s.searching(), s.sleeping()),
            (3, 2, 1, 4)
        );
        assert!(s.has_free_slot());
        assert!(s.wants_attention());
        let t = s.with_new_limit(1);
        assert_eq!(
            (t.limit(), t.active(), t.searching(), t.sleeping()),
            (1, 2, 1, 4)
        );
        assert!(!t.has_free_slot());
    }

    #[test]
    fn attention_only_when_needed() {
        let busy = State(State::with_limit(2).0 + 2 * ONE_ACTIVE);
        assert!(!busy.wants_attention());
        let over = busy.with_new_limit(1);
        assert!(over.wants_attention());
        // A sleeper only matters when a slot is free for it.
        assert!(!State(busy.0 + ONE_SLEEPING).wants_attention());
        let idle_slot = State(State::with_limit(2).0 + ONE_ACTIVE + ONE_SLEEPING);
        assert!(idle_slot.wants_attention());
    }
}
