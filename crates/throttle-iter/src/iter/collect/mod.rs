//! `collect` and `par_extend`: building collections from parallel iterators, in order.
//!
//! An iterator that knows its length (`opt_len`: a slice, range or `Vec` through `map`,
//! `enumerate`, `zip`, ...) collected into a `Vec` writes every item in place (`consumer.rs`).
//! Otherwise every piece collects its items into a `Vec`; the `Vec`s are chained in order (a
//! linked list, so joining two pieces moves no item) and poured into the target at the end:
//! one move per item for a `Vec`, and an exact-length `FromIterator` for the other
//! collections (`list.rs`).

mod consumer;
mod extend;
mod list;

pub use extend::ParallelExtend;

use super::runtime;
use super::{IndexedParallelIterator, IntoParallelIterator, ParallelIterator};
use consumer::collect_with_consumer;
use either::Either;
use list::{concat, Flatten, ListVec, Partition, Unzip};
use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet, BinaryHeap, HashMap, HashSet, LinkedList, VecDeque};
use std::ffi::{OsStr, OsString};
use std::hash::{BuildHasher, Hash};
use std::sync::Mutex;

/// A collection that [`ParallelIterator::collect`] can build.
///
/// Implemented for `Vec`, `VecDeque`, `LinkedList`, `BinaryHeap`, `HashMap`, `HashSet`,
/// `BTreeMap`, `BTreeSet`, `String` (from `char`, `&str`, `String`, ...), `Box<[T]>`,
/// `Rc<[T]>`, `Arc<[T]>`, `Cow`, `()`, pairs of collections (as `unzip`), and `Option`/`Result`
/// of those (stopping at a `None`/`Err`, which is then the answer).
///
/// # Examples
/// ```
/// use std::collections::HashMap;
/// use throttle::iter::FromParallelIterator;
/// use throttle::prelude::*;
///
/// let m: HashMap<u32, u32> = HashMap::from_par_iter((0..3u32).into_par_iter().map(|i| (i, i * i)));
/// assert_eq!(m[&2], 4);
/// ```
pub trait FromParallelIterator<T>
where
    T: Send,
{
    /// Builds `Self` from the items of `par_iter`, in order.
    ///
    /// # Examples
    /// ```
    /// use throttle::iter::FromParallelIterator;
    /// use throttle::prelude::*;
    /// let v = Vec::from_par_iter((0..4u32).into_par_iter());
    /// assert_eq!(v, [0, 1, 2, 3]);
    /// ```
    #[track_caller]
    fn from_par_iter<I>(par_iter: I) -> Self
    where
        I: IntoParallelIterator<Item = T>;
}

/// The items as a list of `Vec`s, in order (one per piece of work, none empty).
#[track_caller]
pub(crate) fn vec_list<I: ParallelIterator>(iter: I) -> LinkedList<Vec<I::Item>> {
    runtime::drive_here(|| iter.drive_unindexed(ListVec))
}

/// Appends the items of `iter` to `vec`, in place if the iterator knows its length.
#[track_caller]
pub(crate) fn extend_vec<I: ParallelIterator>(vec: &mut Vec<I::Item>, iter: I) {
    match iter.opt_len() {
        Some(len) => runtime::drive_here(|| {
            collect_with_consumer(vec, len, |consumer| iter.drive_unindexed(consumer))
        }),
        None => {
            let list = vec_list(iter);
            vec.reserve(list.iter().map(Vec::len).sum());
            for mut chunk in list {
                vec.append(&mut chunk);
            }
        }
    }
}

/// `collect_into_vec`: replaces `target`'s items with those of `iter`, written in place.
#[track_caller]
pub(crate) fn collect_into_vec<I: IndexedParallelIterator>(iter: I, target: &mut Vec<I::Item>) {
    target.truncate(0);
    let len = iter.len();
    runtime::drive_here(|| collect_with_consumer(target, len, |consumer| iter.drive(consumer)));
}

