//! Thin, safe wrappers over the few libc calls the probe needs.

use std::time::Duration;

/// Converts a `timespec` (always non-negative for CPU clocks) into a [`Duration`].
fn timespec_to_duration(ts: libc::timespec) -> Duration {
    let secs = u64::try_from(ts.tv_sec).unwrap_or(0);
    let nanos = u32::try_from(ts.tv_nsec).unwrap_or(0);
    Duration::new(secs, nanos)
}

/// Converts a `timeval` (non-negative in `rusage`) into a [`Duration`].
pub(crate) fn timeval_to_duration(tv: libc::timeval) -> Duration {
    let secs = u64::try_from(tv.tv_sec).unwrap_or(0);
    let micros = u64::try_from(tv.tv_usec).unwrap_or(0);
    Duration::from_secs(secs) + Duration::from_micros(micros)
}

/// CPU time consumed so far by whichever thread of this process has id `tid` at the instant;
/// `None` if none has (the id is free, or names a thread of another process). A bare id cannot
/// tell an ended thread from a new one that was given its id: [`crate::ThreadClock`] can.
pub(crate) fn cpu_time_of_thread(tid: i32) -> Option<Duration> {
    // The clock id of a thread's CPU clock, as glibc's `pthread_getcpuclockid` builds it from
    // the thread id (Linux's `MAKE_THREAD_CPUCLOCK(tid, CPUCLOCK_SCHED)`): the complemented id
    // shifted by 3, or'ed with the per-thread bit (4) and the scheduler clock (2). libc offers
    // only the `pthread_t` form, which needs the thread's handle, not its id.
    let clock: libc::clockid_t = (!tid << 3) | 6;
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable `timespec` that outlives the call; for the clock of a
    // thread that does not exist the kernel returns EINVAL and writes nothing.
    let rc = unsafe { libc::clock_gettime(clock, &mut ts) };
    (rc == 0).then(|| timespec_to_duration(ts))
}

/// CPU time consumed so far by the calling thread (`CLOCK_THREAD_CPUTIME_ID`).
///
/// # Panics
///
/// Only if the kernel rejects `clock_gettime(CLOCK_THREAD_CPUTIME_ID)` for the calling thread,
/// which Linux (since 2.6.12) never does. Panicking is preferred to reporting a made-up zero.
pub(crate) fn thread_cpu_time() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable `timespec` that outlives the call, and the clock id is a
    // constant the kernel supports; the call writes only into `ts`.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    assert_eq!(
        rc,
        0,
        "clock_gettime(CLOCK_THREAD_CPUTIME_ID) failed: {}",
        std::io::Error::last_os_error()
    );
    timespec_to_duration(ts)
}

/// The part of `struct rusage` that the probe reports.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Usage {
    pub(crate) user: Duration,
    pub(crate) system: Duration,
    pub(crate) max_rss_kib: u64,
    pub(crate) voluntary_switches: u64,
    pub(crate) involuntary_switches: u64,
}

impl Usage {
    pub(crate) fn from_rusage(ru: &libc::rusage) -> Usage {
        Usage {
            user: timeval_to_duration(ru.ru_utime),
            system: timeval_to_duration(ru.ru_stime),
            // Linux reports ru_maxrss in kibibytes (getrusage(2)).
            max_rss_kib: u64::try_from(ru.ru_maxrss).unwrap_or(0),
            voluntary_switches: u64::try_from(ru.ru_nvcsw).unwrap_or(0),
            involuntary_switches: u64::try_from(ru.ru_nivcsw).unwrap_or(0),
        }
    }
}

/// An all-zero `rusage`, ready to be filled in by the kernel.
pub(crate) fn empty_rusage() -> libc::rusage {
    // SAFETY: `rusage` is a plain C struct of integers and `timeval`s; all-zero bytes are a valid
    // value for every field.
    unsafe { std::mem::zeroed() }
}

/// `getrusage(RUSAGE_SELF)`: user and system time and context switches of the whole process,
/// including threads that have already exited.
///
/// # Panics
///
/// Only if the kernel rejects `getrusage(RUSAGE_SELF)` with a valid buffer, which Linux never does.
pub(crate) fn rusage_self() -> Usage {
    let mut ru = empty_rusage();
    // SAFETY: `ru` is a valid, writable `rusage` that outlives the call; RUSAGE_SELF is valid.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    assert_eq!(
        rc,
        0,
        "getrusage(RUSAGE_SELF) failed: {}",
        std::io::Error::last_os_error()
    );
    Usage::from_rusage(&ru)
}

/// The kernel thread id of the calling thread.
pub(crate) fn gettid() -> libc::c_long {
    // SAFETY: SYS_gettid takes no arguments, cannot fail and has no side effects.
    unsafe { libc::syscall(libc::SYS_gettid) }
}

/// Clock ticks per second used by `/proc/<pid>/stat` (`sysconf(_SC_CLK_TCK)`), usually 100.
pub(crate) fn clock_ticks_per_second() -> Option<u64> {
    // SAFETY: sysconf only reads a system constant.
    let t = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    u64::try_from(t).ok().filter(|&t| t > 0)
}
