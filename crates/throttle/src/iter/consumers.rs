//! What runs at the leaves and how two neighbours' results combine: the consumers behind
//! `for_each`, `reduce`, `sum`, `count`, `min`/`max`, the `find`s and `collect`.
//!
//! Results combine left first, so every consumer sees items in order; `min` keeps the first of
//! equal items and `max` the last, as `Iterator::min`/`max` do.

use super::plumbing::{Consumer, Order};
use std::cmp::Ordering as CmpOrdering;
use std::collections::LinkedList;
use std::marker::PhantomData;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// How many items a short-circuiting leaf runs between two looks at whether it may stop.
const STOP_CHECK_EVERY: usize = 1024;

pub(crate) struct ForEach<'f, F>(pub(crate) &'f F);

impl<T, F: Fn(T) + Sync> Consumer<T> for ForEach<'_, F> {
    type Result = ();
    fn consume<I: Iterator<Item = T>>(&self, _: usize, _: usize, iter: I) {
        iter.for_each(self.0);
    }
    fn combine(&self, _: (), _: ()) {}
}

pub(crate) struct Reduce<'f, ID, OP> {
    pub(crate) identity: &'f ID,
    pub(crate) op: &'f OP,
}

impl<T: Send, ID: Fn() -> T + Sync, OP: Fn(T, T) -> T + Sync> Consumer<T> for Reduce<'_, ID, OP> {
    type Result = T;
    fn consume<I: Iterator<Item = T>>(&self, _: usize, _: usize, iter: I) -> T {
        iter.fold((self.identity)(), self.op)
    }
    fn combine(&self, left: T, right: T) -> T {
        (self.op)(left, right)
    }
}

pub(crate) struct ReduceWith<'f, OP>(pub(crate) &'f OP);

impl<T: Send, OP: Fn(T, T) -> T + Sync> Consumer<T> for ReduceWith<'_, OP> {
    type Result = Option<T>;
    fn consume<I: Iterator<Item = T>>(&self, _: usize, _: usize, iter: I) -> Option<T> {
        iter.reduce(self.0)
    }
    fn combine(&self, left: Option<T>, right: Option<T>) -> Option<T> {
        match (left, right) {
            (Some(a), Some(b)) => Some((self.0)(a, b)),
            (a, b) => a.or(b),
        }
    }
}

pub(crate) struct Sum<S>(pub(crate) PhantomData<fn() -> S>);

impl<T, S: Send + std::iter::Sum<T> + std::iter::Sum<S>> Consumer<T> for Sum<S> {
    type Result = S;
    fn consume<I: Iterator<Item = T>>(&self, _: usize, _: usize, iter: I) -> S {
        iter.sum()
    }
    fn combine(&self, left: S, right: S) -> S {
        [left, right].into_iter().sum()
    }
}

pub(crate) struct Product<S>(pub(crate) PhantomData<fn() -> S>);

impl<T, S: Send + std::iter::Product<T> + std::iter::Product<S>> Consumer<T> for Product<S> {
    type Result = S;
    fn consume<I: Iterator<Item = T>>(&self, _: usize, _: usize, iter: I) -> S {
        iter.product()
    }
    fn combine(&self, left: S, right: S) -> S {
        [left, right].into_iter().product()
    }
}

pub(crate) struct Count;

impl<T> Consumer<T> for Count {
    type Result = usize;
    fn consume<I: Iterator<Item = T>>(&self, _: usize, _: usize, iter: I) -> usize {
        iter.count()
    }
    fn combine(&self, left: usize, right: usize) -> usize {
        left + right
    }
}

/// The least item by a comparator (`max == false`, first of equals) or the greatest
/// (`max == true`, last of equals).
pub(crate) struct Extreme<'f, F> {
    pub(crate) compare: &'f F,
    pub(crate) max: bool,
}

impl<T: Send, F: Fn(&T, &T) -> CmpOrdering + Sync> Consumer<T> for Extreme<'_, F> {
    type Result = Option<T>;
    fn consume<I: Iterator<Item = T>>(&self, _: usize, _: usize, iter: I) -> Option<T> {
        if self.max {
            iter.max_by(self.compare)
        } else {
            iter.min_by(self.compare)
        }
    }
    fn combine(&self, left: Option<T>, right: Option<T>) -> Option<T> {
        match (left, right) {
            (Some(a), Some(b)) => {
                let right_wins = match (self.compare)(&b, &a) {
                    CmpOrdering::Less => !self.max,
                    CmpOrdering::Equal => self.max,
                    CmpOrdering::Greater => self.max,
                };
                Some(if right_wins { b } else { a })
            }
            (a, b) => a.or(b),
        }
    }
}

