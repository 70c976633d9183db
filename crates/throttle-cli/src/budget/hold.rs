//! Holding the command of `throttle run --budget` while no cluster slot backs it.
//!
//! Every process under a jobserver may run one job without a token: its implicit slot. For the
//! command of `throttle run --budget` that slot is a cluster slot, and no pipe can take it back:
//! make starts its next job on it the moment its last one ends, without asking anyone. So once
//! no valid slot backs the command (the lease's trust window ended at T), `throttle run`:
//!
//! 1. stops the command with SIGSTOP (the process it started: make, ninja, cargo, a script);
//! 2. stops every process of the command's tree that **started after T** (a job the command
//!    forked between T and step 1, and everything that job started): those run without a slot.
//!    Jobs started before T keep running and end as they would: stopping them would not give
//!    their slots back, only make them hold on longer (they are safe if they end within the
//!    margin after T, `docs/cluster-budget.md`);
//! 3. continues them all with SIGCONT once a new implicit slot is granted.
//!
//! Someone else may continue the command meanwhile (a SIGCONT to every process of a host that
//! was frozen as a whole, a shell's `fg`): the kernel tells the parent (SIGCHLD with
//! `CLD_CONTINUED`), the handler here wakes the main loop through a self-pipe, and the command is
//! stopped again at once, then step 2 again (a job it forked meanwhile is stopped too, usually
//! before it did anything: a fork and an exec take longer than this reaction). The kernel
//! reports nothing when the command had not stopped yet: make starts its jobs with posix_spawn
//! (`clone(CLONE_VM | CLONE_VFORK)`) and sleeps until the new job execs, where a SIGSTOP does
//! not reach it, so the signal stays pending (until the hold ends, if the hold stopped that job
//! too); a SIGCONT discards a pending SIGSTOP, and a process that never stopped was not
//! "continued". So every look while held also reads /proc: no SIGSTOP pending and no thread
//! stopped means the command runs free, and it is stopped again as above (within a tick, 10
//! ms, not at once). A termination
//! signal to `throttle run` ends the hold (the command and the held jobs are continued, so that
//! they can act on it).
//!
//! Finding the processes started after T must be fast: a job forked in the instant after a
//! whole host resumed is racing to do its work while `throttle run` looks for it. At every look
//! while the command is backed, `throttle run` notes the last pid the kernel handed out
//! (`/proc/sys/kernel/ns_last_pid`); at the first look after T it reads only the processes
//! created since (pids after that one, in allocation order, keeping those that descend from the
//! command), which takes microseconds, not the milliseconds of a scan of all of /proc (the
//! fallback when too many pids were handed out meanwhile, or the note is missing). Either way a
//! process counts as started after T only if its start time (`/proc/PID/stat`, clock ticks
//! since boot: 10 ms at the usual `CLK_TCK` of 100) is not before T rounded down to a tick: a job
//! started in the 10 ms before T may be taken for one started after it and stopped too.

use std::collections::HashMap;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::time::{Duration, Instant};

/// The write end of the self-pipe the SIGCHLD handler writes to (-1: none).
static WAKE_FD: AtomicI32 = AtomicI32::new(-1);
/// The command is held stopped by us now (read by the termination-signal handler).
static HELD: AtomicBool = AtomicBool::new(false);
/// A termination signal came: never stop the command again.
static ENDING: AtomicBool = AtomicBool::new(false);

extern "C" fn on_sigchld(_: libc::c_int) {
    let fd = WAKE_FD.load(Ordering::Relaxed);
    if fd >= 0 {
        let b = 0u8;
        // SAFETY: write(2) is async-signal-safe; the byte lives on this stack frame. A full
        // pipe (EAGAIN) already holds a wake-up, which is all that matters; errno is restored.
        unsafe {
            let saved = *libc::__errno_location();
            libc::write(fd, (&b as *const u8).cast(), 1);
            *libc::__errno_location() = saved;
        }
    }
}

