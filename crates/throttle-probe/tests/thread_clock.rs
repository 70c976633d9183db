//! `ThreadClock`: another thread's CPU clock, read through a handle that names one thread.
//!
//! What is true and tested: while the thread runs, a reading is its CPU time up to the instant;
//! after it has been joined, a reading is its final time or `None`, and becomes `None` (the
//! kernel releases a joined thread a moment after `join` returns, so `None` is waited for, not
//! expected at once); and when its id is given to a new thread, the handle reads `None`, never
//! the new thread's time.

use std::sync::mpsc;
use std::time::{Duration, Instant};

use throttle_probe::ThreadClock;

/// How long a condition the kernel brings about soon (a thread released after its join) may
/// take on a loaded host before the test calls it a hang.
const HANG_GUARD: Duration = Duration::from_secs(120);

/// Burns CPU on the calling thread until its own clock has gained `cpu`.
fn burn(cpu: Duration) {
    let start = throttle_probe::thread_cpu_time();
    let mut x = 0u64;
    while throttle_probe::thread_cpu_time() - start < cpu {
        x = std::hint::black_box(x.wrapping_add(1));
    }
}

/// Polls `f` until it returns `Some`, panicking with `what` after [`HANG_GUARD`].
fn wait_for<T>(what: &str, mut f: impl FnMut() -> Option<T>) -> T {
    let start = Instant::now();
    loop {
        if let Some(v) = f() {
            return v;
        }
        assert!(
            start.elapsed() < HANG_GUARD,
            "still waiting after {HANG_GUARD:?}: {what}"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// A thread that burns 20 ms of CPU reads, from outside, at least that and no more than its own
/// clock says afterwards; after its join, every reading is its final time or `None`, and
/// `None` comes.
#[test]
fn another_threads_clock_reads_its_time_and_after_its_end_nothing_else() {
    let (clock_tx, clock_rx) = mpsc::channel();
    let (go_tx, go_rx) = mpsc::channel::<()>();
    let worker = std::thread::spawn(move || {
        clock_tx
            .send(ThreadClock::current().expect("procfs is mounted"))
            .unwrap();
        burn(Duration::from_millis(20));
        go_rx.recv().unwrap();
        throttle_probe::thread_cpu_time()
    });
    let clock = clock_rx.recv().unwrap();
    // The worker stops burning only after 20 ms of its own CPU; wait for that from outside.
    let seen = wait_for("the worker's clock to reach 20 ms", || {
        let t = clock.cpu_time().expect("the worker runs");
        (t >= Duration::from_millis(20)).then_some(t)
    });
    go_tx.send(()).unwrap();
    let own = worker.join().unwrap();
    assert!(
        seen <= own,
        "read {seen:?} from outside, the thread's own clock {own:?}"
    );
    wait_for("the joined thread's clock to read None", || {
        match clock.cpu_time() {
            None => Some(()),
            Some(t) => {
                assert!(
                    t >= own,
                    "after the join: {t:?}, below the thread's own last {own:?}"
                );
                None
            }
        }
    });
    assert_eq!(
        clock.cpu_time(),
        None,
        "a released thread's clock came back"
    );
}

/// The calling thread's clock, and a thread listed in `/proc/self/task`, read through handles.
#[test]
fn the_callers_clock_and_a_listed_threads_clock_read_up_to_the_instant() {
    let mine = ThreadClock::current().expect("procfs is mounted");
    burn(Duration::from_millis(2));
    let read = mine.cpu_time().expect("the calling thread runs");
    assert!(read >= Duration::from_millis(2));
    assert!(read <= throttle_probe::thread_cpu_time());
    let listed = ThreadClock::of_thread(mine.tid()).expect("the caller is listed");
    assert!(listed.cpu_time().expect("the calling thread runs") >= read);
    assert!(ThreadClock::of_thread(0).is_none());
    assert!(ThreadClock::of_thread(-1).is_none());
    // Process 1 is never a thread of this test process (a test process is not init).
    assert!(ThreadClock::of_thread(1).is_none());
}

/// The kernel's next process id, where this process may set it (root, or CAP_CHECKPOINT_RESTORE).
const NS_LAST_PID: &str = "/proc/sys/kernel/ns_last_pid";

/// A handle made for a thread that has ended reads `None` after a new thread of this process
/// has been given the same id, while a handle made for the new thread reads the new thread's
/// time (a bare `clock_gettime` on the id, without the handle's check, would read it too). The new thread gets the id by `ns_last_pid`, which needs root;
/// elsewhere the test says so and checks nothing (CI runs as root).
#[test]
fn a_clock_never_reads_the_thread_that_was_given_its_id() {
    if std::fs::OpenOptions::new()
        .write(true)
        .open(NS_LAST_PID)
        .is_err()
    {
        eprintln!("SKIPPED: {NS_LAST_PID} is not writable here (needs root)");
        return;
    }
    let (clock_tx, clock_rx) = mpsc::channel();
    std::thread::spawn(move || {
        let clock = ThreadClock::current().expect("procfs is mounted");
        burn(Duration::from_millis(1));
        clock_tx.send(clock).unwrap();
    })
    .join()
    .unwrap();
    let old = clock_rx.recv().unwrap();
    let tid = old.tid();
    let task_dir = format!("/proc/self/task/{tid}");
    wait_for("the ended thread to be released", || {
        (!std::path::Path::new(&task_dir).exists()).then_some(())
    });

    // Other processes on the host take ids too: try until the new thread gets this one.
    for _attempt in 0..1_000 {
        std::fs::write(NS_LAST_PID, (tid - 1).to_string()).expect("ns_last_pid was writable");
        let (tid_tx, tid_rx) = mpsc::channel();
        let (done_tx, done_rx) = mpsc::channel::<()>();
        let new = std::thread::spawn(move || {
            // SAFETY: gettid has no preconditions.
            tid_tx.send(unsafe { libc::gettid() }).unwrap();
            burn(Duration::from_millis(5));
            done_rx.recv().unwrap();
        });
        let new_tid = tid_rx.recv().unwrap();
        if new_tid == tid {
            wait_for("the new thread to have run 5 ms", || {
                let clock = ThreadClock::of_thread(tid).expect("the new thread runs");
                (clock.cpu_time()? >= Duration::from_millis(5)).then_some(())
            });
            assert_eq!(
                old.cpu_time(),
                None,
                "the ended thread's handle read the time of the new thread {tid}"
            );
            done_tx.send(()).unwrap();
            new.join().unwrap();
            return;
        }
        done_tx.send(()).unwrap();
        new.join().unwrap();
    }
    panic!(
        "no new thread got id {tid} in 1,000 tries with {NS_LAST_PID} set to {}",
        tid - 1
    );
}
