//! The door the parallel iterators (`throttle-iter`) use into the scheduler: the few things they
//! need beyond the public `join` and `install`, so that a change of the scheduler's internals
//! touches this file and no iterator. Hidden from the documentation: a program uses the
//! iterators, not this.
//!
//! - [`poll_hungry`]: a task boundary inside a long leaf. It honours a lowered limit (the thread
//!   gives up its slot there, as at any fork) and says whether a thread is hungry for work that
//!   nobody has queued, which is when a leaf should split what it has left (`for_range` does
//!   the same, `index_loops.rs`).
//! - [`fork`]: a `join` on the current participant without another thread-local lookup, for
//!   splits made because a thread is hungry.
//! - [`in_pool`]: runs a computation as a participant of the current pool, entering the global
//!   pool from outside any pool, so that even an iterator too short to split runs under a
//!   pool's limit.
//! - [`remembered`]: [`in_pool`] for a data-parallel call that consults its call site's memory
//!   in auto mode ("if any at all", `callsite.rs`) and may run on the calling thread alone.
//! - [`count_items`]: the items a leaf finished, for `Stats::items`.

pub use crate::callsite::Way;
pub use crate::inline_call::{inlined, inlined2};
use crate::join::join_in;
use crate::worker::Participant;
use std::panic::Location;

/// Honours a lowered limit, then says whether some thread is hungry while no work is queued.
/// One relaxed load when nothing is going on; `false` outside any pool.
#[inline]
pub fn poll_hungry() -> bool {
    Participant::with_current(|p| {
        let Some(p) = p else { return false };
        let registry = p.registry();
        if !registry.sleep.load().wants_attention() {
            return false;
        }
        // Pauses here while the pool is over its limit (its forks stay stealable meanwhile).
        p.poll_limit();
        let s = registry.sleep.load();
        // Hungry threads take the injector's work and this thread's own pending forks first:
        // split only when neither exists. Other threads' deques and spawn queues are not
        // scanned (a cost that grows with threads, paid on every block while a thread
        // searches): if they hold work, the hungry thread takes it, and one more split only
        // adds a stealable piece.
        s.wants_attention()
            && s.active() <= s.limit()
            && registry.injector.is_empty()
            && !p.has_pending_forks()
    })
}

/// Counts `n` items finished by the calling thread's participant, if any (`Stats::items`).
#[inline]
pub fn count_items(n: usize) {
    Participant::with_current(|p| {
        if let Some(p) = p {
            p.count_items(n);
        }
    });
}

/// Runs `a` here and offers `b` to the pool's hungry threads; returns both results.
pub fn fork<A, B, RA, RB>(a: A, b: B) -> (RA, RB)
where
    A: FnOnce() -> RA + Send,
    B: FnOnce() -> RB + Send,
    RA: Send,
    RB: Send,
{
    Participant::with_current(|p| match p {
        Some(p) => join_in(p, |_| a(), |_| b()),
        None => crate::join(a, b),
    })
}

/// Whether the calling thread takes part in a pool (a worker, or inside `install`).
pub fn in_any_pool() -> bool {
    Participant::with_current(|p| p.is_some())
}

/// Runs `op` as a participant of the current pool: here if the thread already takes part in a
/// pool, else through the global pool's `install`.
pub fn in_pool<R: Send>(op: impl FnOnce() -> R + Send) -> R {
    if in_any_pool() {
        op()
    } else {
        crate::global::with_default(|pool| pool.install(op))
    }
}

/// "If any at all" (auto mode) for a data-parallel call of `len` units made at `site`: runs
/// `run(Way::Serial)` on the calling thread or `run(Way::Parallel)` in the pool, the way the
/// site's memory says is cheaper, and records the cost per unit. That only from outside any
/// pool while the default pool remembers call sites (auto mode), as the free `for_range`;
/// otherwise (inside a pool's task or `install`, a fixed-mode pool, or no `site`) it is
/// `in_pool(|| run(Parallel))`.
///
/// `run(Way::Serial)` must compute what `run(Way::Parallel)` does, sequentially.
pub fn remembered<R: Send>(
    site: Option<&'static Location<'static>>,
    len: usize,
    run: impl FnOnce(Way) -> R + Send,
) -> R {
    if in_any_pool() {
        return run(Way::Parallel);
    }
    crate::global::with_default(|pool| match site {
        Some(site) if pool.remembers_call_sites() => {
            // On the calling thread alone, but still belonging to the pool (`serial_in`).
            // A serial, untimed call (the common one for a short loop) runs here, the rest
            // out of line (`Pool::remembered_at`).
            pool.remembered_at(site, len, |way| match way {
                Way::Serial => crate::pool::serial_in(pool, || run(Way::Serial)),
                Way::Parallel => pool.install(|| run(Way::Parallel)),
            })
        }
        _ => pool.install(|| run(Way::Parallel)),
    })
}
