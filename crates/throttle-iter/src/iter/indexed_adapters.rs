//! Adapters of [`IndexedParallelIterator`] that wrap the base's producer: `enumerate`, `rev`,
//! `step_by`, `skip`, `take`, `with_min_len` and `with_max_len`. Each runs through
//! [`bridge`](super::plumbing::bridge): the base hands its producer to a callback, which wraps
//! it and hands it on.

use super::consumers::Noop;
use super::plumbing::{bridge_producer_consumer, Producer, ProducerCallback};
use super::IndexedParallelIterator;

/// Pairs each item with its index; see [`IndexedParallelIterator::enumerate`].
///
/// # Examples
/// ```
/// use throttle::prelude::*;
/// let v: Vec<(usize, char)> = ['a', 'b'].par_iter().copied().enumerate().collect();
/// assert_eq!(v, [(0, 'a'), (1, 'b')]);
/// ```
#[derive(Debug, Clone)]
#[must_use = "iterator adaptors are lazy and do nothing unless consumed"]
pub struct Enumerate<I> {
    base: I,
}

impl<I> Enumerate<I> {
    pub(super) fn new(base: I) -> Self {
        Enumerate { base }
    }
}

bridged!(impl[I: IndexedParallelIterator] Enumerate<I> => (usize, I::Item), where [] {
    fn len(&self) -> usize {
        self.base.len()
    }

    fn with_producer<CB: ProducerCallback<(usize, I::Item)>>(self, callback: CB) -> CB::Output {
        /// Wraps the base's producer, counting from 0.
        struct Callback<CB>(CB);
        impl<T, CB: ProducerCallback<(usize, T)>> ProducerCallback<T> for Callback<CB> {
            type Output = CB::Output;
            fn callback<P: Producer<Item = T>>(self, base: P) -> CB::Output {
                self.0.callback(EnumerateProducer { base, offset: 0 })
            }
        }
        self.base.with_producer(Callback(callback))
    }
});

/// The producer of [`Enumerate`]: its base and the index of its first item.
struct EnumerateProducer<P> {
    base: P,
    offset: usize,
}

impl<P: Producer> Producer for EnumerateProducer<P> {
    type Item = (usize, P::Item);
    type IntoIter = std::iter::Zip<std::ops::Range<usize>, P::IntoIter>;

    fn into_iter(self) -> Self::IntoIter {
        // A bounded range (the base is exact), so that `rev` after `enumerate` works.
        let base = self.base.into_iter();
        let end = self.offset + base.len();
        (self.offset..end).zip(base)
    }

    fn min_len(&self) -> usize {
        self.base.min_len()
    }

    fn max_len(&self) -> usize {
        self.base.max_len()
    }

    fn split_at(self, index: usize) -> (Self, Self) {
        let (left, right) = self.base.split_at(index);
        (
            EnumerateProducer {
                base: left,
                offset: self.offset,
            },
            EnumerateProducer {
                base: right,
                offset: self.offset + index,
            },
        )
    }
}

/// The items in reverse order; see [`IndexedParallelIterator::rev`].
///
/// # Examples
/// ```
/// use throttle::prelude::*;
/// let v: Vec<u32> = (0..5u32).into_par_iter().rev().collect();
/// assert_eq!(v, [4, 3, 2, 1, 0]);
/// ```
#[derive(Debug, Clone)]
#[must_use = "iterator adaptors are lazy and do nothing unless consumed"]
pub struct Rev<I> {
    base: I,
}

impl<I> Rev<I> {
    pub(super) fn new(base: I) -> Self {
        Rev { base }
    }
}

bridged!(impl[I: IndexedParallelIterator] Rev<I> => I::Item, where [] {
    fn len(&self) -> usize {
        self.base.len()
    }

    fn with_producer<CB: ProducerCallback<I::Item>>(self, callback: CB) -> CB::Output {
        /// Wraps the base's producer, which holds `len` items.
        struct Callback<CB>(CB, usize);
        impl<T, CB: ProducerCallback<T>> ProducerCallback<T> for Callback<CB> {
            type Output = CB::Output;
            fn callback<P: Producer<Item = T>>(self, base: P) -> CB::Output {
                self.0.callback(RevProducer { base, len: self.1 })
            }
        }
        let len = self.base.len();
        self.base.with_producer(Callback(callback, len))
    }
});

/// The producer of [`Rev`]: its base, which holds `len` items.
struct RevProducer<P> {
    base: P,
    len: usize,
}

impl<P: Producer> Producer for RevProducer<P> {
    type Item = P::Item;
    type IntoIter = std::iter::Rev<P::IntoIter>;

    fn into_iter(self) -> Self::IntoIter {
        self.base.into_iter().rev()
    }

