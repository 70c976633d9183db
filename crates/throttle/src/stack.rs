//! How much of the calling thread's stack is in use: a waiter stops taking other workers' forks
//! and spawns once half of its stack is used (see `sleep/README.md`, "How deep helping nests").
//!
//! Helping runs a stolen job on top of the waiter's frames, and that job may wait and help in
//! turn, so the nesting has no bound of its own: measured at 2 500–3 700 jobs on one thread in
//! the stress test of millions of random nested tasks (6.5 MiB of stack in release builds,
//! 18 MiB in debug builds, of 32 MiB). Bounding it by stack *bytes*, not by a count of jobs,
//! adapts to frame sizes (debug builds use about four times the stack of release builds) and to
//! the stack the thread has (32 MiB for workers, 2 MiB for a test harness thread, 8 MiB for a
//! main thread).

#[cfg(not(loom))]
use std::cell::Cell;

#[cfg(not(loom))]
thread_local! {
    /// The lowest usable address of the calling thread's stack, found once per thread. 0 while
    /// unknown; `usize::MAX` if the platform could not tell (then the stack counts as roomy).
    static LOW: Cell<usize> = const { Cell::new(0) };
    /// Half the stack's size in bytes.
    static HALF: Cell<usize> = const { Cell::new(0) };
}

/// True while less than half of the calling thread's stack is in use (always true where the
/// stack's bounds are unknown, and under loom).
#[inline]
pub(crate) fn roomy() -> bool {
    #[cfg(loom)]
    {
        true
    }
    #[cfg(not(loom))]
    {
        let here = {
            let marker = 0u8;
            std::hint::black_box(&marker) as *const u8 as usize
        };
        let mut low = LOW.with(Cell::get);
        if low == 0 {
            low = init();
        }
        // The stack grows down: `here - low` bytes are left.
        low == usize::MAX || here.saturating_sub(low) > HALF.with(Cell::get)
    }
}

/// Looks up the calling thread's stack bounds and caches them.
#[cfg(not(loom))]
#[cold]
fn init() -> usize {
    let (low, half) = bounds().map_or((usize::MAX, 0), |(low, size)| (low, size / 2));
    LOW.with(|l| l.set(low));
    HALF.with(|h| h.set(half));
    low
}

/// The calling thread's stack as (lowest address, size in bytes), from glibc/musl's
/// `pthread_getattr_np` (for the main thread it reports the stack rlimit's extent).
#[cfg(all(not(loom), target_os = "linux"))]
fn bounds() -> Option<(usize, usize)> {
    // SAFETY: [1] `attr` is initialized by `pthread_getattr_np` before any other use, and
    // destroyed once, only if that call succeeded; [2] `pthread_attr_getstack` writes only the
    // two locals passed by pointer; [3] `pthread_self` is always valid for the calling thread.
    unsafe {
        let mut attr: libc::pthread_attr_t = std::mem::zeroed();
        if libc::pthread_getattr_np(libc::pthread_self(), &mut attr) != 0 {
            return None;
        }
        let mut addr: *mut libc::c_void = std::ptr::null_mut();
        let mut size: libc::size_t = 0;
        let ok = libc::pthread_attr_getstack(&attr, &mut addr, &mut size) == 0;
        libc::pthread_attr_destroy(&mut attr);
        (ok && !addr.is_null() && size > 0).then_some((addr as usize, size))
    }
}

/// Elsewhere the bounds are unknown: helping stays unbounded, as before.
#[cfg(all(not(loom), not(target_os = "linux")))]
fn bounds() -> Option<(usize, usize)> {
    None
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn a_fresh_thread_is_roomy_and_a_deep_recursion_is_not() {
        std::thread::Builder::new()
            .stack_size(2 << 20)
            .spawn(|| {
                assert!(roomy());
                // Recurses with frames of over 4 KiB until half the stack (1 MiB) is used, or
                // 400 deep (over 1.6 MiB, only reached where the bounds are unknown).
                fn dig(n: usize) -> bool {
                    let pad = std::hint::black_box([0u8; 4096]);
                    if !roomy() {
                        return true;
                    }
                    if n == 400 {
                        return false;
                    }
                    let turned = dig(n + 1);
                    std::hint::black_box(pad[n]);
                    turned
                }
                let turned = dig(0);
                assert_eq!(turned, cfg!(target_os = "linux"));
                assert!(roomy(), "back at the top, the stack is roomy again");
            })
            .unwrap()
            .join()
            .unwrap();
    }
}
