//! rayon's plumbing: the traits that parallel iterators are made of, and the bridges that run
//! them on throttle's pool. Implement these to give a type of your own a parallel iterator, as
//! you would for rayon; the names, signatures and contracts are rayon 1.12's.
//!
//! # How a run flows
//!
//! A consumer method (`sum`, `collect`, `for_each`, ...) builds a [`Consumer`] and hands it to
//! [`ParallelIterator::drive_unindexed`](super::ParallelIterator::drive_unindexed) (or
//! [`IndexedParallelIterator::drive`]). Each adapter
//! wraps the consumer in its own (a `filter` consumer passes on only the items its predicate
//! accepts) and hands it down to its base, until it reaches the source. An indexed source
//! gives its [`Producer`] and the consumer to [`bridge_producer_consumer`]; an unindexed one
//! gives an [`UnindexedProducer`] to [`bridge_unindexed`]. The bridge splits producer and
//! consumer alike (`split_at`, or [`UnindexedConsumer::split_off_left`]), runs the halves
//! through [`join`](throttle_core::join), turns each final piece of the consumer into a [`Folder`]
//! that takes the piece's items one by one ([`Producer::fold_with`]), and combines the
//! results of neighbouring pieces with the [`Reducer`] the split returned, left first.
//! Indexed adapters (`map`, `zip`, `enumerate`, ...) can also wrap producers instead:
//! [`IndexedParallelIterator::with_producer`]
//! passes a [`ProducerCallback`] down, and each adapter wraps the producer it gets on the way
//! back up.
//!
//! # How throttle splits
//!
//! The bridges are throttle's own (`engine.rs`), and decide where to split by what the pool
//! needs rather than a fixed recipe:
//!
//! 1. The outermost run of a computation cuts its producer and consumer into pieces that the
//!    pool's threads claim from a shared counter (`claim.rs`), so no thread waits for another
//!    while pieces are left.
//! 2. Nested runs, and third-party [`UnindexedProducer`]s, split with rayon's adaptive budget:
//!    about two pieces per thread at once, refilled when a piece is stolen.
//! 3. On demand: a piece runs in blocks, and between two blocks it honours a lowered
//!    concurrency limit and, when a thread of the pool is hungry while no work is queued,
//!    splits what it has left and offers the right half. Blocks adapt to the clock (about
//!    20 µs each).
//!
//! No split makes a piece shorter than [`Producer::min_len`], and no block is longer than
//! [`Producer::max_len`] (rayon's bounds). Between blocks, and before every split, the run asks
//! the consumer whether it is [`full`](Consumer::full) and stops if so: a short-circuit
//! (`find_any`, `all`, `take_any`, a `try_` consumer that failed) ends every piece soon after.
//!
//! # Examples
//! A parallel iterator over the squares `0, 1, 4, ...` of a range, written against the plumbing
//! alone:
//! ```
//! use throttle::iter::plumbing::*;
//! use throttle::prelude::*;
//!
//! struct Squares(std::ops::Range<u32>);
//!
//! impl ParallelIterator for Squares {
//!     type Item = u32;
//!     fn drive_unindexed<C: UnindexedConsumer<u32>>(self, consumer: C) -> C::Result {
//!         bridge(self, consumer)
//!     }
//!     fn opt_len(&self) -> Option<usize> {
//!         Some(self.len())
//!     }
//! }
//!
//! impl IndexedParallelIterator for Squares {
//!     fn len(&self) -> usize {
//!         (self.0.end - self.0.start) as usize
//!     }
//!     fn drive<C: Consumer<u32>>(self, consumer: C) -> C::Result {
//!         bridge(self, consumer)
//!     }
//!     fn with_producer<CB: ProducerCallback<u32>>(self, callback: CB) -> CB::Output {
//!         callback.callback(SquaresProducer(self.0))
//!     }
//! }
//!
//! struct SquaresProducer(std::ops::Range<u32>);
//!
//! impl Producer for SquaresProducer {
//!     type Item = u32;
//!     type IntoIter = std::iter::Map<std::ops::Range<u32>, fn(u32) -> u32>;
//!     fn into_iter(self) -> Self::IntoIter {
//!         self.0.map(|x| x * x)
//!     }
//!     fn split_at(self, index: usize) -> (Self, Self) {
//!         let mid = self.0.start + index as u32;
//!         (SquaresProducer(self.0.start..mid), SquaresProducer(mid..self.0.end))
//!     }
//! }
//!
//! let v: Vec<u32> = Squares(0..5).collect();
//! assert_eq!(v, [0, 1, 4, 9, 16]);
//! assert_eq!(Squares(0..1000).filter(|x| x % 2 == 1).count(), 500);
//! ```

