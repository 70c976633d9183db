//! How a parallel iterator runs: a [`Producer`] splits itself in halves, the halves run through
//! [`join`](crate::join), and each leaf runs as an ordinary sequential iterator into a consumer.
//!
//! # Splitting
//!
//! The outermost iterator of a computation cuts its run into pieces that the pool's threads
//! claim from a shared counter (`claim.rs`). Nested iterators, and each claimed piece, split with
//! two mechanisms, one eager and one on demand:
//!
//! 1. Rayon's adaptive splitter (nested iterators only): a run starts with a budget of
//!    `threads` splits, halved at each level, so each thread gets about two pieces at once;
//!    when the right half of a split runs on another thread than the one that forked it (it was
//!    stolen), its budget is refilled.
//! 2. Demand, as `for_range` does: a piece runs in blocks, and between two blocks it honours a
//!    lowered limit and, when a thread of the pool is hungry while no work is queued, splits
//!    what it has left in half and offers the right half. Blocks adapt to the clock: they start
//!    at 32 units and grow or halve to take about 20 µs, so coarse items (an image each) and
//!    tiny ones (a float each) are both checked about every 20 µs.
//!
//! No split makes a piece shorter than the producer's `min_len` (see
//! [`with_min_len`](crate::iter::ParallelIterator::with_min_len)), and no leaf consumes more
//! than `max(max_len, 2 * min_len - 1)` units at once (see
//! [`with_max_len`](crate::iter::IndexedParallelIterator::with_max_len)), rayon's bounds.
//! Short-circuiting consumers choose which work starts first (`Order`): `find_last` from the
//! back, `find_any` spread over the run. Re-measure the constants with
//! `throttle-bench --bench iter sort` when the scheduler changes.

use super::{claim, runtime};
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
/// wake-up (~25 µs here, see `worker.rs`).
const BLOCK_TIME: Duration = Duration::from_micros(20);

/// A parallel iterator's splittable state: the plumbing behind
/// [`ParallelIterator`](crate::iter::ParallelIterator).
///
/// Every parallel iterator is a producer; implementing this trait for a type of your own makes it
/// a parallel iterator. `base_len` is the number of splittable units (for sources, the number of
/// items; adapters such as `filter` keep their base's units but may yield fewer items).
///
/// # Examples
/// ```
/// use throttle::iter::plumbing::Producer;
/// use throttle::prelude::*;
///
/// /// The even numbers below `2 * n`.
/// struct Evens { start: u64, end: u64 }
///
/// impl Producer for Evens {
///     type Item = u64;
///     type IntoSeq = std::iter::Map<std::ops::Range<u64>, fn(u64) -> u64>;
///     fn base_len(&self) -> usize { (self.end - self.start) as usize }
///     fn split_at(self, index: usize) -> (Self, Self) {
///         let mid = self.start + index as u64;
///         (Evens { start: self.start, end: mid }, Evens { start: mid, end: self.end })
///     }
///     fn into_seq(self) -> Self::IntoSeq { (self.start..self.end).map(|x| 2 * x) }
/// }
///
/// assert_eq!(Evens { start: 0, end: 1000 }.sum::<u64>(), 999_000);
/// ```
pub trait Producer: Sized + Send {
    /// The items this producer yields.
    type Item;
    /// The sequential iterator a leaf runs.
    type IntoSeq: Iterator<Item = Self::Item>;

    /// The number of splittable units (see the trait's docs).
    fn base_len(&self) -> usize;

    /// Splits into the units `[0, index)` and `[index, base_len)`, in order.
    fn split_at(self, index: usize) -> (Self, Self);

    /// Turns a leaf into a sequential iterator.
    fn into_seq(self) -> Self::IntoSeq;

    /// The shortest piece a split may make (default 1).
    fn min_len(&self) -> usize {
        1
    }

    /// The longest piece a leaf may consume at once (default: no bound); see
    /// [`with_max_len`](crate::iter::IndexedParallelIterator::with_max_len).
    fn max_len(&self) -> usize {
        usize::MAX
    }

