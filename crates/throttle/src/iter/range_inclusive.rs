//! Inclusive ranges as parallel iterators: `(a..=b).into_par_iter()` for every primitive integer
//! type and for `char` (the module `throttle::range_inclusive`, rayon's
//! `rayon::range_inclusive`).
//!
//! As for [`range`](super::range), one generic impl keeps literal ranges inferring as `i32`, and
//! 128-bit ranges longer than `usize::MAX` are measured in scaled units and not indexed.

use super::plumbing::{IndexedProducer, Producer};
use super::range::{char_after, chars_between, wide_units, wide_values};
use super::IntoParallelIterator;
use std::ops::RangeInclusive;

/// A parallel iterator over a `RangeInclusive`; from `(a..=b).into_par_iter()` with integer or
/// `char` bounds.
///
/// # Examples
/// ```
/// use throttle::prelude::*;
/// assert_eq!((1..=100).into_par_iter().sum::<i32>(), 5050);
/// assert_eq!((0..=u8::MAX).into_par_iter().count(), 256);
/// let abc: String = ('a'..='c').into_par_iter().collect();
/// assert_eq!(abc, "abc");
/// ```
///
/// # Panics
/// Running a range of bounds up to 64 bits that holds more than `usize::MAX` values panics.
#[derive(Debug, Clone)]
pub struct Iter<T> {
    pub(crate) range: RangeInclusive<T>,
    /// 128-bit ranges once split: the units this piece has (see `range::Iter`).
    pub(crate) units: Option<usize>,
}

impl<T> IntoParallelIterator for RangeInclusive<T>
where
    Iter<T>: Producer,
    <Iter<T> as Producer>::Item: Send,
{
    type Iter = Iter<T>;
    type Item = <Iter<T> as Producer>::Item;
    fn into_par_iter(self) -> Iter<T> {
        Iter {
            range: self,
            units: None,
        }
    }
}

macro_rules! inclusive_producer {
    ($wide:literal; $($t:ty),*) => {$(
        impl Iter<$t> {
            /// The number of values, saturated at `u128::MAX`.
            fn values(&self) -> u128 {
                if self.range.is_empty() {
                    return 0;
                }
                (self.range.end().abs_diff(*self.range.start()) as u128).saturating_add(1)
            }
        }

        impl Producer for Iter<$t> {
            type Item = $t;
            type IntoSeq = RangeInclusive<$t>;
            fn base_len(&self) -> usize {
                let len = self.values();
                if !$wide && usize::try_from(len).is_err() {
                    panic!("range {:?} is longer than usize::MAX", self.range);
                }
                self.units.unwrap_or_else(|| wide_units(len))
            }
            fn split_at(self, index: usize) -> (Self, Self) {
                let len = self.values();
                let units = self.base_len();
                let index = index.min(units);
                let values = wide_values(len, units, index);
                let (l_units, r_units) = (Some(index), Some(units - index));
                let (start, end) = self.range.into_inner();
                let empty = |units| Iter { range: (1 as $t)..=(0 as $t), units };
                if values == 0 {
                    return (empty(l_units), Iter { range: start..=end, units: r_units });
                }
                if values >= len {
                    return (Iter { range: start..=end, units: l_units }, empty(r_units));
                }
                // `0 < values < len`: both ends lie within the range.
                let mid = start.wrapping_add(values as $t);
                (
                    Iter { range: start..=mid.wrapping_sub(1), units: l_units },
                    Iter { range: mid..=end, units: r_units },
                )
            }
            fn into_seq(self) -> RangeInclusive<$t> {
                self.range
            }
            fn exact_len(&self) -> Option<usize> {
                usize::try_from(self.values()).ok().filter(|&n| n == self.base_len())
            }
        }
    )*};
}

inclusive_producer!(false; u8, u16, u32, u64, usize, i8, i16, i32, i64, isize);
inclusive_producer!(true; u128, i128);

macro_rules! indexed {
    ($($t:ty),*) => {$( impl IndexedProducer for Iter<$t> {} )*};
}

indexed!(u8, u16, u32, u64, usize, i8, i16, i32, i64, isize);

impl Producer for Iter<char> {
    type Item = char;
    type IntoSeq = RangeInclusive<char>;
    fn base_len(&self) -> usize {
        if self.range.is_empty() {
            return 0;
        }
        chars_between(*self.range.start() as u32, *self.range.end() as u32 + 1)
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        let len = self.base_len();
        let (start, end) = self.range.into_inner();
        let empty = || Iter {
            range: '\u{1}'..='\0',
            units: None,
        };
        if index == 0 {
            return (
                empty(),
                Iter {
                    range: start..=end,
                    units: None,
                },
            );
        }
        if index >= len {
            return (
                Iter {
                    range: start..=end,
                    units: None,
                },
                empty(),
            );
        }
        let mid = char_after(start as u32, index);
        let last = char_after(start as u32, index - 1);
        let ch = |c| char::from_u32(c).expect("a split of a char range lands on a char");
        (
            Iter {
                range: start..=ch(last),
                units: None,
            },
            Iter {
                range: ch(mid)..=end,
                units: None,
            },
        )
    }
    fn into_seq(self) -> RangeInclusive<char> {
        self.range
    }
    fn exact_len(&self) -> Option<usize> {
        Some(self.base_len())
    }
}

impl IndexedProducer for Iter<char> {}
