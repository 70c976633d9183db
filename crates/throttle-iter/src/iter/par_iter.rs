//! [`ParallelIterator`]: rayon's trait of every parallel iterator, its adapters and consumers.
//!
//! This file is a hub: the trait's methods return the adapters (`Map`, `Filter`, `Chain`, ...)
//! and hand the consumers their work, and every adapter implements the trait, so each of those
//! files and this one name each other (a trait names the types its methods return, an impl the
//! trait it implements; rayon's API has the same shape). This file is long because it is that
//! one trait, whose sixty methods each carry their documentation and an example, and a trait
//! cannot be split across files.

use super::collect;
use super::consumers;
use super::find::{self, Mode};
use super::plumbing::UnindexedConsumer;
use super::try_ops::Try;
use super::try_reduce;
use super::{
    Chain, Cloned, Copied, Either, Filter, FilterMap, FlatMap, FlatMapIter, Flatten, FlattenIter,
    Fold, FoldWith, FromParallelIterator, Inspect, Intersperse, IntoParallelIterator, Map, MapInit,
    MapWith, PanicFuse, ParallelExtend, SkipAny, SkipAnyWhile, TakeAny, TakeAnyWhile, TryFold,
    TryFoldWith, Update, WhileSome,
};
use std::cmp::Ordering;
use std::collections::LinkedList;
use std::iter::{Product, Sum};

/// A parallel iterator: a source of items that splits itself between the threads of the current
/// pool (or the global pool), with rayon's adapters and consumers.
///
/// Items are split in order and results combine in order, so `collect`, `reduce`, `find_first`
/// and friends give what the sequential iterator gives. Closures run on any thread of the pool,
/// hence their `Sync + Send` bounds. A panic in a closure is resumed on the caller after the
/// other pieces stopped; items not yet consumed are dropped.
///
/// Implementing it for a type of your own takes [`drive_unindexed`](Self::drive_unindexed)
/// (and, for an exact length, [`opt_len`](Self::opt_len)); see [`plumbing`](super::plumbing).
///
/// # Examples
/// ```
/// use throttle::prelude::*;
/// let v: Vec<u64> = (1..=100).collect();
/// let odd_squares: u64 = v.par_iter().filter(|&&x| x % 2 == 1).map(|&x| x * x).sum();
/// assert_eq!(odd_squares, 166_650);
/// ```
pub trait ParallelIterator: Sized + Send {
    /// The items.
    type Item: Send;

    /// Calls `f` on every item.
    ///
    /// # Examples
    /// ```
    /// use std::sync::atomic::{AtomicU64, Ordering};
    /// use throttle::prelude::*;
    /// let total = AtomicU64::new(0);
    /// (0..100u64).into_par_iter().for_each(|i| { total.fetch_add(i, Ordering::Relaxed); });
    /// assert_eq!(total.into_inner(), 4950);
    /// ```
    #[track_caller]
    fn for_each<OP>(self, op: OP)
    where
        OP: Fn(Self::Item) + Sync + Send,
    {
        consumers::for_each(self, &op)
    }

    /// Calls `op` on every item with a clone of `init` per piece of work.
    ///
    /// # Examples
    /// ```
    /// use std::sync::mpsc::channel;
    /// use throttle::prelude::*;
    /// let (tx, rx) = channel();
    /// (0..5u32).into_par_iter().for_each_with(tx, |tx, x| tx.send(x).unwrap());
    /// let mut got: Vec<u32> = rx.iter().collect();
    /// got.sort();
    /// assert_eq!(got, [0, 1, 2, 3, 4]);
    /// ```
    #[track_caller]
    fn for_each_with<OP, T>(self, init: T, op: OP)
    where
        OP: Fn(&mut T, Self::Item) + Sync + Send,
        T: Send + Clone,
    {
        self.map_with(init, op).for_each(drop)
    }

    /// Calls `f` on every item with a state made by `init`, once per piece of work (not once per
    /// item): for scratch buffers, random number generators and the like.
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// let mut out = vec![String::new(); 4];
    /// out.par_iter_mut().enumerate().for_each_init(String::new, |buf, (i, s)| {
    ///     buf.clear();
    ///     buf.push_str(&i.to_string());
    ///     s.push_str(buf);
    /// });
    /// assert_eq!(out, ["0", "1", "2", "3"]);
    /// ```
    #[track_caller]
    fn for_each_init<OP, INIT, T>(self, init: INIT, op: OP)
    where
        OP: Fn(&mut T, Self::Item) + Sync + Send,
        INIT: Fn() -> T + Sync + Send,
    {
        self.map_init(init, op).for_each(drop)
    }

