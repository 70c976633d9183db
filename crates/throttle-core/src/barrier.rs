//! Asymmetric fences: a free *light* side for the path every fork takes, a costly *heavy* side
//! for the rare path that must see what the light side did (a steal, a thread about to sleep).
//!
//! A Dekker-style handshake ("I write X then read Y; you write Y then read X; at least one of us
//! sees the other's write") needs a store-load fence on *both* sides. The fork path is one side
//! of two such handshakes (its push against a thread going to sleep, its pop against a thief),
//! and a `fence(SeqCst)` there costs more than the rest of the fork together. Linux's
//! `membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED)` moves that cost to the other side: the caller
//! of [`heavy`] makes every running thread of the process execute a full memory barrier (by an
//! inter-processor interrupt) before it returns, and threads that are not running have passed
//! one in their last context switch. So a thread whose side is `light()` (a compiler fence: the
//! compiler keeps the program order, the CPU does not have to) is ordered against `heavy()` as
//! if it had issued a real fence at some point of its execution, which is all a Dekker pair
//! needs: either that point comes before the light side's write (then its read comes after too,
//! and sees the heavy side's write), or after its write (then the heavy side's read sees it).
//! The kernel documents this pairing as "barrier() / sys_membarrier(): ordered".
//!
//! Measured on this project's 2-CPU VM: `heavy()` costs 0.2 µs with no other thread of the
//! process running and about 3 µs with one (an interrupt to its CPU); a `fence(SeqCst)` on the
//! fork path cost about 40 % of a fork. Re-measure with `throttle-bench --bench fib` (light side)
//! and `--bench dispatch` (heavy side: a steal pays one).
//!
//! The mode is chosen once, before the first pool starts (`init`), and never changes:
//! - **expedited**: `MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED` succeeded (Linux ≥ 4.14).
//!   Registration only allows this process to issue the command; it changes nothing the
//!   program can observe (no signal, no descriptor, no handler).
//! - **symmetric**: anything else (another OS, a kernel or seccomp filter without the command,
//!   Miri, loom): both sides issue `fence(SeqCst)`. Correct, and the fork path pays the fence.
//!   Loom therefore checks every handshake that uses this module in its symmetric form, which
//!   is the form the asymmetric one is equivalent to.
//!
//! Written here rather than taken from the `membarrier` crates: those fall back to the
//! non-expedited global command (a grace period: milliseconds per call) or to an `mprotect`
//! trick where the expedited command is missing, and a steal must never cost milliseconds; here
//! the fallback is a fence on both sides, and the mode is visible ([`expedited`]).

// The mode is std's (set once, before any model thread runs); the fences are the crate's
// `sync` ones, so that loom sees them.
use crate::sync::fence;
use std::sync::atomic::{compiler_fence, AtomicU8, Ordering};

/// Not decided yet / symmetric fences / `membarrier` expedited.
const UNDECIDED: u8 = 0;
const SYMMETRIC: u8 = 1;
const EXPEDITED: u8 = 2;

static MODE: AtomicU8 = AtomicU8::new(UNDECIDED);

/// Decides the mode; called before any participant of any pool exists (every `Registry` is
/// built through it), so no light side ever runs before the mode is known.
pub(crate) fn init() {
    if MODE.load(Ordering::Acquire) != UNDECIDED {
        return;
    }
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let mode = if register_expedited() {
            EXPEDITED
        } else {
            SYMMETRIC
        };
        // Release: the registration happens before any light side that reads EXPEDITED.
        MODE.store(mode, Ordering::Release);
    });
}

/// True if [`heavy`] is the expedited `membarrier` (and [`light`] a compiler fence): shown by
/// `Pool`'s `Debug`.
pub(crate) fn expedited() -> bool {
    MODE.load(Ordering::Relaxed) == EXPEDITED
}

/// True if the light side must be a real fence (symmetric mode). Decided once by [`init`]; a
/// hot path may keep the answer beside its own data ([`light_with`]) instead of loading it.
pub(crate) fn light_is_fence() -> bool {
    cfg!(any(loom, miri)) || MODE.load(Ordering::Relaxed) != EXPEDITED
}

/// The light side of an asymmetric fence: keeps the program order of the accesses around it,
/// and is ordered against every [`heavy`] as a full fence would be. (The fork path keeps the
/// mode beside its deque and calls [`light_with`].)
#[cfg(all(test, not(loom)))]
#[inline(always)]
pub(crate) fn light() {
    light_with(light_is_fence());
}

