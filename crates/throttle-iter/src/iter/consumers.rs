//! The consumers behind `for_each`, `sum`, `product` and `reduce`, and the one that drops
//! everything (`skip`'s skipped part). Each consumer is split freely (it holds references
//! only), its folders take a piece's iterator in one internal iteration (`fold`, `sum`), so the
//! whole chain of adapters above runs as one loop the compiler can vectorise, and its reducer
//! combines neighbours left first, so every consumer sees items in order.

use super::plumbing::{Consumer, Folder, Reducer, UnindexedConsumer};
use super::runtime;
use super::ParallelIterator;
use std::iter::{Product, Sum};
use std::marker::PhantomData;
use throttle_core::seam::inlined2;

/// A reducer for results that carry nothing (`()`).
pub(crate) struct NoopReducer;

impl Reducer<()> for NoopReducer {
    fn reduce(self, _left: (), _right: ()) {}
}

/// Calls `op` on every item.
#[track_caller]
pub(crate) fn for_each<I, F>(iter: I, op: &F)
where
    I: ParallelIterator,
    F: Fn(I::Item) + Sync,
{
    runtime::drive_here(|| iter.drive_unindexed(ForEach(op)))
}

/// The consumer of [`for_each`]: it is its own folder.
struct ForEach<'f, F>(&'f F);

impl<F> Clone for ForEach<'_, F> {
    fn clone(&self) -> Self {
        ForEach(self.0)
    }
}

impl<T, F: Fn(T) + Sync> Consumer<T> for ForEach<'_, F> {
    type Folder = Self;
    type Reducer = NoopReducer;
    type Result = ();
    fn split_at(self, _index: usize) -> (Self, Self, NoopReducer) {
        (self.clone(), self, NoopReducer)
    }
    fn into_folder(self) -> Self {
        self
    }
    fn full(&self) -> bool {
        false
    }
}

impl<T, F: Fn(T) + Sync> UnindexedConsumer<T> for ForEach<'_, F> {
    fn split_off_left(&self) -> Self {
        self.clone()
    }
    fn to_reducer(&self) -> NoopReducer {
        NoopReducer
    }
}

impl<T, F: Fn(T) + Sync> Folder<T> for ForEach<'_, F> {
    type Result = ();
    fn consume(self, item: T) -> Self {
        (self.0)(item);
        self
    }
    fn consume_iter<I: IntoIterator<Item = T>>(self, iter: I) -> Self {
        // `for_each(self.0)` would call `F` through the `FnMut for &F` shim, an instance that
        // rustc places in a codegen unit of its own where LLVM cannot inline it into this
        // loop: the body then runs as a call per item and never vectorizes (`iter_mut` ran
        // 4.6 times slower than serial code). A loop that calls `F` itself inlines it.
        for item in iter {
            (self.0)(item);
        }
        self
    }
    fn complete(self) {}
    fn full(&self) -> bool {
        false
    }
}

/// Drops every item: runs the adapters above it for their side effects only.
pub(crate) struct Noop;

impl<T> Consumer<T> for Noop {
    type Folder = Noop;
    type Reducer = NoopReducer;
    type Result = ();
    fn split_at(self, _index: usize) -> (Self, Self, NoopReducer) {
        (Noop, Noop, NoopReducer)
    }
    fn into_folder(self) -> Self {
        self
    }
    fn full(&self) -> bool {
        false
    }
}

impl<T> UnindexedConsumer<T> for Noop {
    fn split_off_left(&self) -> Self {
        Noop
    }
    fn to_reducer(&self) -> NoopReducer {
        NoopReducer
    }
}

impl<T> Folder<T> for Noop {
    type Result = ();
    fn consume(self, _item: T) -> Self {
        self
    }
    fn consume_iter<I: IntoIterator<Item = T>>(self, iter: I) -> Self {
        iter.into_iter().for_each(drop);
        self
    }
    fn complete(self) {}
    fn full(&self) -> bool {
        false
    }
}

/// Adds up two partial sums (or multiplies two partial products) with the type's own `Sum`.
fn add<S: Sum<S>>(a: S, b: S) -> S {
    [a, b].into_iter().sum()
}

fn mul<S: Product<S>>(a: S, b: S) -> S {
    [a, b].into_iter().product()
}

/// The sum of the items.
#[track_caller]
pub(crate) fn sum<I, S>(iter: I) -> S
where
    I: ParallelIterator,
    S: Send + Sum<I::Item> + Sum<S>,
{
    runtime::drive_here(|| iter.drive_unindexed(Arith::<S, true>(PhantomData)))
}

/// The product of the items.
#[track_caller]
pub(crate) fn product<I, P>(iter: I) -> P
where
    I: ParallelIterator,
    P: Send + Product<I::Item> + Product<P>,
{
    runtime::drive_here(|| iter.drive_unindexed(Arith::<P, false>(PhantomData)))
}

/// The consumer and reducer of [`sum`] (`SUM`) and [`product`] (`!SUM`).
struct Arith<S, const SUM: bool>(PhantomData<fn() -> S>);

