//! `chain`: one parallel iterator after another.

use super::plumbing::{IndexedProducer, Producer};

/// The items of `a`, then those of `b`; see
/// [`ParallelIterator::chain`](super::ParallelIterator::chain).
#[derive(Debug, Clone)]
pub struct Chain<A, B> {
    pub(crate) a: A,
    pub(crate) b: B,
}

impl<A, B> Producer for Chain<A, B>
where
    A: Producer,
    B: Producer<Item = A::Item>,
{
    type Item = A::Item;
    type IntoSeq = std::iter::Chain<A::IntoSeq, B::IntoSeq>;
    fn base_len(&self) -> usize {
        self.a.base_len() + self.b.base_len()
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        let a_len = self.a.base_len();
        if index <= a_len {
            // The left piece keeps an empty part of `b` (split at 0), so both pieces are chains.
            let (a1, a2) = self.a.split_at(index);
            let (b0, b) = self.b.split_at(0);
            (Chain { a: a1, b: b0 }, Chain { a: a2, b })
        } else {
            let (a, a0) = self.a.split_at(a_len);
            let (b1, b2) = self.b.split_at(index - a_len);
            (Chain { a, b: b1 }, Chain { a: a0, b: b2 })
        }
    }
    fn into_seq(self) -> Self::IntoSeq {
        self.a.into_seq().chain(self.b.into_seq())
    }
    fn min_len(&self) -> usize {
        self.a.min_len().max(self.b.min_len())
    }
    fn max_len(&self) -> usize {
        self.a.max_len().min(self.b.max_len())
    }
    fn stopped(&self) -> bool {
        self.a.stopped() && self.b.stopped()
    }
    fn exact_len(&self) -> Option<usize> {
        Some(self.a.exact_len()? + self.b.exact_len()?)
    }
}

impl<A, B> IndexedProducer for Chain<A, B>
where
    A: IndexedProducer,
    B: IndexedProducer<Item = A::Item>,
{
}

/// Either of two parallel iterators with the same items (rayon's `par_either`): runs the one
/// it holds.
impl<L, R> Producer for either::Either<L, R>
where
    L: Producer,
    R: Producer<Item = L::Item>,
{
    type Item = L::Item;
    type IntoSeq = either::Either<L::IntoSeq, R::IntoSeq>;
    fn base_len(&self) -> usize {
        either::for_both!(self, p => p.base_len())
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        match self {
            either::Either::Left(p) => {
                let (l, r) = p.split_at(index);
                (either::Either::Left(l), either::Either::Left(r))
            }
            either::Either::Right(p) => {
                let (l, r) = p.split_at(index);
                (either::Either::Right(l), either::Either::Right(r))
            }
        }
    }
    fn into_seq(self) -> Self::IntoSeq {
        self.map_either(L::into_seq, R::into_seq)
    }
    fn min_len(&self) -> usize {
        either::for_both!(self, p => p.min_len())
    }
    fn max_len(&self) -> usize {
        either::for_both!(self, p => p.max_len())
    }
    fn stopped(&self) -> bool {
        either::for_both!(self, p => p.stopped())
    }
    fn exact_len(&self) -> Option<usize> {
        either::for_both!(self, p => p.exact_len())
    }
}

impl<L, R> IndexedProducer for either::Either<L, R>
where
    L: IndexedProducer,
    R: IndexedProducer<Item = L::Item>,
{
}
