//! `par_drain`: taking the items out of a collection, as a parallel iterator.
//!
//! A `Vec`'s drain (in `vec.rs`) and a `String`'s run in place and close the gap when dropped.
//! The other collections' items are taken out on the calling thread when `par_drain` is called
//! (the collection is changed at once, whether or not the iterator runs) and then split as a
//! `Vec`.

use super::collections::{binary_heap, hash_map, hash_set, vec_deque};
use super::plumbing::UnindexedConsumer;
use super::str::ParallelString;
use super::vec::{checked_range, IntoIter as VecIter};
use super::ParallelIterator;
use std::collections::{BinaryHeap, HashMap, HashSet, VecDeque};
use std::hash::{BuildHasher, Hash};
use std::ops::{Range, RangeBounds};

/// The chars of a range of a `String`, removed from it; from
/// [`ParallelDrainRange::par_drain`] on a `&mut String`. The range is removed when the drain
/// is dropped, whether it ran or not.
///
/// # Examples
/// ```
/// use throttle::prelude::*;
/// let mut s = String::from("hello world");
/// let n = s.par_drain(..6).filter(|c| *c == 'l').count();
/// assert_eq!((n, s.as_str()), (2, "world"));
/// ```
#[derive(Debug)]
pub struct StringDrain<'a> {
    string: &'a mut String,
    range: Range<usize>,
}

impl ParallelIterator for StringDrain<'_> {
    type Item = char;

    fn drive_unindexed<C: UnindexedConsumer<char>>(self, consumer: C) -> C::Result {
        self.string[self.range.clone()]
            .par_chars()
            .drive_unindexed(consumer)
    }
}

impl Drop for StringDrain<'_> {
    fn drop(&mut self) {
        self.string.drain(self.range.clone());
    }
}

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

impl<'a, T: Send> ParallelDrainRange<usize> for &'a mut VecDeque<T> {
    type Iter = vec_deque::Drain<'a, T>;
    type Item = T;
    fn par_drain<R: RangeBounds<usize>>(self, range: R) -> vec_deque::Drain<'a, T> {
        vec_deque::Drain {
            inner: VecIter::new(self.drain(range).collect()),
            marker: std::marker::PhantomData,
        }
    }
}

impl<'a> ParallelDrainRange<usize> for &'a mut String {
    type Iter = StringDrain<'a>;
    type Item = char;
    #[track_caller]
    fn par_drain<R: RangeBounds<usize>>(self, range: R) -> StringDrain<'a> {
        let range = checked_range(range, self.len());
        assert!(
            self.is_char_boundary(range.start) && self.is_char_boundary(range.end),
            "par_drain: range {range:?} is not on char boundaries"
        );
        StringDrain {
            string: self,
            range,
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
    type Iter: ParallelIterator<Item = Self::Item>;
    /// Its items.
    type Item: Send;
    /// Removes all items and iterates over them.
    fn par_drain(self) -> Self::Iter;
}

impl<'a, T: Send> ParallelDrainFull for &'a mut BinaryHeap<T> {
    type Iter = binary_heap::Drain<'a, T>;
    type Item = T;
    fn par_drain(self) -> binary_heap::Drain<'a, T> {
        binary_heap::Drain {
            inner: VecIter::new(self.drain().collect()),
            marker: std::marker::PhantomData,
        }
    }
}

impl<'a, K: Send + Eq + Hash, V: Send, S: BuildHasher> ParallelDrainFull
    for &'a mut HashMap<K, V, S>
{
    type Iter = hash_map::Drain<'a, K, V>;
    type Item = (K, V);
    fn par_drain(self) -> hash_map::Drain<'a, K, V> {
        hash_map::Drain {
            inner: VecIter::new(self.drain().collect()),
            marker: std::marker::PhantomData,
        }
    }
}

impl<'a, T: Send + Eq + Hash, S: BuildHasher> ParallelDrainFull for &'a mut HashSet<T, S> {
    type Iter = hash_set::Drain<'a, T>;
    type Item = T;
    fn par_drain(self) -> hash_set::Drain<'a, T> {
        hash_set::Drain {
            inner: VecIter::new(self.drain().collect()),
            marker: std::marker::PhantomData,
        }
    }
}