/// `unzip_into_vecs`: replaces the two vectors' items with the halves of `iter`'s pairs,
/// written in place.
#[track_caller]
pub(crate) fn unzip_into_vecs<I, A, B>(iter: I, left: &mut Vec<A>, right: &mut Vec<B>)
where
    I: IndexedParallelIterator<Item = (A, B)>,
    A: Send,
    B: Send,
{
    left.truncate(0);
    right.truncate(0);
    let len = iter.len();
    runtime::drive_here(|| {
        collect_with_consumer(left, len, |left| {
            let mut lefts = None;
            collect_with_consumer(right, len, |right| {
                let (l, r) = iter.drive(Unzip(left, right));
                lefts = Some(l);
                r
            });
            lefts.expect("the inner collect ran")
        });
    });
}

/// `unzip`: the pairs' halves, each side collected in order, then poured into its collection.
#[track_caller]
pub(crate) fn unzip<I, A, B, FromA, FromB>(iter: I) -> (FromA, FromB)
where
    I: ParallelIterator<Item = (A, B)>,
    FromA: Default + Send + ParallelExtend<A>,
    FromB: Default + Send + ParallelExtend<B>,
    A: Send,
    B: Send,
{
    let (la, lb) = runtime::drive_here(|| iter.drive_unindexed(Unzip(ListVec, ListVec)));
    let (mut a, mut b) = (FromA::default(), FromB::default());
    a.par_extend(concat(la));
    b.par_extend(concat(lb));
    (a, b)
}

/// `partition` and `partition_map`: the `Left`s and the `Right`s, each side collected in
/// order, then poured into its collection.
#[track_caller]
pub(crate) fn partition<I, L, R, A, B>(iter: I) -> (A, B)
where
    I: ParallelIterator<Item = Either<L, R>>,
    A: Default + Send + ParallelExtend<L>,
    B: Default + Send + ParallelExtend<R>,
    L: Send,
    R: Send,
{
    let (la, lb) = runtime::drive_here(|| iter.drive_unindexed(Partition(ListVec, ListVec)));
    let (mut a, mut b) = (A::default(), B::default());
    a.par_extend(concat(la));
    b.par_extend(concat(lb));
    (a, b)
}

impl<T: Send> FromParallelIterator<T> for Vec<T> {
    fn from_par_iter<I>(par_iter: I) -> Self
    where
        I: IntoParallelIterator<Item = T>,
    {
        let iter = par_iter.into_par_iter();
        match iter.opt_len() {
            Some(_) => {
                let mut vec = Vec::new();
                extend_vec(&mut vec, iter);
                vec
            }
            None => concat(vec_list(iter)),
        }
    }
}

/// Collections built by `FromIterator` over the collected items.
macro_rules! via_from_iter {
    ($([$($g:tt)*] $t:ty => $c:ty;)*) => {$(
        impl<$($g)*> FromParallelIterator<$t> for $c {
            fn from_par_iter<I>(par_iter: I) -> Self
            where
                I: IntoParallelIterator<Item = $t>,
            {
                Flatten::new(vec_list(par_iter.into_par_iter())).collect()
            }
        }
    )*};
}

