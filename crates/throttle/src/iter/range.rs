//! Ranges as parallel iterators: `(a..b).into_par_iter()` for every primitive integer type and
//! for `char` (the module `throttle::range`, rayon's `rayon::range`).
//!
//! One generic `IntoParallelIterator` impl covers all `Range<T>` (the per-type work is in the
//! producer impls), so an unsuffixed literal range such as `(0..1000).into_par_iter()` infers
//! its integer type as `i32` the way a sequential `0..1000` does.
//!
//! Ranges of 128-bit integers may hold more than `usize::MAX` values; their pieces are measured
//! in units of `len / usize::MAX` values, and they are not indexed (as in rayon).

use super::plumbing::{IndexedProducer, Producer};
use super::IntoParallelIterator;
use std::ops::Range;

/// A parallel iterator over a `Range`; from `(a..b).into_par_iter()` with integer or `char`
/// bounds.
///
/// # Examples
/// ```
/// use throttle::prelude::*;
/// let squares: Vec<u64> = (0..5u64).into_par_iter().map(|i| i * i).collect();
/// assert_eq!(squares, [0, 1, 4, 9, 16]);
/// assert!((0..1000).into_par_iter().all(|x| x < 1000)); // `i32`, as in `std`
/// ```
///
/// # Panics
/// Running a range of 64-bit bounds that holds more than `usize::MAX` values panics (possible
/// only on 32-bit targets).
#[derive(Debug, Clone)]
pub struct Iter<T> {
    pub(crate) range: Range<T>,
    /// 128-bit ranges once split: the units this piece has (`None`: as many as its values,
    /// saturated at `usize::MAX`), so that pieces' units add up to their whole's.
    pub(crate) units: Option<usize>,
}

impl<T> IntoParallelIterator for Range<T>
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

macro_rules! range_producer {
    ($($t:ty),*) => {$(
        impl Producer for Iter<$t> {
            type Item = $t;
            type IntoSeq = Range<$t>;
            fn base_len(&self) -> usize {
                if self.range.start >= self.range.end {
                    return 0;
                }
                let len = self.range.end.abs_diff(self.range.start);
                usize::try_from(len).unwrap_or_else(|_| {
                    panic!("range {:?} is longer than usize::MAX", self.range)
                })
            }
            fn split_at(self, index: usize) -> (Self, Self) {
                // `index <= base_len`, so `start + index` lies within the range.
                let mid = self.range.start.wrapping_add(index as $t);
                (
                    Iter { range: self.range.start..mid, units: None },
                    Iter { range: mid..self.range.end, units: None },
                )
            }
            fn into_seq(self) -> Range<$t> {
                self.range
            }
            fn exact_len(&self) -> Option<usize> {
                Some(self.base_len())
            }
        }

        impl IndexedProducer for Iter<$t> {}
    )*};
}

range_producer!(u8, u16, u32, u64, usize, i8, i16, i32, i64, isize);

macro_rules! wide_range_producer {
    ($($t:ty),*) => {$(
        impl Producer for Iter<$t> {
            type Item = $t;
            type IntoSeq = Range<$t>;
            fn base_len(&self) -> usize {
                self.units.unwrap_or_else(|| wide_units(wide_len(&self.range)))
            }
            fn split_at(self, index: usize) -> (Self, Self) {
                let len = wide_len(&self.range);
                let units = self.base_len();
                let index = index.min(units);
                let values = wide_values(len, units, index);
                // `values <= len`, so `start + values` lies within the range.
                let mid = self.range.start.wrapping_add(values as $t);
                (
                    Iter { range: self.range.start..mid, units: Some(index) },
                    Iter { range: mid..self.range.end, units: Some(units - index) },
                )
            }
            fn into_seq(self) -> Range<$t> {
                self.range
            }
            fn exact_len(&self) -> Option<usize> {
                usize::try_from(wide_len(&self.range)).ok().filter(|&n| n == self.base_len())
            }
        }
    )*};
}