/// [`light`] with the mode passed in (`fenced`: what [`light_is_fence`] said after [`init`]).
#[inline(always)]
pub(crate) fn light_with(fenced: bool) {
    if fenced {
        fence(Ordering::SeqCst);
    } else {
        compiler_fence(Ordering::SeqCst);
    }
}

/// The heavy side: a full fence here and, in effect, in every other running thread of the
/// process before this returns. Costs a system call and an interrupt per CPU that runs one of
/// the process's threads; call it only on paths that are rare next to the light ones.
#[inline]
pub(crate) fn heavy() {
    if !cfg!(any(loom, miri)) && MODE.load(Ordering::Relaxed) == EXPEDITED {
        membarrier_expedited();
    }
    // Also a real fence on this side (in expedited mode the system call is one already; the
    // extra fence keeps the model's reading simple and costs nothing next to it).
    fence(Ordering::SeqCst);
}

#[cfg(all(target_os = "linux", not(loom), not(miri)))]
mod sys {
    /// From `<linux/membarrier.h>` (not in the `libc` crate).
    const MEMBARRIER_CMD_QUERY: libc::c_int = 0;
    const MEMBARRIER_CMD_PRIVATE_EXPEDITED: libc::c_int = 1 << 3;
    const MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED: libc::c_int = 1 << 4;

    fn membarrier(cmd: libc::c_int) -> libc::c_long {
        // SAFETY: membarrier(2) takes two integers and touches no memory of ours; an
        // unsupported command or kernel returns -1 (EINVAL, ENOSYS, EPERM under seccomp).
        unsafe {
            libc::syscall(
                libc::SYS_membarrier,
                cmd,
                0 as libc::c_int,
                0 as libc::c_int,
            )
        }
    }

    pub(super) fn register_expedited() -> bool {
        let supported = membarrier(MEMBARRIER_CMD_QUERY);
        supported >= 0
            && supported & libc::c_long::from(MEMBARRIER_CMD_PRIVATE_EXPEDITED) != 0
            && membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) == 0
            // One real call: a filter that allows registration but not the command itself
            // must not leave us in expedited mode.
            && membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) == 0
    }

    pub(super) fn membarrier_expedited() {
        let r = membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED);
        // Registered and tried once in `init`; the kernel documents the command as never
        // failing after a successful registration.
        debug_assert_eq!(
            r, 0,
            "membarrier(PRIVATE_EXPEDITED) failed after registration"
        );
    }
}

#[cfg(not(all(target_os = "linux", not(loom), not(miri))))]
mod sys {
    pub(super) fn register_expedited() -> bool {
        false
    }

    pub(super) fn membarrier_expedited() {}
}

use sys::{membarrier_expedited, register_expedited};

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn the_mode_is_decided_once_and_both_sides_run() {
        init();
        let first = expedited();
        init();
        assert_eq!(expedited(), first);
        light();
        heavy();
        if cfg!(target_os = "linux") && !cfg!(miri) {
            eprintln!("membarrier expedited: {first}");
        }
    }

    /// The handshake the scheduler relies on, with real threads: a light writer and a heavy
    /// writer each write their flag and then read the other's; at least one sees the other's
    /// write, in every round (a store-load reordering on the light side would show as both
    /// reading 0).
    #[test]
    fn a_light_and_a_heavy_side_never_both_miss() {
        use std::sync::atomic::AtomicUsize;
        use std::sync::Barrier;
        init();
        const ROUNDS: usize = 20_000;
        let x = AtomicUsize::new(0);
        let y = AtomicUsize::new(0);
        let start = Barrier::new(2);
        let seen = std::sync::Mutex::new(vec![(0usize, 0usize); ROUNDS]);
        std::thread::scope(|s| {
            s.spawn(|| {
                for r in 1..=ROUNDS {
                    start.wait();
                    x.store(r, Ordering::Relaxed);
                    light();
                    let got = y.load(Ordering::Relaxed);
                    seen.lock().unwrap()[r - 1].0 = got;
                    start.wait();
                }
            });
            for r in 1..=ROUNDS {
                start.wait();
                y.store(r, Ordering::Relaxed);
                heavy();
                let got = x.load(Ordering::Relaxed);
                seen.lock().unwrap()[r - 1].1 = got;
                start.wait();
            }
        });
        let seen = seen.into_inner().unwrap();
        for (r, &(light_saw, heavy_saw)) in seen.iter().enumerate() {
            let r = r + 1;
            assert!(
                light_saw == r || heavy_saw == r,
                "round {r}: both sides missed the other's write"
            );
        }
    }
}
