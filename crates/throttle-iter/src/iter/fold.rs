//! `fold`, `fold_with`, `try_fold` and `try_fold_with`: each piece of a run folds its items
//! into one accumulator and hands the base only that. Each is an op ([`ItemOp`]) for the shared
//! plumbing of `adapt.rs`. A folder stops early (and gives what it has) once its base is full,
//! so `fold(..).find_any(..)` stops as soon as one accumulator is found.

use super::adapt::ItemOp;
use super::plumbing::Folder;
use super::try_ops::Try;
use std::marker::PhantomData;
use std::ops::ControlFlow::{self, Break, Continue};
use throttle_core::seam::inlined2;

/// Folds each piece of work into one accumulator; see [`ParallelIterator::fold`].
///
/// [`ParallelIterator::fold`]: super::ParallelIterator::fold
///
/// # Examples
/// ```
/// use throttle::prelude::*;
/// let total: u32 = (0..100u32).into_par_iter().fold(|| 0, |a, x| a + x).sum();
/// assert_eq!(total, 4950);
/// ```
#[derive(Clone)]
#[must_use = "iterator adaptors are lazy and do nothing unless consumed"]
pub struct Fold<I, ID, F> {
    base: I,
    rest: (ID, F),
}

debug_base!(Fold[ID, F]);

impl<I, ID, F> Fold<I, ID, F> {
    pub(super) fn new(base: I, identity: ID, fold_op: F) -> Self {
        Fold {
            base,
            rest: (identity, fold_op),
        }
    }
}

op_unindexed!(impl[I, ID, F, T] Fold<I, ID, F> => T,
    where [F: Fn(T, I::Item) -> T + Sync + Send, ID: Fn() -> T + Sync + Send, T: Send,],
    |(identity, f)| FoldOp { start: Call(&identity), f: &f });

/// Folds each piece of work into a clone of a value; see [`ParallelIterator::fold_with`].
///
/// [`ParallelIterator::fold_with`]: super::ParallelIterator::fold_with
///
/// # Examples
/// ```
/// use throttle::prelude::*;
/// let total: u32 = (0..100u32).into_par_iter().fold_with(0u32, |a, x| a + x).sum();
/// assert_eq!(total, 4950);
/// ```
#[derive(Clone)]
#[must_use = "iterator adaptors are lazy and do nothing unless consumed"]
pub struct FoldWith<I, U, F> {
    base: I,
    rest: (U, F),
}

impl<I: std::fmt::Debug, U: std::fmt::Debug, F> std::fmt::Debug for FoldWith<I, U, F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FoldWith")
            .field("base", &self.base)
            .field("item", &self.rest.0)
            .finish()
    }
}

impl<I, U, F> FoldWith<I, U, F> {
    pub(super) fn new(base: I, init: U, fold_op: F) -> Self {
        FoldWith {
            base,
            rest: (init, fold_op),
        }
    }
}

op_unindexed!(impl[I, U, F] FoldWith<I, U, F> => U,
    where [F: Fn(U, I::Item) -> U + Sync + Send, U: Send + Clone,],
    |(init, f)| FoldOp { start: Value(init), f: &f });

/// Where an accumulator starts: a call of `identity` (`fold`) or a clone of a value
/// (`fold_with`).
pub(crate) trait Start: Clone + Send {
    /// The accumulator.
    type Acc;
    fn start(self) -> Self::Acc;
}

/// `fold`'s start: a reference to `identity`.
pub(crate) struct Call<'f, ID>(&'f ID);

impl<'f, ID> Call<'f, ID> {
    pub(crate) fn new(identity: &'f ID) -> Self {
        Call(identity)
    }
}

impl<ID> Clone for Call<'_, ID> {
    fn clone(&self) -> Self {
        Call(self.0)
    }
}

impl<T, ID: Fn() -> T + Sync> Start for Call<'_, ID> {
    type Acc = T;
    fn start(self) -> T {
        (self.0)()
    }
}

