//! Parallel iterators that know their length and the index of every item: `enumerate`, `zip`,
//! `chunks`, and positions.

use super::plumbing::{IndexedProducer, Producer};
use super::{IntoParallelIterator, ParallelIterator};

/// A [`ParallelIterator`] that knows its exact length and the index of every item: slices,
/// `Vec`s, ranges, and `map`, `enumerate`, `zip`, ... of those (not `filter`).
///
/// # Examples
/// ```
/// use throttle::prelude::*;
/// let v = vec![10, 20, 30];
/// let it = v.par_iter().map(|x| x / 10);
/// assert_eq!(it.len(), 3);
/// ```
pub trait IndexedParallelIterator: ParallelIterator + IndexedProducer {
    /// The number of items.
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// assert_eq!((0..42u32).into_par_iter().len(), 42);
    /// ```
    fn len(&self) -> usize {
        self.base_len()
    }

    /// True if there are no items.
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// assert!((5..5u32).into_par_iter().is_empty());
    /// ```
    fn is_empty(&self) -> bool {
        self.base_len() == 0
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
        Enumerate {
            base: self,
            offset: 0,
        }
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
    fn zip<Z>(self, other: Z) -> Zip<Self, Z::Iter>
    where
        Z: IntoParallelIterator,
        Z::Iter: IndexedParallelIterator,
    {
        Zip {
            a: self,
            b: other.into_par_iter(),
        }
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
    fn chunks(self, size: usize) -> ItemChunks<Self> {
        assert!(size != 0, "chunks: size must be non-zero");
        ItemChunks { base: self, size }
    }

    /// The first `n` items (all if there are fewer); the others are dropped unconsumed.
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// let v: Vec<u32> = (0..100u32).into_par_iter().take(3).collect();
    /// assert_eq!(v, [0, 1, 2]);
    /// ```
    fn take(self, n: usize) -> Self {
        let n = n.min(self.base_len());
        self.split_at(n).0
    }

    /// All but the first `n` items (none if there are fewer); those are dropped unconsumed.
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// let v: Vec<u32> = (0..5u32).into_par_iter().skip(3).collect();
    /// assert_eq!(v, [3, 4]);
    /// ```
    fn skip(self, n: usize) -> Self {
        let n = n.min(self.base_len());
        self.split_at(n).1
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
    fn step_by(self, step: usize) -> StepBy<Self> {
        assert!(step != 0, "step_by: step must be non-zero");
        StepBy { base: self, step }
    }

    /// The items in reverse order. Its leaves run their piece backwards, so the base's
    /// sequential iterator must be double-ended: slices, `Vec`s, ranges, and `map`, `copied`,
    /// `cloned` of those, `step_by` of those whose length is exact in `std` (not `i64` or
    /// `u64` ranges); reverse before `enumerate`, not after.
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// let v: Vec<u32> = (0..5u32).into_par_iter().rev().collect();
    /// assert_eq!(v, [4, 3, 2, 1, 0]);
    /// let firsts: Vec<(usize, char)> = ['a', 'b', 'c'].par_iter().copied().rev().enumerate().collect();
    /// assert_eq!(firsts, [(0, 'c'), (1, 'b'), (2, 'a')]);
    /// ```
    fn rev(self) -> Rev<Self>
    where
        Self::IntoSeq: DoubleEndedIterator,
    {
        Rev { base: self }
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
        self.enumerate()
            .find_map_any(|(i, x)| predicate(x).then_some(i))
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
        self.enumerate()
            .find_map_first(|(i, x)| predicate(x).then_some(i))
    }
}

impl<P: ParallelIterator + IndexedProducer> IndexedParallelIterator for P {}

/// Pairs items with their index; see [`IndexedParallelIterator::enumerate`].
#[derive(Debug)]
pub struct Enumerate<P> {
    base: P,
    offset: usize,
}

impl<P: IndexedProducer> Producer for Enumerate<P> {
    type Item = (usize, P::Item);
    type IntoSeq = std::iter::Zip<std::ops::RangeFrom<usize>, P::IntoSeq>;
    fn base_len(&self) -> usize {
        self.base.base_len()
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        let (l, r) = self.base.split_at(index);
        (
            Enumerate {
                base: l,
                offset: self.offset,
            },
            Enumerate {
                base: r,
                offset: self.offset + index,
            },
        )
    }
    fn into_seq(self) -> Self::IntoSeq {
        (self.offset..).zip(self.base.into_seq())
    }
    fn min_len(&self) -> usize {
        self.base.min_len()
    }
    fn exact_len(&self) -> Option<usize> {
        self.base.exact_len()
    }
}

impl<P: IndexedProducer> IndexedProducer for Enumerate<P> {}

/// Pairs the items of two iterators; see [`IndexedParallelIterator::zip`].
#[derive(Debug)]
pub struct Zip<A, B> {
    a: A,
    b: B,
}

impl<A: IndexedProducer, B: IndexedProducer> Producer for Zip<A, B> {
    type Item = (A::Item, B::Item);
    type IntoSeq = std::iter::Zip<A::IntoSeq, B::IntoSeq>;
    fn base_len(&self) -> usize {
        self.a.base_len().min(self.b.base_len())
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        let (al, ar) = self.a.split_at(index);
        let (bl, br) = self.b.split_at(index);
        (Zip { a: al, b: bl }, Zip { a: ar, b: br })
    }
    fn into_seq(self) -> Self::IntoSeq {
        self.a.into_seq().zip(self.b.into_seq())
    }
    fn min_len(&self) -> usize {
        self.a.min_len().max(self.b.min_len())
    }
    fn exact_len(&self) -> Option<usize> {
        Some(self.a.exact_len()?.min(self.b.exact_len()?))
    }
}

impl<A: IndexedProducer, B: IndexedProducer> IndexedProducer for Zip<A, B> {}

/// Groups items into `Vec`s; see [`IndexedParallelIterator::chunks`].
#[derive(Debug)]
pub struct ItemChunks<P> {
    base: P,
    size: usize,
}

impl<P: IndexedProducer> Producer for ItemChunks<P> {
    type Item = Vec<P::Item>;
    type IntoSeq = ItemChunksSeq<P::IntoSeq>;
    fn base_len(&self) -> usize {
        self.base.base_len().div_ceil(self.size)
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        let at = index.saturating_mul(self.size).min(self.base.base_len());
        let (l, r) = self.base.split_at(at);
        let size = self.size;
        (ItemChunks { base: l, size }, ItemChunks { base: r, size })
    }
    fn into_seq(self) -> Self::IntoSeq {
        ItemChunksSeq {
            iter: self.base.into_seq(),
            size: self.size,
        }
    }
    fn min_len(&self) -> usize {
        self.base.min_len().div_ceil(self.size)
    }
    fn exact_len(&self) -> Option<usize> {
        Some(self.base.exact_len()?.div_ceil(self.size))
    }
}

impl<P: IndexedProducer> IndexedProducer for ItemChunks<P> {}

/// The sequential iterator of an [`ItemChunks`] leaf.
#[derive(Debug)]
pub struct ItemChunksSeq<I> {
    iter: I,
    size: usize,
}

impl<I: Iterator> Iterator for ItemChunksSeq<I> {
    type Item = Vec<I::Item>;
    fn next(&mut self) -> Option<Vec<I::Item>> {
        let chunk: Vec<I::Item> = self.iter.by_ref().take(self.size).collect();
        (!chunk.is_empty()).then_some(chunk)
    }
}

/// Every `step`-th item; see [`IndexedParallelIterator::step_by`].
#[derive(Debug)]
pub struct StepBy<P> {
    base: P,
    step: usize,
}

impl<P: IndexedProducer> Producer for StepBy<P> {
    type Item = P::Item;
    type IntoSeq = std::iter::StepBy<P::IntoSeq>;
    fn base_len(&self) -> usize {
        self.base.base_len().div_ceil(self.step)
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        // The left piece holds base items [0, index * step): exactly `index` of ours, and the
        // right piece starts on one of ours, so its own `step_by` stays in phase.
        let cut = index.saturating_mul(self.step).min(self.base.base_len());
        let (l, r) = self.base.split_at(cut);
        let step = self.step;
        (StepBy { base: l, step }, StepBy { base: r, step })
    }
    fn into_seq(self) -> Self::IntoSeq {
        self.base.into_seq().step_by(self.step)
    }
    fn min_len(&self) -> usize {
        self.base.min_len().div_ceil(self.step).max(1)
    }
    fn exact_len(&self) -> Option<usize> {
        self.base.exact_len().map(|n| n.div_ceil(self.step))
    }
}

impl<P: IndexedProducer> IndexedProducer for StepBy<P> {}

/// The items in reverse order; see [`IndexedParallelIterator::rev`].
#[derive(Debug)]
pub struct Rev<P> {
    base: P,
}

impl<P> Producer for Rev<P>
where
    P: IndexedProducer,
    P::IntoSeq: DoubleEndedIterator,
{
    type Item = P::Item;
    type IntoSeq = std::iter::Rev<P::IntoSeq>;
    fn base_len(&self) -> usize {
        self.base.base_len()
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        // Our first `index` items are the base's last `index`.
        let n = self.base.base_len();
        let (l, r) = self.base.split_at(n - index.min(n));
        (Rev { base: r }, Rev { base: l })
    }
    fn into_seq(self) -> Self::IntoSeq {
        self.base.into_seq().rev()
    }
    fn min_len(&self) -> usize {
        self.base.min_len()
    }
    fn exact_len(&self) -> Option<usize> {
        self.base.exact_len()
    }
}

impl<P> IndexedProducer for Rev<P>
where
    P: IndexedProducer,
    P::IntoSeq: DoubleEndedIterator,
{
}