/// Some item's image under `f`, stopping everywhere once one is found.
pub(crate) struct FindMapAny<'f, F> {
    pub(crate) f: &'f F,
    pub(crate) found: AtomicBool,
}

impl<T, R: Send, F: Fn(T) -> Option<R> + Sync> Consumer<T> for FindMapAny<'_, F> {
    type Result = Option<R>;
    fn consume<I: Iterator<Item = T>>(&self, _: usize, _: usize, iter: I) -> Option<R> {
        for (i, x) in iter.enumerate() {
            if i % STOP_CHECK_EVERY == STOP_CHECK_EVERY - 1 && self.found.load(Ordering::Relaxed) {
                return None;
            }
            if let Some(r) = (self.f)(x) {
                self.found.store(true, Ordering::Relaxed);
                return Some(r);
            }
        }
        None
    }
    fn combine(&self, left: Option<R>, right: Option<R>) -> Option<R> {
        left.or(right)
    }
    fn done(&self, _: usize) -> bool {
        self.found.load(Ordering::Relaxed)
    }
    fn skipped(&self) -> Option<R> {
        None
    }
    fn order(&self) -> Order {
        Order::Spread
    }
}

/// The image under `f` of the first item for which it is `Some`. A leaf that finds one records
/// its offset; pieces that start after a recorded offset cannot hold the first, and stop.
pub(crate) struct FindMapFirst<'f, F> {
    pub(crate) f: &'f F,
    pub(crate) best: AtomicUsize,
}

impl<T, R: Send, F: Fn(T) -> Option<R> + Sync> Consumer<T> for FindMapFirst<'_, F> {
    type Result = Option<R>;
    fn consume<I: Iterator<Item = T>>(&self, offset: usize, _: usize, iter: I) -> Option<R> {
        for (i, x) in iter.enumerate() {
            if i % STOP_CHECK_EVERY == STOP_CHECK_EVERY - 1 && self.done(offset) {
                return None;
            }
            if let Some(r) = (self.f)(x) {
                self.best.fetch_min(offset, Ordering::Relaxed);
                return Some(r);
            }
        }
        None
    }
    fn combine(&self, left: Option<R>, right: Option<R>) -> Option<R> {
        left.or(right)
    }
    fn done(&self, offset: usize) -> bool {
        self.best.load(Ordering::Relaxed) < offset
    }
    fn skipped(&self) -> Option<R> {
        None
    }
}

/// Each leaf's items in a `Vec`, the `Vec`s in order.
pub(crate) struct CollectChunks;

impl<T: Send> Consumer<T> for CollectChunks {
    type Result = LinkedList<Vec<T>>;
    fn consume<I: Iterator<Item = T>>(&self, _: usize, _: usize, iter: I) -> LinkedList<Vec<T>> {
        let mut list = LinkedList::new();
        list.push_back(iter.collect());
        list
    }
    fn combine(
        &self,
        mut left: LinkedList<Vec<T>>,
        mut right: LinkedList<Vec<T>>,
    ) -> LinkedList<Vec<T>> {
        left.append(&mut right);
        left
    }
}

/// Pairs split into two lists of chunks, in order.
pub(crate) struct UnzipChunks;

type Chunks2<A, B> = (LinkedList<Vec<A>>, LinkedList<Vec<B>>);

impl<A: Send, B: Send> Consumer<(A, B)> for UnzipChunks {
    type Result = Chunks2<A, B>;
    fn consume<I: Iterator<Item = (A, B)>>(&self, _: usize, _: usize, iter: I) -> Chunks2<A, B> {
        let (a, b): (Vec<A>, Vec<B>) = iter.unzip();
        (LinkedList::from([a]), LinkedList::from([b]))
    }
    fn combine(&self, mut left: Chunks2<A, B>, mut right: Chunks2<A, B>) -> Chunks2<A, B> {
        left.0.append(&mut right.0);
        left.1.append(&mut right.1);
        left
    }
}

/// Items split by a predicate into two lists of chunks, in order.
pub(crate) struct PartitionChunks<'f, F>(pub(crate) &'f F);