    /// True once the producer will yield nothing more (an adapter such as `while_some` or
    /// `take_any` saw its end); the run then stops splitting and consumes what is left as one
    /// leaf, which yields nothing (default `false`). Adapters pass their base's answer on.
    fn stopped(&self) -> bool {
        false
    }

    /// `Some(base_len)` if the producer yields exactly `base_len` items and `split_at(i)` puts
    /// exactly `i` of them on the left (default `None`). `collect` into a `Vec` then writes every
    /// item straight into its place; it checks the promise, and panics if it was broken.
    fn exact_len(&self) -> Option<usize> {
        None
    }
}

/// A [`Producer`] whose `base_len` is its exact number of items, and whose `split_at(i)` puts
/// exactly `i` items on the left: what [`IndexedParallelIterator`]'s `enumerate`, `zip` and
/// positions rely on. A wrong implementation gives wrong indices, never undefined behaviour.
///
/// [`IndexedParallelIterator`]: crate::iter::IndexedParallelIterator
///
/// # Examples
/// ```
/// use throttle::iter::plumbing::{IndexedProducer, Producer};
/// use throttle::prelude::*;
///
/// struct Squares(std::ops::Range<u64>);
/// impl Producer for Squares {
///     type Item = u64;
///     type IntoSeq = std::iter::Map<std::ops::Range<u64>, fn(u64) -> u64>;
///     fn base_len(&self) -> usize { (self.0.end - self.0.start) as usize }
///     fn split_at(self, i: usize) -> (Self, Self) {
///         let mid = self.0.start + i as u64;
///         (Squares(self.0.start..mid), Squares(mid..self.0.end))
///     }
///     fn into_seq(self) -> Self::IntoSeq { self.0.map(|x| x * x) }
/// }
/// impl IndexedProducer for Squares {}
///
/// assert_eq!(Squares(0..10).position_first(|x| x == 49), Some(7));
/// ```
pub trait IndexedProducer: Producer {}

/// What a run computes: a result per leaf, combined in order (left, right).
pub(crate) trait Consumer<T>: Sync {
    type Result: Send;

    /// Consumes one leaf: `len` units, the first being unit `offset` of the whole run. Leaves
    /// never overlap (see [`bridge_len`]).
    fn consume<I: Iterator<Item = T>>(&self, offset: usize, len: usize, iter: I) -> Self::Result;

    /// Combines the results of two adjacent pieces, `left` first.
    fn combine(&self, left: Self::Result, right: Self::Result) -> Self::Result;

    /// True if the piece starting at unit `offset` cannot change the outcome (a short-circuit).
    fn done(&self, _offset: usize) -> bool {
        false
    }

    /// The result of a piece skipped because [`Consumer::done`] said so.
    fn skipped(&self) -> Self::Result {
        unreachable!("a consumer that can be done must say what a skipped piece gives")
    }

    /// Which work a run should start first (default: the front, in order).
    fn order(&self) -> Order {
        Order::Front
    }
}

/// Which work a run starts first: only a short-circuiting consumer cares, since the order in
/// which pieces run never changes how results combine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Order {
    /// Front to back (`find_first` and everything that does not stop early).
    Front,
    /// Back to front (`find_last`): claimed pieces from the last, and a leaf's blocks from
    /// its end, so a find near the end stops all the work before it.
    Back,
    /// Spread over the run (`find_any`, `any`, `all`, ...): the claimed pieces in bit-reversed
    /// order (first, middle, quarters, ...), so two threads start far apart and a hit in any
    /// part of a long run is met early.
    Spread,
}

/// Runs `producer` into `consumer` on the current pool (or the global pool).
#[track_caller]
pub(crate) fn bridge<P, C>(producer: P, consumer: &C) -> C::Result
where
    P: Producer,
    C: Consumer<P::Item>,
{
    let len = producer.base_len();
    bridge_len(producer, len, consumer)
}

