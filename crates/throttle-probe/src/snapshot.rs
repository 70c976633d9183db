//! Point-in-time readings of the calling process and thread ([`Snapshot`]) and the difference of
//! two of them ([`Span`]).
//!
//! A snapshot reads, in this order: the monotonic clock, the thread CPU clock
//! (`CLOCK_THREAD_CPUTIME_ID`), `getrusage(RUSAGE_SELF)`, `/proc/thread-self/schedstat` and
//! `/proc/self/task/*/schedstat`. Taking one costs a few system calls plus three per live thread,
//! so it suits spans of a millisecond or more.
//!
//! What a span covers:
//! - `wall`, `thread_cpu`, `thread_on_cpu`, `thread_run_queue_wait`: the thread that took the
//!   snapshots (both must be taken on the same thread; see [`Snapshot::span_since`]).
//! - `user`, `system`, the context switches: the whole process, exited threads included
//!   (`getrusage` keeps them).
//! - `on_cpu`, `run_queue_wait`, `timeslices`: the sum over the process's threads that are alive at
//!   the later snapshot. A thread that exits between the two snapshots is missing from the later
//!   sum, so its share is lost and the difference can undercount (see [`crate::schedstat`]).

use std::time::{Duration, Instant};

use crate::schedstat::{self, SchedStat};
use crate::serde_helpers::{duration_secs, measured, measured_duration_secs};
use crate::{sys, Measured, Unavailable};

/// CPU time used so far by the calling thread (`CLOCK_THREAD_CPUTIME_ID`), without the rest of a
/// [`Snapshot`]: one cheap system call (usually a vDSO call).
///
/// # Panics
///
/// Only if the kernel rejects the clock, which Linux (since 2.6.12) never does.
///
/// # Examples
///
/// ```
/// let before = throttle_probe::thread_cpu_time();
/// std::hint::black_box((0..100_000u64).sum::<u64>());
/// assert!(throttle_probe::thread_cpu_time() >= before);
/// ```
pub fn thread_cpu_time() -> Duration {
    sys::thread_cpu_time()
}

/// A reading of the clocks and counters of the calling process and thread.
///
/// # Examples
///
/// ```
/// use throttle_probe::Snapshot;
///
/// let start = Snapshot::now();
/// let mut x = 0u64;
/// for i in 0..1_000_000u64 { x = x.wrapping_add(i * i); }
/// std::hint::black_box(x);
/// let span = start.elapsed();
/// assert!(span.wall >= span.thread_cpu / 2);
/// println!("wall {:?}, cpu {:?}", span.wall, span.cpu());
/// ```
#[derive(Debug, Clone, serde::Serialize)]
pub struct Snapshot {
    #[serde(skip)]
    wall: Instant,
    tid: i64,
    #[serde(serialize_with = "duration_secs")]
    thread_cpu: Duration,
    #[serde(serialize_with = "duration_secs")]
    user: Duration,
    #[serde(serialize_with = "duration_secs")]
    system: Duration,
    voluntary_switches: u64,
    involuntary_switches: u64,
    #[serde(serialize_with = "measured")]
    thread_sched: Measured<SchedStat>,
    #[serde(serialize_with = "measured")]
    process_sched: Measured<SchedStat>,
    #[serde(serialize_with = "measured")]
    process_threads: Measured<usize>,
}

impl Snapshot {
    /// Reads everything now.
    ///
    /// # Panics
    ///
    /// Only if the kernel rejects `clock_gettime(CLOCK_THREAD_CPUTIME_ID)` or
    /// `getrusage(RUSAGE_SELF)`, which Linux never does. Missing `/proc` data is not a panic: it is
    /// recorded as [`Unavailable`].
    ///
    /// # Examples
    ///
    /// ```
    /// let s = throttle_probe::Snapshot::now();
    /// assert!(s.user() + s.system() > std::time::Duration::ZERO || true);
    /// ```
    pub fn now() -> Snapshot {
        let wall = Instant::now();
        let thread_cpu = sys::thread_cpu_time();
        let usage = sys::rusage_self();
        let thread_sched = schedstat::thread();
        let process = schedstat::process("self");
        Snapshot {
            wall,
            // `c_long` is `i64` on 64-bit Linux and widens losslessly from `i32` on 32-bit.
            tid: sys::gettid() as i64,
            thread_cpu,
            user: usage.user,
            system: usage.system,
            voluntary_switches: usage.voluntary_switches,
            involuntary_switches: usage.involuntary_switches,
            thread_sched,
            process_sched: process.clone().map(|(s, _)| s),
            process_threads: process.map(|(_, n)| n),
        }
    }