impl<T: Send, F: Fn(&T) -> bool + Sync> Consumer<T> for PartitionChunks<'_, F> {
    type Result = Chunks2<T, T>;
    fn consume<I: Iterator<Item = T>>(&self, _: usize, _: usize, iter: I) -> Chunks2<T, T> {
        let (a, b): (Vec<T>, Vec<T>) = iter.partition(self.0);
        (LinkedList::from([a]), LinkedList::from([b]))
    }
    fn combine(&self, mut left: Chunks2<T, T>, mut right: Chunks2<T, T>) -> Chunks2<T, T> {
        left.0.append(&mut right.0);
        left.1.append(&mut right.1);
        left
    }
}

/// The items of a list of chunks, in order, with an exact length (so `FromIterator`
/// implementations allocate once).
pub(crate) struct Flatten<T> {
    chunks: std::collections::linked_list::IntoIter<Vec<T>>,
    current: std::vec::IntoIter<T>,
    left: usize,
}

impl<T> Flatten<T> {
    pub(crate) fn new(chunks: LinkedList<Vec<T>>) -> Self {
        let left = chunks.iter().map(Vec::len).sum();
        Flatten {
            chunks: chunks.into_iter(),
            current: Vec::new().into_iter(),
            left,
        }
    }
}

impl<T> Iterator for Flatten<T> {
    type Item = T;
    fn next(&mut self) -> Option<T> {
        loop {
            if let Some(x) = self.current.next() {
                self.left -= 1;
                return Some(x);
            }
            self.current = self.chunks.next()?.into_iter();
        }
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
    fn fold<B, G: FnMut(B, T) -> B>(self, init: B, mut g: G) -> B {
        let acc = self.current.fold(init, &mut g);
        self.chunks
            .fold(acc, |acc, chunk| chunk.into_iter().fold(acc, &mut g))
    }
}

impl<T> ExactSizeIterator for Flatten<T> {}

/// Concatenates a list of chunks into one `Vec` (one allocation, one copy per chunk; no copy at
/// all when there is one chunk).
pub(crate) fn concat<T>(mut chunks: LinkedList<Vec<T>>) -> Vec<T> {
    if chunks.len() == 1 {
        return chunks.pop_front().unwrap_or_default();
    }
    let mut out = Vec::with_capacity(chunks.iter().map(Vec::len).sum());
    for mut chunk in chunks {
        out.append(&mut chunk);
    }
    out
}

/// The image under `f` of the last item for which it is `Some`. A leaf that finds one records
/// where it starts (plus one; 0 = nothing found); pieces that start before a recorded piece
/// end before it, cannot hold the last, and stop.
pub(crate) struct FindMapLast<'f, F> {
    pub(crate) f: &'f F,
    pub(crate) best: AtomicUsize,
}

impl<T, R: Send, F: Fn(T) -> Option<R> + Sync> Consumer<T> for FindMapLast<'_, F> {
    type Result = Option<R>;
    fn consume<I: Iterator<Item = T>>(&self, offset: usize, _: usize, iter: I) -> Option<R> {
        let mut last = None;
        for (i, x) in iter.enumerate() {
            if i % STOP_CHECK_EVERY == STOP_CHECK_EVERY - 1 && self.done(offset) {
                return None;
            }
            if let Some(r) = (self.f)(x) {
                last = Some(r);
            }
        }
        if last.is_some() {
            self.best.fetch_max(offset + 1, Ordering::Relaxed);
        }
        last
    }
    fn combine(&self, left: Option<R>, right: Option<R>) -> Option<R> {
        right.or(left)
    }
    fn done(&self, offset: usize) -> bool {
        offset + 1 < self.best.load(Ordering::Relaxed)
    }
    fn skipped(&self) -> Option<R> {
        None
    }
    fn order(&self) -> Order {
        Order::Back
    }
}

/// Items mapped to `Either` and split into two lists of chunks, in order.
pub(crate) struct PartitionMapChunks<'f, F>(pub(crate) &'f F);

impl<T, L: Send, R: Send, F> Consumer<T> for PartitionMapChunks<'_, F>
where
    F: Fn(T) -> either::Either<L, R> + Sync,
{
    type Result = Chunks2<L, R>;
    fn consume<I: Iterator<Item = T>>(&self, _: usize, _: usize, iter: I) -> Chunks2<L, R> {
        let (mut a, mut b) = (Vec::new(), Vec::new());
        for x in iter {
            match (self.0)(x) {
                either::Either::Left(l) => a.push(l),
                either::Either::Right(r) => b.push(r),
            }
        }
        (LinkedList::from([a]), LinkedList::from([b]))
    }
    fn combine(&self, mut left: Chunks2<L, R>, mut right: Chunks2<L, R>) -> Chunks2<L, R> {
        left.0.append(&mut right.0);
        left.1.append(&mut right.1);
        left
    }
}
