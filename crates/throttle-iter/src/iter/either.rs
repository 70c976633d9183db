//! `Either` of two parallel iterators with the same items is a parallel iterator: it runs the
//! one it holds.

use super::plumbing::{Consumer, ProducerCallback, UnindexedConsumer};
use super::{IndexedParallelIterator, ParallelIterator};
use either::Either;

/// # Examples
/// ```
/// use throttle::iter::Either;
/// use throttle::prelude::*;
/// let pick = |evens: bool| -> Either<_, _> {
///     if evens { Either::Left((0..10u32).into_par_iter().filter(|x| x % 2 == 0)) }
///     else { Either::Right((0..10u32).into_par_iter().filter(|x| x % 2 == 1)) }
/// };
/// assert_eq!(pick(true).sum::<u32>(), 20);
/// assert_eq!(pick(false).sum::<u32>(), 25);
/// ```
impl<L, R> ParallelIterator for Either<L, R>
where
    L: ParallelIterator,
    R: ParallelIterator<Item = L::Item>,
{
    type Item = L::Item;

    fn drive_unindexed<C: UnindexedConsumer<L::Item>>(self, consumer: C) -> C::Result {
        match self {
            Either::Left(l) => l.drive_unindexed(consumer),
            Either::Right(r) => r.drive_unindexed(consumer),
        }
    }

    fn opt_len(&self) -> Option<usize> {
        match self {
            Either::Left(l) => l.opt_len(),
            Either::Right(r) => r.opt_len(),
        }
    }
}

impl<L, R> IndexedParallelIterator for Either<L, R>
where
    L: IndexedParallelIterator,
    R: IndexedParallelIterator<Item = L::Item>,
{
    fn drive<C: Consumer<L::Item>>(self, consumer: C) -> C::Result {
        match self {
            Either::Left(l) => l.drive(consumer),
            Either::Right(r) => r.drive(consumer),
        }
    }

    fn len(&self) -> usize {
        match self {
            Either::Left(l) => l.len(),
            Either::Right(r) => r.len(),
        }
    }

    fn with_producer<CB: ProducerCallback<L::Item>>(self, callback: CB) -> CB::Output {
        match self {
            Either::Left(l) => l.with_producer(callback),
            Either::Right(r) => r.with_producer(callback),
        }
    }
}
