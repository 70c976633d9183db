//! Parallel iterators made from nothing or from a function: `empty`, `once`, `repeat`,
//! `repeat_n`, `split`, and the `walk_tree` family.

use super::plumbing::engine::Pieces;
use super::plumbing::{bridge_unindexed, Folder, Producer, UnindexedConsumer, UnindexedProducer};
use super::vec::IntoIter as VecIter;
use super::ParallelIterator;
use std::marker::PhantomData;

/// No items; from [`empty`].
pub struct Empty<T> {
    marker: PhantomData<fn() -> T>,
}

impl<T> Clone for Empty<T> {
    fn clone(&self) -> Self {
        Empty {
            marker: PhantomData,
        }
    }
}

impl<T> std::fmt::Debug for Empty<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Empty")
    }
}

/// A parallel iterator with no items.
///
/// # Examples
/// ```
/// use throttle::prelude::*;
/// assert_eq!(throttle::iter::empty::<u32>().sum::<u32>(), 0);
/// ```
pub fn empty<T: Send>() -> Empty<T> {
    Empty {
        marker: PhantomData,
    }
}

impl<T: Send> Producer for Empty<T> {
    type Item = T;
    type IntoIter = std::iter::Empty<T>;
    fn split_at(self, _: usize) -> (Self, Self) {
        (empty(), empty())
    }
    fn into_iter(self) -> Self::IntoIter {
        std::iter::empty()
    }
}

producer_iterator!(impl[T: Send] Empty<T> => T, where [], len: |_it| 0);

delegate!(
    /// One item; from [`once`].
    Once[T] => super::option::IntoIter<T>, T, [T: Send]
);

/// A parallel iterator of one item.
///
/// # Examples
/// ```
/// use throttle::prelude::*;
/// let v: Vec<u32> = throttle::iter::once(7u32).chain(0..2u32).collect();
/// assert_eq!(v, [7, 0, 1]);
/// ```
pub fn once<T: Send>(item: T) -> Once<T> {
    Once {
        inner: super::option::IntoIter::new(Some(item)),
    }
}

/// `n` clones of an item; from [`repeat_n`] (and [`Repeat::take`]).
#[derive(Debug, Clone)]
pub struct RepeatN<T> {
    item: Option<T>,
    count: usize,
}

/// A parallel iterator of `n` clones of `item`.
///
/// # Examples
/// ```
/// use throttle::prelude::*;
/// let v: Vec<char> = throttle::iter::repeat_n('x', 3).collect();
/// assert_eq!(v, ['x', 'x', 'x']);
/// ```
pub fn repeat_n<T: Clone + Send>(item: T, n: usize) -> RepeatN<T> {
    RepeatN {
        item: (n > 0).then_some(item),
        count: n,
    }
}

/// Deprecated name of [`repeat_n`] in rayon.
///
/// # Examples
/// ```
/// use throttle::prelude::*;
/// #[allow(deprecated)]
/// let n = throttle::iter::repeatn(1u8, 4).count();
/// assert_eq!(n, 4);
/// ```
#[deprecated(note = "use `repeat_n`")]
pub fn repeatn<T: Clone + Send>(item: T, n: usize) -> RepeatN<T> {
    repeat_n(item, n)
}

producer_iterator!(impl[T: Clone + Send] RepeatN<T> => T, where [], len: |it| it.count);

impl<T: Clone + Send> Producer for RepeatN<T> {
    type Item = T;
    type IntoIter = RepeatNSeq<T>;
    fn split_at(self, index: usize) -> (Self, Self) {
        let index = index.min(self.count);
        let left = RepeatN {
            item: self.item.clone().filter(|_| index > 0),
            count: index,
        };
        let right = RepeatN {
            item: self.item.filter(|_| index < self.count),
            count: self.count - index,
        };
        (left, right)
    }
    fn into_iter(self) -> Self::IntoIter {
        RepeatNSeq {
            item: self.item,
            count: self.count,
        }
    }
}

