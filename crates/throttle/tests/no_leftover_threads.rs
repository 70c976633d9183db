//! Dropping a pool joins all its threads. The only test in its binary, so that no other test's
//! threads disturb the count of `/proc/self/task`.

use std::time::{Duration, Instant};
use throttle::Pool;

fn threads_of_this_process() -> usize {
    std::fs::read_dir("/proc/self/task")
        .expect("reading /proc/self/task")
        .count()
}

/// The thread count once it reaches `want`, or after a minute whatever it is (a hang guard,
/// not a timing target). A joined thread has run to its end, but the kernel lists it in
/// `/proc/self/task` until it has reaped it, a moment after `pthread_join` returned; a spare
/// thread exits after a short idle time of its own. A leaked thread stays listed for good.
fn settles_at(want: usize) -> usize {
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(60) {
        let n = threads_of_this_process();
        if n == want {
            return n;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    threads_of_this_process()
}

#[test]
fn dropping_a_pool_joins_all_its_threads() {
    let before = threads_of_this_process();
    for n in [1, 3, 8] {
        let pool = Pool::new(n).unwrap();
        pool.for_range(0..10_000, |i| {
            std::hint::black_box(i);
        });
        assert!(threads_of_this_process() >= before + n);
        drop(pool);
        assert_eq!(settles_at(before), before, "after dropping a pool of {n}");
    }
    // An idle pool, dropped while its workers sleep.
    let pool = Pool::new(4).unwrap();
    std::thread::sleep(Duration::from_millis(50));
    drop(pool);
    assert_eq!(settles_at(before), before, "after dropping an idle pool");
}
