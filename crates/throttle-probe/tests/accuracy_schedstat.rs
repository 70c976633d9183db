//! schedstat's on-CPU time of a thread agrees with the thread CPU clock within 2 %.

mod common;

use std::time::Duration;

use throttle_probe::Snapshot;

#[test]
fn thread_schedstat_on_cpu_matches_thread_clock_within_2_percent() {
    // A running thread's schedstat lags by up to one scheduler tick (see the `schedstat` module
    // docs). A short sleep before each snapshot makes the kernel fold the current slice in, so the
    // comparison is between the two accountings, not the tick phase.
    std::thread::sleep(Duration::from_millis(1));
    let start = Snapshot::now();
    common::burn_thread_cpu(Duration::from_millis(300));
    std::thread::sleep(Duration::from_millis(1));
    let span = start.elapsed();

    let on_cpu = match span.thread_on_cpu {
        Ok(d) => d,
        Err(why) => {
            eprintln!("skipped: schedstat unavailable: {why}");
            return;
        }
    };
    let err = common::relative_error(on_cpu, span.thread_cpu);
    eprintln!(
        "schedstat on-CPU {on_cpu:?}, thread clock {:?}, error {:.3} %",
        span.thread_cpu,
        err * 100.0
    );
    assert!(
        err < 0.02,
        "schedstat {on_cpu:?} vs clock {:?}",
        span.thread_cpu
    );

    // The process-wide sum includes this thread, so it is at least as large.
    if let Ok(process) = span.on_cpu {
        assert!(process + Duration::from_millis(1) >= on_cpu);
    }
}
