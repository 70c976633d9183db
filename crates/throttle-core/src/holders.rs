//! Who may hold a pool's run slots, as the kernel knows them: the thread id of each thread that
//! takes part in the pool (its workers, and its callers and spares, with a lent deque or
//! without one), and whether any of them computes right now.
//!
//! The limit counts slots, and a slot holder blocked in the kernel (on a user's lock, in I/O,
//! asleep) still holds one. A thread queued for a slot behind holders that are all blocked may
//! wait forever: a task holding a `Mutex` across a fork sleeps in its fork wait, its slot goes
//! to a thread that then blocks on that `Mutex`, and the holder, woken, queues behind it
//! (rayon#592's shape under a limit, `tests/waiting.rs`). So a thread that has queued for a while
//! asks the kernel whether any holder is runnable (`/proc/self/task/<tid>/stat`, state `R`); if
//! none is, it takes a slot over the limit, as Go's scheduler hands a thread blocked in a system
//! call's processor to another thread. Protocol and bounds: sleep/README.md, "Slot holders
//! blocked in the kernel".
//!
//! Written by hand: no crate reads one thread's scheduler state, and the format is one line
//! (proc(5): the state is the first field after the command name's closing parenthesis).

use crate::sync::{AtomicU32, Ordering};
use std::sync::Mutex;

/// The kernel thread ids of a pool's participants: per deque slot (0: none), and a list of
/// those that take part without a deque (more callers and spares at once than the pool has
/// lent deques).
#[derive(Debug)]
pub(crate) struct Holders {
    tids: Box<[AtomicU32]>,
    without_deque: Mutex<Vec<u32>>,
}

impl Holders {
    /// A table for `slots` deque slots, all empty.
    pub(crate) fn new(slots: usize) -> Holders {
        Holders {
            tids: (0..slots).map(|_| AtomicU32::new(0)).collect(),
            without_deque: Mutex::new(Vec::new()),
        }
    }

    /// Records the calling thread as a participant without a deque (while it takes part).
    /// A plain `std` lock, outside the loom models: only `another_computes` reads the list,
    /// and it never answers under loom.
    pub(crate) fn record_without_deque(&self) {
        if cfg!(not(loom)) {
            list(&self.without_deque).push(current_tid());
        }
    }

    /// The calling thread, a participant without a deque, no longer takes part.
    pub(crate) fn forget_without_deque(&self) {
        if cfg!(loom) {
            return;
        }
        let me = current_tid();
        let mut list = list(&self.without_deque);
        if let Some(at) = list.iter().position(|&t| t == me) {
            list.swap_remove(at);
        }
    }

    /// Records the calling thread as the owner of deque `slot` (a worker at its start, a
    /// borrower of a lent deque when it takes it).
    pub(crate) fn record(&self, slot: usize) {
        // Relaxed: a reader only needs some recent value; a stale one errs as described at
        // `another_computes`.
        self.tids[slot].store(current_tid(), Ordering::Relaxed);
    }

    /// Forgets the owner of deque `slot` (a lent deque given back).
    pub(crate) fn clear(&self, slot: usize) {
        self.tids[slot].store(0, Ordering::Relaxed);
    }

    /// The thread ids of the first `n` slots (the workers'), 0 for a worker not started yet.
    pub(crate) fn first(&self, n: usize) -> Vec<u32> {
        self.tids[..n]
            .iter()
            .map(|t| t.load(Ordering::Relaxed))
            .collect()
    }

    /// True unless the kernel says that no recorded thread other than the caller is runnable:
    /// true if any of them is in state `R` (running, or waiting for a CPU), and true when the
    /// answer is unknown (no `/proc`, or under loom or Miri), so that an unknown answer never
    /// lets a thread exceed the limit. A thread id that no longer names a thread of this
    /// process (a borrower gone since) is skipped; one reused by a new thread of this process
    /// is read as that thread, which at worst delays a take-over by one look.
    pub(crate) fn another_computes(&self) -> bool {
        #[cfg(all(target_os = "linux", not(loom), not(miri)))]
        {
            let me = current_tid();
            let mut seen = false;
            let without_deque = list(&self.without_deque).clone();
            let recorded = self.tids.iter().map(|t| t.load(Ordering::Relaxed));
            for tid in recorded.chain(without_deque) {
                if tid == 0 || tid == me {
                    continue;
                }
                match thread_state(tid) {
                    Some(b'R') => return true,
                    Some(_) => seen = true,
                    None => {}
                }
            }
            // Nobody could be read: no `/proc` (or every holder is gone): unknown.
            !seen
        }
        #[cfg(not(all(target_os = "linux", not(loom), not(miri))))]
        true
    }
}

