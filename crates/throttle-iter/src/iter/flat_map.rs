//! `flat_map` and `flatten`: every item becomes a parallel iterator of its own, run as a nested
//! parallel run with a piece of the outer consumer (split off its left). So a long inner
//! iterator is split like any other run, and a short-circuiting consumer (`find_any`, a `fold`
//! feeding one) stops inside the inner runs too.

use super::plumbing::{Consumer, Folder, Reducer, UnindexedConsumer, WorkOrder};
use super::{IntoParallelIterator, ParallelIterator};

/// Maps each item to a parallel iterator and flattens; see [`ParallelIterator::flat_map`].
///
/// # Examples
/// ```
/// use throttle::prelude::*;
/// let v: Vec<u32> = (1..4u32).into_par_iter().flat_map(|i| 0..i).collect();
/// assert_eq!(v, [0, 0, 1, 0, 1, 2]);
/// ```
#[derive(Clone)]
#[must_use = "iterator adaptors are lazy and do nothing unless consumed"]
pub struct FlatMap<I, F> {
    base: I,
    map_op: F,
}

debug_base!(FlatMap[F]);

impl<I, F> FlatMap<I, F> {
    pub(super) fn new(base: I, map_op: F) -> Self {
        FlatMap { base, map_op }
    }
}

impl<I, F, PI> ParallelIterator for FlatMap<I, F>
where
    I: ParallelIterator,
    F: Fn(I::Item) -> PI + Sync + Send,
    PI: IntoParallelIterator,
{
    type Item = PI::Item;

    fn drive_unindexed<C: UnindexedConsumer<PI::Item>>(self, consumer: C) -> C::Result {
        self.base.drive_unindexed(FlatMapConsumer {
            base: consumer,
            f: &self.map_op,
        })
    }
}

/// Flattens items that are parallel iterables; see [`ParallelIterator::flatten`].
///
/// # Examples
/// ```
/// use throttle::prelude::*;
/// let v: Vec<u8> = vec![vec![1u8], vec![], vec![2, 3]].into_par_iter().flatten().collect();
/// assert_eq!(v, [1, 2, 3]);
/// ```
#[derive(Debug, Clone)]
#[must_use = "iterator adaptors are lazy and do nothing unless consumed"]
pub struct Flatten<I> {
    base: I,
}

impl<I> Flatten<I> {
    pub(super) fn new(base: I) -> Self {
        Flatten { base }
    }
}

impl<I> ParallelIterator for Flatten<I>
where
    I: ParallelIterator<Item: IntoParallelIterator>,
{
    type Item = <I::Item as IntoParallelIterator>::Item;

    fn drive_unindexed<C: UnindexedConsumer<Self::Item>>(self, consumer: C) -> C::Result {
        fn identity<T>(x: T) -> T {
            x
        }
        self.base.drive_unindexed(FlatMapConsumer {
            base: consumer,
            f: &identity,
        })
    }
}

/// The consumer of [`FlatMap`] and [`Flatten`]: the inner iterators' consumer and the map.
struct FlatMapConsumer<'f, C, F> {
    base: C,
    f: &'f F,
}

impl<'f, T, C, F, PI> Consumer<T> for FlatMapConsumer<'f, C, F>
where
    C: UnindexedConsumer<PI::Item>,
    F: Fn(T) -> PI + Sync,
    PI: IntoParallelIterator,
{
    type Folder = FlatMapFolder<'f, C, F, C::Result>;
    type Reducer = C::Reducer;
    type Result = C::Result;

    fn split_at(self, index: usize) -> (Self, Self, C::Reducer) {
        let (left, right, reducer) = self.base.split_at(index);
        let f = self.f;
        (
            FlatMapConsumer { base: left, f },
            FlatMapConsumer { base: right, f },
            reducer,
        )
    }

    fn split_at_of(self, index: usize, len: usize) -> (Self, Self, C::Reducer) {
        // The outer items' indices mean nothing to the inner consumer: split it in proportion.
        let reducer = self.base.to_reducer();
        let left = self.base.split_off_left_at(index, len);
        let f = self.f;
        (FlatMapConsumer { base: left, f }, self, reducer)
    }

    fn into_folder(self) -> Self::Folder {
        FlatMapFolder {
            base: self.base,
            f: self.f,
            previous: None,
        }
    }

    fn full(&self) -> bool {
        self.base.full()
    }

    fn work_order(&self) -> WorkOrder {
        self.base.work_order()
    }
}

impl<T, C, F, PI> UnindexedConsumer<T> for FlatMapConsumer<'_, C, F>
where
    C: UnindexedConsumer<PI::Item>,
    F: Fn(T) -> PI + Sync,
    PI: IntoParallelIterator,
{
    fn split_off_left(&self) -> Self {
        FlatMapConsumer {
            base: self.base.split_off_left(),
            f: self.f,
        }
    }

    fn to_reducer(&self) -> C::Reducer {
        self.base.to_reducer()
    }

    fn split_off_left_at(&self, index: usize, len: usize) -> Self {
        FlatMapConsumer {
            base: self.base.split_off_left_at(index, len),
            f: self.f,
        }
    }
}

/// The folder of [`FlatMap`]: for each item, runs its inner iterator into a consumer split off
/// the left of what is left, and joins the result to the previous ones.
struct FlatMapFolder<'f, C, F, R> {
    base: C,
    f: &'f F,
    previous: Option<R>,
}

impl<T, C, F, PI> Folder<T> for FlatMapFolder<'_, C, F, C::Result>
where
    C: UnindexedConsumer<PI::Item>,
    F: Fn(T) -> PI + Sync,
    PI: IntoParallelIterator,
{
    type Result = C::Result;

    fn consume(self, item: T) -> Self {
        let inner = (self.f)(item).into_par_iter();
        let result = inner.drive_unindexed(self.base.split_off_left());
        let previous = Some(match self.previous {
            None => result,
            Some(previous) => self.base.to_reducer().reduce(previous, result),
        });
        FlatMapFolder { previous, ..self }
    }

    fn complete(self) -> C::Result {
        match self.previous {
            Some(result) => result,
            None => self.base.into_folder().complete(),
        }
    }

    fn full(&self) -> bool {
        self.base.full()
    }
}