    /// Calls `f` on every item until one returns an error (`Err`, or `None`): then some
    /// error is returned (not necessarily the first in order), and the pieces still running
    /// stop early. `Ok(())` / `Some(())` if every call succeeded.
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// let v = [1, 2, 3, 0, 5];
    /// let r = v.par_iter().try_for_each(|&x| if x > 0 { Ok(()) } else { Err("zero") });
    /// assert_eq!(r, Err("zero"));
    /// let o = v[..3].par_iter().try_for_each(|&x| (x > 0).then_some(()));
    /// assert_eq!(o, Some(()));
    /// ```
    #[track_caller]
    fn try_for_each<OP, R>(self, op: OP) -> R
    where
        OP: Fn(Self::Item) -> R + Sync + Send,
        R: Try<Output = ()> + Send,
    {
        self.map(op).try_reduce(|| (), |(), ()| R::from_output(()))
    }

    /// [`try_for_each`](ParallelIterator::try_for_each) with a clone of `init` per piece.
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// let r = (0..100u32).into_par_iter()
    ///     .try_for_each_with(7u32, |seven, x| if x != *seven { Ok(()) } else { Err(x) });
    /// assert_eq!(r, Err(7));
    /// ```
    #[track_caller]
    fn try_for_each_with<OP, T, R>(self, init: T, op: OP) -> R
    where
        OP: Fn(&mut T, Self::Item) -> R + Sync + Send,
        T: Send + Clone,
        R: Try<Output = ()> + Send,
    {
        self.map_with(init, op)
            .try_reduce(|| (), |(), ()| R::from_output(()))
    }

    /// [`try_for_each`](ParallelIterator::try_for_each) with a state made by `init` per piece.
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// let r = (0..100u32).into_par_iter()
    ///     .try_for_each_init(String::new, |buf, x| { buf.clear(); buf.push('x'); (x < 200).then_some(()) });
    /// assert_eq!(r, Some(()));
    /// ```
    #[track_caller]
    fn try_for_each_init<OP, INIT, T, R>(self, init: INIT, op: OP) -> R
    where
        OP: Fn(&mut T, Self::Item) -> R + Sync + Send,
        INIT: Fn() -> T + Sync + Send,
        R: Try<Output = ()> + Send,
    {
        self.map_init(init, op)
            .try_reduce(|| (), |(), ()| R::from_output(()))
    }

    /// The number of items.
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// assert_eq!((0..1000u32).into_par_iter().filter(|x| x % 3 == 0).count(), 334);
    /// ```
    #[track_caller]
    fn count(self) -> usize {
        self.map(|_| 1usize).sum()
    }

    /// Maps every item with `f`.
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// let v: Vec<String> = (0..3u8).into_par_iter().map(|i| i.to_string()).collect();
    /// assert_eq!(v, ["0", "1", "2"]);
    /// ```
    fn map<F, R>(self, map_op: F) -> Map<Self, F>
    where
        F: Fn(Self::Item) -> R + Sync + Send,
        R: Send,
    {
        Map::new(self, map_op)
    }

    /// Maps every item with `f` and a clone of `init` per piece of work.
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// let v: Vec<u32> = (0..4u32).into_par_iter().map_with(10u32, |ten, x| x + *ten).collect();
    /// assert_eq!(v, [10, 11, 12, 13]);
    /// ```
    fn map_with<F, T, R>(self, init: T, map_op: F) -> MapWith<Self, T, F>
    where
        F: Fn(&mut T, Self::Item) -> R + Sync + Send,
        T: Send + Clone,
        R: Send,
    {
        MapWith::new(self, init, map_op)
    }

    /// Maps every item with `f` and a state made by `init` once per piece of work.
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// let v: Vec<usize> = ["a", "bb"].par_iter()
    ///     .map_init(Vec::new, |scratch: &mut Vec<u8>, s| {
    ///         scratch.clear();
    ///         scratch.extend_from_slice(s.as_bytes());
    ///         scratch.len()
    ///     })
    ///     .collect();
    /// assert_eq!(v, [1, 2]);
    /// ```
    fn map_init<F, INIT, T, R>(self, init: INIT, map_op: F) -> MapInit<Self, INIT, F>
    where
        F: Fn(&mut T, Self::Item) -> R + Sync + Send,
        INIT: Fn() -> T + Sync + Send,
        R: Send,
    {
        MapInit::new(self, init, map_op)
    }

    /// Clones the items of an iterator over `&T`.
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// let v = vec![String::from("a")];
    /// let w: Vec<String> = v.par_iter().cloned().collect();
    /// assert_eq!(v, w);
    /// ```
    fn cloned<'a, T>(self) -> Cloned<Self>
    where
        T: 'a + Clone + Send,
        Self: ParallelIterator<Item = &'a T>,
    {
        Cloned::new(self)
    }