/// [`bridge`] for a producer of `len` units. Pieces get their lengths by this function's own
/// arithmetic (not by asking them), so the ranges handed to `Consumer::consume` are disjoint
/// even if a producer miscounts, which is what lets `collect` write in place soundly.
///
/// "If any at all" (issue 9): called from outside any pool while the global pool is in auto
/// mode, the run consults the memory of its call site (the user's line that called the
/// consumer, `#[track_caller]` from the public consumer methods down to here), exactly as
/// the free `for_range` does: a site whose runs are too short to pay for threads runs as one
/// leaf on the calling thread (same consumer, no split, so order and results are the
/// sequential ones), others run in the pool as before.
#[track_caller]
pub(crate) fn bridge_len<P, C>(producer: P, len: usize, consumer: &C) -> C::Result
where
    P: Producer,
    C: Consumer<P::Item>,
{
    runtime::remembered(std::panic::Location::caller(), len, |way| match way {
        crate::callsite::Way::Serial => consumer.consume(0, len, producer.into_seq()),
        crate::callsite::Way::Parallel => bridge_in_pool(producer, len, consumer),
    })
}

fn bridge_in_pool<P, C>(producer: P, len: usize, consumer: &C) -> C::Result
where
    P: Producer,
    C: Consumer<P::Item>,
{
    let threads = crate::current_num_threads();
    let min = producer.min_len().max(1);
    let max = producer.max_len().max(min);
    let splitter = Splitter {
        splits: threads,
        refill: threads,
        min,
        max,
        block: FIRST_BLOCK.max(min).min(max),
    };
    if threads > 1 && len / 2 >= min && claim::outermost() {
        return claim::run_claimed(producer, len, consumer, splitter, threads);
    }
    run(producer, consumer, splitter, 0, len)
}

#[derive(Clone, Copy)]
pub(crate) struct Splitter {
    /// Eager splits left (halved at each level).
    splits: usize,
    /// What a stolen piece's budget is refilled to.
    refill: usize,
    /// The shortest piece or block.
    pub(crate) min: usize,
    /// The longest block (`with_max_len`).
    max: usize,
    /// Units per block in a leaf; adapted to the time a block takes.
    block: usize,
}

impl Splitter {
    fn try_split(&mut self, len: usize) -> bool {
        if len / 2 < self.min || self.splits == 0 {
            return false;
        }
        self.splits /= 2;
        true
    }