pub(crate) mod claim;
pub(crate) mod engine;
mod unindexed;

use super::IndexedParallelIterator;

/// What a [`Producer`] is handed to: the way
/// [`IndexedParallelIterator::with_producer`]
/// returns a producer whose type only the iterator knows. `callback` runs once, with the
/// producer of all the iterator's items.
///
/// # Examples
/// ```
/// use throttle::iter::plumbing::{Producer, ProducerCallback};
/// use throttle::prelude::*;
///
/// /// Splits the producer at `at` and collects the two halves' items apart.
/// struct SplitAt(usize);
/// impl<T> ProducerCallback<T> for SplitAt {
///     type Output = (Vec<T>, Vec<T>);
///     fn callback<P: Producer<Item = T>>(self, producer: P) -> Self::Output {
///         let (left, right) = producer.split_at(self.0);
///         (left.into_iter().collect(), right.into_iter().collect())
///     }
/// }
///
/// let (a, b) = (0..5).into_par_iter().map(|x| x * 10).with_producer(SplitAt(2));
/// assert_eq!((a, b), (vec![0, 10], vec![20, 30, 40]));
/// ```
pub trait ProducerCallback<T> {
    /// What the callback returns.
    type Output;

    /// Called with the iterator's producer.
    fn callback<P>(self, producer: P) -> Self::Output
    where
        P: Producer<Item = T>;
}

/// The splittable state of an indexed parallel iterator: it knows where its `index`-th item
/// is, so it splits there, and each piece becomes a sequential iterator that runs both ways
/// and knows its exact length.
///
/// `split_at(index)` must put exactly `index` items on the left, and `into_iter` must yield
/// exactly the items the producer holds (a wrong count gives wrong results, or a panic in
/// `collect`, never undefined behaviour).
///
/// # Examples
/// See the [module docs](self) for a complete producer.
/// ```
/// use throttle::iter::plumbing::Producer;
///
/// struct Evens(std::ops::Range<u32>);
/// impl Producer for Evens {
///     type Item = u32;
///     type IntoIter = std::iter::Map<std::ops::Range<u32>, fn(u32) -> u32>;
///     fn into_iter(self) -> Self::IntoIter { self.0.map(|x| 2 * x) }
///     fn split_at(self, index: usize) -> (Self, Self) {
///         let mid = self.0.start + index as u32;
///         (Evens(self.0.start..mid), Evens(mid..self.0.end))
///     }
/// }
///
/// let (a, b) = Evens(0..4).split_at(1);
/// assert_eq!(a.into_iter().collect::<Vec<_>>(), [0]);
/// assert_eq!(b.into_iter().rev().collect::<Vec<_>>(), [6, 4, 2]);
/// ```
pub trait Producer: Send + Sized {
    /// The items this producer yields.
    type Item;

    /// The sequential iterator a piece turns into.
    type IntoIter: Iterator<Item = Self::Item> + DoubleEndedIterator + ExactSizeIterator;

    /// Turns the producer into a sequential iterator over its items.
    fn into_iter(self) -> Self::IntoIter;

    /// The shortest piece a split may make (default 1); see
    /// [`with_min_len`](super::IndexedParallelIterator::with_min_len).
    fn min_len(&self) -> usize {
        1
    }

    /// The longest piece that may be folded at once (default: no bound); see
    /// [`with_max_len`](super::IndexedParallelIterator::with_max_len).
    fn max_len(&self) -> usize {
        usize::MAX
    }

    /// Splits into the items `[0, index)` and `[index, len)`.
    fn split_at(self, index: usize) -> (Self, Self);

    /// Feeds the producer's items to `folder` (by default through [`Producer::into_iter`] and
    /// [`Folder::consume_iter`]), stopping early if the folder is full.
    fn fold_with<F>(self, folder: F) -> F
    where
        F: Folder<Self::Item>,
    {
        folder.consume_iter(self.into_iter())
    }
}