wide_range_producer!(u128, i128);

/// The number of values in a 128-bit range.
fn wide_len<T: Ord + Copy + WideDiff>(range: &Range<T>) -> u128 {
    if range.start >= range.end {
        0
    } else {
        T::diff(range.end, range.start)
    }
}

/// `a - b` for `a > b`, as a `u128`.
trait WideDiff {
    fn diff(a: Self, b: Self) -> u128;
}

impl WideDiff for u128 {
    fn diff(a: u128, b: u128) -> u128 {
        a - b
    }
}

impl WideDiff for i128 {
    fn diff(a: i128, b: i128) -> u128 {
        a.abs_diff(b)
    }
}

/// Units of a range of `len` values: the values themselves when they fit a `usize`.
pub(crate) fn wide_units(len: u128) -> usize {
    usize::try_from(len).unwrap_or(usize::MAX)
}

/// How many values the first `index` of `units` units of a range of `len` values hold: all of
/// them when there are as many units as values, else the proportional share.
pub(crate) fn wide_values(len: u128, units: usize, index: usize) -> u128 {
    if index >= units {
        return len;
    }
    if units as u128 == len {
        return index as u128;
    }
    // `index * len / units`, computed without overflow as `index * q + index * r / units` for
    // `len = q * units + r` (`index * r < 2^128`): half the units are half the values.
    let (q, r) = (len / units as u128, len % units as u128);
    index as u128 * q + index as u128 * r / units as u128
}

/// `char` ranges skip the surrogate gap `0xD800..0xE000`: their units are the valid chars.
const GAP_START: u32 = 0xD800;
/// The first `char` after the surrogate gap.
const GAP_END: u32 = 0xE000;

/// The number of valid `char`s in `lo..hi` (code points).
pub(crate) fn chars_between(lo: u32, hi: u32) -> usize {
    if lo >= hi {
        return 0;
    }
    let gap = GAP_END.min(hi).saturating_sub(GAP_START.max(lo));
    (hi - lo - gap) as usize
}

/// The code point `index` valid chars after `lo` (which is a valid char or the gap's end).
pub(crate) fn char_after(lo: u32, index: usize) -> u32 {
    let plain = lo + index as u32;
    if lo < GAP_START && plain >= GAP_START {
        plain + (GAP_END - GAP_START)
    } else {
        plain
    }
}

impl Producer for Iter<char> {
    type Item = char;
    type IntoSeq = Range<char>;
    fn base_len(&self) -> usize {
        chars_between(self.range.start as u32, self.range.end as u32)
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        let mid = char_after(self.range.start as u32, index).min(self.range.end as u32);
        let mid = char::from_u32(mid).expect("a split of a char range lands on a char");
        (
            Iter {
                range: self.range.start..mid,
                units: None,
            },
            Iter {
                range: mid..self.range.end,
                units: None,
            },
        )
    }
    fn into_seq(self) -> Range<char> {
        self.range
    }
    fn exact_len(&self) -> Option<usize> {
        Some(self.base_len())
    }
}

impl IndexedProducer for Iter<char> {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn char_units_skip_the_surrogate_gap() {
        let all = Iter {
            range: '\0'..char::MAX,
            units: None,
        };
        assert_eq!(all.base_len(), ('\0'..char::MAX).count());
        let (l, r) = all.split_at(0xD800);
        assert_eq!(l.range.end, '\u{E000}');
        assert_eq!(r.range.start, '\u{E000}');
    }

    #[test]
    fn wide_units_cover_the_range() {
        let len = u128::MAX / 3;
        let units = wide_units(len);
        assert_eq!(wide_values(len, units, units), len);
        assert!(wide_values(len, units, 1) >= 1);
        let len: u128 = 10u128.pow(27);
        let half = wide_values(len, usize::MAX, usize::MAX / 2);
        assert!(
            len / 2 - half < 1 << 40,
            "half the units is about half the values"
        );
    }
}
