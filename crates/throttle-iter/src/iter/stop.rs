//! Adapters whose pieces share a state during a run: `while_some`, `panic_fuse`, `take_any`,
//! `skip_any`, `take_any_while` and `skip_any_while`. The state (an atomic) lives on the stack
//! of the call that drives the run, so every run starts afresh; once it says the adapter passes
//! nothing more, the consumer is full, and the run stops splitting and feeding it.

use super::adapt::{ItemOp, IterOp, OpCallback, OpConsumer};
use super::plumbing::{Consumer, Folder, ProducerCallback, UnindexedConsumer};
use super::{IndexedParallelIterator, ParallelIterator};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// Declares an adapter struct over `base` with the given extra fields, and its constructor.
macro_rules! stop_adapter {
    ($(#[$m:meta])* $name:ident [$($g:ident),*] { $($field:ident: $ty:ty),* }) => {
        $(#[$m])*
        #[derive(Clone)]
        #[must_use = "iterator adaptors are lazy and do nothing unless consumed"]
        pub struct $name<I, $($g),*> {
            base: I,
            $($field: $ty,)*
        }

        impl<I: std::fmt::Debug, $($g),*> std::fmt::Debug for $name<I, $($g),*> {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.debug_struct(stringify!($name)).field("base", &self.base).finish_non_exhaustive()
            }
        }

        impl<I, $($g),*> $name<I, $($g),*> {
            pub(super) fn new(base: I, $($field: $ty),*) -> Self {
                $name { base, $($field),* }
            }
        }
    };
}

/// The folder of every op here: the base folder and a reference to the op, whose `pass`
/// decides per item.
pub(crate) struct StopFolder<C, A> {
    base: C,
    op: A,
}

/// What an op of this module does with an item: hand it on (`Some`) or drop it (`None`).
pub(crate) trait Pass<T>: Clone + Send {
    type Out;
    fn pass(&self, item: T) -> Option<Self::Out>;
    /// True once nothing more will pass.
    fn done(&self) -> bool;
}

impl<T, C: Folder<A::Out>, A: Pass<T>> Folder<T> for StopFolder<C, A> {
    type Result = C::Result;
    fn consume(self, item: T) -> Self {
        let base = match self.op.pass(item) {
            Some(x) => self.base.consume(x),
            None => self.base,
        };
        StopFolder { base, op: self.op }
    }
    fn consume_iter<It: IntoIterator<Item = T>>(self, iter: It) -> Self {
        let op = &self.op;
        let base = self.base.consume_iter(
            iter.into_iter()
                .take_while(|_| !op.done())
                .filter_map(|x| op.pass(x)),
        );
        StopFolder { base, op: self.op }
    }
    fn complete(self) -> C::Result {
        self.base.complete()
    }
    fn full(&self) -> bool {
        self.op.done() || self.base.full()
    }
}

/// Every [`Pass`] is an [`ItemOp`] with a [`StopFolder`].
macro_rules! pass_op {
    (impl[$($g:tt)*] $op:ty, for $t:ty, where [$($b:tt)*]) => {
        impl<$($g)*> ItemOp<$t> for $op where $($b)* {
            type Out = <Self as Pass<$t>>::Out;
            type Folder<C: Folder<Self::Out>> = StopFolder<C, Self>;
            fn folder<C: Folder<Self::Out>>(self, base: C) -> StopFolder<C, Self> {
                StopFolder { base, op: self }
            }
            fn full(&self) -> bool {
                <Self as Pass<$t>>::done(self)
            }
        }
    };
}

/// Drives `base` through an op made from a fresh shared state.
macro_rules! drive_with_state {
    ($base:expr, $consumer:expr, $op:expr) => {
        $base.drive_unindexed(OpConsumer::new($consumer, $op))
    };
}

stop_adapter!(
    /// The `Some` values of an iterator over `Option`s, stopping once a `None` is seen; see
    /// [`ParallelIterator::while_some`].
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// let v: Vec<u32> = vec![Some(1), Some(2)].into_par_iter().while_some().collect();
    /// assert_eq!(v, [1, 2]);
    /// ```
    WhileSome [] {}
);

impl<I, T> ParallelIterator for WhileSome<I>
where
    I: ParallelIterator<Item = Option<T>>,
    T: Send,
{
    type Item = T;

    fn drive_unindexed<C: UnindexedConsumer<T>>(self, consumer: C) -> C::Result {
        let stop = AtomicBool::new(false);
        drive_with_state!(self.base, consumer, WhileSomeOp(&stop))
    }
}

/// [`WhileSome`]'s op: set once a `None` was seen.
#[derive(Clone, Copy)]
pub(crate) struct WhileSomeOp<'s>(&'s AtomicBool);

