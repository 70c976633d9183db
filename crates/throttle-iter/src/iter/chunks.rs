//! `chunks`, `fold_chunks` and `fold_chunks_with`: items grouped in runs of `chunk_size` (the
//! last may be shorter), each run gathered into a `Vec` or folded. The producer splits at whole
//! chunks; a piece's sequential iterator cuts each chunk off its base producer.

use super::fold::{Call, Start, Value};
use super::plumbing::{Producer, ProducerCallback};
use super::IndexedParallelIterator;
use throttle_core::seam::inlined2;

/// Groups items into `Vec`s of `chunk_size` (the last may be shorter); see
/// [`IndexedParallelIterator::chunks`].
///
/// # Examples
/// ```
/// use throttle::prelude::*;
/// let c: Vec<Vec<u32>> = (0..5u32).into_par_iter().chunks(2).collect();
/// assert_eq!(c, [vec![0, 1], vec![2, 3], vec![4]]);
/// ```
#[derive(Debug, Clone)]
#[must_use = "iterator adaptors are lazy and do nothing unless consumed"]
pub struct Chunks<I> {
    base: I,
    size: usize,
}

impl<I> Chunks<I> {
    pub(super) fn new(base: I, size: usize) -> Self {
        Chunks { base, size }
    }
}

bridged!(impl[I: IndexedParallelIterator] Chunks<I> => Vec<I::Item>, where [] {
    fn len(&self) -> usize {
        self.base.len().div_ceil(self.size)
    }

    fn with_producer<CB: ProducerCallback<Vec<I::Item>>>(self, callback: CB) -> CB::Output {
        let len = self.base.len();
        self.base.with_producer(ChunkCallback { callback, size: self.size, len, op: Gather })
    }
});

/// Folds each chunk of `chunk_size` items from `identity()`; see
/// [`IndexedParallelIterator::fold_chunks`].
///
/// # Examples
/// ```
/// use throttle::prelude::*;
/// let sums: Vec<u32> = (1..=7u32).into_par_iter().fold_chunks(3, || 0, |a, x| a + x).collect();
/// assert_eq!(sums, [6, 15, 7]);
/// ```
#[derive(Clone)]
#[must_use = "iterator adaptors are lazy and do nothing unless consumed"]
pub struct FoldChunks<I, ID, F> {
    base: I,
    size: usize,
    identity: ID,
    fold_op: F,
}

impl<I: std::fmt::Debug, ID, F> std::fmt::Debug for FoldChunks<I, ID, F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FoldChunks")
            .field("base", &self.base)
            .field("chunk_size", &self.size)
            .finish()
    }
}

impl<I, ID, F> FoldChunks<I, ID, F> {
    pub(super) fn new(base: I, size: usize, identity: ID, fold_op: F) -> Self {
        FoldChunks {
            base,
            size,
            identity,
            fold_op,
        }
    }
}

bridged!(impl[I: IndexedParallelIterator, ID, F, T] FoldChunks<I, ID, F> => T,
    where [ID: Fn() -> T + Send + Sync, F: Fn(T, I::Item) -> T + Send + Sync, T: Send,] {
    fn len(&self) -> usize {
        self.base.len().div_ceil(self.size)
    }

    fn with_producer<CB: ProducerCallback<T>>(self, callback: CB) -> CB::Output {
        let len = self.base.len();
        let op = FoldEach { start: Call::new(&self.identity), f: &self.fold_op };
        self.base.with_producer(ChunkCallback { callback, size: self.size, len, op })
    }
});

/// Folds each chunk of `chunk_size` items from a clone of a value; see
/// [`IndexedParallelIterator::fold_chunks_with`].
///
/// # Examples
/// ```
/// use throttle::prelude::*;
/// let sums: Vec<u32> = (1..=7u32).into_par_iter().fold_chunks_with(3, 0, |a, x| a + x).collect();
/// assert_eq!(sums, [6, 15, 7]);
/// ```
#[derive(Clone)]
#[must_use = "iterator adaptors are lazy and do nothing unless consumed"]
pub struct FoldChunksWith<I, U, F> {
    base: I,
    size: usize,
    item: U,
    fold_op: F,
}

impl<I: std::fmt::Debug, U: std::fmt::Debug, F> std::fmt::Debug for FoldChunksWith<I, U, F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FoldChunksWith")
            .field("base", &self.base)
            .field("chunk_size", &self.size)
            .field("item", &self.item)
            .finish()
    }
}

impl<I, U, F> FoldChunksWith<I, U, F> {
    pub(super) fn new(base: I, size: usize, item: U, fold_op: F) -> Self {
        FoldChunksWith {
            base,
            size,
            item,
            fold_op,
        }
    }
}

