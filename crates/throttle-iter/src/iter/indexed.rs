//! [`IndexedParallelIterator`]: rayon's trait of the parallel iterators that know their length
//! and the index of every item.
//!
//! This file is a hub, as `par_iter.rs` is: the trait's methods return the indexed adapters
//! (`Zip`, `Enumerate`, `Chunks`, ...), and each of them implements the trait.

use super::collect;
use super::plumbing::{Consumer, ProducerCallback};
use super::{
    Chunks, Enumerate, ExponentialBlocks, FoldChunks, FoldChunksWith, Interleave,
    InterleaveShortest, IntoParallelIterator, MaxLen, MinLen, ParallelIterator, Positions, Rev,
    Skip, StepBy, Take, UniformBlocks, Zip, ZipEq,
};
use std::cmp::Ordering;

/// A [`ParallelIterator`] that knows its exact length and the index of every item: slices,
/// `Vec`s, ranges, and `map`, `enumerate`, `zip`, ... of those (not `filter`).
///
/// Implementing it for a type of your own takes [`len`](Self::len), [`drive`](Self::drive)
/// and [`with_producer`](Self::with_producer); see [`plumbing`](super::plumbing).
///
/// # Examples
/// ```
/// use throttle::prelude::*;
/// let v = vec![10, 20, 30];
/// let it = v.par_iter().map(|x| x / 10);
/// assert_eq!(it.len(), 3);
/// ```
// rayon's trait has `len` and no `is_empty`; its API is the contract (DESIGN.md).
#[allow(clippy::len_without_is_empty)]
pub trait IndexedParallelIterator: ParallelIterator {
    /// Runs the items in blocks one after another, each block a parallel run twice as long as
    /// the one before (from about the pool's thread count), stopping once the consumer is
    /// full: a short-circuiting consumer (`find_first`, `any`, ...) then never starts the
    /// blocks after the one where it stopped.
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// let hit = (0..1_000_000u32).into_par_iter().by_exponential_blocks().find_first(|&x| x > 10);
    /// assert_eq!(hit, Some(11));
    /// ```
    fn by_exponential_blocks(self) -> ExponentialBlocks<Self> {
        ExponentialBlocks::new(self)
    }

    /// Runs the items in blocks of `block_size` one after another, each block a parallel run,
    /// stopping once the consumer is full.
    ///
    /// # Panics
    /// If `block_size` is 0.
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// let v: Vec<u32> = (0..10u32).into_par_iter().by_uniform_blocks(3).collect();
    /// assert_eq!(v, (0..10).collect::<Vec<_>>());
    /// ```
    #[track_caller]
    fn by_uniform_blocks(self, block_size: usize) -> UniformBlocks<Self> {
        assert!(block_size != 0, "block_size must not be zero");
        UniformBlocks::new(self, block_size)
    }

    /// Collects the items, in order, into `target`, replacing what it held.
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// let mut v = vec![9u32; 2];
    /// (0..4u32).into_par_iter().collect_into_vec(&mut v);
    /// assert_eq!(v, [0, 1, 2, 3]);
    /// ```
    #[track_caller]
    fn collect_into_vec(self, target: &mut Vec<Self::Item>) {
        collect::collect_into_vec(self, target);
    }

    /// Splits pairs into two `Vec`s, in order, replacing what they held.
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// let (mut a, mut b) = (Vec::new(), Vec::new());
    /// (0..3u32).into_par_iter().map(|x| (x, x * 2)).unzip_into_vecs(&mut a, &mut b);
    /// assert_eq!((a, b), (vec![0, 1, 2], vec![0, 2, 4]));
    /// ```
    #[track_caller]
    fn unzip_into_vecs<A, B>(self, left: &mut Vec<A>, right: &mut Vec<B>)
    where
        Self: IndexedParallelIterator<Item = (A, B)>,
        A: Send,
        B: Send,
    {
        collect::unzip_into_vecs(self, left, right);
    }

