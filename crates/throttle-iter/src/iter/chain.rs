//! `chain`: the items of one iterator, then those of another. The two run side by side
//! (through `join`), each with its part of the consumer.

use super::plumbing::{Consumer, Folder, Producer, ProducerCallback, Reducer, UnindexedConsumer};
use super::{IndexedParallelIterator, ParallelIterator};

/// The items of `a`, then those of `b`; see [`ParallelIterator::chain`].
///
/// # Examples
/// ```
/// use throttle::prelude::*;
/// let v: Vec<u32> = (0..2u32).into_par_iter().chain(vec![7u32, 8]).collect();
/// assert_eq!(v, [0, 1, 7, 8]);
/// ```
#[derive(Debug, Clone)]
#[must_use = "iterator adaptors are lazy and do nothing unless consumed"]
pub struct Chain<A, B> {
    a: A,
    b: B,
}

impl<A, B> Chain<A, B> {
    pub(crate) fn new(a: A, b: B) -> Self {
        Chain { a, b }
    }
}

impl<A, B> ParallelIterator for Chain<A, B>
where
    A: ParallelIterator,
    B: ParallelIterator<Item = A::Item>,
{
    type Item = A::Item;

    fn drive_unindexed<C: UnindexedConsumer<A::Item>>(self, consumer: C) -> C::Result {
        let Chain { a, b } = self;
        // An exact `a` splits the consumer at its length, so an indexed consumer stays exact.
        let (left, right, reducer) = match a.opt_len() {
            Some(len) => consumer.split_at(len),
            None => {
                let reducer = consumer.to_reducer();
                (consumer.split_off_left(), consumer, reducer)
            }
        };
        let (ra, rb) = throttle_core::join(|| a.drive_unindexed(left), || b.drive_unindexed(right));
        reducer.reduce(ra, rb)
    }

    fn opt_len(&self) -> Option<usize> {
        self.a.opt_len()?.checked_add(self.b.opt_len()?)
    }
}

impl<A, B> IndexedParallelIterator for Chain<A, B>
where
    A: IndexedParallelIterator,
    B: IndexedParallelIterator<Item = A::Item>,
{
    fn drive<C: Consumer<A::Item>>(self, consumer: C) -> C::Result {
        let Chain { a, b } = self;
        let (left, right, reducer) = consumer.split_at(a.len());
        let (ra, rb) = throttle_core::join(|| a.drive(left), || b.drive(right));
        reducer.reduce(ra, rb)
    }

    fn len(&self) -> usize {
        self.a
            .len()
            .checked_add(self.b.len())
            .expect("chain: length overflows usize")
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
                self.b.with_producer(CallbackB {
                    callback: self.callback,
                    a_len: self.a_len,
                    a,
                })
            }
        }

        /// Chains `a`'s producer with `b`'s.
        struct CallbackB<CB, PA> {
            callback: CB,
            a_len: usize,
            a: PA,
        }
        impl<CB, PA> ProducerCallback<PA::Item> for CallbackB<CB, PA>
        where
            PA: Producer,
            CB: ProducerCallback<PA::Item>,
        {
            type Output = CB::Output;
            fn callback<PB: Producer<Item = PA::Item>>(self, b: PB) -> CB::Output {
                self.callback.callback(ChainProducer {
                    a_len: self.a_len,
                    a: self.a,
                    b,
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
}

/// The producer of [`Chain`]: `a` (which holds `a_len` items), then `b`.
struct ChainProducer<A, B> {
    a_len: usize,
    a: A,
    b: B,
}

impl<A, B> Producer for ChainProducer<A, B>
where
    A: Producer,
    B: Producer<Item = A::Item>,
{
    type Item = A::Item;
    type IntoIter = ChainIter<A::IntoIter, B::IntoIter>;

    fn into_iter(self) -> Self::IntoIter {
        ChainIter {
            a: self.a.into_iter(),
            b: self.b.into_iter(),
        }
    }

    fn min_len(&self) -> usize {
        self.a.min_len().max(self.b.min_len())
    }

    fn max_len(&self) -> usize {
        self.a.max_len().min(self.b.max_len())
    }

    fn split_at(self, index: usize) -> (Self, Self) {
        if index <= self.a_len {
            let (a1, a2) = self.a.split_at(index);
            let (b1, b2) = self.b.split_at(0);
            (
                ChainProducer {
                    a_len: index,
                    a: a1,
                    b: b1,
                },
                ChainProducer {
                    a_len: self.a_len - index,
                    a: a2,
                    b: b2,
                },
            )
        } else {
            let (a1, a2) = self.a.split_at(self.a_len);
            let (b1, b2) = self.b.split_at(index - self.a_len);
            (
                ChainProducer {
                    a_len: self.a_len,
                    a: a1,
                    b: b1,
                },
                ChainProducer {
                    a_len: 0,
                    a: a2,
                    b: b2,
                },
            )
        }
    }

    fn fold_with<F: Folder<A::Item>>(self, folder: F) -> F {
        let folder = self.a.fold_with(folder);
        if folder.full() {
            folder
        } else {
            self.b.fold_with(folder)
        }
    }
}

/// The sequential iterator of a [`Chain`] piece: `std`'s `Chain` with an exact length.
pub(crate) struct ChainIter<A, B> {
    a: A,
    b: B,
}

impl<A: Iterator, B: Iterator<Item = A::Item>> Iterator for ChainIter<A, B> {
    type Item = A::Item;
    fn next(&mut self) -> Option<A::Item> {
        self.a.next().or_else(|| self.b.next())
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        let (la, ha) = self.a.size_hint();
        let (lb, hb) = self.b.size_hint();
        let high = ha.zip(hb).and_then(|(x, y)| x.checked_add(y));
        (la.saturating_add(lb), high)
    }
    fn fold<Acc, G: FnMut(Acc, A::Item) -> Acc>(self, init: Acc, mut g: G) -> Acc {
        let acc = self.a.fold(init, &mut g);
        self.b.fold(acc, g)
    }
}

impl<A, B> DoubleEndedIterator for ChainIter<A, B>
where
    A: DoubleEndedIterator,
    B: DoubleEndedIterator<Item = A::Item>,
{
    fn next_back(&mut self) -> Option<A::Item> {
        self.b.next_back().or_else(|| self.a.next_back())
    }
}

impl<A, B> ExactSizeIterator for ChainIter<A, B>
where
    A: ExactSizeIterator,
    B: ExactSizeIterator<Item = A::Item>,
{
}