/// The folder of [`Arith`]: the partial sum or product so far.
struct ArithFolder<S, const SUM: bool>(S);

impl<S, const SUM: bool> Arith<S, SUM> {
    fn new() -> Self {
        Arith(PhantomData)
    }
}

/// Implements the consumer and folder for `Sum` (`true`) or `Product` (`false`).
macro_rules! arith {
    ($sum:literal, $Trait:ident, $method:ident, $combine:ident) => {
        impl<S: $Trait<S>> Reducer<S> for Arith<S, $sum> {
            fn reduce(self, left: S, right: S) -> S {
                $combine(left, right)
            }
        }

        impl<T, S: Send + $Trait<T> + $Trait<S>> Consumer<T> for Arith<S, $sum> {
            type Folder = ArithFolder<S, $sum>;
            type Reducer = Self;
            type Result = S;
            fn split_at(self, _index: usize) -> (Self, Self, Self) {
                (Self::new(), Self::new(), Self::new())
            }
            fn into_folder(self) -> Self::Folder {
                ArithFolder(std::iter::empty::<T>().$method())
            }
            fn full(&self) -> bool {
                false
            }
        }

        impl<T, S: Send + $Trait<T> + $Trait<S>> UnindexedConsumer<T> for Arith<S, $sum> {
            fn split_off_left(&self) -> Self {
                Self::new()
            }
            fn to_reducer(&self) -> Self {
                Self::new()
            }
        }

        impl<T, S: $Trait<T> + $Trait<S>> Folder<T> for ArithFolder<S, $sum> {
            type Result = S;
            fn consume(self, item: T) -> Self {
                ArithFolder($combine(self.0, std::iter::once(item).$method()))
            }
            fn consume_iter<I: IntoIterator<Item = T>>(self, iter: I) -> Self {
                ArithFolder($combine(self.0, iter.into_iter().$method()))
            }
            fn complete(self) -> S {
                self.0
            }
            fn full(&self) -> bool {
                false
            }
        }
    };
}

arith!(true, Sum, sum, add);
arith!(false, Product, product, mul);

/// Combines all items with `op`, each piece starting from `identity()`.
#[track_caller]
pub(crate) fn reduce<I, ID, OP>(iter: I, identity: &ID, op: &OP) -> I::Item
where
    I: ParallelIterator,
    ID: Fn() -> I::Item + Sync,
    OP: Fn(I::Item, I::Item) -> I::Item + Sync,
{
    runtime::drive_here(|| iter.drive_unindexed(Reduce { identity, op }))
}

/// The consumer of [`reduce`]: also its own reducer.
struct Reduce<'f, ID, OP> {
    identity: &'f ID,
    op: &'f OP,
}

impl<ID, OP> Clone for Reduce<'_, ID, OP> {
    fn clone(&self) -> Self {
        Reduce {
            identity: self.identity,
            op: self.op,
        }
    }
}

impl<T, ID, OP> Consumer<T> for Reduce<'_, ID, OP>
where
    T: Send,
    ID: Fn() -> T + Sync,
    OP: Fn(T, T) -> T + Sync,
{
    type Folder = ReduceFolder<T, Self>;
    type Reducer = Self;
    type Result = T;
    fn split_at(self, _index: usize) -> (Self, Self, Self) {
        (self.clone(), self.clone(), self)
    }
    fn into_folder(self) -> Self::Folder {
        ReduceFolder {
            acc: (self.identity)(),
            reduce: self,
        }
    }
    fn full(&self) -> bool {
        false
    }
}

impl<T, ID, OP> UnindexedConsumer<T> for Reduce<'_, ID, OP>
where
    T: Send,
    ID: Fn() -> T + Sync,
    OP: Fn(T, T) -> T + Sync,
{
    fn split_off_left(&self) -> Self {
        self.clone()
    }
    fn to_reducer(&self) -> Self {
        self.clone()
    }
}

impl<T, ID, OP: Fn(T, T) -> T> Reducer<T> for Reduce<'_, ID, OP> {
    fn reduce(self, left: T, right: T) -> T {
        (self.op)(left, right)
    }
}

/// The folder of [`reduce`]: the piece's value so far.
pub(crate) struct ReduceFolder<T, R> {
    acc: T,
    reduce: R,
}

impl<T, ID, OP: Fn(T, T) -> T> Folder<T> for ReduceFolder<T, Reduce<'_, ID, OP>> {
    type Result = T;
    fn consume(self, item: T) -> Self {
        ReduceFolder {
            acc: (self.reduce.op)(self.acc, item),
            reduce: self.reduce,
        }
    }
    fn consume_iter<I: IntoIterator<Item = T>>(self, iter: I) -> Self {
        ReduceFolder {
            acc: iter.into_iter().fold(self.acc, inlined2(self.reduce.op)),
            reduce: self.reduce,
        }
    }
    fn complete(self) -> T {
        self.acc
    }
    fn full(&self) -> bool {
        false
    }
}