via_from_iter! {
    [T: Send] T => VecDeque<T>;
    [T: Send] T => LinkedList<T>;
    [T: Send + Ord] T => BinaryHeap<T>;
    [T: Send + Ord] T => BTreeSet<T>;
    [K: Send + Ord, V: Send] (K, V) => BTreeMap<K, V>;
    [T: Send + Eq + Hash, S: BuildHasher + Default] T => HashSet<T, S>;
    [K: Send + Eq + Hash, V: Send, S: BuildHasher + Default] (K, V) => HashMap<K, V, S>;
    [] char => String;
    ['a] &'a char => String;
    [] String => String;
    ['a] &'a str => String;
    [] Box<str> => String;
    ['a] Cow<'a, str> => String;
    ['a] &'a OsStr => OsString;
    [] OsString => OsString;
    ['a] Cow<'a, OsStr> => OsString;
}

/// Collects `()` items, dropping them: runs the iterator for its side effects.
impl FromParallelIterator<()> for () {
    fn from_par_iter<I>(par_iter: I) -> Self
    where
        I: IntoParallelIterator<Item = ()>,
    {
        par_iter.into_par_iter().for_each(drop);
    }
}

impl<T: Send> FromParallelIterator<T> for Box<[T]> {
    fn from_par_iter<I>(par_iter: I) -> Self
    where
        I: IntoParallelIterator<Item = T>,
    {
        Vec::from_par_iter(par_iter).into_boxed_slice()
    }
}

impl<T: Send> FromParallelIterator<T> for std::rc::Rc<[T]> {
    fn from_par_iter<I>(par_iter: I) -> Self
    where
        I: IntoParallelIterator<Item = T>,
    {
        Vec::from_par_iter(par_iter).into()
    }
}

impl<T: Send> FromParallelIterator<T> for std::sync::Arc<[T]> {
    fn from_par_iter<I>(par_iter: I) -> Self
    where
        I: IntoParallelIterator<Item = T>,
    {
        Vec::from_par_iter(par_iter).into()
    }
}

/// Collects into the owned form, as `Cow::Owned`.
impl<C, T> FromParallelIterator<T> for Cow<'_, C>
where
    C: ToOwned<Owned: FromParallelIterator<T>> + ?Sized,
    T: Send,
{
    fn from_par_iter<I>(par_iter: I) -> Self
    where
        I: IntoParallelIterator<Item = T>,
    {
        Cow::Owned(C::Owned::from_par_iter(par_iter))
    }
}

/// Collects pairs into two collections at once, as `unzip` does.
impl<A, B, FromA, FromB> FromParallelIterator<(A, B)> for (FromA, FromB)
where
    A: Send,
    B: Send,
    FromA: Send + Default + ParallelExtend<A>,
    FromB: Send + Default + ParallelExtend<B>,
{
    fn from_par_iter<I>(par_iter: I) -> Self
    where
        I: IntoParallelIterator<Item = (A, B)>,
    {
        unzip(par_iter.into_par_iter())
    }
}

/// Collects `Either`s into two collections at once, as `partition_map` does.
impl<L, R, A, B> FromParallelIterator<Either<L, R>> for (A, B)
where
    L: Send,
    R: Send,
    A: Send + Default + ParallelExtend<L>,
    B: Send + Default + ParallelExtend<R>,
{
    fn from_par_iter<I>(par_iter: I) -> Self
    where
        I: IntoParallelIterator<Item = Either<L, R>>,
    {
        partition(par_iter.into_par_iter())
    }
}

/// Collects the `Ok` values; at the first `Err` met (in time, not in item order) the run
/// stops and that error is the result.
impl<C, T, E> FromParallelIterator<Result<T, E>> for Result<C, E>
where
    C: FromParallelIterator<T>,
    T: Send,
    E: Send,
{
    fn from_par_iter<I>(par_iter: I) -> Self
    where
        I: IntoParallelIterator<Item = Result<T, E>>,
    {
        let saved = Mutex::new(None);
        let keep = |e: E| {
            let mut saved = saved.lock().unwrap_or_else(|p| p.into_inner());
            if saved.is_none() {
                *saved = Some(e);
            }
        };
        let c = C::from_par_iter(
            par_iter
                .into_par_iter()
                .map(|item| item.map_err(&keep).ok())
                .while_some(),
        );
        match saved.into_inner().unwrap_or_else(|p| p.into_inner()) {
            Some(e) => Err(e),
            None => Ok(c),
        }
    }
}

/// Collects the `Some` values; at the first `None` met the run stops and `None` is the result.
impl<C, T> FromParallelIterator<Option<T>> for Option<C>
where
    C: FromParallelIterator<T>,
    T: Send,
{
    fn from_par_iter<I>(par_iter: I) -> Self
    where
        I: IntoParallelIterator<Item = Option<T>>,
    {
        let saw_none = std::sync::atomic::AtomicBool::new(false);
        let c = C::from_par_iter(
            par_iter
                .into_par_iter()
                .inspect(|item| {
                    if item.is_none() {
                        saw_none.store(true, std::sync::atomic::Ordering::Relaxed);
                    }
                })
                .while_some(),
        );
        (!saw_none.into_inner()).then_some(c)
    }
}
