//! `par_drain`: taking the items out of a collection, as a parallel iterator. This file holds
//! the two traits; each collection implements them beside its other parallel iterators (a
//! `Vec`'s drain in `vec.rs`, a `String`'s in `string.rs`, the standard collections' in
//! `collections.rs`).
//!
//! A `Vec`'s drain and a `String`'s run in place and close the gap when dropped. The other
//! collections' items are taken out on the calling thread when `par_drain` is called (the
//! collection is changed at once, whether or not the iterator runs) and then split as a `Vec`.

use super::ParallelIterator;
use std::ops::RangeBounds;

/// `par_drain(range)`: removes a range of items from a `Vec`, `VecDeque` or `String` and
/// iterates over them in parallel, in order.
///
/// # Panics
/// If the range is out of bounds (or, for a `String`, not on char boundaries), as the
/// sequential `drain` does.
///
/// # Examples
/// ```
/// use throttle::prelude::*;
/// let mut v: Vec<u32> = (0..10).collect();
/// let taken: Vec<u32> = v.par_drain(2..5).collect();
/// assert_eq!((taken, v), (vec![2, 3, 4], vec![0, 1, 5, 6, 7, 8, 9]));
/// ```
pub trait ParallelDrainRange<Idx = usize> {
    /// The parallel iterator.
    type Iter: ParallelIterator<Item = Self::Item>;
    /// Its items.
    type Item: Send;
    /// Removes the items of `range` and iterates over them.
    fn par_drain<R: RangeBounds<Idx>>(self, range: R) -> Self::Iter;
}

/// `par_drain()`: removes all items of a `HashMap`, `HashSet` or `BinaryHeap` and iterates
/// over them in parallel.
///
/// # Examples
/// ```
/// use std::collections::HashSet;
/// use throttle::prelude::*;
/// let mut s: HashSet<u32> = (0..100).collect();
/// assert_eq!(s.par_drain().sum::<u32>(), 4950);
/// assert!(s.is_empty());
/// ```
pub trait ParallelDrainFull {
    /// The parallel iterator.
    type Iter: ParallelIterator<Item = Self::Item>;
    /// Its items.
    type Item: Send;
    /// Removes all items and iterates over them.
    fn par_drain(self) -> Self::Iter;
}
