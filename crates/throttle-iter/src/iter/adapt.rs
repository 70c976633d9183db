//! The plumbing that per-item adapters share (`map`, `filter`, `inspect`, `fold`, `while_some`,
//! ...): each such adapter only says what it does to the items a folder is given (an
//! [`ItemOp`]), and, if it keeps items' indices, to a piece's sequential iterator (an
//! [`IterOp`]). [`OpConsumer`] and [`OpProducer`] then do the splitting, forwarding and
//! reducing for all of them, so an adapter is one small type and its folder.
//!
//! An op is cloned for each piece of a run (most are a few references to the adapter's
//! closures, so a clone is a copy); `map_with`'s op carries the user's value, cloned per piece
//! as rayon does.

use super::plumbing::{Consumer, Folder, Producer, ProducerCallback, UnindexedConsumer, WorkOrder};

/// What an adapter does to the items a folder is given: it wraps the base consumer's folder
/// (which takes `Self::Out`s) in one that takes `T`s.
pub(crate) trait ItemOp<T>: Clone + Send {
    /// The items the base consumer takes.
    type Out;

    /// The adapter's folder around a base folder `F`.
    type Folder<F: Folder<Self::Out>>: Folder<T, Result = F::Result>;

    /// Wraps a base folder.
    fn folder<F: Folder<Self::Out>>(self, base: F) -> Self::Folder<F>;

    /// True once the adapter passes nothing more on (`while_some` after a `None`, ...): the run
    /// then stops feeding the consumer, as if it were full.
    fn full(&self) -> bool {
        false
    }
}

/// An [`ItemOp`] that also maps a piece's sequential iterator, so that the adapter keeps
/// indices (its producer wraps the base's producer).
pub(crate) trait IterOp<T>: ItemOp<T> {
    /// The adapter's iterator around a base iterator `I`.
    type Iter<I>: Iterator<Item = Self::Out> + DoubleEndedIterator + ExactSizeIterator
    where
        I: Iterator<Item = T> + DoubleEndedIterator + ExactSizeIterator;

    /// Wraps a base iterator.
    fn iter<I>(self, base: I) -> Self::Iter<I>
    where
        I: Iterator<Item = T> + DoubleEndedIterator + ExactSizeIterator;

    /// Takes the base folder back out of the adapter's folder (after a producer folded into
    /// it).
    fn unwrap<F: Folder<Self::Out>>(folder: Self::Folder<F>) -> F;
}

/// A consumer that applies an [`ItemOp`] before its base consumer.
pub(crate) struct OpConsumer<C, A> {
    base: C,
    op: A,
}

impl<C, A> OpConsumer<C, A> {
    pub(crate) fn new(base: C, op: A) -> Self {
        OpConsumer { base, op }
    }
}

impl<T, C, A> Consumer<T> for OpConsumer<C, A>
where
    A: ItemOp<T>,
    C: Consumer<A::Out>,
{
    type Folder = A::Folder<C::Folder>;
    type Reducer = C::Reducer;
    type Result = C::Result;

    fn split_at(self, index: usize) -> (Self, Self, C::Reducer) {
        let (left, right, reducer) = self.base.split_at(index);
        (
            OpConsumer::new(left, self.op.clone()),
            OpConsumer::new(right, self.op),
            reducer,
        )
    }

    fn into_folder(self) -> Self::Folder {
        self.op.folder(self.base.into_folder())
    }

    fn full(&self) -> bool {
        self.op.full() || self.base.full()
    }

    fn work_order(&self) -> WorkOrder {
        self.base.work_order()
    }

    fn split_at_of(self, index: usize, len: usize) -> (Self, Self, C::Reducer) {
        let (left, right, reducer) = self.base.split_at_of(index, len);
        (
            OpConsumer::new(left, self.op.clone()),
            OpConsumer::new(right, self.op),
            reducer,
        )
    }
}

