//! Tuples of indexed parallel iterators zipped together: `(a, b, c).into_par_iter()` yields
//! `(a_i, b_i, c_i)` (up to 12 members), stopping at the shortest. It runs as the members
//! chained through [`zip`](super::IndexedParallelIterator::zip), the nested pairs flattened.

use super::{IndexedParallelIterator, IntoParallelIterator, ParallelIterator};

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
#[must_use = "iterator adaptors are lazy and do nothing unless consumed"]
pub struct MultiZip<T> {
    tuple: T,
}

/// The pattern of the nested pairs that zipping the members makes: `((a, b), c)`.
macro_rules! nested_pattern {
    ($acc:tt ;) => { $acc };
    ($acc:tt ; $x:ident $($rest:ident)*) => { nested_pattern!(($acc, $x) ; $($rest)*) };
}

/// The members zipped and flattened, as one indexed iterator.
macro_rules! zipped {
    ($self:ident, $a:ident 0 $(, $x:ident $i:tt)*) => {
        $self.tuple.0 $(.zip($self.tuple.$i))*
            .map(|nested_pattern!($a ; $($x)*)| ($a, $($x,)*))
    };
}

macro_rules! multizip {
    ($(($A:ident $a:ident 0 $(, $T:ident $t:ident $i:tt)*))+) => {$(
        impl<$A, $($T),*> IntoParallelIterator for ($A, $($T,)*)
        where
            $A: IntoParallelIterator<Iter: IndexedParallelIterator>,
            $($T: IntoParallelIterator<Iter: IndexedParallelIterator>,)*
        {
            type Iter = MultiZip<($A::Iter, $($T::Iter,)*)>;
            type Item = ($A::Item, $($T::Item,)*);
            fn into_par_iter(self) -> Self::Iter {
                MultiZip { tuple: (self.0.into_par_iter(), $(self.$i.into_par_iter(),)*) }
            }
        }

        impl<'a, $A, $($T),*> IntoParallelIterator for &'a ($A, $($T,)*)
        where
            &'a $A: IntoParallelIterator<Iter: IndexedParallelIterator>,
            $(&'a $T: IntoParallelIterator<Iter: IndexedParallelIterator>,)*
        {
            type Iter = MultiZip<(<&'a $A as IntoParallelIterator>::Iter, $(<&'a $T as IntoParallelIterator>::Iter,)*)>;
            type Item = (<&'a $A as IntoParallelIterator>::Item, $(<&'a $T as IntoParallelIterator>::Item,)*);
            fn into_par_iter(self) -> Self::Iter {
                MultiZip { tuple: ((&self.0).into_par_iter(), $((&self.$i).into_par_iter(),)*) }
            }
        }

        impl<'a, $A, $($T),*> IntoParallelIterator for &'a mut ($A, $($T,)*)
        where
            &'a mut $A: IntoParallelIterator<Iter: IndexedParallelIterator>,
            $(&'a mut $T: IntoParallelIterator<Iter: IndexedParallelIterator>,)*
        {
            type Iter = MultiZip<(<&'a mut $A as IntoParallelIterator>::Iter, $(<&'a mut $T as IntoParallelIterator>::Iter,)*)>;
            type Item = (<&'a mut $A as IntoParallelIterator>::Item, $(<&'a mut $T as IntoParallelIterator>::Item,)*);
            fn into_par_iter(self) -> Self::Iter {
                MultiZip { tuple: ((&mut self.0).into_par_iter(), $((&mut self.$i).into_par_iter(),)*) }
            }
        }

        impl<$A, $($T),*> ParallelIterator for MultiZip<($A, $($T,)*)>
        where
            $A: IndexedParallelIterator,
            $($T: IndexedParallelIterator,)*
        {
            type Item = ($A::Item, $($T::Item,)*);

            fn drive_unindexed<CONS>(self, consumer: CONS) -> CONS::Result
            where
                CONS: super::plumbing::UnindexedConsumer<Self::Item>,
            {
                zipped!(self, $a 0 $(, $t $i)*).drive_unindexed(consumer)
            }

            fn opt_len(&self) -> Option<usize> {
                Some(self.len())
            }
        }

        impl<$A, $($T),*> IndexedParallelIterator for MultiZip<($A, $($T,)*)>
        where
            $A: IndexedParallelIterator,
            $($T: IndexedParallelIterator,)*
        {
            fn drive<CONS>(self, consumer: CONS) -> CONS::Result
            where
                CONS: super::plumbing::Consumer<Self::Item>,
            {
                zipped!(self, $a 0 $(, $t $i)*).drive(consumer)
            }

            fn len(&self) -> usize {
                let n = self.tuple.0.len();
                $(let n = n.min(self.tuple.$i.len());)*
                n
            }

            fn with_producer<CB>(self, callback: CB) -> CB::Output
            where
                CB: super::plumbing::ProducerCallback<Self::Item>,
            {
                zipped!(self, $a 0 $(, $t $i)*).with_producer(callback)
            }
        }
    )+};
}

multizip! {
    (A a 0)
    (A a 0, B b 1)
    (A a 0, B b 1, C c 2)
    (A a 0, B b 1, C c 2, D d 3)
    (A a 0, B b 1, C c 2, D d 3, E e 4)
    (A a 0, B b 1, C c 2, D d 3, E e 4, F f 5)
    (A a 0, B b 1, C c 2, D d 3, E e 4, F f 5, G g 6)
    (A a 0, B b 1, C c 2, D d 3, E e 4, F f 5, G g 6, H h 7)
    (A a 0, B b 1, C c 2, D d 3, E e 4, F f 5, G g 6, H h 7, I i 8)
    (A a 0, B b 1, C c 2, D d 3, E e 4, F f 5, G g 6, H h 7, I i 8, J j 9)
    (A a 0, B b 1, C c 2, D d 3, E e 4, F f 5, G g 6, H h 7, I i 8, J j 9, K k 10)
    (A a 0, B b 1, C c 2, D d 3, E e 4, F f 5, G g 6, H h 7, I i 8, J j 9, K k 10, L l 11)
}
