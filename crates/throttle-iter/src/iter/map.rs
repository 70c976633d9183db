//! Adapters that change each item on its own and keep indices: `map`, `inspect`, `update`,
//! `cloned`, `copied`, `map_with` and `map_init`. Each is an op ([`ItemOp`] and [`IterOp`])
//! for the shared plumbing of `adapt.rs`.

use super::adapt::{ItemOp, IterOp};
use super::plumbing::Folder;
use super::ParallelIterator;
use throttle_core::seam::inlined;

/// Maps each item with a closure; see [`ParallelIterator::map`].
///
/// # Examples
/// ```
/// use throttle::prelude::*;
/// let it: throttle::iter::Map<_, _> = (0..3u8).into_par_iter().map(|x| x + 1);
/// assert_eq!(it.collect::<Vec<_>>(), [1, 2, 3]);
/// ```
#[derive(Clone)]
#[must_use = "iterator adaptors are lazy and do nothing unless consumed"]
pub struct Map<I, F> {
    base: I,
    rest: F,
}

debug_base!(Map[F]);

impl<I, F> Map<I, F> {
    pub(super) fn new(base: I, map_op: F) -> Self {
        Map { base, rest: map_op }
    }
}

op_indexed!(impl[I, F, R] Map<I, F> => R,
    where [F: Fn(I::Item) -> R + Sync + Send, R: Send,],
    |f| MapOp(&f));

/// [`Map`]'s op: a reference to its closure.
pub(crate) struct MapOp<'f, F>(pub(crate) &'f F);

impl<F> Clone for MapOp<'_, F> {
    fn clone(&self) -> Self {
        MapOp(self.0)
    }
}

impl<'f, T, R, F: Fn(T) -> R + Sync> ItemOp<T> for MapOp<'f, F> {
    type Out = R;
    type Folder<C: Folder<R>> = MapFolder<'f, C, F>;
    fn folder<C: Folder<R>>(self, base: C) -> MapFolder<'f, C, F> {
        MapFolder { base, f: self.0 }
    }
}

impl<'f, T, R, F: Fn(T) -> R + Sync> IterOp<T> for MapOp<'f, F> {
    type Iter<J>
        = std::iter::Map<J, &'f F>
    where
        J: Iterator<Item = T> + DoubleEndedIterator + ExactSizeIterator;
    fn iter<J>(self, base: J) -> Self::Iter<J>
    where
        J: Iterator<Item = T> + DoubleEndedIterator + ExactSizeIterator,
    {
        base.map(self.0)
    }
    fn unwrap<C: Folder<R>>(folder: MapFolder<'f, C, F>) -> C {
        folder.base
    }
}

/// The folder of [`Map`]: maps, then hands on.
pub(crate) struct MapFolder<'f, C, F> {
    base: C,
    f: &'f F,
}

impl<T, R, C: Folder<R>, F: Fn(T) -> R> Folder<T> for MapFolder<'_, C, F> {
    type Result = C::Result;
    fn consume(self, item: T) -> Self {
        MapFolder {
            base: self.base.consume((self.f)(item)),
            f: self.f,
        }
    }
    fn consume_iter<It: IntoIterator<Item = T>>(self, iter: It) -> Self {
        MapFolder {
            base: self
                .base
                .consume_iter(iter.into_iter().map(inlined(self.f))),
            f: self.f,
        }
    }
    fn complete(self) -> C::Result {
        self.base.complete()
    }
    fn full(&self) -> bool {
        self.base.full()
    }
}

/// Calls a closure on a reference to each item as it passes; see
/// [`ParallelIterator::inspect`].
///
/// # Examples
/// ```
/// use throttle::prelude::*;
/// let n = (0..3u8).into_par_iter().inspect(|x| assert!(*x < 3)).count();
/// assert_eq!(n, 3);
/// ```
#[derive(Clone)]
#[must_use = "iterator adaptors are lazy and do nothing unless consumed"]
pub struct Inspect<I, F> {
    base: I,
    rest: F,
}

debug_base!(Inspect[F]);

impl<I, F> Inspect<I, F> {
    pub(super) fn new(base: I, inspect_op: F) -> Self {
        Inspect {
            base,
            rest: inspect_op,
        }
    }
}

op_indexed!(impl[I, F] Inspect<I, F> => I::Item,
    where [F: Fn(&I::Item) + Sync + Send,],
    |f| InspectOp(&f));

/// [`Inspect`]'s op.
pub(crate) struct InspectOp<'f, F>(&'f F);

