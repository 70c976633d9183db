//! The scheduler's own accounting: `/proc/<pid>/task/<tid>/schedstat`.
//!
//! Each file holds three numbers (see the kernel's `Documentation/scheduler/sched-stats.rst`):
//!
//! 1. time spent on the CPU, in nanoseconds (`se.sum_exec_runtime`),
//! 2. time spent runnable but waiting on a run queue, in nanoseconds (`sched_info.run_delay`),
//! 3. the number of timeslices run on this CPU (`sched_info.pcount`).
//!
//! For a thread that is running while its file is read, field 1 lags by up to one scheduler tick
//! (1 to 10 ms, `CONFIG_HZ`): the kernel folds the current slice in at ticks and context switches,
//! whereas `CLOCK_THREAD_CPUTIME_ID` includes it exactly. Over spans of a few hundred milliseconds
//! the two agree within about 1 %.
//!
//! The files exist when the kernel is built with `CONFIG_SCHED_INFO` (as distribution kernels are);
//! otherwise every read reports [`Unavailable`].
//!
//! Process-wide numbers are the sum over `/proc/self/task/*`: a thread that exits between two
//! snapshots drops out of the later sum, so its on-CPU time and wait are missing from the
//! difference (the kernel keeps no per-process total of these fields). Threads that are alive at
//! both snapshots, or start after the first one and are alive at the second, are counted exactly.

use std::fs;
use std::io;
use std::path::Path;
use std::time::Duration;

use crate::{Measured, ProbeError, Unavailable};

/// One reading of a `schedstat` file, or a sum of several.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct SchedStat {
    /// Time on the CPU (field 1).
    #[serde(serialize_with = "crate::serde_helpers::duration_secs")]
    pub on_cpu: Duration,
    /// Time runnable but waiting for a CPU (field 2).
    #[serde(serialize_with = "crate::serde_helpers::duration_secs")]
    pub run_queue_wait: Duration,
    /// Timeslices run (field 3).
    pub timeslices: u64,
}

impl SchedStat {
    /// Parses the text of a `schedstat` file: three unsigned integers separated by whitespace.
    ///
    /// # Errors
    ///
    /// [`ProbeError::Parse`] naming `what` when the text does not hold three integers.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use throttle_probe::schedstat::SchedStat;
    ///
    /// let s = SchedStat::parse("73860 56003 2\n", "sample").unwrap();
    /// assert_eq!(s.on_cpu, Duration::from_nanos(73860));
    /// assert_eq!(s.run_queue_wait, Duration::from_nanos(56003));
    /// assert_eq!(s.timeslices, 2);
    /// assert!(SchedStat::parse("12 x", "sample").is_err());
    /// ```
    pub fn parse(text: &str, what: &str) -> Result<SchedStat, ProbeError> {
        let mut fields = text.split_whitespace().map(str::parse::<u64>);
        let mut next = |name: &str| match fields.next() {
            Some(Ok(v)) => Ok(v),
            Some(Err(e)) => Err(ProbeError::parse(what, format!("field `{name}`: {e}"))),
            None => Err(ProbeError::parse(
                what,
                format!("field `{name}` missing in {text:?}"),
            )),
        };
        let on_cpu = next("on_cpu")?;
        let wait = next("run_queue_wait")?;
        let slices = next("timeslices")?;
        Ok(SchedStat {
            on_cpu: Duration::from_nanos(on_cpu),
            run_queue_wait: Duration::from_nanos(wait),
            timeslices: slices,
        })
    }

    /// Reads and parses one `schedstat` file.
    ///
    /// # Errors
    ///
    /// [`ProbeError::Io`] naming the path, or [`ProbeError::Parse`].
    ///
    /// # Examples
    ///
    /// ```
    /// use throttle_probe::schedstat::SchedStat;
    ///
    /// # if std::path::Path::new("/proc/self/schedstat").exists() {
    /// let s = SchedStat::read("/proc/self/schedstat".as_ref()).unwrap();
    /// // The main thread's totals so far (the current slice may not be folded in yet).
    /// println!("on CPU {:?}, waited {:?}", s.on_cpu, s.run_queue_wait);
    /// # }
    /// ```
    pub fn read(path: &Path) -> Result<SchedStat, ProbeError> {
        let text = fs::read_to_string(path).map_err(|e| ProbeError::io(path, e))?;
        SchedStat::parse(&text, &path.display().to_string())
    }

