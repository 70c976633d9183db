//! Adapters that mix items in: `interleave`, `interleave_shortest` and `intersperse`.

use super::plumbing::{IndexedProducer, Producer};

/// Items of `a` and `b` in turn, then the rest of the longer; see
/// [`IndexedParallelIterator::interleave`](super::IndexedParallelIterator::interleave).
///
/// A piece is a stretch of the output: the items it takes from each side, and which side comes
/// first.
#[derive(Debug, Clone)]
pub struct Interleave<A, B> {
    a: A,
    b: B,
    a_first: bool,
}

/// [`Interleave`] cut to stop where the shorter side runs out; see
/// [`IndexedParallelIterator::interleave_shortest`](super::IndexedParallelIterator::interleave_shortest).
pub type InterleaveShortest<A, B> = Interleave<A, B>;

impl<A, B> Interleave<A, B> {
    pub(crate) fn new(a: A, b: B) -> Self {
        Interleave {
            a,
            b,
            a_first: true,
        }
    }
}

/// How many of the first `i` outputs come from the side that goes first (`lx` items) when the
/// other has `ly`.
fn firsts(i: usize, lx: usize, ly: usize) -> usize {
    let m = lx.min(ly);
    if i <= 2 * m {
        i.div_ceil(2)
    } else if lx > ly {
        i - ly
    } else {
        lx
    }
}

impl<A, B> Producer for Interleave<A, B>
where
    A: IndexedProducer,
    B: IndexedProducer<Item = A::Item>,
{
    type Item = A::Item;
    type IntoSeq = InterleaveSeq<A::IntoSeq, B::IntoSeq>;
    fn base_len(&self) -> usize {
        self.a.base_len() + self.b.base_len()
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        let (la, lb) = (self.a.base_len(), self.b.base_len());
        let (na, nb) = if self.a_first {
            let na = firsts(index, la, lb);
            (na, index - na)
        } else {
            let nb = firsts(index, lb, la);
            (index - nb, nb)
        };
        let (a1, a2) = self.a.split_at(na);
        let (b1, b2) = self.b.split_at(nb);
        // After an even number of outputs, the same side goes first again.
        let right_a_first = self.a_first == (index % 2 == 0);
        (
            Interleave {
                a: a1,
                b: b1,
                a_first: self.a_first,
            },
            Interleave {
                a: a2,
                b: b2,
                a_first: right_a_first,
            },
        )
    }
    fn into_seq(self) -> Self::IntoSeq {
        InterleaveSeq {
            la: self.a.base_len(),
            lb: self.b.base_len(),
            a: self.a.into_seq().fuse(),
            b: self.b.into_seq().fuse(),
            a_next: self.a_first,
        }
    }
    fn min_len(&self) -> usize {
        self.a.min_len().max(self.b.min_len())
    }
    fn max_len(&self) -> usize {
        self.a.max_len().min(self.b.max_len())
    }
    fn exact_len(&self) -> Option<usize> {
        Some(self.base_len())
    }
}

impl<A, B> IndexedProducer for Interleave<A, B>
where
    A: IndexedProducer,
    B: IndexedProducer<Item = A::Item>,
{
}

/// The sequential iterator of an [`Interleave`] leaf.
#[derive(Debug)]
pub struct InterleaveSeq<I, J> {
    a: std::iter::Fuse<I>,
    b: std::iter::Fuse<J>,
    /// The next output comes from `a` (while both sides have items).
    a_next: bool,
    /// Items left on each side (the sides are exact).
    la: usize,
    lb: usize,
}

impl<I: Iterator, J: Iterator<Item = I::Item>> InterleaveSeq<I, J> {
    fn take_a(&mut self) -> Option<I::Item> {
        self.la = self.la.saturating_sub(1);
        self.a.next()
    }
    fn take_b(&mut self) -> Option<I::Item> {
        self.lb = self.lb.saturating_sub(1);
        self.b.next()
    }
}

impl<I: Iterator, J: Iterator<Item = I::Item>> Iterator for InterleaveSeq<I, J> {
    type Item = I::Item;
    fn next(&mut self) -> Option<I::Item> {
        let from_a = (self.a_next && self.la > 0) || self.lb == 0;
        self.a_next = !self.a_next;
        if from_a {
            self.take_a()
        } else {
            self.take_b()
        }
    }
}

impl<I, J> DoubleEndedIterator for InterleaveSeq<I, J>
where
    I: DoubleEndedIterator,
    J: DoubleEndedIterator<Item = I::Item>,
{
    /// The last output is on the longer side, or, with sides of equal length, on the side that
    /// does not go next.
    fn next_back(&mut self) -> Option<I::Item> {
        let from_a = self.la > self.lb || (self.la == self.lb && !self.a_next);
        if from_a {
            self.la = self.la.checked_sub(1)?;
            self.a.next_back()
        } else {
            self.lb = self.lb.checked_sub(1)?;
            self.b.next_back()
        }
    }
}