impl<T, C, A> UnindexedConsumer<T> for OpConsumer<C, A>
where
    A: ItemOp<T>,
    C: UnindexedConsumer<A::Out>,
{
    fn split_off_left(&self) -> Self {
        OpConsumer::new(self.base.split_off_left(), self.op.clone())
    }

    fn to_reducer(&self) -> C::Reducer {
        self.base.to_reducer()
    }

    fn split_off_left_at(&self, index: usize, len: usize) -> Self {
        OpConsumer::new(self.base.split_off_left_at(index, len), self.op.clone())
    }
}

/// A producer that applies an [`IterOp`] to its base producer's items.
pub(crate) struct OpProducer<P, A> {
    base: P,
    op: A,
}

impl<P, A> Producer for OpProducer<P, A>
where
    P: Producer,
    A: IterOp<P::Item>,
{
    type Item = A::Out;
    type IntoIter = A::Iter<P::IntoIter>;

    fn into_iter(self) -> Self::IntoIter {
        self.op.iter(self.base.into_iter())
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
            OpProducer {
                base: left,
                op: self.op.clone(),
            },
            OpProducer {
                base: right,
                op: self.op,
            },
        )
    }

    fn fold_with<F: Folder<A::Out>>(self, folder: F) -> F {
        // Through the base's own `fold_with`, which may be better than its iterator.
        A::unwrap(self.base.fold_with(self.op.folder(folder)))
    }
}

/// Wraps the producer a base iterator hands back in an [`OpProducer`] and passes it on.
pub(crate) struct OpCallback<CB, A> {
    callback: CB,
    op: A,
}

impl<CB, A> OpCallback<CB, A> {
    pub(crate) fn new(callback: CB, op: A) -> Self {
        OpCallback { callback, op }
    }
}

impl<T, CB, A> ProducerCallback<T> for OpCallback<CB, A>
where
    A: IterOp<T>,
    CB: ProducerCallback<A::Out>,
{
    type Output = CB::Output;

    fn callback<P: Producer<Item = T>>(self, base: P) -> CB::Output {
        self.callback.callback(OpProducer { base, op: self.op })
    }
}

/// Implements `ParallelIterator` and `IndexedParallelIterator` for an adapter struct with the
/// fields `base` and `rest`, whose op is built by `$op` from `rest` (bound to `$rest`).
macro_rules! op_indexed {
    (
        impl[$($g:tt)*] $ty:ty => $item:ty,
        where [$($bounds:tt)*],
        |$rest:pat_param| $op:expr
    ) => {
        impl<$($g)*> $crate::iter::ParallelIterator for $ty
        where
            I: $crate::iter::ParallelIterator,
            $($bounds)*
        {
            type Item = $item;

            fn drive_unindexed<C: $crate::iter::plumbing::UnindexedConsumer<$item>>(self, consumer: C) -> C::Result {
                let Self { base, rest: $rest } = self;
                $crate::iter::ParallelIterator::drive_unindexed(base, $crate::iter::adapt::OpConsumer::new(consumer, $op))
            }

            fn opt_len(&self) -> Option<usize> {
                $crate::iter::ParallelIterator::opt_len(&self.base)
            }
        }

        impl<$($g)*> $crate::iter::IndexedParallelIterator for $ty
        where
            I: $crate::iter::IndexedParallelIterator,
            $($bounds)*
        {
            fn drive<C: $crate::iter::plumbing::Consumer<$item>>(self, consumer: C) -> C::Result {
                let Self { base, rest: $rest } = self;
                $crate::iter::IndexedParallelIterator::drive(base, $crate::iter::adapt::OpConsumer::new(consumer, $op))
            }

            fn len(&self) -> usize {
                $crate::iter::IndexedParallelIterator::len(&self.base)
            }

            fn with_producer<CB: $crate::iter::plumbing::ProducerCallback<$item>>(self, callback: CB) -> CB::Output {
                let Self { base, rest: $rest } = self;
                $crate::iter::IndexedParallelIterator::with_producer(base, $crate::iter::adapt::OpCallback::new(callback, $op))
            }
        }
    };
}