    /// Called on the right half of a split when it runs: refills the budget if it was stolen.
    fn note_thread(&mut self, forked_on: usize) {
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
fn thread_token() -> usize {
    TOKEN.with(|t| t as *const Cell<u8> as usize)
}

/// Eager splits (rayon's adaptive budget), then a leaf.
fn run<P, C>(
    producer: P,
    consumer: &C,
    mut splitter: Splitter,
    offset: usize,
    len: usize,
) -> C::Result
where
    P: Producer,
    C: Consumer<P::Item>,
{
    if consumer.done(offset) {
        return consumer.skipped();
    }
    if producer.stopped() || !splitter.try_split(len) {
        return leaf(producer, consumer, splitter, offset, len);
    }
    let mid = len / 2;
    let (left, right) = producer.split_at(mid);
    let forked_on = thread_token();
    let (a, b) = crate::join(
        || run(left, consumer, splitter, offset, mid),
        move || {
            splitter.note_thread(forked_on);
            run(right, consumer, splitter, offset + mid, len - mid)
        },
    );
    consumer.combine(a, b)
}

/// Runs a piece block by block; between blocks, honours the limit and splits what is left in
/// half when a thread is hungry (the right half offered to it).
pub(crate) fn leaf<P, C>(
    mut producer: P,
    consumer: &C,
    mut splitter: Splitter,
    mut offset: usize,
    mut len: usize,
) -> C::Result
where
    P: Producer,
    C: Consumer<P::Item>,
{
    if consumer.order() == Order::Back {
        return leaf_from_back(producer, consumer, splitter, offset, len);
    }
    let mut acc: Option<C::Result> = None;
    let merge = |acc: Option<C::Result>, r: C::Result| match acc {
        Some(a) => consumer.combine(a, r),
        None => r,
    };
    // The first panic of a block: the other blocks still run, as the halves of rayon's joins
    // would (`with_max_len(1)` then reaches every item but the panicking one), and it is
    // resumed when the piece is done; `panic_fuse` stops the producer instead.
    let mut panic = None;
    loop {
        if producer.stopped() {
            // It yields nothing more: one leaf drops what is left without splitting it.
            let r = consumer.consume(offset, len, producer.into_seq());
            resume_if(panic);
            return merge(acc, r);
        }
        if len / 2 >= splitter.min && len > splitter.min && runtime::poll_hungry() {
            let mid = len / 2;
            let (left, right) = producer.split_at(mid);
            let (a, b) = runtime::fork(
                || leaf(left, consumer, splitter, offset, mid),
                move || leaf(right, consumer, splitter, offset + mid, len - mid),
            );
            resume_if(panic);
            return merge(acc, consumer.combine(a, b));
        }
        if len <= splitter.block || len < splitter.min.saturating_mul(2) {
            let r = guarded(&mut panic, || {
                consumer.consume(offset, len, producer.into_seq())
            });
            runtime::count_items(len);
            resume_if(panic);
            return merge(acc, r.expect("no block panicked"));
        }
        // Leave at least `min` units behind (`len >= 2 * min`, so the block is `min` or more).
        let block = splitter.block.min(len - splitter.min);
        let (head, tail) = producer.split_at(block);
        let start = Instant::now();
        let r = guarded(&mut panic, || {
            consumer.consume(offset, block, head.into_seq())
        });
        splitter.adapt(start.elapsed());
        runtime::count_items(block);
        // After a panic, later blocks' results are not combined (a gap is left where the
        // panicking block was; a collect cannot join across it): each is dropped on its own.
        if let (Some(r), None) = (r, &panic) {
            acc = Some(merge(acc, r));
        }
        producer = tail;
        offset += block;
        len -= block;
        if consumer.done(offset) {
            resume_if(panic);
            return merge(acc, consumer.skipped());
        }
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
/// combined in front of the results after it; stops once the consumer is done with what is left
/// in front. (No demand splitting: the claimed pieces, started from the back, share the work.)
fn leaf_from_back<P, C>(
    mut producer: P,
    consumer: &C,
    mut splitter: Splitter,
    offset: usize,
    mut len: usize,
) -> C::Result
where
    P: Producer,
    C: Consumer<P::Item>,
{
    // The first block is the shortest allowed (it grows as blocks prove cheap): the last
    // block is where a search from the back expects to stop.
    splitter.block = splitter.min;
    // The combined results of the units after `offset + len`.
    let mut after: Option<C::Result> = None;
    let merge = |r: C::Result, after: Option<C::Result>| match after {
        Some(a) => consumer.combine(r, a),
        None => r,
    };
    loop {
        if producer.stopped() || len <= splitter.block || len < splitter.min.saturating_mul(2) {
            let stopped = producer.stopped();
            let r = consumer.consume(offset, len, producer.into_seq());
            if !stopped {
                runtime::count_items(len);
            }
            return merge(r, after);
        }
        // Leave at least `min` units in front (`len >= 2 * min`).
        let block = splitter.block.min(len - splitter.min);
        let (head, tail) = producer.split_at(len - block);
        let start = Instant::now();
        let r = consumer.consume(offset + len - block, block, tail.into_seq());
        splitter.adapt(start.elapsed());
        runtime::count_items(block);
        after = Some(merge(r, after));
        producer = head;
        len -= block;
        if consumer.done(offset) {
            return merge(consumer.skipped(), after);
        }
    }
}