    /// Pairs items of `self` and `other` in order; stops at the shorter.
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// let a = [1, 2, 3];
    /// let b = [10, 20, 30, 40];
    /// let dot: i32 = a.par_iter().zip(&b).map(|(x, y)| x * y).sum();
    /// assert_eq!(dot, 140);
    /// ```
    fn zip<Z>(self, zip_op: Z) -> Zip<Self, Z::Iter>
    where
        Z: IntoParallelIterator<Iter: IndexedParallelIterator>,
    {
        Zip::new(self, zip_op.into_par_iter())
    }

    /// [`zip`](IndexedParallelIterator::zip) of two iterators of the same length.
    ///
    /// # Panics
    /// If the lengths differ.
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// let s: i32 = [1, 2].par_iter().zip_eq(&[3, 4]).map(|(a, b)| a * b).sum();
    /// assert_eq!(s, 11);
    /// ```
    #[track_caller]
    fn zip_eq<Z>(self, zip_op: Z) -> ZipEq<Self, Z::Iter>
    where
        Z: IntoParallelIterator<Iter: IndexedParallelIterator>,
    {
        let other = zip_op.into_par_iter();
        let (a, b) = (self.len(), other.len());
        assert!(a == b, "iterators must have the same length: {a} and {b}");
        ZipEq::new(self, other)
    }

    /// Items of `self` and `other` in turn, then the rest of the longer.
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// let v: Vec<i32> = [1, 2, 3, 4].par_iter().interleave(&[5, 6]).copied().collect();
    /// assert_eq!(v, [1, 5, 2, 6, 3, 4]);
    /// ```
    fn interleave<I>(self, other: I) -> Interleave<Self, I::Iter>
    where
        I: IntoParallelIterator<Item = Self::Item, Iter: IndexedParallelIterator>,
    {
        Interleave::new(self, other.into_par_iter())
    }

    /// Items of `self` and `other` in turn, until the side whose turn it is has run out.
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// let v: Vec<i32> = [1, 2, 3, 4].par_iter().interleave_shortest(&[5, 6]).copied().collect();
    /// assert_eq!(v, [1, 5, 2, 6, 3]);
    /// ```
    fn interleave_shortest<I>(self, other: I) -> InterleaveShortest<Self, I::Iter>
    where
        I: IntoParallelIterator<Item = Self::Item, Iter: IndexedParallelIterator>,
    {
        InterleaveShortest::new(self, other.into_par_iter())
    }

    /// Groups items into `Vec`s of `size` (the last may be shorter).
    ///
    /// # Panics
    /// If `size` is 0.
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// let c: Vec<Vec<u32>> = (0..5u32).into_par_iter().chunks(2).collect();
    /// assert_eq!(c, [vec![0, 1], vec![2, 3], vec![4]]);
    /// ```
    #[track_caller]
    fn chunks(self, chunk_size: usize) -> Chunks<Self> {
        assert!(chunk_size != 0, "chunk_size must not be zero");
        Chunks::new(self, chunk_size)
    }

    /// Folds each chunk of `chunk_size` items, starting from `identity()`: one value per
    /// chunk, in order.
    ///
    /// # Panics
    /// If `chunk_size` is 0.
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// let sums: Vec<u32> = (1..=7u32).into_par_iter().fold_chunks(3, || 0, |a, x| a + x).collect();
    /// assert_eq!(sums, [6, 15, 7]);
    /// ```
    #[track_caller]
    fn fold_chunks<T, ID, F>(
        self,
        chunk_size: usize,
        identity: ID,
        fold_op: F,
    ) -> FoldChunks<Self, ID, F>
    where
        ID: Fn() -> T + Send + Sync,
        F: Fn(T, Self::Item) -> T + Send + Sync,
        T: Send,
    {
        assert!(chunk_size != 0, "chunk_size must not be zero");
        FoldChunks::new(self, chunk_size, identity, fold_op)
    }

    /// Folds each chunk of `chunk_size` items, starting from a clone of `init`.
    ///
    /// # Panics
    /// If `chunk_size` is 0.
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// let sums: Vec<u32> = (1..=7u32).into_par_iter().fold_chunks_with(3, 0, |a, x| a + x).collect();
    /// assert_eq!(sums, [6, 15, 7]);
    /// ```
    #[track_caller]
    fn fold_chunks_with<T, F>(
        self,
        chunk_size: usize,
        init: T,
        fold_op: F,
    ) -> FoldChunksWith<Self, T, F>
    where
        T: Send + Clone,
        F: Fn(T, Self::Item) -> T + Send + Sync,
    {
        assert!(chunk_size != 0, "chunk_size must not be zero");
        FoldChunksWith::new(self, chunk_size, init, fold_op)
    }

