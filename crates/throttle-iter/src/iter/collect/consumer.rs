//! Collecting an exact-length iterator in place: every piece of the run writes its items
//! straight into their slots in a vector's spare capacity, so items move once and the vector
//! is allocated once.
//!
//! Soundness does not rest on the iterator's promise of its length: a [`CollectConsumer`] is a
//! range of slots that splits into disjoint ranges, a folder writes only inside its range (one
//! item too many panics), each piece's result is a [`Written`] run that owns the items it wrote
//! and drops them if it is dropped (a panic elsewhere, a broken promise), and two runs join only
//! if they are adjacent. The vector's length grows only when one run covers every slot.

use super::super::plumbing::{Consumer, Folder, Reducer, UnindexedConsumer};
use std::marker::PhantomData;
use std::mem::MaybeUninit;

/// A range of `len` slots from `start`, not yet written.
pub(crate) struct CollectConsumer<'c, T> {
    start: *mut T,
    len: usize,
    marker: PhantomData<&'c mut [MaybeUninit<T>]>,
}

// SAFETY: [1] a consumer is the only way to its slots (it came from a `&mut` borrow of them,
// and splitting hands out disjoint ranges), so moving it to another thread shares nothing;
// [2] items are written into the slots by value from the thread that made them, which
// `T: Send` allows.
unsafe impl<T: Send> Send for CollectConsumer<'_, T> {}

impl<'c, T: Send> CollectConsumer<'c, T> {
    /// A consumer that writes `slots`, in order.
    pub(crate) fn new(slots: &'c mut [MaybeUninit<T>]) -> Self {
        CollectConsumer {
            start: slots.as_mut_ptr().cast(),
            len: slots.len(),
            marker: PhantomData,
        }
    }
}

impl<'c, T: Send> Consumer<T> for CollectConsumer<'c, T> {
    type Folder = Written<'c, T>;
    type Reducer = JoinWritten;
    type Result = Written<'c, T>;

    fn split_at(self, index: usize) -> (Self, Self, JoinWritten) {
        assert!(
            index <= self.len,
            "collect: split at {index} of {} slots",
            self.len
        );
        // SAFETY: `index <= len`, so the pointer stays within (or one past) the slots.
        let mid = unsafe { self.start.add(index) };
        let left = CollectConsumer {
            start: self.start,
            len: index,
            marker: PhantomData,
        };
        let right = CollectConsumer {
            start: mid,
            len: self.len - index,
            marker: PhantomData,
        };
        (left, right, JoinWritten)
    }

    fn into_folder(self) -> Written<'c, T> {
        Written {
            start: self.start,
            slots: self.len,
            written: 0,
            marker: PhantomData,
        }
    }

    fn full(&self) -> bool {
        false
    }
}

/// An exact-length iterator splits only at indices; rayon's collect consumer is unindexed in
/// name only, and so is this one.
impl<T: Send> UnindexedConsumer<T> for CollectConsumer<'_, T> {
    fn split_off_left(&self) -> Self {
        unreachable!("collect in place: an iterator with a known length split without an index")
    }

    fn to_reducer(&self) -> JoinWritten {
        JoinWritten
    }
}

/// The items written into slots `[0, written)` of a range of `slots` from `start`; it owns
/// them until it is joined into its left neighbour or handed to the vector.
pub(crate) struct Written<'c, T> {
    start: *mut T,
    slots: usize,
    written: usize,
    marker: PhantomData<&'c mut [MaybeUninit<T>]>,
}

// SAFETY: a run owns its items and its slots (moving it moves their ownership), and `T: Send`.
unsafe impl<T: Send> Send for Written<'_, T> {}

impl<T> Written<'_, T> {
    /// The number of items written.
    pub(crate) fn len(&self) -> usize {
        self.written
    }

    /// Gives the items to the caller (the vector whose length now covers them).
    pub(crate) fn release(self) {
        std::mem::forget(self);
    }

    /// True if this run starts at `at`.
    pub(crate) fn starts_at(&self, at: *const T) -> bool {
        std::ptr::eq(self.start, at)
    }
}