    /// Copies the items of an iterator over `&T`.
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// let v: Vec<u8> = [1u8, 2].par_iter().copied().collect();
    /// assert_eq!(v, [1, 2]);
    /// ```
    fn copied<'a, T>(self) -> Copied<Self>
    where
        T: 'a + Copy + Send,
        Self: ParallelIterator<Item = &'a T>,
    {
        Copied::new(self)
    }

    /// Calls `f` on a reference to every item as it passes.
    ///
    /// # Examples
    /// ```
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    /// use throttle::prelude::*;
    /// let seen = AtomicUsize::new(0);
    /// let n = (0..10u32).into_par_iter()
    ///     .inspect(|_| { seen.fetch_add(1, Ordering::Relaxed); })
    ///     .count();
    /// assert_eq!((n, seen.into_inner()), (10, 10));
    /// ```
    fn inspect<OP>(self, inspect_op: OP) -> Inspect<Self, OP>
    where
        OP: Fn(&Self::Item) + Sync + Send,
    {
        Inspect::new(self, inspect_op)
    }

    /// Changes every item in place with `f` as it passes.
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// let v: Vec<Vec<u8>> = (0..3u8).into_par_iter().map(|i| vec![i]).update(|v| v.push(9)).collect();
    /// assert_eq!(v, [vec![0, 9], vec![1, 9], vec![2, 9]]);
    /// ```
    fn update<F>(self, update_op: F) -> Update<Self, F>
    where
        F: Fn(&mut Self::Item) + Sync + Send,
    {
        Update::new(self, update_op)
    }

    /// Keeps the items for which `predicate` is true.
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// let evens: Vec<u32> = (0..10u32).into_par_iter().filter(|x| x % 2 == 0).collect();
    /// assert_eq!(evens, [0, 2, 4, 6, 8]);
    /// ```
    fn filter<P>(self, filter_op: P) -> Filter<Self, P>
    where
        P: Fn(&Self::Item) -> bool + Sync + Send,
    {
        Filter::new(self, filter_op)
    }

    /// Maps every item to an `Option` and keeps the `Some` values.
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// let n: Vec<i32> = ["1", "x", "3"].par_iter().filter_map(|s| s.parse().ok()).collect();
    /// assert_eq!(n, [1, 3]);
    /// ```
    fn filter_map<P, R>(self, filter_op: P) -> FilterMap<Self, P>
    where
        P: Fn(Self::Item) -> Option<R> + Sync + Send,
        R: Send,
    {
        FilterMap::new(self, filter_op)
    }

    /// Maps every item to a parallel iterator (a `Vec`, a range, a `par_iter()`, ...) and yields
    /// their items in order. The inner iterators are parallel runs of their own, nested in the
    /// outer one's, so one long inner iterator is split too.
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// let v: Vec<u32> = (1..4u32).into_par_iter().flat_map(|i| (0..i).into_par_iter()).collect();
    /// assert_eq!(v, [0, 0, 1, 0, 1, 2]);
    /// ```
    fn flat_map<F, PI>(self, map_op: F) -> FlatMap<Self, F>
    where
        F: Fn(Self::Item) -> PI + Sync + Send,
        PI: IntoParallelIterator,
    {
        FlatMap::new(self, map_op)
    }

    /// Maps every item to a sequential iterator and yields their items in order.
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// let v: Vec<u32> = (1..4u32).into_par_iter().flat_map_iter(|i| 0..i).collect();
    /// assert_eq!(v, [0, 0, 1, 0, 1, 2]);
    /// ```
    fn flat_map_iter<F, SI>(self, map_op: F) -> FlatMapIter<Self, F>
    where
        F: Fn(Self::Item) -> SI + Sync + Send,
        SI: IntoIterator<Item: Send>,
    {
        FlatMapIter::new(self, map_op)
    }

    /// Flattens items that are parallel iterables (`Vec`s, ranges, ...), in order.
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// let v: Vec<u8> = vec![vec![1u8], vec![], vec![2, 3]].into_par_iter().flatten().collect();
    /// assert_eq!(v, [1, 2, 3]);
    /// ```
    fn flatten(self) -> Flatten<Self>
    where
        Self::Item: IntoParallelIterator,
    {
        Flatten::new(self)
    }

    /// Flattens items that are sequential iterables (`Vec`s, `Option`s, ...), in order.
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// let v: Vec<u8> = vec![vec![1u8], vec![], vec![2, 3]].into_par_iter().flatten_iter().collect();
    /// assert_eq!(v, [1, 2, 3]);
    /// ```
    fn flatten_iter(self) -> FlattenIter<Self>
    where
        Self::Item: IntoIterator<Item: Send>,
    {
        FlattenIter::new(self)
    }

