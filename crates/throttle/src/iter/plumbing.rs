//! How a parallel iterator runs: a [`Producer`] splits itself in halves, the halves run through
//! [`join`](crate::join), and each leaf runs as an ordinary sequential iterator into a consumer.
//!
//! # Splitting
//!
//! A run starts with a budget of `threads × SPLITS_PER_THREAD` splits, halved at each level
//! (so about twice that many leaves), like rayon's adaptive splitter: when the right half of a
//! split runs on another thread than the one that forked it (it was stolen), its budget is
//! refilled, because a thread that steals is a thread that was hungry and more pieces will help.
//! A split never makes a piece shorter than the producer's `min_len` (see
//! [`with_min_len`](crate::iter::ParallelIterator::with_min_len)). Forks in this runtime are cheap
//! (most run as plain calls), so the fixed part of the budget errs on the side of more leaves.

use std::cell::Cell;

/// Splits each thread's share aims for before any steal: 8 gives ~16 leaves per thread, enough
/// for an uneven predicate to balance at the end of a loop, few enough that the forks (a few ns
/// each when they run as plain calls) are noise next to any leaf of real work. Re-measure with
/// `throttle-bench --bench iter_filter_count nested_iter` when the scheduler changes.
const SPLITS_PER_THREAD: usize = 8;

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

    /// Consumes one leaf, whose first unit is unit `offset` of the whole run.
    fn consume<I: Iterator<Item = T>>(&self, offset: usize, iter: I) -> Self::Result;

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
}

/// Runs `producer` into `consumer` on the current pool (or the global pool).
pub(crate) fn bridge<P, C>(producer: P, consumer: &C) -> C::Result
where
    P: Producer,
    C: Consumer<P::Item>,
{
    let threads = crate::current_num_threads();
    let splitter = Splitter {
        splits: threads.saturating_mul(SPLITS_PER_THREAD),
        refill: threads.saturating_mul(SPLITS_PER_THREAD),
        min: producer.min_len().max(1),
    };
    run(producer, consumer, splitter, 0)
}

#[derive(Clone, Copy)]
struct Splitter {
    splits: usize,
    refill: usize,
    min: usize,
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
}

thread_local! {
    static TOKEN: Cell<u8> = const { Cell::new(0) };
}

/// A number that identifies the calling thread among live threads (its thread-local's address).
fn thread_token() -> usize {
    TOKEN.with(|t| t as *const Cell<u8> as usize)
}

fn run<P, C>(producer: P, consumer: &C, mut splitter: Splitter, offset: usize) -> C::Result
where
    P: Producer,
    C: Consumer<P::Item>,
{
    if consumer.done(offset) {
        return consumer.skipped();
    }
    let len = producer.base_len();
    if !splitter.try_split(len) {
        return consumer.consume(offset, producer.into_seq());
    }
    let mid = len / 2;
    let (left, right) = producer.split_at(mid);
    let forked_on = thread_token();
    let (a, b) = crate::join(
        || run(left, consumer, splitter, offset),
        move || {
            splitter.note_thread(forked_on);
            run(right, consumer, splitter, offset + mid)
        },
    );
    consumer.combine(a, b)
}
