//! Slices as parallel iterators: `par_iter`, `par_iter_mut`, `par_chunks`, `par_chunks_mut`,
//! `par_windows`, and the `par_sort` family (in `sort.rs`).

use super::plumbing::{IndexedProducer, Producer};

/// A parallel iterator over `&T`; from `par_iter()` on a slice, array or `Vec`.
///
/// # Examples
/// ```
/// use throttle::prelude::*;
/// let v = vec![1, 2, 3];
/// let it: throttle::iter::SliceIter<'_, i32> = v.par_iter();
/// assert_eq!(it.sum::<i32>(), 6);
/// ```
#[derive(Debug)]
pub struct SliceIter<'a, T> {
    pub(crate) slice: &'a [T],
}

impl<'a, T: Sync> Producer for SliceIter<'a, T> {
    type Item = &'a T;
    type IntoSeq = std::slice::Iter<'a, T>;
    fn base_len(&self) -> usize {
        self.slice.len()
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        let (l, r) = self.slice.split_at(index);
        (SliceIter { slice: l }, SliceIter { slice: r })
    }
    fn into_seq(self) -> Self::IntoSeq {
        self.slice.iter()
    }
    fn exact_len(&self) -> Option<usize> {
        Some(self.base_len())
    }
}

impl<T: Sync> IndexedProducer for SliceIter<'_, T> {}

/// A parallel iterator over `&mut T`; from `par_iter_mut()` on a slice, array or `Vec`.
///
/// # Examples
/// ```
/// use throttle::prelude::*;
/// let mut v = vec![1, 2, 3];
/// v.par_iter_mut().for_each(|x| *x *= 10);
/// assert_eq!(v, [10, 20, 30]);
/// ```
#[derive(Debug)]
pub struct SliceIterMut<'a, T> {
    pub(crate) slice: &'a mut [T],
}

impl<'a, T: Send> Producer for SliceIterMut<'a, T> {
    type Item = &'a mut T;
    type IntoSeq = std::slice::IterMut<'a, T>;
    fn base_len(&self) -> usize {
        self.slice.len()
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        let (l, r) = self.slice.split_at_mut(index);
        (SliceIterMut { slice: l }, SliceIterMut { slice: r })
    }
    fn into_seq(self) -> Self::IntoSeq {
        self.slice.iter_mut()
    }
    fn exact_len(&self) -> Option<usize> {
        Some(self.base_len())
    }
}

impl<T: Send> IndexedProducer for SliceIterMut<'_, T> {}

/// A parallel iterator over `&[T]` pieces of a slice; see [`ParallelSlice::par_chunks`].
#[derive(Debug)]
pub struct Chunks<'a, T> {
    slice: &'a [T],
    size: usize,
}

impl<'a, T: Sync> Producer for Chunks<'a, T> {
    type Item = &'a [T];
    type IntoSeq = std::slice::Chunks<'a, T>;
    fn base_len(&self) -> usize {
        self.slice.len().div_ceil(self.size)
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        let at = (index * self.size).min(self.slice.len());
        let (l, r) = self.slice.split_at(at);
        let size = self.size;
        (Chunks { slice: l, size }, Chunks { slice: r, size })
    }
    fn into_seq(self) -> Self::IntoSeq {
        self.slice.chunks(self.size)
    }
    fn exact_len(&self) -> Option<usize> {
        Some(self.base_len())
    }
}

impl<T: Sync> IndexedProducer for Chunks<'_, T> {}

/// A parallel iterator over `&mut [T]` pieces of a slice; see
/// [`ParallelSliceMut::par_chunks_mut`].
#[derive(Debug)]
pub struct ChunksMut<'a, T> {
    slice: &'a mut [T],
    size: usize,
}

impl<'a, T: Send> Producer for ChunksMut<'a, T> {
    type Item = &'a mut [T];
    type IntoSeq = std::slice::ChunksMut<'a, T>;
    fn base_len(&self) -> usize {
        self.slice.len().div_ceil(self.size)
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        let at = (index * self.size).min(self.slice.len());
        let (l, r) = self.slice.split_at_mut(at);
        let size = self.size;
        (ChunksMut { slice: l, size }, ChunksMut { slice: r, size })
    }
    fn into_seq(self) -> Self::IntoSeq {
        self.slice.chunks_mut(self.size)
    }
    fn exact_len(&self) -> Option<usize> {
        Some(self.base_len())
    }
}

