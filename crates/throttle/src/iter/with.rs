//! Adapters that carry a value or a fold through each piece of work: `map_with`, `update`,
//! `fold_with`, `try_fold`, `try_fold_with`, `fold_chunks` and `fold_chunks_with`.
//!
//! A piece is what one leaf consumes at once (see [`plumbing`](super::plumbing)); `map_with`
//! gives each piece its own clone of the value, and the folds yield one accumulator per piece
//! (per chunk for `fold_chunks`), in order.

use super::adapters::MapInitSeq;
use super::plumbing::{IndexedProducer, Producer};
use super::try_ops::Try;
use std::ops::ControlFlow;
use std::sync::Arc;

/// Forwards the length-related producer methods to `self.base`.
macro_rules! forward_base {
    () => {
        fn base_len(&self) -> usize {
            self.base.base_len()
        }
        fn min_len(&self) -> usize {
            self.base.min_len()
        }
        fn max_len(&self) -> usize {
            self.base.max_len()
        }
        fn stopped(&self) -> bool {
            self.base.stopped()
        }
    };
}

/// Maps each item with a closure and a clone of a value per piece; see
/// [`ParallelIterator::map_with`](super::ParallelIterator::map_with).
pub struct MapWith<P, T, F> {
    pub(crate) base: P,
    pub(crate) item: T,
    pub(crate) f: Arc<F>,
}

clone_debug!(MapWith [P, T] [F] { base, item } { f });

impl<P, T, F, R> Producer for MapWith<P, T, F>
where
    P: Producer,
    T: Send + Clone,
    F: Fn(&mut T, P::Item) -> R + Sync + Send,
{
    type Item = R;
    type IntoSeq = MapInitSeq<P::IntoSeq, T, F>;
    forward_base!();
    fn split_at(self, index: usize) -> (Self, Self) {
        let (l, r) = self.base.split_at(index);
        let left = MapWith {
            base: l,
            item: self.item.clone(),
            f: self.f.clone(),
        };
        let right = MapWith {
            base: r,
            item: self.item,
            f: self.f,
        };
        (left, right)
    }
    fn into_seq(self) -> Self::IntoSeq {
        MapInitSeq {
            iter: self.base.into_seq(),
            state: self.item,
            f: self.f,
        }
    }
    fn exact_len(&self) -> Option<usize> {
        self.base.exact_len()
    }
}

impl<P, T, F, R> IndexedProducer for MapWith<P, T, F>
where
    P: IndexedProducer,
    T: Send + Clone,
    F: Fn(&mut T, P::Item) -> R + Sync + Send,
{
}

/// Changes each item in place with a closure; see
/// [`ParallelIterator::update`](super::ParallelIterator::update).
pub struct Update<P, F> {
    pub(crate) base: P,
    pub(crate) f: Arc<F>,
}

clone_debug!(Update [P] [F] { base } { f });

impl<P, F> Producer for Update<P, F>
where
    P: Producer,
    F: Fn(&mut P::Item) + Sync + Send,
{
    type Item = P::Item;
    type IntoSeq = UpdateSeq<P::IntoSeq, F>;
    forward_base!();
    fn split_at(self, index: usize) -> (Self, Self) {
        let (l, r) = self.base.split_at(index);
        (
            Update {
                base: l,
                f: self.f.clone(),
            },
            Update { base: r, f: self.f },
        )
    }
    fn into_seq(self) -> Self::IntoSeq {
        UpdateSeq {
            iter: self.base.into_seq(),
            f: self.f,
        }
    }
    fn exact_len(&self) -> Option<usize> {
        self.base.exact_len()
    }
}

impl<P: IndexedProducer, F: Fn(&mut P::Item) + Sync + Send> IndexedProducer for Update<P, F> {}

/// The sequential iterator of an [`Update`] leaf.
pub struct UpdateSeq<I, F> {
    iter: I,
    f: Arc<F>,
}

impl<I: Iterator, F: Fn(&mut I::Item)> Iterator for UpdateSeq<I, F> {
    type Item = I::Item;
    fn next(&mut self) -> Option<I::Item> {
        let mut x = self.iter.next()?;
        (self.f)(&mut x);
        Some(x)
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.iter.size_hint()
    }
}

impl<I: DoubleEndedIterator, F: Fn(&mut I::Item)> DoubleEndedIterator for UpdateSeq<I, F> {
    fn next_back(&mut self) -> Option<I::Item> {
        let mut x = self.iter.next_back()?;
        (self.f)(&mut x);
        Some(x)
    }
}