    /// The field-wise difference `self - earlier`, saturating at zero.
    pub fn saturating_sub(&self, earlier: &SchedStat) -> SchedStat {
        SchedStat {
            on_cpu: self.on_cpu.saturating_sub(earlier.on_cpu),
            run_queue_wait: self.run_queue_wait.saturating_sub(earlier.run_queue_wait),
            timeslices: self.timeslices.saturating_sub(earlier.timeslices),
        }
    }

    /// The field-wise sum.
    pub fn add(&self, other: &SchedStat) -> SchedStat {
        SchedStat {
            on_cpu: self.on_cpu + other.on_cpu,
            run_queue_wait: self.run_queue_wait + other.run_queue_wait,
            timeslices: self.timeslices + other.timeslices,
        }
    }
}

/// The calling thread's schedstat (`/proc/thread-self/schedstat`).
///
/// # Examples
///
/// ```
/// if let Ok(s) = throttle_probe::schedstat::thread() {
///     println!("this thread waited {:?} for a CPU", s.run_queue_wait);
/// }
/// ```
pub fn thread() -> Measured<SchedStat> {
    let path = Path::new("/proc/thread-self/schedstat");
    match SchedStat::read(path) {
        Ok(s) => Ok(s),
        // Kernels before 3.17 have no /proc/thread-self; fall back to the task directory.
        Err(_) if !Path::new("/proc/thread-self").exists() => {
            let fallback = format!("/proc/self/task/{}/schedstat", crate::sys::gettid());
            SchedStat::read(Path::new(&fallback)).map_err(missing_reason)
        }
        Err(e) => Err(missing_reason(e)),
    }
}

/// The sum of the schedstat of every live thread of process `pid` (`/proc/<pid>/task/*/schedstat`),
/// with the number of threads read. Use `"self"` for the calling process.
///
/// Threads that exit while the directory is listed are skipped.
///
/// # Examples
///
/// ```
/// if let Ok((sum, threads)) = throttle_probe::schedstat::process("self") {
///     assert!(threads >= 1);
///     println!("{threads} threads, {:?} on CPU", sum.on_cpu);
/// }
/// ```
pub fn process(pid: &str) -> Measured<(SchedStat, usize)> {
    let dir = format!("/proc/{pid}/task");
    let entries =
        fs::read_dir(&dir).map_err(|e| Unavailable::new(format!("listing {dir}: {e}")))?;
    let mut sum = SchedStat::default();
    let mut threads = 0;
    let mut last_error = None;
    for entry in entries {
        let Ok(entry) = entry else { continue };
        let path = entry.path().join("schedstat");
        match SchedStat::read(&path) {
            Ok(s) => {
                sum = sum.add(&s);
                threads += 1;
            }
            Err(e) => last_error = Some(e),
        }
    }
    if threads == 0 {
        return Err(match last_error {
            Some(e) => missing_reason(e),
            None => Unavailable::new(format!("no readable threads under {dir}")),
        });
    }
    Ok((sum, threads))
}

/// Explains a failed schedstat read, pointing at the kernel option when the file is missing.
pub(crate) fn missing_reason(e: ProbeError) -> Unavailable {
    if let ProbeError::Io { source, .. } = &e {
        if source.kind() == io::ErrorKind::NotFound {
            return Unavailable::new(format!(
                "{e} (the kernel may be built without CONFIG_SCHED_INFO)"
            ));
        }
    }
    Unavailable::from(e)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_three_fields() {
        let s = SchedStat::parse("1000000 2000 7", "t").unwrap();
        assert_eq!(s.on_cpu, Duration::from_millis(1));
        assert_eq!(s.run_queue_wait, Duration::from_micros(2));
        assert_eq!(s.timeslices, 7);
    }

    #[test]
    fn rejects_short_and_bad_text() {
        assert!(SchedStat::parse("", "t").is_err());
        assert!(SchedStat::parse("1 2", "t").is_err());
        let e = SchedStat::parse("1 -2 3", "file-x").unwrap_err();
        assert!(e.to_string().contains("file-x"), "{e}");
    }

    #[test]
    fn subtraction_saturates() {
        let a = SchedStat::parse("10 10 10", "t").unwrap();
        let b = SchedStat::parse("5 20 1", "t").unwrap();
        let d = a.saturating_sub(&b);
        assert_eq!(d.on_cpu, Duration::from_nanos(5));
        assert_eq!(d.run_queue_wait, Duration::ZERO);
        assert_eq!(d.timeslices, 9);
    }

    #[test]
    fn live_process_has_at_least_this_thread() {
        if let Ok((_, n)) = process("self") {
            assert!(n >= 1);
        }
    }
}
