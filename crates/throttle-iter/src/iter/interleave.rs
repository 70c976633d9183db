//! Adapters that mix items in: `interleave`, `interleave_shortest` and `intersperse`. Over
//! indexed bases a piece is a stretch of the output, and a split works out how many items of
//! each base (and which one goes first) that stretch holds.

use super::plumbing::{Consumer, Folder, Producer, ProducerCallback, UnindexedConsumer, WorkOrder};
use super::{IndexedParallelIterator, ParallelIterator, Take};
use std::cell::Cell;

/// Items of `a` and `b` in turn, then the rest of the longer; see
/// [`IndexedParallelIterator::interleave`].
///
/// # Examples
/// ```
/// use throttle::prelude::*;
/// let v: Vec<u8> = [1u8, 2, 3].par_iter().copied().interleave(vec![10u8]).collect();
/// assert_eq!(v, [1, 10, 2, 3]);
/// ```
#[derive(Debug, Clone)]
#[must_use = "iterator adaptors are lazy and do nothing unless consumed"]
pub struct Interleave<A, B> {
    a: A,
    b: B,
}

impl<A, B> Interleave<A, B> {
    pub(super) fn new(a: A, b: B) -> Self {
        Interleave { a, b }
    }
}

bridged!(impl[A: IndexedParallelIterator, B: IndexedParallelIterator<Item = A::Item>] Interleave<A, B> => A::Item, where [] {
    fn len(&self) -> usize {
        self.a.len().checked_add(self.b.len()).expect("interleave: length overflows usize")
    }

    fn with_producer<CB: ProducerCallback<A::Item>>(self, callback: CB) -> CB::Output {
        /// Gets `a`'s producer, then `b`'s.
        struct CallbackA<CB, B> {
            callback: CB,
            a_len: usize,
            b: B,
        }
        impl<CB, B> ProducerCallback<B::Item> for CallbackA<CB, B>
        where
            B: IndexedParallelIterator,
            CB: ProducerCallback<B::Item>,
        {
            type Output = CB::Output;
            fn callback<PA: Producer<Item = B::Item>>(self, a: PA) -> CB::Output {
                let b_len = self.b.len();
                self.b.with_producer(CallbackB {
                    callback: self.callback,
                    a_len: self.a_len,
                    b_len,
                    a,
                })
            }
        }

        /// Interleaves `a`'s producer with `b`'s.
        struct CallbackB<CB, PA> {
            callback: CB,
            a_len: usize,
            b_len: usize,
            a: PA,
        }
        impl<CB, PA> ProducerCallback<PA::Item> for CallbackB<CB, PA>
        where
            PA: Producer,
            CB: ProducerCallback<PA::Item>,
        {
            type Output = CB::Output;
            fn callback<PB: Producer<Item = PA::Item>>(self, b: PB) -> CB::Output {
                self.callback.callback(InterleaveProducer {
                    a: self.a,
                    b,
                    a_len: self.a_len,
                    b_len: self.b_len,
                    a_first: true,
                })
            }
        }

        let a_len = self.a.len();
        self.a.with_producer(CallbackA {
            callback,
            a_len,
            b: self.b,
        })
    }
});

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

/// The producer of [`Interleave`]: a stretch of the output, made of `a_len` items of `a` and
/// `b_len` of `b`, and which side goes first.
struct InterleaveProducer<A, B> {
    a: A,
    b: B,
    a_len: usize,
    b_len: usize,
    a_first: bool,
}