/// The sequential iterator of a [`RepeatN`] leaf: clones, the item itself last.
#[derive(Debug)]
pub struct RepeatNSeq<T> {
    item: Option<T>,
    count: usize,
}

impl<T: Clone> Iterator for RepeatNSeq<T> {
    type Item = T;
    fn next(&mut self) -> Option<T> {
        if self.count == 0 {
            return None;
        }
        self.count -= 1;
        if self.count == 0 {
            self.item.take()
        } else {
            self.item.clone()
        }
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.count, Some(self.count))
    }
    /// Skips without cloning.
    fn nth(&mut self, n: usize) -> Option<T> {
        if n >= self.count {
            self.count = 0;
            self.item = None;
            return None;
        }
        self.count -= n;
        self.next()
    }
}

impl<T: Clone> DoubleEndedIterator for RepeatNSeq<T> {
    fn next_back(&mut self) -> Option<T> {
        self.next()
    }
}

impl<T: Clone> ExactSizeIterator for RepeatNSeq<T> {}

/// Clones of an item without end; from [`repeat`]. Use it with something that stops it:
/// [`Repeat::take`], [`Repeat::zip`], `take_any`, `while_some`, `find_any`, ...
#[derive(Debug, Clone)]
pub struct Repeat<T> {
    item: T,
}

/// A parallel iterator that repeats `item` without end.
///
/// # Examples
/// ```
/// use throttle::prelude::*;
/// let v: Vec<(char, u32)> = throttle::iter::repeat('a').zip(0..3u32).collect();
/// assert_eq!(v, [('a', 0), ('a', 1), ('a', 2)]);
/// assert_eq!(throttle::iter::repeat(1u8).take_any(5).count(), 5);
/// ```
pub fn repeat<T: Clone + Send>(item: T) -> Repeat<T> {
    Repeat { item }
}

impl<T: Clone + Send> Repeat<T> {
    /// The first `n` clones.
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// assert_eq!(throttle::iter::repeat(2u32).take(3).sum::<u32>(), 6);
    /// ```
    pub fn take(self, n: usize) -> RepeatN<T> {
        repeat_n(self.item, n)
    }

    /// Pairs a clone with each item of `zip_op`.
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// let v: Vec<(char, u8)> = throttle::iter::repeat('z').zip(vec![1u8, 2]).collect();
    /// assert_eq!(v, [('z', 1), ('z', 2)]);
    /// ```
    pub fn zip<Z>(self, zip_op: Z) -> super::Zip<RepeatN<T>, Z::Iter>
    where
        Z: super::IntoParallelIterator,
        Z::Iter: super::IndexedParallelIterator,
    {
        use super::IndexedParallelIterator;
        let other = zip_op.into_par_iter();
        let n = other.len();
        IndexedParallelIterator::zip(repeat_n(self.item, n), other)
    }
}

/// Without end: as many units as a `usize` counts, each one clone.
impl<T: Clone + Send> ParallelIterator for Repeat<T> {
    type Item = T;

    fn drive_unindexed<C: UnindexedConsumer<T>>(self, consumer: C) -> C::Result {
        let pieces = RepeatPieces {
            item: self.item,
            units: usize::MAX,
        };
        super::plumbing::engine::drive(
            pieces,
            usize::MAX,
            super::plumbing::engine::ByUnits(consumer),
        )
    }
}

/// A run of [`Repeat`]: `units` clones.
struct RepeatPieces<T> {
    item: T,
    units: usize,
}

impl<T: Clone + Send> Pieces for RepeatPieces<T> {
    type Item = T;
    fn split_at(self, index: usize) -> (Self, Self) {
        let index = index.min(self.units);
        let left = RepeatPieces {
            item: self.item.clone(),
            units: index,
        };
        (
            left,
            RepeatPieces {
                item: self.item,
                units: self.units - index,
            },
        )
    }
    fn fold_with<F: Folder<T>>(self, folder: F) -> F {
        folder.consume_iter(std::iter::repeat(self.item).take(self.units))
    }
}