impl<T> Drop for Written<'_, T> {
    fn drop(&mut self) {
        // SAFETY: slots `[0, written)` hold items this run wrote and still owns; after this
        // nothing refers to them (no vector's length covers them).
        unsafe {
            std::ptr::drop_in_place(std::ptr::slice_from_raw_parts_mut(self.start, self.written));
        }
    }
}

impl<T> Folder<T> for Written<'_, T> {
    type Result = Self;

    fn consume(mut self, item: T) -> Self {
        assert!(
            self.written < self.slots,
            "collect: an exact-length parallel iterator yielded more items than its length"
        );
        // SAFETY: `written < slots`, so the slot is in this run's range, which no other piece
        // writes, and it is not yet written (`written` only grows).
        unsafe { self.start.add(self.written).write(item) };
        self.written += 1;
        self
    }

    /// Writes the items in one internal iteration (`for_each`), at most as many as there are
    /// slots; one more panics. `written` counts each item as it lands, so a panic in the
    /// iterator (a closure above) leaves the run owning exactly what it wrote.
    fn consume_iter<I: IntoIterator<Item = T>>(mut self, iter: I) -> Self {
        let mut iter = iter.into_iter();
        let room = self.slots - self.written;
        let start = self.start;
        let written = &mut self.written;
        iter.by_ref().take(room).for_each(|item| {
            // SAFETY: `take(room)` yields at most `slots - written` items, so `*written < slots`:
            // the slot is in this run's range, which no other piece writes, and it is not yet
            // written (`written` only grows).
            unsafe { start.add(*written).write(item) };
            *written += 1;
        });
        let full = self.written == self.slots;
        assert!(
            !full || iter.next().is_none(),
            "collect: an exact-length parallel iterator yielded more items than its length"
        );
        self
    }

    fn complete(self) -> Self {
        self
    }

    fn full(&self) -> bool {
        false
    }
}

/// Joins two runs if the right one starts where the left one's items end; otherwise (a piece
/// wrote fewer items than it had slots) keeps the left one and drops the right one with its
/// items, and the check of the total fails.
pub(crate) struct JoinWritten;

impl<'c, T> Reducer<Written<'c, T>> for JoinWritten {
    fn reduce(self, mut left: Written<'c, T>, right: Written<'c, T>) -> Written<'c, T> {
        // `wrapping_add`: only compared, never dereferenced.
        if std::ptr::eq(left.start.wrapping_add(left.written), right.start) {
            left.slots += right.slots;
            left.written += right.written;
            right.release(); // its items now belong to `left`
        }
        left
    }
}

/// Appends `len` items to `vec`, written in place by `drive`, which runs an iterator into the
/// consumer it is given (an iterator that promised `len` items).
///
/// # Panics
/// If the iterator yielded another number of items (after dropping what it wrote), or resumes
/// a closure's panic.
pub(crate) fn collect_with_consumer<'v, T, D>(vec: &'v mut Vec<T>, len: usize, drive: D)
where
    T: Send + 'v,
    D: FnOnce(CollectConsumer<'_, T>) -> Written<'_, T>,
{
    vec.reserve(len);
    let old = vec.len();
    let slots = &mut vec.spare_capacity_mut()[..len];
    let first: *const T = slots.as_ptr().cast();
    let run = drive(CollectConsumer::new(slots));
    let written = run.len();
    assert!(
        written == len && run.starts_at(first),
        "collect: expected {len} items from an exact-length parallel iterator, got {written}"
    );
    run.release();
    // SAFETY: the run covering all `len` slots after the old length holds initialised items,
    // now owned by `vec`, and `old + len <= capacity` (reserved above).
    unsafe { vec.set_len(old + len) };
}