    /// Compares the items with those of `other` lexicographically, as `Iterator::cmp` does.
    ///
    /// # Examples
    /// ```
    /// use std::cmp::Ordering;
    /// use throttle::prelude::*;
    /// assert_eq!([1, 2, 3].par_iter().cmp(&[1, 2, 4]), Ordering::Less);
    /// assert_eq!([1, 2].par_iter().cmp(&[1, 2, 0]), Ordering::Less);
    /// ```
    #[track_caller]
    fn cmp<I>(self, other: I) -> Ordering
    where
        I: IntoParallelIterator<Item = Self::Item, Iter: IndexedParallelIterator>,
        Self::Item: Ord,
    {
        let other = other.into_par_iter();
        let (a, b) = (self.len(), other.len());
        self.zip(other)
            .map(|(x, y)| Ord::cmp(&x, &y))
            .find_first(|&o| o != Ordering::Equal)
            .unwrap_or_else(|| a.cmp(&b))
    }

    /// Compares the items with those of `other` lexicographically, as `Iterator::partial_cmp`.
    ///
    /// # Examples
    /// ```
    /// use std::cmp::Ordering;
    /// use throttle::prelude::*;
    /// assert_eq!([1.0, 2.0].par_iter().partial_cmp(&[1.0, 3.0]), Some(Ordering::Less));
    /// assert_eq!([f64::NAN].par_iter().partial_cmp(&[1.0]), None);
    /// ```
    #[track_caller]
    fn partial_cmp<I>(self, other: I) -> Option<Ordering>
    where
        I: IntoParallelIterator<Iter: IndexedParallelIterator>,
        Self::Item: PartialOrd<I::Item>,
    {
        let other = other.into_par_iter();
        let (a, b) = (self.len(), other.len());
        self.zip(other)
            .map(|(x, y)| PartialOrd::partial_cmp(&x, &y))
            .find_first(|&o| o != Some(Ordering::Equal))
            .unwrap_or_else(|| Some(a.cmp(&b)))
    }

    /// True if the items equal those of `other`, one by one, and there are as many.
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// assert!((0..3u32).into_par_iter().eq(vec![0u32, 1, 2]));
    /// ```
    #[track_caller]
    fn eq<I>(self, other: I) -> bool
    where
        I: IntoParallelIterator<Iter: IndexedParallelIterator>,
        Self::Item: PartialEq<I::Item>,
    {
        let other = other.into_par_iter();
        self.len() == other.len() && self.zip(other).all(|(x, y)| x.eq(&y))
    }

    /// The opposite of [`eq`](IndexedParallelIterator::eq).
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// assert!((0..3u32).into_par_iter().ne(vec![0u32, 1]));
    /// ```
    #[track_caller]
    fn ne<I>(self, other: I) -> bool
    where
        I: IntoParallelIterator<Iter: IndexedParallelIterator>,
        Self::Item: PartialEq<I::Item>,
    {
        !self.eq(other)
    }

    /// True if the items compare lexicographically less than those of `other`.
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// assert!([1, 2].par_iter().lt(&[1, 3]));
    /// ```
    #[track_caller]
    fn lt<I>(self, other: I) -> bool
    where
        I: IntoParallelIterator<Iter: IndexedParallelIterator>,
        Self::Item: PartialOrd<I::Item>,
    {
        self.partial_cmp(other) == Some(Ordering::Less)
    }

    /// True if the items compare lexicographically less than or equal to those of `other`.
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// assert!([1, 2].par_iter().le(&[1, 2]));
    /// ```
    #[track_caller]
    fn le<I>(self, other: I) -> bool
    where
        I: IntoParallelIterator<Iter: IndexedParallelIterator>,
        Self::Item: PartialOrd<I::Item>,
    {
        let ord = self.partial_cmp(other);
        ord == Some(Ordering::Equal) || ord == Some(Ordering::Less)
    }