    /// The monotonic instant at which the snapshot was taken.
    pub fn instant(&self) -> Instant {
        self.wall
    }

    /// The kernel thread id of the thread that took the snapshot.
    pub fn tid(&self) -> i64 {
        self.tid
    }

    /// CPU time of the snapshotting thread so far.
    pub fn thread_cpu(&self) -> Duration {
        self.thread_cpu
    }

    /// User CPU time of the whole process so far.
    pub fn user(&self) -> Duration {
        self.user
    }

    /// System CPU time of the whole process so far.
    pub fn system(&self) -> Duration {
        self.system
    }

    /// Schedstat of the snapshotting thread.
    pub fn thread_schedstat(&self) -> &Measured<SchedStat> {
        &self.thread_sched
    }

    /// Schedstat summed over the process's live threads.
    pub fn process_schedstat(&self) -> &Measured<SchedStat> {
        &self.process_sched
    }

    /// How many threads the process had (how many schedstat files were summed).
    pub fn process_threads(&self) -> &Measured<usize> {
        &self.process_threads
    }

    /// The span from `earlier` to `self`.
    ///
    /// Both snapshots should come from the same thread. If they do not, the thread fields
    /// (`thread_cpu` saturates at zero; `thread_on_cpu` and `thread_run_queue_wait` become
    /// [`Unavailable`]) do not describe one thread and should be ignored.
    ///
    /// # Examples
    ///
    /// ```
    /// use throttle_probe::Snapshot;
    ///
    /// let a = Snapshot::now();
    /// let b = Snapshot::now();
    /// let span = b.span_since(&a);
    /// assert!(span.wall < std::time::Duration::from_secs(10));
    /// ```
    pub fn span_since(&self, earlier: &Snapshot) -> Span {
        let same_thread = self.tid == earlier.tid;
        let process = diff(&self.process_sched, &earlier.process_sched);
        let thread = if same_thread {
            diff(&self.thread_sched, &earlier.thread_sched)
        } else {
            Err(Unavailable::new(format!(
                "snapshots taken on different threads ({} and {})",
                earlier.tid, self.tid
            )))
        };
        Span {
            wall: self.wall.saturating_duration_since(earlier.wall),
            thread_cpu: self.thread_cpu.saturating_sub(earlier.thread_cpu),
            user: self.user.saturating_sub(earlier.user),
            system: self.system.saturating_sub(earlier.system),
            voluntary_switches: self
                .voluntary_switches
                .saturating_sub(earlier.voluntary_switches),
            involuntary_switches: self
                .involuntary_switches
                .saturating_sub(earlier.involuntary_switches),
            on_cpu: process.clone().map(|s| s.on_cpu),
            run_queue_wait: process.clone().map(|s| s.run_queue_wait),
            timeslices: process.map(|s| s.timeslices),
            thread_on_cpu: thread.clone().map(|s| s.on_cpu),
            thread_run_queue_wait: thread.map(|s| s.run_queue_wait),
        }
    }

    /// The span from `self` to now (takes a new snapshot).
    ///
    /// # Examples
    ///
    /// ```
    /// let start = throttle_probe::Snapshot::now();
    /// let span = start.elapsed();
    /// assert!(span.cpu_per_wall() >= 0.0 || span.cpu_per_wall().is_nan());
    /// ```
    pub fn elapsed(&self) -> Span {
        Snapshot::now().span_since(self)
    }
}

