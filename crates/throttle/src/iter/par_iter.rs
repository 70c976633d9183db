//! [`ParallelIterator`]: the adapters and consumers every parallel iterator has.

use super::adapters::{
    Cloned, Copied, Filter, FilterMap, FlatMap, FlatMapIter, Fold, Inspect, Map, MapInit, MinLen,
};
use super::chain::Chain;
use super::collect::collect_chunks;
use super::collect::FromParallelIterator;
use super::consumers::{concat, FindMapLast, PartitionMapChunks};
use super::consumers::{
    Count, Extreme, FindMapAny, FindMapFirst, ForEach, PartitionChunks, Product, Reduce,
    ReduceWith, Sum, UnzipChunks,
};
use super::extend::ParallelExtend;
use super::interleave::Intersperse;
use super::plumbing::{bridge, Producer};
use super::stop::{PanicFuse, SkipAny, SkipAnyWhile, TakeAny, TakeAnyWhile, WhileSome};
use super::try_ops::Try;
use super::with::{FoldWith, MapWith, TryFold, TryFoldWith, Update};
use super::Flatten;
use super::IntoParallelIterator;
use either::Either;
use std::cmp::Ordering;
use std::collections::LinkedList;
use std::marker::PhantomData;
use std::sync::atomic::{AtomicBool, AtomicUsize};
use std::sync::Arc;