impl<F> Clone for InspectOp<'_, F> {
    fn clone(&self) -> Self {
        InspectOp(self.0)
    }
}

impl<'f, T, F: Fn(&T) + Sync> ItemOp<T> for InspectOp<'f, F> {
    type Out = T;
    type Folder<C: Folder<T>> = InspectFolder<'f, C, F>;
    fn folder<C: Folder<T>>(self, base: C) -> InspectFolder<'f, C, F> {
        InspectFolder { base, f: self.0 }
    }
}

impl<'f, T, F: Fn(&T) + Sync> IterOp<T> for InspectOp<'f, F> {
    type Iter<J>
        = std::iter::Inspect<J, &'f F>
    where
        J: Iterator<Item = T> + DoubleEndedIterator + ExactSizeIterator;
    fn iter<J>(self, base: J) -> Self::Iter<J>
    where
        J: Iterator<Item = T> + DoubleEndedIterator + ExactSizeIterator,
    {
        base.inspect(self.0)
    }
    fn unwrap<C: Folder<T>>(folder: InspectFolder<'f, C, F>) -> C {
        folder.base
    }
}

/// The folder of [`Inspect`].
pub(crate) struct InspectFolder<'f, C, F> {
    base: C,
    f: &'f F,
}

impl<T, C: Folder<T>, F: Fn(&T)> Folder<T> for InspectFolder<'_, C, F> {
    type Result = C::Result;
    fn consume(self, item: T) -> Self {
        (self.f)(&item);
        InspectFolder {
            base: self.base.consume(item),
            f: self.f,
        }
    }
    // A closure, not `self.f`: see `throttle_core::seam::inlined` (why `&F` as `FnMut` is slow).
    #[allow(clippy::redundant_closure)]
    fn consume_iter<It: IntoIterator<Item = T>>(self, iter: It) -> Self {
        let f = self.f;
        InspectFolder {
            base: self.base.consume_iter(iter.into_iter().inspect(|x| f(x))),
            f: self.f,
        }
    }
    fn complete(self) -> C::Result {
        self.base.complete()
    }
    fn full(&self) -> bool {
        self.base.full()
    }
}

/// Changes each item in place with a closure as it passes; see [`ParallelIterator::update`].
///
/// # Examples
/// ```
/// use throttle::prelude::*;
/// let v: Vec<u8> = (0..3u8).into_par_iter().update(|x| *x *= 2).collect();
/// assert_eq!(v, [0, 2, 4]);
/// ```
#[derive(Clone)]
#[must_use = "iterator adaptors are lazy and do nothing unless consumed"]
pub struct Update<I, F> {
    base: I,
    rest: F,
}

debug_base!(Update[F]);

impl<I, F> Update<I, F> {
    pub(super) fn new(base: I, update_op: F) -> Self {
        Update {
            base,
            rest: update_op,
        }
    }
}

op_indexed!(impl[I, F] Update<I, F> => I::Item,
    where [F: Fn(&mut I::Item) + Sync + Send,],
    |f| UpdateOp(&f));

/// [`Update`]'s op.
pub(crate) struct UpdateOp<'f, F>(&'f F);

impl<F> Clone for UpdateOp<'_, F> {
    fn clone(&self) -> Self {
        UpdateOp(self.0)
    }
}

impl<'f, T, F: Fn(&mut T) + Sync> ItemOp<T> for UpdateOp<'f, F> {
    type Out = T;
    type Folder<C: Folder<T>> = UpdateFolder<'f, C, F>;
    fn folder<C: Folder<T>>(self, base: C) -> UpdateFolder<'f, C, F> {
        UpdateFolder { base, f: self.0 }
    }
}

impl<'f, T, F: Fn(&mut T) + Sync> IterOp<T> for UpdateOp<'f, F> {
    type Iter<J>
        = UpdateIter<'f, J, F>
    where
        J: Iterator<Item = T> + DoubleEndedIterator + ExactSizeIterator;
    fn iter<J>(self, base: J) -> Self::Iter<J>
    where
        J: Iterator<Item = T> + DoubleEndedIterator + ExactSizeIterator,
    {
        UpdateIter { base, f: self.0 }
    }
    fn unwrap<C: Folder<T>>(folder: UpdateFolder<'f, C, F>) -> C {
        folder.base
    }
}

/// The folder of [`Update`].
pub(crate) struct UpdateFolder<'f, C, F> {
    base: C,
    f: &'f F,
}

