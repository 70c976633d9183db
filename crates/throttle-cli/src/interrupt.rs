//! Ctrl-C and SIGTERM as a request, not a kill: the first SIGINT or SIGTERM sets a flag that
//! experiments poll between measurements, so they stop early and still print and save what they
//! measured (marked partial). A second signal exits at once with status 128 + signal.
//!
//! "Second" means a signal that arrives more than [`SAME_REQUEST`] after the first. A tool that
//! stops a program (`timeout -s INT`, a CI runner, systemd, a shell's job control) often signals
//! both the process and its process group, so one request arrives twice within microseconds;
//! counting that echo as a second Ctrl-C would throw away everything measured. A person's second
//! Ctrl-C comes later than that.
//!
//! A real Ctrl-C reaches the whole foreground process group, so the children this binary runs
//! as helpers (`procs`' `__spin` copies, scan's `__tasks`) receive it too. They install the
//! handler [`quiet`]ly: the request is noted and nothing is printed, so one Ctrl-C gives one
//! message, from the process the user started. The message names the signal: SIGINT (Ctrl-C)
//! or SIGTERM (`kill`, `timeout`), and how to quit at once for that signal.
//!
//! The handler does only async-signal-safe work: atomics, `clock_gettime`, `write` and `_exit`.

use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, Ordering};
use std::time::Duration;

/// How close together two signals count as one request. Echoes from a process-group signal
/// arrive within microseconds; 300 ms is far above that and still below a person's deliberate
/// second press.
const SAME_REQUEST: Duration = Duration::from_millis(300);

/// Monotonic time of the first signal in nanoseconds (at least 1), or 0 before any signal.
static FIRST_AT: AtomicU64 = AtomicU64::new(0);
/// The number of the first signal received (0 before any).
static SIGNAL: AtomicI32 = AtomicI32::new(0);
/// True in a helper child: the handler prints nothing (its parent prints the one message).
static QUIET: AtomicBool = AtomicBool::new(false);

/// What the first SIGINT prints.
const SIGINT_MESSAGE: &[u8] = b"\ninterrupted by SIGINT: finishing the current measurement, then saving partial results (Ctrl-C again to quit now)\n";
/// What the first SIGTERM prints.
const SIGTERM_MESSAGE: &[u8] = b"\nterminated by SIGTERM: finishing the current measurement, then saving partial results (SIGTERM again to quit now)\n";

/// The message printed for the first `signal`.
fn message(signal: libc::c_int) -> &'static [u8] {
    if signal == libc::SIGTERM {
        SIGTERM_MESSAGE
    } else {
        SIGINT_MESSAGE
    }
}

fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; CLOCK_MONOTONIC always exists on Linux, and
    // clock_gettime is async-signal-safe (POSIX.1-2008), so the handler may call this.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    (ts.tv_sec as u64)
        .saturating_mul(1_000_000_000)
        .saturating_add(ts.tv_nsec as u64)
}

extern "C" fn on_signal(signal: libc::c_int) {
    let now = monotonic_ns().max(1);
    // SeqCst on the flag pairs with the SeqCst load in `requested`: a poller that sees the flag
    // also sees SIGNAL, stored before it.
    SIGNAL
        .compare_exchange(0, signal, Ordering::SeqCst, Ordering::SeqCst)
        .ok();
    match FIRST_AT.compare_exchange(0, now, Ordering::SeqCst, Ordering::SeqCst) {
        Ok(_) if !QUIET.load(Ordering::Relaxed) => {
            let msg = message(signal);
            // SAFETY: write(2) is async-signal-safe; `msg` is a valid buffer of that length. A
            // failed write loses only the message.
            unsafe { libc::write(2, msg.as_ptr().cast(), msg.len()) };
        }
        Ok(_) => {}
        Err(first) => {
            if now.saturating_sub(first) > SAME_REQUEST.as_nanos() as u64 {
                // SAFETY: _exit is async-signal-safe and never returns.
                unsafe { libc::_exit(128 + signal) };
            }
        }
    }
}

/// Installs the handlers in a helper child (`__spin`, `__tasks`, `__pool`): as [`install`],
/// but the first signal prints nothing, so a Ctrl-C that reaches the whole process group is
/// announced once, by the parent.
pub fn quiet() {
    // Relaxed: stored before `install` registers the handler (sigaction orders it), and only
    // ever read by that handler.
    QUIET.store(true, Ordering::Relaxed);
    install();
}

/// Installs the SIGINT and SIGTERM handlers once. Later calls do nothing.
pub fn install() {
    static INSTALLED: std::sync::Once = std::sync::Once::new();
    INSTALLED.call_once(|| {
        for signal in [libc::SIGINT, libc::SIGTERM] {
            // SAFETY: [1] a zeroed sigaction is a valid "no flags, empty mask" value; [2]
            // `on_signal` is an `extern "C" fn(c_int)` that does only async-signal-safe work;
            // [3] SA_RESTART keeps blocking calls (wait4, reads) from failing with EINTR. A
            // failure to install leaves the default action, which loses only partial results.
            unsafe {
                let mut action: libc::sigaction = std::mem::zeroed();
                action.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as usize;
                action.sa_flags = libc::SA_RESTART;
                libc::sigemptyset(&mut action.sa_mask);
                libc::sigaction(signal, &action, std::ptr::null_mut());
            }
        }
    });
}

/// True once SIGINT or SIGTERM arrived. Experiments check it between measurements.
pub fn requested() -> bool {
    FIRST_AT.load(Ordering::SeqCst) != 0
}

/// The exit status for an interrupted run: 128 + the signal (130 for SIGINT, 143 for SIGTERM).
pub fn exit_status() -> u8 {
    match SIGNAL.load(Ordering::SeqCst) {
        0 => 130,
        s => u8::try_from(128 + s).unwrap_or(130),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_message_names_the_signal() {
        let int = String::from_utf8_lossy(message(libc::SIGINT));
        let term = String::from_utf8_lossy(message(libc::SIGTERM));
        assert!(
            int.contains("SIGINT") && int.contains("Ctrl-C again"),
            "{int}"
        );
        assert!(
            term.contains("SIGTERM") && !term.contains("Ctrl-C"),
            "{term}"
        );
    }
}
