//! `Vec`s as parallel iterators (the module `throttle::vec`, rayon's `rayon::vec`):
//! `vec.into_par_iter()` moves the items out, `vec.par_drain(range)` moves a range out and
//! closes the gap.
//!
//! Both run as a [`Drain`]: while the run lasts the vector's length covers only the items
//! before the range, and the range's items belong to the pieces of the run (`DrainProducer`s
//! over disjoint parts of it), each of which moves its items out as it yields them and drops
//! what it did not yield (a short-circuit, a panic). When the drain is dropped, the items after
//! the range move down and the length covers them again. No item is dropped twice and none is
//! leaked, also when a closure panics.

use super::plumbing::{bridge, Consumer, Producer, ProducerCallback, UnindexedConsumer};
use super::{IndexedParallelIterator, IntoParallelIterator, ParallelDrainRange, ParallelIterator};
use std::ops::{Bound, Range, RangeBounds};

/// A parallel iterator that moves the items out of a `Vec`; from `vec.into_par_iter()`.
///
/// # Examples
/// ```
/// use throttle::prelude::*;
/// let words = vec![String::from("a"), String::from("bb")];
/// let lens: Vec<usize> = words.into_par_iter().map(|s| s.len()).collect();
/// assert_eq!(lens, [1, 2]);
/// ```
#[derive(Debug, Clone)]
pub struct IntoIter<T> {
    vec: Vec<T>,
}

impl<T> IntoIter<T> {
    pub(crate) fn new(vec: Vec<T>) -> Self {
        IntoIter { vec }
    }
}

impl<T: Send> IntoParallelIterator for Vec<T> {
    type Iter = IntoIter<T>;
    type Item = T;
    fn into_par_iter(self) -> IntoIter<T> {
        IntoIter { vec: self }
    }
}

impl<T: Send> ParallelIterator for IntoIter<T> {
    type Item = T;

    fn drive_unindexed<C: UnindexedConsumer<T>>(self, consumer: C) -> C::Result {
        bridge(self, consumer)
    }

    fn opt_len(&self) -> Option<usize> {
        Some(self.vec.len())
    }
}

impl<T: Send> IndexedParallelIterator for IntoIter<T> {
    fn drive<C: Consumer<T>>(self, consumer: C) -> C::Result {
        bridge(self, consumer)
    }

    fn len(&self) -> usize {
        self.vec.len()
    }

    fn with_producer<CB: ProducerCallback<T>>(mut self, callback: CB) -> CB::Output {
        // Drain everything; the vector (empty by then) frees its buffer when `self` goes.
        self.vec.par_drain(..).with_producer(callback)
    }
}

/// The items of a range of a `Vec`, moved out; from `vec.par_drain(range)`. The items after the
/// range close the gap when the drain is dropped, whether it ran or not.
///
/// # Examples
/// ```
/// use throttle::prelude::*;
/// let mut v: Vec<u32> = (0..10).collect();
/// let out: Vec<u32> = v.par_drain(2..5).collect();
/// assert_eq!((out, v), (vec![2, 3, 4], vec![0, 1, 5, 6, 7, 8, 9]));
/// ```
#[derive(Debug)]
pub struct Drain<'data, T: Send> {
    vec: &'data mut Vec<T>,
    range: Range<usize>,
    /// The vector's length before the drain (its length drops to `range.start` while a run
    /// owns the range).
    orig_len: usize,
}

impl<'data, T: Send> ParallelDrainRange<usize> for &'data mut Vec<T> {
    type Iter = Drain<'data, T>;
    type Item = T;

    #[track_caller]
    fn par_drain<R: RangeBounds<usize>>(self, range: R) -> Self::Iter {
        let orig_len = self.len();
        let range = checked_range(range, orig_len);
        Drain {
            vec: self,
            range,
            orig_len,
        }
    }
}

/// `range` as a `Range` inside `0..len`.
///
/// # Panics
/// As `Vec::drain` does, if the range is decreasing or reaches past `len`.
#[track_caller]
pub(crate) fn checked_range<R: RangeBounds<usize>>(range: R, len: usize) -> Range<usize> {
    let start = match range.start_bound() {
        Bound::Included(&s) => s,
        Bound::Excluded(&s) => s.checked_add(1).expect("range start overflows usize"),
        Bound::Unbounded => 0,
    };
    let end = match range.end_bound() {
        Bound::Included(&e) => e.checked_add(1).expect("range end overflows usize"),
        Bound::Excluded(&e) => e,
        Bound::Unbounded => len,
    };
    assert!(
        start <= end,
        "slice index starts at {start} but ends at {end}"
    );
    assert!(
        end <= len,
        "range end index {end} out of range for slice of length {len}"
    );
    start..end
}

impl<T: Send> ParallelIterator for Drain<'_, T> {
    type Item = T;

    fn drive_unindexed<C: UnindexedConsumer<T>>(self, consumer: C) -> C::Result {
        bridge(self, consumer)
    }

    fn opt_len(&self) -> Option<usize> {
        Some(self.range.len())
    }
}

