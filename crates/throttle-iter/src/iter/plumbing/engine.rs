//! throttle's bridge: how a run of a producer into a consumer is split and scheduled.
//!
//! One engine serves every splittable source: rayon's [`Producer`]s (through
//! [`bridge_producer_consumer`](super::bridge_producer_consumer), units are items) and
//! throttle's own unindexed sources (128-bit ranges, string and slice splits, `par_bridge`),
//! whose units are what they can split at (bytes of a string, say) rather than items. A source
//! is seen as [`Pieces`] (`units` split at an index, then folded), a consumer as a [`Sink`]
//! (split at a unit index: by [`Consumer::split_at`] when units are items, by
//! [`UnindexedConsumer::split_off_left_at`] when they are not).
//!
//! A run is split three ways (see the [module docs](super)): claimed pieces for the outermost
//! run (`claim.rs`), rayon's adaptive budget for nested runs ([`run`]), and on demand inside a
//! piece ([`leaf`]). Re-measure the constants with `throttle-bench --bench iter --bench sort`
//! when the scheduler changes.

use super::claim;
use super::{Consumer, Folder, Producer, Reducer, UnindexedConsumer, WorkOrder};
use crate::iter::runtime;
use crate::iter::runtime::Way;
use std::any::Any;
use std::cell::Cell;
use std::panic::{self, AssertUnwindSafe};
use std::time::{Duration, Instant};

/// Units in a leaf's first block. Small, so that a leaf of coarse items (an image each) looks
/// for hungry threads soon; blocks then adapt to [`BLOCK_TIME`].
const FIRST_BLOCK: usize = 32;

/// Most units in a block. The clock bounds a block's time; this bounds how far a block of very
/// cheap items (~1 ns) grows past [`BLOCK_TIME`] before the clock can halve it (65 µs at 1 ns).
const MAX_BLOCK: usize = 1 << 16;

/// How long a block should take: long enough that a look at the pool's state word and a clock
/// read (~25 ns here) are noise, short enough that a hungry thread waits no longer than about a
/// wake-up (~25 µs here, see `WAIT_SPIN` in `worker/wait.rs`).
const BLOCK_TIME: Duration = Duration::from_micros(20);

/// A source as the engine splits it: `units` that split at any index, folded at the leaves.
pub(crate) trait Pieces: Send + Sized {
    /// The items the source yields.
    type Item;

    /// Splits into the units `[0, index)` and `[index, units)`.
    fn split_at(self, index: usize) -> (Self, Self);

    /// Feeds the items of these units to `folder`, stopping early once it is full.
    fn fold_with<F: Folder<Self::Item>>(self, folder: F) -> F;

    /// The shortest piece a split may make.
    fn min_len(&self) -> usize {
        1
    }

    /// The longest block a leaf may fold at once.
    fn max_len(&self) -> usize {
        usize::MAX
    }

    /// True once the source yields nothing more whatever its units say (an exhausted
    /// `par_bridge`): the run then folds what is left as one leaf instead of splitting it.
    fn stopped(&self) -> bool {
        false
    }
}

/// A rayon [`Producer`] as [`Pieces`]: its units are its items.
pub(crate) struct Items<P>(pub(crate) P);

impl<P: Producer> Pieces for Items<P> {
    type Item = P::Item;
    fn split_at(self, index: usize) -> (Self, Self) {
        let (l, r) = self.0.split_at(index);
        (Items(l), Items(r))
    }
    fn fold_with<F: Folder<P::Item>>(self, folder: F) -> F {
        self.0.fold_with(folder)
    }
    fn min_len(&self) -> usize {
        self.0.min_len()
    }
    fn max_len(&self) -> usize {
        self.0.max_len()
    }
}

/// A consumer as the engine splits it: at a unit index of a piece of `len` units.
pub(crate) trait Sink<T>: Send + Sized {
    type Result: Send;
    type Reducer: Reducer<Self::Result>;
    type Folder: Folder<T, Result = Self::Result>;
    fn split(self, index: usize, len: usize) -> (Self, Self, Self::Reducer);
    fn into_folder(self) -> Self::Folder;
    fn full(&self) -> bool;
    fn order(&self) -> WorkOrder;
}

