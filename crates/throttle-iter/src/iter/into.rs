//! Turning collections into parallel iterators: `into_par_iter`, `par_iter`, `par_iter_mut`.
//!
//! This file is a hub, as `par_iter.rs` is: the conversions of slices return the slice
//! iterators, and the sources (`vec.rs`, `slice.rs`, ...) implement the trait for their types.

use super::slice::{Iter as SliceIter, IterMut as SliceIterMut};
use super::ParallelIterator;

/// Something that can become a [`ParallelIterator`]: every parallel iterator, `Vec`s and arrays
/// (by value or by reference), slices, and integer ranges.
///
/// # Examples
/// ```
/// use throttle::prelude::*;
/// let v = vec![1, 2, 3];
/// assert_eq!((&v).into_par_iter().sum::<i32>(), 6);
/// assert_eq!(v.into_par_iter().map(|x| x * 2).sum::<i32>(), 12);
/// ```
pub trait IntoParallelIterator {
    /// The parallel iterator.
    type Iter: ParallelIterator<Item = Self::Item>;
    /// Its items.
    type Item: Send;

    /// Converts `self` into a parallel iterator.
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// assert_eq!((1..=3).collect::<Vec<u32>>().into_par_iter().count(), 3);
    /// ```
    fn into_par_iter(self) -> Self::Iter;
}

impl<P: ParallelIterator> IntoParallelIterator for P {
    type Iter = P;
    type Item = P::Item;
    fn into_par_iter(self) -> P {
        self
    }
}

impl<'a, T: Sync> IntoParallelIterator for &'a [T] {
    type Iter = SliceIter<'a, T>;
    type Item = &'a T;
    fn into_par_iter(self) -> SliceIter<'a, T> {
        SliceIter::new(self)
    }
}

impl<'a, T: Sync> IntoParallelIterator for &'a Vec<T> {
    type Iter = SliceIter<'a, T>;
    type Item = &'a T;
    fn into_par_iter(self) -> SliceIter<'a, T> {
        SliceIter::new(self)
    }
}

impl<'a, T: Sync, const N: usize> IntoParallelIterator for &'a [T; N] {
    type Iter = SliceIter<'a, T>;
    type Item = &'a T;
    fn into_par_iter(self) -> SliceIter<'a, T> {
        SliceIter::new(self)
    }
}

impl<'a, T: Send> IntoParallelIterator for &'a mut [T] {
    type Iter = SliceIterMut<'a, T>;
    type Item = &'a mut T;
    fn into_par_iter(self) -> SliceIterMut<'a, T> {
        SliceIterMut::new(self)
    }
}

impl<'a, T: Send> IntoParallelIterator for &'a mut Vec<T> {
    type Iter = SliceIterMut<'a, T>;
    type Item = &'a mut T;
    fn into_par_iter(self) -> SliceIterMut<'a, T> {
        SliceIterMut::new(self)
    }
}

impl<'a, T: Send, const N: usize> IntoParallelIterator for &'a mut [T; N] {
    type Iter = SliceIterMut<'a, T>;
    type Item = &'a mut T;
    fn into_par_iter(self) -> SliceIterMut<'a, T> {
        SliceIterMut::new(self)
    }
}

/// A boxed slice moves its items out as a `Vec` does.
impl<T: Send> IntoParallelIterator for Box<[T]> {
    type Iter = super::vec::IntoIter<T>;
    type Item = T;
    fn into_par_iter(self) -> Self::Iter {
        super::vec::IntoIter::new(self.into_vec())
    }
}

impl<'a, T: Sync> IntoParallelIterator for &'a Box<[T]> {
    type Iter = SliceIter<'a, T>;
    type Item = &'a T;
    fn into_par_iter(self) -> SliceIter<'a, T> {
        SliceIter::new(self)
    }
}

impl<'a, T: Send> IntoParallelIterator for &'a mut Box<[T]> {
    type Iter = SliceIterMut<'a, T>;
    type Item = &'a mut T;
    fn into_par_iter(self) -> SliceIterMut<'a, T> {
        SliceIterMut::new(self)
    }
}

/// `par_iter()`: a parallel iterator over `&T` for anything whose reference is
/// [`IntoParallelIterator`] (slices, arrays, `Vec`s).
///
/// # Examples
/// ```
/// use throttle::prelude::*;
/// let v = vec![3, 1, 2];
/// assert_eq!(v.par_iter().max(), Some(&3));
/// ```
pub trait IntoParallelRefIterator<'data> {
    /// The parallel iterator.
    type Iter: ParallelIterator<Item = Self::Item>;
    /// Its items (references).
    type Item: Send + 'data;

    /// A parallel iterator over references to the items.
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// let words = ["a", "bb", "ccc"];
    /// assert_eq!(words.par_iter().map(|w| w.len()).sum::<usize>(), 6);
    /// ```
    fn par_iter(&'data self) -> Self::Iter;
}

impl<'data, I: 'data + ?Sized> IntoParallelRefIterator<'data> for I
where
    &'data I: IntoParallelIterator,
{
    type Iter = <&'data I as IntoParallelIterator>::Iter;
    type Item = <&'data I as IntoParallelIterator>::Item;
    fn par_iter(&'data self) -> Self::Iter {
        self.into_par_iter()
    }
}

/// `par_iter_mut()`: a parallel iterator over `&mut T` for anything whose mutable reference is
/// [`IntoParallelIterator`] (slices, arrays, `Vec`s).
///
/// # Examples
/// ```
/// use throttle::prelude::*;
/// let mut v = [1, 2, 3];
/// v.par_iter_mut().for_each(|x| *x = -*x);
/// assert_eq!(v, [-1, -2, -3]);
/// ```
pub trait IntoParallelRefMutIterator<'data> {
    /// The parallel iterator.
    type Iter: ParallelIterator<Item = Self::Item>;
    /// Its items (mutable references).
    type Item: Send + 'data;

    /// A parallel iterator over mutable references to the items.
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// let mut v = vec![1u64; 100];
    /// v.par_iter_mut().enumerate().for_each(|(i, x)| *x += i as u64);
    /// assert_eq!(v[99], 100);
    /// ```
    fn par_iter_mut(&'data mut self) -> Self::Iter;
}

impl<'data, I: 'data + ?Sized> IntoParallelRefMutIterator<'data> for I
where
    &'data mut I: IntoParallelIterator,
{
    type Iter = <&'data mut I as IntoParallelIterator>::Iter;
    type Item = <&'data mut I as IntoParallelIterator>::Item;
    fn par_iter_mut(&'data mut self) -> Self::Iter {
        self.into_par_iter()
    }
}