/// The list behind `lock`, also after a panic while it was held (it holds plain ids).
fn list(m: &Mutex<Vec<u32>>) -> std::sync::MutexGuard<'_, Vec<u32>> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The calling thread's kernel thread id (0 where there is none to read), read once per thread.
pub(crate) fn current_tid() -> u32 {
    #[cfg(all(target_os = "linux", not(loom), not(miri)))]
    {
        std::thread_local! {
            static TID: u32 = {
                // SAFETY: gettid has no preconditions and cannot fail.
                let tid = unsafe { libc::gettid() };
                u32::try_from(tid).unwrap_or(0)
            };
        }
        TID.with(|t| *t)
    }
    #[cfg(not(all(target_os = "linux", not(loom), not(miri))))]
    0
}

/// The scheduler state of thread `tid` of this process (`R`, `S`, `D`, ...), if it exists and
/// `/proc` is there. One open, read and close: about 10-20 µs here.
#[cfg(all(target_os = "linux", not(loom), not(miri)))]
fn thread_state(tid: u32) -> Option<u8> {
    use std::io::Read;
    let mut buf = [0u8; 512];
    let mut file = std::fs::File::open(format!("/proc/self/task/{tid}/stat")).ok()?;
    let n = file.read(&mut buf).ok()?;
    parse_state(&buf[..n])
}

/// The state field of a `stat` line: the first byte after `") "` (the command name may itself
/// hold parentheses and spaces, so the last `')'` ends it).
#[cfg_attr(not(all(target_os = "linux", not(loom), not(miri))), allow(dead_code))]
fn parse_state(line: &[u8]) -> Option<u8> {
    let close = line.iter().rposition(|&b| b == b')')?;
    line.get(close + 2).copied()
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn the_state_follows_the_last_parenthesis_of_the_name() {
        assert_eq!(parse_state(b"42 (a) b) S 1 2 3"), Some(b'S'));
        assert_eq!(parse_state(b"7 (throttle-0) R 1"), Some(b'R'));
        assert_eq!(parse_state(b"7 (cut"), None);
        assert_eq!(parse_state(b"7 (x)"), None);
    }

    /// A thread blocked on a lock reads as not computing and a spinning one as computing (also
    /// when it takes part without a deque); the caller itself is never counted.
    #[test]
    #[cfg_attr(miri, ignore = "reads /proc")]
    fn a_blocked_holder_reads_as_idle_and_a_spinning_one_as_computing() {
        use std::sync::atomic::AtomicBool;
        use std::sync::{Arc, Barrier, Mutex};
        let holders = Arc::new(Holders::new(2));
        holders.record(0);
        assert!(
            holders.another_computes(),
            "only the caller is recorded: unknown, so true"
        );
        let lock = Arc::new(Mutex::new(()));
        let held = lock.lock().unwrap();
        let ready = Arc::new(Barrier::new(2));
        let blocked = {
            let (holders, lock, ready) = (holders.clone(), lock.clone(), ready.clone());
            std::thread::spawn(move || {
                holders.record(1);
                ready.wait();
                drop(lock.lock().unwrap());
            })
        };
        ready.wait();
        // The other thread blocks on the lock within moments; look until it does (a hang
        // guard of a minute, not a timing target).
        let t = std::time::Instant::now();
        while holders.another_computes() {
            assert!(
                t.elapsed() < std::time::Duration::from_secs(60),
                "a thread blocked on a lock still reads as runnable"
            );
            std::thread::yield_now();
        }
        // The blocked thread stays blocked (so a look has seen a thread, and an answer that
        // skipped the next one would be false) while another spins.
        let stop = Arc::new(AtomicBool::new(false));
        let spinning = {
            let (holders, stop, ready) = (holders.clone(), stop.clone(), ready.clone());
            std::thread::spawn(move || {
                // As a participant beyond the lent deques: recorded in the list.
                holders.record_without_deque();
                ready.wait();
                while !stop.load(Ordering::Relaxed) {
                    std::hint::spin_loop();
                }
                holders.forget_without_deque();
            })
        };
        ready.wait();
        // A spinning thread is `R` whether it runs or waits for a CPU.
        assert!(holders.another_computes());
        stop.store(true, Ordering::Relaxed);
        spinning.join().unwrap();
        drop(held);
        blocked.join().unwrap();
        assert!(list(&holders.without_deque).is_empty());
    }
}
