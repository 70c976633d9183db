//! `find_any`, `find_first` and `find_last` (and through them the `find_map_*`, `any`, `all`
//! and `position_*` methods): a consumer that stops every piece that can no longer change the
//! answer.
//!
//! Every piece of the consumer holds a range of *positions* `[lo, hi)`, a stand-in for where
//! its items lie in the run: the whole run starts with `[0, usize::MAX)`, and each split gives
//! the left part the lower positions. throttle's bridges say how long the piece is that they
//! split, and the range is divided in proportion (so a piece's positions are its items'
//! indices, scaled); a split by someone else's code divides it at the item index it is given
//! (indexed) or in half (unindexed). A piece that finds a match records its position in a shared atomic (the least for
//! `find_first`, its range's end, the greatest, for `find_last`), and a piece whose positions
//! all lie after (before) the recorded one is full and stops. When a range is used up (nested
//! runs inside `flat_map` halve their parent's), pieces share a position: they then no longer
//! stop each other, but the reducer still picks the right answer (left first for
//! `find_first`, right first for `find_last`), so results never depend on positions.

use super::plumbing::{Consumer, Folder, Reducer, UnindexedConsumer, WorkOrder};
use super::runtime;
use super::ParallelIterator;
use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Which match a search wants.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// Any match: the first one some piece meets.
    Any,
    /// The first match in item order.
    First,
    /// The last match in item order.
    Last,
}

/// The item of `iter` that `predicate` accepts, as `mode` says.
#[track_caller]
pub(crate) fn find<I, P>(iter: I, predicate: &P, mode: Mode) -> Option<I::Item>
where
    I: ParallelIterator,
    P: Fn(&I::Item) -> bool + Sync,
{
    let best = AtomicUsize::new(match mode {
        Mode::First => usize::MAX,
        Mode::Any | Mode::Last => 0,
    });
    let consumer = Find {
        predicate,
        mode,
        best: &best,
        lo: Cell::new(0),
        hi: usize::MAX,
    };
    runtime::drive_here(|| iter.drive_unindexed(consumer))
}

/// The consumer of [`find`]: a piece with positions `[lo, hi)`.
struct Find<'f, P> {
    predicate: &'f P,
    mode: Mode,
    /// `Any`: 1 once something matched; `First`: the least position that matched
    /// (`usize::MAX`: none); `Last`: the greatest (0: none).
    best: &'f AtomicUsize,
    /// A `Cell` because `split_off_left` takes `&self` and moves it up.
    lo: Cell<usize>,
    hi: usize,
}

impl<P> Find<'_, P> {
    /// This piece's position: where a match in it would be recorded.
    fn position(&self) -> usize {
        match self.mode {
            Mode::Any => 1,
            Mode::First => self.lo.get(),
            Mode::Last => self.hi,
        }
    }

    /// True if a recorded match beats anything this piece could find.
    fn beaten(&self) -> bool {
        let best = self.best.load(Ordering::Relaxed);
        match self.mode {
            Mode::Any => best != 0,
            Mode::First => best < self.lo.get(),
            Mode::Last => best > self.hi,
        }
    }

    /// Splits at position `cut` (clamped into the range): the left part gets `[lo, cut)`.
    fn split_off_at(&self, cut: usize) -> Self {
        let lo = self.lo.get();
        let cut = cut.clamp(lo, self.hi);
        self.lo.set(cut);
        Find {
            predicate: self.predicate,
            mode: self.mode,
            best: self.best,
            lo: Cell::new(lo),
            hi: cut,
        }
    }

    /// Splits off the first `index` of `len` parts: the positions in proportion.
    fn share(&self, index: usize, len: usize) -> Self {
        let lo = self.lo.get();
        let width = (self.hi - lo) as u128;
        // `index <= len`, so the share is at most the width.
        let share = width * index.min(len) as u128 / len.max(1) as u128;
        self.split_off_at(lo + share as usize)
    }

    fn reducer(&self) -> FindReducer {
        FindReducer(self.mode)
    }
}

impl<'f, T, P> Consumer<T> for Find<'f, P>
where
    T: Send,
    P: Fn(&T) -> bool + Sync,
{
    type Folder = FindFolder<'f, T, P>;
    type Reducer = FindReducer;
    type Result = Option<T>;

    fn split_at(self, index: usize) -> (Self, Self, FindReducer) {
        let left = self.split_off_at(self.lo.get().saturating_add(index));
        let reducer = self.reducer();
        (left, self, reducer)
    }

    fn split_at_of(self, index: usize, len: usize) -> (Self, Self, FindReducer) {
        let left = self.share(index, len);
        let reducer = self.reducer();
        (left, self, reducer)
    }

    fn into_folder(self) -> Self::Folder {
        FindFolder {
            item: None,
            position: self.position(),
            find: self,
        }
    }

    fn full(&self) -> bool {
        self.beaten()
    }

    fn work_order(&self) -> WorkOrder {
        match self.mode {
            Mode::Any => WorkOrder::Spread,
            Mode::First => WorkOrder::Front,
            Mode::Last => WorkOrder::Back,
        }
    }
}

impl<T, P> UnindexedConsumer<T> for Find<'_, P>
where
    T: Send,
    P: Fn(&T) -> bool + Sync,
{
    fn split_off_left(&self) -> Self {
        let lo = self.lo.get();
        self.split_off_at(lo + (self.hi - lo) / 2)
    }

    fn to_reducer(&self) -> FindReducer {
        self.reducer()
    }

    fn split_off_left_at(&self, index: usize, len: usize) -> Self {
        self.share(index, len)
    }
}

/// The folder of [`find`]: the match this piece keeps.
struct FindFolder<'f, T, P> {
    find: Find<'f, P>,
    position: usize,
    item: Option<T>,
}

impl<T, P: Fn(&T) -> bool> Folder<T> for FindFolder<'_, T, P> {
    type Result = Option<T>;

    fn consume(mut self, item: T) -> Self {
        if self.item.is_some() && self.find.mode != Mode::Last {
            return self;
        }
        if (self.find.predicate)(&item) {
            let best = self.find.best;
            let recorded = match self.find.mode {
                Mode::Any => {
                    best.store(1, Ordering::Relaxed);
                    true
                }
                Mode::First => best.fetch_min(self.position, Ordering::Relaxed) >= self.position,
                Mode::Last => best.fetch_max(self.position, Ordering::Relaxed) <= self.position,
            };
            // A match beaten by another piece's is dropped: the reducer would drop it anyway.
            if recorded {
                self.item = Some(item);
            }
        }
        self
    }

    fn complete(self) -> Option<T> {
        self.item
    }

    fn full(&self) -> bool {
        (self.item.is_some() && self.find.mode != Mode::Last) || self.find.beaten()
    }
}

/// Joins two pieces' matches: the left one first, except for `find_last`.
struct FindReducer(Mode);

impl<T> Reducer<Option<T>> for FindReducer {
    fn reduce(self, left: Option<T>, right: Option<T>) -> Option<T> {
        match self.0 {
            Mode::Last => right.or(left),
            Mode::Any | Mode::First => left.or(right),
        }
    }
}
