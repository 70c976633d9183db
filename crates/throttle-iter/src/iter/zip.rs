//! `zip` and `zip_eq`: pairs of two indexed iterators, split at the same index.

use super::plumbing::{Producer, ProducerCallback};
use super::IndexedParallelIterator;

/// Pairs the items of two iterators in order, stopping at the shorter; see
/// [`IndexedParallelIterator::zip`].
///
/// # Examples
/// ```
/// use throttle::prelude::*;
/// let dot: i32 = [1, 2, 3].par_iter().zip(&[10, 20, 30, 40]).map(|(x, y)| x * y).sum();
/// assert_eq!(dot, 140);
/// ```
#[derive(Debug, Clone)]
#[must_use = "iterator adaptors are lazy and do nothing unless consumed"]
pub struct Zip<A, B> {
    a: A,
    b: B,
}

impl<A, B> Zip<A, B> {
    pub(super) fn new(a: A, b: B) -> Self {
        Zip { a, b }
    }
}

bridged!(impl[A: IndexedParallelIterator, B: IndexedParallelIterator] Zip<A, B> => (A::Item, B::Item), where [] {
    fn len(&self) -> usize {
        self.a.len().min(self.b.len())
    }

    fn with_producer<CB: ProducerCallback<(A::Item, B::Item)>>(self, callback: CB) -> CB::Output {
        /// Gets `a`'s producer, then `b`'s.
        struct CallbackA<CB, B> {
            callback: CB,
            b: B,
            len: usize,
        }
        impl<CB, ITEM, B> ProducerCallback<ITEM> for CallbackA<CB, B>
        where
            B: IndexedParallelIterator,
            CB: ProducerCallback<(ITEM, B::Item)>,
        {
            type Output = CB::Output;
            fn callback<PA: Producer<Item = ITEM>>(self, a: PA) -> CB::Output {
                self.b.with_producer(CallbackB {
                    a,
                    callback: self.callback,
                    len: self.len,
                })
            }
        }

        /// Zips `a`'s producer with `b`'s, both cut to the shorter length.
        struct CallbackB<CB, PA> {
            a: PA,
            callback: CB,
            len: usize,
        }
        impl<CB, PA, ITEM> ProducerCallback<ITEM> for CallbackB<CB, PA>
        where
            PA: Producer,
            CB: ProducerCallback<(PA::Item, ITEM)>,
        {
            type Output = CB::Output;
            fn callback<PB: Producer<Item = ITEM>>(self, b: PB) -> CB::Output {
                let (a, _) = self.a.split_at(self.len);
                let (b, _) = b.split_at(self.len);
                self.callback.callback(ZipProducer { a, b })
            }
        }

        let len = self.len();
        self.a.with_producer(CallbackA {
            callback,
            b: self.b,
            len,
        })
    }
});

/// The producer of [`Zip`]: two producers of the same length.
pub(crate) struct ZipProducer<A, B> {
    a: A,
    b: B,
}

impl<A: Producer, B: Producer> Producer for ZipProducer<A, B> {
    type Item = (A::Item, B::Item);
    type IntoIter = std::iter::Zip<A::IntoIter, B::IntoIter>;

    fn into_iter(self) -> Self::IntoIter {
        self.a.into_iter().zip(self.b.into_iter())
    }

    fn min_len(&self) -> usize {
        self.a.min_len().max(self.b.min_len())
    }

    fn max_len(&self) -> usize {
        self.a.max_len().min(self.b.max_len())
    }

    fn split_at(self, index: usize) -> (Self, Self) {
        let (a1, a2) = self.a.split_at(index);
        let (b1, b2) = self.b.split_at(index);
        (ZipProducer { a: a1, b: b1 }, ZipProducer { a: a2, b: b2 })
    }
}

/// [`Zip`] of two iterators checked to have the same length; see
/// [`IndexedParallelIterator::zip_eq`].
///
/// # Examples
/// ```
/// use throttle::prelude::*;
/// let v: Vec<(u8, char)> = [1u8, 2].par_iter().copied().zip_eq(['a', 'b']).collect();
/// assert_eq!(v, [(1, 'a'), (2, 'b')]);
/// ```
#[derive(Debug, Clone)]
#[must_use = "iterator adaptors are lazy and do nothing unless consumed"]
pub struct ZipEq<A, B> {
    zip: Zip<A, B>,
}

impl<A, B> ZipEq<A, B> {
    pub(super) fn new(a: A, b: B) -> Self {
        ZipEq {
            zip: Zip::new(a, b),
        }
    }
}

bridged!(impl[A: IndexedParallelIterator, B: IndexedParallelIterator] ZipEq<A, B> => (A::Item, B::Item), where [] {
    fn len(&self) -> usize {
        self.zip.len()
    }

    fn with_producer<CB: ProducerCallback<(A::Item, B::Item)>>(self, callback: CB) -> CB::Output {
        self.zip.with_producer(callback)
    }
});