/// A consumer split by item index ([`Consumer::split_at`]): for producers whose units are
/// items.
pub(crate) struct ByIndex<C>(pub(crate) C);

impl<T, C: Consumer<T>> Sink<T> for ByIndex<C> {
    type Result = C::Result;
    type Reducer = C::Reducer;
    type Folder = C::Folder;
    fn split(self, index: usize, len: usize) -> (Self, Self, C::Reducer) {
        let (l, r, reducer) = self.0.split_at_of(index, len);
        (ByIndex(l), ByIndex(r), reducer)
    }
    fn into_folder(self) -> C::Folder {
        self.0.into_folder()
    }
    fn full(&self) -> bool {
        self.0.full()
    }
    fn order(&self) -> WorkOrder {
        self.0.work_order()
    }
}

/// A consumer split without an item index ([`UnindexedConsumer::split_off_left_at`]): for
/// sources whose units are not items.
pub(crate) struct ByUnits<C>(pub(crate) C);

impl<T, C: UnindexedConsumer<T>> Sink<T> for ByUnits<C> {
    type Result = C::Result;
    type Reducer = C::Reducer;
    type Folder = C::Folder;
    fn split(self, index: usize, len: usize) -> (Self, Self, C::Reducer) {
        let reducer = self.0.to_reducer();
        let left = self.0.split_off_left_at(index, len);
        (ByUnits(left), self, reducer)
    }
    fn into_folder(self) -> C::Folder {
        self.0.into_folder()
    }
    fn full(&self) -> bool {
        self.0.full()
    }
    fn order(&self) -> WorkOrder {
        self.0.work_order()
    }
}

/// Runs `pieces` (`len` units) into `sink` on the current pool (or the global pool).
///
/// "If any at all" (auto mode): the outermost run of a consumer method called from outside any
/// pool while the global pool is in auto mode consults the memory of the method's call site
/// ([`runtime::take_site`]): a site whose runs are too short to pay for threads folds the
/// whole run on the calling thread (same consumer, no split, so order and results are the
/// sequential ones); others run in the pool.
pub(crate) fn drive<P, S>(pieces: P, len: usize, sink: S) -> S::Result
where
    P: Pieces,
    S: Sink<P::Item>,
{
    runtime::remembered(runtime::take_site(), len, move |way| match way {
        Way::Serial => pieces.fold_with(sink.into_folder()).complete(),
        Way::Parallel => in_pool(pieces, len, sink),
    })
}

fn in_pool<P, S>(pieces: P, len: usize, sink: S) -> S::Result
where
    P: Pieces,
    S: Sink<P::Item>,
{
    let threads = throttle_core::current_num_threads();
    let min = pieces.min_len().max(1);
    let max = pieces.max_len().max(min);
    let splitter = Splitter {
        splits: threads,
        refill: threads,
        min,
        max,
        block: FIRST_BLOCK.max(min).min(max),
    };
    if threads > 1 && len / 2 >= min && claim::outermost() {
        return claim::run_claimed(pieces, len, sink, splitter, threads);
    }
    run(pieces, sink, splitter, len)
}

/// How a run splits: rayon's adaptive budget, the bounds of `min_len`/`max_len`, and the
/// block length a leaf adapts to the clock.
#[derive(Clone, Copy)]
pub(crate) struct Splitter {
    /// Eager splits left (halved at each level).
    pub(crate) splits: usize,
    /// What a stolen piece's budget is refilled to.
    pub(crate) refill: usize,
    /// The shortest piece or block.
    pub(crate) min: usize,
    /// The longest block (`with_max_len`).
    pub(crate) max: usize,
    /// Units per block in a leaf; adapted to the time a block takes.
    pub(crate) block: usize,
}

impl Splitter {
    fn try_split(&mut self, len: usize) -> bool {
        if len / 2 < self.min || self.splits == 0 {
            return false;
        }
        self.splits /= 2;
        true
    }

    /// Called on the far half of a split when it runs: refills the budget if it was stolen.
    pub(crate) fn note_thread(&mut self, forked_on: usize) {
        if thread_token() != forked_on {
            self.splits = self.refill.max(self.splits / 2);
        }
    }