/// A separator between every two items; see
/// [`ParallelIterator::intersperse`](super::ParallelIterator::intersperse).
///
/// Over an exact-length base, a piece is a stretch of the output (`2n - 1` units for `n`
/// items): whether it starts on a separator, and its length. Over any other base, the units are
/// the base's and each piece but the first puts a separator before each of its items, so a
/// first piece that yields nothing (its items all filtered out) leaves a leading separator,
/// as in rayon.
#[derive(Debug, Clone)]
pub struct Intersperse<P: Producer> {
    base: P,
    sep: P::Item,
    /// Exact mode: the piece starts on a separator. Unit mode: the piece is not the first.
    sep_first: bool,
    /// Exact mode: the number of outputs; `None` in unit mode.
    len: Option<usize>,
}

impl<P: Producer> Intersperse<P> {
    pub(crate) fn new(base: P, sep: P::Item) -> Self {
        let len = match base.exact_len() {
            Some(n) if n == base.base_len() => Some((2 * n).saturating_sub(1)),
            _ => None,
        };
        Intersperse {
            base,
            sep,
            sep_first: false,
            len,
        }
    }
}

impl<P> Producer for Intersperse<P>
where
    P: Producer,
    P::Item: Clone + Send,
{
    type Item = P::Item;
    type IntoSeq = IntersperseSeq<P::IntoSeq>;
    fn base_len(&self) -> usize {
        self.len.unwrap_or_else(|| self.base.base_len())
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        let Some(len) = self.len else {
            let (l, r) = self.base.split_at(index);
            let left = Intersperse {
                base: l,
                sep: self.sep.clone(),
                sep_first: self.sep_first,
                len: None,
            };
            let right = Intersperse {
                base: r,
                sep: self.sep,
                sep_first: true,
                len: None,
            };
            return (left, right);
        };
        let index = index.min(len);
        // Outputs alternate item, separator (or the reverse when the piece starts on one).
        let items = if self.sep_first {
            index / 2
        } else {
            index.div_ceil(2)
        };
        let (l, r) = self.base.split_at(items);
        let right_sep_first = self.sep_first != (index % 2 == 1);
        let left = Intersperse {
            base: l,
            sep: self.sep.clone(),
            sep_first: self.sep_first,
            len: Some(index),
        };
        let right = Intersperse {
            base: r,
            sep: self.sep,
            sep_first: right_sep_first,
            len: Some(len - index),
        };
        (left, right)
    }
    fn into_seq(self) -> Self::IntoSeq {
        IntersperseSeq {
            iter: self.base.into_seq(),
            sep: self.sep,
            sep_next: self.sep_first,
            left: self.len,
            unit_mode: self.len.is_none(),
            pending: None,
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
    fn exact_len(&self) -> Option<usize> {
        self.len
    }
}

impl<P> IndexedProducer for Intersperse<P>
where
    P: IndexedProducer,
    P::Item: Clone + Send,
{
}

/// The sequential iterator of an [`Intersperse`] leaf.
#[derive(Debug)]
pub struct IntersperseSeq<I: Iterator> {
    iter: I,
    sep: I::Item,
    /// Exact mode: the next output is a separator. Unit mode: a separator goes before the next
    /// item.
    sep_next: bool,
    /// Exact mode: outputs left.
    left: Option<usize>,
    unit_mode: bool,
    /// Unit mode: an item waiting behind the separator just yielded.
    pending: Option<I::Item>,
}

impl<I: Iterator> Iterator for IntersperseSeq<I>
where
    I::Item: Clone,
{
    type Item = I::Item;
    fn next(&mut self) -> Option<I::Item> {
        if self.unit_mode {
            if let Some(x) = self.pending.take() {
                return Some(x);
            }
            let x = self.iter.next()?;
            if self.sep_next {
                self.pending = Some(x);
                return Some(self.sep.clone());
            }
            self.sep_next = true;
            return Some(x);
        }
        let left = self.left.as_mut()?;
        if *left == 0 {
            return None;
        }
        *left -= 1;
        self.sep_next = !self.sep_next;
        if self.sep_next {
            self.iter.next()
        } else {
            Some(self.sep.clone())
        }
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        match self.left {
            Some(n) => (n, Some(n)),
            None => (0, None),
        }
    }
}

/// Exact in exact mode, the only mode an indexed (hence `zip`/`rev`) use reaches.
impl<I: ExactSizeIterator> ExactSizeIterator for IntersperseSeq<I> where I::Item: Clone {}

impl<I: DoubleEndedIterator> DoubleEndedIterator for IntersperseSeq<I>
where
    I::Item: Clone,
{
    /// Exact mode only (the one [`rev`](super::IndexedParallelIterator::rev) reaches).
    fn next_back(&mut self) -> Option<I::Item> {
        let left = self.left.as_mut()?;
        if *left == 0 {
            return None;
        }
        // The last output is a separator iff the piece's parity says so.
        let last_is_sep = self.sep_next == (*left % 2 == 1);
        *left -= 1;
        if last_is_sep {
            Some(self.sep.clone())
        } else {
            self.iter.next_back()
        }
    }
}