impl<A, B> Producer for InterleaveProducer<A, B>
where
    A: Producer,
    B: Producer<Item = A::Item>,
{
    type Item = A::Item;
    type IntoIter = InterleaveIter<A::IntoIter, B::IntoIter>;

    fn into_iter(self) -> Self::IntoIter {
        InterleaveIter {
            a: self.a.into_iter(),
            b: self.b.into_iter(),
            a_next: self.a_first,
            la: self.a_len,
            lb: self.b_len,
        }
    }

    fn min_len(&self) -> usize {
        self.a.min_len().max(self.b.min_len())
    }

    fn max_len(&self) -> usize {
        self.a.max_len().min(self.b.max_len())
    }

    fn split_at(self, index: usize) -> (Self, Self) {
        let (la, lb) = (self.a_len, self.b_len);
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
            InterleaveProducer {
                a: a1,
                b: b1,
                a_len: na,
                b_len: nb,
                a_first: self.a_first,
            },
            InterleaveProducer {
                a: a2,
                b: b2,
                a_len: la - na,
                b_len: lb - nb,
                a_first: right_a_first,
            },
        )
    }
}

/// The sequential iterator of an [`Interleave`] piece.
struct InterleaveIter<I, J> {
    a: I,
    b: J,
    /// The next output comes from `a` (while both sides have items).
    a_next: bool,
    /// Items left on each side.
    la: usize,
    lb: usize,
}

impl<I: Iterator, J: Iterator<Item = I::Item>> Iterator for InterleaveIter<I, J> {
    type Item = I::Item;
    fn next(&mut self) -> Option<I::Item> {
        let from_a = (self.a_next && self.la > 0) || self.lb == 0;
        if from_a {
            self.la = self.la.checked_sub(1)?;
        } else {
            self.lb -= 1;
        }
        self.a_next = !from_a;
        if from_a {
            self.a.next()
        } else {
            self.b.next()
        }
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.la + self.lb;
        (n, Some(n))
    }
}

impl<I, J> DoubleEndedIterator for InterleaveIter<I, J>
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

impl<I: Iterator, J: Iterator<Item = I::Item>> ExactSizeIterator for InterleaveIter<I, J> {}

/// Items of `a` and `b` in turn, stopping where the one due next has run out; see
/// [`IndexedParallelIterator::interleave_shortest`].
///
/// # Examples
/// ```
/// use throttle::prelude::*;
/// let v: Vec<u8> = [1u8, 2, 3, 4].par_iter().copied().interleave_shortest(vec![5u8, 6]).collect();
/// assert_eq!(v, [1, 5, 2, 6, 3]);
/// ```
#[derive(Debug, Clone)]
#[must_use = "iterator adaptors are lazy and do nothing unless consumed"]
pub struct InterleaveShortest<A, B> {
    interleave: Interleave<Take<A>, Take<B>>,
}

impl<A: IndexedParallelIterator, B: IndexedParallelIterator> InterleaveShortest<A, B> {
    pub(super) fn new(a: A, b: B) -> Self {
        let (la, lb) = (a.len(), b.len());
        // `a` goes first, so it may hold one item more than `b`.
        let (na, nb) = if la <= lb { (la, la) } else { (lb + 1, lb) };
        InterleaveShortest {
            interleave: Interleave::new(a.take(na), b.take(nb)),
        }
    }
}

bridged!(impl[A: IndexedParallelIterator, B: IndexedParallelIterator<Item = A::Item>] InterleaveShortest<A, B> => A::Item, where [] {
    fn len(&self) -> usize {
        self.interleave.len()
    }

    fn with_producer<CB: ProducerCallback<A::Item>>(self, callback: CB) -> CB::Output {
        self.interleave.with_producer(callback)
    }
});

/// A separator between every two items; see [`ParallelIterator::intersperse`].
///
/// # Examples
/// ```
/// use throttle::prelude::*;
/// let v: Vec<i32> = (1..4).into_par_iter().intersperse(0).collect();
/// assert_eq!(v, [1, 0, 2, 0, 3]);
/// ```
#[derive(Debug, Clone)]
#[must_use = "iterator adaptors are lazy and do nothing unless consumed"]
pub struct Intersperse<I: ParallelIterator> {
    base: I,
    item: I::Item,
}

impl<I: ParallelIterator> Intersperse<I> {
    pub(super) fn new(base: I, item: I::Item) -> Self {
        Intersperse { base, item }
    }
}