    /// True if the items compare lexicographically greater than those of `other`.
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// assert!([1, 3].par_iter().gt(&[1, 2]));
    /// ```
    #[track_caller]
    fn gt<I>(self, other: I) -> bool
    where
        I: IntoParallelIterator<Iter: IndexedParallelIterator>,
        Self::Item: PartialOrd<I::Item>,
    {
        self.partial_cmp(other) == Some(Ordering::Greater)
    }

    /// True if the items compare lexicographically greater than or equal to those of `other`.
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// assert!([1, 3].par_iter().ge(&[1, 3]));
    /// ```
    #[track_caller]
    fn ge<I>(self, other: I) -> bool
    where
        I: IntoParallelIterator<Iter: IndexedParallelIterator>,
        Self::Item: PartialOrd<I::Item>,
    {
        let ord = self.partial_cmp(other);
        ord == Some(Ordering::Equal) || ord == Some(Ordering::Greater)
    }

    /// Pairs each item with its index.
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// let v: Vec<(usize, char)> = ['a', 'b'].par_iter().copied().enumerate().collect();
    /// assert_eq!(v, [(0, 'a'), (1, 'b')]);
    /// ```
    fn enumerate(self) -> Enumerate<Self> {
        Enumerate::new(self)
    }

    /// Every `step`-th item, starting with the first.
    ///
    /// # Panics
    /// If `step` is 0.
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// let v: Vec<u32> = (0..10u32).into_par_iter().step_by(3).collect();
    /// assert_eq!(v, [0, 3, 6, 9]);
    /// ```
    #[track_caller]
    fn step_by(self, step: usize) -> StepBy<Self> {
        assert!(step != 0, "step_by: step must be non-zero");
        StepBy::new(self, step)
    }

    /// All but the first `n` items (none if there are fewer). The first `n` still run through
    /// the adapters before `skip` (for their side effects, as in rayon), in parallel and at
    /// once; their items are dropped.
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// let v: Vec<u32> = (0..5u32).into_par_iter().skip(3).collect();
    /// assert_eq!(v, [3, 4]);
    /// ```
    fn skip(self, n: usize) -> Skip<Self> {
        Skip::new(self, n)
    }

    /// The first `n` items (all if there are fewer); the others are dropped unconsumed.
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// let v: Vec<u32> = (0..100u32).into_par_iter().take(3).collect();
    /// assert_eq!(v, [0, 1, 2]);
    /// ```
    fn take(self, n: usize) -> Take<Self> {
        Take::new(self, n)
    }

    /// The index of some item that satisfies `predicate` (not necessarily the first).
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// let v = [3, 8, 5];
    /// assert_eq!(v.par_iter().position_any(|&x| x == 8), Some(1));
    /// assert_eq!(v.par_iter().position_any(|&x| x == 9), None);
    /// ```
    #[track_caller]
    fn position_any<P>(self, predicate: P) -> Option<usize>
    where
        P: Fn(Self::Item) -> bool + Sync + Send,
    {
        let (i, _) = self.map(predicate).enumerate().find_any(|&(_, hit)| hit)?;
        Some(i)
    }

    /// The index of the first item that satisfies `predicate`.
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// let v = [3, 8, 5, 8];
    /// assert_eq!(v.par_iter().position_first(|&x| x == 8), Some(1));
    /// ```
    #[track_caller]
    fn position_first<P>(self, predicate: P) -> Option<usize>
    where
        P: Fn(Self::Item) -> bool + Sync + Send,
    {
        let (i, _) = self
            .map(predicate)
            .enumerate()
            .find_first(|&(_, hit)| hit)?;
        Some(i)
    }

    /// The index of the last item that satisfies `predicate`.
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// let v = [3, 8, 5, 8];
    /// assert_eq!(v.par_iter().position_last(|&x| x == 8), Some(3));
    /// ```
    #[track_caller]
    fn position_last<P>(self, predicate: P) -> Option<usize>
    where
        P: Fn(Self::Item) -> bool + Sync + Send,
    {
        let (i, _) = self.map(predicate).enumerate().find_last(|&(_, hit)| hit)?;
        Some(i)
    }