/// Implements `Debug` showing the base only (closures have no `Debug`).
macro_rules! debug_base {
    ($name:ident [$($g:ident),*]) => {
        impl<I: std::fmt::Debug, $($g),*> std::fmt::Debug for $name<I, $($g),*> {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.debug_struct(stringify!($name)).field("base", &self.base).finish()
            }
        }
    };
}

/// Implements `ParallelIterator` for an adapter struct with the fields `base` and `rest` that
/// does not keep indices (it may drop or add items), whose op is built by `$op` from `rest`.
macro_rules! op_unindexed {
    (
        impl[$($g:tt)*] $ty:ty => $item:ty,
        where [$($bounds:tt)*],
        |$rest:pat_param| $op:expr
    ) => {
        impl<$($g)*> $crate::iter::ParallelIterator for $ty
        where
            I: $crate::iter::ParallelIterator,
            $($bounds)*
        {
            type Item = $item;

            fn drive_unindexed<C: $crate::iter::plumbing::UnindexedConsumer<$item>>(self, consumer: C) -> C::Result {
                let Self { base, rest: $rest } = self;
                $crate::iter::ParallelIterator::drive_unindexed(base, $crate::iter::adapt::OpConsumer::new(consumer, $op))
            }
        }
    };
}

/// Implements `ParallelIterator` and the bridged methods of `IndexedParallelIterator` for an
/// indexed adapter whose `with_producer` and `len` are written by hand (in `$extra`).
macro_rules! bridged {
    (impl[$($g:tt)*] $ty:ty => $item:ty, where [$($b:tt)*] { $($extra:tt)* }) => {
        impl<$($g)*> $crate::iter::ParallelIterator for $ty
        where
            $($b)*
        {
            type Item = $item;

            fn drive_unindexed<C>(self, consumer: C) -> C::Result
            where
                C: $crate::iter::plumbing::UnindexedConsumer<$item>,
            {
                $crate::iter::plumbing::bridge(self, consumer)
            }

            fn opt_len(&self) -> Option<usize> {
                Some($crate::iter::IndexedParallelIterator::len(self))
            }
        }

        impl<$($g)*> $crate::iter::IndexedParallelIterator for $ty
        where
            $($b)*
        {
            fn drive<C: $crate::iter::plumbing::Consumer<$item>>(self, consumer: C) -> C::Result {
                $crate::iter::plumbing::bridge(self, consumer)
            }

            $($extra)*
        }
    };
}

/// Implements `ParallelIterator` for one of throttle's unindexed sources: a type that is its
/// own [`Pieces`](crate::iter::plumbing::engine::Pieces), run by throttle's engine in units of
/// `$units` (an expression of `self`).
macro_rules! units_iterator {
    (impl[$($g:tt)*] $ty:ty => $item:ty, where [$($b:tt)*], units: |$this:ident| $units:expr) => {
        impl<$($g)*> $crate::iter::ParallelIterator for $ty
        where
            $($b)*
        {
            type Item = $item;

            fn drive_unindexed<C>(self, consumer: C) -> C::Result
            where
                C: $crate::iter::plumbing::UnindexedConsumer<$item>,
            {
                let units = {
                    let $this = &self;
                    $units
                };
                $crate::iter::plumbing::engine::drive(
                    self,
                    units,
                    $crate::iter::plumbing::engine::ByUnits(consumer),
                )
            }
        }
    };
}

/// Implements `ParallelIterator` and `IndexedParallelIterator` for a source that is its own
/// [`Producer`](crate::iter::plumbing::Producer) (a slice's iterators, say), of
/// `$len` items (an expression of `self`).
macro_rules! producer_iterator {
    (impl[$($g:tt)*] $ty:ty => $item:ty, where [$($b:tt)*], len: |$this:ident| $len:expr) => {
        bridged!(impl[$($g)*] $ty => $item, where [$($b)*] {
            fn len(&self) -> usize {
                let $this = self;
                $len
            }

            fn with_producer<CB>(self, callback: CB) -> CB::Output
            where
                CB: $crate::iter::plumbing::ProducerCallback<$item>,
            {
                callback.callback(self)
            }
        });
    };
}
