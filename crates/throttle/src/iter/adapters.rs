//! Adapters that change items one by one: `map`, `map_init`, `inspect`, `filter`, `filter_map`,
//! `flat_map`, `flat_map_iter`, `copied`, `cloned`, `fold` and `with_min_len`.
//!
//! Each adapter is a producer wrapping its base; closures are shared by the pieces of a split
//! through an `Arc` (one allocation per adapter, one reference count per split), and each leaf
//! runs a small sequential iterator that forwards `fold` to its base so internal iteration (and
//! its vectorisation) survives the wrapping.

use super::plumbing::{IndexedProducer, Producer};
use super::IntoParallelIterator;
use std::sync::Arc;

/// Splits a producer that shares one `Arc`'d closure.
macro_rules! split_with_fn {
    ($self:ident, $index:ident, $name:ident { $($field:ident),* }) => {{
        let (l, r) = $self.base.split_at($index);
        (
            $name { base: l, $($field: $self.$field.clone()),* },
            $name { base: r, $($field: $self.$field),* },
        )
    }};
}

/// Maps each item with a closure; see [`ParallelIterator::map`](super::ParallelIterator::map).
pub struct Map<P, F> {
    pub(crate) base: P,
    pub(crate) f: Arc<F>,
}

impl<P, F, R> Producer for Map<P, F>
where
    P: Producer,
    F: Fn(P::Item) -> R + Sync + Send,
{
    type Item = R;
    type IntoSeq = MapSeq<P::IntoSeq, F>;
    fn base_len(&self) -> usize {
        self.base.base_len()
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        split_with_fn!(self, index, Map { f })
    }
    fn into_seq(self) -> Self::IntoSeq {
        MapSeq {
            iter: self.base.into_seq(),
            f: self.f,
        }
    }
    fn min_len(&self) -> usize {
        self.base.min_len()
    }
    fn max_len(&self) -> usize {
        self.base.max_len()
    }
    fn stopped(&self) -> bool {
        self.base.stopped()
    }
    fn exact_len(&self) -> Option<usize> {
        self.base.exact_len()
    }
}

impl<P: IndexedProducer, F, R> IndexedProducer for Map<P, F> where F: Fn(P::Item) -> R + Sync + Send {}

/// The sequential iterator of a [`Map`] leaf.
#[derive(Debug)]
pub struct MapSeq<I, F> {
    iter: I,
    f: Arc<F>,
}

impl<I: Iterator, F: Fn(I::Item) -> R, R> Iterator for MapSeq<I, F> {
    type Item = R;
    #[inline]
    fn next(&mut self) -> Option<R> {
        self.iter.next().map(&*self.f)
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.iter.size_hint()
    }
    #[inline]
    fn fold<B, G: FnMut(B, R) -> B>(self, init: B, mut g: G) -> B {
        let f = &*self.f;
        self.iter.fold(init, move |acc, x| g(acc, f(x)))
    }
}

impl<I: DoubleEndedIterator, F: Fn(I::Item) -> R, R> DoubleEndedIterator for MapSeq<I, F> {
    #[inline]
    fn next_back(&mut self) -> Option<R> {
        self.iter.next_back().map(&*self.f)
    }
}

/// Maps each item with a closure and per-leaf state; see
/// [`ParallelIterator::map_init`](super::ParallelIterator::map_init).
pub struct MapInit<P, INIT, F> {
    pub(crate) base: P,
    pub(crate) init: Arc<INIT>,
    pub(crate) f: Arc<F>,
}

impl<P, INIT, S, F, R> Producer for MapInit<P, INIT, F>
where
    P: Producer,
    INIT: Fn() -> S + Sync + Send,
    F: Fn(&mut S, P::Item) -> R + Sync + Send,
{
    type Item = R;
    type IntoSeq = MapInitSeq<P::IntoSeq, S, F>;
    fn base_len(&self) -> usize {
        self.base.base_len()
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        split_with_fn!(self, index, MapInit { init, f })
    }
    fn into_seq(self) -> Self::IntoSeq {
        MapInitSeq {
            iter: self.base.into_seq(),
            state: (self.init)(),
            f: self.f,
        }
    }
    fn min_len(&self) -> usize {
        self.base.min_len()
    }
    fn max_len(&self) -> usize {
        self.base.max_len()
    }
    fn stopped(&self) -> bool {
        self.base.stopped()
    }
    fn exact_len(&self) -> Option<usize> {
        self.base.exact_len()
    }
}

