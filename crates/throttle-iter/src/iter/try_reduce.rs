//! `try_reduce` and `try_reduce_with` (and through them `try_for_each*`): reduce items that
//! are `Result`s, `Option`s or `ControlFlow`s, stopping every piece once one of them has met
//! a failure. The answer is the first failure in item order among those met; which failures
//! are met depends on which pieces ran before the others stopped.

use super::plumbing::{Consumer, Folder, Reducer, UnindexedConsumer};
use super::runtime;
use super::try_ops::Try;
use super::ParallelIterator;
use std::ops::ControlFlow::{self, Break, Continue};
use std::sync::atomic::{AtomicBool, Ordering};

/// Reduces the outputs of the items with `op`, each piece starting from `identity()`.
#[track_caller]
pub(crate) fn try_reduce<I, T, ID, OP>(iter: I, identity: &ID, op: &OP) -> I::Item
where
    I: ParallelIterator,
    I::Item: Try<Output = T>,
    ID: Fn() -> T + Sync,
    OP: Fn(T, T) -> I::Item + Sync,
{
    let failed = AtomicBool::new(false);
    let consumer = TryReduce {
        identity: Some(identity),
        op,
        failed: &failed,
    };
    runtime::drive_here(|| iter.drive_unindexed(consumer))
}

/// Reduces the outputs of the items with `op`; `None` if there are no items.
#[track_caller]
pub(crate) fn try_reduce_with<I, T, OP>(iter: I, op: &OP) -> Option<I::Item>
where
    I: ParallelIterator,
    I::Item: Try<Output = T>,
    OP: Fn(T, T) -> I::Item + Sync,
{
    let failed = AtomicBool::new(false);
    let consumer = TryReduce::<fn() -> T, OP> {
        identity: None,
        op,
        failed: &failed,
    };
    runtime::drive_here(|| iter.drive_unindexed(WithoutIdentity(consumer)))
}

/// The consumer (and reducer) of [`try_reduce`]; with no `identity`, the inner part of
/// [`try_reduce_with`]'s.
struct TryReduce<'f, ID, OP> {
    identity: Option<&'f ID>,
    op: &'f OP,
    /// Set once some piece met a failure: every piece is then full.
    failed: &'f AtomicBool,
}

impl<ID, OP> Clone for TryReduce<'_, ID, OP> {
    fn clone(&self) -> Self {
        TryReduce {
            identity: self.identity,
            op: self.op,
            failed: self.failed,
        }
    }
}

impl<ID, OP> TryReduce<'_, ID, OP> {
    /// Combines two partial results with `op`, the left failure first.
    fn combine<R, T>(
        &self,
        left: ControlFlow<R::Residual, T>,
        right: R,
    ) -> ControlFlow<R::Residual, T>
    where
        R: Try<Output = T>,
        OP: Fn(T, T) -> R,
    {
        match (left, right.branch()) {
            (Continue(a), Continue(b)) => {
                let r = (self.op)(a, b).branch();
                if r.is_break() {
                    self.failed.store(true, Ordering::Relaxed);
                }
                r
            }
            (Break(r), _) | (_, Break(r)) => {
                self.failed.store(true, Ordering::Relaxed);
                Break(r)
            }
        }
    }
}

/// Turns a partial result back into the item type.
fn unbranch<R: Try>(flow: ControlFlow<R::Residual, R::Output>) -> R {
    match flow {
        Continue(t) => R::from_output(t),
        Break(r) => R::from_residual(r),
    }
}

impl<R, T, ID, OP> Consumer<R> for TryReduce<'_, ID, OP>
where
    R: Try<Output = T> + Send,
    ID: Fn() -> T + Sync,
    OP: Fn(T, T) -> R + Sync,
{
    type Folder = FromIdentity<TryReduceFolder<Self, R::Residual, T>>;
    type Reducer = Self;
    type Result = R;

    fn split_at(self, _index: usize) -> (Self, Self, Self) {
        (self.clone(), self.clone(), self)
    }

    fn into_folder(self) -> Self::Folder {
        let identity = self.identity.expect("try_reduce has an identity");
        FromIdentity(TryReduceFolder {
            acc: Some(Continue(identity())),
            consumer: self,
        })
    }

    fn full(&self) -> bool {
        self.failed.load(Ordering::Relaxed)
    }
}

