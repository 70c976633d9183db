//! An owned `Vec` as a parallel iterator: `vec.into_par_iter()` moves the items out.
//!
//! The pieces of a split share the vector's buffer through an `Arc`; each piece owns the items
//! of its index range and nothing else. Items are moved out with `ptr::read` as a leaf yields
//! them; whatever a piece did not yield (a short-circuit, a panic) it drops itself; the buffer
//! is freed, without touching items, when the last piece is gone. No item is dropped twice and
//! none is leaked, also when a closure panics.

use super::plumbing::{IndexedProducer, Producer};
use std::mem::ManuallyDrop;
use std::ops::Range;
use std::sync::Arc;

/// The allocation of a vector whose items are owned by the pieces that index into it.
struct Buffer<T> {
    ptr: *mut T,
    cap: usize,
}

// SAFETY: [1] the buffer itself is only freed (in `Drop`, by the last `Arc` holder), never read;
// [2] every item is reached only through the one piece (`IntoIter` or `IntoSeq`) whose range
// holds it, and ranges are disjoint, so sharing the buffer between threads shares no item; [3]
// items move between threads by value, which `T: Send` allows.
unsafe impl<T: Send> Send for Buffer<T> {}
// SAFETY: as for `Send`: `&Buffer` gives access to no item.
unsafe impl<T: Send> Sync for Buffer<T> {}

impl<T> Drop for Buffer<T> {
    fn drop(&mut self) {
        // SAFETY: `ptr` and `cap` came from a `Vec<T>` that was never freed; its items have all
        // been moved out or dropped by the pieces (each piece empties its range before it lets
        // go of its `Arc`), so a length of 0 frees only the allocation.
        unsafe { drop(Vec::from_raw_parts(self.ptr, 0, self.cap)) };
    }
}

/// Drops the items of `range` in `buffer`.
///
/// # Safety
/// The caller owns those items (they were not moved out or dropped) and never touches them again.
unsafe fn drop_range<T>(buffer: &Buffer<T>, range: Range<usize>) {
    if range.is_empty() {
        return;
    }
    // SAFETY: `range` lies within the vector's initialised length (pieces only shrink ranges),
    // and the caller owns the items and gives them up.
    unsafe {
        let first = buffer.ptr.add(range.start);
        std::ptr::drop_in_place(std::ptr::slice_from_raw_parts_mut(first, range.len()));
    }
}

/// A parallel iterator that moves the items out of a `Vec`; from `vec.into_par_iter()`.
///
/// # Examples
/// ```
/// use throttle::prelude::*;
/// let words = vec![String::from("a"), String::from("bb")];
/// let lens: Vec<usize> = words.into_par_iter().map(|s| s.len()).collect();
/// assert_eq!(lens, [1, 2]);
/// ```
pub struct IntoIter<T> {
    buffer: Arc<Buffer<T>>,
    range: Range<usize>,
}

impl<T> std::fmt::Debug for IntoIter<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IntoIter")
            .field("range", &self.range)
            .finish()
    }
}

impl<T> IntoIter<T> {
    pub(crate) fn new(vec: Vec<T>) -> Self {
        let mut vec = ManuallyDrop::new(vec);
        let len = vec.len();
        IntoIter {
            buffer: Arc::new(Buffer {
                ptr: vec.as_mut_ptr(),
                cap: vec.capacity(),
            }),
            range: 0..len,
        }
    }

    /// Gives up ownership of this piece's items to the caller (who must take them over).
    fn take_range(&mut self) -> Range<usize> {
        let end = self.range.end;
        std::mem::replace(&mut self.range, end..end)
    }
}

impl<T> Drop for IntoIter<T> {
    fn drop(&mut self) {
        let range = self.take_range();
        // SAFETY: this piece owns the items of its range and is going away.
        unsafe { drop_range(&self.buffer, range) };
    }
}

impl<T: Send> Producer for IntoIter<T> {
    type Item = T;
    type IntoSeq = IntoSeq<T>;
    fn base_len(&self) -> usize {
        self.range.len()
    }
    fn split_at(mut self, index: usize) -> (Self, Self) {
        let range = self.take_range();
        let mid = range.start + index;
        assert!(mid <= range.end, "split_at: index out of range");
        (
            IntoIter {
                buffer: self.buffer.clone(),
                range: range.start..mid,
            },
            IntoIter {
                buffer: self.buffer.clone(),
                range: mid..range.end,
            },
        )
    }
    fn into_seq(mut self) -> IntoSeq<T> {
        let range = self.take_range();
        IntoSeq {
            buffer: self.buffer.clone(),
            range,
        }
    }
    fn exact_len(&self) -> Option<usize> {
        Some(self.base_len())
    }
}

impl<T: Send> IndexedProducer for IntoIter<T> {}

/// The sequential iterator of an [`IntoIter`] leaf: moves its items out in order.
pub struct IntoSeq<T> {
    buffer: Arc<Buffer<T>>,
    range: Range<usize>,
}

impl<T> std::fmt::Debug for IntoSeq<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IntoSeq")
            .field("range", &self.range)
            .finish()
    }
}

impl<T> Iterator for IntoSeq<T> {
    type Item = T;
    #[inline]
    fn next(&mut self) -> Option<T> {
        let i = self.range.next()?;
        // SAFETY: item `i` is in this piece's range, initialised and not yet moved out; advancing
        // the range first hands its ownership to us, so it is read exactly once.
        Some(unsafe { self.buffer.ptr.add(i).read() })
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.range.len(), Some(self.range.len()))
    }
}

impl<T> DoubleEndedIterator for IntoSeq<T> {
    #[inline]
    fn next_back(&mut self) -> Option<T> {
        let i = self.range.next_back()?;
        // SAFETY: as in `next`: item `i` is in this piece's range, initialised and not yet moved
        // out; shrinking the range first hands its ownership to us.
        Some(unsafe { self.buffer.ptr.add(i).read() })
    }
}

impl<T> ExactSizeIterator for IntoSeq<T> {}

impl<T> Drop for IntoSeq<T> {
    fn drop(&mut self) {
        let range = std::mem::replace(&mut self.range, 0..0);
        // SAFETY: the items left in the range were not yielded, so this piece still owns them.
        unsafe { drop_range(&self.buffer, range) };
    }
}

impl<T: Clone> Clone for IntoIter<T> {
    /// A new vector holding clones of the items this piece still owns.
    fn clone(&self) -> Self {
        // SAFETY: [1] this piece owns the items of its range, all initialised (never moved out
        // or dropped while the piece holds them); [2] `&self` keeps them alive and unchanged
        // for the borrow, since only the owning piece touches them.
        let items = unsafe {
            std::slice::from_raw_parts(self.buffer.ptr.add(self.range.start), self.range.len())
        };
        IntoIter::new(items.to_vec())
    }
}

pub use super::drain::Drain;
