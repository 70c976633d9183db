//! The table of tokens read from a shared fifo or pipe, and the opt-in hooks that give them back
//! on SIGINT, SIGTERM and process exit.
//!
//! A token read from a shared fifo or pipe is known only to this process. Normally it goes back
//! by `Drop`: the budget thread or a `Permit` releases it, unwinding included, and a dropped
//! [`Jobserver`](super::Jobserver) writes back whatever was read through it and never released
//! (`return_fd`), through its own descriptor, before closing it. None of that changes anything
//! process-wide. A program that also wants tokens back when it dies of SIGINT/SIGTERM, or exits
//! while the global pool (never dropped) holds some, opts in with [`install_exit_hooks`]
//! (`PoolBuilder::jobserver_exit_hooks`, or `THROTTLE_JOBSERVER_HOOKS=1` for the global pool):
//! that installs a SIGINT/SIGTERM handler (only where the disposition is the default) and an
//! `atexit` hook. Tokens held through a throttle server's socket need none of this: the server
//! takes them back on EOF, also after SIGKILL (README.md).
//!
//! Every such token is recorded in a fixed, lock-free table (`[AtomicU64; SLOTS]`, an entry =
//! valid bit | descriptor | byte). The normal release path and the sweeps all *swap the entry to 0
//! first* and write the byte only if they got it, so a token is written back at most once (never
//! duplicated). A sweep in a `fork()` child (another pid than the one that installed the hooks)
//! writes nothing: the tokens are the parent's.
//!
//! No window: reading a byte and recording it, and taking an entry and writing its byte back, are
//! each one *critical section* ([`critical`]): the calling thread blocks SIGINT and SIGTERM for
//! its duration (so the handler never runs on it mid-way) and counts itself in `BUSY`; the
//! handler, running on another thread, waits until `BUSY` is 0 (a non-blocking read or a one-byte
//! write: microseconds) before its sweep. So a token is always either in the table or in the
//! fifo when the sweep runs. And none is read after it: the sweep first sets `DYING`, and a read
//! checks it inside its critical section (after counting itself busy): either the sweep saw the
//! reader busy and waited for its record, or the reader sees the flag and reads nothing.

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::Once;

/// Entries in the table: far above any pool's thread count (a token per thread at most).
const SLOTS: usize = 1024;
const VALID: u64 = 1 << 63;

static TABLE: [AtomicU64; SLOTS] = [const { AtomicU64::new(0) }; SLOTS];
static INSTALL: Once = Once::new();
/// Threads inside a critical section.
static BUSY: AtomicUsize = AtomicUsize::new(0);
/// The pid that installed the hooks: a sweep in any other process (a `fork()` child) is a no-op.
static PID: AtomicU32 = AtomicU32::new(0);
/// Set by a sweep of the hooks (the process is dying): no token is read any more, so none can be
/// read after the sweep went past its entry.
static DYING: AtomicBool = AtomicBool::new(false);

/// True once the process is dying of a signal or exiting through the hooks' sweep. Checked
/// inside a critical section before a token is read: either the sweep saw this thread busy and
/// waited for its record, or this thread sees the flag and reads nothing.
pub(crate) fn dying() -> bool {
    // SeqCst: pairs with the sweep's SeqCst store before its SeqCst loads of BUSY, and our
    // SeqCst increment of BUSY before this load (the store-buffer pattern: one side sees the
    // other).
    DYING.load(Ordering::SeqCst)
}

/// Opt-in: installs a SIGINT/SIGTERM handler (only for a signal whose disposition is the
/// default; a program's own handler is never replaced) and an `atexit` hook, once per process.
/// Both write back every token read from a shared fifo or pipe and not yet released, then (for a
/// signal) restore the default action and re-raise it, so the process still dies of it.
///
/// Without this call throttle installs nothing process-wide: tokens go back when their holder is
/// dropped, and a process that dies holding tokens of a plain make jobserver loses them for the
/// rest of that build (under `throttle run`, throttle programs hold them through a socket and the
/// server takes them back whatever the death). Call it early, before other code installs its own
/// SIGINT handler; a handler installed later that chains to the previous one would end the
/// process on Ctrl-C.
///
/// # Examples
/// ```
/// throttle_jobserver::install_exit_hooks();
/// throttle_jobserver::install_exit_hooks(); // once per process: the second call does nothing
/// ```
pub fn install_exit_hooks() {
    INSTALL.call_once(install);
}

/// Runs `f` (a token read + record, or take + write) with SIGINT and SIGTERM blocked on this
/// thread and counted in `BUSY`, so a sweep never runs while a token is between the table and the
/// fifo.
pub(crate) fn critical<R>(f: impl FnOnce() -> R) -> R {
    // SAFETY: zeroed sigset_t values are valid out-parameters; sigemptyset/sigaddset initialize
    // `block`, and pthread_sigmask only changes this thread's mask (restored below).
    let mut old: libc::sigset_t = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    unsafe {
        let mut block: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut block);
        libc::sigaddset(&mut block, libc::SIGINT);
        libc::sigaddset(&mut block, libc::SIGTERM);
        libc::pthread_sigmask(libc::SIG_BLOCK, &block, &mut old);
    }
    // SeqCst: pairs with the handler's SeqCst load of BUSY: either it sees us busy and waits, or
    // we see its swaps (the entries are gone) in `take`.
    BUSY.fetch_add(1, Ordering::SeqCst);
    let r = f();
    BUSY.fetch_sub(1, Ordering::SeqCst);
    // SAFETY: restores the mask saved above; a signal that arrived meanwhile is delivered now.
    unsafe {
        libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut());
    }
    r
}