/// What a run computes: a consumer is split along with the producer, each final piece becomes
/// a [`Folder`] that takes the piece's items, and the pieces' results are combined by the
/// [`Reducer`] the split returned.
///
/// # Examples
/// A consumer that counts the items it is given:
/// ```
/// use throttle::iter::plumbing::*;
/// use throttle::prelude::*;
///
/// struct Counter;
/// struct CountFolder(usize);
/// struct Add;
///
/// impl<T> Consumer<T> for Counter {
///     type Folder = CountFolder;
///     type Reducer = Add;
///     type Result = usize;
///     fn split_at(self, _index: usize) -> (Self, Self, Add) { (Counter, Counter, Add) }
///     fn into_folder(self) -> CountFolder { CountFolder(0) }
///     fn full(&self) -> bool { false }
/// }
/// impl<T> UnindexedConsumer<T> for Counter {
///     fn split_off_left(&self) -> Self { Counter }
///     fn to_reducer(&self) -> Add { Add }
/// }
/// impl<T> Folder<T> for CountFolder {
///     type Result = usize;
///     fn consume(self, _item: T) -> Self { CountFolder(self.0 + 1) }
///     fn complete(self) -> usize { self.0 }
///     fn full(&self) -> bool { false }
/// }
/// impl Reducer<usize> for Add {
///     fn reduce(self, left: usize, right: usize) -> usize { left + right }
/// }
///
/// let n = (0..1000).into_par_iter().filter(|x| x % 3 == 0).drive_unindexed(Counter);
/// assert_eq!(n, 334);
/// ```
pub trait Consumer<Item>: Send + Sized {
    /// What a final piece of the consumer takes the items with.
    type Folder: Folder<Item, Result = Self::Result>;

    /// What combines the results of two neighbouring pieces.
    type Reducer: Reducer<Self::Result>;

    /// What the consumer computes.
    type Result: Send;

    /// Splits into a consumer for the items `[0, index)`, one for the rest, and the reducer
    /// that combines their results (left first).
    fn split_at(self, index: usize) -> (Self, Self, Self::Reducer);

    /// Turns the consumer into a folder.
    fn into_folder(self) -> Self::Folder;

    /// True once the consumer needs no more items (it has its answer); the run then stops
    /// feeding and splitting it.
    fn full(&self) -> bool;

    /// Which part of a run to start first: a hint of throttle's bridges, not rayon's API. A
    /// consumer that looks for the last match says [`WorkOrder::Back`]; adapters pass on their
    /// base's answer.
    #[doc(hidden)]
    fn work_order(&self) -> WorkOrder {
        WorkOrder::Front
    }

    /// [`split_at`](Consumer::split_at) at `index` of a piece of `len` items: a hint of
    /// throttle's bridges (a consumer that orders its pieces, like `find_first`'s, divides its
    /// positions in proportion); not rayon's API. Adapters pass it on to their base.
    #[doc(hidden)]
    fn split_at_of(self, index: usize, len: usize) -> (Self, Self, Self::Reducer) {
        let _ = len;
        self.split_at(index)
    }
}

/// A consumer's final piece: it takes items one by one and then gives its result.
///
/// # Examples
/// ```
/// use throttle::iter::plumbing::Folder;
///
/// struct Sum(u64);
/// impl Folder<u64> for Sum {
///     type Result = u64;
///     fn consume(self, item: u64) -> Self { Sum(self.0 + item) }
///     fn complete(self) -> u64 { self.0 }
///     fn full(&self) -> bool { false }
/// }
///
/// assert_eq!(Sum(0).consume(1).consume_iter(2..5).complete(), 10);
/// ```
pub trait Folder<Item>: Sized {
    /// What the folder gives when it completes.
    type Result;

    /// Takes one item.
    fn consume(self, item: Item) -> Self;

    /// Takes the items of `iter` in order, stopping once the folder is full. Folders override
    /// it to run `iter` with internal iteration (`fold`), which is faster for most iterators.
    fn consume_iter<I>(mut self, iter: I) -> Self
    where
        I: IntoIterator<Item = Item>,
    {
        for item in iter {
            self = self.consume(item);
            if self.full() {
                break;
            }
        }
        self
    }