impl<P: IndexedProducer, INIT, S, F, R> IndexedProducer for MapInit<P, INIT, F>
where
    INIT: Fn() -> S + Sync + Send,
    F: Fn(&mut S, P::Item) -> R + Sync + Send,
{
}

/// The sequential iterator of a [`MapInit`] leaf: it owns the leaf's state.
#[derive(Debug)]
pub struct MapInitSeq<I, S, F> {
    pub(crate) iter: I,
    pub(crate) state: S,
    pub(crate) f: Arc<F>,
}

impl<I: Iterator, S, F: Fn(&mut S, I::Item) -> R, R> Iterator for MapInitSeq<I, S, F> {
    type Item = R;
    #[inline]
    fn next(&mut self) -> Option<R> {
        let x = self.iter.next()?;
        Some((self.f)(&mut self.state, x))
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.iter.size_hint()
    }
}

/// Calls a closure on each item as it passes; see
/// [`ParallelIterator::inspect`](super::ParallelIterator::inspect).
pub struct Inspect<P, F> {
    pub(crate) base: P,
    pub(crate) f: Arc<F>,
}

impl<P, F> Producer for Inspect<P, F>
where
    P: Producer,
    F: Fn(&P::Item) + Sync + Send,
{
    type Item = P::Item;
    type IntoSeq = InspectSeq<P::IntoSeq, F>;
    fn base_len(&self) -> usize {
        self.base.base_len()
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        split_with_fn!(self, index, Inspect { f })
    }
    fn into_seq(self) -> Self::IntoSeq {
        InspectSeq {
            iter: self.base.into_seq(),
            f: self.f,
        }
    }
    fn min_len(&self) -> usize {
        self.base.min_len()
    }
    fn max_len(&self) -> usize {
        self.base.max_len()
    }
    fn stopped(&self) -> bool {
        self.base.stopped()
    }
    fn exact_len(&self) -> Option<usize> {
        self.base.exact_len()
    }
}

impl<P: IndexedProducer, F: Fn(&P::Item) + Sync + Send> IndexedProducer for Inspect<P, F> {}

/// The sequential iterator of an [`Inspect`] leaf.
#[derive(Debug)]
pub struct InspectSeq<I, F> {
    iter: I,
    f: Arc<F>,
}

impl<I: DoubleEndedIterator, F: Fn(&I::Item)> DoubleEndedIterator for InspectSeq<I, F> {
    fn next_back(&mut self) -> Option<I::Item> {
        let x = self.iter.next_back()?;
        (self.f)(&x);
        Some(x)
    }
}

impl<I: Iterator, F: Fn(&I::Item)> Iterator for InspectSeq<I, F> {
    type Item = I::Item;
    #[inline]
    fn next(&mut self) -> Option<I::Item> {
        let x = self.iter.next()?;
        (self.f)(&x);
        Some(x)
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.iter.size_hint()
    }
    #[inline]
    fn fold<B, G: FnMut(B, I::Item) -> B>(self, init: B, mut g: G) -> B {
        let f = &*self.f;
        self.iter.fold(init, move |acc, x| {
            f(&x);
            g(acc, x)
        })
    }
}

/// Keeps the items a predicate accepts; see
/// [`ParallelIterator::filter`](super::ParallelIterator::filter).
pub struct Filter<P, F> {
    pub(crate) base: P,
    pub(crate) f: Arc<F>,
}

impl<P, F> Producer for Filter<P, F>
where
    P: Producer,
    F: Fn(&P::Item) -> bool + Sync + Send,
{
    type Item = P::Item;
    type IntoSeq = FilterSeq<P::IntoSeq, F>;
    fn base_len(&self) -> usize {
        self.base.base_len()
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        split_with_fn!(self, index, Filter { f })
    }
    fn into_seq(self) -> Self::IntoSeq {
        FilterSeq {
            iter: self.base.into_seq(),
            f: self.f,
        }
    }
    fn min_len(&self) -> usize {
        self.base.min_len()
    }
    fn max_len(&self) -> usize {
        self.base.max_len()
    }
    fn stopped(&self) -> bool {
        self.base.stopped()
    }
}

