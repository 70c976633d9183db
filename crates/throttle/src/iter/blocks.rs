//! Adapters that shape the pieces of a run rather than the items: `with_max_len`,
//! `by_exponential_blocks`, `by_uniform_blocks`; and `positions`.

use super::plumbing::{IndexedProducer, Producer};
use std::sync::Arc;

/// Keeps pieces at most `max` long; see
/// [`IndexedParallelIterator::with_max_len`](super::IndexedParallelIterator::with_max_len).
#[derive(Debug, Clone)]
pub struct MaxLen<P> {
    pub(crate) base: P,
    pub(crate) max: usize,
}

impl<P: Producer> Producer for MaxLen<P> {
    type Item = P::Item;
    type IntoSeq = P::IntoSeq;
    fn base_len(&self) -> usize {
        self.base.base_len()
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        let (l, r) = self.base.split_at(index);
        let max = self.max;
        (MaxLen { base: l, max }, MaxLen { base: r, max })
    }
    fn into_seq(self) -> Self::IntoSeq {
        self.base.into_seq()
    }
    fn min_len(&self) -> usize {
        self.base.min_len()
    }
    fn max_len(&self) -> usize {
        self.base.max_len().min(self.max.max(1))
    }
    fn stopped(&self) -> bool {
        self.base.stopped()
    }
    fn exact_len(&self) -> Option<usize> {
        self.base.exact_len()
    }
}

impl<P: IndexedProducer> IndexedProducer for MaxLen<P> {}

/// The same items in the same order, from
/// [`by_exponential_blocks`](super::IndexedParallelIterator::by_exponential_blocks) and
/// [`by_uniform_blocks`](super::IndexedParallelIterator::by_uniform_blocks).
///
/// rayon runs such an iterator one block after another, so that a short-circuiting consumer
/// (`find_first`, `any`, ...) stops without having started the later blocks. throttle's runs
/// already work front first (pieces are claimed in order, and a found item stops every piece
/// after it), so a block here bounds only how long a piece may be: uniform blocks of `size`
/// keep pieces at most `size` long; exponential blocks leave the pieces as they are.
#[derive(Debug, Clone)]
pub struct Blocks<P> {
    base: P,
    max: usize,
}

/// [`Blocks`] from [`by_exponential_blocks`](super::IndexedParallelIterator::by_exponential_blocks).
pub type ExponentialBlocks<P> = Blocks<P>;
/// [`Blocks`] from [`by_uniform_blocks`](super::IndexedParallelIterator::by_uniform_blocks).
pub type UniformBlocks<P> = Blocks<P>;

impl<P> Blocks<P> {
    pub(crate) fn new(base: P, max: usize) -> Self {
        Blocks { base, max }
    }
}

impl<P: Producer> Producer for Blocks<P> {
    type Item = P::Item;
    type IntoSeq = P::IntoSeq;
    fn base_len(&self) -> usize {
        self.base.base_len()
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        let (l, r) = self.base.split_at(index);
        let max = self.max;
        (Blocks { base: l, max }, Blocks { base: r, max })
    }
    fn into_seq(self) -> Self::IntoSeq {
        self.base.into_seq()
    }
    fn min_len(&self) -> usize {
        self.base.min_len()
    }
    fn max_len(&self) -> usize {
        self.base.max_len().min(self.max)
    }
    fn stopped(&self) -> bool {
        self.base.stopped()
    }
    fn exact_len(&self) -> Option<usize> {
        self.base.exact_len()
    }
}

impl<P: IndexedProducer> IndexedProducer for Blocks<P> {}

/// The indices of the items that satisfy a predicate; see
/// [`IndexedParallelIterator::positions`](super::IndexedParallelIterator::positions).
pub struct Positions<P, F> {
    base: P,
    offset: usize,
    f: Arc<F>,
}

clone_debug!(Positions [P] [F] { base, offset } { f });

impl<P, F> Positions<P, F> {
    pub(crate) fn new(base: P, f: F) -> Self {
        Positions {
            base,
            offset: 0,
            f: Arc::new(f),
        }
    }
}

impl<P, F> Producer for Positions<P, F>
where
    P: IndexedProducer,
    F: Fn(P::Item) -> bool + Sync + Send,
{
    type Item = usize;
    type IntoSeq = PositionsSeq<P::IntoSeq, F>;
    fn base_len(&self) -> usize {
        self.base.base_len()
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        let (l, r) = self.base.split_at(index);
        let left = Positions {
            base: l,
            offset: self.offset,
            f: self.f.clone(),
        };
        let right = Positions {
            base: r,
            offset: self.offset + index,
            f: self.f,
        };
        (left, right)
    }
    fn into_seq(self) -> Self::IntoSeq {
        PositionsSeq {
            iter: self.base.into_seq(),
            next: self.offset,
            f: self.f,
        }
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
}

/// The sequential iterator of a [`Positions`] leaf.
pub struct PositionsSeq<I, F> {
    iter: I,
    next: usize,
    f: Arc<F>,
}

impl<I: Iterator, F: Fn(I::Item) -> bool> Iterator for PositionsSeq<I, F> {
    type Item = usize;
    fn next(&mut self) -> Option<usize> {
        loop {
            let x = self.iter.next()?;
            let i = self.next;
            self.next += 1;
            if (self.f)(x) {
                return Some(i);
            }
        }
    }
}