    /// Combines all items with `op`, starting each piece from `identity()`. `op` must be
    /// associative, and `identity()` its neutral element; items combine in order.
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// let s = ["a", "b", "c"].par_iter()
    ///     .map(|s| s.to_string())
    ///     .reduce(String::new, |a, b| a + &b);
    /// assert_eq!(s, "abc");
    /// ```
    #[track_caller]
    fn reduce<OP, ID>(self, identity: ID, op: OP) -> Self::Item
    where
        OP: Fn(Self::Item, Self::Item) -> Self::Item + Sync + Send,
        ID: Fn() -> Self::Item + Sync + Send,
    {
        consumers::reduce(self, &identity, &op)
    }

    /// Combines all items with an associative `op`; `None` if there are none.
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// assert_eq!((1..5u32).into_par_iter().reduce_with(|a, b| a * b), Some(24));
    /// assert_eq!((0..0u32).into_par_iter().reduce_with(|a, b| a * b), None);
    /// ```
    #[track_caller]
    fn reduce_with<OP>(self, op: OP) -> Option<Self::Item>
    where
        OP: Fn(Self::Item, Self::Item) -> Self::Item + Sync + Send,
    {
        self.fold(
            || None,
            |acc, x| {
                Some(match acc {
                    Some(a) => op(a, x),
                    None => x,
                })
            },
        )
        .reduce(
            || None,
            |a, b| match (a, b) {
                (Some(a), Some(b)) => Some(op(a, b)),
                (a, b) => a.or(b),
            },
        )
    }

    /// Reduces items that are `Result`s (or `Option`s) with `op` on their values, as
    /// [`reduce`](ParallelIterator::reduce) does: `identity()` is `op`'s neutral value. Once an
    /// item or an `op` call fails, every piece stops soon after; the result is the first
    /// failure in item order among those met.
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// let ok: Result<u32, String> = (1..5u32).into_par_iter().map(Ok).try_reduce(|| 0, |a, b| Ok(a + b));
    /// assert_eq!(ok, Ok(10));
    /// let checked: Option<u8> = [200u8, 50, 10].par_iter().map(|&x| Some(x)).try_reduce(|| 0, |a, b| a.checked_add(b));
    /// assert_eq!(checked, None);
    /// ```
    #[track_caller]
    fn try_reduce<T, OP, ID>(self, identity: ID, op: OP) -> Self::Item
    where
        OP: Fn(T, T) -> Self::Item + Sync + Send,
        ID: Fn() -> T + Sync + Send,
        Self::Item: Try<Output = T>,
    {
        try_reduce::try_reduce(self, &identity, &op)
    }

    /// Reduces `Result`s (or `Option`s) with `op` on their values; `None` if there are no
    /// items, else the first error met or `Some` of the reduced value.
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// let r = (1..5u32).into_par_iter().map(Ok::<u32, ()>).try_reduce_with(|a, b| Ok(a + b));
    /// assert_eq!(r, Some(Ok(10)));
    /// ```
    #[track_caller]
    fn try_reduce_with<T, OP>(self, op: OP) -> Option<Self::Item>
    where
        OP: Fn(T, T) -> Self::Item + Sync + Send,
        Self::Item: Try<Output = T>,
    {
        try_reduce::try_reduce_with(self, &op)
    }

    /// Folds each piece of work into one accumulator, starting from `identity()`; yields the
    /// accumulators (one per piece, in order) to be combined with `reduce`, `sum`, ...
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// let bytes = b"hello world";
    /// let hist = bytes.par_iter()
    ///     .fold(|| [0usize; 256], |mut h, &b| { h[b as usize] += 1; h })
    ///     .reduce(|| [0usize; 256], |mut a, b| {
    ///         for i in 0..256 { a[i] += b[i]; }
    ///         a
    ///     });
    /// assert_eq!(hist[b'o' as usize], 2);
    /// ```
    fn fold<T, ID, F>(self, identity: ID, fold_op: F) -> Fold<Self, ID, F>
    where
        F: Fn(T, Self::Item) -> T + Sync + Send,
        ID: Fn() -> T + Sync + Send,
        T: Send,
    {
        Fold::new(self, identity, fold_op)
    }

    /// Folds each piece of work into a clone of `init`; yields one accumulator per piece.
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// let total: u32 = (0..100u32).into_par_iter().fold_with(0u32, |a, x| a + x).sum();
    /// assert_eq!(total, 4950);
    /// ```
    fn fold_with<F, T>(self, init: T, fold_op: F) -> FoldWith<Self, T, F>
    where
        F: Fn(T, Self::Item) -> T + Sync + Send,
        T: Send + Clone,
    {
        FoldWith::new(self, init, fold_op)
    }