impl<I> ParallelIterator for Intersperse<I>
where
    I: ParallelIterator<Item: Clone>,
{
    type Item = I::Item;

    fn drive_unindexed<C: UnindexedConsumer<I::Item>>(self, consumer: C) -> C::Result {
        self.base.drive_unindexed(IntersperseConsumer {
            base: consumer,
            item: self.item,
            sep_first: Cell::new(false),
        })
    }

    fn opt_len(&self) -> Option<usize> {
        Some(self.base.opt_len()?.saturating_mul(2).saturating_sub(1))
    }
}

impl<I> IndexedParallelIterator for Intersperse<I>
where
    I: IndexedParallelIterator<Item: Clone>,
{
    fn drive<C: Consumer<I::Item>>(self, consumer: C) -> C::Result {
        super::plumbing::bridge(self, consumer)
    }

    fn len(&self) -> usize {
        self.base.len().saturating_mul(2).saturating_sub(1)
    }

    fn with_producer<CB: ProducerCallback<I::Item>>(self, callback: CB) -> CB::Output {
        /// Wraps the base's producer, which holds `len` items.
        struct Callback<CB, T> {
            callback: CB,
            item: T,
            len: usize,
        }
        impl<CB: ProducerCallback<T>, T: Clone + Send> ProducerCallback<T> for Callback<CB, T> {
            type Output = CB::Output;
            fn callback<P: Producer<Item = T>>(self, base: P) -> CB::Output {
                self.callback.callback(IntersperseProducer {
                    base,
                    item: self.item,
                    len: self.len.saturating_mul(2).saturating_sub(1),
                    sep_first: false,
                })
            }
        }
        let len = self.base.len();
        self.base.with_producer(Callback {
            callback,
            item: self.item,
            len,
        })
    }
}

/// The producer of [`Intersperse`]: a stretch of `len` outputs, alternating item and
/// separator (or the reverse, if it starts on a separator).
struct IntersperseProducer<P: Producer> {
    base: P,
    item: P::Item,
    len: usize,
    sep_first: bool,
}

impl<P> Producer for IntersperseProducer<P>
where
    P: Producer<Item: Clone + Send>,
{
    type Item = P::Item;
    type IntoIter = IntersperseIter<P::IntoIter>;

    fn into_iter(self) -> Self::IntoIter {
        IntersperseIter {
            base: self.base.into_iter(),
            item: self.item,
            sep_next: self.sep_first,
            left: self.len,
        }
    }

    fn min_len(&self) -> usize {
        self.base.min_len()
    }

    fn max_len(&self) -> usize {
        self.base.max_len()
    }

    fn split_at(self, index: usize) -> (Self, Self) {
        // Outputs alternate item, separator (or the reverse when the piece starts on one).
        let items = if self.sep_first {
            index / 2
        } else {
            index.div_ceil(2)
        };
        let (l, r) = self.base.split_at(items);
        let right_sep_first = self.sep_first != (index % 2 == 1);
        (
            IntersperseProducer {
                base: l,
                item: self.item.clone(),
                len: index,
                sep_first: self.sep_first,
            },
            IntersperseProducer {
                base: r,
                item: self.item,
                len: self.len - index,
                sep_first: right_sep_first,
            },
        )
    }
}

/// The sequential iterator of an [`Intersperse`] piece.
struct IntersperseIter<I: Iterator> {
    base: I,
    item: I::Item,
    /// The next output is a separator.
    sep_next: bool,
    /// Outputs left.
    left: usize,
}