/// Pieces made by splitting a value with a function; from [`split`].
#[derive(Clone)]
#[must_use = "iterator adaptors are lazy and do nothing unless consumed"]
pub struct Split<D, S> {
    data: D,
    splitter: S,
}

impl<D: std::fmt::Debug, S> std::fmt::Debug for Split<D, S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Split").field("data", &self.data).finish()
    }
}

/// A parallel iterator over the pieces that `splitter` cuts `data` into: `splitter(d)` returns
/// `(a, Some(b))` to cut `d` into `a` and `b`, or `(d, None)` to keep it whole. The pieces come
/// in order (left before right). Cutting is done as the run splits (the two halves of a cut may
/// run on two threads), as far as the pool needs pieces; a piece that is not cut further is
/// one item.
///
/// # Examples
/// ```
/// use throttle::prelude::*;
/// let total: usize = throttle::iter::split(0..100u32, |r| {
///     if r.len() <= 30 { return (r, None); }
///     let mid = r.start + r.len() as u32 / 2;
///     (r.start..mid, Some(mid..r.end))
/// }).map(|r| r.len()).sum();
/// assert_eq!(total, 100);
/// ```
pub fn split<D, S>(data: D, splitter: S) -> Split<D, S>
where
    D: Send,
    S: Fn(D) -> (D, Option<D>) + Sync,
{
    Split { data, splitter }
}

impl<D, S> ParallelIterator for Split<D, S>
where
    D: Send,
    S: Fn(D) -> (D, Option<D>) + Sync + Send,
{
    type Item = D;

    fn drive_unindexed<C: UnindexedConsumer<D>>(self, consumer: C) -> C::Result {
        let producer = SplitProducer {
            data: self.data,
            splitter: &self.splitter,
        };
        bridge_unindexed(producer, consumer)
    }
}

/// The producer of [`Split`]: a piece of data and the function that cuts it.
struct SplitProducer<'s, D, S> {
    data: D,
    splitter: &'s S,
}

impl<D, S> UnindexedProducer for SplitProducer<'_, D, S>
where
    D: Send,
    S: Fn(D) -> (D, Option<D>) + Sync,
{
    type Item = D;

    fn split(self) -> (Self, Option<Self>) {
        let splitter = self.splitter;
        let (left, right) = splitter(self.data);
        (
            SplitProducer {
                data: left,
                splitter,
            },
            right.map(|data| SplitProducer { data, splitter }),
        )
    }

    fn fold_with<F: Folder<D>>(self, folder: F) -> F {
        folder.consume(self.data)
    }
}