    /// The index of some item that satisfies `predicate`: the same as
    /// [`position_any`](IndexedParallelIterator::position_any) (rayon's older name).
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// #[allow(deprecated)]
    /// let i = [3, 8, 5].par_iter().position(|&x| x == 5);
    /// assert_eq!(i, Some(2));
    /// ```
    #[deprecated(
        note = "parallel `position` does not search in order -- use `position_any`, \
                         `position_first`, or `position_last`"
    )]
    #[track_caller]
    fn position<P>(self, predicate: P) -> Option<usize>
    where
        P: Fn(Self::Item) -> bool + Sync + Send,
    {
        self.position_any(predicate)
    }

    /// The indices of the items that satisfy `predicate`, in order.
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// let v: Vec<usize> = [1, 2, 3, 4, 5].par_iter().positions(|&x| x % 2 == 0).collect();
    /// assert_eq!(v, [1, 3]);
    /// ```
    fn positions<P>(self, predicate: P) -> Positions<Self, P>
    where
        P: Fn(Self::Item) -> bool + Sync + Send,
    {
        Positions::new(self, predicate)
    }

    /// The items in reverse order.
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// let v: Vec<u32> = (0..5u32).into_par_iter().rev().collect();
    /// assert_eq!(v, [4, 3, 2, 1, 0]);
    /// let firsts: Vec<(usize, char)> = ['a', 'b', 'c'].par_iter().copied().rev().enumerate().collect();
    /// assert_eq!(firsts, [(0, 'c'), (1, 'b'), (2, 'a')]);
    /// ```
    fn rev(self) -> Rev<Self> {
        Rev::new(self)
    }

    /// Never splits the work into pieces shorter than `min` items: a way to keep tiny items
    /// together when each costs next to nothing.
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// let s: u64 = (0..10_000u64).into_par_iter().with_min_len(1000).sum();
    /// assert_eq!(s, 49_995_000);
    /// ```
    fn with_min_len(self, min: usize) -> MinLen<Self> {
        MinLen::new(self, min)
    }

    /// Never lets a piece of work hold more than `max` items (1 gives every item a piece of
    /// its own: `fold` then folds each item alone).
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// let pieces = (0..10u32).into_par_iter().with_max_len(1).fold(|| 0, |n, _| n + 1).count();
    /// assert_eq!(pieces, 10);
    /// ```
    fn with_max_len(self, max: usize) -> MaxLen<Self> {
        MaxLen::new(self, max)
    }

    /// The number of items.
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// assert_eq!((0..42u32).into_par_iter().len(), 42);
    /// ```
    fn len(&self) -> usize;

    /// Drives the iterator into an indexed `consumer` (one that is split at item indices);
    /// see [`plumbing`](super::plumbing). Sources usually write
    /// [`bridge(self, consumer)`](super::plumbing::bridge).
    ///
    /// # Examples
    /// ```
    /// use throttle::iter::plumbing::*;
    /// use throttle::prelude::*;
    ///
    /// // `collect_into_vec` drives the iterator with an indexed consumer.
    /// let mut v = Vec::new();
    /// (0..4u8).into_par_iter().map(|x| x * 2).collect_into_vec(&mut v);
    /// assert_eq!(v, [0, 2, 4, 6]);
    /// ```
    fn drive<C: Consumer<Self::Item>>(self, consumer: C) -> C::Result;

    /// Calls `callback` with the iterator's [`Producer`](super::plumbing::Producer); see
    /// [`ProducerCallback`] and [`plumbing`](super::plumbing).
    ///
    /// # Examples
    /// ```
    /// use throttle::iter::plumbing::{Producer, ProducerCallback};
    /// use throttle::prelude::*;
    ///
    /// struct Backwards;
    /// impl<T> ProducerCallback<T> for Backwards {
    ///     type Output = Vec<T>;
    ///     fn callback<P: Producer<Item = T>>(self, producer: P) -> Vec<T> {
    ///         producer.into_iter().rev().collect()
    ///     }
    /// }
    /// assert_eq!((0..4).into_par_iter().with_producer(Backwards), [3, 2, 1, 0]);
    /// ```
    fn with_producer<CB: ProducerCallback<Self::Item>>(self, callback: CB) -> CB::Output;
}
