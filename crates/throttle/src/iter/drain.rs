//! `par_drain`: taking the items out of a collection, as a parallel iterator.
//!
//! The items are taken out on the calling thread when `par_drain` is called (the collection
//! is changed at once, whether or not the iterator runs) and then split as a `Vec`.

use super::collections::{binary_heap, hash_map, hash_set, vec_deque};
use super::vec::IntoIter as VecIter;
use std::collections::{BinaryHeap, HashMap, HashSet, VecDeque};
use std::hash::{BuildHasher, Hash};
use std::ops::RangeBounds;

delegate!(
    /// The items drained from a `Vec`; from [`ParallelDrainRange::par_drain`].
    Drain[T] => VecIter<T>, T, [T: Send]
);

delegate!(
    /// The chars drained from a `String`; from [`ParallelDrainRange::par_drain`].
    StringDrain[] => VecIter<char>, char, []
);

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
    type Iter: super::ParallelIterator<Item = Self::Item>;
    /// Its items.
    type Item: Send;
    /// Removes the items of `range` and iterates over them.
    fn par_drain<R: RangeBounds<Idx>>(self, range: R) -> Self::Iter;
}

impl<T: Send> ParallelDrainRange<usize> for &mut Vec<T> {
    type Iter = Drain<T>;
    type Item = T;
    fn par_drain<R: RangeBounds<usize>>(self, range: R) -> Drain<T> {
        Drain {
            inner: VecIter::new(self.drain(range).collect()),
        }
    }
}

impl<T: Send> ParallelDrainRange<usize> for &mut VecDeque<T> {
    type Iter = vec_deque::Drain<T>;
    type Item = T;
    fn par_drain<R: RangeBounds<usize>>(self, range: R) -> vec_deque::Drain<T> {
        vec_deque::Drain {
            inner: VecIter::new(self.drain(range).collect()),
        }
    }
}

impl ParallelDrainRange<usize> for &mut String {
    type Iter = StringDrain;
    type Item = char;
    fn par_drain<R: RangeBounds<usize>>(self, range: R) -> StringDrain {
        StringDrain {
            inner: VecIter::new(self.drain(range).collect()),
        }
    }
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
    type Iter: super::ParallelIterator<Item = Self::Item>;
    /// Its items.
    type Item: Send;
    /// Removes all items and iterates over them.
    fn par_drain(self) -> Self::Iter;
}

impl<T: Send> ParallelDrainFull for &mut BinaryHeap<T> {
    type Iter = binary_heap::Drain<T>;
    type Item = T;
    fn par_drain(self) -> binary_heap::Drain<T> {
        binary_heap::Drain {
            inner: VecIter::new(self.drain().collect()),
        }
    }
}

impl<K: Send + Eq + Hash, V: Send, S: BuildHasher> ParallelDrainFull for &mut HashMap<K, V, S> {
    type Iter = hash_map::Drain<K, V>;
    type Item = (K, V);
    fn par_drain(self) -> hash_map::Drain<K, V> {
        hash_map::Drain {
            inner: VecIter::new(self.drain().collect()),
        }
    }
}

impl<T: Send + Eq + Hash, S: BuildHasher> ParallelDrainFull for &mut HashSet<T, S> {
    type Iter = hash_set::Drain<T>;
    type Item = T;
    fn par_drain(self) -> hash_set::Drain<T> {
        hash_set::Drain {
            inner: VecIter::new(self.drain().collect()),
        }
    }
}
