//! Holding the command of `throttle run --budget` while no cluster slot backs it.
//!
//! Every process under a jobserver may run one job without a token: its implicit slot. For the
//! command of `throttle run --budget` that slot is a cluster slot, and no pipe can take it back:
//! make starts its next job on it the moment its last one ends, without asking anyone. So when
//! the lease's trust window ends (the slot is no longer backed), `throttle run` stops the
//! command with SIGSTOP, and continues it with SIGCONT once a new implicit slot is granted. Only
//! the command (the process `throttle run` started) is stopped: the jobs it already started
//! keep running and end as they would (stopping them would not give their slots back, only make
//! them hold on longer); it is the command that starts new ones.
//!
//! Someone else may continue the command meanwhile (a SIGCONT to every process of a host that
//! was frozen as a whole, a shell's `fg`): the kernel tells the parent (SIGCHLD with
//! `CLD_CONTINUED`), the handler here wakes the main loop through a self-pipe, and the command
//! is stopped again at once. A termination signal to `throttle run` ends the hold (the command
//! is continued, so that it can act on the signal and exit).

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::time::Duration;

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
/// forwarded the signal): the command must be able to run to act on it, so the hold ends.
/// Async-signal-safe (atomics and kill(2)).
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
    /// The command was stopped: no slot backs it.
    Stopped,
    /// Someone continued the held command; it was stopped again.
    StoppedAgain,
    /// A slot backs it again: continued.
    Continued,
}

/// The hold on one command (its pid), with the SIGCHLD handler and self-pipe that wake the
/// main loop when the command is continued by someone else.
pub struct Hold {
    pid: i32,
    held: bool,
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
            wake_r,
            _wake_w: wake_w,
        })
    }

    /// Sleeps until a child of this process stops, continues or exits, or `timeout` passes.
    pub fn wait(&self, timeout: Duration) {
        let mut p = libc::pollfd {
            fd: self.wake_r.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        let ms = timeout.as_millis().min(i32::MAX as u128) as i32;
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

    /// One look: `backed` says whether a valid cluster slot backs the command now. Stops it
    /// when it is not backed, stops it again if someone continued it meanwhile, continues it
    /// once it is backed. Returns what changed.
    pub fn update(&mut self, backed: bool) -> Option<Change> {
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
                return Some(Change::Stopped);
            }
            if continued {
                self.signal(libc::SIGSTOP);
                return Some(Change::StoppedAgain);
            }
            return None;
        }
        if self.held {
            self.release();
            return Some(Change::Continued);
        }
        None
    }

    fn release(&mut self) {
        self.held = false;
        HELD.store(false, Ordering::Relaxed);
        self.signal(libc::SIGCONT);
    }

    fn signal(&self, sig: libc::c_int) {
        // SAFETY: kill(2) on our own child's pid; no memory effects.
        unsafe {
            libc::kill(self.pid, sig);
        }
    }
}

impl Drop for Hold {
    /// Dropped once the command has exited (and was reaped): no signal is sent then, since its
    /// pid may already belong to another process.
    fn drop(&mut self) {
        WAKE_FD.store(-1, Ordering::Relaxed);
        HELD.store(false, Ordering::Relaxed);
    }
}