impl<I: Iterator<Item: Clone>> Iterator for IntersperseIter<I> {
    type Item = I::Item;
    fn next(&mut self) -> Option<I::Item> {
        self.left = self.left.checked_sub(1)?;
        let sep = self.sep_next;
        self.sep_next = !sep;
        if sep {
            Some(self.item.clone())
        } else {
            self.base.next()
        }
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

impl<I: DoubleEndedIterator<Item: Clone>> DoubleEndedIterator for IntersperseIter<I> {
    fn next_back(&mut self) -> Option<I::Item> {
        // The last output is a separator iff the piece's parity says so.
        let last_is_sep = self.sep_next == (self.left % 2 == 1);
        self.left = self.left.checked_sub(1)?;
        if last_is_sep {
            Some(self.item.clone())
        } else {
            self.base.next_back()
        }
    }
}

impl<I: Iterator<Item: Clone>> ExactSizeIterator for IntersperseIter<I> {}

/// The consumer of an unindexed [`Intersperse`]: every piece but the first puts a separator
/// before each of its items (so a first piece that yields nothing leaves a leading separator,
/// as in rayon).
struct IntersperseConsumer<C, T> {
    base: C,
    item: T,
    /// This piece is not the first: a separator goes before its first item too.
    sep_first: Cell<bool>,
}

impl<C, T> IntersperseConsumer<C, T> {
    /// The outputs of `index` base items at the start of this piece.
    fn outputs(&self, index: usize) -> usize {
        match (index, self.sep_first.get()) {
            (0, _) => 0,
            (n, true) => 2 * n,
            (n, false) => 2 * n - 1,
        }
    }
}

impl<T, C> Consumer<T> for IntersperseConsumer<C, T>
where
    C: Consumer<T>,
    T: Clone + Send,
{
    type Folder = IntersperseFolder<C::Folder, T>;
    type Reducer = C::Reducer;
    type Result = C::Result;

    fn split_at(self, index: usize) -> (Self, Self, C::Reducer) {
        let at = self.outputs(index);
        let first = self.sep_first.get();
        let (left, right, reducer) = self.base.split_at(at);
        (
            IntersperseConsumer {
                base: left,
                item: self.item.clone(),
                sep_first: Cell::new(first),
            },
            IntersperseConsumer {
                base: right,
                item: self.item,
                sep_first: Cell::new(first || index > 0),
            },
            reducer,
        )
    }

    fn into_folder(self) -> Self::Folder {
        IntersperseFolder {
            base: self.base.into_folder(),
            item: self.item,
            sep_first: self.sep_first.get(),
        }
    }

    fn full(&self) -> bool {
        self.base.full()
    }

    fn work_order(&self) -> WorkOrder {
        self.base.work_order()
    }
}

impl<T, C> UnindexedConsumer<T> for IntersperseConsumer<C, T>
where
    C: UnindexedConsumer<T>,
    T: Clone + Send,
{
    fn split_off_left(&self) -> Self {
        let left = IntersperseConsumer {
            base: self.base.split_off_left(),
            item: self.item.clone(),
            sep_first: self.sep_first.clone(),
        };
        self.sep_first.set(true);
        left
    }

    fn to_reducer(&self) -> C::Reducer {
        self.base.to_reducer()
    }

    fn split_off_left_at(&self, index: usize, len: usize) -> Self {
        let left = IntersperseConsumer {
            base: self.base.split_off_left_at(index, len),
            item: self.item.clone(),
            sep_first: self.sep_first.clone(),
        };
        self.sep_first.set(true);
        left
    }
}

/// The folder of an unindexed [`Intersperse`].
struct IntersperseFolder<C, T> {
    base: C,
    item: T,
    sep_first: bool,
}

impl<T: Clone, C: Folder<T>> Folder<T> for IntersperseFolder<C, T> {
    type Result = C::Result;

    fn consume(self, item: T) -> Self {
        let mut base = self.base;
        if self.sep_first {
            base = base.consume(self.item.clone());
            if base.full() {
                return IntersperseFolder { base, ..self };
            }
        }
        IntersperseFolder {
            base: base.consume(item),
            item: self.item,
            sep_first: true,
        }
    }

    fn complete(self) -> C::Result {
        self.base.complete()
    }

    fn full(&self) -> bool {
        self.base.full()
    }
}
