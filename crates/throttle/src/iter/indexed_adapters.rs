//! The adapters of [`IndexedParallelIterator`](super::IndexedParallelIterator) that keep
//! items' indices: `enumerate`, `zip`, `chunks`, `step_by` and `rev`.

use super::plumbing::{IndexedProducer, Producer};

/// Pairs items with their index; see [`IndexedParallelIterator::enumerate`].
#[derive(Debug, Clone)]
pub struct Enumerate<P> {
    pub(crate) base: P,
    pub(crate) offset: usize,
}

impl<P: IndexedProducer> Producer for Enumerate<P> {
    type Item = (usize, P::Item);
    type IntoSeq = std::iter::Zip<std::ops::Range<usize>, P::IntoSeq>;
    fn base_len(&self) -> usize {
        self.base.base_len()
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        let (l, r) = self.base.split_at(index);
        (
            Enumerate {
                base: l,
                offset: self.offset,
            },
            Enumerate {
                base: r,
                offset: self.offset + index,
            },
        )
    }
    fn into_seq(self) -> Self::IntoSeq {
        // A bounded range (the base is exact), so that `rev` after `enumerate` works.
        let end = self.offset + self.base.base_len();
        (self.offset..end).zip(self.base.into_seq())
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
    fn exact_len(&self) -> Option<usize> {
        self.base.exact_len()
    }
}

impl<P: IndexedProducer> IndexedProducer for Enumerate<P> {}

/// Pairs the items of two iterators; see [`IndexedParallelIterator::zip`].
#[derive(Debug, Clone)]
pub struct Zip<A, B> {
    pub(crate) a: A,
    pub(crate) b: B,
}

impl<A: IndexedProducer, B: IndexedProducer> Producer for Zip<A, B> {
    type Item = (A::Item, B::Item);
    type IntoSeq = std::iter::Zip<A::IntoSeq, B::IntoSeq>;
    fn base_len(&self) -> usize {
        self.a.base_len().min(self.b.base_len())
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        let (al, ar) = self.a.split_at(index);
        let (bl, br) = self.b.split_at(index);
        (Zip { a: al, b: bl }, Zip { a: ar, b: br })
    }
    fn into_seq(self) -> Self::IntoSeq {
        self.a.into_seq().zip(self.b.into_seq())
    }
    fn min_len(&self) -> usize {
        self.a.min_len().max(self.b.min_len())
    }
    fn max_len(&self) -> usize {
        self.a.max_len().min(self.b.max_len())
    }
    fn stopped(&self) -> bool {
        self.a.stopped() || self.b.stopped()
    }
    fn exact_len(&self) -> Option<usize> {
        Some(self.a.exact_len()?.min(self.b.exact_len()?))
    }
}

impl<A: IndexedProducer, B: IndexedProducer> IndexedProducer for Zip<A, B> {}

/// Groups items into `Vec`s; see [`IndexedParallelIterator::chunks`].
#[derive(Debug, Clone)]
pub struct ItemChunks<P> {
    pub(crate) base: P,
    pub(crate) size: usize,
}

impl<P: IndexedProducer> Producer for ItemChunks<P> {
    type Item = Vec<P::Item>;
    type IntoSeq = ItemChunksSeq<P::IntoSeq>;
    fn base_len(&self) -> usize {
        self.base.base_len().div_ceil(self.size)
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        let at = index.saturating_mul(self.size).min(self.base.base_len());
        let (l, r) = self.base.split_at(at);
        let size = self.size;
        (ItemChunks { base: l, size }, ItemChunks { base: r, size })
    }
    fn into_seq(self) -> Self::IntoSeq {
        ItemChunksSeq {
            left: self.base.base_len(),
            iter: self.base.into_seq(),
            size: self.size,
        }
    }
    fn min_len(&self) -> usize {
        self.base.min_len().div_ceil(self.size)
    }
    fn max_len(&self) -> usize {
        (self.base.max_len() / self.size).max(1)
    }
    fn stopped(&self) -> bool {
        self.base.stopped()
    }
    fn exact_len(&self) -> Option<usize> {
        Some(self.base.exact_len()?.div_ceil(self.size))
    }
}

impl<P: IndexedProducer> IndexedProducer for ItemChunks<P> {}

/// The sequential iterator of an [`ItemChunks`] leaf.
#[derive(Debug, Clone)]
pub struct ItemChunksSeq<I> {
    pub(crate) iter: I,
    pub(crate) size: usize,
    /// Items left (the base is exact).
    pub(crate) left: usize,
}

impl<I: Iterator> Iterator for ItemChunksSeq<I> {
    type Item = Vec<I::Item>;
    fn next(&mut self) -> Option<Vec<I::Item>> {
        let n = self.size.min(self.left);
        self.left -= n;
        let chunk: Vec<I::Item> = self.iter.by_ref().take(n).collect();
        (!chunk.is_empty()).then_some(chunk)
    }
}

impl<I: DoubleEndedIterator> DoubleEndedIterator for ItemChunksSeq<I> {
    /// The last chunk is the short one, if any.
    fn next_back(&mut self) -> Option<Vec<I::Item>> {
        if self.left == 0 {
            return None;
        }
        let n = match self.left % self.size {
            0 => self.size,
            short => short,
        };
        self.left -= n;
        let mut chunk: Vec<I::Item> = self.iter.by_ref().rev().take(n).collect();
        chunk.reverse();
        Some(chunk)
    }
}

/// Every `step`-th item; see [`IndexedParallelIterator::step_by`].
#[derive(Debug, Clone)]
pub struct StepBy<P> {
    pub(crate) base: P,
    pub(crate) step: usize,
}

impl<P: IndexedProducer> Producer for StepBy<P> {
    type Item = P::Item;
    type IntoSeq = std::iter::StepBy<P::IntoSeq>;
    fn base_len(&self) -> usize {
        self.base.base_len().div_ceil(self.step)
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        // The left piece holds base items [0, index * step): exactly `index` of ours, and the
        // right piece starts on one of ours, so its own `step_by` stays in phase.
        let cut = index.saturating_mul(self.step).min(self.base.base_len());
        let (l, r) = self.base.split_at(cut);
        let step = self.step;
        (StepBy { base: l, step }, StepBy { base: r, step })
    }
    fn into_seq(self) -> Self::IntoSeq {
        self.base.into_seq().step_by(self.step)
    }
    fn min_len(&self) -> usize {
        self.base.min_len().div_ceil(self.step).max(1)
    }
    fn max_len(&self) -> usize {
        self.base.max_len()
    }
    fn stopped(&self) -> bool {
        self.base.stopped()
    }
    fn exact_len(&self) -> Option<usize> {
        self.base.exact_len().map(|n| n.div_ceil(self.step))
    }
}

impl<P: IndexedProducer> IndexedProducer for StepBy<P> {}

/// The items in reverse order; see [`IndexedParallelIterator::rev`].
#[derive(Debug, Clone)]
pub struct Rev<P> {
    pub(crate) base: P,
}

impl<P> Producer for Rev<P>
where
    P: IndexedProducer,
    P::IntoSeq: DoubleEndedIterator,
{
    type Item = P::Item;
    type IntoSeq = std::iter::Rev<P::IntoSeq>;
    fn base_len(&self) -> usize {
        self.base.base_len()
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        // Our first `index` items are the base's last `index`.
        let n = self.base.base_len();
        let (l, r) = self.base.split_at(n - index.min(n));
        (Rev { base: r }, Rev { base: l })
    }
    fn into_seq(self) -> Self::IntoSeq {
        self.base.into_seq().rev()
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
    fn exact_len(&self) -> Option<usize> {
        self.base.exact_len()
    }
}

impl<P> IndexedProducer for Rev<P>
where
    P: IndexedProducer,
    P::IntoSeq: DoubleEndedIterator,
{
}
