//! Slices as parallel iterators: `par_iter`, `par_iter_mut`, `par_chunks`, `par_chunks_mut`,
//! `par_windows`, and the `par_sort` family (in `sort.rs`).

use super::plumbing::Producer;
pub use super::slice_ext::{
    ArrayWindows, ChunkBy, ChunkByMut, ChunksExact, ChunksExactMut, RChunks, RChunksExact,
    RChunksExactMut, RChunksMut, Split, SplitInclusive, SplitInclusiveMut, SplitMut,
};

/// A parallel iterator over `&T`; from `par_iter()` on a slice, array or `Vec`.
///
/// # Examples
/// ```
/// use throttle::prelude::*;
/// let v = vec![1, 2, 3];
/// let it: throttle::slice::Iter<'_, i32> = v.par_iter();
/// assert_eq!(it.sum::<i32>(), 6);
/// ```
#[derive(Debug)]
pub struct Iter<'a, T> {
    slice: &'a [T],
}

impl<'a, T> Iter<'a, T> {
    pub(crate) fn new(slice: &'a [T]) -> Self {
        Iter { slice }
    }
}

impl<'a, T: Sync> Producer for Iter<'a, T> {
    type Item = &'a T;
    type IntoIter = std::slice::Iter<'a, T>;
    fn split_at(self, index: usize) -> (Self, Self) {
        let (l, r) = self.slice.split_at(index);
        (Iter { slice: l }, Iter { slice: r })
    }
    fn into_iter(self) -> Self::IntoIter {
        self.slice.iter()
    }
}

producer_iterator!(impl['a, T: Sync + 'a] Iter<'a, T> => &'a T, where [], len: |it| it.slice.len());

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
pub struct IterMut<'a, T> {
    slice: &'a mut [T],
}

impl<'a, T> IterMut<'a, T> {
    pub(crate) fn new(slice: &'a mut [T]) -> Self {
        IterMut { slice }
    }
}

impl<'a, T: Send> Producer for IterMut<'a, T> {
    type Item = &'a mut T;
    type IntoIter = std::slice::IterMut<'a, T>;
    fn split_at(self, index: usize) -> (Self, Self) {
        let (l, r) = self.slice.split_at_mut(index);
        (IterMut { slice: l }, IterMut { slice: r })
    }
    fn into_iter(self) -> Self::IntoIter {
        self.slice.iter_mut()
    }
}

producer_iterator!(impl['a, T: Send + 'a] IterMut<'a, T> => &'a mut T, where [], len: |it| it.slice.len());

/// A parallel iterator over `&[T]` pieces of a slice; see [`ParallelSlice::par_chunks`].
#[derive(Debug)]
pub struct Chunks<'a, T> {
    slice: &'a [T],
    size: usize,
}

producer_iterator!(impl['a, T: Sync + 'a] Chunks<'a, T> => &'a [T], where [],
    len: |it| it.slice.len().div_ceil(it.size));

impl<'a, T: Sync> Producer for Chunks<'a, T> {
    type Item = &'a [T];
    type IntoIter = std::slice::Chunks<'a, T>;
    fn split_at(self, index: usize) -> (Self, Self) {
        let at = (index * self.size).min(self.slice.len());
        let (l, r) = self.slice.split_at(at);
        let size = self.size;
        (Chunks { slice: l, size }, Chunks { slice: r, size })
    }
    fn into_iter(self) -> Self::IntoIter {
        self.slice.chunks(self.size)
    }
}

/// A parallel iterator over `&mut [T]` pieces of a slice; see
/// [`ParallelSliceMut::par_chunks_mut`].
#[derive(Debug)]
pub struct ChunksMut<'a, T> {
    slice: &'a mut [T],
    size: usize,
}

producer_iterator!(impl['a, T: Send + 'a] ChunksMut<'a, T> => &'a mut [T], where [],
    len: |it| it.slice.len().div_ceil(it.size));