    fn min_len(&self) -> usize {
        self.base.min_len()
    }

    fn max_len(&self) -> usize {
        self.base.max_len()
    }

    fn split_at(self, index: usize) -> (Self, Self) {
        // The first `index` reversed items are the base's last `index`.
        let (front, back) = self.base.split_at(self.len - index);
        (
            RevProducer {
                base: back,
                len: index,
            },
            RevProducer {
                base: front,
                len: self.len - index,
            },
        )
    }
}

/// Every `step`-th item, from the first; see [`IndexedParallelIterator::step_by`].
///
/// # Examples
/// ```
/// use throttle::prelude::*;
/// let v: Vec<u32> = (0..10u32).into_par_iter().step_by(3).collect();
/// assert_eq!(v, [0, 3, 6, 9]);
/// ```
#[derive(Debug, Clone)]
#[must_use = "iterator adaptors are lazy and do nothing unless consumed"]
pub struct StepBy<I> {
    base: I,
    step: usize,
}

impl<I> StepBy<I> {
    pub(super) fn new(base: I, step: usize) -> Self {
        StepBy { base, step }
    }
}

bridged!(impl[I: IndexedParallelIterator] StepBy<I> => I::Item, where [] {
    fn len(&self) -> usize {
        self.base.len().div_ceil(self.step)
    }

    fn with_producer<CB: ProducerCallback<I::Item>>(self, callback: CB) -> CB::Output {
        /// Wraps the base's producer, which holds `len` items.
        struct Callback<CB>(CB, usize, usize);
        impl<T, CB: ProducerCallback<T>> ProducerCallback<T> for Callback<CB> {
            type Output = CB::Output;
            fn callback<P: Producer<Item = T>>(self, base: P) -> CB::Output {
                self.0.callback(StepByProducer { base, step: self.1, len: self.2 })
            }
        }
        let len = self.base.len();
        self.base.with_producer(Callback(callback, self.step, len))
    }
});

/// The producer of [`StepBy`]: its base, which holds `len` items.
struct StepByProducer<P> {
    base: P,
    step: usize,
    len: usize,
}

impl<P: Producer> Producer for StepByProducer<P> {
    type Item = P::Item;
    type IntoIter = std::iter::StepBy<P::IntoIter>;

    fn into_iter(self) -> Self::IntoIter {
        self.base.into_iter().step_by(self.step)
    }

    fn min_len(&self) -> usize {
        self.base.min_len().div_ceil(self.step)
    }

    fn max_len(&self) -> usize {
        (self.base.max_len() / self.step).max(1)
    }

    fn split_at(self, index: usize) -> (Self, Self) {
        // The left piece keeps `index` steps' worth of base items.
        let at = index.saturating_mul(self.step).min(self.len);
        let (left, right) = self.base.split_at(at);
        let step = self.step;
        (
            StepByProducer {
                base: left,
                step,
                len: at,
            },
            StepByProducer {
                base: right,
                step,
                len: self.len - at,
            },
        )
    }
}

/// All but the first `n` items; see [`IndexedParallelIterator::skip`].
///
/// The first `n` items still run through the adapters before `skip`, in parallel, for their
/// side effects (as in rayon); their items are dropped.
///
/// # Examples
/// ```
/// use throttle::prelude::*;
/// let v: Vec<u32> = (0..5u32).into_par_iter().skip(3).collect();
/// assert_eq!(v, [3, 4]);
/// ```
#[derive(Debug, Clone)]
#[must_use = "iterator adaptors are lazy and do nothing unless consumed"]
pub struct Skip<I> {
    base: I,
    n: usize,
}

impl<I: IndexedParallelIterator> Skip<I> {
    pub(super) fn new(base: I, n: usize) -> Self {
        let n = n.min(base.len());
        Skip { base, n }
    }
}

bridged!(impl[I: IndexedParallelIterator] Skip<I> => I::Item, where [] {
    fn len(&self) -> usize {
        self.base.len() - self.n
    }

    fn with_producer<CB: ProducerCallback<I::Item>>(self, callback: CB) -> CB::Output {
        /// Runs the first `n` items of the base's producer into nothing, hands on the rest.
        struct Callback<CB>(CB, usize);
        impl<T, CB: ProducerCallback<T>> ProducerCallback<T> for Callback<CB> {
            type Output = CB::Output;
            fn callback<P: Producer<Item = T>>(self, base: P) -> CB::Output {
                let (skipped, rest) = base.split_at(self.1);
                bridge_producer_consumer(self.1, skipped, Noop);
                self.0.callback(rest)
            }
        }
        self.base.with_producer(Callback(callback, self.n))
    }
});