impl<T> Pass<Option<T>> for WhileSomeOp<'_> {
    type Out = T;
    fn pass(&self, item: Option<T>) -> Option<T> {
        if self.0.load(Ordering::Relaxed) {
            return None;
        }
        if item.is_none() {
            self.0.store(true, Ordering::Relaxed);
        }
        item
    }
    fn done(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

pass_op!(impl['s, T] WhileSomeOp<'s>, for Option<T>, where []);

stop_adapter!(
    /// At most `n` items, any of them; see [`ParallelIterator::take_any`].
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// assert_eq!((0..1000u32).into_par_iter().take_any(10).count(), 10);
    /// ```
    TakeAny [] { n: usize }
);

impl<I: ParallelIterator> ParallelIterator for TakeAny<I> {
    type Item = I::Item;

    fn drive_unindexed<C: UnindexedConsumer<I::Item>>(self, consumer: C) -> C::Result {
        let left = AtomicUsize::new(self.n);
        drive_with_state!(self.base, consumer, TakeAnyOp(&left))
    }
}

/// Takes one from `left` unless it is 0.
fn take_one(left: &AtomicUsize) -> bool {
    left.load(Ordering::Relaxed) > 0
        && left
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1))
            .is_ok()
}

/// [`TakeAny`]'s op: the items still to take.
#[derive(Clone, Copy)]
pub(crate) struct TakeAnyOp<'s>(&'s AtomicUsize);

impl<T> Pass<T> for TakeAnyOp<'_> {
    type Out = T;
    fn pass(&self, item: T) -> Option<T> {
        take_one(self.0).then_some(item)
    }
    fn done(&self) -> bool {
        self.0.load(Ordering::Relaxed) == 0
    }
}

pass_op!(impl['s, T] TakeAnyOp<'s>, for T, where []);

stop_adapter!(
    /// All items but `n` of them, any `n`; see [`ParallelIterator::skip_any`].
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// assert_eq!((0..1000u32).into_par_iter().skip_any(10).count(), 990);
    /// ```
    SkipAny [] { n: usize }
);

impl<I: ParallelIterator> ParallelIterator for SkipAny<I> {
    type Item = I::Item;

    fn drive_unindexed<C: UnindexedConsumer<I::Item>>(self, consumer: C) -> C::Result {
        let left = AtomicUsize::new(self.n);
        drive_with_state!(self.base, consumer, SkipAnyOp(&left))
    }
}

/// [`SkipAny`]'s op: the items still to skip.
#[derive(Clone, Copy)]
pub(crate) struct SkipAnyOp<'s>(&'s AtomicUsize);

impl<T> Pass<T> for SkipAnyOp<'_> {
    type Out = T;
    fn pass(&self, item: T) -> Option<T> {
        (!take_one(self.0)).then_some(item)
    }
    fn done(&self) -> bool {
        false
    }
}