/// `later - earlier` when both readings exist; otherwise the first reason.
fn diff(later: &Measured<SchedStat>, earlier: &Measured<SchedStat>) -> Measured<SchedStat> {
    match (later, earlier) {
        (Ok(l), Ok(e)) => Ok(l.saturating_sub(e)),
        (Err(u), _) | (_, Err(u)) => Err(u.clone()),
    }
}

/// What happened between two [`Snapshot`]s.
///
/// Durations serialize as `f64` seconds; unavailable data as `null`.
///
/// # Examples
///
/// ```
/// use throttle_probe::Snapshot;
///
/// let start = Snapshot::now();
/// std::thread::sleep(std::time::Duration::from_millis(5));
/// let span = start.elapsed();
/// assert!(span.wall >= std::time::Duration::from_millis(5));
/// match &span.run_queue_wait {
///     Ok(w) => println!("waited {w:?} for a CPU"),
///     Err(why) => println!("run-queue wait unavailable: {why}"),
/// }
/// ```
#[derive(Debug, Clone, serde::Serialize)]
pub struct Span {
    /// Elapsed monotonic time.
    #[serde(serialize_with = "duration_secs")]
    pub wall: Duration,
    /// CPU time of the snapshotting thread (`CLOCK_THREAD_CPUTIME_ID`).
    #[serde(serialize_with = "duration_secs")]
    pub thread_cpu: Duration,
    /// User CPU time of the whole process (`getrusage`).
    #[serde(serialize_with = "duration_secs")]
    pub user: Duration,
    /// System CPU time of the whole process (`getrusage`).
    #[serde(serialize_with = "duration_secs")]
    pub system: Duration,
    /// Voluntary context switches of the whole process (blocking: locks, sleeps, I/O).
    pub voluntary_switches: u64,
    /// Involuntary context switches of the whole process (preempted: time slice over, or a
    /// higher-priority task woke).
    pub involuntary_switches: u64,
    /// On-CPU time summed over the process's live threads (schedstat field 1).
    #[serde(serialize_with = "measured_duration_secs")]
    pub on_cpu: Measured<Duration>,
    /// Time runnable but waiting for a CPU, summed over the process's live threads (schedstat
    /// field 2). Large values mean "slow because waiting for a core", not "slow because working".
    #[serde(serialize_with = "measured_duration_secs")]
    pub run_queue_wait: Measured<Duration>,
    /// Timeslices run, summed over the process's live threads (schedstat field 3).
    #[serde(serialize_with = "measured")]
    pub timeslices: Measured<u64>,
    /// On-CPU time of the snapshotting thread (schedstat field 1).
    #[serde(serialize_with = "measured_duration_secs")]
    pub thread_on_cpu: Measured<Duration>,
    /// Run-queue wait of the snapshotting thread (schedstat field 2).
    #[serde(serialize_with = "measured_duration_secs")]
    pub thread_run_queue_wait: Measured<Duration>,
}

impl Span {
    /// Process CPU time, `user + system`.
    ///
    /// # Examples
    ///
    /// ```
    /// let span = throttle_probe::Snapshot::now().elapsed();
    /// assert_eq!(span.cpu(), span.user + span.system);
    /// ```
    pub fn cpu(&self) -> Duration {
        self.user + self.system
    }

    /// Process CPU time per wall-clock second: about 1.0 for one busy thread, `k` for `k` busy
    /// threads on at least `k` free CPUs. `NaN` when `wall` is zero (there is no ratio to report).
    ///
    /// # Examples
    ///
    /// ```
    /// let span = throttle_probe::Snapshot::now().elapsed();
    /// let r = span.cpu_per_wall();
    /// assert!(r.is_nan() || r >= 0.0);
    /// ```
    pub fn cpu_per_wall(&self) -> f64 {
        let wall = self.wall.as_secs_f64();
        if wall == 0.0 {
            f64::NAN
        } else {
            self.cpu().as_secs_f64() / wall
        }
    }
}
