//! Dropping a pool in auto mode joins its controller thread too. Its own test binary: other
//! tests' threads would disturb the count of `/proc/self/task`.

#[cfg(target_os = "linux")]
fn threads_of_this_process() -> usize {
    std::fs::read_dir("/proc/self/task")
        .expect("reading /proc/self/task")
        .count()
}

/// The thread count once it reaches `want`, or after a minute whatever it is (a hang guard,
/// not a timing target). A joined thread has run to its end, but the kernel lists it in
/// `/proc/self/task` until it has reaped it, a moment after `pthread_join` returned (seen once
/// in 130 runs under load); a thread that starts lists only once it exists. A leaked thread
/// stays listed for good.
#[cfg(target_os = "linux")]
fn settles_at(want: usize) -> usize {
    let start = std::time::Instant::now();
    while start.elapsed() < std::time::Duration::from_secs(60) {
        let n = threads_of_this_process();
        if n == want {
            return n;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    threads_of_this_process()
}

#[cfg(target_os = "linux")]
#[test]
fn dropping_an_auto_pool_joins_the_controller() {
    let before = threads_of_this_process();
    for _ in 0..5 {
        let pool = throttle::Pool::builder()
            .threads(3)
            .auto_concurrency()
            .build()
            .unwrap();
        pool.for_range(0..10_000, |i| {
            std::hint::black_box(i);
        });
        assert_eq!(
            settles_at(before + 4),
            before + 4,
            "3 workers + the controller"
        );
        pool.set_concurrency(2).unwrap();
        assert_eq!(
            settles_at(before + 3),
            before + 3,
            "fixed: the controller is gone"
        );
        pool.set_concurrency_auto().unwrap();
        drop(pool);
        assert_eq!(settles_at(before), before, "dropped: no thread left");
    }
}
