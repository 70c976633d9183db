//! Pools build with clear errors and report their stats.

use std::time::Duration;
use throttle::Pool;

#[test]
fn bad_sizes_are_errors_with_reasons() {
    let e = Pool::new(0).unwrap_err().to_string();
    assert!(e.contains("at least 1"), "{e}");
    let e = Pool::new(70_000).unwrap_err().to_string();
    assert!(e.contains("70000"), "{e}");
    let pool = Pool::new(2).unwrap();
    let e = pool.set_concurrency(3).unwrap_err().to_string();
    assert!(e.contains("1..=2"), "{e}");
}

#[test]
fn stats_describe_the_work() {
    let pool = Pool::new(2).unwrap();
    let before = pool.stats();
    fn fib(n: u64) -> u64 {
        if n < 2 {
            return n;
        }
        let (a, b) = throttle::join(|| fib(n - 1), || fib(n - 2));
        a + b
    }
    assert_eq!(pool.install(|| fib(20)), 6765);
    let after = pool.stats();
    let s = after.since(&before);
    // fib(20) makes 10945 joins; every second half ran somewhere, inline or stolen.
    assert!(s.tasks >= 10945, "tasks {}", s.tasks);
    assert_eq!(s.busy_histogram.len(), 3);
    // Over the window, the histogram may hold more than the window's length by what `before`
    // had not been credited yet (a change concurrent with that read: its closing interval,
    // of any length if the changer was preempted, is credited later), never more.
    let sum = |h: &[Duration]| h.iter().sum::<Duration>();
    let uncredited = before.elapsed.saturating_sub(sum(&before.busy_histogram));
    assert!(
        sum(&s.busy_histogram) <= s.elapsed + uncredited,
        "{s:?} after {before:?}"
    );
    assert!(sum(&after.busy_histogram) <= after.elapsed, "{after:?}");
    assert!(s.steals <= s.shared + s.tasks);
    let off = Pool::builder().threads(2).stats(false).build().unwrap();
    off.install(|| fib(15));
    assert_eq!(off.stats().tasks, 0);
}