/// `fold_with`'s start: the value, cloned for each piece.
#[derive(Clone)]
pub(crate) struct Value<U>(U);

impl<U> Value<U> {
    pub(crate) fn new(value: U) -> Self {
        Value(value)
    }
}

impl<U: Clone + Send> Start for Value<U> {
    type Acc = U;
    fn start(self) -> U {
        self.0
    }
}

/// The op of [`Fold`] and [`FoldWith`].
pub(crate) struct FoldOp<'f, S, F> {
    start: S,
    f: &'f F,
}

impl<S: Clone, F> Clone for FoldOp<'_, S, F> {
    fn clone(&self) -> Self {
        FoldOp {
            start: self.start.clone(),
            f: self.f,
        }
    }
}

impl<'f, T, S: Start, F: Fn(S::Acc, T) -> S::Acc + Sync> ItemOp<T> for FoldOp<'f, S, F> {
    type Out = S::Acc;
    type Folder<C: Folder<S::Acc>> = FoldFolder<'f, C, S::Acc, F>;
    fn folder<C: Folder<S::Acc>>(self, base: C) -> Self::Folder<C> {
        FoldFolder {
            base,
            acc: self.start.start(),
            f: self.f,
        }
    }
}

/// The folder of [`Fold`] and [`FoldWith`]: the piece's accumulator.
pub(crate) struct FoldFolder<'f, C, U, F> {
    base: C,
    acc: U,
    f: &'f F,
}

impl<T, U, C: Folder<U>, F: Fn(U, T) -> U> Folder<T> for FoldFolder<'_, C, U, F> {
    type Result = C::Result;
    fn consume(self, item: T) -> Self {
        FoldFolder {
            acc: (self.f)(self.acc, item),
            ..self
        }
    }
    fn consume_iter<It: IntoIterator<Item = T>>(self, iter: It) -> Self {
        let base = &self.base;
        let acc = iter
            .into_iter()
            .take_while(|_| !base.full())
            .fold(self.acc, inlined2(self.f));
        FoldFolder { acc, ..self }
    }
    fn complete(self) -> C::Result {
        self.base.consume(self.acc).complete()
    }
    fn full(&self) -> bool {
        self.base.full()
    }
}

/// Folds each piece with a fallible closure; see [`ParallelIterator::try_fold`].
///
/// [`ParallelIterator::try_fold`]: super::ParallelIterator::try_fold
///
/// # Examples
/// ```
/// use throttle::prelude::*;
/// let r: Option<u8> = (0..10u8).into_par_iter().try_fold(|| 0u8, |a, x| a.checked_add(x))
///     .try_reduce(|| 0, |a, b| a.checked_add(b));
/// assert_eq!(r, Some(45));
/// ```
#[must_use = "iterator adaptors are lazy and do nothing unless consumed"]
pub struct TryFold<I, R, ID, F> {
    base: I,
    rest: (ID, F, Marker<R>),
}

/// Names `R` in [`TryFold`] (its items) without holding one.
type Marker<R> = PhantomData<fn() -> R>;

impl<I: Clone, R, ID: Clone, F: Clone> Clone for TryFold<I, R, ID, F> {
    fn clone(&self) -> Self {
        TryFold {
            base: self.base.clone(),
            rest: (self.rest.0.clone(), self.rest.1.clone(), PhantomData),
        }
    }
}

impl<I: std::fmt::Debug, R, ID, F> std::fmt::Debug for TryFold<I, R, ID, F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TryFold").field("base", &self.base).finish()
    }
}

impl<I, R, ID, F> TryFold<I, R, ID, F> {
    pub(super) fn new(base: I, identity: ID, fold_op: F) -> Self {
        TryFold {
            base,
            rest: (identity, fold_op, PhantomData),
        }
    }
}

op_unindexed!(impl[I, R, ID, F, T] TryFold<I, R, ID, F> => R,
    where [F: Fn(T, I::Item) -> R + Sync + Send, ID: Fn() -> T + Sync + Send, R: Try<Output = T> + Send,],
    |(identity, f, _)| TryFoldOp { start: Call(&identity), f: &f });