impl<T, C: Folder<T>, F: Fn(&mut T)> Folder<T> for UpdateFolder<'_, C, F> {
    type Result = C::Result;
    fn consume(self, mut item: T) -> Self {
        (self.f)(&mut item);
        UpdateFolder {
            base: self.base.consume(item),
            f: self.f,
        }
    }
    fn consume_iter<It: IntoIterator<Item = T>>(self, iter: It) -> Self {
        let f = self.f;
        UpdateFolder {
            base: self.base.consume_iter(iter.into_iter().map(|mut x| {
                f(&mut x);
                x
            })),
            f,
        }
    }
    fn complete(self) -> C::Result {
        self.base.complete()
    }
    fn full(&self) -> bool {
        self.base.full()
    }
}

/// The sequential iterator of an [`Update`] piece.
pub(crate) struct UpdateIter<'f, J, F> {
    base: J,
    f: &'f F,
}

impl<J: Iterator, F: Fn(&mut J::Item)> Iterator for UpdateIter<'_, J, F> {
    type Item = J::Item;
    fn next(&mut self) -> Option<J::Item> {
        let mut x = self.base.next()?;
        (self.f)(&mut x);
        Some(x)
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.base.size_hint()
    }
    fn fold<B, G: FnMut(B, J::Item) -> B>(self, init: B, mut g: G) -> B {
        let f = self.f;
        self.base.fold(init, move |acc, mut x| {
            f(&mut x);
            g(acc, x)
        })
    }
}

impl<J: DoubleEndedIterator, F: Fn(&mut J::Item)> DoubleEndedIterator for UpdateIter<'_, J, F> {
    fn next_back(&mut self) -> Option<J::Item> {
        let mut x = self.base.next_back()?;
        (self.f)(&mut x);
        Some(x)
    }
}

impl<J: ExactSizeIterator, F: Fn(&mut J::Item)> ExactSizeIterator for UpdateIter<'_, J, F> {}

/// Clones the items of an iterator over references; see [`ParallelIterator::cloned`].
///
/// # Examples
/// ```
/// use throttle::prelude::*;
/// let v = vec![String::from("a")];
/// let w: Vec<String> = v.par_iter().cloned().collect();
/// assert_eq!(v, w);
/// ```
#[derive(Debug, Clone)]
#[must_use = "iterator adaptors are lazy and do nothing unless consumed"]
pub struct Cloned<I> {
    base: I,
    rest: (),
}

impl<I> Cloned<I> {
    pub(super) fn new(base: I) -> Self {
        Cloned { base, rest: () }
    }
}

op_indexed!(impl['a, I, T] Cloned<I> => T,
    where [I: ParallelIterator<Item = &'a T>, T: 'a + Clone + Send,],
    |()| CloneOp::<false>);

/// Copies the items of an iterator over references; see [`ParallelIterator::copied`].
///
/// # Examples
/// ```
/// use throttle::prelude::*;
/// let v: Vec<u8> = [1u8, 2].par_iter().copied().collect();
/// assert_eq!(v, [1, 2]);
/// ```
#[derive(Debug, Clone)]
#[must_use = "iterator adaptors are lazy and do nothing unless consumed"]
pub struct Copied<I> {
    base: I,
    rest: (),
}

impl<I> Copied<I> {
    pub(super) fn new(base: I) -> Self {
        Copied { base, rest: () }
    }
}

op_indexed!(impl['a, I, T] Copied<I> => T,
    where [I: ParallelIterator<Item = &'a T>, T: 'a + Copy + Send,],
    |()| CloneOp::<true>);

/// The op of [`Cloned`] (`COPY == false`) and [`Copied`] (`COPY == true`).
#[derive(Clone, Copy)]
pub(crate) struct CloneOp<const COPY: bool>;

impl<'a, T: 'a + Clone> ItemOp<&'a T> for CloneOp<false> {
    type Out = T;
    type Folder<C: Folder<T>> = ClonedFolder<C>;
    fn folder<C: Folder<T>>(self, base: C) -> ClonedFolder<C> {
        ClonedFolder(base)
    }
}

impl<'a, T: 'a + Clone> IterOp<&'a T> for CloneOp<false> {
    type Iter<J>
        = std::iter::Cloned<J>
    where
        J: Iterator<Item = &'a T> + DoubleEndedIterator + ExactSizeIterator;
    fn iter<J>(self, base: J) -> Self::Iter<J>
    where
        J: Iterator<Item = &'a T> + DoubleEndedIterator + ExactSizeIterator,
    {
        base.cloned()
    }
    fn unwrap<C: Folder<T>>(folder: ClonedFolder<C>) -> C {
        folder.0
    }
}