    /// Folds each piece with a fallible `f`, starting from `identity()`: one `Result` (or
    /// `Option`) per piece, the first failure of the piece if it had one.
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// let r: Result<u32, String> = (0..100u32).into_par_iter()
    ///     .try_fold(|| 0u32, |a, x| a.checked_add(x).ok_or("overflow".to_string()))
    ///     .try_reduce(|| 0, |a, b| Ok(a + b));
    /// assert_eq!(r, Ok(4950));
    /// ```
    fn try_fold<T, R, ID, F>(self, identity: ID, fold_op: F) -> TryFold<Self, R, ID, F>
    where
        F: Fn(T, Self::Item) -> R + Sync + Send,
        ID: Fn() -> T + Sync + Send,
        R: Try<Output = T> + Send,
    {
        TryFold::new(self, identity, fold_op)
    }

    /// [`try_fold`](ParallelIterator::try_fold) starting each piece from a clone of `init`.
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// let r: Option<u8> = (0..10u8).into_par_iter()
    ///     .try_fold_with(0u8, |a, x| a.checked_add(x))
    ///     .try_reduce(|| 0, |a, b| a.checked_add(b));
    /// assert_eq!(r, Some(45));
    /// ```
    fn try_fold_with<F, T, R>(self, init: T, fold_op: F) -> TryFoldWith<Self, R, F>
    where
        F: Fn(T, Self::Item) -> R + Sync + Send,
        R: Try<Output = T> + Send,
        T: Clone + Send,
    {
        TryFoldWith::new(self, init, fold_op)
    }

    /// The sum of the items. Floating-point sums may differ from the sequential sum in the last
    /// bits, since they add in a different grouping.
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// let v = vec![0.5f64; 1000];
    /// assert_eq!(v.par_iter().sum::<f64>(), 500.0);
    /// ```
    #[track_caller]
    fn sum<S>(self) -> S
    where
        S: Send + Sum<Self::Item> + Sum<S>,
    {
        consumers::sum(self)
    }

    /// The product of the items.
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// assert_eq!((1..=10u64).collect::<Vec<_>>().par_iter().product::<u64>(), 3_628_800);
    /// ```
    #[track_caller]
    fn product<P>(self) -> P
    where
        P: Send + Product<Self::Item> + Product<P>,
    {
        consumers::product(self)
    }

    /// The least item (the first of equal ones); `None` if there are none.
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// assert_eq!([4, 2, 9].par_iter().min(), Some(&2));
    /// ```
    #[track_caller]
    fn min(self) -> Option<Self::Item>
    where
        Self::Item: Ord,
    {
        self.reduce_with(std::cmp::min)
    }

    /// The least item by `compare` (the first of equal ones).
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// let m = [2.5f64, -1.0, 3.0].par_iter().min_by(|a, b| a.total_cmp(b));
    /// assert_eq!(m, Some(&-1.0));
    /// ```
    #[track_caller]
    fn min_by<F>(self, f: F) -> Option<Self::Item>
    where
        F: Sync + Send + Fn(&Self::Item, &Self::Item) -> Ordering,
    {
        self.reduce_with(|a, b| match f(&a, &b) {
            Ordering::Greater => b,
            _ => a,
        })
    }

    /// The item with the least key (the first of equal ones).
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// let w = ["ccc", "a", "bb"].par_iter().min_by_key(|s| s.len());
    /// assert_eq!(w, Some(&"a"));
    /// ```
    #[track_caller]
    fn min_by_key<K, F>(self, f: F) -> Option<Self::Item>
    where
        K: Ord + Send,
        F: Sync + Send + Fn(&Self::Item) -> K,
    {
        let (_, x) = self
            .map(|x| (f(&x), x))
            .reduce_with(|a, b| match a.0.cmp(&b.0) {
                Ordering::Greater => b,
                _ => a,
            })?;
        Some(x)
    }

    /// The greatest item (the last of equal ones); `None` if there are none.
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// assert_eq!([4, 2, 9].par_iter().max(), Some(&9));
    /// ```
    #[track_caller]
    fn max(self) -> Option<Self::Item>
    where
        Self::Item: Ord,
    {
        self.reduce_with(std::cmp::max)
    }

    /// The greatest item by `compare` (the last of equal ones).
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// let m = [2.5f64, -1.0, 3.0].par_iter().max_by(|a, b| a.total_cmp(b));
    /// assert_eq!(m, Some(&3.0));
    /// ```
    #[track_caller]
    fn max_by<F>(self, f: F) -> Option<Self::Item>
    where
        F: Sync + Send + Fn(&Self::Item, &Self::Item) -> Ordering,
    {
        self.reduce_with(|a, b| match f(&a, &b) {
            Ordering::Greater => a,
            _ => b,
        })
    }

