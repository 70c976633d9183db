//! Parallel iterators made from nothing or from a function: `empty`, `once`, `repeat`,
//! `repeat_n`, `split`, and the `walk_tree` family.

use super::plumbing::{IndexedProducer, Producer};
use super::vec::IntoIter as VecIter;
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
    type IntoSeq = std::iter::Empty<T>;
    fn base_len(&self) -> usize {
        0
    }
    fn split_at(self, _: usize) -> (Self, Self) {
        (empty(), empty())
    }
    fn into_seq(self) -> Self::IntoSeq {
        std::iter::empty()
    }
    fn exact_len(&self) -> Option<usize> {
        Some(0)
    }
}

impl<T: Send> IndexedProducer for Empty<T> {}

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
        inner: super::option::IntoIter { opt: Some(item) },
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

impl<T: Clone + Send> Producer for RepeatN<T> {
    type Item = T;
    type IntoSeq = RepeatNSeq<T>;
    fn base_len(&self) -> usize {
        self.count
    }
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
    fn into_seq(self) -> Self::IntoSeq {
        RepeatNSeq {
            item: self.item,
            count: self.count,
        }
    }
    fn exact_len(&self) -> Option<usize> {
        Some(self.count)
    }
}

impl<T: Clone + Send> IndexedProducer for RepeatN<T> {}

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
/// let v: Vec<(u32, char)> = (0..3u32).into_par_iter().zip(throttle::iter::repeat('a')).collect();
/// assert_eq!(v, [(0, 'a'), (1, 'a'), (2, 'a')]);
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

impl<T: Clone + Send> Producer for Repeat<T> {
    type Item = T;
    type IntoSeq = std::iter::Take<std::iter::Repeat<T>>;
    /// Without end: as many units as a `usize` counts.
    fn base_len(&self) -> usize {
        usize::MAX
    }
    fn split_at(self, _: usize) -> (Self, Self) {
        (self.clone(), self)
    }
    fn into_seq(self) -> Self::IntoSeq {
        std::iter::repeat(self.item).take(usize::MAX)
    }
}

/// `zip` of an endless [`Repeat`] with an exact-length iterator pairs it with as many clones.
impl<T: Clone + Send> IndexedProducer for Repeat<T> {}

/// Pieces made by splitting a value with a function; from [`split`].
pub struct Split<D, S> {
    items: VecIter<D>,
    splitter: PhantomData<fn() -> S>,
}

impl<D: Clone, S> Clone for Split<D, S> {
    fn clone(&self) -> Self {
        Split {
            items: self.items.clone(),
            splitter: PhantomData,
        }
    }
}

impl<D: std::fmt::Debug, S> std::fmt::Debug for Split<D, S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Split").field("items", &self.items).finish()
    }
}

/// A parallel iterator over the pieces that `splitter` cuts `data` into: `splitter(d)` returns
/// `(a, Some(b))` to cut `d` into `a` and `b`, or `(d, None)` to keep it whole. The pieces come
/// in order (left before right).
///
/// The cutting runs first, in parallel on the current pool (each cut's two halves are cut
/// further through `join`), and then the pieces are a `Vec` split as usual.
///
/// # Examples
/// ```
/// use throttle::prelude::*;
/// let pieces: Vec<std::ops::Range<u32>> = throttle::iter::split(0..100u32, |r| {
///     if r.len() <= 30 { return (r, None); }
///     let mid = r.start + r.len() as u32 / 2;
///     (r.start..mid, Some(mid..r.end))
/// }).collect();
/// assert!(pieces.iter().all(|r| r.len() <= 30));
/// assert_eq!(pieces.iter().map(|r| r.len()).sum::<usize>(), 100);
/// ```
pub fn split<D, S>(data: D, splitter: S) -> Split<D, S>
where
    D: Send,
    S: Fn(D) -> (D, Option<D>) + Sync,
{
    fn cut<D: Send, S: Fn(D) -> (D, Option<D>) + Sync>(d: D, s: &S) -> Vec<D> {
        match s(d) {
            (a, None) => vec![a],
            (a, Some(b)) => {
                let (mut l, mut r) = crate::join(|| cut(a, s), || cut(b, s));
                l.append(&mut r);
                l
            }
        }
    }
    Split {
        items: VecIter::new(cut(data, &splitter)),
        splitter: PhantomData,
    }
}

