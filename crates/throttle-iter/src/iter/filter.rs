//! Adapters that drop or add items, so that indices are lost: `filter`, `filter_map`,
//! `flat_map_iter`, `flatten_iter` and `positions`. Each is an op ([`ItemOp`]) for the shared
//! plumbing of `adapt.rs`: a folder that hands its base only what passes.

use super::adapt::ItemOp;
use super::plumbing::{Folder, UnindexedConsumer};
use super::{IndexedParallelIterator, ParallelIterator};
use throttle_core::seam::inlined;

/// Declares an op that holds a reference to the adapter's closure, and its folder, whose
/// `consume_iter` hands the base `$iter` (built from `iter` and the closure `f`).
macro_rules! closure_op {
    ($op:ident, $folder:ident) => {
        /// The op of the adapter of the same name: a reference to its closure.
        pub(crate) struct $op<'f, F>(&'f F);

        impl<F> Clone for $op<'_, F> {
            fn clone(&self) -> Self {
                $op(self.0)
            }
        }

        /// The folder of the adapter of the same name.
        pub(crate) struct $folder<'f, C, F> {
            base: C,
            f: &'f F,
        }
    };
}

/// The parts of a folder that only forward to the base.
macro_rules! forward_folder {
    () => {
        fn complete(self) -> C::Result {
            self.base.complete()
        }
        fn full(&self) -> bool {
            self.base.full()
        }
    };
}

/// Keeps the items a predicate accepts; see [`ParallelIterator::filter`].
///
/// # Examples
/// ```
/// use throttle::prelude::*;
/// let evens: Vec<u32> = (0..10u32).into_par_iter().filter(|x| x % 2 == 0).collect();
/// assert_eq!(evens, [0, 2, 4, 6, 8]);
/// ```
#[derive(Clone)]
#[must_use = "iterator adaptors are lazy and do nothing unless consumed"]
pub struct Filter<I, P> {
    base: I,
    rest: P,
}

debug_base!(Filter[P]);

impl<I, P> Filter<I, P> {
    pub(super) fn new(base: I, filter_op: P) -> Self {
        Filter {
            base,
            rest: filter_op,
        }
    }
}

op_unindexed!(impl[I, P] Filter<I, P> => I::Item,
    where [P: Fn(&I::Item) -> bool + Sync + Send,],
    |p| FilterOp(&p));

closure_op!(FilterOp, FilterFolder);

impl<'f, T, P: Fn(&T) -> bool + Sync> ItemOp<T> for FilterOp<'f, P> {
    type Out = T;
    type Folder<C: Folder<T>> = FilterFolder<'f, C, P>;
    fn folder<C: Folder<T>>(self, base: C) -> Self::Folder<C> {
        FilterFolder { base, f: self.0 }
    }
}

impl<T, C: Folder<T>, P: Fn(&T) -> bool> Folder<T> for FilterFolder<'_, C, P> {
    type Result = C::Result;
    fn consume(self, item: T) -> Self {
        let base = if (self.f)(&item) {
            self.base.consume(item)
        } else {
            self.base
        };
        FilterFolder { base, f: self.f }
    }
    fn consume_iter<It: IntoIterator<Item = T>>(self, iter: It) -> Self {
        let p = self.f;
        FilterFolder {
            base: self.base.consume_iter(iter.into_iter().filter(|x| p(x))),
            f: p,
        }
    }
    forward_folder!();
}

/// Maps items to `Option`s and keeps the `Some` values; see [`ParallelIterator::filter_map`].
///
/// # Examples
/// ```
/// use throttle::prelude::*;
/// let n: Vec<i32> = ["1", "x", "3"].par_iter().filter_map(|s| s.parse().ok()).collect();
/// assert_eq!(n, [1, 3]);
/// ```
#[derive(Clone)]
#[must_use = "iterator adaptors are lazy and do nothing unless consumed"]
pub struct FilterMap<I, P> {
    base: I,
    rest: P,
}

debug_base!(FilterMap[P]);

impl<I, P> FilterMap<I, P> {
    pub(super) fn new(base: I, filter_op: P) -> Self {
        FilterMap {
            base,
            rest: filter_op,
        }
    }
}

op_unindexed!(impl[I, P, R] FilterMap<I, P> => R,
    where [P: Fn(I::Item) -> Option<R> + Sync + Send, R: Send,],
    |p| FilterMapOp(&p));

closure_op!(FilterMapOp, FilterMapFolder);

impl<'f, T, R, P: Fn(T) -> Option<R> + Sync> ItemOp<T> for FilterMapOp<'f, P> {
    type Out = R;
    type Folder<C: Folder<R>> = FilterMapFolder<'f, C, P>;
    fn folder<C: Folder<R>>(self, base: C) -> Self::Folder<C> {
        FilterMapFolder { base, f: self.0 }
    }
}

impl<T, R, C: Folder<R>, P: Fn(T) -> Option<R>> Folder<T> for FilterMapFolder<'_, C, P> {
    type Result = C::Result;
    fn consume(self, item: T) -> Self {
        let base = match (self.f)(item) {
            Some(r) => self.base.consume(r),
            None => self.base,
        };
        FilterMapFolder { base, f: self.f }
    }
    fn consume_iter<It: IntoIterator<Item = T>>(self, iter: It) -> Self {
        FilterMapFolder {
            base: self
                .base
                .consume_iter(iter.into_iter().filter_map(inlined(self.f))),
            f: self.f,
        }
    }
    forward_folder!();
}

