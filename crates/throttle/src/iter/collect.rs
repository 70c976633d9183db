//! `collect`: building collections from parallel iterators, in order.
//!
//! An exact-length iterator (a slice, range or `Vec` through `map`, `enumerate`, `zip`, ...)
//! collected into a `Vec` writes every item in place (`write.rs`). Otherwise every leaf collects
//! its items into a `Vec`; the `Vec`s are chained in order (a linked list, so combining two
//! pieces moves no item) and poured into the target at the end: one copy per item for a `Vec`,
//! and an exact-length `FromIterator` for the other collections.

use super::consumers::{concat, CollectChunks, Flatten, UnzipChunks};
use super::plumbing::{bridge, Producer};
use super::{IntoParallelIterator, ParallelIterator};
use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet, BinaryHeap, HashMap, HashSet, LinkedList, VecDeque};
use std::ffi::{OsStr, OsString};
use std::hash::{BuildHasher, Hash};

/// A collection that [`ParallelIterator::collect`] can build.
///
/// Implemented for `Vec`, `VecDeque`, `LinkedList`, `BinaryHeap`, `HashMap`, `HashSet`,
/// `BTreeMap`, `BTreeSet`, `String` (from `char`, `&str` or `String`), `()`, and
/// `Option`/`Result` of those (the first `None`/`Err` in order wins).
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
pub trait FromParallelIterator<T: Send>: Sized {
    /// Builds `Self` from the items of `iter`, in order.
    ///
    /// # Examples
    /// ```
    /// use throttle::iter::FromParallelIterator;
    /// use throttle::prelude::*;
    /// let v = Vec::from_par_iter((0..4u32).into_par_iter());
    /// assert_eq!(v, [0, 1, 2, 3]);
    /// ```
    #[track_caller]
    fn from_par_iter<I>(iter: I) -> Self
    where
        I: IntoParallelIterator<Item = T>;
}

/// The items of `iter` as a list of `Vec`s, in order.
#[track_caller]
pub(crate) fn collect_chunks<I: ParallelIterator>(iter: I) -> LinkedList<Vec<I::Item>> {
    bridge(iter, &CollectChunks)
}

impl<T: Send> FromParallelIterator<T> for Vec<T> {
    fn from_par_iter<I>(iter: I) -> Self
    where
        I: IntoParallelIterator<Item = T>,
    {
        let iter = iter.into_par_iter();
        match iter.exact_len() {
            Some(len) if len == iter.base_len() => super::write::collect_exact(iter, len),
            _ => concat(collect_chunks(iter)),
        }
    }
}

/// Collections built by `FromIterator` over the concatenated chunks.
macro_rules! via_from_iter {
    ($([$($g:tt)*] $t:ty => $c:ty;)*) => {$(
        impl<$($g)*> FromParallelIterator<$t> for $c {
            fn from_par_iter<I>(iter: I) -> Self
            where
                I: IntoParallelIterator<Item = $t>,
            {
                Flatten::new(collect_chunks(iter.into_par_iter())).collect()
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
    [] () => ();
}

impl<T: Send> FromParallelIterator<T> for Box<[T]> {
    fn from_par_iter<I>(iter: I) -> Self
    where
        I: IntoParallelIterator<Item = T>,
    {
        Vec::from_par_iter(iter).into_boxed_slice()
    }
}

impl<T: Send> FromParallelIterator<T> for std::rc::Rc<[T]> {
    fn from_par_iter<I>(iter: I) -> Self
    where
        I: IntoParallelIterator<Item = T>,
    {
        Vec::from_par_iter(iter).into()
    }
}

impl<T: Send> FromParallelIterator<T> for std::sync::Arc<[T]> {
    fn from_par_iter<I>(iter: I) -> Self
    where
        I: IntoParallelIterator<Item = T>,
    {
        Vec::from_par_iter(iter).into()
    }
}

/// Collects into the owned form, as `Cow::Owned`.
impl<'a, C, T> FromParallelIterator<T> for Cow<'a, C>
where
    C: ToOwned + ?Sized,
    C::Owned: FromParallelIterator<T>,
    T: Send,
{
    fn from_par_iter<I>(iter: I) -> Self
    where
        I: IntoParallelIterator<Item = T>,
    {
        Cow::Owned(C::Owned::from_par_iter(iter))
    }
}

/// Collects pairs into two collections at once, as `unzip` does.
impl<A, B, FromA, FromB> FromParallelIterator<(A, B)> for (FromA, FromB)
where
    A: Send,
    B: Send,
    FromA: Send + FromParallelIterator<A>,
    FromB: Send + FromParallelIterator<B>,
{
    fn from_par_iter<I>(iter: I) -> Self
    where
        I: IntoParallelIterator<Item = (A, B)>,
    {
        let (la, lb) = bridge(iter.into_par_iter(), &UnzipChunks);
        (
            FromA::from_par_iter(concat(la)),
            FromB::from_par_iter(concat(lb)),
        )
    }
}

impl<C, T, E> FromParallelIterator<Result<T, E>> for Result<C, E>
where
    C: FromParallelIterator<T>,
    T: Send,
    E: Send,
{
    fn from_par_iter<I>(iter: I) -> Self
    where
        I: IntoParallelIterator<Item = Result<T, E>>,
    {
        let all: Vec<Result<T, E>> = Vec::from_par_iter(iter);
        let ok: Vec<T> = all.into_iter().collect::<Result<_, E>>()?;
        Ok(C::from_par_iter(ok))
    }
}

impl<C, T> FromParallelIterator<Option<T>> for Option<C>
where
    C: FromParallelIterator<T>,
    T: Send,
{
    fn from_par_iter<I>(iter: I) -> Self
    where
        I: IntoParallelIterator<Item = Option<T>>,
    {
        let all: Vec<Option<T>> = Vec::from_par_iter(iter);
        let some: Vec<T> = all.into_iter().collect::<Option<_>>()?;
        Some(C::from_par_iter(some))
    }
}
