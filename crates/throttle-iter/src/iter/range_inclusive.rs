//! Inclusive ranges as parallel iterators: `(a..=b).into_par_iter()` for every primitive integer
//! type and for `char` (the module `throttle::range_inclusive`, rayon's
//! `rayon::range_inclusive`).
//!
//! An inclusive range runs as the exclusive range up to its end's successor, or, when the end
//! has none (`T::MAX`, `char::MAX`), as the exclusive range chained with its end. As for
//! [`range`], one generic impl keeps literal ranges inferring as `i32`.

use super::plumbing::{Consumer, ProducerCallback, UnindexedConsumer};
use super::{once, Chain, Either, IndexedParallelIterator, IntoParallelIterator, Once};
use super::{range, ParallelIterator};
use std::ops::RangeInclusive;

/// A parallel iterator over a `RangeInclusive`; from `(a..=b).into_par_iter()` with integer or
/// `char` bounds.
///
/// # Examples
/// ```
/// use throttle::prelude::*;
/// assert_eq!((1..=100u32).into_par_iter().sum::<u32>(), 5050);
/// assert_eq!((0..=u8::MAX).into_par_iter().count(), 256);
/// ```
#[derive(Debug, Clone)]
pub struct Iter<T> {
    range: RangeInclusive<T>,
}

impl<T> IntoParallelIterator for RangeInclusive<T>
where
    Iter<T>: ParallelIterator,
{
    type Iter = Iter<T>;
    type Item = <Iter<T> as ParallelIterator>::Item;
    fn into_par_iter(self) -> Iter<T> {
        Iter { range: self }
    }
}

/// What an inclusive range runs as.
type Bounded<T> = Either<range::Iter<T>, Chain<range::Iter<T>, Once<T>>>;

/// The successor of a range's end, if it has one.
trait Successor: Sized + Copy {
    fn successor(self) -> Option<Self>;
}

macro_rules! successor {
    ($($t:ty),*) => {$(
        impl Successor for $t {
            fn successor(self) -> Option<$t> {
                self.checked_add(1)
            }
        }
    )*};
}

successor!(u8, u16, u32, u64, u128, usize, i8, i16, i32, i64, i128, isize);

impl Successor for char {
    fn successor(self) -> Option<char> {
        match self {
            '\u{D7FF}' => Some('\u{E000}'),
            c => char::from_u32(c as u32 + 1),
        }
    }
}

/// What `range` runs as.
fn bounded<T: Successor + PartialOrd + Send>(range: &RangeInclusive<T>) -> Bounded<T> {
    {
        let (start, end) = (*range.start(), *range.end());
        if range.is_empty() {
            return Either::Left(range::Iter::new(start..start));
        }
        match end.successor() {
            Some(after) => Either::Left(range::Iter::new(start..after)),
            None => Either::Right(Chain::new(range::Iter::new(start..end), once(end))),
        }
    }
}

macro_rules! indexed_inclusive {
    ($($t:ty),*) => {$(
        impl ParallelIterator for Iter<$t> {
            type Item = $t;
            fn drive_unindexed<C: UnindexedConsumer<$t>>(self, consumer: C) -> C::Result {
                bounded(&self.range).drive_unindexed(consumer)
            }
            fn opt_len(&self) -> Option<usize> {
                bounded(&self.range).opt_len()
            }
        }

        impl IndexedParallelIterator for Iter<$t> {
            fn drive<C: Consumer<$t>>(self, consumer: C) -> C::Result {
                bounded(&self.range).drive(consumer)
            }
            fn len(&self) -> usize {
                bounded(&self.range).len()
            }
            fn with_producer<CB: ProducerCallback<$t>>(self, callback: CB) -> CB::Output {
                bounded(&self.range).with_producer(callback)
            }
        }
    )*};
}

indexed_inclusive!(u8, u16, u32, u64, usize, i8, i16, i32, i64, isize, char);

macro_rules! wide_inclusive {
    ($($t:ty),*) => {$(
        impl ParallelIterator for Iter<$t> {
            type Item = $t;
            fn drive_unindexed<C: UnindexedConsumer<$t>>(self, consumer: C) -> C::Result {
                bounded(&self.range).drive_unindexed(consumer)
            }
            fn opt_len(&self) -> Option<usize> {
                bounded(&self.range).opt_len()
            }
        }
    )*};
}

wide_inclusive!(u128, i128);