/// Called from `throttle run`'s handler of SIGINT, SIGTERM, SIGHUP and SIGQUIT (after it
/// forwarded the signal): the command must be able to run to act on it, so the hold ends (the
/// main loop continues the held jobs at its next look). Async-signal-safe (atomics and kill(2)).
pub fn end_on_signal(pid: i32) {
    ENDING.store(true, Ordering::Relaxed);
    if pid > 0 && HELD.load(Ordering::Relaxed) {
        // SAFETY: kill(2) is async-signal-safe and has no memory effects.
        unsafe {
            libc::kill(pid, libc::SIGCONT);
        }
    }
}

/// What [`Hold::update`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    /// The command was stopped (no slot backs it), and this many processes of its tree that
    /// started after the slot ended.
    Stopped(usize),
    /// Someone continued the held command; it was stopped again, and this many more processes
    /// of its tree that started after the slot ended.
    StoppedAgain(usize),
    /// A slot backs it again: it and the processes held with it were continued.
    Continued,
}

impl Change {
    /// The line `throttle run` prints on stderr for this change of the hold on `program`, the
    /// signal having been sent at `at_ns` (CLOCK_MONOTONIC), `pids` the processes of the tree
    /// that this change stopped. With `THROTTLE_JOBSERVER=debug` the line ends with
    /// ` [stopped PID PID …]` (when it stopped any) and ` [CLOCK_MONOTONIC S.NNNNNNNNN]`,
    /// which tests compare with their task logs.
    pub fn line(self, program: &str, at_ns: u64, pids: &[i32]) -> String {
        let jobs = |n: usize| match n {
            0 => String::new(),
            1 => ", and 1 process it started after its slot ended".to_string(),
            n => format!(", and {n} processes it started after its slot ended"),
        };
        let what = match self {
            Change::Stopped(n) => format!(
                "{program} stopped (SIGSTOP){}: no cluster slot backs it; it continues when one is granted (jobs started before go on)",
                jobs(n)
            ),
            Change::StoppedAgain(n) => format!(
                "{program} was continued by someone else while no cluster slot backs it; stopped again{}",
                jobs(n)
            ),
            Change::Continued => {
                format!("{program} continued (SIGCONT): a cluster slot backs it again")
            }
        };
        let debug = std::env::var(throttle::JOBSERVER_ENV).is_ok_and(|v| v.trim() == "debug");
        let stamp = if debug {
            let stopped: String = pids.iter().map(|p| format!(" {p}")).collect();
            format!(
                "{} [CLOCK_MONOTONIC {}.{:09}]",
                if stopped.is_empty() {
                    String::new()
                } else {
                    format!(" [stopped{stopped}]")
                },
                at_ns / 1_000_000_000,
                at_ns % 1_000_000_000
            )
        } else {
            String::new()
        };
        format!("throttle run: {what}{stamp}")
    }
}

