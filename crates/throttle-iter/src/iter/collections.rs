//! The standard collections as parallel iterators (the module `throttle::collections`, rayon's
//! `rayon::collections`): `par_iter`, `par_iter_mut` and `into_par_iter` on `BTreeMap`,
//! `BTreeSet`, `HashMap`, `HashSet`, `BinaryHeap`, `LinkedList` and `VecDeque`.
//!
//! A `VecDeque`'s references come from its two slices; the other collections cannot be split
//! in place, so their items (or references to them) are first gathered into a `Vec` on the
//! calling thread, as rayon does, and that `Vec` is split. All are exact-length iterators.

use super::chain::Chain;
use super::slice::{Iter as SliceIter, IterMut as SliceIterMut};
use super::vec::IntoIter as VecIter;
use super::{IntoParallelIterator, ParallelDrainFull, ParallelDrainRange};
use std::collections::{BinaryHeap, HashMap, HashSet, VecDeque};
use std::hash::{BuildHasher, Hash};
use std::ops::RangeBounds;

/// Implements `IntoParallelIterator` for a collection (by value or by reference) through a
/// `Vec` of its items.
macro_rules! via_vec {
    ([$($g:tt)*] $coll:ty => $iter:ident<$($ig:tt),*>, $item:ty, [$($b:tt)*]) => {
        impl<$($g)*> IntoParallelIterator for $coll where $($b)* {
            type Iter = $iter<$($ig),*>;
            type Item = $item;
            fn into_par_iter(self) -> Self::Iter {
                $iter { inner: VecIter::new(self.into_iter().collect()) }
            }
        }
    };
}

/// Parallel iterators of a `BinaryHeap` (in the heap's internal order, as its `iter()`).
pub mod binary_heap {
    use super::*;
    use std::collections::BinaryHeap;

