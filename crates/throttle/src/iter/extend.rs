//! `par_extend`: adding a parallel iterator's items to an existing collection, in order.

use super::collect::FromParallelIterator;
use super::IntoParallelIterator;
use std::collections::{BTreeMap, BTreeSet, BinaryHeap, HashMap, HashSet, LinkedList, VecDeque};
use std::hash::{BuildHasher, Hash};

/// A collection that can be extended from a parallel iterator. The items are collected in
/// parallel (in order), then appended.
///
/// # Examples
/// ```
/// use throttle::prelude::*;
/// let mut v = vec![0u32];
/// v.par_extend((1..4u32).into_par_iter().map(|x| x * 10));
/// assert_eq!(v, [0, 10, 20, 30]);
/// ```
pub trait ParallelExtend<T: Send> {
    /// Appends the items of `iter`, in order.
    ///
    /// # Examples
    /// ```
    /// use std::collections::HashSet;
    /// use throttle::prelude::*;
    /// let mut seen: HashSet<u32> = HashSet::new();
    /// seen.par_extend([3u32, 1, 3].par_iter().copied());
    /// assert_eq!(seen.len(), 2);
    /// ```
    #[track_caller]
    fn par_extend<I>(&mut self, iter: I)
    where
        I: IntoParallelIterator<Item = T>;
}

impl<T: Send> ParallelExtend<T> for Vec<T> {
    fn par_extend<I>(&mut self, iter: I)
    where
        I: IntoParallelIterator<Item = T>,
    {
        let mut more = Vec::from_par_iter(iter);
        self.append(&mut more);
    }
}

/// Collections extended through `Extend` from the collected items.
macro_rules! via_extend {
    ($([$($g:tt)*] $t:ty => $c:ty;)*) => {$(
        impl<$($g)*> ParallelExtend<$t> for $c {
            fn par_extend<I>(&mut self, iter: I)
            where
                I: IntoParallelIterator<Item = $t>,
            {
                self.extend(Vec::from_par_iter(iter));
            }
        }
    )*};
}

via_extend! {
    [T: Send] T => VecDeque<T>;
    [T: Send] T => LinkedList<T>;
    [T: Send + Ord] T => BinaryHeap<T>;
    [T: Send + Ord] T => BTreeSet<T>;
    [K: Send + Ord, V: Send] (K, V) => BTreeMap<K, V>;
    [T: Send + Eq + Hash, S: BuildHasher] T => HashSet<T, S>;
    [K: Send + Eq + Hash, V: Send, S: BuildHasher] (K, V) => HashMap<K, V, S>;
    [] char => String;
    [] String => String;
    ['a] &'a str => String;
}
