//! More views of a slice: exact chunks, chunks from the end, array windows, and parts split by
//! a predicate (`par_split`, `par_split_inclusive`, `par_chunk_by` and their `_mut` forms).
//!
//! Parts split by a predicate are cut on part boundaries: a piece of work is a run of whole
//! parts, and a split moves its cut forward to the next boundary (so these iterators are not
//! indexed, and a piece never shares a part with another).

use super::plumbing::engine::Pieces;
use super::plumbing::{Folder, Producer};
use std::sync::Arc;

/// Generates an exact-chunks producer (from the front or from the back).
macro_rules! exact_chunks {
    ($(#[$m:meta])* $name:ident, $slice:ty, $item:ty, $seq:ident, $method:ident, $split:ident,
     rev: $rev:literal, [$($bound:tt)*]) => {
        $(#[$m])*
        #[derive(Debug)]
        pub struct $name<'a, T> {
            pub(crate) slice: $slice,
            pub(crate) size: usize,
            pub(crate) rem: $slice,
        }

        producer_iterator!(impl['a, T: $($bound)* + 'a] $name<'a, T> => $item, where [],
            len: |it| it.slice.len() / it.size);

        impl<'a, T: $($bound)*> Producer for $name<'a, T> {
            type Item = $item;
            type IntoIter = std::slice::$seq<'a, T>;
            fn split_at(self, index: usize) -> (Self, Self) {
                let n = self.slice.len();
                let at = (index * self.size).min(n);
                let size = self.size;
                let (rem_l, rem_r) = self.rem.$split(0);
                if $rev {
                    // The first `index` chunks are the last `at` items.
                    let (r, l) = self.slice.$split(n - at);
                    ($name { slice: l, size, rem: rem_l }, $name { slice: r, size, rem: rem_r })
                } else {
                    let (l, r) = self.slice.$split(at);
                    ($name { slice: l, size, rem: rem_l }, $name { slice: r, size, rem: rem_r })
                }
            }
            fn into_iter(self) -> Self::IntoIter {
                self.slice.$method(self.size)
            }
        }
    };
}

exact_chunks!(
    /// Chunks of exactly `size` items; see
    /// [`ParallelSlice::par_chunks_exact`](super::slice::ParallelSlice::par_chunks_exact).
    ChunksExact, &'a [T], &'a [T], ChunksExact, chunks_exact, split_at, rev: false, [Sync]
);
exact_chunks!(
    /// Mutable chunks of exactly `size` items; see
    /// [`ParallelSliceMut::par_chunks_exact_mut`](super::slice::ParallelSliceMut::par_chunks_exact_mut).
    ChunksExactMut, &'a mut [T], &'a mut [T], ChunksExactMut, chunks_exact_mut, split_at_mut,
    rev: false, [Send]
);
exact_chunks!(
    /// Chunks of exactly `size` items from the end; see
    /// [`ParallelSlice::par_rchunks_exact`](super::slice::ParallelSlice::par_rchunks_exact).
    RChunksExact, &'a [T], &'a [T], RChunksExact, rchunks_exact, split_at, rev: true, [Sync]
);
exact_chunks!(
    /// Mutable chunks of exactly `size` items from the end; see
    /// [`ParallelSliceMut::par_rchunks_exact_mut`](super::slice::ParallelSliceMut::par_rchunks_exact_mut).
    RChunksExactMut, &'a mut [T], &'a mut [T], RChunksExactMut, rchunks_exact_mut,
    split_at_mut, rev: true, [Send]
);

impl<'a, T> ChunksExact<'a, T> {
    /// The items at the end that do not make a whole chunk (at most `size - 1`).
    pub fn remainder(&self) -> &'a [T] {
        self.rem
    }
}

impl<'a, T> RChunksExact<'a, T> {
    /// The items at the front that do not make a whole chunk (at most `size - 1`).
    pub fn remainder(&self) -> &'a [T] {
        self.rem
    }
}

impl<'a, T> ChunksExactMut<'a, T> {
    /// The items at the end that do not make a whole chunk (at most `size - 1`).
    pub fn into_remainder(self) -> &'a mut [T] {
        self.rem
    }

    /// The items at the end that do not make a whole chunk, taken out of the iterator.
    pub fn take_remainder(&mut self) -> &'a mut [T] {
        std::mem::take(&mut self.rem)
    }
}

