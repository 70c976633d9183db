//! Child processes: run a command and account for its own resource use.
//!
//! # How the numbers are obtained
//!
//! - `wall`: the monotonic clock from just before `spawn` until `waitid` reports the exit.
//! - `user`, `system`, `max_rss_kib`, the context switches: the `rusage` that `wait4(2)` returns
//!   when the child is reaped. This is exact and covers every thread the child ever had. It also
//!   includes the child's own descendants **that the child waited for** (Linux reports the child's
//!   `RUSAGE_BOTH`); descendants that were never reaped by it (orphans re-parented to init, daemons)
//!   are not counted. `max_rss_kib` is the largest RSS of the child or of any such descendant.
//! - `run_queue_wait` and `on_cpu`: the kernel keeps no per-process total of schedstat, so they are
//!   read per thread. When the child exits, [`RunningChild::wait`] first waits with
//!   `waitid(WEXITED | WNOWAIT)`, which leaves the child a zombie, reads the zombie's
//!   `/proc/<pid>/schedstat` (its main thread's whole-life totals), and only then reaps it with
//!   `wait4`. For a single-threaded child this is **exact**. Other threads of the child are counted
//!   only as far as [`RunningChild::sample`] saw them (their last sampled value; anything after the
//!   last sample is missed), and the child's descendants (e.g. the programs a shell script runs)
//!   are **not** counted. [`ChildUsage::threads_seen`] says how many threads contributed.
//!   Without `CONFIG_SCHED_INFO` these fields are [`Unavailable`](crate::Unavailable).
//!
//! Command-not-found and other spawn failures are [`ProbeError::Spawn`] naming the program.
//!
//! # Examples
//!
//! ```
//! use std::process::Command;
//! use throttle_probe::child;
//!
//! let usage = child::run(Command::new("sh").args(["-c", "exit 3"])).unwrap();
//! assert_eq!(usage.exit_code, Some(3));
//! assert!(!usage.success());
//! ```

use std::collections::BTreeMap;
use std::fs;
use std::io;
use std::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::schedstat::{self, SchedStat};
use crate::serde_helpers::{duration_secs, measured_duration_secs};
use crate::sys::{self, Usage};
use crate::{Measured, ProbeError};

/// What a finished child process used, from `wait4(2)` and its schedstat.
///
/// See the [module documentation](self) for exactly what each field counts.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ChildUsage {
    /// The child's process id (no longer valid: the child has been reaped).
    pub pid: u32,
    /// From spawn to exit.
    #[serde(serialize_with = "duration_secs")]
    pub wall: Duration,
    /// User CPU time of the child (and the descendants it reaped).
    #[serde(serialize_with = "duration_secs")]
    pub user: Duration,
    /// System CPU time of the child (and the descendants it reaped).
    #[serde(serialize_with = "duration_secs")]
    pub system: Duration,
    /// Peak resident set size in KiB.
    pub max_rss_kib: u64,
    /// Voluntary context switches.
    pub voluntary_switches: u64,
    /// Involuntary context switches (preemptions).
    pub involuntary_switches: u64,
    /// Time the child's threads spent runnable but waiting for a CPU (schedstat field 2).
    #[serde(serialize_with = "measured_duration_secs")]
    pub run_queue_wait: Measured<Duration>,
    /// On-CPU time of the same threads (schedstat field 1); compare with [`ChildUsage::cpu`] to see
    /// how much of the CPU time the schedstat fields cover.
    #[serde(serialize_with = "measured_duration_secs")]
    pub on_cpu: Measured<Duration>,
    /// How many of the child's threads contributed to `run_queue_wait` and `on_cpu`.
    pub threads_seen: usize,
    /// The exit status, if the child exited normally.
    pub exit_code: Option<i32>,
    /// The terminating signal, if a signal killed the child.
    pub signal: Option<i32>,
}

impl ChildUsage {
    /// Whether the child exited normally with status 0.
    ///
    /// # Examples
    ///
    /// ```
    /// let u = throttle_probe::child::run(&mut std::process::Command::new("true")).unwrap();
    /// assert!(u.success());
    /// ```
    pub fn success(&self) -> bool {
        self.exit_code == Some(0)
    }

    /// CPU time, `user + system`.
    ///
    /// # Examples
    ///
    /// ```
    /// let u = throttle_probe::child::run(&mut std::process::Command::new("true")).unwrap();
    /// assert_eq!(u.cpu(), u.user + u.system);
    /// ```
    pub fn cpu(&self) -> Duration {
        self.user + self.system
    }
}

/// Runs `cmd` to completion and returns its usage (spawn, then [`RunningChild::wait`]).
///
/// The command's stdin, stdout and stderr are whatever `cmd` configures (inherited by default).
///
/// # Errors
///
/// [`ProbeError::Spawn`] naming the program when it cannot be started (not found, not
/// executable); [`ProbeError::Wait`] if waiting fails (e.g. `SIGCHLD` is ignored, so the kernel
/// reaps children itself).
///
/// # Examples
///
/// ```
/// use std::process::Command;
///
/// let u = throttle_probe::child::run(Command::new("sh").args(["-c", "true"])).unwrap();
/// assert!(u.success());
/// println!("wall {:?} cpu {:?} rss {} KiB", u.wall, u.cpu(), u.max_rss_kib);
/// ```
pub fn run(cmd: &mut Command) -> Result<ChildUsage, ProbeError> {
    spawn(cmd)?.wait()
}

