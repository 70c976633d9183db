//! Honest measurement of CPU-bound work on Linux.
//!
//! Wall time and CPU time answer different questions. When a program runs slower than expected,
//! it is either *working* (CPU time grew) or *waiting for a core* (run-queue wait grew). This
//! crate reads the kernel's own accounting so that the two can be told apart:
//!
//! | what | where it comes from |
//! |---|---|
//! | wall time | the monotonic clock ([`std::time::Instant`]) |
//! | thread CPU time | `clock_gettime(CLOCK_THREAD_CPUTIME_ID)` |
//! | another thread's CPU time ([`ThreadClock`]) | `clock_gettime` on that thread's CPU clock, checked against its `/proc/self/task/<tid>` |
//! | process user / system time, context switches | `getrusage(RUSAGE_SELF)` |
//! | on-CPU time, run-queue wait, timeslices | `/proc/self/task/*/schedstat`, `/proc/thread-self/schedstat` |
//! | a child's usage | `wait4(2)`, and its schedstat read while it is a zombie ([`child`]) |
//! | CPUs, cores, SMT, affinity, cgroup quota | `/sys/devices/system/cpu`, `sched_getaffinity`, cgroup files ([`Topology`]) |
//!
//! Data the kernel does not provide is a [`Measured`] `Err(`[`Unavailable`]`)` with the reason,
//! never a made-up zero.
//!
//! # Tutorial
//!
//! Take a [`Snapshot`] before and after the work; the difference is a [`Span`]. For named,
//! repeated measurements use [`Scenario`] (seed 004's begin/end instrument) and a
//! [`ScenarioLog`], which summarises repetitions as median, min and max. [`Topology::detect`]
//! says how many threads are worth using, and [`child::run`] measures another program.
//!
//! ```
//! use std::process::Command;
//! use throttle_probe::{child, Scenario, ScenarioLog, Snapshot, Topology};
//!
//! // 1. How much parallelism does this process really have?
//! let topo = Topology::detect();
//! println!("{} logical CPUs, {} physical cores; recommended {} ({})",
//!          topo.logical_cpus, topo.physical_cores, topo.recommended, topo.reason);
//!
//! // 2. One span: wall and CPU time of some work on `recommended` threads.
//! let start = Snapshot::now();
//! std::thread::scope(|s| {
//!     for _ in 0..topo.recommended {
//!         s.spawn(|| (0..2_000_000u64).fold(0u64, |a, i| a.wrapping_add(i * i)));
//!     }
//! });
//! let span = start.elapsed();
//! println!("wall {:?}, user {:?}, system {:?}, CPU/wall {:.2}",
//!          span.wall, span.user, span.system, span.cpu_per_wall());
//! match &span.run_queue_wait {
//!     Ok(wait) => println!("threads waited {wait:?} for a CPU"),
//!     Err(why) => println!("run-queue wait unavailable: {why}"),
//! }
//!
//! // 3. Repeated, named measurements, summarised (never quote one run).
//! let mut log = ScenarioLog::new();
//! for _ in 0..5 {
//!     let s = Scenario::begin("square-sum");
//!     std::hint::black_box((0..500_000u64).map(|i| i * i).sum::<u64>());
//!     log.record(s.end());
//! }
//! let summary = log.summary("square-sum").expect("five spans were recorded");
//! println!("wall median {:.6}s (min {:.6}, max {:.6})",
//!          summary.wall.median, summary.wall.min, summary.wall.max);
//!
//! // 4. Another program's own accounting.
//! let usage = child::run(Command::new("sh").args(["-c", "exit 0"])).expect("sh runs");
//! assert!(usage.success());
//! println!("child: wall {:?}, cpu {:?}, peak RSS {} KiB",
//!          usage.wall, usage.cpu(), usage.max_rss_kib);
//! ```
//!
//! # Accuracy
//!
//! The tests in this crate check the probe against a second kernel accounting of the same work:
//! a busy loop's CPU time from [`Span::cpu`] agrees with `/proc/self/stat` utime + stime
//! ([`procstat`]) within 5 %; schedstat's on-CPU time agrees with the thread CPU clock within 2 %;
//! and with twice as many busy threads as CPUs, the measured run-queue wait is clearly above zero.
//!
//! # Known gaps
//!
//! - Process-wide schedstat is a sum over the live threads: a thread that exits between two
//!   snapshots is missing from the later one ([`schedstat`]).
//! - A child's run-queue wait is exact for its main thread, partial for its other threads and
//!   absent for its descendants ([`child`]).
//! - Serialization: every type serializes with durations as `f64` seconds and unavailable data as
//!   `null` (see [`serde_helpers`]); [`Snapshot`] omits its [`std::time::Instant`].

// Everything here reads Linux interfaces (/proc, /sys, Linux syscalls); on other systems the
// crate is empty.
#![cfg(target_os = "linux")]

pub mod child;
mod error;
mod measured;
pub mod procstat;
mod scenario;
pub mod schedstat;
pub mod serde_helpers;
mod snapshot;
mod summary;
mod sys;
mod thread_clock;
pub mod topology;

pub use error::ProbeError;
pub use measured::{Measured, Unavailable};
pub use scenario::{Scenario, ScenarioLog, ScenarioSpan, ScenarioSummary};
pub use snapshot::{thread_cpu_time, Snapshot, Span};
pub use summary::Summary;
pub use thread_clock::ThreadClock;
pub use topology::Topology;
