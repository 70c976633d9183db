//! Ranges as parallel iterators: `(a..b).into_par_iter()` for every primitive integer type and
//! for `char` (the module `throttle::range`, rayon's `rayon::range`).
//!
//! One generic `IntoParallelIterator` impl covers all `Range<T>` (the per-type work is in the
//! iterator impls), so an unsuffixed literal range such as `(0..1000).into_par_iter()` infers
//! its integer type as `i32` the way a sequential `0..1000` does.
//!
//! Ranges of up to 64-bit integers and of `char`s are indexed. Ranges of 128-bit integers are
//! not (as in rayon): one that holds at most `usize::MAX` values runs as an indexed one, a
//! longer one runs in units of `len / usize::MAX` values (throttle's engine splits units).

use super::plumbing::engine::{self, ByUnits, Pieces};
use super::plumbing::{bridge, Consumer, Folder, Producer, ProducerCallback, UnindexedConsumer};
use super::{IndexedParallelIterator, IntoParallelIterator, ParallelIterator};
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
    range: Range<T>,
}

impl<T> IntoParallelIterator for Range<T>
where
    Iter<T>: ParallelIterator,
{
    type Iter = Iter<T>;
    type Item = <Iter<T> as ParallelIterator>::Item;
    fn into_par_iter(self) -> Iter<T> {
        Iter { range: self }
    }
}

impl<T> Iter<T> {
    pub(crate) fn new(range: Range<T>) -> Self {
        Iter { range }
    }
}

/// A `Range` whose length is exact in its type (`std`'s ranges of 64-bit integers and of
/// `char`s do not say so): the sequential iterator of a range's piece. Everything else is the
/// range's own, so its internal iteration stays as fast.
#[derive(Debug, Clone)]
pub(crate) struct ExactRange<T>(pub(crate) Range<T>);

/// The producer of an indexed range.
pub(crate) struct RangeProducer<T>(pub(crate) Range<T>);

/// A range's length, as its type counts it.
pub(crate) trait RangeLen: Sized {
    fn range_len(range: &Range<Self>) -> usize;
}

macro_rules! exact_range {
    ($($t:ty),*) => {$(
        impl Iterator for ExactRange<$t> {
            type Item = $t;
            #[inline]
            fn next(&mut self) -> Option<$t> {
                self.0.next()
            }
            fn size_hint(&self) -> (usize, Option<usize>) {
                let n = <$t as RangeLen>::range_len(&self.0);
                (n, Some(n))
            }
            #[inline]
            fn fold<B, G: FnMut(B, $t) -> B>(self, init: B, g: G) -> B {
                self.0.fold(init, g)
            }
        }

        impl DoubleEndedIterator for ExactRange<$t> {
            #[inline]
            fn next_back(&mut self) -> Option<$t> {
                self.0.next_back()
            }
            #[inline]
            fn rfold<B, G: FnMut(B, $t) -> B>(self, init: B, g: G) -> B {
                self.0.rfold(init, g)
            }
        }

        impl ExactSizeIterator for ExactRange<$t> {}

        impl Producer for RangeProducer<$t> {
            type Item = $t;
            type IntoIter = ExactRange<$t>;
            fn into_iter(self) -> ExactRange<$t> {
                ExactRange(self.0)
            }
            fn split_at(self, index: usize) -> (Self, Self) {
                let mid = <$t as Advance>::advance(self.0.start, index);
                (RangeProducer(self.0.start..mid), RangeProducer(mid..self.0.end))
            }
        }
    )*};
}

/// Integer ranges: the length, and the value `n` steps after `start`.
macro_rules! integer_len {
    ($($t:ty),*) => {$(
        impl RangeLen for $t {
            fn range_len(range: &Range<$t>) -> usize {
                if range.start >= range.end {
                    return 0;
                }
                usize::try_from(range.end.abs_diff(range.start))
                    .unwrap_or_else(|_| panic!("range {range:?} is longer than usize::MAX"))
            }
        }

        impl Advance for $t {
            fn advance(start: $t, n: usize) -> $t {
                // `n <= len`, so `start + n` lies within the range.
                start.wrapping_add(n as $t)
            }
        }
    )*};
}

/// The value `n` steps after `start`.
pub(crate) trait Advance: Sized {
    fn advance(start: Self, n: usize) -> Self;
}

integer_len!(u8, u16, u32, u64, u128, usize, i8, i16, i32, i64, i128, isize);
exact_range!(u8, u16, u32, u64, u128, usize, i8, i16, i32, i64, i128, isize, char);