impl<'a, T: Send> Producer for ChunksMut<'a, T> {
    type Item = &'a mut [T];
    type IntoIter = std::slice::ChunksMut<'a, T>;
    fn split_at(self, index: usize) -> (Self, Self) {
        let at = (index * self.size).min(self.slice.len());
        let (l, r) = self.slice.split_at_mut(at);
        let size = self.size;
        (ChunksMut { slice: l, size }, ChunksMut { slice: r, size })
    }
    fn into_iter(self) -> Self::IntoIter {
        self.slice.chunks_mut(self.size)
    }
}

/// A parallel iterator over overlapping windows of a slice; see [`ParallelSlice::par_windows`].
#[derive(Debug)]
pub struct Windows<'a, T> {
    slice: &'a [T],
    size: usize,
}

producer_iterator!(impl['a, T: Sync + 'a] Windows<'a, T> => &'a [T], where [],
    len: |it| (it.slice.len() + 1).saturating_sub(it.size));

impl<'a, T: Sync> Producer for Windows<'a, T> {
    type Item = &'a [T];
    type IntoIter = std::slice::Windows<'a, T>;
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
    fn into_iter(self) -> Self::IntoIter {
        self.slice.windows(self.size)
    }
}

/// Parallel views of a shared slice (`par_chunks`, `par_windows`); implemented for `[T]`, so
/// also for arrays and `Vec`s.
pub trait ParallelSlice<T: Sync> {
    /// The slice itself.
    fn as_parallel_slice(&self) -> &[T];

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
    fn par_chunks(&self, size: usize) -> Chunks<'_, T> {
        assert!(size != 0, "par_chunks: chunk size must be non-zero");
        Chunks {
            slice: self.as_parallel_slice(),
            size,
        }
    }

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
    fn par_windows(&self, size: usize) -> Windows<'_, T> {
        assert!(size != 0, "par_windows: window size must be non-zero");
        Windows {
            slice: self.as_parallel_slice(),
            size,
        }
    }

    /// Parallel iterator over all windows of `N` consecutive items, as arrays.
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// let v: Vec<i32> = [1, 2, 4].par_array_windows().map(|[a, b]| b - a).collect();
    /// assert_eq!(v, [1, 2]);
    /// ```
    fn par_array_windows<const N: usize>(&self) -> ArrayWindows<'_, T, N> {
        assert!(N != 0, "par_array_windows: window size must be non-zero");
        ArrayWindows {
            slice: self.as_parallel_slice(),
        }
    }

    /// Parallel iterator over pieces of exactly `size` items; the rest is
    /// [`remainder`](ChunksExact::remainder).
    ///
    /// # Panics
    /// If `size` is 0.
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// let v: Vec<&[i32]> = [1, 2, 3, 4, 5].par_chunks_exact(2).collect();
    /// assert_eq!(v, [&[1, 2][..], &[3, 4]]);
    /// ```
    fn par_chunks_exact(&self, size: usize) -> ChunksExact<'_, T> {
        assert!(size != 0, "par_chunks_exact: chunk size must be non-zero");
        let s = self.as_parallel_slice();
        let (slice, rem) = s.split_at(s.len() - s.len() % size);
        ChunksExact { slice, size, rem }
    }

    /// Parallel iterator over pieces of `size` items from the end (the last may be shorter).
    ///
    /// # Panics
    /// If `size` is 0.
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// let v: Vec<&[i32]> = [1, 2, 3].par_rchunks(2).collect();
    /// assert_eq!(v, [&[2, 3][..], &[1]]);
    /// ```
    fn par_rchunks(&self, size: usize) -> RChunks<'_, T> {
        assert!(size != 0, "par_rchunks: chunk size must be non-zero");
        RChunks {
            slice: self.as_parallel_slice(),
            size,
        }
    }

    /// Parallel iterator over pieces of exactly `size` items from the end.
    ///
    /// # Panics
    /// If `size` is 0.
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// let v: Vec<&[i32]> = [1, 2, 3].par_rchunks_exact(2).collect();
    /// assert_eq!(v, [&[2, 3][..]]);
    /// ```
    fn par_rchunks_exact(&self, size: usize) -> RChunksExact<'_, T> {
        assert!(size != 0, "par_rchunks_exact: chunk size must be non-zero");
        let s = self.as_parallel_slice();
        let (rem, slice) = s.split_at(s.len() % size);
        RChunksExact { slice, size, rem }
    }

    /// Parallel iterator over the parts between items that match `separator`, as
    /// `slice::split`.
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// let v: Vec<&[i32]> = [1, 0, 2, 3, 0].par_split(|&x| x == 0).collect();
    /// assert_eq!(v, [&[1][..], &[2, 3], &[]]);
    /// ```
    fn par_split<P>(&self, separator: P) -> Split<'_, T, P>
    where
        P: Fn(&T) -> bool + Sync + Send,
    {
        Split::new(self.as_parallel_slice(), separator)
    }

    /// Parallel iterator over the parts each ending with an item that matches `separator`, as
    /// `slice::split_inclusive`.
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// let v: Vec<&[i32]> = [1, 0, 2].par_split_inclusive(|&x| x == 0).collect();
    /// assert_eq!(v, [&[1, 0][..], &[2]]);
    /// ```
    fn par_split_inclusive<P>(&self, separator: P) -> SplitInclusive<'_, T, P>
    where
        P: Fn(&T) -> bool + Sync + Send,
    {
        SplitInclusive::new(self.as_parallel_slice(), separator)
    }

    /// Parallel iterator over the runs of items where each neighbour pair satisfies `pred`, as
    /// `slice::chunk_by`.
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// let v: Vec<&[i32]> = [1, 1, 2, 3, 3].par_chunk_by(|a, b| a == b).collect();
    /// assert_eq!(v, [&[1, 1][..], &[2], &[3, 3]]);
    /// ```
    fn par_chunk_by<F>(&self, pred: F) -> ChunkBy<'_, T, F>
    where
        F: Fn(&T, &T) -> bool + Send + Sync,
    {
        ChunkBy::new(self.as_parallel_slice(), pred)
    }
}