/// The sequential iterator of a [`Filter`] leaf.
#[derive(Debug)]
pub struct FilterSeq<I, F> {
    iter: I,
    f: Arc<F>,
}

impl<I: Iterator, F: Fn(&I::Item) -> bool> Iterator for FilterSeq<I, F> {
    type Item = I::Item;
    #[inline]
    fn next(&mut self) -> Option<I::Item> {
        let f = &*self.f;
        self.iter.find(|x| f(x))
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        (0, self.iter.size_hint().1)
    }
    #[inline]
    fn fold<B, G: FnMut(B, I::Item) -> B>(self, init: B, mut g: G) -> B {
        let f = &*self.f;
        self.iter
            .fold(init, move |acc, x| if f(&x) { g(acc, x) } else { acc })
    }
}

/// Maps items to `Option`s and keeps the `Some` values; see
/// [`ParallelIterator::filter_map`](super::ParallelIterator::filter_map).
pub struct FilterMap<P, F> {
    pub(crate) base: P,
    pub(crate) f: Arc<F>,
}

impl<P, F, R> Producer for FilterMap<P, F>
where
    P: Producer,
    F: Fn(P::Item) -> Option<R> + Sync + Send,
{
    type Item = R;
    type IntoSeq = FilterMapSeq<P::IntoSeq, F>;
    fn base_len(&self) -> usize {
        self.base.base_len()
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        split_with_fn!(self, index, FilterMap { f })
    }
    fn into_seq(self) -> Self::IntoSeq {
        FilterMapSeq {
            iter: self.base.into_seq(),
            f: self.f,
        }
    }
    fn min_len(&self) -> usize {
        self.base.min_len()
    }
    fn max_len(&self) -> usize {
        self.base.max_len()
    }
    fn stopped(&self) -> bool {
        self.base.stopped()
    }
}

/// The sequential iterator of a [`FilterMap`] leaf.
#[derive(Debug)]
pub struct FilterMapSeq<I, F> {
    iter: I,
    f: Arc<F>,
}

impl<I: Iterator, F: Fn(I::Item) -> Option<R>, R> Iterator for FilterMapSeq<I, F> {
    type Item = R;
    #[inline]
    fn next(&mut self) -> Option<R> {
        let f = &*self.f;
        self.iter.find_map(f)
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        (0, self.iter.size_hint().1)
    }
    #[inline]
    fn fold<B, G: FnMut(B, R) -> B>(self, init: B, mut g: G) -> B {
        let f = &*self.f;
        self.iter.fold(init, move |acc, x| match f(x) {
            Some(y) => g(acc, y),
            None => acc,
        })
    }
}

/// Maps each item to a sequential iterator and flattens; see
/// [`ParallelIterator::flat_map_iter`](super::ParallelIterator::flat_map_iter).
pub struct FlatMapIter<P, F> {
    pub(crate) base: P,
    pub(crate) f: Arc<F>,
}

impl<P, F, U> Producer for FlatMapIter<P, F>
where
    P: Producer,
    F: Fn(P::Item) -> U + Sync + Send,
    U: IntoIterator,
{
    type Item = U::Item;
    type IntoSeq = FlatMapIterSeq<P::IntoSeq, F, U::IntoIter>;
    fn base_len(&self) -> usize {
        self.base.base_len()
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        split_with_fn!(self, index, FlatMapIter { f })
    }
    fn into_seq(self) -> Self::IntoSeq {
        FlatMapIterSeq {
            iter: self.base.into_seq(),
            f: self.f,
            front: None,
        }
    }
    fn min_len(&self) -> usize {
        self.base.min_len()
    }
    fn max_len(&self) -> usize {
        self.base.max_len()
    }
    fn stopped(&self) -> bool {
        self.base.stopped()
    }
}