impl<T: Send> IndexedParallelIterator for Drain<'_, T> {
    fn drive<C: Consumer<T>>(self, consumer: C) -> C::Result {
        bridge(self, consumer)
    }

    fn len(&self) -> usize {
        self.range.len()
    }

    fn with_producer<CB: ProducerCallback<T>>(self, callback: CB) -> CB::Output {
        let Range { start, end } = self.range;
        // SAFETY: [1] `start <= end <= orig_len == len` (checked when the drain was made, and
        // the vector is borrowed since), so the range is initialised items of the vector;
        // [2] the length drops to `start` first, so the vector no longer owns them (nor the
        // tail, which `Drop` moves back): the producer takes them over, and a panic in the run
        // leaks nothing and drops nothing twice (the producers drop what they did not yield,
        // and `Drop` restores the tail).
        let producer = unsafe {
            self.vec.set_len(start);
            let first = self.vec.as_mut_ptr().add(start);
            DrainProducer::new(std::slice::from_raw_parts_mut(first, end - start))
        };
        callback.callback(producer)
    }
}

impl<T: Send> Drop for Drain<'_, T> {
    fn drop(&mut self) {
        let Range { start, end } = self.range;
        if self.vec.len() == self.orig_len {
            // Never ran: drain the range the ordinary way (drops its items).
            self.vec.drain(start..end);
        } else if start < end {
            let tail = self.orig_len - end;
            // SAFETY: a run took the range over (the length is `start`); its items have all
            // been moved out or dropped by the producers. The tail `[end, orig_len)` is still
            // initialised and owned by no one: move it down to `start` (the regions may
            // overlap, hence `copy`) and let the length cover it.
            unsafe {
                let base = self.vec.as_mut_ptr();
                std::ptr::copy(base.add(end), base.add(start), tail);
                self.vec.set_len(start + tail);
            }
        } else {
            // An empty range that ran: only the tail's ownership comes back.
            // SAFETY: nothing was moved; the items up to `orig_len` are initialised.
            unsafe { self.vec.set_len(self.orig_len) };
        }
    }
}

/// A piece of a draining run: it owns the items of `slice`, moves them out as it yields
/// them, and drops those it does not yield.
pub(crate) struct DrainProducer<'data, T: Send> {
    slice: &'data mut [T],
}

impl<'data, T: Send> DrainProducer<'data, T> {
    /// A producer that owns the items of `slice`.
    ///
    /// # Safety
    /// The items must be initialised, and nothing else may read or drop them afterwards (the
    /// producer moves or drops each exactly once).
    pub(crate) unsafe fn new(slice: &'data mut [T]) -> Self {
        DrainProducer { slice }
    }
}

impl<'data, T: Send> Producer for DrainProducer<'data, T> {
    type Item = T;
    type IntoIter = SliceDrain<'data, T>;

    fn into_iter(mut self) -> SliceDrain<'data, T> {
        let slice = std::mem::take(&mut self.slice);
        SliceDrain {
            iter: slice.iter_mut(),
        }
    }

    fn split_at(mut self, index: usize) -> (Self, Self) {
        let slice = std::mem::take(&mut self.slice);
        let (left, right) = slice.split_at_mut(index);
        (
            DrainProducer { slice: left },
            DrainProducer { slice: right },
        )
    }
}

impl<T: Send> Drop for DrainProducer<'_, T> {
    fn drop(&mut self) {
        let slice = std::mem::take(&mut self.slice);
        // SAFETY: the producer owns the items of its slice (`new`'s contract; splits hand each
        // item to one half only) and gives them up here.
        unsafe { std::ptr::drop_in_place(slice) };
    }
}

/// The sequential iterator of a [`DrainProducer`]: moves its items out in order, and drops
/// those it did not yield.
pub(crate) struct SliceDrain<'data, T> {
    iter: std::slice::IterMut<'data, T>,
}

impl<T> Iterator for SliceDrain<'_, T> {
    type Item = T;

    fn next(&mut self) -> Option<T> {
        let slot = self.iter.next()?;
        // SAFETY: the slot holds an item this iterator owns; advancing past it first hands
        // its ownership to us, so it is read exactly once.
        Some(unsafe { std::ptr::read(slot) })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.iter.size_hint()
    }
}

impl<T> DoubleEndedIterator for SliceDrain<'_, T> {
    fn next_back(&mut self) -> Option<T> {
        let slot = self.iter.next_back()?;
        // SAFETY: as in `next`.
        Some(unsafe { std::ptr::read(slot) })
    }
}

impl<T> ExactSizeIterator for SliceDrain<'_, T> {}

impl<T> Drop for SliceDrain<'_, T> {
    fn drop(&mut self) {
        let rest = std::mem::take(&mut self.iter).into_slice();
        // SAFETY: the items left were not yielded, so this iterator still owns them.
        unsafe { std::ptr::drop_in_place(rest) };
    }
}