impl<T: Sync> ParallelSlice<T> for [T] {
    fn as_parallel_slice(&self) -> &[T] {
        self
    }
}

/// Parallel views and sorts of a mutable slice; implemented for `[T]`, so also for arrays and
/// `Vec`s. The stable sorts are in-place merges of pieces sorted in parallel, the unstable ones
/// a parallel quicksort: see `src/iter/sort.rs`.
///
/// Called from outside any pool while the global pool is in auto mode
/// ([`Pool::set_concurrency_auto`](throttle_core::Pool::set_concurrency_auto)), a sort remembers per
/// call site (the line that calls `par_sort*`) what its sorts cost per item, like the
/// iterators' consumers, and runs a sort too short to pay for threads on the calling thread
/// alone, as the standard library's sort of the same kind (`sort_by` for the stable sorts, so
/// the result is the same; `sort_unstable_by` for the unstable ones). Inside a pool it is plain
/// pool work.
pub trait ParallelSliceMut<T: Send> {
    /// The slice itself.
    fn as_parallel_slice_mut(&mut self) -> &mut [T];

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
    fn par_chunks_mut(&mut self, size: usize) -> ChunksMut<'_, T> {
        assert!(size != 0, "par_chunks_mut: chunk size must be non-zero");
        ChunksMut {
            slice: self.as_parallel_slice_mut(),
            size,
        }
    }

    /// Parallel iterator over mutable pieces of exactly `size` items.
    ///
    /// # Panics
    /// If `size` is 0.
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// let mut v = [1, 2, 3, 4, 5];
    /// v.par_chunks_exact_mut(2).for_each(|c| c.swap(0, 1));
    /// assert_eq!(v, [2, 1, 4, 3, 5]);
    /// ```
    fn par_chunks_exact_mut(&mut self, size: usize) -> ChunksExactMut<'_, T> {
        assert!(
            size != 0,
            "par_chunks_exact_mut: chunk size must be non-zero"
        );
        let s = self.as_parallel_slice_mut();
        let n = s.len() - s.len() % size;
        let (slice, rem) = s.split_at_mut(n);
        ChunksExactMut { slice, size, rem }
    }

    /// Parallel iterator over mutable pieces of `size` items from the end.
    ///
    /// # Panics
    /// If `size` is 0.
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// let mut v = [1, 2, 3];
    /// v.par_rchunks_mut(2).for_each(|c| c[0] = 0);
    /// assert_eq!(v, [0, 0, 3]);
    /// ```
    fn par_rchunks_mut(&mut self, size: usize) -> RChunksMut<'_, T> {
        assert!(size != 0, "par_rchunks_mut: chunk size must be non-zero");
        RChunksMut {
            slice: self.as_parallel_slice_mut(),
            size,
        }
    }

    /// Parallel iterator over mutable pieces of exactly `size` items from the end.
    ///
    /// # Panics
    /// If `size` is 0.
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// let mut v = [1, 2, 3];
    /// v.par_rchunks_exact_mut(2).for_each(|c| c[0] = 0);
    /// assert_eq!(v, [1, 0, 3]);
    /// ```
    fn par_rchunks_exact_mut(&mut self, size: usize) -> RChunksExactMut<'_, T> {
        assert!(
            size != 0,
            "par_rchunks_exact_mut: chunk size must be non-zero"
        );
        let s = self.as_parallel_slice_mut();
        let r = s.len() % size;
        let (rem, slice) = s.split_at_mut(r);
        RChunksExactMut { slice, size, rem }
    }

    /// Parallel iterator over the mutable parts between items that match `separator`.
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// let mut v = [3, 1, 0, 2, 1];
    /// v.par_split_mut(|&x| x == 0).for_each(|part| part.sort());
    /// assert_eq!(v, [1, 3, 0, 1, 2]);
    /// ```
    fn par_split_mut<P>(&mut self, separator: P) -> SplitMut<'_, T, P>
    where
        P: Fn(&T) -> bool + Sync + Send,
    {
        SplitMut::new(self.as_parallel_slice_mut(), separator)
    }

    /// Parallel iterator over the mutable parts each ending with an item that matches
    /// `separator`.
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// let mut v = [3, 0, 2, 1];
    /// v.par_split_inclusive_mut(|&x| x == 0).for_each(|part| part.sort());
    /// assert_eq!(v, [0, 3, 1, 2]);
    /// ```
    fn par_split_inclusive_mut<P>(&mut self, separator: P) -> SplitInclusiveMut<'_, T, P>
    where
        P: Fn(&T) -> bool + Sync + Send,
    {
        SplitInclusiveMut::new(self.as_parallel_slice_mut(), separator)
    }

    /// Parallel iterator over the mutable runs of items where each neighbour pair satisfies
    /// `pred`.
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// let mut v = [1, 1, 2, 3, 3];
    /// v.par_chunk_by_mut(|a, b| a == b).for_each(|run| { let n = run.len() as i32; run.fill(n); });
    /// assert_eq!(v, [2, 2, 1, 2, 2]);
    /// ```
    fn par_chunk_by_mut<F>(&mut self, pred: F) -> ChunkByMut<'_, T, F>
    where
        F: Fn(&T, &T) -> bool + Send + Sync,
    {
        ChunkByMut::new(self.as_parallel_slice_mut(), pred)
    }

    /// Sorts the slice in parallel, stably (equal items keep their order).
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// let mut v = vec![5, 1, 4, 2, 3];
    /// v.par_sort();
    /// assert_eq!(v, [1, 2, 3, 4, 5]);
    /// ```
    #[track_caller]
    fn par_sort(&mut self)
    where
        T: Ord,
    {
        super::sort::par_sort(self.as_parallel_slice_mut(), &T::cmp, true);
    }

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
    #[track_caller]
    fn par_sort_by<F>(&mut self, compare: F)
    where
        F: Fn(&T, &T) -> std::cmp::Ordering + Sync,
    {
        super::sort::par_sort(self.as_parallel_slice_mut(), &compare, true);
    }

    /// Sorts the slice in parallel and stably by a key.
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// let mut v = vec![(2, 'a'), (1, 'b'), (2, 'c'), (1, 'd')];
    /// v.par_sort_by_key(|p| p.0);
    /// assert_eq!(v, [(1, 'b'), (1, 'd'), (2, 'a'), (2, 'c')]);
    /// ```
    #[track_caller]
    fn par_sort_by_key<K, F>(&mut self, f: F)
    where
        K: Ord,
        F: Fn(&T) -> K + Sync,
    {
        let compare = |a: &T, b: &T| f(a).cmp(&f(b));
        super::sort::par_sort(self.as_parallel_slice_mut(), &compare, true);
    }

    /// Sorts the slice in parallel and stably by a key that is computed once per item (in
    /// parallel) and kept: for keys that cost more than a comparison.
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// let mut v = vec!["ccc", "a", "bb", "aaa"];
    /// v.par_sort_by_cached_key(|s| s.len());
    /// assert_eq!(v, ["a", "bb", "ccc", "aaa"]);
    /// ```
    fn par_sort_by_cached_key<K, F>(&mut self, f: F)
    where
        F: Fn(&T) -> K + Sync,
        K: Ord + Send,
    {
        super::sort::par_sort_by_cached_key(self.as_parallel_slice_mut(), &f);
    }

    /// Sorts the slice in parallel; equal items may be reordered.
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// let mut v: Vec<u64> = (0..1000).rev().collect();
    /// v.par_sort_unstable();
    /// assert!(v.windows(2).all(|w| w[0] <= w[1]));
    /// ```
    #[track_caller]
    fn par_sort_unstable(&mut self)
    where
        T: Ord,
    {
        super::sort::par_sort(self.as_parallel_slice_mut(), &T::cmp, false);
    }

    /// Sorts the slice in parallel with a comparator; equal items may be reordered.
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// let mut v = vec![1.5, -2.0, 0.25];
    /// v.par_sort_unstable_by(|a: &f64, b| a.total_cmp(b));
    /// assert_eq!(v, [-2.0, 0.25, 1.5]);
    /// ```
    #[track_caller]
    fn par_sort_unstable_by<F>(&mut self, compare: F)
    where
        F: Fn(&T, &T) -> std::cmp::Ordering + Sync,
    {
        super::sort::par_sort(self.as_parallel_slice_mut(), &compare, false);
    }

    /// Sorts the slice in parallel by a key; equal keys may be reordered.
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// let mut v = vec![-3i32, 1, -2];
    /// v.par_sort_unstable_by_key(|x| x.abs());
    /// assert_eq!(v, [1, -2, -3]);
    /// ```
    #[track_caller]
    fn par_sort_unstable_by_key<K, F>(&mut self, f: F)
    where
        K: Ord,
        F: Fn(&T) -> K + Sync,
    {
        let compare = |a: &T, b: &T| f(a).cmp(&f(b));
        super::sort::par_sort(self.as_parallel_slice_mut(), &compare, false);
    }
}

impl<T: Send> ParallelSliceMut<T> for [T] {
    fn as_parallel_slice_mut(&mut self) -> &mut [T] {
        self
    }
}

impl<T> Clone for Iter<'_, T> {
    fn clone(&self) -> Self {
        Iter { slice: self.slice }
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