/// Starts `cmd` and returns a handle to wait for it; use this to run several children at once.
///
/// # Errors
///
/// [`ProbeError::Spawn`] naming the program when it cannot be started.
///
/// # Examples
///
/// ```
/// use std::process::Command;
/// use throttle_probe::child;
///
/// let running: Vec<_> = (0..3)
///     .map(|_| child::spawn(Command::new("sh").args(["-c", "true"])))
///     .collect::<Result<_, _>>()
///     .unwrap();
/// for c in running {
///     assert!(c.wait().unwrap().success());
/// }
/// ```
pub fn spawn(cmd: &mut Command) -> Result<RunningChild, ProbeError> {
    let program = cmd.get_program().to_string_lossy().into_owned();
    let started = Instant::now();
    let child = cmd.spawn().map_err(|e| ProbeError::Spawn {
        program: program.clone(),
        source: Arc::new(e),
    })?;
    Ok(RunningChild {
        child,
        program,
        started,
        seen: BTreeMap::new(),
    })
}

/// A child process that has been started and not yet reaped.
///
/// Not `Clone`: it owns the right to reap one process. Dropping it without [`RunningChild::wait`]
/// leaves the child running and, once it exits, a zombie until this process exits (as with
/// [`std::process::Child`]).
#[derive(Debug)]
pub struct RunningChild {
    child: Child,
    program: String,
    started: Instant,
    /// Last schedstat seen per thread id.
    seen: BTreeMap<u64, SchedStat>,
}

impl RunningChild {
    /// The child's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The program name as given to the command.
    pub fn program(&self) -> &str {
        &self.program
    }

    /// Takes the child's stdin pipe, if the command was configured with `Stdio::piped()`.
    pub fn take_stdin(&mut self) -> Option<ChildStdin> {
        self.child.stdin.take()
    }

    /// Takes the child's stdout pipe, if the command was configured with `Stdio::piped()`.
    pub fn take_stdout(&mut self) -> Option<ChildStdout> {
        self.child.stdout.take()
    }

    /// Takes the child's stderr pipe, if the command was configured with `Stdio::piped()`.
    pub fn take_stderr(&mut self) -> Option<ChildStderr> {
        self.child.stderr.take()
    }

    /// Sends `SIGKILL` to the child. Call [`RunningChild::wait`] afterwards to reap it.
    ///
    /// # Errors
    ///
    /// [`ProbeError::Wait`] if the signal cannot be sent.
    pub fn kill(&mut self) -> Result<(), ProbeError> {
        let pid = self.pid();
        self.child.kill().map_err(|e| ProbeError::Wait {
            pid,
            call: "kill",
            source: Arc::new(e),
        })
    }

    /// Reads the schedstat of every live thread of the child now, so that threads that exit
    /// before the child does still contribute to the final `run_queue_wait` (up to this sample).
    /// Returns how many threads were read (0 once the child has exited).
    ///
    /// Only needed for multi-threaded children; a single-threaded child is counted exactly by
    /// [`RunningChild::wait`] alone.
    pub fn sample(&mut self) -> usize {
        let dir = format!("/proc/{}/task", self.pid());
        let Ok(entries) = fs::read_dir(&dir) else {
            return 0;
        };
        let mut n = 0;
        for entry in entries.flatten() {
            let Some(tid) = entry
                .file_name()
                .to_str()
                .and_then(|s| s.parse::<u64>().ok())
            else {
                continue;
            };
            if let Ok(s) = SchedStat::read(&entry.path().join("schedstat")) {
                self.seen.insert(tid, s);
                n += 1;
            }
        }
        n
    }

    /// Whether the child has exited (it stays a zombie, unreaped, so [`RunningChild::wait`]
    /// still reads its final schedstat). Never blocks: poll it between [`RunningChild::sample`]s
    /// when several children run at once.
    ///
    /// # Errors
    ///
    /// [`ProbeError::Wait`] if `waitid` fails.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::process::Command;
    /// let c = throttle_probe::child::spawn(&mut Command::new("true")).unwrap();
    /// while !c.has_exited().unwrap() {
    ///     std::thread::sleep(std::time::Duration::from_millis(1));
    /// }
    /// assert!(c.wait().unwrap().success());
    /// ```
    pub fn has_exited(&self) -> Result<bool, ProbeError> {
        let pid = self.pid();
        loop {
            // SAFETY: `siginfo_t` is a plain C struct of integers; all-zero bytes are valid.
            let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
            // SAFETY: [1] `info` is valid and writable during the call; [2] P_PID with our own
            // child's pid inspects only that child; [3] WNOHANG returns at once and WNOWAIT
            // leaves the child reapable.
            let rc = unsafe {
                libc::waitid(
                    libc::P_PID,
                    pid as libc::id_t,
                    &mut info,
                    libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
                )
            };
            if rc == 0 {
                // SAFETY: waitid filled `info`; with WNOHANG, si_pid is 0 while no child of
                // the set has changed state.
                return Ok(unsafe { info.si_pid() } != 0);
            }
            let e = io::Error::last_os_error();
            if e.kind() != io::ErrorKind::Interrupted {
                return Err(ProbeError::Wait {
                    pid,
                    call: "waitid",
                    source: Arc::new(e),
                });
            }
        }
    }