    /// Finishes, giving the result.
    fn complete(self) -> Self::Result;

    /// True once the folder needs no more items.
    fn full(&self) -> bool;
}

/// Combines the results of two neighbouring pieces of a run, `left` first.
///
/// # Examples
/// ```
/// use throttle::iter::plumbing::Reducer;
///
/// struct Concat;
/// impl Reducer<String> for Concat {
///     fn reduce(self, left: String, right: String) -> String { left + &right }
/// }
/// assert_eq!(Concat.reduce("ab".into(), "cd".into()), "abcd");
/// ```
pub trait Reducer<Result> {
    /// Combines `left` and `right`, the results of the pieces before and after the split.
    fn reduce(self, left: Result, right: Result) -> Result;
}

/// A [`Consumer`] that can also be split without knowing where: for iterators whose length
/// is unknown (`filter`, `flat_map`, unindexed sources). `split_off_left` gives a consumer
/// for a part before whatever `self` still consumes.
///
/// # Examples
/// See [`Consumer`] for a complete consumer.
/// ```
/// use throttle::iter::plumbing::*;
/// use throttle::prelude::*;
///
/// // `sum` through the plumbing: a consumer made by `drive_unindexed`'s caller.
/// let v: Vec<u32> = (0..10).collect();
/// let evens = v.par_iter().filter(|x| *x % 2 == 0).count();
/// assert_eq!(evens, 5);
/// ```
pub trait UnindexedConsumer<I>: Consumer<I> {
    /// A consumer for a part of the run before everything `self` still consumes.
    fn split_off_left(&self) -> Self;

    /// A reducer for the results of a `split_off_left` consumer (left) and `self` (right).
    fn to_reducer(&self) -> Self::Reducer;

    /// [`split_off_left`](UnindexedConsumer::split_off_left) for the first `index` of `len`
    /// units of what `self` consumes: a hint of throttle's bridges (a consumer that orders
    /// its pieces, like `find_first`'s, uses it to divide its positions in proportion); not
    /// rayon's API. Adapters pass it on to their base.
    #[doc(hidden)]
    fn split_off_left_at(&self, index: usize, len: usize) -> Self {
        let _ = (index, len);
        self.split_off_left()
    }
}

/// The splittable state of an unindexed parallel iterator: it splits where it can (roughly in
/// half), or says it cannot split any more.
///
/// # Examples
/// ```
/// use throttle::iter::plumbing::*;
/// use throttle::prelude::*;
///
/// /// The numbers of a range, split in halves down to 100.
/// struct Halves(std::ops::Range<u64>);
/// impl UnindexedProducer for Halves {
///     type Item = u64;
///     fn split(self) -> (Self, Option<Self>) {
///         let r = self.0;
///         if r.end - r.start <= 100 {
///             return (Halves(r), None);
///         }
///         let mid = r.start + (r.end - r.start) / 2;
///         (Halves(r.start..mid), Some(Halves(mid..r.end)))
///     }
///     fn fold_with<F: Folder<u64>>(self, folder: F) -> F {
///         folder.consume_iter(self.0)
///     }
/// }
///
/// struct All(std::ops::Range<u64>);
/// impl ParallelIterator for All {
///     type Item = u64;
///     fn drive_unindexed<C: UnindexedConsumer<u64>>(self, consumer: C) -> C::Result {
///         bridge_unindexed(Halves(self.0), consumer)
///     }
/// }
///
/// assert_eq!(All(0..10_000).sum::<u64>(), 49_995_000);
/// ```
pub trait UnindexedProducer: Send + Sized {
    /// The items this producer yields.
    type Item;

    /// Splits into two parts, or returns `(self, None)` if it should not be split further.
    fn split(self) -> (Self, Option<Self>);

    /// Feeds the producer's items to `folder`, stopping early if it is full.
    fn fold_with<F>(self, folder: F) -> F
    where
        F: Folder<Self::Item>;
}

/// Which part of a run throttle's bridges start first (see [`Consumer::work_order`]); only a
/// consumer that stops early cares, since the order never changes how results combine.
#[doc(hidden)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WorkOrder {
    /// Front to back: everything that does not stop early, and `find_first`.
    Front,
    /// Back to front (`find_last`): pieces from the last, and a piece's blocks from its end,
    /// so that a match near the end stops all the work before it.
    Back,
    /// Spread over the run (`find_any`, `any`, `all`): claimed pieces in bit-reversed order
    /// (first, middle, quarters, ...), so that a match anywhere in a long run is met early.
    Spread,
}