impl<'a, T> RChunksExactMut<'a, T> {
    /// The items at the front that do not make a whole chunk (at most `size - 1`).
    pub fn into_remainder(self) -> &'a mut [T] {
        self.rem
    }

    /// The items at the front that do not make a whole chunk, taken out of the iterator.
    pub fn take_remainder(&mut self) -> &'a mut [T] {
        std::mem::take(&mut self.rem)
    }
}

impl<T> Clone for ChunksExact<'_, T> {
    fn clone(&self) -> Self {
        ChunksExact { ..*self }
    }
}

impl<T> Clone for RChunksExact<'_, T> {
    fn clone(&self) -> Self {
        RChunksExact { ..*self }
    }
}

/// Generates a chunks-from-the-end producer (the last chunk, at the front, may be shorter).
macro_rules! rchunks {
    ($(#[$m:meta])* $name:ident, $slice:ty, $item:ty, $seq:ident, $method:ident, $split:ident,
     [$($bound:tt)*]) => {
        $(#[$m])*
        #[derive(Debug)]
        pub struct $name<'a, T> {
            pub(crate) slice: $slice,
            pub(crate) size: usize,
        }

        producer_iterator!(impl['a, T: $($bound)* + 'a] $name<'a, T> => $item, where [],
            len: |it| it.slice.len().div_ceil(it.size));

        impl<'a, T: $($bound)*> Producer for $name<'a, T> {
            type Item = $item;
            type IntoIter = std::slice::$seq<'a, T>;
            fn split_at(self, index: usize) -> (Self, Self) {
                let n = self.slice.len();
                let cut = n.saturating_sub(index * self.size);
                let size = self.size;
                let (r, l) = self.slice.$split(cut);
                ($name { slice: l, size }, $name { slice: r, size })
            }
            fn into_iter(self) -> Self::IntoIter {
                self.slice.$method(self.size)
            }
        }
    };
}

rchunks!(
    /// Chunks of `size` items from the end; see
    /// [`ParallelSlice::par_rchunks`](super::slice::ParallelSlice::par_rchunks).
    RChunks, &'a [T], &'a [T], RChunks, rchunks, split_at, [Sync]
);
rchunks!(
    /// Mutable chunks of `size` items from the end; see
    /// [`ParallelSliceMut::par_rchunks_mut`](super::slice::ParallelSliceMut::par_rchunks_mut).
    RChunksMut, &'a mut [T], &'a mut [T], RChunksMut, rchunks_mut, split_at_mut, [Send]
);

impl<T> Clone for RChunks<'_, T> {
    fn clone(&self) -> Self {
        RChunks { ..*self }
    }
}

/// Windows of `N` items as arrays; see
/// [`ParallelSlice::par_array_windows`](super::slice::ParallelSlice::par_array_windows).
#[derive(Debug)]
pub struct ArrayWindows<'a, T, const N: usize> {
    pub(crate) slice: &'a [T],
}

impl<T, const N: usize> Clone for ArrayWindows<'_, T, N> {
    fn clone(&self) -> Self {
        ArrayWindows { slice: self.slice }
    }
}

/// A window as an array reference (its length is `N` by construction).
fn as_array<T, const N: usize>(w: &[T]) -> &[T; N] {
    w.try_into().expect("a window has N items")
}

producer_iterator!(impl['a, T: Sync + 'a, const N: usize] ArrayWindows<'a, T, N> => &'a [T; N],
    where [], len: |it| (it.slice.len() + 1).saturating_sub(N));

impl<'a, T: Sync, const N: usize> Producer for ArrayWindows<'a, T, N> {
    type Item = &'a [T; N];
    type IntoIter = std::iter::Map<std::slice::Windows<'a, T>, fn(&'a [T]) -> &'a [T; N]>;
    fn split_at(self, index: usize) -> (Self, Self) {
        let left_end = (index + N - 1).min(self.slice.len());
        (
            ArrayWindows {
                slice: &self.slice[..left_end],
            },
            ArrayWindows {
                slice: &self.slice[index.min(self.slice.len())..],
            },
        )
    }
    fn into_iter(self) -> Self::IntoIter {
        self.slice
            .windows(N)
            .map(as_array::<T, N> as fn(&'a [T]) -> &'a [T; N])
    }
}

/// How the parts of a predicate split end.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Cut {
    /// `split`: parts between separators, separators dropped.
    Split,
    /// `split_inclusive`: parts each ending with its separator; no empty last part.
    Inclusive,
}