    /// Adapts the block to the time the last one took: shorter if it kept hungry threads
    /// waiting longer than [`BLOCK_TIME`], longer if its checks cost more than noise.
    fn adapt(&mut self, took: Duration) {
        if took > BLOCK_TIME * 2 {
            self.block = (self.block / 2).max(self.min);
        } else if took < BLOCK_TIME / 8 {
            // Far too short (cheap items): grow fast, so a short leaf takes few blocks.
            self.block = (self.block * 8).min(MAX_BLOCK).max(self.min);
        } else if took < BLOCK_TIME / 2 {
            self.block = (self.block * 2).min(MAX_BLOCK).max(self.min);
        }
        self.block = self.block.min(self.max);
    }
}

thread_local! {
    static TOKEN: Cell<u8> = const { Cell::new(0) };
}

/// A number that identifies the calling thread among live threads (its thread-local's address).
pub(crate) fn thread_token() -> usize {
    TOKEN.with(|t| t as *const Cell<u8> as usize)
}

/// Folds a whole piece into its sink's folder: the end of every path through the engine.
fn fold<P: Pieces, S: Sink<P::Item>>(pieces: P, sink: S) -> S::Result {
    pieces.fold_with(sink.into_folder()).complete()
}

/// Eager splits (rayon's adaptive budget), then a leaf. A run that wants the back first runs
/// the right half of each split on this thread and offers the left one.
fn run<P, S>(pieces: P, sink: S, mut splitter: Splitter, len: usize) -> S::Result
where
    P: Pieces,
    S: Sink<P::Item>,
{
    if sink.full() {
        return sink.into_folder().complete();
    }
    if pieces.stopped() || !splitter.try_split(len) {
        return leaf(pieces, sink, splitter, len);
    }
    let mid = len / 2;
    let (left, right) = pieces.split_at(mid);
    let (left_sink, right_sink, reducer) = sink.split(mid, len);
    let forked_on = thread_token();
    let (a, b) = if right_sink.order() == WorkOrder::Back {
        let (b, a) = throttle_core::join(
            || run(right, right_sink, splitter, len - mid),
            move || {
                splitter.note_thread(forked_on);
                run(left, left_sink, splitter, mid)
            },
        );
        (a, b)
    } else {
        throttle_core::join(
            || run(left, left_sink, splitter, mid),
            move || {
                splitter.note_thread(forked_on);
                run(right, right_sink, splitter, len - mid)
            },
        )
    };
    reducer.reduce(a, b)
}

/// The results of a leaf's blocks before the part still to run, and the reducer that joins
/// them to the next result (a left fold: reducers are associative, as rayon's `reduce` is).
struct Done<R, D>(Option<(R, D)>);

impl<R, D: Reducer<R>> Done<R, D> {
    /// Adds `r`, the result of the block that follows, and the reducer of the split after it.
    fn push(&mut self, r: R, next: D) {
        self.0 = Some(match self.0.take() {
            None => (r, next),
            Some((acc, reducer)) => (reducer.reduce(acc, r), next),
        });
    }

    /// Joins the result of the last part.
    fn finish(self, last: R) -> R {
        match self.0 {
            None => last,
            Some((acc, reducer)) => reducer.reduce(acc, last),
        }
    }
}

