//! With twice as many busy threads as usable CPUs, the threads must queue for a CPU, and the
//! probe's process-wide run-queue wait shows it.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use throttle_probe::{Snapshot, Topology};

#[test]
fn oversubscribed_threads_wait_on_the_run_queue() {
    let cpus = Topology::detect().affinity.len().max(1);
    let threads = 2 * cpus;
    let stop = AtomicBool::new(false);
    let start = Snapshot::now();
    let span = std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                let mut x = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    x = std::hint::black_box(x.wrapping_add(1));
                }
            });
        }
        std::thread::sleep(Duration::from_millis(300));
        // The end snapshot is taken while every worker is still alive: schedstat sums only live
        // threads.
        let span = start.elapsed();
        stop.store(true, Ordering::Relaxed);
        span
    });
    let wait = match span.run_queue_wait {
        Ok(w) => w,
        Err(why) => {
            eprintln!("skipped: schedstat unavailable: {why}");
            return;
        }
    };
    eprintln!(
        "{threads} busy threads on {cpus} CPUs for {:?}: run-queue wait {wait:?}, cpu {:?}, \
         involuntary switches {}",
        span.wall,
        span.cpu(),
        span.involuntary_switches
    );
    // Demand is twice the capacity, so ideally the threads wait about as long as they run, i.e.
    // about `cpus * wall` in total; a tenth of the wall time is far below that and far above zero.
    assert!(
        wait > span.wall / 10,
        "run-queue wait {wait:?} over {:?} with {threads} threads on {cpus} CPUs",
        span.wall
    );
}