/// The first `n` items; see [`IndexedParallelIterator::take`].
///
/// # Examples
/// ```
/// use throttle::prelude::*;
/// let v: Vec<u32> = (0..100u32).into_par_iter().take(3).collect();
/// assert_eq!(v, [0, 1, 2]);
/// ```
#[derive(Debug, Clone)]
#[must_use = "iterator adaptors are lazy and do nothing unless consumed"]
pub struct Take<I> {
    base: I,
    n: usize,
}

impl<I: IndexedParallelIterator> Take<I> {
    pub(super) fn new(base: I, n: usize) -> Self {
        let n = n.min(base.len());
        Take { base, n }
    }
}

bridged!(impl[I: IndexedParallelIterator] Take<I> => I::Item, where [] {
    fn len(&self) -> usize {
        self.n
    }

    fn with_producer<CB: ProducerCallback<I::Item>>(self, callback: CB) -> CB::Output {
        /// Hands on the first `n` items of the base's producer; the rest are dropped unrun.
        struct Callback<CB>(CB, usize);
        impl<T, CB: ProducerCallback<T>> ProducerCallback<T> for Callback<CB> {
            type Output = CB::Output;
            fn callback<P: Producer<Item = T>>(self, base: P) -> CB::Output {
                let (taken, _) = base.split_at(self.1);
                self.0.callback(taken)
            }
        }
        self.base.with_producer(Callback(callback, self.n))
    }
});

/// Keeps pieces at least `min` items long; see [`IndexedParallelIterator::with_min_len`].
///
/// # Examples
/// ```
/// use throttle::prelude::*;
/// assert_eq!((0..100u32).into_par_iter().with_min_len(10).count(), 100);
/// ```
#[derive(Debug, Clone)]
#[must_use = "iterator adaptors are lazy and do nothing unless consumed"]
pub struct MinLen<I> {
    base: I,
    min: usize,
}

impl<I> MinLen<I> {
    pub(super) fn new(base: I, min: usize) -> Self {
        MinLen { base, min }
    }
}

/// Keeps pieces at most `max` items long; see [`IndexedParallelIterator::with_max_len`].
///
/// # Examples
/// ```
/// use throttle::prelude::*;
/// assert_eq!((0..100u32).into_par_iter().with_max_len(10).count(), 100);
/// ```
#[derive(Debug, Clone)]
#[must_use = "iterator adaptors are lazy and do nothing unless consumed"]
pub struct MaxLen<I> {
    base: I,
    max: usize,
}

impl<I> MaxLen<I> {
    pub(super) fn new(base: I, max: usize) -> Self {
        MaxLen { base, max }
    }
}

/// Implements a length bound: the adapter and its producer.
macro_rules! length_bound {
    ($name:ident, $field:ident, $producer:ident,
     min: |$b1:ident, $v1:ident| $min:expr, max: |$b2:ident, $v2:ident| $max:expr) => {
        bridged!(impl[I: IndexedParallelIterator] $name<I> => I::Item, where [] {
            fn len(&self) -> usize {
                self.base.len()
            }

            fn with_producer<CB: ProducerCallback<I::Item>>(self, callback: CB) -> CB::Output {
                /// Wraps the base's producer with the bound.
                struct Callback<CB>(CB, usize);
                impl<T, CB: ProducerCallback<T>> ProducerCallback<T> for Callback<CB> {
                    type Output = CB::Output;
                    fn callback<P: Producer<Item = T>>(self, base: P) -> CB::Output {
                        self.0.callback($producer { base, $field: self.1 })
                    }
                }
                self.base.with_producer(Callback(callback, self.$field))
            }
        });

        /// The producer of the adapter of the same name.
        struct $producer<P> {
            base: P,
            $field: usize,
        }

        impl<P: Producer> Producer for $producer<P> {
            type Item = P::Item;
            type IntoIter = P::IntoIter;

            fn into_iter(self) -> P::IntoIter {
                self.base.into_iter()
            }

            fn min_len(&self) -> usize {
                let ($b1, $v1) = (&self.base, self.$field);
                $min
            }

            fn max_len(&self) -> usize {
                let ($b2, $v2) = (&self.base, self.$field);
                $max
            }

            fn split_at(self, index: usize) -> (Self, Self) {
                let (left, right) = self.base.split_at(index);
                let $field = self.$field;
                ($producer { base: left, $field }, $producer { base: right, $field })
            }

            fn fold_with<F: super::plumbing::Folder<P::Item>>(self, folder: F) -> F {
                self.base.fold_with(folder)
            }
        }
    };
}

length_bound!(MinLen, min, MinLenProducer,
    min: |base, min| base.min_len().max(min), max: |base, _min| base.max_len());
length_bound!(MaxLen, max, MaxLenProducer,
    min: |base, _max| base.min_len(), max: |base, max| base.max_len().min(max.max(1)));
