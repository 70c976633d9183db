//! Dropping a pool in auto mode joins its controller thread too. Its own test binary: other
//! tests' threads would disturb the count of `/proc/self/task`.

#[cfg(target_os = "linux")]
fn threads_of_this_process() -> usize {
    std::fs::read_dir("/proc/self/task")
        .expect("reading /proc/self/task")
        .count()
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
            threads_of_this_process(),
            before + 4,
            "3 workers + the controller"
        );
        pool.set_concurrency(2).unwrap();
        assert_eq!(
            threads_of_this_process(),
            before + 3,
            "fixed: the controller is gone"
        );
        pool.set_concurrency_auto().unwrap();
        drop(pool);
        assert_eq!(threads_of_this_process(), before);
    }
}
