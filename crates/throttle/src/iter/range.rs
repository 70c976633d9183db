//! Integer ranges as parallel iterators: `(a..b).into_par_iter()`.

use super::plumbing::{IndexedProducer, Producer};
use std::ops::Range;

/// A parallel iterator over a `Range` of integers; from `into_par_iter()` on `a..b` with
/// any primitive integer bounds up to 64 bits (`u8` … `u64`, `usize`, `i8` … `i64`, `isize`).
///
/// # Examples
/// ```
/// use throttle::prelude::*;
/// let squares: Vec<u64> = (0..5u64).into_par_iter().map(|i| i * i).collect();
/// assert_eq!(squares, [0, 1, 4, 9, 16]);
/// ```
///
/// # Panics
/// `into_par_iter()` panics if the range holds more than `usize::MAX` values (possible only for
/// 64-bit bounds on a 32-bit target).
#[derive(Debug, Clone)]
pub struct RangeIter<T> {
    range: Range<T>,
}

macro_rules! range_producer {
    ($($t:ty),*) => {$(
        impl Producer for RangeIter<$t> {
            type Item = $t;
            type IntoSeq = Range<$t>;
            fn base_len(&self) -> usize {
                if self.range.start >= self.range.end {
                    return 0;
                }
                // Checked in `into_par_iter`: the length fits a usize.
                self.range.end.abs_diff(self.range.start) as usize
            }
            fn split_at(self, index: usize) -> (Self, Self) {
                // `index <= base_len`, so `start + index` lies within the range.
                let mid = self.range.start.wrapping_add(index as $t);
                (
                    RangeIter { range: self.range.start..mid },
                    RangeIter { range: mid..self.range.end },
                )
            }
            fn into_seq(self) -> Range<$t> {
                self.range
            }
            fn exact_len(&self) -> Option<usize> {
                Some(self.base_len())
            }
        }

        impl IndexedProducer for RangeIter<$t> {}

        impl super::IntoParallelIterator for Range<$t> {
            type Iter = RangeIter<$t>;
            type Item = $t;
            fn into_par_iter(self) -> RangeIter<$t> {
                if self.start < self.end {
                    assert!(
                        usize::try_from(self.end.abs_diff(self.start)).is_ok(),
                        "into_par_iter: range {:?} is longer than usize::MAX", self
                    );
                }
                RangeIter { range: self }
            }
        }
    )*};
}

range_producer!(u8, u16, u32, u64, usize, i8, i16, i32, i64, isize);
