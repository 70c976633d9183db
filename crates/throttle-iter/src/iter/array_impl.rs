//! Arrays as parallel iterators (the module `throttle::array`, rayon's `rayon::array`):
//! `[T; N]::into_par_iter()` moves the items out. (`&[T; N]` and `&mut [T; N]` iterate as
//! slices.)

use super::plumbing::{Consumer, ProducerCallback, UnindexedConsumer};
use super::vec::IntoIter as VecIter;
use super::{IndexedParallelIterator, IntoParallelIterator, ParallelIterator};

/// A parallel iterator that moves the items out of an array; from `array.into_par_iter()`.
///
/// # Examples
/// ```
/// use throttle::prelude::*;
/// let words = [String::from("a"), String::from("bb")];
/// let it: throttle::array::IntoIter<String, 2> = words.into_par_iter();
/// assert_eq!(it.map(|s| s.len()).sum::<usize>(), 3);
/// ```
#[derive(Debug, Clone)]
pub struct IntoIter<T, const N: usize> {
    inner: VecIter<T>,
}

impl<T: Send, const N: usize> IntoParallelIterator for [T; N] {
    type Iter = IntoIter<T, N>;
    type Item = T;
    fn into_par_iter(self) -> IntoIter<T, N> {
        IntoIter {
            inner: VecIter::new(Vec::from(self)),
        }
    }
}

impl<T: Send, const N: usize> ParallelIterator for IntoIter<T, N> {
    type Item = T;

    fn drive_unindexed<C: UnindexedConsumer<T>>(self, consumer: C) -> C::Result {
        self.inner.drive_unindexed(consumer)
    }

    fn opt_len(&self) -> Option<usize> {
        Some(N)
    }
}

impl<T: Send, const N: usize> IndexedParallelIterator for IntoIter<T, N> {
    fn drive<C: Consumer<T>>(self, consumer: C) -> C::Result {
        self.inner.drive(consumer)
    }

    fn len(&self) -> usize {
        N
    }

    fn with_producer<CB: ProducerCallback<T>>(self, callback: CB) -> CB::Output {
        self.inner.with_producer(callback)
    }
}