/// Folds each piece into a clone of a value; see
/// [`ParallelIterator::fold_with`](super::ParallelIterator::fold_with).
pub struct FoldWith<P, T, F> {
    pub(crate) base: P,
    pub(crate) item: T,
    pub(crate) f: Arc<F>,
}

clone_debug!(FoldWith [P, T] [F] { base, item } { f });

impl<P, T, F> Producer for FoldWith<P, T, F>
where
    P: Producer,
    T: Send + Clone,
    F: Fn(T, P::Item) -> T + Sync + Send,
{
    type Item = T;
    type IntoSeq = std::option::IntoIter<T>;
    forward_base!();
    fn split_at(self, index: usize) -> (Self, Self) {
        let (l, r) = self.base.split_at(index);
        let left = FoldWith {
            base: l,
            item: self.item.clone(),
            f: self.f.clone(),
        };
        (
            left,
            FoldWith {
                base: r,
                item: self.item,
                f: self.f,
            },
        )
    }
    fn into_seq(self) -> Self::IntoSeq {
        Some(self.base.into_seq().fold(self.item, &*self.f)).into_iter()
    }
}

/// Folds a piece with a fallible closure: the accumulator as long as every step continues, else
/// the first break.
fn try_fold_seq<I, T, R, F>(iter: I, init: T, f: &F) -> R
where
    I: Iterator,
    R: Try<Output = T>,
    F: Fn(T, I::Item) -> R,
{
    let mut acc = init;
    for x in iter {
        match f(acc, x).branch() {
            ControlFlow::Continue(next) => acc = next,
            ControlFlow::Break(residual) => return R::from_residual(residual),
        }
    }
    R::from_output(acc)
}

/// Folds each piece with a fallible closure, starting from `identity()`; see
/// [`ParallelIterator::try_fold`](super::ParallelIterator::try_fold).
pub struct TryFold<P, ID, F> {
    pub(crate) base: P,
    pub(crate) identity: Arc<ID>,
    pub(crate) f: Arc<F>,
}

clone_debug!(TryFold [P] [ID, F] { base } { identity, f });

impl<P, ID, F, T, R> Producer for TryFold<P, ID, F>
where
    P: Producer,
    ID: Fn() -> T + Sync + Send,
    F: Fn(T, P::Item) -> R + Sync + Send,
    R: Try<Output = T>,
{
    type Item = R;
    type IntoSeq = std::option::IntoIter<R>;
    forward_base!();
    fn split_at(self, index: usize) -> (Self, Self) {
        let (l, r) = self.base.split_at(index);
        let left = TryFold {
            base: l,
            identity: self.identity.clone(),
            f: self.f.clone(),
        };
        (
            left,
            TryFold {
                base: r,
                identity: self.identity,
                f: self.f,
            },
        )
    }
    fn into_seq(self) -> Self::IntoSeq {
        Some(try_fold_seq(
            self.base.into_seq(),
            (self.identity)(),
            &*self.f,
        ))
        .into_iter()
    }
}

/// Folds each piece with a fallible closure, starting from a clone of a value; see
/// [`ParallelIterator::try_fold_with`](super::ParallelIterator::try_fold_with).
pub struct TryFoldWith<P, T, F> {
    pub(crate) base: P,
    pub(crate) item: T,
    pub(crate) f: Arc<F>,
}

clone_debug!(TryFoldWith [P, T] [F] { base, item } { f });

impl<P, T, F, R> Producer for TryFoldWith<P, T, F>
where
    P: Producer,
    T: Send + Clone,
    F: Fn(T, P::Item) -> R + Sync + Send,
    R: Try<Output = T>,
{
    type Item = R;
    type IntoSeq = std::option::IntoIter<R>;
    forward_base!();
    fn split_at(self, index: usize) -> (Self, Self) {
        let (l, r) = self.base.split_at(index);
        let left = TryFoldWith {
            base: l,
            item: self.item.clone(),
            f: self.f.clone(),
        };
        (
            left,
            TryFoldWith {
                base: r,
                item: self.item,
                f: self.f,
            },
        )
    }
    fn into_seq(self) -> Self::IntoSeq {
        Some(try_fold_seq(self.base.into_seq(), self.item, &*self.f)).into_iter()
    }
}

/// Where a chunk fold starts: `identity()` or a clone of a value.
pub trait ChunkStart: Send + Sync {
    /// The accumulator's type.
    type Acc;
    /// A fresh accumulator.
    fn start(&self) -> Self::Acc;
}

/// The start of [`FoldChunks`]: calls the identity closure.
pub struct ByIdentity<ID>(Arc<ID>);