/// Maps each item to a sequential iterator and flattens; see
/// [`ParallelIterator::flat_map_iter`].
///
/// # Examples
/// ```
/// use throttle::prelude::*;
/// let v: Vec<u32> = (1..4u32).into_par_iter().flat_map_iter(|i| 0..i).collect();
/// assert_eq!(v, [0, 0, 1, 0, 1, 2]);
/// ```
#[derive(Clone)]
#[must_use = "iterator adaptors are lazy and do nothing unless consumed"]
pub struct FlatMapIter<I, F> {
    base: I,
    rest: F,
}

debug_base!(FlatMapIter[F]);

impl<I, F> FlatMapIter<I, F> {
    pub(super) fn new(base: I, map_op: F) -> Self {
        FlatMapIter { base, rest: map_op }
    }
}

op_unindexed!(impl[I, F, SI] FlatMapIter<I, F> => SI::Item,
    where [F: Fn(I::Item) -> SI + Sync + Send, SI: IntoIterator<Item: Send>,],
    |f| FlatMapIterOp(&f));

closure_op!(FlatMapIterOp, FlatMapIterFolder);

impl<'f, T, SI, F> ItemOp<T> for FlatMapIterOp<'f, F>
where
    F: Fn(T) -> SI + Sync,
    SI: IntoIterator,
{
    type Out = SI::Item;
    type Folder<C: Folder<SI::Item>> = FlatMapIterFolder<'f, C, F>;
    fn folder<C: Folder<SI::Item>>(self, base: C) -> Self::Folder<C> {
        FlatMapIterFolder { base, f: self.0 }
    }
}

impl<T, SI, C, F> Folder<T> for FlatMapIterFolder<'_, C, F>
where
    F: Fn(T) -> SI,
    SI: IntoIterator,
    C: Folder<SI::Item>,
{
    type Result = C::Result;
    fn consume(self, item: T) -> Self {
        FlatMapIterFolder {
            base: self.base.consume_iter((self.f)(item)),
            f: self.f,
        }
    }
    fn consume_iter<It: IntoIterator<Item = T>>(self, iter: It) -> Self {
        FlatMapIterFolder {
            base: self
                .base
                .consume_iter(iter.into_iter().flat_map(inlined(self.f))),
            f: self.f,
        }
    }
    forward_folder!();
}

/// Flattens items that are sequential iterables; see [`ParallelIterator::flatten_iter`].
///
/// # Examples
/// ```
/// use throttle::prelude::*;
/// let v: Vec<u8> = vec![vec![1u8], vec![], vec![2, 3]].into_par_iter().flatten_iter().collect();
/// assert_eq!(v, [1, 2, 3]);
/// ```
#[derive(Debug, Clone)]
#[must_use = "iterator adaptors are lazy and do nothing unless consumed"]
pub struct FlattenIter<I> {
    base: I,
    rest: (),
}

impl<I> FlattenIter<I> {
    pub(super) fn new(base: I) -> Self {
        FlattenIter { base, rest: () }
    }
}

op_unindexed!(impl[I] FlattenIter<I> => <I::Item as IntoIterator>::Item,
    where [I::Item: IntoIterator<Item: Send>,],
    |()| FlattenIterOp);

/// The op of [`FlattenIter`].
#[derive(Clone, Copy)]
pub(crate) struct FlattenIterOp;

/// The folder of [`FlattenIter`].
pub(crate) struct FlattenIterFolder<C> {
    base: C,
}

impl<T: IntoIterator> ItemOp<T> for FlattenIterOp {
    type Out = T::Item;
    type Folder<C: Folder<T::Item>> = FlattenIterFolder<C>;
    fn folder<C: Folder<T::Item>>(self, base: C) -> Self::Folder<C> {
        FlattenIterFolder { base }
    }
}

impl<T: IntoIterator, C: Folder<T::Item>> Folder<T> for FlattenIterFolder<C> {
    type Result = C::Result;
    fn consume(self, item: T) -> Self {
        FlattenIterFolder {
            base: self.base.consume_iter(item),
        }
    }
    fn consume_iter<It: IntoIterator<Item = T>>(self, iter: It) -> Self {
        FlattenIterFolder {
            base: self.base.consume_iter(iter.into_iter().flatten()),
        }
    }
    forward_folder!();
}

/// The indices of the items that satisfy a predicate; see
/// [`IndexedParallelIterator::positions`].
///
/// # Examples
/// ```
/// use throttle::prelude::*;
/// let v: Vec<usize> = [1, 2, 3, 4, 5].par_iter().positions(|&x| x % 2 == 0).collect();
/// assert_eq!(v, [1, 3]);
/// ```
#[derive(Clone)]
#[must_use = "iterator adaptors are lazy and do nothing unless consumed"]
pub struct Positions<I, P> {
    base: I,
    predicate: P,
}

debug_base!(Positions[P]);

impl<I, P> Positions<I, P> {
    pub(super) fn new(base: I, predicate: P) -> Self {
        Positions { base, predicate }
    }
}

impl<I, P> ParallelIterator for Positions<I, P>
where
    I: IndexedParallelIterator,
    P: Fn(I::Item) -> bool + Sync + Send,
{
    type Item = usize;

    fn drive_unindexed<C: UnindexedConsumer<usize>>(self, consumer: C) -> C::Result {
        let p = &self.predicate;
        self.base
            .enumerate()
            .filter_map(|(i, x)| p(x).then_some(i))
            .drive_unindexed(consumer)
    }
}