/// The sequential iterator of a [`FlatMapIter`] leaf.
#[derive(Debug)]
pub struct FlatMapIterSeq<I, F, J> {
    iter: I,
    f: Arc<F>,
    front: Option<J>,
}

impl<I, F, U> Iterator for FlatMapIterSeq<I, F, U::IntoIter>
where
    I: Iterator,
    F: Fn(I::Item) -> U,
    U: IntoIterator,
{
    type Item = U::Item;
    fn next(&mut self) -> Option<U::Item> {
        loop {
            if let Some(front) = &mut self.front {
                if let Some(x) = front.next() {
                    return Some(x);
                }
                self.front = None;
            }
            let item = self.iter.next()?;
            self.front = Some((self.f)(item).into_iter());
        }
    }
    fn fold<B, G: FnMut(B, U::Item) -> B>(self, init: B, mut g: G) -> B {
        let mut acc = init;
        if let Some(front) = self.front {
            acc = front.fold(acc, &mut g);
        }
        let f = &*self.f;
        self.iter
            .fold(acc, move |acc, x| f(x).into_iter().fold(acc, &mut g))
    }
}

/// Maps each item to a parallel iterator and flattens; see
/// [`ParallelIterator::flat_map`](super::ParallelIterator::flat_map). Each inner iterator runs
/// sequentially inside its leaf (the outer iterator is what is split).
pub struct FlatMap<P, F> {
    pub(crate) base: P,
    pub(crate) f: Arc<F>,
}

impl<P, F, U> Producer for FlatMap<P, F>
where
    P: Producer,
    F: Fn(P::Item) -> U + Sync + Send,
    U: IntoParallelIterator,
{
    type Item = U::Item;
    type IntoSeq = FlatMapSeq<P::IntoSeq, F, <U::Iter as Producer>::IntoSeq>;
    fn base_len(&self) -> usize {
        self.base.base_len()
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        split_with_fn!(self, index, FlatMap { f })
    }
    fn into_seq(self) -> Self::IntoSeq {
        FlatMapSeq {
            iter: self.base.into_seq(),
            f: self.f,
            front: None,
        }
    }
    fn min_len(&self) -> usize {
        self.base.min_len()
    }
    fn max_len(&self) -> usize {
        self.base.max_len()
    }
    fn stopped(&self) -> bool {
        self.base.stopped()
    }
}

/// The sequential iterator of a [`FlatMap`] leaf.
#[derive(Debug)]
pub struct FlatMapSeq<I, F, J> {
    iter: I,
    f: Arc<F>,
    front: Option<J>,
}

impl<I, F, U> Iterator for FlatMapSeq<I, F, <U::Iter as Producer>::IntoSeq>
where
    I: Iterator,
    F: Fn(I::Item) -> U,
    U: IntoParallelIterator,
{
    type Item = U::Item;
    fn next(&mut self) -> Option<U::Item> {
        loop {
            if let Some(front) = &mut self.front {
                if let Some(x) = front.next() {
                    return Some(x);
                }
                self.front = None;
            }
            let item = self.iter.next()?;
            self.front = Some((self.f)(item).into_par_iter().into_seq());
        }
    }
}

/// Copies the items of an iterator over references; see
/// [`ParallelIterator::copied`](super::ParallelIterator::copied).
#[derive(Debug, Clone)]
pub struct Copied<P> {
    pub(crate) base: P,
}

impl<'a, T, P> Producer for Copied<P>
where
    T: 'a + Copy,
    P: Producer<Item = &'a T>,
{
    type Item = T;
    type IntoSeq = std::iter::Copied<P::IntoSeq>;
    fn base_len(&self) -> usize {
        self.base.base_len()
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        let (l, r) = self.base.split_at(index);
        (Copied { base: l }, Copied { base: r })
    }
    fn into_seq(self) -> Self::IntoSeq {
        self.base.into_seq().copied()
    }
    fn min_len(&self) -> usize {
        self.base.min_len()
    }
    fn max_len(&self) -> usize {
        self.base.max_len()
    }
    fn stopped(&self) -> bool {
        self.base.stopped()
    }
    fn exact_len(&self) -> Option<usize> {
        self.base.exact_len()
    }
}