impl<T: Send> IndexedProducer for ChunksMut<'_, T> {}

/// A parallel iterator over overlapping windows of a slice; see [`ParallelSlice::par_windows`].
#[derive(Debug)]
pub struct Windows<'a, T> {
    slice: &'a [T],
    size: usize,
}

impl<'a, T: Sync> Producer for Windows<'a, T> {
    type Item = &'a [T];
    type IntoSeq = std::slice::Windows<'a, T>;
    fn base_len(&self) -> usize {
        (self.slice.len() + 1).saturating_sub(self.size)
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        // The left piece keeps the `index` windows starting before `index`, which reach up to
        // `index + size - 1`; the right piece starts at window `index`.
        let left_end = (index + self.size - 1).min(self.slice.len());
        let size = self.size;
        (
            Windows {
                slice: &self.slice[..left_end],
                size,
            },
            Windows {
                slice: &self.slice[index..],
                size,
            },
        )
    }
    fn into_seq(self) -> Self::IntoSeq {
        self.slice.windows(self.size)
    }
    fn exact_len(&self) -> Option<usize> {
        Some(self.base_len())
    }
}

impl<T: Sync> IndexedProducer for Windows<'_, T> {}

/// Parallel views of a shared slice (`par_chunks`, `par_windows`); implemented for `[T]`, so
/// also for arrays and `Vec`s.
pub trait ParallelSlice<T: Sync> {
    /// Parallel iterator over pieces of `size` items (the last may be shorter).
    ///
    /// # Panics
    /// If `size` is 0.
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// let v: Vec<u32> = (1..=10).collect();
    /// let sums: Vec<u32> = v.par_chunks(4).map(|c| c.iter().sum()).collect();
    /// assert_eq!(sums, [10, 26, 19]);
    /// ```
    fn par_chunks(&self, size: usize) -> Chunks<'_, T>;

    /// Parallel iterator over all windows of `size` consecutive items.
    ///
    /// # Panics
    /// If `size` is 0.
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// let v = [1, 2, 4, 7, 11];
    /// let gaps: Vec<i32> = v.par_windows(2).map(|w| w[1] - w[0]).collect();
    /// assert_eq!(gaps, [1, 2, 3, 4]);
    /// ```
    fn par_windows(&self, size: usize) -> Windows<'_, T>;
}

impl<T: Sync> ParallelSlice<T> for [T] {
    fn par_chunks(&self, size: usize) -> Chunks<'_, T> {
        assert!(size != 0, "par_chunks: chunk size must be non-zero");
        Chunks { slice: self, size }
    }

    fn par_windows(&self, size: usize) -> Windows<'_, T> {
        assert!(size != 0, "par_windows: window size must be non-zero");
        Windows { slice: self, size }
    }
}

/// Parallel views and sorts of a mutable slice; implemented for `[T]`, so also for arrays and
/// `Vec`s. The stable sorts are in-place merges of pieces sorted in parallel, the unstable ones
/// a parallel quicksort: see `src/iter/sort.rs`.
///
/// Called from outside any pool while the global pool is in auto mode
/// ([`Pool::set_concurrency_auto`](crate::Pool::set_concurrency_auto)), a sort remembers per
/// call site (the line that calls `par_sort*`) what its sorts cost per item, like the
/// iterators' consumers, and runs a sort too short to pay for threads on the calling thread
/// alone, as the standard library's sort of the same kind (`sort_by` for the stable sorts, so
/// the result is the same; `sort_unstable_by` for the unstable ones). Inside a pool it is plain
/// pool work.
pub trait ParallelSliceMut<T: Send> {
    /// Parallel iterator over mutable pieces of `size` items (the last may be shorter).
    ///
    /// # Panics
    /// If `size` is 0.
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// let mut v = vec![0u32; 7];
    /// v.par_chunks_mut(3).enumerate().for_each(|(i, c)| c.fill(i as u32));
    /// assert_eq!(v, [0, 0, 0, 1, 1, 1, 2]);
    /// ```
    fn par_chunks_mut(&mut self, size: usize) -> ChunksMut<'_, T>;

    /// Sorts the slice in parallel, stably (equal items keep their order).
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// let mut v = vec![5, 1, 4, 2, 3];
    /// v.par_sort();
    /// assert_eq!(v, [1, 2, 3, 4, 5]);
    /// ```
    fn par_sort(&mut self)
    where
        T: Ord;