    delegate!(
        /// The items of a `BinaryHeap`, moved out.
        IntoIter[T] => VecIter<T>, T, [T: Send]
    );
    delegate!(
        /// References to the items of a `BinaryHeap`.
        Iter['a, T] => VecIter<&'a T>, &'a T, [T: Sync + 'a]
    );
    /// The items drained from a `BinaryHeap`; from `par_drain()`.
    #[derive(Debug)]
    pub struct Drain<'a, T> {
        pub(crate) inner: VecIter<T>,
        pub(crate) marker: std::marker::PhantomData<&'a mut ()>,
    }
    delegate_impls!(Drain['a, T] => VecIter<T>, T, [T: Send]);
    impl<T: Send> IntoParallelIterator for BinaryHeap<T> {
        type Iter = IntoIter<T>;
        type Item = T;
        fn into_par_iter(self) -> IntoIter<T> {
            IntoIter {
                inner: VecIter::new(self.into_vec()),
            }
        }
    }
    via_vec!(['a, T: Sync + 'a] &'a BinaryHeap<T> => Iter<'a, T>, &'a T, []);
}

/// Parallel iterators of a `BTreeMap`, in key order.
pub mod btree_map {
    use super::*;
    use std::collections::BTreeMap;

    delegate!(
        /// The entries of a `BTreeMap`, moved out.
        IntoIter[K, V] => VecIter<(K, V)>, (K, V), [K: Send, V: Send]
    );
    delegate!(
        /// References to the entries of a `BTreeMap`.
        Iter['a, K, V] => VecIter<(&'a K, &'a V)>, (&'a K, &'a V), [K: Sync + 'a, V: Sync + 'a]
    );
    /// References to the entries of a `BTreeMap`, the values mutable.
    #[derive(Debug)]
    pub struct IterMut<'a, K, V> {
        pub(crate) inner: VecIter<(&'a K, &'a mut V)>,
    }
    delegate_impls!(IterMut['a, K, V] => VecIter<(&'a K, &'a mut V)>, (&'a K, &'a mut V), [K: Sync + 'a, V: Send + 'a]);
    via_vec!([K: Send, V: Send] BTreeMap<K, V> => IntoIter<K, V>, (K, V), []);
    via_vec!(['a, K: Sync + 'a, V: Sync + 'a] &'a BTreeMap<K, V> => Iter<'a, K, V>, (&'a K, &'a V), []);
    via_vec!(['a, K: Sync + 'a, V: Send + 'a] &'a mut BTreeMap<K, V> => IterMut<'a, K, V>, (&'a K, &'a mut V), []);
}

/// Parallel iterators of a `BTreeSet`, in order.
pub mod btree_set {
    use super::*;
    use std::collections::BTreeSet;

    delegate!(
        /// The items of a `BTreeSet`, moved out.
        IntoIter[T] => VecIter<T>, T, [T: Send]
    );
    delegate!(
        /// References to the items of a `BTreeSet`.
        Iter['a, T] => VecIter<&'a T>, &'a T, [T: Sync + 'a]
    );
    via_vec!([T: Send] BTreeSet<T> => IntoIter<T>, T, []);
    via_vec!(['a, T: Sync + 'a] &'a BTreeSet<T> => Iter<'a, T>, &'a T, []);
}

/// Parallel iterators of a `HashMap`, in the map's iteration order.
pub mod hash_map {
    use super::*;
    use std::collections::HashMap;

    delegate!(
        /// The entries of a `HashMap`, moved out.
        IntoIter[K, V] => VecIter<(K, V)>, (K, V), [K: Send, V: Send]
    );
    delegate!(
        /// References to the entries of a `HashMap`.
        Iter['a, K, V] => VecIter<(&'a K, &'a V)>, (&'a K, &'a V), [K: Sync + 'a, V: Sync + 'a]
    );
    /// References to the entries of a `HashMap`, the values mutable.
    #[derive(Debug)]
    pub struct IterMut<'a, K, V> {
        pub(crate) inner: VecIter<(&'a K, &'a mut V)>,
    }
    delegate_impls!(IterMut['a, K, V] => VecIter<(&'a K, &'a mut V)>, (&'a K, &'a mut V), [K: Sync + 'a, V: Send + 'a]);
    /// The entries drained from a `HashMap`; from `par_drain()`.
    #[derive(Debug)]
    pub struct Drain<'a, K, V> {
        pub(crate) inner: VecIter<(K, V)>,
        pub(crate) marker: std::marker::PhantomData<&'a mut ()>,
    }
    delegate_impls!(Drain['a, K, V] => VecIter<(K, V)>, (K, V), [K: Send, V: Send]);
    via_vec!([K: Send, V: Send, S] HashMap<K, V, S> => IntoIter<K, V>, (K, V), []);
    via_vec!(['a, K: Sync + 'a, V: Sync + 'a, S] &'a HashMap<K, V, S> => Iter<'a, K, V>, (&'a K, &'a V), []);
    via_vec!(['a, K: Sync + 'a, V: Send + 'a, S] &'a mut HashMap<K, V, S> => IterMut<'a, K, V>, (&'a K, &'a mut V), []);
}

/// Parallel iterators of a `HashSet`, in the set's iteration order.
pub mod hash_set {
    use super::*;
    use std::collections::HashSet;

    delegate!(
        /// The items of a `HashSet`, moved out.
        IntoIter[T] => VecIter<T>, T, [T: Send]
    );
    delegate!(
        /// References to the items of a `HashSet`.
        Iter['a, T] => VecIter<&'a T>, &'a T, [T: Sync + 'a]
    );
    /// The items drained from a `HashSet`; from `par_drain()`.
    #[derive(Debug)]
    pub struct Drain<'a, T> {
        pub(crate) inner: VecIter<T>,
        pub(crate) marker: std::marker::PhantomData<&'a mut ()>,
    }
    delegate_impls!(Drain['a, T] => VecIter<T>, T, [T: Send]);
    via_vec!([T: Send, S] HashSet<T, S> => IntoIter<T>, T, []);
    via_vec!(['a, T: Sync + 'a, S] &'a HashSet<T, S> => Iter<'a, T>, &'a T, []);
}

/// Parallel iterators of a `LinkedList`, in order.
pub mod linked_list {
    use super::*;
    use std::collections::LinkedList;

    delegate!(
        /// The items of a `LinkedList`, moved out.
        IntoIter[T] => VecIter<T>, T, [T: Send]
    );
    delegate!(
        /// References to the items of a `LinkedList`.
        Iter['a, T] => VecIter<&'a T>, &'a T, [T: Sync + 'a]
    );
    /// Mutable references to the items of a `LinkedList`.
    #[derive(Debug)]
    pub struct IterMut<'a, T> {
        pub(crate) inner: VecIter<&'a mut T>,
    }
    delegate_impls!(IterMut['a, T] => VecIter<&'a mut T>, &'a mut T, [T: Send + 'a]);
    via_vec!([T: Send] LinkedList<T> => IntoIter<T>, T, []);
    via_vec!(['a, T: Sync + 'a] &'a LinkedList<T> => Iter<'a, T>, &'a T, []);
    via_vec!(['a, T: Send + 'a] &'a mut LinkedList<T> => IterMut<'a, T>, &'a mut T, []);
}

/// Parallel iterators of a `VecDeque`, front to back; references come straight from its two
/// slices.
pub mod vec_deque {
    use super::*;
    use std::collections::VecDeque;

    delegate!(
        /// The items of a `VecDeque`, moved out.
        IntoIter[T] => VecIter<T>, T, [T: Send]
    );
    delegate!(
        /// References to the items of a `VecDeque`.
        Iter['a, T] => Chain<SliceIter<'a, T>, SliceIter<'a, T>>, &'a T, [T: Sync + 'a]
    );
    /// Mutable references to the items of a `VecDeque`.
    #[derive(Debug)]
    pub struct IterMut<'a, T> {
        pub(crate) inner: Chain<SliceIterMut<'a, T>, SliceIterMut<'a, T>>,
    }
    delegate_impls!(IterMut['a, T] => Chain<SliceIterMut<'a, T>, SliceIterMut<'a, T>>, &'a mut T, [T: Send + 'a]);
    /// The items drained from a `VecDeque`; from `par_drain(range)`.
    #[derive(Debug)]
    pub struct Drain<'a, T> {
        pub(crate) inner: VecIter<T>,
        pub(crate) marker: std::marker::PhantomData<&'a mut ()>,
    }
    delegate_impls!(Drain['a, T] => VecIter<T>, T, [T: Send]);
    impl<T: Send> IntoParallelIterator for VecDeque<T> {
        type Iter = IntoIter<T>;
        type Item = T;
        fn into_par_iter(self) -> IntoIter<T> {
            IntoIter {
                inner: VecIter::new(Vec::from(self)),
            }
        }
    }
    impl<'a, T: Sync + 'a> IntoParallelIterator for &'a VecDeque<T> {
        type Iter = Iter<'a, T>;
        type Item = &'a T;
        fn into_par_iter(self) -> Iter<'a, T> {
            let (a, b) = self.as_slices();
            Iter {
                inner: Chain::new(SliceIter::new(a), SliceIter::new(b)),
            }
        }
    }
    impl<'a, T: Send + 'a> IntoParallelIterator for &'a mut VecDeque<T> {
        type Iter = IterMut<'a, T>;
        type Item = &'a mut T;
        fn into_par_iter(self) -> IterMut<'a, T> {
            let (a, b) = self.as_mut_slices();
            IterMut {
                inner: Chain::new(SliceIterMut::new(a), SliceIterMut::new(b)),
            }
        }
    }
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