/// Implements a tree walk: a struct holding the root and the children function, walked when
/// the iterator runs.
macro_rules! walk_type {
    ($(#[$m:meta])* $name:ident, prefix: $prefix:literal, [$($bound:tt)*]) => {
        $(#[$m])*
        #[derive(Debug, Clone)]
        #[must_use = "iterator adaptors are lazy and do nothing unless consumed"]
        pub struct $name<S, B> {
            root: S,
            children: B,
        }

        impl<S, B, I> ParallelIterator for $name<S, B>
        where
            S: Send,
            B: Fn(&S) -> I + Send + Sync,
            I: IntoIterator<Item = S, $($bound)*>,
        {
            type Item = S;

            fn drive_unindexed<C: UnindexedConsumer<S>>(self, consumer: C) -> C::Result {
                let nodes = walk(self.root, &self.children, $prefix);
                VecIter::new(nodes).drive_unindexed(consumer)
            }
        }
    };
}

walk_type!(
    /// The nodes of a tree in prefix order; from [`walk_tree_prefix`].
    WalkTreePrefix, prefix: true, [IntoIter: DoubleEndedIterator]
);
walk_type!(
    /// The nodes of a tree in postfix order; from [`walk_tree_postfix`].
    WalkTreePostfix, prefix: false, []
);
walk_type!(
    /// The nodes of a tree, in some order; from [`walk_tree`].
    WalkTree, prefix: false, [IntoIter: DoubleEndedIterator]
);

/// Visits a tree from `root`: `children_of(&node)` gives a node's children. Prefix: a node
/// before its children, children in the order given. When the iterator runs, the tree is
/// walked in parallel (the subtrees of a node through `join`), then the nodes, in that order,
/// are split as a `Vec`.
///
/// # Examples
/// ```
/// use throttle::prelude::*;
/// let v: Vec<u32> = throttle::iter::walk_tree_prefix(1u32, |&n| if n < 4 { vec![2 * n, 2 * n + 1] } else { vec![] }).collect();
/// assert_eq!(v, [1, 2, 4, 5, 3, 6, 7]);
/// ```
pub fn walk_tree_prefix<S, B, I>(root: S, children_of: B) -> WalkTreePrefix<S, B>
where
    S: Send,
    B: Fn(&S) -> I + Send + Sync,
    I: IntoIterator<Item = S, IntoIter: DoubleEndedIterator>,
{
    WalkTreePrefix {
        root,
        children: children_of,
    }
}

/// Visits a tree from `root` in postfix order: a node after its children.
///
/// # Examples
/// ```
/// use throttle::prelude::*;
/// let v: Vec<u32> = throttle::iter::walk_tree_postfix(1u32, |&n| if n < 4 { vec![2 * n, 2 * n + 1] } else { vec![] }).collect();
/// assert_eq!(v, [4, 5, 2, 6, 7, 3, 1]);
/// ```
pub fn walk_tree_postfix<S, B, I>(root: S, children_of: B) -> WalkTreePostfix<S, B>
where
    S: Send,
    B: Fn(&S) -> I + Send + Sync,
    I: IntoIterator<Item = S>,
{
    WalkTreePostfix {
        root,
        children: children_of,
    }
}

/// Visits a tree from `root`, every node once, in some order (here: postfix, as rayon's).
///
/// # Examples
/// ```
/// use throttle::prelude::*;
/// let n = throttle::iter::walk_tree(1u32, |&n| if n < 8 { vec![2 * n, 2 * n + 1] } else { vec![] }).count();
/// assert_eq!(n, 15);
/// ```
pub fn walk_tree<S, B, I>(root: S, children_of: B) -> WalkTree<S, B>
where
    S: Send,
    B: Fn(&S) -> I + Send + Sync,
    I: IntoIterator<Item = S, IntoIter: DoubleEndedIterator>,
{
    WalkTree {
        root,
        children: children_of,
    }
}

/// The nodes under `node`, prefix or postfix; children's subtrees are walked in parallel.
fn walk<S, B, I>(node: S, children: &B, prefix: bool) -> Vec<S>
where
    S: Send,
    B: Fn(&S) -> I + Sync,
    I: IntoIterator<Item = S>,
{
    let kids: Vec<S> = children(&node).into_iter().collect();
    let mut out = Vec::new();
    let mut last = None;
    if prefix {
        out.push(node);
    } else {
        last = Some(node);
    }
    for mut t in walk_all(kids, children, prefix) {
        out.append(&mut t);
    }
    out.extend(last);
    out
}

/// Walks each of `nodes` in parallel, results in order.
fn walk_all<S, B, I>(mut nodes: Vec<S>, children: &B, prefix: bool) -> Vec<Vec<S>>
where
    S: Send,
    B: Fn(&S) -> I + Sync,
    I: IntoIterator<Item = S>,
{
    match nodes.len() {
        0 => Vec::new(),
        1 => vec![walk(nodes.pop().expect("one node"), children, prefix)],
        n => {
            let right = nodes.split_off(n / 2);
            let (mut l, mut r) = throttle_core::join(
                || walk_all(nodes, children, prefix),
                || walk_all(right, children, prefix),
            );
            l.append(&mut r);
            l
        }
    }
}