/// Runs an indexed parallel iterator into `consumer`: asks it for its producer
/// ([`IndexedParallelIterator::with_producer`]) and hands both to
/// [`bridge_producer_consumer`]. The usual body of `drive` and `drive_unindexed` for an
/// indexed iterator.
///
/// # Examples
/// ```
/// use throttle::iter::plumbing::*;
/// use throttle::prelude::*;
///
/// /// A wrapper that forwards to the iterator inside.
/// struct Wrapped<I>(I);
/// impl<I: IndexedParallelIterator> ParallelIterator for Wrapped<I> {
///     type Item = I::Item;
///     fn drive_unindexed<C: UnindexedConsumer<I::Item>>(self, consumer: C) -> C::Result {
///         bridge(self.0, consumer)
///     }
/// }
///
/// let v: Vec<u8> = Wrapped((0..4u8).into_par_iter()).collect();
/// assert_eq!(v, [0, 1, 2, 3]);
/// ```
pub fn bridge<I, C>(par_iter: I, consumer: C) -> C::Result
where
    I: IndexedParallelIterator,
    C: Consumer<I::Item>,
{
    /// Hands the producer on to the engine.
    struct Callback<C> {
        len: usize,
        consumer: C,
    }

    impl<T, C: Consumer<T>> ProducerCallback<T> for Callback<C> {
        type Output = C::Result;
        fn callback<P: Producer<Item = T>>(self, producer: P) -> C::Result {
            bridge_producer_consumer(self.len, producer, self.consumer)
        }
    }

    let len = par_iter.len();
    par_iter.with_producer(Callback { len, consumer })
}

/// Runs `producer` (which holds `len` items) into `consumer` on the current pool (or the
/// global pool), splitting both as the pool needs (see the [module docs](self)).
///
/// # Examples
/// ```
/// use throttle::iter::plumbing::*;
/// use throttle::prelude::*;
///
/// struct Sum;
/// impl ProducerCallback<u64> for Sum {
///     type Output = u64;
///     fn callback<P: Producer<Item = u64>>(self, producer: P) -> u64 {
///         producer.into_iter().sum()
///     }
/// }
/// // Any consumer works; here `collect`'s, through a public iterator's producer:
/// let v: Vec<u64> = (0..100u64).into_par_iter().map(|x| x + 1).collect();
/// assert_eq!(v.len(), 100);
/// assert_eq!((1..=100u64).into_par_iter().with_producer(Sum), 5050);
/// ```
pub fn bridge_producer_consumer<P, C>(len: usize, producer: P, consumer: C) -> C::Result
where
    P: Producer,
    C: Consumer<P::Item>,
{
    engine::drive(engine::Items(producer), len, engine::ByIndex(consumer))
}

/// Runs an [`UnindexedProducer`] into `consumer` on the current pool (or the global pool):
/// splits with rayon's adaptive budget, and further while a thread of the pool is hungry and
/// the producer still splits.
///
/// # Examples
/// See [`UnindexedProducer`] for a producer driven by it.
/// ```
/// use throttle::iter::plumbing::*;
/// use throttle::prelude::*;
///
/// struct Chars(String);
/// impl UnindexedProducer for Chars {
///     type Item = char;
///     fn split(self) -> (Self, Option<Self>) { (self, None) }
///     fn fold_with<F: Folder<char>>(self, folder: F) -> F { folder.consume_iter(self.0.chars()) }
/// }
///
/// struct Letters(String);
/// impl ParallelIterator for Letters {
///     type Item = char;
///     fn drive_unindexed<C: UnindexedConsumer<char>>(self, consumer: C) -> C::Result {
///         bridge_unindexed(Chars(self.0), consumer)
///     }
/// }
///
/// assert_eq!(Letters("hello".into()).filter(|c| *c == 'l').count(), 2);
/// ```
pub fn bridge_unindexed<P, C>(producer: P, consumer: C) -> C::Result
where
    P: UnindexedProducer,
    C: UnindexedConsumer<P::Item>,
{
    unindexed::drive(producer, consumer)
}