    /// Sorts the slice in parallel and stably with a comparator.
    ///
    /// # Panics
    /// Resumes a panic of `compare`; the slice then holds its items in some order, none lost or
    /// duplicated.
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// let mut v = vec![5, 1, 4, 2, 3];
    /// v.par_sort_by(|a, b| b.cmp(a));
    /// assert_eq!(v, [5, 4, 3, 2, 1]);
    /// ```
    fn par_sort_by<F>(&mut self, compare: F)
    where
        F: Fn(&T, &T) -> std::cmp::Ordering + Sync;

    /// Sorts the slice in parallel and stably by a key.
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// let mut v = vec![(2, 'a'), (1, 'b'), (2, 'c'), (1, 'd')];
    /// v.par_sort_by_key(|p| p.0);
    /// assert_eq!(v, [(1, 'b'), (1, 'd'), (2, 'a'), (2, 'c')]);
    /// ```
    fn par_sort_by_key<K, F>(&mut self, key: F)
    where
        K: Ord,
        F: Fn(&T) -> K + Sync;

    /// Sorts the slice in parallel; equal items may be reordered.
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// let mut v: Vec<u64> = (0..1000).rev().collect();
    /// v.par_sort_unstable();
    /// assert!(v.windows(2).all(|w| w[0] <= w[1]));
    /// ```
    fn par_sort_unstable(&mut self)
    where
        T: Ord;

    /// Sorts the slice in parallel with a comparator; equal items may be reordered.
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// let mut v = vec![1.5, -2.0, 0.25];
    /// v.par_sort_unstable_by(|a: &f64, b| a.total_cmp(b));
    /// assert_eq!(v, [-2.0, 0.25, 1.5]);
    /// ```
    fn par_sort_unstable_by<F>(&mut self, compare: F)
    where
        F: Fn(&T, &T) -> std::cmp::Ordering + Sync;

    /// Sorts the slice in parallel by a key; equal keys may be reordered.
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// let mut v = vec![-3i32, 1, -2];
    /// v.par_sort_unstable_by_key(|x| x.abs());
    /// assert_eq!(v, [1, -2, -3]);
    /// ```
    fn par_sort_unstable_by_key<K, F>(&mut self, key: F)
    where
        K: Ord,
        F: Fn(&T) -> K + Sync;
}

impl<T: Send> ParallelSliceMut<T> for [T] {
    fn par_chunks_mut(&mut self, size: usize) -> ChunksMut<'_, T> {
        assert!(size != 0, "par_chunks_mut: chunk size must be non-zero");
        ChunksMut { slice: self, size }
    }

    #[track_caller]
    fn par_sort(&mut self)
    where
        T: Ord,
    {
        super::sort::par_sort(self, &T::cmp, true);
    }

    #[track_caller]
    fn par_sort_by<F>(&mut self, compare: F)
    where
        F: Fn(&T, &T) -> std::cmp::Ordering + Sync,
    {
        super::sort::par_sort(self, &compare, true);
    }

    #[track_caller]
    fn par_sort_by_key<K, F>(&mut self, key: F)
    where
        K: Ord,
        F: Fn(&T) -> K + Sync,
    {
        super::sort::par_sort(self, &|a: &T, b: &T| key(a).cmp(&key(b)), true);
    }

    #[track_caller]
    fn par_sort_unstable(&mut self)
    where
        T: Ord,
    {
        super::sort::par_sort(self, &T::cmp, false);
    }

    #[track_caller]
    fn par_sort_unstable_by<F>(&mut self, compare: F)
    where
        F: Fn(&T, &T) -> std::cmp::Ordering + Sync,
    {
        super::sort::par_sort(self, &compare, false);
    }

    #[track_caller]
    fn par_sort_unstable_by_key<K, F>(&mut self, key: F)
    where
        K: Ord,
        F: Fn(&T) -> K + Sync,
    {
        super::sort::par_sort(self, &|a: &T, b: &T| key(a).cmp(&key(b)), false);
    }
}

impl<T> Clone for SliceIter<'_, T> {
    fn clone(&self) -> Self {
        SliceIter { slice: self.slice }
    }
}

impl<T> Clone for Chunks<'_, T> {
    fn clone(&self) -> Self {
        Chunks {
            slice: self.slice,
            size: self.size,
        }
    }
}

impl<T> Clone for Windows<'_, T> {
    fn clone(&self) -> Self {
        Windows {
            slice: self.slice,
            size: self.size,
        }
    }
}
