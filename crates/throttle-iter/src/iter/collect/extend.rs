//! `par_extend`: adding a parallel iterator's items to an existing collection, in order.

use super::FromParallelIterator;
use crate::iter::{IntoParallelIterator, ParallelIterator};
use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet, BinaryHeap, HashMap, HashSet, LinkedList, VecDeque};
use std::ffi::{OsStr, OsString};
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
pub trait ParallelExtend<T>
where
    T: Send,
{
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
    fn par_extend<I>(&mut self, par_iter: I)
    where
        I: IntoParallelIterator<Item = T>;
}

/// Appends in place when the iterator knows its length (one move per item), else collects
/// the pieces and appends them.
impl<T: Send> ParallelExtend<T> for Vec<T> {
    fn par_extend<I>(&mut self, iter: I)
    where
        I: IntoParallelIterator<Item = T>,
    {
        super::extend_vec(self, iter.into_par_iter());
    }
}

/// Copies the items in, as [`ParallelExtend<T>`] for `Vec<T>` does for owned items.
impl<'a, T: Copy + Send + Sync + 'a> ParallelExtend<&'a T> for Vec<T> {
    fn par_extend<I>(&mut self, iter: I)
    where
        I: IntoParallelIterator<Item = &'a T>,
    {
        super::extend_vec(self, iter.into_par_iter().copied());
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
    ['a] &'a char => String;
    [] String => String;
    ['a] &'a str => String;
    [] Box<str> => String;
    ['a] Cow<'a, str> => String;
    ['a, T: Send + Sync + Copy + 'a] &'a T => VecDeque<T>;
    ['a, T: Send + Sync + Copy + 'a] &'a T => LinkedList<T>;
    ['a, T: Send + Sync + Copy + Ord + 'a] &'a T => BinaryHeap<T>;
    ['a, T: Send + Sync + Copy + Ord + 'a] &'a T => BTreeSet<T>;
    ['a, K: Send + Sync + Copy + Ord + 'a, V: Send + Sync + Copy + 'a] (&'a K, &'a V) => BTreeMap<K, V>;
    ['a, T: Send + Sync + Copy + Eq + Hash + 'a, S: BuildHasher] &'a T => HashSet<T, S>;
    ['a, K: Send + Sync + Copy + Eq + Hash + 'a, V: Send + Sync + Copy + 'a, S: BuildHasher] (&'a K, &'a V) => HashMap<K, V, S>;
}

impl<'a> ParallelExtend<&'a OsStr> for OsString {
    fn par_extend<I>(&mut self, iter: I)
    where
        I: IntoParallelIterator<Item = &'a OsStr>,
    {
        self.extend(Vec::from_par_iter(iter));
    }
}

impl ParallelExtend<OsString> for OsString {
    fn par_extend<I>(&mut self, iter: I)
    where
        I: IntoParallelIterator<Item = OsString>,
    {
        self.extend(Vec::from_par_iter(iter));
    }
}

/// Extends whichever side the `Either` holds.
impl<L, R, T> ParallelExtend<T> for either::Either<L, R>
where
    L: ParallelExtend<T>,
    R: ParallelExtend<T>,
    T: Send,
{
    fn par_extend<I>(&mut self, iter: I)
    where
        I: IntoParallelIterator<Item = T>,
    {
        match self {
            either::Either::Left(l) => l.par_extend(iter),
            either::Either::Right(r) => r.par_extend(iter),
        }
    }
}

impl ParallelExtend<()> for () {
    fn par_extend<I>(&mut self, iter: I)
    where
        I: IntoParallelIterator<Item = ()>,
    {
        iter.into_par_iter().for_each(drop);
    }
}

/// Extends two collections from pairs, as `unzip` does.
impl<A, B, FromA, FromB> ParallelExtend<(A, B)> for (FromA, FromB)
where
    A: Send,
    B: Send,
    FromA: Send + ParallelExtend<A>,
    FromB: Send + ParallelExtend<B>,
{
    fn par_extend<I>(&mut self, iter: I)
    where
        I: IntoParallelIterator<Item = (A, B)>,
    {
        let (a, b): (Vec<A>, Vec<B>) = super::unzip(iter.into_par_iter());
        self.0.par_extend(a);
        self.1.par_extend(b);
    }
}

/// Extends two collections from `Either`s, as `partition_map` does.
impl<L, R, A, B> ParallelExtend<either::Either<L, R>> for (A, B)
where
    L: Send,
    R: Send,
    A: Send + ParallelExtend<L>,
    B: Send + ParallelExtend<R>,
{
    fn par_extend<I>(&mut self, iter: I)
    where
        I: IntoParallelIterator<Item = either::Either<L, R>>,
    {
        let (a, b): (Vec<L>, Vec<R>) = super::partition(iter.into_par_iter());
        self.0.par_extend(a);
        self.1.par_extend(b);
    }
}
