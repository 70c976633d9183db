//! Overflow and panics at the edges (issue "Scheduler v2", item 5): extreme lengths saturate or
//! are checked. (The controller's `Duration::MAX` interval is a unit test in
//! `src/controller/auto.rs`.)

use throttle::prelude::*;
use throttle::Pool;

/// The longest ranges split without overflow: computing the pieces of `(0..u64::MAX)` panicked
/// in debug builds.
#[test]
fn the_longest_ranges_split_without_overflow() {
    let pool = Pool::new(2).unwrap();
    pool.install(|| {
        let x = (0..u64::MAX).into_par_iter().find_any(|_| true);
        assert!(x.is_some());
        let y = (0..1u64 << 60).into_par_iter().find_any(|x| x % 7 == 3);
        assert_eq!(y.map(|y| y % 7), Some(3));
    });
}
