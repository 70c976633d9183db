//! Collecting an iterator of unknown length: each piece gathers its items into a `Vec`, and
//! the `Vec`s are chained in order in a linked list (joining two pieces moves no item). Also
//! the consumers that split pairs (`unzip`) or `Either`s (`partition`) between two consumers.

use super::super::plumbing::{Consumer, Folder, Reducer, UnindexedConsumer, WorkOrder};
use either::Either;
use std::collections::LinkedList;

/// Gathers each piece's items into a `Vec`, the `Vec`s in order in a list.
pub(crate) struct ListVec;

impl<T: Send> Consumer<T> for ListVec {
    type Folder = ListVecFolder<T>;
    type Reducer = ListReducer;
    type Result = LinkedList<Vec<T>>;

    fn split_at(self, _index: usize) -> (Self, Self, ListReducer) {
        (ListVec, ListVec, ListReducer)
    }

    fn into_folder(self) -> ListVecFolder<T> {
        ListVecFolder(Vec::new())
    }

    fn full(&self) -> bool {
        false
    }
}

impl<T: Send> UnindexedConsumer<T> for ListVec {
    fn split_off_left(&self) -> Self {
        ListVec
    }

    fn to_reducer(&self) -> ListReducer {
        ListReducer
    }
}

/// The folder of [`ListVec`]: the piece's items so far.
pub(crate) struct ListVecFolder<T>(Vec<T>);

impl<T> Folder<T> for ListVecFolder<T> {
    type Result = LinkedList<Vec<T>>;

    fn consume(mut self, item: T) -> Self {
        self.0.push(item);
        self
    }

    fn consume_iter<I: IntoIterator<Item = T>>(mut self, iter: I) -> Self {
        self.0.extend(iter);
        self
    }

    fn complete(self) -> LinkedList<Vec<T>> {
        let mut list = LinkedList::new();
        if !self.0.is_empty() {
            list.push_back(self.0);
        }
        list
    }

    fn full(&self) -> bool {
        false
    }
}

/// Appends the right list to the left one.
pub(crate) struct ListReducer;

impl<T> Reducer<LinkedList<T>> for ListReducer {
    fn reduce(self, mut left: LinkedList<T>, mut right: LinkedList<T>) -> LinkedList<T> {
        left.append(&mut right);
        left
    }
}

/// Hands the two halves of pairs to two consumers: `(x, y)` goes to `A` as `x` and to `B` as
/// `y`. Split at an index, both halves split there, so two in-place collects stay aligned.
pub(crate) struct Unzip<A, B>(pub(crate) A, pub(crate) B);

impl<X, Y, A: Consumer<X>, B: Consumer<Y>> Consumer<(X, Y)> for Unzip<A, B> {
    type Folder = Unzip<A::Folder, B::Folder>;
    type Reducer = Unzip<A::Reducer, B::Reducer>;
    type Result = (A::Result, B::Result);

    fn split_at(self, index: usize) -> (Self, Self, Self::Reducer) {
        let (a1, a2, ra) = self.0.split_at(index);
        let (b1, b2, rb) = self.1.split_at(index);
        (Unzip(a1, b1), Unzip(a2, b2), Unzip(ra, rb))
    }

    fn into_folder(self) -> Self::Folder {
        Unzip(self.0.into_folder(), self.1.into_folder())
    }

    fn full(&self) -> bool {
        self.0.full() && self.1.full()
    }

    fn work_order(&self) -> WorkOrder {
        self.0.work_order()
    }
}

impl<X, Y, A, B> UnindexedConsumer<(X, Y)> for Unzip<A, B>
where
    A: UnindexedConsumer<X>,
    B: UnindexedConsumer<Y>,
{
    fn split_off_left(&self) -> Self {
        Unzip(self.0.split_off_left(), self.1.split_off_left())
    }

    fn to_reducer(&self) -> Self::Reducer {
        Unzip(self.0.to_reducer(), self.1.to_reducer())
    }

    fn split_off_left_at(&self, index: usize, len: usize) -> Self {
        Unzip(
            self.0.split_off_left_at(index, len),
            self.1.split_off_left_at(index, len),
        )
    }
}

impl<X, Y, A: Folder<X>, B: Folder<Y>> Folder<(X, Y)> for Unzip<A, B> {
    type Result = (A::Result, B::Result);

    fn consume(self, (x, y): (X, Y)) -> Self {
        Unzip(self.0.consume(x), self.1.consume(y))
    }

    fn complete(self) -> Self::Result {
        (self.0.complete(), self.1.complete())
    }

    fn full(&self) -> bool {
        self.0.full() && self.1.full()
    }
}

impl<RA, RB, A: Reducer<RA>, B: Reducer<RB>> Reducer<(RA, RB)> for Unzip<A, B> {
    fn reduce(self, left: (RA, RB), right: (RA, RB)) -> (RA, RB) {
        (
            self.0.reduce(left.0, right.0),
            self.1.reduce(left.1, right.1),
        )
    }
}

/// Hands `Either`s to two consumers: `Left(x)` to `A`, `Right(y)` to `B`. Only for consumers
/// that do not count items (an index of the mixed run means nothing to either side).
pub(crate) struct Partition<A, B>(pub(crate) A, pub(crate) B);

impl<X, Y, A: Consumer<X>, B: Consumer<Y>> Consumer<Either<X, Y>> for Partition<A, B> {
    type Folder = Partition<A::Folder, B::Folder>;
    type Reducer = Unzip<A::Reducer, B::Reducer>;
    type Result = (A::Result, B::Result);

    fn split_at(self, index: usize) -> (Self, Self, Self::Reducer) {
        let (a1, a2, ra) = self.0.split_at(index);
        let (b1, b2, rb) = self.1.split_at(index);
        (Partition(a1, b1), Partition(a2, b2), Unzip(ra, rb))
    }

    fn into_folder(self) -> Self::Folder {
        Partition(self.0.into_folder(), self.1.into_folder())
    }

    fn full(&self) -> bool {
        self.0.full() && self.1.full()
    }
}

impl<X, Y, A, B> UnindexedConsumer<Either<X, Y>> for Partition<A, B>
where
    A: UnindexedConsumer<X>,
    B: UnindexedConsumer<Y>,
{
    fn split_off_left(&self) -> Self {
        Partition(self.0.split_off_left(), self.1.split_off_left())
    }

    fn to_reducer(&self) -> Self::Reducer {
        Unzip(self.0.to_reducer(), self.1.to_reducer())
    }
}

impl<X, Y, A: Folder<X>, B: Folder<Y>> Folder<Either<X, Y>> for Partition<A, B> {
    type Result = (A::Result, B::Result);

    fn consume(self, item: Either<X, Y>) -> Self {
        match item {
            Either::Left(x) => Partition(self.0.consume(x), self.1),
            Either::Right(y) => Partition(self.0, self.1.consume(y)),
        }
    }

    fn complete(self) -> Self::Result {
        (self.0.complete(), self.1.complete())
    }

    fn full(&self) -> bool {
        self.0.full() && self.1.full()
    }
}

/// Concatenates a list of `Vec`s into one (one allocation, one move per item; none at all
/// when there is one `Vec`).
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

/// The items of a list of `Vec`s, in order, with an exact length (so `FromIterator`
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