    /// The item with the greatest key (the last of equal ones).
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// let w = ["ccc", "a", "bb"].par_iter().max_by_key(|s| s.len());
    /// assert_eq!(w, Some(&"ccc"));
    /// ```
    #[track_caller]
    fn max_by_key<K, F>(self, f: F) -> Option<Self::Item>
    where
        K: Ord + Send,
        F: Sync + Send + Fn(&Self::Item) -> K,
    {
        let (_, x) = self
            .map(|x| (f(&x), x))
            .reduce_with(|a, b| match a.0.cmp(&b.0) {
                Ordering::Greater => a,
                _ => b,
            })?;
        Some(x)
    }

    /// The items of `self`, then those of `other`.
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// let v: Vec<u32> = (0..2u32).into_par_iter().chain(vec![7u32, 8]).collect();
    /// assert_eq!(v, [0, 1, 7, 8]);
    /// ```
    fn chain<C>(self, chain: C) -> Chain<Self, C::Iter>
    where
        C: IntoParallelIterator<Item = Self::Item>,
    {
        Chain::new(self, chain.into_par_iter())
    }

    /// Some item for which `predicate` holds (not necessarily the first); stops early.
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// let hit = (0..1000u32).into_par_iter().find_any(|x| x % 100 == 99);
    /// assert!(matches!(hit, Some(x) if x % 100 == 99));
    /// ```
    #[track_caller]
    fn find_any<P>(self, predicate: P) -> Option<Self::Item>
    where
        P: Fn(&Self::Item) -> bool + Sync + Send,
    {
        find::find(self, &predicate, Mode::Any)
    }

    /// The first item for which `predicate` holds; pieces after a found item stop early.
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// let hit = (0..1000u32).into_par_iter().find_first(|x| x % 100 == 99);
    /// assert_eq!(hit, Some(99));
    /// ```
    #[track_caller]
    fn find_first<P>(self, predicate: P) -> Option<Self::Item>
    where
        P: Fn(&Self::Item) -> bool + Sync + Send,
    {
        find::find(self, &predicate, Mode::First)
    }

    /// The last item for which `predicate` holds; pieces before a found item stop early.
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// assert_eq!((0..1000u32).into_par_iter().find_last(|x| x % 100 == 1), Some(901));
    /// ```
    #[track_caller]
    fn find_last<P>(self, predicate: P) -> Option<Self::Item>
    where
        P: Fn(&Self::Item) -> bool + Sync + Send,
    {
        find::find(self, &predicate, Mode::Last)
    }

    /// Some `Some` value of `f` (not necessarily the first); stops early.
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// let n = ["x", "7", "y"].par_iter().find_map_any(|s| s.parse::<u8>().ok());
    /// assert_eq!(n, Some(7));
    /// ```
    #[track_caller]
    fn find_map_any<P, R>(self, predicate: P) -> Option<R>
    where
        P: Fn(Self::Item) -> Option<R> + Sync + Send,
        R: Send,
    {
        self.filter_map(predicate).find_any(|_| true)
    }

    /// The first `Some` value of `f`, in item order.
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// let n = ["x", "7", "8"].par_iter().find_map_first(|s| s.parse::<u8>().ok());
    /// assert_eq!(n, Some(7));
    /// ```
    #[track_caller]
    fn find_map_first<P, R>(self, predicate: P) -> Option<R>
    where
        P: Fn(Self::Item) -> Option<R> + Sync + Send,
        R: Send,
    {
        self.filter_map(predicate).find_first(|_| true)
    }

    /// The last `Some` value of `f`, in item order.
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// let n = ["x", "7", "8", "y"].par_iter().find_map_last(|s| s.parse::<u8>().ok());
    /// assert_eq!(n, Some(8));
    /// ```
    #[track_caller]
    fn find_map_last<P, R>(self, predicate: P) -> Option<R>
    where
        P: Fn(Self::Item) -> Option<R> + Sync + Send,
        R: Send,
    {
        self.filter_map(predicate).find_last(|_| true)
    }

    /// Some item for which `predicate` holds: the same as
    /// [`find_any`](ParallelIterator::find_any) (rayon's older name).
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// #[allow(deprecated)]
    /// let hit = (0..10u32).into_par_iter().find(|&x| x == 3);
    /// assert_eq!(hit, Some(3));
    /// ```
    #[deprecated(note = "parallel `find` does not search in order -- use `find_any`, \
                         `find_first`, or `find_last`")]
    #[track_caller]
    fn find<P>(self, predicate: P) -> Option<Self::Item>
    where
        P: Fn(&Self::Item) -> bool + Sync + Send,
    {
        self.find_any(predicate)
    }

