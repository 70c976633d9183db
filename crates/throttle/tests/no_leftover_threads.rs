//! Dropping a pool joins all its threads. The only test in its binary, so that no other test's
//! threads disturb the count of `/proc/self/task`.

use std::time::Duration;
use throttle::Pool;

fn threads_of_this_process() -> usize {
    std::fs::read_dir("/proc/self/task")
        .expect("reading /proc/self/task")
        .count()
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
        assert_eq!(
            threads_of_this_process(),
            before,
            "after dropping a pool of {n}"
        );
    }
    // An idle pool, dropped while its workers sleep.
    let pool = Pool::new(4).unwrap();
    std::thread::sleep(Duration::from_millis(50));
    drop(pool);
    assert_eq!(threads_of_this_process(), before);
}