/// Folds each piece with a fallible closure, from a clone of a value; see
/// [`ParallelIterator::try_fold_with`].
///
/// [`ParallelIterator::try_fold_with`]: super::ParallelIterator::try_fold_with
///
/// # Examples
/// ```
/// use throttle::prelude::*;
/// let r: Option<u8> = (0..10u8).into_par_iter().try_fold_with(0u8, |a, x| a.checked_add(x))
///     .try_reduce(|| 0, |a, b| a.checked_add(b));
/// assert_eq!(r, Some(45));
/// ```
#[must_use = "iterator adaptors are lazy and do nothing unless consumed"]
pub struct TryFoldWith<I, R: Try, F> {
    base: I,
    rest: (R::Output, F),
}

impl<I: Clone, R: Try<Output: Clone>, F: Clone> Clone for TryFoldWith<I, R, F> {
    fn clone(&self) -> Self {
        TryFoldWith {
            base: self.base.clone(),
            rest: self.rest.clone(),
        }
    }
}

impl<I: std::fmt::Debug, R: Try<Output: std::fmt::Debug>, F> std::fmt::Debug
    for TryFoldWith<I, R, F>
{
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TryFoldWith")
            .field("base", &self.base)
            .field("item", &self.rest.0)
            .finish()
    }
}

impl<I, R: Try, F> TryFoldWith<I, R, F> {
    pub(super) fn new(base: I, init: R::Output, fold_op: F) -> Self {
        TryFoldWith {
            base,
            rest: (init, fold_op),
        }
    }
}

op_unindexed!(impl[I, R, F] TryFoldWith<I, R, F> => R,
    where [F: Fn(R::Output, I::Item) -> R + Sync + Send, R: Try<Output: Clone + Send> + Send,],
    |(init, f)| TryFoldOp { start: Value(init), f: &f });

/// The op of [`TryFold`] and [`TryFoldWith`].
pub(crate) struct TryFoldOp<'f, S, F> {
    start: S,
    f: &'f F,
}

impl<S: Clone, F> Clone for TryFoldOp<'_, S, F> {
    fn clone(&self) -> Self {
        TryFoldOp {
            start: self.start.clone(),
            f: self.f,
        }
    }
}

impl<'f, T, R, S, F> ItemOp<T> for TryFoldOp<'f, S, F>
where
    S: Start,
    R: Try<Output = S::Acc>,
    F: Fn(S::Acc, T) -> R + Sync,
{
    type Out = R;
    type Folder<C: Folder<R>> = TryFoldFolder<'f, C, R, F>;
    fn folder<C: Folder<R>>(self, base: C) -> Self::Folder<C> {
        TryFoldFolder {
            base,
            acc: Continue(self.start.start()),
            f: self.f,
        }
    }
}

/// The folder of [`TryFold`] and [`TryFoldWith`]: the piece's accumulator, or its failure
/// (after which the piece is full).
pub(crate) struct TryFoldFolder<'f, C, R: Try, F> {
    base: C,
    acc: ControlFlow<R::Residual, R::Output>,
    f: &'f F,
}

impl<T, R: Try, C: Folder<R>, F: Fn(R::Output, T) -> R> Folder<T> for TryFoldFolder<'_, C, R, F> {
    type Result = C::Result;
    fn consume(self, item: T) -> Self {
        let acc = match self.acc {
            Continue(a) => (self.f)(a, item).branch(),
            stop @ Break(_) => stop,
        };
        TryFoldFolder { acc, ..self }
    }
    fn complete(self) -> C::Result {
        let r = match self.acc {
            Continue(a) => R::from_output(a),
            Break(e) => R::from_residual(e),
        };
        self.base.consume(r).complete()
    }
    fn full(&self) -> bool {
        self.acc.is_break() || self.base.full()
    }
}
