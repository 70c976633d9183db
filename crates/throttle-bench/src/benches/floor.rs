//! The *publish-every-fork floor*: the least a fork can cost on one thread if its second half
//! must stay stealable while the first half runs.
//!
//! No fork is ever hidden: `join(|| spin_until(flag), || set(flag))`
//! must finish at any nesting depth, as it does in rayon. So every fork's second half must be
//! where another thread can claim it, and its owner must find out, before running it itself,
//! whether someone did. The cheapest known way is the owner's end of a Chase–Lev deque with the
//! fence moved to the thieves (an asymmetric fence, as throttle's `deque.rs`): publish the job
//! (two slot words and `bottom`), run the first half, then withdraw (`bottom` back, a compiler
//! fence, one load of `top`). This module is exactly that and nothing else: no thieves, no
//! wake-ups, no limit, no counters, no panic handling. It runs on one thread, where nobody
//! ever steals, so it is a lower bound for any scheduler that keeps every fork stealable.
//!
//! chili does not pay it: 63 of its 64 joins run as plain calls once three of its jobs are
//! queued, and a queued job is shared only at a heartbeat, so chili hides work (and would hang
//! on the spin-wait above). The fib and tree_sum benches print the floor beside chili and
//! throttle at one thread, so the part of throttle's gap to chili that comes from keeping forks
//! stealable is measured rather than argued.

use std::cell::Cell;
use std::sync::atomic::{compiler_fence, AtomicIsize, AtomicPtr, Ordering};

/// Slots in the ring (as throttle's deque).
const CAPACITY: usize = 1024;

/// A fork's second half on the forking thread's stack.
struct Job<B> {
    func: Cell<Option<B>>,
}

/// One thread's end of a deque that nobody steals from (see the module docs).
pub(super) struct Floor {
    bottom: AtomicIsize,
    top: AtomicIsize,
    slots: Box<[[AtomicPtr<()>; 2]; CAPACITY]>,
}

impl Floor {
    pub(super) fn new() -> Floor {
        Floor {
            bottom: AtomicIsize::new(0),
            top: AtomicIsize::new(0),
            slots: Box::new(std::array::from_fn(|_| {
                [
                    AtomicPtr::new(std::ptr::null_mut()),
                    AtomicPtr::new(std::ptr::null_mut()),
                ]
            })),
        }
    }

    /// Publishes `b`, runs `a`, withdraws `b` and runs it. With no thief, the withdrawal always
    /// succeeds; the code still does every access a real owner does to find that out.
    #[inline(always)]
    pub(super) fn join<A, B, RA, RB>(&self, a: A, b: B) -> (RA, RB)
    where
        A: FnOnce(&Floor) -> RA,
        B: FnOnce(&Floor) -> RB,
    {
        let job = Job {
            func: Cell::new(Some(b)),
        };
        let at = self.bottom.load(Ordering::Relaxed);
        let slot = &self.slots[(at as usize) % CAPACITY];
        // What a thief would need to run the job: its address and an entry point (a stand-in
        // pointer here; no thief exists).
        slot[0].store(
            std::ptr::from_ref(&job).cast_mut().cast(),
            Ordering::Relaxed,
        );
        slot[1].store(
            std::ptr::from_ref(self).cast_mut().cast(),
            Ordering::Relaxed,
        );
        self.bottom.store(at + 1, Ordering::Release);
        let ra = a(self);
        // Withdraw: claim the slot, then look whether a thief's `top` passed it.
        assert_eq!(
            self.bottom.load(Ordering::Relaxed),
            at + 1,
            "forks are withdrawn newest first"
        );
        self.bottom.store(at, Ordering::Relaxed);
        compiler_fence(Ordering::SeqCst);
        let top = self.top.load(Ordering::Relaxed);
        let ours = top < at
            || (top == at
                && self
                    .top
                    .compare_exchange(top, top + 1, Ordering::SeqCst, Ordering::Relaxed)
                    .is_ok());
        if top == at {
            // The last item: `top` moved past it, `bottom` follows (as Chase–Lev's pop).
            self.bottom.store(at + 1, Ordering::Relaxed);
        }
        assert!(ours, "nobody steals from the floor's deque");
        let b = job.func.take().expect("a fork's second half runs once");
        (ra, b(self))
    }
}

/// `fib(n)` with a floor fork at every call.
pub(super) fn fib_floor(f: &Floor, n: u32) -> u64 {
    if n < 2 {
        return u64::from(n);
    }
    let (a, b) = f.join(|f| fib_floor(f, n - 1), |f| fib_floor(f, n - 2));
    a + b
}

/// The tree's sum with a floor fork at every node.
pub(super) fn sum_floor(f: &Floor, node: &throttle_workloads::tree::Node) -> u64 {
    let (l, r) = f.join(
        |f| node.left.as_deref().map_or(0, |n| sum_floor(f, n)),
        |f| node.right.as_deref().map_or(0, |n| sum_floor(f, n)),
    );
    node.value + l + r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_floor_computes_what_serial_code_does() {
        let f = Floor::new();
        assert_eq!(fib_floor(&f, 20), throttle_workloads::fib::fib_serial(20));
        // Every fork was withdrawn: the deque is empty again (top caught up at depth 0 only).
        assert_eq!(
            f.bottom.load(Ordering::Relaxed),
            f.top.load(Ordering::Relaxed)
        );
    }
}