/// Records a held token; returns its entry, or `None` if the table is full (the token then
/// still works, but a signal would lose it).
pub(crate) fn record(fd: i32, byte: u8) -> Option<usize> {
    let v = VALID | ((fd as u32 as u64) << 8) | byte as u64;
    TABLE.iter().position(|e| {
        // AcqRel: pairs with the handler's swap; the entry is claimed by exactly one CAS.
        e.compare_exchange(0, v, Ordering::AcqRel, Ordering::Relaxed)
            .is_ok()
    })
}

/// Takes a token's entry back before writing the byte: true if the caller must write it (the
/// signal handler did not get there first).
pub(crate) fn take(entry: Option<usize>) -> bool {
    match entry {
        // AcqRel: pairs with the handler's swap: exactly one of the two sees the valid entry.
        Some(i) => TABLE[i].swap(0, Ordering::AcqRel) != 0,
        None => true,
    }
}

/// Writes back every token still recorded for descriptor `fd` (its jobserver is being dropped;
/// `fd` is still open and still the jobserver's).
pub(crate) fn return_fd(fd: i32) {
    critical(|| sweep(|f| f == fd, true));
}

/// Forgets the tokens recorded for `fd` without writing them (a `fork()` child dropping a copy of
/// the parent's jobserver: the tokens are the parent's).
pub(crate) fn forget_fd(fd: i32) {
    critical(|| sweep(|f| f == fd, false));
}

/// Takes every entry whose descriptor `pick`s, writing its byte back if `write`
/// (async-signal-safe: atomics and write(2) only).
fn sweep(pick: impl Fn(i32) -> bool, write: bool) {
    for e in &TABLE {
        let v = e.load(Ordering::Relaxed);
        if v & VALID == 0 || !pick(((v >> 8) & 0xffff_ffff) as u32 as i32) {
            continue;
        }
        // AcqRel: pairs with `take`'s swap (only one side writes the byte).
        if e.compare_exchange(v, 0, Ordering::AcqRel, Ordering::Relaxed)
            .is_ok()
            && write
        {
            let fd = ((v >> 8) & 0xffff_ffff) as u32 as i32;
            let b = v as u8;
            // SAFETY: write(2) is async-signal-safe; `b` is a valid 1-byte buffer. The
            // descriptor is open and the jobserver's: a `Jobserver` takes its entries (this
            // sweep) before it closes its descriptor.
            unsafe {
                libc::write(fd, (&b as *const u8).cast(), 1);
            }
        }
    }
}

/// Writes back every recorded token, unless this is a `fork()` child of the process that
/// installed the hooks (async-signal-safe: atomics, getpid(2) and write(2) only).
fn return_all() {
    // SAFETY: getpid(2) is async-signal-safe and cannot fail.
    if unsafe { libc::getpid() } as u32 != PID.load(Ordering::Relaxed) {
        return;
    }
    // From here on no thread reads a token (see `dying`).
    DYING.store(true, Ordering::SeqCst);
    // Wait for token operations on other threads (the handler never runs on a thread inside
    // one: those block the signals). Bounded: each is a non-blocking read or a 1-byte write.
    while BUSY.load(Ordering::SeqCst) != 0 {
        std::hint::spin_loop();
    }
    sweep(|_| true, true);
}

extern "C" fn on_signal(sig: libc::c_int) {
    return_all();
    // SAFETY: signal(2) and raise(2) are async-signal-safe; restoring the default and
    // re-raising makes the process die of the signal as it would have without us.
    unsafe {
        libc::signal(sig, libc::SIG_DFL);
        libc::raise(sig);
    }
}

/// At normal process exit (`main` returned, `std::process::exit`): the global pool is never
/// dropped, so tokens its budget thread holds in the last grace period go back here.
extern "C" fn on_exit() {
    return_all();
}

fn install() {
    PID.store(std::process::id(), Ordering::Relaxed);
    // SAFETY: `on_exit` is a plain `extern "C" fn()` that only does async-signal-safe work; a
    // failure to register leaves only the exit path unprotected.
    unsafe {
        libc::atexit(on_exit);
    }
    for sig in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: a zeroed sigaction is a valid out-parameter; passing a null new action only
        // queries the current one.
        let mut old: libc::sigaction = unsafe { std::mem::zeroed() };
        // SAFETY: see above; `old` is valid and writable.
        if unsafe { libc::sigaction(sig, std::ptr::null(), &mut old) } != 0 {
            continue;
        }
        if old.sa_sigaction != libc::SIG_DFL {
            continue; // the program handles it; never replace its handler
        }
        // SAFETY: a zeroed sigaction with our handler, an empty mask and no flags is valid;
        // `on_signal` only does async-signal-safe work.
        unsafe {
            let mut new: libc::sigaction = std::mem::zeroed();
            new.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as usize;
            libc::sigemptyset(&mut new.sa_mask);
            libc::sigaction(sig, &new, std::ptr::null_mut());
        }
    }
}
