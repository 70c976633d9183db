//! `collect` into a `Vec` for exact-length iterators: every leaf writes its items straight into
//! their places in the vector's spare capacity, so items are written once and the vector is
//! allocated once (as rayon does).
//!
//! Soundness does not rest on the producer's promise: `bridge_len` hands out disjoint unit
//! ranges by its own arithmetic, and a leaf writes at most the `len` items of its range. Each
//! leaf's result is a [`Written`] run that owns the items it wrote and drops them if it is
//! dropped (a panic elsewhere, or a broken promise); two runs combine only if they are adjacent.
//! The vector's length is set only when one run covers all of it.

use super::plumbing::{bridge_len, Consumer, Producer};

/// The start of the vector's buffer, shareable between the threads writing disjoint parts.
struct Target<T> {
    ptr: *mut T,
    len: usize,
}

// SAFETY: [1] threads reach the buffer only through `Written` runs, whose ranges are disjoint
// (see the module docs), so no two threads touch one slot; [2] items move into the buffer by
// value from the thread that made them, which `T: Send` allows.
unsafe impl<T: Send> Sync for Target<T> {}

/// Items `[start, start + count)` of the buffer, written and owned by this run.
pub(crate) struct Written<T> {
    ptr: *mut T,
    start: usize,
    count: usize,
}

// SAFETY: a run owns its items (moving it moves their ownership), and `T: Send`.
unsafe impl<T: Send> Send for Written<T> {}

impl<T> Drop for Written<T> {
    fn drop(&mut self) {
        // SAFETY: the run's items were written (initialised) and are owned by it alone; after
        // this nothing refers to them (the vector's length does not cover them).
        unsafe {
            let first = self.ptr.add(self.start);
            std::ptr::drop_in_place(std::ptr::slice_from_raw_parts_mut(first, self.count));
        }
    }
}

impl<T: Send> Consumer<T> for Target<T> {
    type Result = Written<T>;

    fn consume<I: Iterator<Item = T>>(&self, offset: usize, len: usize, iter: I) -> Written<T> {
        let mut run = Written {
            ptr: self.ptr,
            start: offset,
            count: 0,
        };
        // `take(len)`: a leaf never writes outside its range, whatever its iterator yields.
        for item in iter.take(len) {
            debug_assert!(offset + run.count < self.len);
            // SAFETY: `offset + count < offset + len <= self.len` (bridge_len's ranges lie in
            // `0..self.len`), the slot is in this leaf's range, so no other thread writes it, and
            // it is not yet initialised (each slot is written once: `count` only grows).
            unsafe { self.ptr.add(offset + run.count).write(item) };
            run.count += 1;
        }
        run
    }

    fn combine(&self, mut left: Written<T>, right: Written<T>) -> Written<T> {
        if left.start + left.count == right.start {
            left.count += right.count;
            std::mem::forget(right); // its items now belong to `left`
            left
        } else {
            // A leaf wrote fewer items than its length: both runs drop their items.
            drop((left, right));
            panic!(
                "collect: an exact-length parallel iterator yielded fewer items than its length"
            );
        }
    }
}

/// Collects the `len` items of `producer` (which promised `exact_len() == Some(len)`) in order.
///
/// # Panics
/// If the producer broke its promise (after dropping what it wrote), or resumes a closure's
/// panic.
#[track_caller]
pub(crate) fn collect_exact<P>(producer: P, len: usize) -> Vec<P::Item>
where
    P: Producer,
    P::Item: Send,
{
    let mut vec: Vec<P::Item> = Vec::with_capacity(len);
    let target = Target {
        ptr: vec.as_mut_ptr(),
        len,
    };
    let run = bridge_len(producer, len, &target);
    assert!(
        run.start == 0 && run.count == len,
        "collect: an exact-length parallel iterator yielded fewer items than its length"
    );
    std::mem::forget(run); // the vector owns the items from here
                           // SAFETY: the run covering `0..len` holds initialised items, now owned by `vec`, and
                           // `len <= capacity`.
    unsafe { vec.set_len(len) };
    vec
}