/// A clock's time now, in nanoseconds.
fn clock_ns(clock: libc::clockid_t) -> u64 {
    // SAFETY: a zeroed timespec is a valid out-parameter; clock_gettime(2) fills it.
    let mut ts: libc::timespec = unsafe { std::mem::zeroed() };
    // SAFETY: `ts` is valid and writable; both clocks used here exist on Linux.
    unsafe { libc::clock_gettime(clock, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// `t` in clock ticks since boot (the unit of `/proc/PID/stat`'s start time), rounded down.
fn boot_ticks(t: Instant) -> u64 {
    let ago = Instant::now().saturating_duration_since(t).as_nanos() as u64;
    let boot_ns = clock_ns(libc::CLOCK_BOOTTIME).saturating_sub(ago);
    // SAFETY: sysconf(3) has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as u64;
    boot_ns / (1_000_000_000 / hz).max(1)
}

/// Parent pid and start time (ticks since boot) of every process, from `/proc/PID/stat`.
fn processes() -> HashMap<i32, (i32, u64)> {
    let mut out = HashMap::new();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return out;
    };
    for e in dir.flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // After the command name in parentheses: field 3 (state) onwards; ppid is field 4,
        // starttime field 22.
        let Some(rest) = stat.rsplit_once(')').map(|x| x.1) else {
            continue;
        };
        let f: Vec<&str> = rest.split_whitespace().collect();
        if let (Some(ppid), Some(start)) = (
            f.get(1).and_then(|v| v.parse().ok()),
            f.get(19).and_then(|v| v.parse().ok()),
        ) {
            out.insert(pid, (ppid, start));
        }
    }
    out
}

/// The descendants of `root` (not `root` itself) that started at or after tick `from`, with
/// their start times.
fn started_since(root: i32, from: u64) -> Vec<(i32, u64)> {
    let procs = processes();
    let mut kids: HashMap<i32, Vec<i32>> = HashMap::new();
    for (&pid, &(ppid, _)) in &procs {
        kids.entry(ppid).or_default().push(pid);
    }
    let mut out = Vec::new();
    let mut todo = vec![root];
    while let Some(p) = todo.pop() {
        for &c in kids.get(&p).map(Vec::as_slice).unwrap_or(&[]) {
            todo.push(c);
            let start = procs[&c].1;
            if start >= from {
                out.push((c, start));
            }
        }
    }
    out
}

/// The last pid the kernel handed out in this pid namespace.
fn last_pid() -> Option<i32> {
    std::fs::read_to_string("/proc/sys/kernel/ns_last_pid")
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// The most candidates [`created_since`] reads before it gives up for the full scan.
const MAX_CANDIDATES: i32 = 4096;

/// The descendants of `root` created after pid `mark` was handed out (pids after it in
/// allocation order, wrapping at `pid_max` back to 300 as the kernel does), that started at or
/// after tick `from`, with their start times. None when more than [`MAX_CANDIDATES`] pids were
/// handed out meanwhile.
fn created_since(root: i32, mark: i32, from: u64) -> Option<Vec<(i32, u64)>> {
    let now = last_pid()?;
    let pid_max: i32 = std::fs::read_to_string("/proc/sys/kernel/pid_max")
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(32768);
    let order: Vec<i32> = if now >= mark {
        (mark + 1..=now).collect()
    } else {
        (mark + 1..pid_max).chain(300..=now).collect()
    };
    if order.len() > MAX_CANDIDATES as usize {
        return None;
    }
    let mut out: Vec<(i32, u64)> = Vec::new();
    for pid in order {
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        let Some(rest) = stat.rsplit_once(')').map(|x| x.1) else {
            continue;
        };
        let f: Vec<&str> = rest.split_whitespace().collect();
        let (Some(ppid), Some(start)) = (
            f.get(1).and_then(|v| v.parse::<i32>().ok()),
            f.get(19).and_then(|v| v.parse::<u64>().ok()),
        ) else {
            continue;
        };
        // A child is created after its parent: in allocation order its parent is already known.
        if start >= from && (ppid == root || out.iter().any(|&(p, _)| p == ppid)) {
            out.push((pid, start));
        }
    }
    Some(out)
}

/// The start time of `pid`, if it still exists.
fn start_of(pid: i32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = stat.rsplit_once(')')?.1;
    rest.split_whitespace().nth(19)?.parse().ok()
}

/// SIGSTOP's bit in the signal masks of `/proc/PID/status` (signal n is bit n − 1).
const SIGSTOP_BIT: u64 = 1 << (libc::SIGSTOP - 1);

/// Whether `pid` runs free: none of its threads is stopped and no SIGSTOP is pending for it.
/// A SIGSTOP sent to a process asleep where signals do not wake it (make in posix_spawn,
/// waiting for its new job to exec) stays pending until it returns to user space; a SIGCONT
/// meanwhile discards it, and since the process never stopped the kernel reports no continue
/// (no SIGCHLD, no `CLD_CONTINUED`): only this look sees it.
///
/// The pending sets are read first (under the process's signal lock), the threads' states
/// after: a thread that takes a SIGSTOP sets its stopped state under that same lock, so a stop
/// under way is never taken for a continue. False when the process is gone or exiting.
fn runs_free(pid: i32) -> bool {
    let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) else {
        return false;
    };
    let stop_pending = status.lines().any(|l| {
        let mask = l
            .strip_prefix("SigPnd:")
            .or_else(|| l.strip_prefix("ShdPnd:"));
        mask.and_then(|m| u64::from_str_radix(m.trim(), 16).ok())
            .is_some_and(|m| m & SIGSTOP_BIT != 0)
    });
    if stop_pending {
        return false;
    }
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return false;
    };
    let mut any = false;
    for t in tasks.flatten() {
        let Ok(stat) = std::fs::read_to_string(t.path().join("stat")) else {
            continue;
        };
        let state = stat
            .rsplit_once(')')
            .and_then(|x| x.1.split_whitespace().next())
            .unwrap_or("");
        // Stopped (T), stopped by a tracer (t), exiting (Z, X): not running free.
        if matches!(state, "T" | "t" | "Z" | "X") {
            return false;
        }
        any = true;
    }
    any
}