    /// Waits for the child to exit, reads its schedstat while it is a zombie, reaps it with
    /// `wait4` and returns its usage.
    ///
    /// # Errors
    ///
    /// [`ProbeError::Wait`] if `waitid` or `wait4` fails (for example when `SIGCHLD` is set to
    /// `SIG_IGN`, which makes the kernel reap children itself).
    pub fn wait(mut self) -> Result<ChildUsage, ProbeError> {
        let pid = self.pid();
        wait_exited_no_reap(pid)?;
        let wall = self.started.elapsed();
        // The child is a zombie: its pid cannot be reused and its main thread's totals are final.
        let leader = SchedStat::read(std::path::Path::new(&format!("/proc/{pid}/schedstat")));
        let sched = match leader {
            Ok(s) => {
                self.seen.insert(u64::from(pid), s);
                let total = self
                    .seen
                    .values()
                    .fold(SchedStat::default(), |acc, s| acc.add(s));
                Ok(total)
            }
            Err(e) => Err(schedstat::missing_reason(e)),
        };
        let (status, usage) = reap(pid)?;
        Ok(ChildUsage {
            pid,
            wall,
            user: usage.user,
            system: usage.system,
            max_rss_kib: usage.max_rss_kib,
            voluntary_switches: usage.voluntary_switches,
            involuntary_switches: usage.involuntary_switches,
            run_queue_wait: sched.clone().map(|s| s.run_queue_wait),
            on_cpu: sched.clone().map(|s| s.on_cpu),
            threads_seen: if sched.is_ok() { self.seen.len() } else { 0 },
            exit_code: libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status)),
            signal: libc::WIFSIGNALED(status).then(|| libc::WTERMSIG(status)),
        })
    }
}

/// Blocks until child `pid` has exited, leaving it unreaped (`waitid(WEXITED | WNOWAIT)`).
fn wait_exited_no_reap(pid: u32) -> Result<(), ProbeError> {
    loop {
        // SAFETY: `siginfo_t` is a plain C struct (integers and a union of integers); all-zero
        // bytes are a valid value.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        // SAFETY: [1] `info` is valid and writable for the duration of the call; [2] P_PID with our
        // own child's pid only inspects that child; [3] WNOWAIT leaves it reapable, so the `Child`
        // handle's pid stays reserved until `reap`.
        let rc = unsafe {
            libc::waitid(
                libc::P_PID,
                pid as libc::id_t,
                &mut info,
                libc::WEXITED | libc::WNOWAIT,
            )
        };
        if rc == 0 {
            return Ok(());
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(ProbeError::Wait {
                pid,
                call: "waitid",
                source: Arc::new(e),
            });
        }
    }
}

/// Reaps child `pid` with `wait4`, returning the raw status and its resource usage.
fn reap(pid: u32) -> Result<(libc::c_int, Usage), ProbeError> {
    let raw_pid = libc::pid_t::try_from(pid).map_err(|_| ProbeError::Wait {
        pid,
        call: "wait4",
        source: Arc::new(io::Error::new(
            io::ErrorKind::InvalidInput,
            "pid out of range",
        )),
    })?;
    loop {
        let mut status: libc::c_int = 0;
        let mut ru = sys::empty_rusage();
        // SAFETY: `status` and `ru` are valid and writable for the duration of the call; `raw_pid`
        // is our own child, which has exited (see `wait_exited_no_reap`), so this does not block.
        let rc = unsafe { libc::wait4(raw_pid, &mut status, 0, &mut ru) };
        if rc == raw_pid {
            return Ok((status, Usage::from_rusage(&ru)));
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(ProbeError::Wait {
                pid,
                call: "wait4",
                source: Arc::new(e),
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signal_is_reported() {
        let u = run(Command::new("sh").args(["-c", "kill -9 $$"])).unwrap();
        assert_eq!(u.signal, Some(libc::SIGKILL));
        assert_eq!(u.exit_code, None);
        assert!(!u.success());
    }

    #[test]
    fn zombie_schedstat_is_read() {
        let u = run(&mut Command::new("true")).unwrap();
        if let Ok(on_cpu) = u.on_cpu {
            assert_eq!(u.threads_seen, 1);
            // `true` runs for well under a tick, but it was switched out at exit, which folds in
            // its last slice.
            assert!(on_cpu > Duration::ZERO);
        }
    }
}
