//! Tuples of exact-length parallel iterators zipped together: `(a, b, c).into_par_iter()`
//! yields `(a_i, b_i, c_i)` (up to 12 members), stopping at the shortest.

use super::plumbing::{IndexedProducer, Producer};
use super::{IndexedParallelIterator, IntoParallelIterator};

/// The members of a tuple zipped together; from `(a, b, ...).into_par_iter()`.
///
/// # Examples
/// ```
/// use throttle::prelude::*;
/// let (a, b, c) = (vec![1, 2, 3], vec![10, 20, 30], vec![100, 200]);
/// let v: Vec<i32> = (&a, &b, &c).into_par_iter().map(|(x, y, z)| x + y + z).collect();
/// assert_eq!(v, [111, 222]);
/// ```
#[derive(Debug, Clone)]
pub struct MultiZip<T> {
    tuple: T,
}

/// The sequential iterator of a [`MultiZip`] leaf.
#[derive(Debug)]
pub struct MultiZipSeq<T> {
    tuple: T,
}

macro_rules! multizip {
    ($(($($t:ident $i:tt),+))+) => {$(
        impl<$($t: IntoParallelIterator),+> IntoParallelIterator for ($($t,)+)
        where
            $($t::Iter: IndexedParallelIterator,)+
        {
            type Iter = MultiZip<($($t::Iter,)+)>;
            type Item = ($($t::Item,)+);
            fn into_par_iter(self) -> Self::Iter {
                MultiZip { tuple: ($(self.$i.into_par_iter(),)+) }
            }
        }

        impl<$($t: IndexedProducer),+> Producer for MultiZip<($($t,)+)> {
            type Item = ($($t::Item,)+);
            type IntoSeq = MultiZipSeq<($($t::IntoSeq,)+)>;
            fn base_len(&self) -> usize {
                let mut n = usize::MAX;
                $(n = n.min(self.tuple.$i.base_len());)+
                n
            }
            fn split_at(self, index: usize) -> (Self, Self) {
                let parts = ($(self.tuple.$i.split_at(index),)+);
                (
                    MultiZip { tuple: ($(parts.$i.0,)+) },
                    MultiZip { tuple: ($(parts.$i.1,)+) },
                )
            }
            fn into_seq(self) -> Self::IntoSeq {
                MultiZipSeq { tuple: ($(self.tuple.$i.into_seq(),)+) }
            }
            fn min_len(&self) -> usize {
                let mut n = 1;
                $(n = n.max(self.tuple.$i.min_len());)+
                n
            }
            fn max_len(&self) -> usize {
                let mut n = usize::MAX;
                $(n = n.min(self.tuple.$i.max_len());)+
                n
            }
            fn stopped(&self) -> bool {
                false $(|| self.tuple.$i.stopped())+
            }
            fn exact_len(&self) -> Option<usize> {
                let mut n = usize::MAX;
                $(n = n.min(self.tuple.$i.exact_len()?);)+
                Some(n)
            }
        }

        impl<$($t: IndexedProducer),+> IndexedProducer for MultiZip<($($t,)+)> {}

        impl<$($t: Iterator),+> Iterator for MultiZipSeq<($($t,)+)> {
            type Item = ($($t::Item,)+);
            fn next(&mut self) -> Option<Self::Item> {
                Some(($(self.tuple.$i.next()?,)+))
            }
        }
    )+};
}

multizip! {
    (A 0)
    (A 0, B 1)
    (A 0, B 1, C 2)
    (A 0, B 1, C 2, D 3)
    (A 0, B 1, C 2, D 3, E 4)
    (A 0, B 1, C 2, D 3, E 4, F 5)
    (A 0, B 1, C 2, D 3, E 4, F 5, G 6)
    (A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7)
    (A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8)
    (A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9)
    (A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10)
    (A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10, L 11)
}