bridged!(impl[I: IndexedParallelIterator, U, F] FoldChunksWith<I, U, F> => U,
    where [U: Send + Clone, F: Fn(U, I::Item) -> U + Send + Sync,] {
    fn len(&self) -> usize {
        self.base.len().div_ceil(self.size)
    }

    fn with_producer<CB: ProducerCallback<U>>(self, callback: CB) -> CB::Output {
        let len = self.base.len();
        let op = FoldEach { start: Value::new(self.item), f: &self.fold_op };
        self.base.with_producer(ChunkCallback { callback, size: self.size, len, op })
    }
});

/// What becomes of a chunk: its items gathered into a `Vec`, or folded.
pub(crate) trait ChunkOp<T>: Clone + Send {
    type Out;
    fn chunk<I: Iterator<Item = T>>(&self, items: I) -> Self::Out;
}

/// [`Chunks`]' op.
#[derive(Clone, Copy)]
pub(crate) struct Gather;

impl<T> ChunkOp<T> for Gather {
    type Out = Vec<T>;
    fn chunk<I: Iterator<Item = T>>(&self, items: I) -> Vec<T> {
        items.collect()
    }
}

/// [`FoldChunks`]' and [`FoldChunksWith`]'s op.
pub(crate) struct FoldEach<'f, S, F> {
    start: S,
    f: &'f F,
}

impl<S: Clone, F> Clone for FoldEach<'_, S, F> {
    fn clone(&self) -> Self {
        FoldEach {
            start: self.start.clone(),
            f: self.f,
        }
    }
}

impl<T, S: Start, F: Fn(S::Acc, T) -> S::Acc + Sync> ChunkOp<T> for FoldEach<'_, S, F> {
    type Out = S::Acc;
    fn chunk<I: Iterator<Item = T>>(&self, items: I) -> S::Acc {
        items.fold(self.start.clone().start(), inlined2(self.f))
    }
}

/// Wraps the base's producer (of `len` items) in a [`ChunkProducer`].
struct ChunkCallback<CB, G> {
    callback: CB,
    size: usize,
    len: usize,
    op: G,
}

impl<T, CB, G> ProducerCallback<T> for ChunkCallback<CB, G>
where
    G: ChunkOp<T>,
    CB: ProducerCallback<G::Out>,
{
    type Output = CB::Output;
    fn callback<P: Producer<Item = T>>(self, base: P) -> CB::Output {
        self.callback.callback(ChunkProducer {
            base,
            size: self.size,
            len: self.len,
            op: self.op,
        })
    }
}

/// The producer of the chunk adapters: a base of `len` items, in chunks of `size`.
struct ChunkProducer<P, G> {
    base: P,
    size: usize,
    len: usize,
    op: G,
}

impl<P: Producer, G: ChunkOp<P::Item>> Producer for ChunkProducer<P, G> {
    type Item = G::Out;
    type IntoIter = ChunkIter<P, G>;

    fn into_iter(self) -> Self::IntoIter {
        ChunkIter {
            base: Some(self.base),
            size: self.size,
            len: self.len,
            op: self.op,
        }
    }

    fn min_len(&self) -> usize {
        self.base.min_len().div_ceil(self.size)
    }

    fn max_len(&self) -> usize {
        (self.base.max_len() / self.size).max(1)
    }

    fn split_at(self, index: usize) -> (Self, Self) {
        let at = index.saturating_mul(self.size).min(self.len);
        let (left, right) = self.base.split_at(at);
        (
            ChunkProducer {
                base: left,
                size: self.size,
                len: at,
                op: self.op.clone(),
            },
            ChunkProducer {
                base: right,
                size: self.size,
                len: self.len - at,
                op: self.op,
            },
        )
    }
}

/// The sequential iterator of a chunk adapter's piece: cuts each chunk off the base producer.
struct ChunkIter<P, G> {
    base: Option<P>,
    size: usize,
    len: usize,
    op: G,
}

impl<P: Producer, G: ChunkOp<P::Item>> Iterator for ChunkIter<P, G> {
    type Item = G::Out;
    fn next(&mut self) -> Option<G::Out> {
        if self.len == 0 {
            return None;
        }
        let n = self.size.min(self.len);
        let (head, tail) = self.base.take()?.split_at(n);
        self.base = Some(tail);
        self.len -= n;
        Some(self.op.chunk(head.into_iter()))
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.len.div_ceil(self.size);
        (n, Some(n))
    }
}

impl<P: Producer, G: ChunkOp<P::Item>> DoubleEndedIterator for ChunkIter<P, G> {
    fn next_back(&mut self) -> Option<G::Out> {
        if self.len == 0 {
            return None;
        }
        // The last chunk is the short one, if any.
        let n = match self.len % self.size {
            0 => self.size,
            r => r,
        };
        let (head, tail) = self.base.take()?.split_at(self.len - n);
        self.base = Some(head);
        self.len -= n;
        Some(self.op.chunk(tail.into_iter()))
    }
}

impl<P: Producer, G: ChunkOp<P::Item>> ExactSizeIterator for ChunkIter<P, G> {}