impl<ID> Clone for ByIdentity<ID> {
    fn clone(&self) -> Self {
        ByIdentity(self.0.clone())
    }
}

impl<T, ID: Fn() -> T + Send + Sync> ChunkStart for ByIdentity<ID> {
    type Acc = T;
    fn start(&self) -> T {
        (self.0)()
    }
}

/// The start of [`FoldChunksWith`]: clones the value.
#[derive(Clone, Debug)]
pub struct ByClone<T>(T);

impl<T: Clone + Send + Sync> ChunkStart for ByClone<T> {
    type Acc = T;
    fn start(&self) -> T {
        self.0.clone()
    }
}

/// Folds each chunk of `size` items into one value; see
/// [`IndexedParallelIterator::fold_chunks`](super::IndexedParallelIterator::fold_chunks) and
/// `fold_chunks_with`.
pub struct FoldChunksBy<P, S, F> {
    base: P,
    size: usize,
    start: S,
    f: Arc<F>,
}

clone_debug!(FoldChunksBy [P, S] [F] { base, size } { start, f });

/// [`FoldChunksBy`] starting each chunk from `identity()`.
pub type FoldChunks<P, ID, F> = FoldChunksBy<P, ByIdentity<ID>, F>;
/// [`FoldChunksBy`] starting each chunk from a clone of a value.
pub type FoldChunksWith<P, T, F> = FoldChunksBy<P, ByClone<T>, F>;

impl<P, ID, F> FoldChunksBy<P, ByIdentity<ID>, F> {
    pub(crate) fn with_identity(base: P, size: usize, identity: ID, f: F) -> Self {
        assert!(size != 0, "chunk_size must not be zero");
        FoldChunksBy {
            base,
            size,
            start: ByIdentity(Arc::new(identity)),
            f: Arc::new(f),
        }
    }
}

impl<P, T, F> FoldChunksBy<P, ByClone<T>, F> {
    pub(crate) fn with_value(base: P, size: usize, init: T, f: F) -> Self {
        assert!(size != 0, "chunk_size must not be zero");
        FoldChunksBy {
            base,
            size,
            start: ByClone(init),
            f: Arc::new(f),
        }
    }
}

impl<P, S, F> Producer for FoldChunksBy<P, S, F>
where
    P: IndexedProducer,
    S: ChunkStart + Clone,
    F: Fn(S::Acc, P::Item) -> S::Acc + Sync + Send,
{
    type Item = S::Acc;
    type IntoSeq = FoldChunksSeq<P::IntoSeq, S, F>;
    fn base_len(&self) -> usize {
        self.base.base_len().div_ceil(self.size)
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        let at = index.saturating_mul(self.size).min(self.base.base_len());
        let (l, r) = self.base.split_at(at);
        let left = FoldChunksBy {
            base: l,
            size: self.size,
            start: self.start.clone(),
            f: self.f.clone(),
        };
        (
            left,
            FoldChunksBy {
                base: r,
                size: self.size,
                start: self.start,
                f: self.f,
            },
        )
    }
    fn into_seq(self) -> Self::IntoSeq {
        FoldChunksSeq {
            left: self.base.base_len(),
            iter: self.base.into_seq(),
            size: self.size,
            start: self.start,
            f: self.f,
        }
    }
    fn min_len(&self) -> usize {
        self.base.min_len().div_ceil(self.size)
    }
    fn max_len(&self) -> usize {
        (self.base.max_len() / self.size).max(1)
    }
    fn exact_len(&self) -> Option<usize> {
        Some(self.base_len())
    }
}

impl<P, S, F> IndexedProducer for FoldChunksBy<P, S, F>
where
    P: IndexedProducer,
    S: ChunkStart + Clone,
    F: Fn(S::Acc, P::Item) -> S::Acc + Sync + Send,
{
}

/// The sequential iterator of a [`FoldChunksBy`] leaf.
pub struct FoldChunksSeq<I, S, F> {
    iter: I,
    left: usize,
    size: usize,
    start: S,
    f: Arc<F>,
}

impl<I: Iterator, S: ChunkStart, F: Fn(S::Acc, I::Item) -> S::Acc> Iterator
    for FoldChunksSeq<I, S, F>
{
    type Item = S::Acc;
    fn next(&mut self) -> Option<S::Acc> {
        if self.left == 0 {
            return None;
        }
        let n = self.size.min(self.left);
        self.left -= n;
        Some(
            self.iter
                .by_ref()
                .take(n)
                .fold(self.start.start(), &*self.f),
        )
    }
}

impl<ID> std::fmt::Debug for ByIdentity<ID> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ByIdentity")
    }
}