/// Generates the predicate-split producers and their sequential iterators.
macro_rules! split_by {
    ($(#[$m:meta])* $name:ident, $seq:ident, $slice:ty, $split:ident, $cut:expr, [$($bound:tt)*]) => {
        $(#[$m])*
        pub struct $name<'a, T, P> {
            pub(crate) slice: $slice,
            pub(crate) pred: Arc<P>,
            /// This piece holds the slice's end (else it ends with a separator).
            pub(crate) last: bool,
            /// This piece yields nothing (a split found no boundary to give it).
            pub(crate) nothing: bool,
        }

        impl<'a, T: std::fmt::Debug, P> std::fmt::Debug for $name<'a, T, P> {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.debug_struct(stringify!($name)).field("slice", &self.slice).finish_non_exhaustive()
            }
        }

        impl<'a, T, P> $name<'a, T, P> {
            pub(crate) fn new(slice: $slice, pred: P) -> Self {
                $name { slice, pred: Arc::new(pred), last: true, nothing: false }
            }
        }

        units_iterator!(impl['a, T: $($bound)* + 'a, P: Fn(&T) -> bool + Sync + Send] $name<'a, T, P> => $slice,
            where [], units: |it| it.slice.len());

        impl<'a, T: $($bound)*, P: Fn(&T) -> bool + Sync + Send> Pieces for $name<'a, T, P> {
            type Item = $slice;
            fn split_at(self, index: usize) -> (Self, Self) {
                let from = index.min(self.slice.len());
                let pred = &*self.pred;
                let sep = self.slice[from..].iter().position(|x| pred(x)).map(|i| from + i);
                let (p, last, nothing) = (self.pred, self.last, self.nothing);
                match sep {
                    Some(s) => {
                        let (l, r) = self.slice.$split(s + 1);
                        (
                            $name { slice: l, pred: p.clone(), last: false, nothing },
                            $name { slice: r, pred: p, last, nothing },
                        )
                    }
                    None => {
                        let (l, r) = self.slice.$split(self.slice.len());
                        (
                            $name { slice: l, pred: p.clone(), last, nothing },
                            $name { slice: r, pred: p, last, nothing: true },
                        )
                    }
                }
            }
            fn fold_with<F: Folder<$slice>>(self, folder: F) -> F {
                folder.consume_iter(self.into_seq())
            }
        }

        impl<'a, T, P> $name<'a, T, P> {
            fn into_seq(self) -> $seq<'a, T, P> {
                // An empty piece that does not hold the slice's end has no part of its own.
                let nothing = self.nothing || (!self.last && self.slice.is_empty());
                let mut rest = self.slice;
                if !self.last && !nothing && $cut == Cut::Split {
                    // Drop the separator that ends the piece: the part after it is the next
                    // piece's first.
                    let n = rest.len();
                    rest = rest.$split(n - 1).0;
                }
                $seq { rest: (!nothing).then_some(rest), pred: self.pred }
            }
        }

        /// The sequential iterator of a predicate split's leaf.
        pub(crate) struct $seq<'a, T, P> {
            rest: Option<$slice>,
            pred: Arc<P>,
        }

        impl<'a, T, P: Fn(&T) -> bool> Iterator for $seq<'a, T, P> {
            type Item = $slice;
            fn next(&mut self) -> Option<$slice> {
                let rest = self.rest.take()?;
                if $cut == Cut::Inclusive && rest.is_empty() {
                    return None;
                }
                let pred = &*self.pred;
                match rest.iter().position(|x| pred(x)) {
                    Some(i) => {
                        let (head, tail) = rest.$split(i + 1);
                        self.rest = Some(tail);
                        if $cut == Cut::Inclusive {
                            Some(head)
                        } else {
                            Some(head.$split(i).0)
                        }
                    }
                    None => Some(rest),
                }
            }
        }
    };
}

split_by!(
    /// Parts between the items that match a predicate; see
    /// [`ParallelSlice::par_split`](super::slice::ParallelSlice::par_split).
    Split, SplitSeq, &'a [T], split_at, Cut::Split, [Sync]
);
split_by!(
    /// Parts each ending with an item that matches a predicate; see
    /// [`ParallelSlice::par_split_inclusive`](super::slice::ParallelSlice::par_split_inclusive).
    SplitInclusive, SplitInclusiveSeq, &'a [T], split_at, Cut::Inclusive, [Sync]
);
split_by!(
    /// Mutable parts between the items that match a predicate; see
    /// [`ParallelSliceMut::par_split_mut`](super::slice::ParallelSliceMut::par_split_mut).
    SplitMut, SplitMutSeq, &'a mut [T], split_at_mut, Cut::Split, [Send]
);
split_by!(
    /// Mutable parts each ending with an item that matches a predicate; see
    /// [`ParallelSliceMut::par_split_inclusive_mut`](super::slice::ParallelSliceMut::par_split_inclusive_mut).
    SplitInclusiveMut, SplitInclusiveMutSeq, &'a mut [T], split_at_mut, Cut::Inclusive, [Send]
);