impl<D: Send, S> Producer for Split<D, S> {
    type Item = D;
    type IntoSeq = super::vec::IntoSeq<D>;
    fn base_len(&self) -> usize {
        self.items.base_len()
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        let (l, r) = self.items.split_at(index);
        (
            Split {
                items: l,
                splitter: PhantomData,
            },
            Split {
                items: r,
                splitter: PhantomData,
            },
        )
    }
    fn into_seq(self) -> Self::IntoSeq {
        self.items.into_seq()
    }
}

/// The nodes of a tree; from [`walk_tree_prefix`], [`walk_tree_postfix`] and [`walk_tree`].
pub type WalkTree<T> = VecIter<T>;
/// The nodes of a tree in prefix order; from [`walk_tree_prefix`].
pub type WalkTreePrefix<T> = VecIter<T>;
/// The nodes of a tree in postfix order; from [`walk_tree_postfix`].
pub type WalkTreePostfix<T> = VecIter<T>;

/// Visits a tree from `root`: `children(&node)` gives a node's children. Prefix: a node
/// before its children, children in the order given. The walk runs in parallel (the subtrees
/// of a node through `join`), then the nodes, in that order, are a `Vec` split as usual.
///
/// # Examples
/// ```
/// use throttle::prelude::*;
/// let v: Vec<u32> = throttle::iter::walk_tree_prefix(1u32, |&n| if n < 4 { vec![2 * n, 2 * n + 1] } else { vec![] }).collect();
/// assert_eq!(v, [1, 2, 4, 5, 3, 6, 7]);
/// ```
pub fn walk_tree_prefix<S, B, I>(root: S, children: B) -> WalkTreePrefix<S>
where
    S: Send,
    B: Fn(&S) -> I + Send + Sync,
    I: IntoIterator<Item = S>,
    I::IntoIter: DoubleEndedIterator,
{
    VecIter::new(walk(root, &children, true))
}

/// Visits a tree from `root` in postfix order: a node after its children.
///
/// # Examples
/// ```
/// use throttle::prelude::*;
/// let v: Vec<u32> = throttle::iter::walk_tree_postfix(1u32, |&n| if n < 4 { vec![2 * n, 2 * n + 1] } else { vec![] }).collect();
/// assert_eq!(v, [4, 5, 2, 6, 7, 3, 1]);
/// ```
pub fn walk_tree_postfix<S, B, I>(root: S, children: B) -> WalkTreePostfix<S>
where
    S: Send,
    B: Fn(&S) -> I + Send + Sync,
    I: IntoIterator<Item = S>,
{
    VecIter::new(walk(root, &children, false))
}

/// Visits a tree from `root`, every node once, in some order (here: prefix).
///
/// # Examples
/// ```
/// use throttle::prelude::*;
/// let n = throttle::iter::walk_tree(1u32, |&n| if n < 8 { vec![2 * n, 2 * n + 1] } else { vec![] }).count();
/// assert_eq!(n, 15);
/// ```
pub fn walk_tree<S, B, I>(root: S, children: B) -> WalkTree<S>
where
    S: Send,
    B: Fn(&S) -> I + Send + Sync,
    I: IntoIterator<Item = S>,
    I::IntoIter: DoubleEndedIterator,
{
    walk_tree_prefix(root, children)
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
            let (mut l, mut r) = crate::join(
                || walk_all(nodes, children, prefix),
                || walk_all(right, children, prefix),
            );
            l.append(&mut r);
            l
        }
    }
}