/// A parallel iterator: a source of items that splits itself between the threads of the current
/// pool (or the global pool), with rayon's adapters and consumers.
///
/// Items are split in order and results combine in order, so `collect`, `reduce`, `find_first`
/// and friends give what the sequential iterator gives. Closures run on any thread of the pool,
/// hence their `Sync + Send` bounds. A panic in a closure is resumed on the caller after the
/// other pieces stopped; items not yet consumed are dropped.
///
/// Every [`Producer`] is a parallel iterator (this trait is implemented for them all).
///
/// # Examples
/// ```
/// use throttle::prelude::*;
/// let v: Vec<u64> = (1..=100).collect();
/// let odd_squares: u64 = v.par_iter().filter(|&&x| x % 2 == 1).map(|&x| x * x).sum();
/// assert_eq!(odd_squares, 166_650);
/// ```
pub trait ParallelIterator: Producer<Item: Send> {
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
    fn for_each<F>(self, f: F)
    where
        F: Fn(Self::Item) + Sync + Send,
    {
        bridge(self, &ForEach(&f))
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
    fn for_each_init<INIT, S, F>(self, init: INIT, f: F)
    where
        INIT: Fn() -> S + Sync + Send,
        F: Fn(&mut S, Self::Item) + Sync + Send,
    {
        self.map_init(init, f).for_each(|()| ())
    }

    /// Maps every item with `f`.
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// let v: Vec<String> = (0..3u8).into_par_iter().map(|i| i.to_string()).collect();
    /// assert_eq!(v, ["0", "1", "2"]);
    /// ```
    fn map<F, R>(self, f: F) -> Map<Self, F>
    where
        F: Fn(Self::Item) -> R + Sync + Send,
        R: Send,
    {
        Map {
            base: self,
            f: Arc::new(f),
        }
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
    fn map_init<INIT, S, F, R>(self, init: INIT, f: F) -> MapInit<Self, INIT, F>
    where
        INIT: Fn() -> S + Sync + Send,
        F: Fn(&mut S, Self::Item) -> R + Sync + Send,
        R: Send,
    {
        MapInit {
            base: self,
            init: Arc::new(init),
            f: Arc::new(f),
        }
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
    fn inspect<F>(self, f: F) -> Inspect<Self, F>
    where
        F: Fn(&Self::Item) + Sync + Send,
    {
        Inspect {
            base: self,
            f: Arc::new(f),
        }
    }

    /// Keeps the items for which `predicate` is true.
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// let evens: Vec<u32> = (0..10u32).into_par_iter().filter(|x| x % 2 == 0).collect();
    /// assert_eq!(evens, [0, 2, 4, 6, 8]);
    /// ```
    fn filter<F>(self, predicate: F) -> Filter<Self, F>
    where
        F: Fn(&Self::Item) -> bool + Sync + Send,
    {
        Filter {
            base: self,
            f: Arc::new(predicate),
        }
    }

    /// Maps every item to an `Option` and keeps the `Some` values.
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// let n: Vec<i32> = ["1", "x", "3"].par_iter().filter_map(|s| s.parse().ok()).collect();
    /// assert_eq!(n, [1, 3]);
    /// ```
    fn filter_map<F, R>(self, f: F) -> FilterMap<Self, F>
    where
        F: Fn(Self::Item) -> Option<R> + Sync + Send,
        R: Send,
    {
        FilterMap {
            base: self,
            f: Arc::new(f),
        }
    }

    /// Maps every item to a sequential iterator and yields their items in order.
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// let v: Vec<u32> = (1..4u32).into_par_iter().flat_map_iter(|i| 0..i).collect();
    /// assert_eq!(v, [0, 0, 1, 0, 1, 2]);
    /// ```
    fn flat_map_iter<F, U>(self, f: F) -> FlatMapIter<Self, F>
    where
        F: Fn(Self::Item) -> U + Sync + Send,
        U: IntoIterator,
        U::Item: Send,
    {
        FlatMapIter {
            base: self,
            f: Arc::new(f),
        }
    }

    /// Maps every item to a parallel iterator (a `Vec`, a range, a `par_iter()`, ...) and yields
    /// their items in order. The outer iterator is split; each inner one runs sequentially.
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// let v: Vec<u32> = (1..4u32).into_par_iter().flat_map(|i| (0..i).into_par_iter()).collect();
    /// assert_eq!(v, [0, 0, 1, 0, 1, 2]);
    /// ```
    fn flat_map<F, U>(self, f: F) -> FlatMap<Self, F>
    where
        F: Fn(Self::Item) -> U + Sync + Send,
        U: IntoParallelIterator,
    {
        FlatMap {
            base: self,
            f: Arc::new(f),
        }
    }

    /// Flattens items that are sequential iterables (`Vec`s, `Option`s, ...), in order.
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// let v: Vec<u8> = vec![vec![1u8], vec![], vec![2, 3]].into_par_iter().flatten_iter().collect();
    /// assert_eq!(v, [1, 2, 3]);
    /// ```
    #[allow(clippy::type_complexity)]
    fn flatten_iter(self) -> FlatMapIter<Self, fn(Self::Item) -> Self::Item>
    where
        Self::Item: IntoIterator,
        <Self::Item as IntoIterator>::Item: Send,
    {
        FlatMapIter {
            base: self,
            f: Arc::new(std::convert::identity),
        }
    }

    /// The items of `self`, then those of `other`.
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// let v: Vec<u32> = (0..2u32).into_par_iter().chain(vec![7u32, 8]).collect();
    /// assert_eq!(v, [0, 1, 7, 8]);
    /// ```
    fn chain<C>(self, other: C) -> Chain<Self, C::Iter>
    where
        C: IntoParallelIterator<Item = Self::Item>,
    {
        Chain {
            a: self,
            b: other.into_par_iter(),
        }
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
        T: 'a + Copy + Send + Sync,
        Self: ParallelIterator<Item = &'a T>,
    {
        Copied { base: self }
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
        T: 'a + Clone + Send + Sync,
        Self: ParallelIterator<Item = &'a T>,
    {
        Cloned { base: self }
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
    fn fold<T, ID, F>(self, identity: ID, f: F) -> Fold<Self, ID, F>
    where
        ID: Fn() -> T + Sync + Send,
        F: Fn(T, Self::Item) -> T + Sync + Send,
        T: Send,
    {
        Fold {
            base: self,
            identity: Arc::new(identity),
            f: Arc::new(f),
        }
    }

    /// Never splits the work into pieces shorter than `min` (in units of the source: items of
    /// a slice or range): a way to keep tiny items together when each costs next to nothing.
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// let s: u64 = (0..10_000u64).into_par_iter().with_min_len(1000).sum();
    /// assert_eq!(s, 49_995_000);
    /// ```
    fn with_min_len(self, min: usize) -> MinLen<Self> {
        MinLen { base: self, min }
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
    fn reduce<ID, OP>(self, identity: ID, op: OP) -> Self::Item
    where
        ID: Fn() -> Self::Item + Sync + Send,
        OP: Fn(Self::Item, Self::Item) -> Self::Item + Sync + Send,
    {
        bridge(
            self,
            &Reduce {
                identity: &identity,
                op: &op,
            },
        )
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
        bridge(self, &ReduceWith(&op))
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
        S: Send + std::iter::Sum<Self::Item> + std::iter::Sum<S>,
    {
        bridge(self, &Sum(PhantomData))
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
        P: Send + std::iter::Product<Self::Item> + std::iter::Product<P>,
    {
        bridge(self, &Product(PhantomData))
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
        bridge(self, &Count)
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
        self.min_by(Ord::cmp)
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
        self.max_by(Ord::cmp)
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
    fn min_by<F>(self, compare: F) -> Option<Self::Item>
    where
        F: Fn(&Self::Item, &Self::Item) -> Ordering + Sync + Send,
    {
        bridge(
            self,
            &Extreme {
                compare: &compare,
                max: false,
            },
        )
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
    fn max_by<F>(self, compare: F) -> Option<Self::Item>
    where
        F: Fn(&Self::Item, &Self::Item) -> Ordering + Sync + Send,
    {
        bridge(
            self,
            &Extreme {
                compare: &compare,
                max: true,
            },
        )
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
    fn min_by_key<K, F>(self, key: F) -> Option<Self::Item>
    where
        K: Ord,
        F: Fn(&Self::Item) -> K + Sync + Send,
    {
        self.min_by(|a, b| key(a).cmp(&key(b)))
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
    fn max_by_key<K, F>(self, key: F) -> Option<Self::Item>
    where
        K: Ord,
        F: Fn(&Self::Item) -> K + Sync + Send,
    {
        self.max_by(|a, b| key(a).cmp(&key(b)))
    }

    /// True if `predicate` holds for some item; stops early once one is found.
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// assert!((0..1000u32).into_par_iter().any(|x| x == 777));
    /// ```
    #[track_caller]
    fn any<F>(self, predicate: F) -> bool
    where
        F: Fn(Self::Item) -> bool + Sync + Send,
    {
        self.find_map_any(|x| predicate(x).then_some(())).is_some()
    }

    /// True if `predicate` holds for every item; stops early once one fails.
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// assert!((0..1000u32).into_par_iter().all(|x| x < 1000));
    /// ```
    #[track_caller]
    fn all<F>(self, predicate: F) -> bool
    where
        F: Fn(Self::Item) -> bool + Sync + Send,
    {
        self.find_map_any(|x| (!predicate(x)).then_some(()))
            .is_none()
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
    fn find_any<F>(self, predicate: F) -> Option<Self::Item>
    where
        F: Fn(&Self::Item) -> bool + Sync + Send,
    {
        self.find_map_any(|x| if predicate(&x) { Some(x) } else { None })
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
    fn find_first<F>(self, predicate: F) -> Option<Self::Item>
    where
        F: Fn(&Self::Item) -> bool + Sync + Send,
    {
        self.find_map_first(|x| if predicate(&x) { Some(x) } else { None })
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
    fn find_map_any<F, R>(self, f: F) -> Option<R>
    where
        F: Fn(Self::Item) -> Option<R> + Sync + Send,
        R: Send,
    {
        bridge(
            self,
            &FindMapAny {
                f: &f,
                found: AtomicBool::new(false),
            },
        )
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
    fn find_map_first<F, R>(self, f: F) -> Option<R>
    where
        F: Fn(Self::Item) -> Option<R> + Sync + Send,
        R: Send,
    {
        bridge(
            self,
            &FindMapFirst {
                f: &f,
                best: AtomicUsize::new(usize::MAX),
            },
        )
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
    fn try_for_each<F, R>(self, f: F) -> R
    where
        F: Fn(Self::Item) -> R + Sync + Send,
        R: Try<Output = ()> + Send,
        R::Residual: Send,
    {
        let stop = self.find_map_any(|x| match f(x).branch() {
            std::ops::ControlFlow::Continue(()) => None,
            std::ops::ControlFlow::Break(residual) => Some(residual),
        });
        match stop {
            Some(residual) => R::from_residual(residual),
            None => R::from_output(()),
        }
    }

    /// Reduces items that are `Result`s (or `Option`s) with `op` on their values, as
    /// [`reduce`](ParallelIterator::reduce) does: `identity()` is `op`'s neutral value. Returns
    /// the first error met in item order of those seen; once an item or an `op` call fails,
    /// the remaining `op` calls are skipped (the remaining items are still visited).
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
    fn try_reduce<T, ID, OP>(self, identity: ID, op: OP) -> Self::Item
    where
        Self::Item: Try<Output = T>,
        <Self::Item as Try>::Residual: Send,
        T: Send,
        ID: Fn() -> T + Sync + Send,
        OP: Fn(T, T) -> Self::Item + Sync + Send,
    {
        use std::ops::ControlFlow::{Break, Continue};
        let failed = AtomicBool::new(false);
        let flow = self.map(Try::branch).reduce(
            || Continue(identity()),
            |a, b| match (a, b) {
                (Continue(a), Continue(b)) => {
                    if failed.load(std::sync::atomic::Ordering::Relaxed) {
                        // Some other piece failed: its error wins whatever we compute.
                        return Continue(a);
                    }
                    let r = op(a, b).branch();
                    if r.is_break() {
                        failed.store(true, std::sync::atomic::Ordering::Relaxed);
                    }
                    r
                }
                (Break(r), _) | (_, Break(r)) => {
                    failed.store(true, std::sync::atomic::Ordering::Relaxed);
                    Break(r)
                }
            },
        );
        match flow {
            Continue(t) => Try::from_output(t),
            Break(r) => Try::from_residual(r),
        }
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
        let (la, lb) = bridge(self, &UnzipChunks);
        let (mut a, mut b) = (FromA::default(), FromB::default());
        a.par_extend(concat(la));
        b.par_extend(concat(lb));
        (a, b)
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
        let (la, lb) = bridge(self, &PartitionChunks(&predicate));
        let (mut a, mut b) = (A::default(), B::default());
        a.par_extend(concat(la));
        b.par_extend(concat(lb));
        (a, b)
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
        let (la, lb) = bridge(self, &PartitionMapChunks(&predicate));
        let (mut a, mut b) = (A::default(), B::default());
        a.par_extend(concat(la));
        b.par_extend(concat(lb));
        (a, b)
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
        self.map_with(init, op).for_each(|()| ())
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
        R::Residual: Send,
    {
        self.map_with(init, op).try_for_each(|r| r)
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
        R::Residual: Send,
    {
        self.map_init(init, op).try_for_each(|r| r)
    }

    /// Maps every item with `f` and a clone of `init` per piece of work.
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// let v: Vec<u32> = (0..4u32).into_par_iter().map_with(10u32, |ten, x| x + *ten).collect();
    /// assert_eq!(v, [10, 11, 12, 13]);
    /// ```
    fn map_with<F, T, R>(self, init: T, f: F) -> MapWith<Self, T, F>
    where
        F: Fn(&mut T, Self::Item) -> R + Sync + Send,
        T: Send + Clone,
        R: Send,
    {
        MapWith {
            base: self,
            item: init,
            f: Arc::new(f),
        }
    }

    /// Changes every item in place with `f` as it passes.
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// let v: Vec<Vec<u8>> = (0..3u8).into_par_iter().map(|i| vec![i]).update(|v| v.push(9)).collect();
    /// assert_eq!(v, [vec![0, 9], vec![1, 9], vec![2, 9]]);
    /// ```
    fn update<F>(self, f: F) -> Update<Self, F>
    where
        F: Fn(&mut Self::Item) + Sync + Send,
    {
        Update {
            base: self,
            f: Arc::new(f),
        }
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
        FlatMap {
            base: self,
            f: Arc::new(std::convert::identity),
        }
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
        <Self::Item as Try>::Residual: Send,
        T: Send,
    {
        use std::ops::ControlFlow::{Break, Continue};
        let failed = AtomicBool::new(false);
        let flow = self.map(Try::branch).reduce_with(|a, b| match (a, b) {
            (Continue(a), Continue(b)) => {
                if failed.load(std::sync::atomic::Ordering::Relaxed) {
                    // Some other piece failed: its error wins whatever we compute.
                    return Continue(a);
                }
                let r = op(a, b).branch();
                if r.is_break() {
                    failed.store(true, std::sync::atomic::Ordering::Relaxed);
                }
                r
            }
            (Break(r), _) | (_, Break(r)) => {
                failed.store(true, std::sync::atomic::Ordering::Relaxed);
                Break(r)
            }
        })?;
        Some(match flow {
            Continue(t) => Try::from_output(t),
            Break(r) => Try::from_residual(r),
        })
    }

    /// Folds each piece of work into a clone of `init`; yields one accumulator per piece.
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// let total: u32 = (0..100u32).into_par_iter().fold_with(0u32, |a, x| a + x).sum();
    /// assert_eq!(total, 4950);
    /// ```
    fn fold_with<F, T>(self, init: T, f: F) -> FoldWith<Self, T, F>
    where
        F: Fn(T, Self::Item) -> T + Sync + Send,
        T: Send + Clone,
    {
        FoldWith {
            base: self,
            item: init,
            f: Arc::new(f),
        }
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
    fn try_fold<T, R, ID, F>(self, identity: ID, f: F) -> TryFold<Self, ID, F>
    where
        F: Fn(T, Self::Item) -> R + Sync + Send,
        ID: Fn() -> T + Sync + Send,
        R: Try<Output = T> + Send,
    {
        TryFold {
            base: self,
            identity: Arc::new(identity),
            f: Arc::new(f),
        }
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
    fn try_fold_with<F, T, R>(self, init: T, f: F) -> TryFoldWith<Self, T, F>
    where
        F: Fn(T, Self::Item) -> R + Sync + Send,
        R: Try<Output = T> + Send,
        T: Clone + Send,
    {
        TryFoldWith {
            base: self,
            item: init,
            f: Arc::new(f),
        }
    }

    /// The last item for which `predicate` holds; pieces before a found item stop early.
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// assert_eq!((0..1000u32).into_par_iter().find_last(|x| x % 100 == 1), Some(901));
    /// ```
    #[track_caller]
    fn find_last<F>(self, predicate: F) -> Option<Self::Item>
    where
        F: Fn(&Self::Item) -> bool + Sync + Send,
    {
        self.find_map_last(|x| if predicate(&x) { Some(x) } else { None })
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
    fn find_map_last<F, R>(self, f: F) -> Option<R>
    where
        F: Fn(Self::Item) -> Option<R> + Sync + Send,
        R: Send,
    {
        bridge(
            self,
            &FindMapLast {
                f: &f,
                best: AtomicUsize::new(0),
            },
        )
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
    #[deprecated(note = "use `find_any`, `find_first` or `find_last`")]
    #[track_caller]
    fn find<F>(self, predicate: F) -> Option<Self::Item>
    where
        F: Fn(&Self::Item) -> bool + Sync + Send,
    {
        self.find_any(predicate)
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
        collect_chunks(self)
    }

    /// The number of items, if known without running (for exact-length iterators).
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// assert_eq!((0..10u32).into_par_iter().opt_len(), Some(10));
    /// assert_eq!((0..10u32).into_par_iter().filter(|x| x % 2 == 0).opt_len(), None);
    /// ```
    fn opt_len(&self) -> Option<usize> {
        self.exact_len()
    }
}

impl<P: Producer<Item: Send>> ParallelIterator for P {}