/// Runs a piece block by block; between blocks, honours the limit, stops once the consumer is
/// full, and splits what is left in half when a thread is hungry (the right half offered to
/// it).
pub(crate) fn leaf<P, S>(
    mut pieces: P,
    mut sink: S,
    mut splitter: Splitter,
    mut len: usize,
) -> S::Result
where
    P: Pieces,
    S: Sink<P::Item>,
{
    if sink.order() == WorkOrder::Back {
        return leaf_from_back(pieces, sink, splitter, len);
    }
    let mut done = Done(None);
    // The first panic of a block: the other blocks still run, as the halves of rayon's joins
    // would (`with_max_len(1)` then reaches every item but the panicking one), and it is
    // resumed when the piece is done; `panic_fuse` stops the others instead.
    let mut panic = None;
    loop {
        if sink.full() {
            resume_if(panic);
            return done.finish(sink.into_folder().complete());
        }
        if pieces.stopped() {
            // It yields nothing more: one fold drops what is left without splitting it.
            let r = fold(pieces, sink);
            resume_if(panic);
            return done.finish(r);
        }
        if len / 2 >= splitter.min && len > splitter.min && runtime::poll_hungry() {
            let mid = len / 2;
            let (left, right) = pieces.split_at(mid);
            let (left_sink, right_sink, reducer) = sink.split(mid, len);
            let (a, b) = runtime::fork(
                || leaf(left, left_sink, splitter, mid),
                move || leaf(right, right_sink, splitter, len - mid),
            );
            resume_if(panic);
            return done.finish(reducer.reduce(a, b));
        }
        if len <= splitter.block || len < splitter.min.saturating_mul(2) {
            let r = guarded(&mut panic, || fold(pieces, sink));
            runtime::count_items(len);
            resume_if(panic);
            return done.finish(r.expect("no block panicked"));
        }
        // Leave at least `min` units behind (`len >= 2 * min`, so the block is `min` or more).
        let block = splitter.block.min(len - splitter.min);
        let (head, tail) = pieces.split_at(block);
        let (head_sink, tail_sink, reducer) = sink.split(block, len);
        let start = Instant::now();
        let r = guarded(&mut panic, || fold(head, head_sink));
        splitter.adapt(start.elapsed());
        runtime::count_items(block);
        // After a panic, later blocks' results are not combined (a gap is left where the
        // panicking block was; a collect cannot join across it): each is dropped on its own.
        if let (Some(r), None) = (r, &panic) {
            done.push(r, reducer);
        }
        pieces = tail;
        sink = tail_sink;
        len -= block;
    }
}

/// Runs one block of a leaf as a unit of its own: a panic in it is kept in `first` (unless an
/// earlier one is) and `None` returned, so that the leaf's other blocks still run.
fn guarded<R>(first: &mut Option<Box<dyn Any + Send>>, f: impl FnOnce() -> R) -> Option<R> {
    match panic::catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => Some(r),
        Err(payload) => {
            first.get_or_insert(payload);
            None
        }
    }
}

/// Resumes the first panic of a leaf's blocks, if one panicked.
fn resume_if(first: Option<Box<dyn Any + Send>>) {
    if let Some(payload) = first {
        panic::resume_unwind(payload);
    }
}

/// [`leaf`] for a consumer that wants the back first: blocks from the piece's end, each
/// combined in front of the results after it; stops once the consumer of what is left in
/// front is full. (No demand splitting: the claimed pieces, started from the back, and the
/// fork tree's far halves share the work.)
fn leaf_from_back<P, S>(
    mut pieces: P,
    mut sink: S,
    mut splitter: Splitter,
    mut len: usize,
) -> S::Result
where
    P: Pieces,
    S: Sink<P::Item>,
{
    // The first block is the shortest allowed (it grows as blocks prove cheap): the last
    // block is where a search from the back expects to stop.
    splitter.block = splitter.min;
    // The combined results of the units after the part still to run, and the reducer that
    // joins that part's result in front of them.
    let mut after: Option<(S::Reducer, S::Result)> = None;
    let join = |r: S::Result, after: Option<(S::Reducer, S::Result)>| match after {
        Some((reducer, acc)) => reducer.reduce(r, acc),
        None => r,
    };
    loop {
        if sink.full() {
            return join(sink.into_folder().complete(), after);
        }
        if pieces.stopped() {
            return join(fold(pieces, sink), after);
        }
        if len <= splitter.block || len < splitter.min.saturating_mul(2) {
            let r = fold(pieces, sink);
            runtime::count_items(len);
            return join(r, after);
        }
        // Leave at least `min` units in front (`len >= 2 * min`).
        let block = splitter.block.min(len - splitter.min);
        let (head, tail) = pieces.split_at(len - block);
        let (head_sink, tail_sink, reducer) = sink.split(len - block, len);
        let start = Instant::now();
        let r = fold(tail, tail_sink);
        splitter.adapt(start.elapsed());
        runtime::count_items(block);
        after = Some(match after {
            None => (reducer, r),
            // Associativity: `(front ⊕ r) ⊕' acc` regrouped as `front ⊕ (r ⊕' acc)`.
            Some((next, acc)) => (reducer, next.reduce(r, acc)),
        });
        pieces = head;
        sink = head_sink;
        len -= block;
    }
}
