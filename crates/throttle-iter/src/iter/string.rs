//! `String`'s parallel iterators (rayon's `rayon::string`): its drain.

use super::plumbing::UnindexedConsumer;
use super::str::ParallelString;
use super::vec::checked_range;
use super::{ParallelDrainRange, ParallelIterator};
use std::ops::{Range, RangeBounds};

/// The chars of a range of a `String`, removed from it; from
/// [`ParallelDrainRange::par_drain`] on a `&mut String`. The range is removed when the drain
/// is dropped, whether it ran or not.
///
/// # Examples
/// ```
/// use throttle::prelude::*;
/// let mut s = String::from("hello world");
/// let n = s.par_drain(..6).filter(|c| *c == 'l').count();
/// assert_eq!((n, s.as_str()), (2, "world"));
/// ```
#[derive(Debug)]
pub struct Drain<'a> {
    string: &'a mut String,
    range: Range<usize>,
}

impl ParallelIterator for Drain<'_> {
    type Item = char;

    fn drive_unindexed<C: UnindexedConsumer<char>>(self, consumer: C) -> C::Result {
        self.string[self.range.clone()]
            .par_chars()
            .drive_unindexed(consumer)
    }
}

impl Drop for Drain<'_> {
    fn drop(&mut self) {
        self.string.drain(self.range.clone());
    }
}

impl<'a> ParallelDrainRange<usize> for &'a mut String {
    type Iter = Drain<'a>;
    type Item = char;
    #[track_caller]
    fn par_drain<R: RangeBounds<usize>>(self, range: R) -> Drain<'a> {
        let range = checked_range(range, self.len());
        assert!(
            self.is_char_boundary(range.start) && self.is_char_boundary(range.end),
            "par_drain: range {range:?} is not on char boundaries"
        );
        Drain {
            string: self,
            range,
        }
    }
}
