//! `Option` and `Result` as parallel iterators of zero or one item (the modules
//! `throttle::option` and `throttle::result`, rayon's `rayon::option` and `rayon::result`).

use super::plumbing::Producer;
use super::IntoParallelIterator;

/// The item of an `Option` (none or one), moved out; from `Some(x).into_par_iter()`.
///
/// # Examples
/// ```
/// use throttle::prelude::*;
/// assert_eq!(Some(3).into_par_iter().sum::<i32>(), 3);
/// assert_eq!(None::<i32>.into_par_iter().count(), 0);
/// let r: Result<i32, ()> = Ok(4);
/// assert_eq!(r.par_iter().copied().max(), Some(4));
/// ```
#[derive(Debug, Clone)]
pub struct IntoIter<T> {
    pub(crate) opt: Option<T>,
}

impl<T> IntoIter<T> {
    pub(crate) fn new(opt: Option<T>) -> Self {
        IntoIter { opt }
    }
}

producer_iterator!(impl[T: Send] IntoIter<T> => T, where [], len: |it| usize::from(it.opt.is_some()));

impl<T: Send> Producer for IntoIter<T> {
    type Item = T;
    type IntoIter = std::option::IntoIter<T>;
    fn split_at(self, index: usize) -> (Self, Self) {
        if index == 0 {
            (IntoIter { opt: None }, self)
        } else {
            (self, IntoIter { opt: None })
        }
    }
    fn into_iter(self) -> Self::IntoIter {
        self.opt.into_iter()
    }
}

delegate!(
    /// A reference to the item of an `Option` (or `Result`'s `Ok`); from `par_iter()`.
    Iter['a, T] => IntoIter<&'a T>, &'a T, [T: Sync + 'a]
);

/// A mutable reference to the item of an `Option` (or `Result`'s `Ok`); from `par_iter_mut()`.
#[derive(Debug)]
pub struct IterMut<'a, T> {
    pub(crate) inner: IntoIter<&'a mut T>,
}

delegate_impls!(IterMut['a, T] => IntoIter<&'a mut T>, &'a mut T, [T: Send + 'a]);

impl<T: Send> IntoParallelIterator for Option<T> {
    type Iter = IntoIter<T>;
    type Item = T;
    fn into_par_iter(self) -> IntoIter<T> {
        IntoIter { opt: self }
    }
}

impl<'a, T: Sync + 'a> IntoParallelIterator for &'a Option<T> {
    type Iter = Iter<'a, T>;
    type Item = &'a T;
    fn into_par_iter(self) -> Iter<'a, T> {
        Iter {
            inner: IntoIter { opt: self.as_ref() },
        }
    }
}

impl<'a, T: Send + 'a> IntoParallelIterator for &'a mut Option<T> {
    type Iter = IterMut<'a, T>;
    type Item = &'a mut T;
    fn into_par_iter(self) -> IterMut<'a, T> {
        IterMut {
            inner: IntoIter { opt: self.as_mut() },
        }
    }
}

/// `Result`'s parallel iterators: over its `Ok` value, none for an `Err` (rayon's
/// `rayon::result`).
pub mod result {
    use super::*;

    delegate!(
        /// The `Ok` value of a `Result`, moved out.
        IntoIter[T] => super::IntoIter<T>, T, [T: Send]
    );
    pub use super::{Iter, IterMut};

    impl<T: Send, E> IntoParallelIterator for Result<T, E> {
        type Iter = IntoIter<T>;
        type Item = T;
        fn into_par_iter(self) -> IntoIter<T> {
            IntoIter {
                inner: super::IntoIter { opt: self.ok() },
            }
        }
    }

    impl<'a, T: Sync + 'a, E> IntoParallelIterator for &'a Result<T, E> {
        type Iter = Iter<'a, T>;
        type Item = &'a T;
        fn into_par_iter(self) -> Iter<'a, T> {
            Iter {
                inner: super::IntoIter {
                    opt: self.as_ref().ok(),
                },
            }
        }
    }

    impl<'a, T: Send + 'a, E> IntoParallelIterator for &'a mut Result<T, E> {
        type Iter = IterMut<'a, T>;
        type Item = &'a mut T;
        fn into_par_iter(self) -> IterMut<'a, T> {
            IterMut {
                inner: super::IntoIter {
                    opt: self.as_mut().ok(),
                },
            }
        }
    }
}
