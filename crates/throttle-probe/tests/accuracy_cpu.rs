//! The probe's process CPU time (getrusage) agrees with the kernel's tick accounting in
//! `/proc/self/stat` (utime + stime) within 5 % for a busy loop.
//!
//! Alone in its file so that no other test adds CPU time to the process while it runs.

mod common;

use std::time::Duration;

use throttle_probe::procstat::ProcStatTimes;
use throttle_probe::Snapshot;

#[test]
fn busy_loop_cpu_matches_proc_stat_within_5_percent() {
    // 800 ms of CPU: /proc/self/stat counts utime and stime in clock ticks (10 ms at USER_HZ =
    // 100), each truncated, so a difference of two readings is off by less than two ticks (20 ms),
    // i.e. < 2.5 % here.
    let stat_before = ProcStatTimes::read("self").unwrap();
    let start = Snapshot::now();
    common::burn_thread_cpu(Duration::from_millis(800));
    let span = start.elapsed();
    let stat_after = ProcStatTimes::read("self").unwrap();

    let by_proc_stat = stat_after.cpu() - stat_before.cpu();
    let by_probe = span.cpu();
    let err = common::relative_error(by_probe, by_proc_stat);
    eprintln!(
        "probe cpu {by_probe:?} (user {:?} system {:?}), /proc/self/stat {by_proc_stat:?}, error {:.2} %",
        span.user,
        span.system,
        err * 100.0
    );
    assert!(
        err < 0.05,
        "probe {by_probe:?} vs /proc/self/stat {by_proc_stat:?}"
    );
}