impl<'a, T: 'a + Copy, P: IndexedProducer<Item = &'a T>> IndexedProducer for Copied<P> {}

/// Clones the items of an iterator over references; see
/// [`ParallelIterator::cloned`](super::ParallelIterator::cloned).
#[derive(Debug, Clone)]
pub struct Cloned<P> {
    pub(crate) base: P,
}

impl<'a, T, P> Producer for Cloned<P>
where
    T: 'a + Clone,
    P: Producer<Item = &'a T>,
{
    type Item = T;
    type IntoSeq = std::iter::Cloned<P::IntoSeq>;
    fn base_len(&self) -> usize {
        self.base.base_len()
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        let (l, r) = self.base.split_at(index);
        (Cloned { base: l }, Cloned { base: r })
    }
    fn into_seq(self) -> Self::IntoSeq {
        self.base.into_seq().cloned()
    }
    fn min_len(&self) -> usize {
        self.base.min_len()
    }
    fn max_len(&self) -> usize {
        self.base.max_len()
    }
    fn stopped(&self) -> bool {
        self.base.stopped()
    }
    fn exact_len(&self) -> Option<usize> {
        self.base.exact_len()
    }
}

impl<'a, T: 'a + Clone, P: IndexedProducer<Item = &'a T>> IndexedProducer for Cloned<P> {}

/// Folds each leaf into one accumulator; see
/// [`ParallelIterator::fold`](super::ParallelIterator::fold).
pub struct Fold<P, ID, F> {
    pub(crate) base: P,
    pub(crate) identity: Arc<ID>,
    pub(crate) f: Arc<F>,
}

impl<P, ID, F, T> Producer for Fold<P, ID, F>
where
    P: Producer,
    ID: Fn() -> T + Sync + Send,
    F: Fn(T, P::Item) -> T + Sync + Send,
{
    type Item = T;
    type IntoSeq = std::option::IntoIter<T>;
    fn base_len(&self) -> usize {
        self.base.base_len()
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        split_with_fn!(self, index, Fold { identity, f })
    }
    fn into_seq(self) -> Self::IntoSeq {
        let f = &*self.f;
        let acc = self.base.into_seq().fold((self.identity)(), f);
        Some(acc).into_iter()
    }
    fn min_len(&self) -> usize {
        self.base.min_len()
    }
    fn max_len(&self) -> usize {
        self.base.max_len()
    }
    fn stopped(&self) -> bool {
        self.base.stopped()
    }
}

/// Keeps pieces at least `min` long; see
/// [`ParallelIterator::with_min_len`](super::ParallelIterator::with_min_len).
#[derive(Debug, Clone)]
pub struct MinLen<P> {
    pub(crate) base: P,
    pub(crate) min: usize,
}

impl<P: Producer> Producer for MinLen<P> {
    type Item = P::Item;
    type IntoSeq = P::IntoSeq;
    fn base_len(&self) -> usize {
        self.base.base_len()
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        let (l, r) = self.base.split_at(index);
        let min = self.min;
        (MinLen { base: l, min }, MinLen { base: r, min })
    }
    fn into_seq(self) -> Self::IntoSeq {
        self.base.into_seq()
    }
    fn min_len(&self) -> usize {
        self.base.min_len().max(self.min)
    }
    fn max_len(&self) -> usize {
        self.base.max_len()
    }
    fn stopped(&self) -> bool {
        self.base.stopped()
    }
    fn exact_len(&self) -> Option<usize> {
        self.base.exact_len()
    }
}

impl<P: IndexedProducer> IndexedProducer for MinLen<P> {}

clone_debug!(Map [P] [F] { base } { f });
clone_debug!(MapInit [P] [INIT, F] { base } { init, f });
clone_debug!(Inspect [P] [F] { base } { f });
clone_debug!(Filter [P] [F] { base } { f });
clone_debug!(FilterMap [P] [F] { base } { f });
clone_debug!(FlatMapIter [P] [F] { base } { f });
clone_debug!(FlatMap [P] [F] { base } { f });
clone_debug!(Fold [P] [ID, F] { base } { identity, f });
