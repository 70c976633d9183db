//! Another thread's CPU clock, read by a handle that names one thread for its whole life.
//!
//! Linux gives every thread a CPU clock that `clock_gettime` reads by the thread's kernel id
//! (tid). A tid names a thread only while that thread exists: once the thread has ended and the
//! kernel has released it, the same number can be given to a new thread of the same process
//! (with `pid_max` at 32,768, as on many machines, a process that starts threads in a loop
//! reuses ids within seconds). A bare tid therefore cannot say whose time it read.
//!
//! [`ThreadClock`] pins the thread when it is made: it keeps the thread's directory
//! `/proc/self/task/<tid>` open. procfs ties that directory to the kernel's record of the thread
//! (its `struct pid`), not to the number, so a look-up inside it fails once that thread has been
//! released, even after the number has been reused.
//!
//! # Why a reading is never another thread's
//!
//! [`ThreadClock::cpu_time`] reads the clock of `tid` (instant *t1*), then looks up `stat` inside
//! the kept directory (instant *t2*), and returns the reading only if the look-up succeeds.
//! The kernel attaches a thread to its id once, when the thread starts, and detaches it once,
//! when the thread is released; a detached id is never attached to that thread again. The
//! thread named by the handle was attached when the handle was made (*t0*) and, by the
//! successful look-up, still at *t2*, so it held the id during all of [*t0*, *t2*], and the clock
//! read at *t1* inside that interval was its own. If the look-up fails, the thread has been
//! released: the reading is dropped and the answer is `None`, whatever the clock returned.
//!
//! # What a reading means around a thread's end
//!
//! `JoinHandle::join` returns when the thread's user code is done, slightly before the kernel
//! releases the thread. In between, a reading can still succeed: it is that thread's final CPU
//! time (which does not shrink). From the release on, every reading is `None`.

use std::ffi::CStr;
use std::fs::File;
use std::os::fd::AsRawFd;
use std::time::Duration;

use crate::sys;

/// A handle on one thread's CPU clock: [`cpu_time`](Self::cpu_time) reads that thread's CPU time
/// up to the instant while it exists, and `None` once it has ended, never another thread's time,
/// even after its id has been given to a new thread.
///
/// The handle holds one file descriptor of its own (close-on-exec) until it is dropped.
///
/// # Examples
///
/// ```
/// use throttle_probe::ThreadClock;
///
/// let (tx, rx) = std::sync::mpsc::channel();
/// let worker = std::thread::spawn(move || {
///     tx.send(ThreadClock::current().expect("procfs is mounted")).unwrap();
///     std::hint::black_box((0..1_000_000u64).sum::<u64>())
/// });
/// let clock = rx.recv().unwrap();
/// let during = clock.cpu_time();
/// worker.join().unwrap();
/// // Once the kernel has released the thread, `clock.cpu_time()` is `None`; until then it may
/// // still read the thread's final time. It never reads another thread's.
/// assert!(during.is_some() || clock.cpu_time().is_none());
/// ```
#[derive(Debug)]
pub struct ThreadClock {
    tid: i32,
    /// `/proc/self/task/<tid>`, opened while the thread existed: see the module docs.
    task_dir: File,
}

impl ThreadClock {
    /// The clock of the calling thread.
    ///
    /// `None` only if procfs is not mounted at `/proc`.
    ///
    /// # Examples
    ///
    /// ```
    /// let clock = throttle_probe::ThreadClock::current().expect("procfs is mounted");
    /// assert!(clock.cpu_time().expect("the calling thread runs") <= throttle_probe::thread_cpu_time());
    /// ```
    pub fn current() -> Option<ThreadClock> {
        let tid = i32::try_from(sys::gettid()).ok()?;
        ThreadClock::of_thread(tid)
    }

    /// The clock of the thread of this process whose kernel id is `tid` at this instant (as listed
    /// in `/proc/self/task`).
    ///
    /// `None` if no thread of this process has that id now (it has ended, or it belongs to
    /// another process) or procfs is not mounted.
    ///
    /// # Examples
    ///
    /// ```
    /// use throttle_probe::ThreadClock;
    ///
    /// // Every thread of this process, as it is now.
    /// let clocks: Vec<ThreadClock> = std::fs::read_dir("/proc/self/task")
    ///     .unwrap()
    ///     .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
    ///     .filter_map(ThreadClock::of_thread)
    ///     .collect();
    /// assert!(!clocks.is_empty());
    /// ```
    pub fn of_thread(tid: i32) -> Option<ThreadClock> {
        if tid <= 0 {
            return None;
        }
        let task_dir = File::open(format!("/proc/self/task/{tid}")).ok()?;
        Some(ThreadClock { tid, task_dir })
    }

    /// The thread's kernel id.
    pub fn tid(&self) -> i32 {
        self.tid
    }

    /// CPU time the thread has used so far, up to the instant; `None` once the thread has been
    /// released by the kernel (shortly after it ends).
    ///
    /// Unlike `/proc/self/task/<tid>/schedstat`, whose runtime lags a thread on a CPU by up to a
    /// scheduler tick, this is the thread's CPU clock, exact to the call.
    pub fn cpu_time(&self) -> Option<Duration> {
        let reading = sys::cpu_time_of_thread(self.tid)?;
        self.thread_exists().then_some(reading)
    }

    /// Whether the thread the handle was made for has not yet been released: a look-up in its
    /// kept procfs directory, which fails once the kernel has detached the thread from its id.
    fn thread_exists(&self) -> bool {
        const STAT: &CStr = c"stat";
        // SAFETY: [1] the descriptor is owned by `self.task_dir`, open for the whole call;
        // [2] `STAT` is a NUL-terminated string that outlives the call; [3] faccessat only looks
        // the name up and writes nothing into this process's memory.
        let rc =
            unsafe { libc::faccessat(self.task_dir.as_raw_fd(), STAT.as_ptr(), libc::F_OK, 0) };
        rc == 0
    }
}