pass_op!(impl['s, T] SkipAnyOp<'s>, for T, where []);

stop_adapter!(
    /// Items while a predicate holds, from anywhere; once it failed for some item the pieces
    /// stop; see [`ParallelIterator::take_any_while`].
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// let v: Vec<u32> = (0..1000u32).into_par_iter().take_any_while(|&x| x < 1000).collect();
    /// assert_eq!(v.len(), 1000);
    /// ```
    TakeAnyWhile [P] { predicate: P }
);

impl<I, P> ParallelIterator for TakeAnyWhile<I, P>
where
    I: ParallelIterator,
    P: Fn(&I::Item) -> bool + Sync + Send,
{
    type Item = I::Item;

    fn drive_unindexed<C: UnindexedConsumer<I::Item>>(self, consumer: C) -> C::Result {
        let stop = AtomicBool::new(false);
        let op = WhileOp {
            predicate: &self.predicate,
            flag: &stop,
        };
        drive_with_state!(self.base, consumer, TakeWhileOp(op))
    }
}

/// A predicate and a flag shared by the pieces.
pub(crate) struct WhileOp<'s, P> {
    predicate: &'s P,
    flag: &'s AtomicBool,
}

impl<P> Clone for WhileOp<'_, P> {
    fn clone(&self) -> Self {
        WhileOp {
            predicate: self.predicate,
            flag: self.flag,
        }
    }
}

/// [`TakeAnyWhile`]'s op: the flag is set once the predicate failed.
pub(crate) struct TakeWhileOp<'s, P>(WhileOp<'s, P>);

impl<P> Clone for TakeWhileOp<'_, P> {
    fn clone(&self) -> Self {
        TakeWhileOp(self.0.clone())
    }
}

impl<T, P: Fn(&T) -> bool + Sync> Pass<T> for TakeWhileOp<'_, P> {
    type Out = T;
    fn pass(&self, item: T) -> Option<T> {
        if self.0.flag.load(Ordering::Relaxed) {
            return None;
        }
        if (self.0.predicate)(&item) {
            Some(item)
        } else {
            self.0.flag.store(true, Ordering::Relaxed);
            None
        }
    }
    fn done(&self) -> bool {
        self.0.flag.load(Ordering::Relaxed)
    }
}

pass_op!(impl['s, T, P] TakeWhileOp<'s, P>, for T, where [P: Fn(&T) -> bool + Sync]);

stop_adapter!(
    /// Skips items while a predicate holds, from anywhere; once it failed for some item, all
    /// items not yet skipped pass; see [`ParallelIterator::skip_any_while`].
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// let v: Vec<u32> = (0..100u32).into_par_iter().skip_any_while(|_| false).collect();
    /// assert_eq!(v.len(), 100);
    /// ```
    SkipAnyWhile [P] { predicate: P }
);

impl<I, P> ParallelIterator for SkipAnyWhile<I, P>
where
    I: ParallelIterator,
    P: Fn(&I::Item) -> bool + Sync + Send,
{
    type Item = I::Item;

    fn drive_unindexed<C: UnindexedConsumer<I::Item>>(self, consumer: C) -> C::Result {
        let passing = AtomicBool::new(false);
        let op = WhileOp {
            predicate: &self.predicate,
            flag: &passing,
        };
        drive_with_state!(self.base, consumer, SkipWhileOp(op))
    }
}

/// [`SkipAnyWhile`]'s op: the flag is set once the predicate failed.
pub(crate) struct SkipWhileOp<'s, P>(WhileOp<'s, P>);

impl<P> Clone for SkipWhileOp<'_, P> {
    fn clone(&self) -> Self {
        SkipWhileOp(self.0.clone())
    }
}

impl<T, P: Fn(&T) -> bool + Sync> Pass<T> for SkipWhileOp<'_, P> {
    type Out = T;
    fn pass(&self, item: T) -> Option<T> {
        if self.0.flag.load(Ordering::Relaxed) || !(self.0.predicate)(&item) {
            self.0.flag.store(true, Ordering::Relaxed);
            Some(item)
        } else {
            None
        }
    }
    fn done(&self) -> bool {
        false
    }
}