impl<'a, T: 'a + Copy> ItemOp<&'a T> for CloneOp<true> {
    type Out = T;
    type Folder<C: Folder<T>> = ClonedFolder<C>;
    fn folder<C: Folder<T>>(self, base: C) -> ClonedFolder<C> {
        ClonedFolder(base)
    }
}

impl<'a, T: 'a + Copy> IterOp<&'a T> for CloneOp<true> {
    type Iter<J>
        = std::iter::Copied<J>
    where
        J: Iterator<Item = &'a T> + DoubleEndedIterator + ExactSizeIterator;
    fn iter<J>(self, base: J) -> Self::Iter<J>
    where
        J: Iterator<Item = &'a T> + DoubleEndedIterator + ExactSizeIterator,
    {
        base.copied()
    }
    fn unwrap<C: Folder<T>>(folder: ClonedFolder<C>) -> C {
        folder.0
    }
}

/// The folder of [`Cloned`] and [`Copied`] (a `Copy` type's `clone` is a copy).
pub(crate) struct ClonedFolder<C>(C);

impl<'a, T: 'a + Clone, C: Folder<T>> Folder<&'a T> for ClonedFolder<C> {
    type Result = C::Result;
    fn consume(self, item: &'a T) -> Self {
        ClonedFolder(self.0.consume(item.clone()))
    }
    fn consume_iter<It: IntoIterator<Item = &'a T>>(self, iter: It) -> Self {
        ClonedFolder(self.0.consume_iter(iter.into_iter().cloned()))
    }
    fn complete(self) -> C::Result {
        self.0.complete()
    }
    fn full(&self) -> bool {
        self.0.full()
    }
}

/// Maps each item with a closure and a clone of a value per piece; see
/// [`ParallelIterator::map_with`].
///
/// # Examples
/// ```
/// use throttle::prelude::*;
/// let v: Vec<u32> = (0..4u32).into_par_iter().map_with(10u32, |ten, x| x + *ten).collect();
/// assert_eq!(v, [10, 11, 12, 13]);
/// ```
#[derive(Clone)]
#[must_use = "iterator adaptors are lazy and do nothing unless consumed"]
pub struct MapWith<I, T, F> {
    base: I,
    rest: (T, F),
}

impl<I: std::fmt::Debug, T: std::fmt::Debug, F> std::fmt::Debug for MapWith<I, T, F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MapWith")
            .field("base", &self.base)
            .field("item", &self.rest.0)
            .finish()
    }
}

impl<I, T, F> MapWith<I, T, F> {
    pub(super) fn new(base: I, item: T, map_op: F) -> Self {
        MapWith {
            base,
            rest: (item, map_op),
        }
    }
}

op_indexed!(impl[I, T, F, R] MapWith<I, T, F> => R,
    where [T: Send + Clone, F: Fn(&mut T, I::Item) -> R + Sync + Send, R: Send,],
    |(item, f)| WithOp { state: Owned(item), f: &f });

/// Maps each item with a closure and a state made by `init` per piece; see
/// [`ParallelIterator::map_init`].
///
/// # Examples
/// ```
/// use throttle::prelude::*;
/// let v: Vec<usize> = ["a", "bb"].par_iter()
///     .map_init(String::new, |buf, s| { buf.clear(); buf.push_str(s); buf.len() })
///     .collect();
/// assert_eq!(v, [1, 2]);
/// ```
#[derive(Clone)]
#[must_use = "iterator adaptors are lazy and do nothing unless consumed"]
pub struct MapInit<I, INIT, F> {
    base: I,
    rest: (INIT, F),
}

impl<I: std::fmt::Debug, INIT, F> std::fmt::Debug for MapInit<I, INIT, F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MapInit").field("base", &self.base).finish()
    }
}

impl<I, INIT, F> MapInit<I, INIT, F> {
    pub(super) fn new(base: I, init: INIT, map_op: F) -> Self {
        MapInit {
            base,
            rest: (init, map_op),
        }
    }
}

op_indexed!(impl[I, INIT, T, F, R] MapInit<I, INIT, F> => R,
    where [INIT: Fn() -> T + Sync + Send, F: Fn(&mut T, I::Item) -> R + Sync + Send, R: Send,],
    |(init, f)| WithOp { state: CallOf(&init), f: &f });