impl<R, T, ID, OP> UnindexedConsumer<R> for TryReduce<'_, ID, OP>
where
    R: Try<Output = T> + Send,
    ID: Fn() -> T + Sync,
    OP: Fn(T, T) -> R + Sync,
{
    fn split_off_left(&self) -> Self {
        self.clone()
    }

    fn to_reducer(&self) -> Self {
        self.clone()
    }
}

impl<R, T, ID, OP> Reducer<R> for TryReduce<'_, ID, OP>
where
    R: Try<Output = T>,
    OP: Fn(T, T) -> R,
{
    fn reduce(self, left: R, right: R) -> R {
        unbranch(self.combine(left.branch(), right))
    }
}

/// The folder of [`try_reduce`] and [`try_reduce_with`]: the piece's partial result (`None`
/// before the first item, for `try_reduce_with` only).
struct TryReduceFolder<C, E, T> {
    consumer: C,
    acc: Option<ControlFlow<E, T>>,
}

impl<R, T, ID, OP> Folder<R> for TryReduceFolder<TryReduce<'_, ID, OP>, R::Residual, T>
where
    R: Try<Output = T>,
    OP: Fn(T, T) -> R,
{
    type Result = Option<R>;

    fn consume(mut self, item: R) -> Self {
        self.acc = Some(match self.acc.take() {
            None => {
                let flow = item.branch();
                if flow.is_break() {
                    self.consumer.failed.store(true, Ordering::Relaxed);
                }
                flow
            }
            Some(acc) => self.consumer.combine(acc, item),
        });
        self
    }

    fn complete(self) -> Option<R> {
        self.acc.map(unbranch)
    }

    fn full(&self) -> bool {
        matches!(self.acc, Some(Break(_))) || self.consumer.failed.load(Ordering::Relaxed)
    }
}

/// [`try_reduce`]'s folder: one that started from the identity, so it always has a result.
struct FromIdentity<F>(F);

impl<R, F: Folder<R, Result = Option<R>>> Folder<R> for FromIdentity<F> {
    type Result = R;

    fn consume(self, item: R) -> Self {
        FromIdentity(self.0.consume(item))
    }

    fn complete(self) -> R {
        self.0
            .complete()
            .expect("a piece of try_reduce starts from the identity")
    }

    fn full(&self) -> bool {
        self.0.full()
    }
}

/// [`try_reduce_with`]'s consumer: [`TryReduce`] without an identity, whose result is `None`
/// for a piece without items.
struct WithoutIdentity<C>(C);

impl<'f, R, T, ID, OP> Consumer<R> for WithoutIdentity<TryReduce<'f, ID, OP>>
where
    R: Try<Output = T> + Send,
    ID: Sync,
    OP: Fn(T, T) -> R + Sync,
{
    type Folder = TryReduceFolder<TryReduce<'f, ID, OP>, R::Residual, T>;
    type Reducer = Self;
    type Result = Option<R>;

    fn split_at(self, _index: usize) -> (Self, Self, Self) {
        (
            WithoutIdentity(self.0.clone()),
            WithoutIdentity(self.0.clone()),
            self,
        )
    }

    fn into_folder(self) -> Self::Folder {
        TryReduceFolder {
            acc: None,
            consumer: self.0,
        }
    }

    fn full(&self) -> bool {
        self.0.failed.load(Ordering::Relaxed)
    }
}

impl<R, T, ID, OP> UnindexedConsumer<R> for WithoutIdentity<TryReduce<'_, ID, OP>>
where
    R: Try<Output = T> + Send,
    ID: Sync,
    OP: Fn(T, T) -> R + Sync,
{
    fn split_off_left(&self) -> Self {
        WithoutIdentity(self.0.clone())
    }

    fn to_reducer(&self) -> Self {
        WithoutIdentity(self.0.clone())
    }
}

impl<R, T, ID, OP> Reducer<Option<R>> for WithoutIdentity<TryReduce<'_, ID, OP>>
where
    R: Try<Output = T>,
    OP: Fn(T, T) -> R,
{
    fn reduce(self, left: Option<R>, right: Option<R>) -> Option<R> {
        match (left, right) {
            (Some(l), Some(r)) => Some(unbranch(self.0.combine(l.branch(), r))),
            (l, r) => l.or(r),
        }
    }
}