impl<T, P> Clone for Split<'_, T, P> {
    fn clone(&self) -> Self {
        Split {
            pred: self.pred.clone(),
            ..*self
        }
    }
}

impl<T, P> Clone for SplitInclusive<'_, T, P> {
    fn clone(&self) -> Self {
        SplitInclusive {
            pred: self.pred.clone(),
            ..*self
        }
    }
}

/// Generates the `chunk_by` producers: runs of items where each neighbour pair satisfies the
/// predicate.
macro_rules! chunk_by {
    ($(#[$m:meta])* $name:ident, $seq:ident, $slice:ty, $split:ident, [$($bound:tt)*]) => {
        $(#[$m])*
        pub struct $name<'a, T, P> {
            pub(crate) slice: $slice,
            pub(crate) pred: Arc<P>,
        }

        impl<'a, T: std::fmt::Debug, P> std::fmt::Debug for $name<'a, T, P> {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.debug_struct(stringify!($name)).field("slice", &self.slice).finish_non_exhaustive()
            }
        }

        impl<'a, T, P> $name<'a, T, P> {
            pub(crate) fn new(slice: $slice, pred: P) -> Self {
                $name { slice, pred: Arc::new(pred) }
            }
        }

        /// Where the run that starts at or before `from` ends: the first `i >= from.max(1)`
        /// whose item does not go with the one before it (or the slice's length).
        fn $seq<T, P: Fn(&T, &T) -> bool>(s: &[T], from: usize, pred: &P) -> usize {
            let from = from.max(1);
            (from..s.len()).find(|&i| !pred(&s[i - 1], &s[i])).unwrap_or(s.len())
        }

        units_iterator!(impl['a, T: $($bound)* + 'a, P: Fn(&T, &T) -> bool + Sync + Send] $name<'a, T, P> => $slice,
            where [], units: |it| it.slice.len());

        impl<'a, T: $($bound)*, P: Fn(&T, &T) -> bool + Sync + Send> Pieces for $name<'a, T, P> {
            type Item = $slice;
            fn split_at(self, index: usize) -> (Self, Self) {
                let cut = if index == 0 { 0 } else { $seq(&*self.slice, index, &*self.pred) };
                let (l, r) = self.slice.$split(cut);
                ($name { slice: l, pred: self.pred.clone() }, $name { slice: r, pred: self.pred })
            }
            fn fold_with<F: Folder<$slice>>(self, folder: F) -> F {
                folder.consume_iter(ChunkBySeq { rest: self.slice, pred: self.pred })
            }
        }

        impl<'a, T, P: Fn(&T, &T) -> bool> Iterator for ChunkBySeq<$slice, P> {
            type Item = $slice;
            fn next(&mut self) -> Option<$slice> {
                if self.rest.is_empty() {
                    return None;
                }
                let end = $seq(&*self.rest, 1, &*self.pred);
                let rest = std::mem::take(&mut self.rest);
                let (head, tail) = rest.$split(end);
                self.rest = tail;
                Some(head)
            }
        }
    };
}

/// The sequential iterator of a `chunk_by` leaf.
pub(crate) struct ChunkBySeq<S, P> {
    rest: S,
    pred: Arc<P>,
}

chunk_by!(
    /// Runs of items where each neighbour pair satisfies a predicate; see
    /// [`ParallelSlice::par_chunk_by`](super::slice::ParallelSlice::par_chunk_by).
    ChunkBy, run_end, &'a [T], split_at, [Sync]
);
chunk_by!(
    /// Mutable runs of items where each neighbour pair satisfies a predicate; see
    /// [`ParallelSliceMut::par_chunk_by_mut`](super::slice::ParallelSliceMut::par_chunk_by_mut).
    ChunkByMut, run_end_mut, &'a mut [T], split_at_mut, [Send]
);

impl<T, P> Clone for ChunkBy<'_, T, P> {
    fn clone(&self) -> Self {
        ChunkBy {
            slice: self.slice,
            pred: self.pred.clone(),
        }
    }
}