/// `map_with`'s state: the user's value, cloned for each piece.
#[derive(Clone)]
pub(crate) struct Owned<T>(T);

/// `map_init`'s state: a reference to the user's `init`, called for each piece.
pub(crate) struct CallOf<'f, INIT>(&'f INIT);

impl<INIT> Clone for CallOf<'_, INIT> {
    fn clone(&self) -> Self {
        CallOf(self.0)
    }
}

/// Makes a piece's state.
pub(crate) trait MakeState: Clone + Send {
    /// The state.
    type State;
    fn make(self) -> Self::State;
}

impl<T: Clone + Send> MakeState for Owned<T> {
    type State = T;
    fn make(self) -> T {
        self.0
    }
}

impl<T, INIT: Fn() -> T + Sync> MakeState for CallOf<'_, INIT> {
    type State = T;
    fn make(self) -> T {
        (self.0)()
    }
}

/// The op of [`MapWith`] and [`MapInit`]: makes a piece's state, then maps with it.
pub(crate) struct WithOp<'f, S, F> {
    state: S,
    f: &'f F,
}

impl<S: Clone, F> Clone for WithOp<'_, S, F> {
    fn clone(&self) -> Self {
        WithOp {
            state: self.state.clone(),
            f: self.f,
        }
    }
}

impl<'f, X, S, F, R> ItemOp<X> for WithOp<'f, S, F>
where
    S: MakeState,
    F: Fn(&mut S::State, X) -> R + Sync,
{
    type Out = R;
    type Folder<C: Folder<R>> = WithFolder<'f, C, S::State, F>;
    fn folder<C: Folder<R>>(self, base: C) -> WithFolder<'f, C, S::State, F> {
        WithFolder {
            base,
            state: self.state.make(),
            f: self.f,
        }
    }
}

impl<'f, X, S, F, R> IterOp<X> for WithOp<'f, S, F>
where
    S: MakeState,
    F: Fn(&mut S::State, X) -> R + Sync,
{
    type Iter<J>
        = WithIter<'f, J, S::State, F>
    where
        J: Iterator<Item = X> + DoubleEndedIterator + ExactSizeIterator;
    fn iter<J>(self, base: J) -> Self::Iter<J>
    where
        J: Iterator<Item = X> + DoubleEndedIterator + ExactSizeIterator,
    {
        WithIter {
            base,
            state: self.state.make(),
            f: self.f,
        }
    }
    fn unwrap<C: Folder<R>>(folder: WithFolder<'f, C, S::State, F>) -> C {
        folder.base
    }
}

/// The folder of [`MapWith`] and [`MapInit`]: it owns the piece's state.
pub(crate) struct WithFolder<'f, C, T, F> {
    base: C,
    state: T,
    f: &'f F,
}

impl<X, R, C: Folder<R>, T, F: Fn(&mut T, X) -> R> Folder<X> for WithFolder<'_, C, T, F> {
    type Result = C::Result;
    fn consume(mut self, item: X) -> Self {
        let r = (self.f)(&mut self.state, item);
        self.base = self.base.consume(r);
        self
    }
    fn consume_iter<It: IntoIterator<Item = X>>(mut self, iter: It) -> Self {
        let (f, state) = (self.f, &mut self.state);
        self.base = self
            .base
            .consume_iter(iter.into_iter().map(|x| f(state, x)));
        self
    }
    fn complete(self) -> C::Result {
        self.base.complete()
    }
    fn full(&self) -> bool {
        self.base.full()
    }
}

/// The sequential iterator of a [`MapWith`] or [`MapInit`] piece.
pub(crate) struct WithIter<'f, J, T, F> {
    base: J,
    state: T,
    f: &'f F,
}

impl<J: Iterator, T, R, F: Fn(&mut T, J::Item) -> R> Iterator for WithIter<'_, J, T, F> {
    type Item = R;
    fn next(&mut self) -> Option<R> {
        let x = self.base.next()?;
        Some((self.f)(&mut self.state, x))
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.base.size_hint()
    }
}

impl<J, T, R, F> DoubleEndedIterator for WithIter<'_, J, T, F>
where
    J: DoubleEndedIterator,
    F: Fn(&mut T, J::Item) -> R,
{
    fn next_back(&mut self) -> Option<R> {
        let x = self.base.next_back()?;
        Some((self.f)(&mut self.state, x))
    }
}

impl<J, T, R, F> ExactSizeIterator for WithIter<'_, J, T, F>
where
    J: ExactSizeIterator,
    F: Fn(&mut T, J::Item) -> R,
{
}