    /// True if `predicate` holds for some item; stops early once one is found.
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// assert!((0..1000u32).into_par_iter().any(|x| x == 777));
    /// ```
    #[track_caller]
    fn any<P>(self, predicate: P) -> bool
    where
        P: Fn(Self::Item) -> bool + Sync + Send,
    {
        self.map(predicate).find_any(|&hit| hit).is_some()
    }

    /// True if `predicate` holds for every item; stops early once one fails.
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// assert!((0..1000u32).into_par_iter().all(|x| x < 1000));
    /// ```
    #[track_caller]
    fn all<P>(self, predicate: P) -> bool
    where
        P: Fn(Self::Item) -> bool + Sync + Send,
    {
        self.map(predicate).find_any(|&ok| !ok).is_none()
    }

    /// The `Some` values, stopping once a `None` is seen. Pieces running at that moment stop
    /// at their next item, so values after the `None` may be kept and values before it may be
    /// missed, as in rayon; which pieces those are depends on timing.
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// let v: Vec<u32> = vec![Some(1), Some(2)].into_par_iter().while_some().collect();
    /// assert_eq!(v, [1, 2]);
    /// let none: Vec<u32> = vec![None, None].into_par_iter().while_some().collect();
    /// assert!(none.is_empty());
    /// ```
    fn while_some<T>(self) -> WhileSome<Self>
    where
        Self: ParallelIterator<Item = Option<T>>,
        T: Send,
    {
        WhileSome::new(self)
    }

    /// Once a closure panicked in one piece, the other pieces stop at their next item (the
    /// panic still reaches the caller).
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// let r = std::panic::catch_unwind(|| {
    ///     (0..10_000u32).into_par_iter().panic_fuse().for_each(|x| assert!(x != 42));
    /// });
    /// assert!(r.is_err());
    /// ```
    fn panic_fuse(self) -> PanicFuse<Self> {
        PanicFuse::new(self)
    }

    /// Collects the items, in order, into a collection: see [`FromParallelIterator`].
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// let v: Vec<u32> = (0..5u32).into_par_iter().map(|x| x * 10).collect();
    /// assert_eq!(v, [0, 10, 20, 30, 40]);
    /// let r: Result<Vec<u32>, String> = ["1", "2"].par_iter()
    ///     .map(|s| s.parse::<u32>().map_err(|e| e.to_string()))
    ///     .collect();
    /// assert_eq!(r, Ok(vec![1, 2]));
    /// ```
    #[track_caller]
    fn collect<C>(self) -> C
    where
        C: FromParallelIterator<Self::Item>,
    {
        C::from_par_iter(self)
    }

    /// Splits pairs into two collections, in order.
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// let (a, b): (Vec<u32>, Vec<char>) = [(1, 'a'), (2, 'b')].par_iter().copied().unzip();
    /// assert_eq!((a, b), (vec![1, 2], vec!['a', 'b']));
    /// ```
    #[track_caller]
    fn unzip<A, B, FromA, FromB>(self) -> (FromA, FromB)
    where
        Self: ParallelIterator<Item = (A, B)>,
        FromA: Default + Send + ParallelExtend<A>,
        FromB: Default + Send + ParallelExtend<B>,
        A: Send,
        B: Send,
    {
        collect::unzip(self)
    }

    /// Splits the items into those for which `predicate` holds and the others, in order.
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// let (even, odd): (Vec<u32>, Vec<u32>) = (0..6u32).into_par_iter().partition(|x| x % 2 == 0);
    /// assert_eq!((even, odd), (vec![0, 2, 4], vec![1, 3, 5]));
    /// ```
    #[track_caller]
    fn partition<A, B, P>(self, predicate: P) -> (A, B)
    where
        A: Default + Send + ParallelExtend<Self::Item>,
        B: Default + Send + ParallelExtend<Self::Item>,
        P: Fn(&Self::Item) -> bool + Sync + Send,
    {
        collect::partition(self.map(|x| {
            if predicate(&x) {
                Either::Left(x)
            } else {
                Either::Right(x)
            }
        }))
    }