fn kill(pid: i32, sig: libc::c_int) {
    // SAFETY: kill(2) has no memory effects; the pids are the command's and its tree's.
    unsafe {
        libc::kill(pid, sig);
    }
}

/// The hold on one command (its pid), with the SIGCHLD handler and self-pipe that wake the
/// main loop when the command is continued by someone else.
pub struct Hold {
    pid: i32,
    held: bool,
    /// Processes of the tree stopped with the command: (pid, start time), so that a pid reused
    /// meanwhile is never continued.
    jobs: Vec<(i32, u64)>,
    /// The processes of the tree the last change stopped (not the command itself).
    newly_stopped: Vec<i32>,
    /// The last pid handed out at the last look while the command was backed.
    mark: Option<i32>,
    /// When the last signal was sent (CLOCK_MONOTONIC ns).
    last_at: u64,
    /// The self-pipe's read end (non-blocking); the write end's number is in `WAKE_FD`.
    wake_r: OwnedFd,
    _wake_w: OwnedFd,
}

impl Hold {
    /// Starts watching the command `pid` (a child of this process): installs the SIGCHLD
    /// handler (stops, continues and exits of children wake [`wait`](Hold::wait)).
    ///
    /// # Errors
    /// The self-pipe cannot be made.
    pub fn new(pid: u32) -> io::Result<Hold> {
        let mut fds = [0 as libc::c_int; 2];
        // SAFETY: `fds` has room for the two descriptors pipe2 writes.
        if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC | libc::O_NONBLOCK) } != 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: pipe2 just returned both descriptors; we own them.
        let (wake_r, wake_w) =
            unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
        WAKE_FD.store(wake_w.as_raw_fd(), Ordering::Relaxed);
        // SAFETY: a zeroed sigaction with a plain handler, an empty mask and SA_RESTART is
        // valid; the handler only calls write(2) and touches errno (async-signal-safe).
        // SA_NOCLDSTOP is not set: a child's stop and continue are reported too.
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = on_sigchld as extern "C" fn(libc::c_int) as usize;
            sa.sa_flags = libc::SA_RESTART;
            libc::sigemptyset(&mut sa.sa_mask);
            libc::sigaction(libc::SIGCHLD, &sa, std::ptr::null_mut());
        }
        Ok(Hold {
            pid: pid as i32,
            held: false,
            jobs: Vec::new(),
            newly_stopped: Vec::new(),
            mark: last_pid(),
            last_at: 0,
            wake_r,
            _wake_w: wake_w,
        })
    }

    /// Sleeps until a child of this process stops, continues or exits, or `timeout` passes
    /// (rounded up to the millisecond).
    pub fn wait(&self, timeout: Duration) {
        let mut p = libc::pollfd {
            fd: self.wake_r.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // Rounded up: woken for an instant, the caller must find it passed (no spin before it).
        let ms = timeout.as_micros().div_ceil(1000).min(i32::MAX as u128) as i32;
        // SAFETY: one valid pollfd, count 1.
        unsafe { libc::poll(&mut p, 1, ms) };
        let mut buf = [0u8; 64];
        // SAFETY: reads at most 64 bytes into `buf` from our own non-blocking descriptor.
        while unsafe { libc::read(self.wake_r.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) } > 0
        {
        }
    }

    /// Whether the command was continued since the last look (consumes its stop and continue
    /// reports; never its exit, which `Child::try_wait` reaps).
    fn continued(&self) -> bool {
        let mut continued = false;
        loop {
            // SAFETY: a zeroed siginfo is a valid out-parameter for waitid(2).
            let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
            // SAFETY: `info` is valid and writable; without WEXITED no exit is consumed.
            let r = unsafe {
                libc::waitid(
                    libc::P_PID,
                    self.pid as libc::id_t,
                    &mut info,
                    libc::WSTOPPED | libc::WCONTINUED | libc::WNOHANG,
                )
            };
            // SAFETY: waitid filled `info`; si_pid is 0 when no child changed state.
            if r != 0 || unsafe { info.si_pid() } == 0 {
                return continued;
            }
            if info.si_code == libc::CLD_CONTINUED {
                continued = true;
            }
        }
    }

    /// One look: `backed` says whether a valid cluster slot backs the command now, `since` when
    /// the last one stopped backing it (the end of its trust window). Stops the command and the
    /// processes of its tree started since then when it is not backed, stops them again if
    /// someone continued the command meanwhile, continues them once it is backed. Returns what
    /// changed.
    pub fn update(&mut self, backed: bool, since: Option<Instant>) -> Option<Change> {
        let continued = self.continued();
        if ENDING.load(Ordering::Relaxed) {
            if self.held {
                self.release();
            }
            return None;
        }
        if !backed {
            if !self.held {
                HELD.store(true, Ordering::Relaxed);
                self.held = true;
                self.signal(libc::SIGSTOP);
                return Some(Change::Stopped(self.stop_jobs(since)));
            }
            // Continued as reported by the kernel, or continued before its stop took effect
            // (then nothing is reported; `runs_free`).
            if continued || runs_free(self.pid) {
                self.signal(libc::SIGSTOP);
                return Some(Change::StoppedAgain(self.stop_jobs(since)));
            }
            return None;
        }
        let change = if self.held {
            self.release();
            Some(Change::Continued)
        } else {
            None
        };
        self.mark = last_pid();
        change
    }

    /// Stops every process of the command's tree started since `since`; returns how many were
    /// new. The scan is repeated (1 ms apart, at most 20 times) until two in a row find no new
    /// one: a process stopped in the middle of a fork still completes it (the signal is taken
    /// on the way back to user space), so its child shows up only after the scan that stopped
    /// it.
    fn stop_jobs(&mut self, since: Option<Instant>) -> usize {
        self.newly_stopped.clear();
        let Some(since) = since else { return 0 };
        let from = boot_ticks(since);
        let mut new = 0;
        let mut quiet = 0;
        for _ in 0..20 {
            let mut found = 0;
            let since = self
                .mark
                .and_then(|m| created_since(self.pid, m, from))
                .unwrap_or_else(|| started_since(self.pid, from));
            for (pid, start) in since {
                kill(pid, libc::SIGSTOP);
                if !self.jobs.iter().any(|&(p, _)| p == pid) {
                    self.jobs.push((pid, start));
                    self.newly_stopped.push(pid);
                    found += 1;
                }
            }
            new += found;
            quiet = if found == 0 { quiet + 1 } else { 0 };
            if quiet >= 2 {
                break;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        new
    }

    fn release(&mut self) {
        self.held = false;
        self.newly_stopped.clear();
        HELD.store(false, Ordering::Relaxed);
        // The hold ends before the first SIGCONT, not after the last: a job continued here may
        // log its begin before make is continued (the randomized fault run once saw a begin
        // 1.9 ms before a stamp taken after the signals, and called it a task run while held).
        self.last_at = clock_ns(libc::CLOCK_MONOTONIC);
        for (pid, start) in std::mem::take(&mut self.jobs) {
            // Only the very process that was stopped (a pid reused since is left alone).
            if start_of(pid) == Some(start) {
                kill(pid, libc::SIGCONT);
            }
        }
        kill(self.pid, libc::SIGCONT);
    }

    fn signal(&mut self, sig: libc::c_int) {
        kill(self.pid, sig);
        self.last_at = clock_ns(libc::CLOCK_MONOTONIC);
    }

    /// When the signal of the last change was sent (CLOCK_MONOTONIC ns), for [`Change::line`].
    pub fn last_at(&self) -> u64 {
        self.last_at
    }

    /// The processes of the command's tree that the last stop found and stopped (empty after a
    /// continue), for [`Change::line`].
    pub fn newly_stopped(&self) -> &[i32] {
        &self.newly_stopped
    }
}

impl Drop for Hold {
    /// Dropped once the command has exited (and was reaped): the command's pid is not
    /// signalled, since it may already belong to another process; jobs still held (orphans of
    /// the command) are continued if they are still the processes that were stopped.
    fn drop(&mut self) {
        WAKE_FD.store(-1, Ordering::Relaxed);
        HELD.store(false, Ordering::Relaxed);
        for (pid, start) in std::mem::take(&mut self.jobs) {
            if start_of(pid) == Some(start) {
                kill(pid, libc::SIGCONT);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The state letter of `pid` (`/proc/PID/stat` field 3).
    fn state(pid: i32) -> Option<char> {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        stat.rsplit_once(')')?
            .1
            .split_whitespace()
            .next()?
            .chars()
            .next()
    }

    /// The child of `clone(CLONE_VM | CLONE_VFORK)`: stops itself before it would exec, as a
    /// job of make's that `throttle run` stopped right after make's posix_spawn created it.
    extern "C" fn stop_self(_: *mut libc::c_void) -> libc::c_int {
        // SAFETY: getpid and kill are plain system calls (no libc state in the shared memory).
        unsafe {
            let me = libc::syscall(libc::SYS_getpid) as libc::pid_t;
            libc::kill(me, libc::SIGSTOP);
        }
        0
    }

    /// Kills and reaps the test's command (its process group) when the test ends, also on a
    /// failed assertion.
    struct KillGroup(libc::pid_t);

    impl Drop for KillGroup {
        fn drop(&mut self) {
            // SAFETY: our own child's process group; then reap the child.
            unsafe {
                libc::kill(-self.0, libc::SIGKILL);
                libc::waitpid(self.0, std::ptr::null_mut(), 0);
            }
        }
    }

    /// Polls `cond` every millisecond until it holds; panics after two minutes (a guard
    /// against a hang: a loaded machine may be slow, not this slow).
    fn wait_for(what: &str, mut cond: impl FnMut() -> bool) {
        let start = Instant::now();
        while !cond() {
            assert!(
                start.elapsed() < Duration::from_secs(120),
                "timed out: {what}"
            );
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    /// make starts its jobs with posix_spawn (`clone(CLONE_VM | CLONE_VFORK)`): until the new
    /// job execs, make sleeps in the kernel where a SIGSTOP does not reach it; the signal stays
    /// pending. When the hold stops that job too (it started after the slot ended), make stays
    /// in that sleep with the SIGSTOP pending. A SIGCONT to the whole tree from outside (a host
    /// thawed) then discards the pending SIGSTOP: make never stopped, so the kernel reports no
    /// continue (no SIGCHLD, no `CLD_CONTINUED`), the job execs, and make runs on. The hold must
    /// see that make runs free and stop it again.
    #[test]
    fn a_command_held_inside_posix_spawn_and_continued_from_outside_is_stopped_again() {
        let since = Instant::now();
        std::thread::sleep(Duration::from_millis(20));
        let mark = last_pid();
        let mut stack = vec![0u8; 256 * 1024];
        let mut fds = [0 as libc::c_int; 2];
        // SAFETY: `fds` has room for the two descriptors.
        let made = unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_NONBLOCK) };
        assert_eq!(made, 0);
        let (r, w) = (fds[0], fds[1]);
        // SAFETY: the child calls only async-signal-safe functions (setpgid, clone, write,
        // nanosleep, _exit) before it is killed.
        let cmd = unsafe { libc::fork() };
        assert!(cmd >= 0);
        if cmd == 0 {
            // SAFETY: see above; the clone child runs on `stack` (copied into this process).
            unsafe {
                libc::setpgid(0, 0);
                let top = stack
                    .as_mut_ptr()
                    .add(stack.len() - 64)
                    .cast::<libc::c_void>();
                libc::clone(
                    stop_self,
                    top,
                    libc::CLONE_VM | libc::CLONE_VFORK | libc::SIGCHLD,
                    std::ptr::null_mut(),
                );
                // The "next jobs": a byte every 2 ms while it runs.
                let ts = libc::timespec {
                    tv_sec: 0,
                    tv_nsec: 2_000_000,
                };
                loop {
                    libc::write(w, b"x".as_ptr().cast(), 1);
                    libc::nanosleep(&ts, std::ptr::null_mut());
                }
            }
        }
        // SAFETY: our copy of the write end is not needed.
        unsafe { libc::close(w) };
        let drain = || {
            let mut buf = [0u8; 4096];
            let mut n = 0;
            loop {
                // SAFETY: reads into `buf` from our own non-blocking descriptor.
                let k = unsafe { libc::read(r, buf.as_mut_ptr().cast(), buf.len()) };
                if k <= 0 {
                    return n;
                }
                n += k as usize;
            }
        };
        let job = || {
            processes()
                .into_iter()
                .find(|&(_, (ppid, _))| ppid == cmd)
                .map(|(pid, _)| pid)
        };
        wait_for("the vfork child stops itself", || {
            job().is_some_and(|j| state(j) == Some('T'))
        });
        let job = job().unwrap();
        let _kill = KillGroup(cmd);
        // The command is in its vfork wait, where a SIGSTOP stays pending (it may still be on
        // its way there when the child has already stopped).
        wait_for("the command waits for its vfork child", || {
            state(cmd) == Some('D')
        });
        let mut hold = Hold::new(cmd as u32).unwrap();
        hold.mark = mark;
        assert_eq!(hold.update(false, Some(since)), Some(Change::Stopped(1)));
        // Held: the command sleeps in its posix_spawn with our SIGSTOP pending.
        assert_eq!(state(cmd), Some('D'));
        assert_eq!(hold.update(false, Some(since)), None);
        assert_eq!(drain(), 0);
        // The host is frozen and thawed as a whole.
        // SAFETY: signals to the command's own process group.
        unsafe {
            libc::kill(-cmd, libc::SIGSTOP);
            libc::kill(-cmd, libc::SIGCONT);
        }
        wait_for("the job ends", || matches!(state(job), None | Some('Z')));
        let mut again = None;
        wait_for("the hold looks again", || {
            again = hold.update(false, Some(since));
            hold.wait(Duration::from_millis(10));
            again.is_some()
        });
        assert!(
            matches!(again, Some(Change::StoppedAgain(_))),
            "the command ran free after the outside SIGCONT: {again:?}"
        );
        // The SIGSTOP just sent takes effect once the command next runs.
        wait_for("the command is stopped again", || state(cmd) == Some('T'));
        // SAFETY: our own descriptor.
        unsafe { libc::close(r) };
    }
}