pass_op!(impl['s, T, P] SkipWhileOp<'s, P>, for T, where [P: Fn(&T) -> bool + Sync]);

stop_adapter!(
    /// Stops every piece soon after one panicked; see [`ParallelIterator::panic_fuse`].
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// let r = std::panic::catch_unwind(|| {
    ///     (0..10_000u32).into_par_iter().panic_fuse().for_each(|x| assert!(x != 42));
    /// });
    /// assert!(r.is_err());
    /// ```
    PanicFuse [] {}
);

impl<I: ParallelIterator> ParallelIterator for PanicFuse<I> {
    type Item = I::Item;

    fn drive_unindexed<C: UnindexedConsumer<I::Item>>(self, consumer: C) -> C::Result {
        let panicked = AtomicBool::new(false);
        drive_with_state!(self.base, consumer, FuseOp(&panicked))
    }

    fn opt_len(&self) -> Option<usize> {
        self.base.opt_len()
    }
}

impl<I: IndexedParallelIterator> IndexedParallelIterator for PanicFuse<I> {
    fn drive<C: Consumer<I::Item>>(self, consumer: C) -> C::Result {
        let panicked = AtomicBool::new(false);
        self.base
            .drive(OpConsumer::new(consumer, FuseOp(&panicked)))
    }

    fn len(&self) -> usize {
        self.base.len()
    }

    fn with_producer<CB: ProducerCallback<I::Item>>(self, callback: CB) -> CB::Output {
        let panicked = AtomicBool::new(false);
        self.base
            .with_producer(OpCallback::new(callback, FuseOp(&panicked)))
    }
}

/// [`PanicFuse`]'s op: set once a piece panicked.
#[derive(Clone, Copy)]
pub(crate) struct FuseOp<'s>(&'s AtomicBool);

/// Sets the fuse if dropped while its thread unwinds (a closure after it panicked).
struct Fuse<'s>(&'s AtomicBool);

impl Drop for Fuse<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.store(true, Ordering::Relaxed);
        }
    }
}

impl<'s, T> ItemOp<T> for FuseOp<'s> {
    type Out = T;
    type Folder<C: Folder<T>> = FuseFolder<'s, C>;
    fn folder<C: Folder<T>>(self, base: C) -> FuseFolder<'s, C> {
        FuseFolder { base, fuse: self.0 }
    }
    fn full(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

/// The items pass unchanged; the fuse is checked by the folder, so a piece's iterator keeps
/// its exact length.
impl<'s, T> IterOp<T> for FuseOp<'s> {
    type Iter<J>
        = J
    where
        J: Iterator<Item = T> + DoubleEndedIterator + ExactSizeIterator;
    fn iter<J>(self, base: J) -> J
    where
        J: Iterator<Item = T> + DoubleEndedIterator + ExactSizeIterator,
    {
        base
    }
    fn unwrap<C: Folder<T>>(folder: FuseFolder<'s, C>) -> C {
        folder.base
    }
}

/// The folder of [`PanicFuse`]: stops once the fuse is set, and sets it if a closure below it
/// panics.
pub(crate) struct FuseFolder<'s, C> {
    base: C,
    fuse: &'s AtomicBool,
}

impl<T, C: Folder<T>> Folder<T> for FuseFolder<'_, C> {
    type Result = C::Result;
    fn consume(self, item: T) -> Self {
        let guard = Fuse(self.fuse);
        let base = self.base.consume(item);
        drop(guard);
        FuseFolder {
            base,
            fuse: self.fuse,
        }
    }
    fn consume_iter<It: IntoIterator<Item = T>>(self, iter: It) -> Self {
        let guard = Fuse(self.fuse);
        let fuse = self.fuse;
        let base = self.base.consume_iter(
            iter.into_iter()
                .take_while(|_| !fuse.load(Ordering::Relaxed)),
        );
        drop(guard);
        FuseFolder { base, fuse }
    }
    fn complete(self) -> C::Result {
        self.base.complete()
    }
    fn full(&self) -> bool {
        self.fuse.load(Ordering::Relaxed) || self.base.full()
    }
}