    /// Maps every item to [`Either`] and collects the `Left`s and the `Right`s apart, in order.
    ///
    /// # Examples
    /// ```
    /// use throttle::iter::Either;
    /// use throttle::prelude::*;
    /// let (small, big): (Vec<u32>, Vec<String>) = (0..5u32).into_par_iter()
    ///     .partition_map(|x| if x < 3 { Either::Left(x) } else { Either::Right(x.to_string()) });
    /// assert_eq!((small, big), (vec![0, 1, 2], vec!["3".to_string(), "4".to_string()]));
    /// ```
    #[track_caller]
    fn partition_map<A, B, P, L, R>(self, predicate: P) -> (A, B)
    where
        A: Default + Send + ParallelExtend<L>,
        B: Default + Send + ParallelExtend<R>,
        P: Fn(Self::Item) -> Either<L, R> + Sync + Send,
        L: Send,
        R: Send,
    {
        collect::partition(self.map(predicate))
    }

    /// A separator between every two items, in order.
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// let v: Vec<i32> = (1..4).into_par_iter().intersperse(0).collect();
    /// assert_eq!(v, [1, 0, 2, 0, 3]);
    /// ```
    fn intersperse(self, element: Self::Item) -> Intersperse<Self>
    where
        Self::Item: Clone,
    {
        Intersperse::new(self, element)
    }

    /// At most `n` items, any of them (not necessarily the first); stops once it has them.
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// let v: Vec<u32> = (0..1000u32).into_par_iter().take_any(10).collect();
    /// assert_eq!(v.len(), 10);
    /// ```
    fn take_any(self, n: usize) -> TakeAny<Self> {
        TakeAny::new(self, n)
    }

    /// All items but `n` of them, any `n` (not necessarily the first).
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// assert_eq!((0..1000u32).into_par_iter().skip_any(10).count(), 990);
    /// ```
    fn skip_any(self, n: usize) -> SkipAny<Self> {
        SkipAny::new(self, n)
    }

    /// Items while `predicate` holds, from anywhere; once it failed for some item, the pieces
    /// stop (items after that one in other pieces may already have been taken).
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// let v: Vec<u32> = (0..1000u32).into_par_iter().take_any_while(|&x| x < 1000).collect();
    /// assert_eq!(v.len(), 1000);
    /// ```
    fn take_any_while<P>(self, predicate: P) -> TakeAnyWhile<Self, P>
    where
        P: Fn(&Self::Item) -> bool + Sync + Send,
    {
        TakeAnyWhile::new(self, predicate)
    }

    /// Skips items while `predicate` holds, from anywhere; once it failed for some item, all
    /// items not yet skipped are yielded.
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// let v: Vec<u32> = (0..100u32).into_par_iter().skip_any_while(|_| false).collect();
    /// assert_eq!(v.len(), 100);
    /// ```
    fn skip_any_while<P>(self, predicate: P) -> SkipAnyWhile<Self, P>
    where
        P: Fn(&Self::Item) -> bool + Sync + Send,
    {
        SkipAnyWhile::new(self, predicate)
    }

    /// The items as a list of `Vec`s, in order (one per piece of work): a cheap way to gather
    /// items when the shape of the result does not matter.
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// let list = (0..100u32).into_par_iter().collect_vec_list();
    /// let flat: Vec<u32> = list.into_iter().flatten().collect();
    /// assert_eq!(flat, (0..100).collect::<Vec<_>>());
    /// ```
    #[track_caller]
    fn collect_vec_list(self) -> LinkedList<Vec<Self::Item>> {
        collect::vec_list(self)
    }

    /// Drives the iterator into `consumer`: the one method an implementation must write (see
    /// [`plumbing`](super::plumbing)). Adapters wrap the consumer and pass it to their base;
    /// sources hand it to a bridge. Called by the consumer methods; call it yourself only with
    /// a consumer of your own.
    ///
    /// # Examples
    /// ```
    /// use throttle::iter::plumbing::*;
    /// use throttle::prelude::*;
    ///
    /// /// The even numbers of a range, as a parallel iterator of its own.
    /// struct Evens(std::ops::Range<u32>);
    /// impl ParallelIterator for Evens {
    ///     type Item = u32;
    ///     fn drive_unindexed<C: UnindexedConsumer<u32>>(self, consumer: C) -> C::Result {
    ///         self.0.into_par_iter().filter(|x| x % 2 == 0).drive_unindexed(consumer)
    ///     }
    /// }
    /// assert_eq!(Evens(0..10).sum::<u32>(), 20);
    /// ```
    fn drive_unindexed<C>(self, consumer: C) -> C::Result
    where
        C: UnindexedConsumer<Self::Item>;

    /// The number of items, if known without running it (for exact-length iterators), else
    /// `None` (the default).
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// assert_eq!((0..10u32).into_par_iter().opt_len(), Some(10));
    /// assert_eq!((0..10u32).into_par_iter().filter(|x| x % 2 == 0).opt_len(), None);
    /// ```
    fn opt_len(&self) -> Option<usize> {
        None
    }
}
