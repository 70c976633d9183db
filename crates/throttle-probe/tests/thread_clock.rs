//! `cpu_time_of_thread`: another thread's CPU clock, read by its kernel thread id.

use std::sync::mpsc;
use std::time::Duration;

/// A thread that burns about 20 ms of CPU reads, from outside, at least that and no more than
/// its own clock says afterwards; once it has exited, its id reads as no thread.
#[test]
fn another_threads_clock_reads_its_cpu_and_none_after_it_exits() {
    let (tid_tx, tid_rx) = mpsc::channel();
    let (go_tx, go_rx) = mpsc::channel::<()>();
    let worker = std::thread::spawn(move || {
        // SAFETY: gettid has no preconditions.
        tid_tx.send(unsafe { libc::gettid() }).unwrap();
        let start = throttle_probe::thread_cpu_time();
        let mut x = 0u64;
        while throttle_probe::thread_cpu_time() - start < Duration::from_millis(20) {
            x = std::hint::black_box(x.wrapping_add(1));
        }
        go_rx.recv().unwrap();
        throttle_probe::thread_cpu_time()
    });
    let tid = tid_rx.recv().unwrap();
    // The worker stops burning only after 20 ms of its own CPU; wait for that from outside.
    let waited = std::time::Instant::now();
    let seen = loop {
        let t = throttle_probe::cpu_time_of_thread(tid).expect("the worker runs");
        if t >= Duration::from_millis(20) {
            break t;
        }
        assert!(
            waited.elapsed() < Duration::from_secs(30),
            "the worker's clock read {t:?} after 30 s of its 20 ms loop"
        );
        std::thread::sleep(Duration::from_millis(1));
    };
    go_tx.send(()).unwrap();
    let own = worker.join().unwrap();
    assert!(
        seen <= own,
        "read {seen:?} from outside, the thread's own clock {own:?}"
    );
    assert_eq!(throttle_probe::cpu_time_of_thread(tid), None);
}
