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
    let s = pool.stats().since(&before);
    // fib(20) makes 10945 joins; every second half ran somewhere, inline or stolen.
    assert!(s.tasks >= 10945, "tasks {}", s.tasks);
    assert_eq!(s.busy_histogram.len(), 3);
    assert!(s.busy_histogram.iter().sum::<Duration>() <= s.elapsed + Duration::from_millis(5));
    assert!(s.steals <= s.shared + s.tasks);
    let off = Pool::builder().threads(2).stats(false).build().unwrap();
    off.install(|| fib(15));
    assert_eq!(off.stats().tasks, 0);
}
