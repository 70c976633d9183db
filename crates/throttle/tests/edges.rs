//! Overflow and panics at the edges: extreme lengths saturate or are checked. (The controller's wait of `Duration::MAX` is also a unit test in
//! `src/controller/auto.rs`.)

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
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

/// Panics seen on the controller's thread since this test binary started.
static CONTROLLER_PANICS: AtomicUsize = AtomicUsize::new(0);

/// `set_concurrency_auto_every(Duration::MAX)` end to end: accepted, no panic on the
/// controller's thread (`throttle-controller`, counted by the panic hook), the pool works in
/// auto mode, and leaving auto mode stops the controller from its long wait. The controller
/// starts scanning, so its first wait is a sixteenth of the interval; the wait of a whole
/// `Duration::MAX` (an idle, settled pool), whose `now + interval` panicked and killed the
/// thread while `is_concurrency_auto()` stayed true, is reached only by the unit test in
/// `src/controller/auto.rs`.
#[test]
fn an_endless_auto_interval_keeps_the_controller_alive() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if std::thread::current().name() == Some("throttle-controller") {
            CONTROLLER_PANICS.fetch_add(1, Ordering::SeqCst);
        }
        previous(info);
    }));
    let pool = Pool::new(2).unwrap();
    pool.set_concurrency_auto_every(Duration::MAX).unwrap();
    for _ in 0..20 {
        assert_eq!(
            pool.install(|| (0..10_000u64).into_par_iter().sum::<u64>()),
            49_995_000
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    assert!(pool.is_concurrency_auto());
    pool.set_concurrency(2).unwrap();
    assert!(!pool.is_concurrency_auto());
    assert_eq!(CONTROLLER_PANICS.load(Ordering::SeqCst), 0);
}