/// Indexed ranges: a range of at most `usize::MAX` values, its own producer.
macro_rules! indexed_range {
    ($($t:ty),*) => {$(
        impl ParallelIterator for Iter<$t> {
            type Item = $t;
            fn drive_unindexed<C: UnindexedConsumer<$t>>(self, consumer: C) -> C::Result {
                bridge(self, consumer)
            }
            fn opt_len(&self) -> Option<usize> {
                Some(self.len())
            }
        }

        impl IndexedParallelIterator for Iter<$t> {
            fn drive<C: Consumer<$t>>(self, consumer: C) -> C::Result {
                bridge(self, consumer)
            }
            fn len(&self) -> usize {
                <$t as RangeLen>::range_len(&self.range)
            }
            fn with_producer<CB: ProducerCallback<$t>>(self, callback: CB) -> CB::Output {
                callback.callback(RangeProducer(self.range))
            }
        }
    )*};
}

indexed_range!(u8, u16, u32, u64, usize, i8, i16, i32, i64, isize, char);

/// 128-bit ranges: indexed runs when they fit, unit runs when they do not.
macro_rules! wide_range {
    ($($t:ty),*) => {$(
        impl ParallelIterator for Iter<$t> {
            type Item = $t;
            fn drive_unindexed<C: UnindexedConsumer<$t>>(self, consumer: C) -> C::Result {
                let len = wide_len(&self.range);
                match usize::try_from(len) {
                    Ok(n) => super::plumbing::bridge_producer_consumer(n, RangeProducer(self.range), consumer),
                    Err(_) => {
                        let units = wide_units(len);
                        let pieces = WidePieces { range: self.range, units };
                        engine::drive(pieces, units, ByUnits(consumer))
                    }
                }
            }
            fn opt_len(&self) -> Option<usize> {
                usize::try_from(wide_len(&self.range)).ok()
            }
        }

        impl WideRange for $t {
            fn wide_len(range: &Range<$t>) -> u128 {
                if range.start >= range.end {
                    0
                } else {
                    range.end.abs_diff(range.start) as u128
                }
            }
            fn add(start: $t, n: u128) -> $t {
                start.wrapping_add(n as $t)
            }
        }
    )*};
}

wide_range!(u128, i128);

/// A 128-bit integer type's range arithmetic, in `u128`.
pub(crate) trait WideRange: Copy + Send {
    fn wide_len(range: &Range<Self>) -> u128;
    fn add(start: Self, n: u128) -> Self;
}

fn wide_len<T: WideRange>(range: &Range<T>) -> u128 {
    T::wide_len(range)
}

/// A 128-bit range longer than `usize::MAX` as the engine splits it: `units` units, each
/// about `len / units` values.
pub(crate) struct WidePieces<T> {
    range: Range<T>,
    units: usize,
}

impl<T: WideRange> Pieces for WidePieces<T>
where
    Range<T>: Iterator<Item = T>,
{
    type Item = T;

    fn split_at(self, index: usize) -> (Self, Self) {
        let len = T::wide_len(&self.range);
        let index = index.min(self.units);
        let mid = T::add(self.range.start, wide_values(len, self.units, index));
        (
            WidePieces {
                range: self.range.start..mid,
                units: index,
            },
            WidePieces {
                range: mid..self.range.end,
                units: self.units - index,
            },
        )
    }

    /// In runs of [`WIDE_RUN`] values with a look at the folder between them: a unit here is
    /// some 10^7 values or more, so a folder that stops early (a search that another piece
    /// won) must not wait for a filter to reject a whole unit before it is asked.
    fn fold_with<F: Folder<T>>(self, mut folder: F) -> F {
        let mut start = self.range.start;
        let mut left = T::wide_len(&self.range);
        while left > 0 {
            let n = left.min(WIDE_RUN);
            let stop = T::add(start, n);
            folder = folder.consume_iter(start..stop);
            if folder.full() {
                break;
            }
            start = stop;
            left -= n;
        }
        folder
    }
}

/// Values a wide piece hands its folder between two looks at whether it is full: about 50 µs
/// of a cheap filter over `u128`s (~1 ns a value), so a lost search ends that soon after.
const WIDE_RUN: u128 = 1 << 16;

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

impl RangeLen for char {
    fn range_len(range: &Range<char>) -> usize {
        chars_between(range.start as u32, range.end as u32)
    }
}

impl Advance for char {
    fn advance(start: char, n: usize) -> char {
        let mid = char_after(start as u32, n);
        char::from_u32(mid).expect("a split of a char range lands on a char")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn char_units_skip_the_surrogate_gap() {
        let all = '\0'..char::MAX;
        assert_eq!(char::range_len(&all), ('\0'..char::MAX).count());
        let mid = char::advance('\0', 0xD800);
        assert_eq!(mid, '\u{E000}');
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
