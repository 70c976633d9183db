//! The iterator layer's one door into the scheduler: the few things it needs beyond the public
//! `join`, kept in one place so a change of the scheduler's internals touches one file.
//!
//! - [`poll_hungry`]: a task boundary inside a long leaf. It honours a lowered limit (the thread
//!   gives up its slot there, as at any fork) and says whether a thread is hungry for work that
//!   nobody has queued, which is when a leaf should split what it has left (`range.rs` does the
//!   same for `for_range`).
//! - [`fork`]: a `join` on the current participant without another thread-local lookup, for
//!   splits made because a thread is hungry.
//! - [`in_pool`]: runs a computation as a participant of the current pool, entering the global
//!   pool from outside any pool, so that even an iterator too short to split runs under a
//!   pool's limit.
//! - [`remembered`]: [`in_pool`] for a data-parallel call (an iterator's consumer, a sort) that
//!   consults its call site's memory in auto mode ("if any at all", `src/callsite.rs`) and may
//!   run on the calling thread alone instead.
//! - [`at_site`] / [`take_site`]: a consumer method (`sum`, `collect`, ...) notes the user's
//!   line that called it for the run it starts; the run's outermost bridge takes it. The
//!   consumer travels down through adapters (and third-party `drive_unindexed`s) that cannot
//!   carry `#[track_caller]`, so the site goes beside it, in a thread-local of the calling
//!   thread (the bridge is reached on that thread before the run enters a pool).

use crate::callsite::Way;
use crate::join::join_in;
use crate::worker::Participant;
use std::cell::Cell;
use std::panic::Location;

thread_local! {
    /// The call site of the consumer method whose run has not yet reached its bridge.
    static SITE: Cell<Option<&'static Location<'static>>> = const { Cell::new(None) };
}

/// Runs `drive` (a consumer method's body, which drives the iterator into its consumer) with
/// `site` noted as its call site, for [`take_site`]. The note is cleared afterwards, also if
/// `drive` never reached a bridge.
pub(crate) fn at_site<R>(site: &'static Location<'static>, drive: impl FnOnce() -> R) -> R {
    /// Clears the note when the drive is over (also on unwinding).
    struct Clear(Option<&'static Location<'static>>);
    impl Drop for Clear {
        fn drop(&mut self) {
            SITE.with(|s| s.set(self.0));
        }
    }
    let _clear = Clear(SITE.with(|s| s.replace(Some(site))));
    drive()
}

/// [`at_site`] with the caller's location (`#[track_caller]` all the way from the user's line
/// that called the consumer method).
#[track_caller]
pub(crate) fn drive_here<R>(drive: impl FnOnce() -> R) -> R {
    at_site(Location::caller(), drive)
}

/// The call site noted by [`at_site`] on this thread, taken (a nested run started later from
/// inside the run finds none).
pub(crate) fn take_site() -> Option<&'static Location<'static>> {
    SITE.with(|s| s.take())
}

/// Honours a lowered limit, then says whether some thread is hungry while no work is queued.
/// One relaxed load when nothing is going on; `false` outside any pool.
#[inline]
pub(crate) fn poll_hungry() -> bool {
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
pub(crate) fn count_items(n: usize) {
    Participant::with_current(|p| {
        if let Some(p) = p {
            p.count_items(n);
        }
    });
}

/// Runs `a` here and offers `b` to the pool's hungry threads; returns both results.
pub(crate) fn fork<A, B, RA, RB>(a: A, b: B) -> (RA, RB)
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
pub(crate) fn in_any_pool() -> bool {
    Participant::with_current(|p| p.is_some())
}

/// Runs `op` as a participant of the current pool: here if the thread already takes part in a
/// pool, else through the global pool's `install`.
pub(crate) fn in_pool<R: Send>(op: impl FnOnce() -> R + Send) -> R {
    if in_any_pool() {
        op()
    } else {
        crate::global::with_default(|pool| pool.install(op))
    }
}

/// "If any at all" (auto mode) for the iterator layer: a data-parallel call of `len` units (items,
/// or the producer's units), made at `site`, runs `run(Way::Serial)` on the calling thread or
/// `run(Way::Parallel)` in the pool, the way the site's memory says is cheaper, and the cost
/// per unit is recorded. That only from outside any pool while the global pool is in auto mode,
/// as the free `for_range`; otherwise (inside a pool's task or `install`, a fixed-mode global
/// pool, or a site inside this module: see [`user_site`]) it is `in_pool(|| run(Parallel))`.
///
/// `run(Way::Serial)` must compute what `run(Way::Parallel)` does, sequentially.
pub(crate) fn remembered<R: Send>(
    site: Option<&'static Location<'static>>,
    len: usize,
    run: impl FnOnce(Way) -> R + Send,
) -> R {
    if in_any_pool() {
        return run(Way::Parallel);
    }
    crate::global::with_default(|pool| match site {
        Some(site) if pool.remembers_call_sites() && user_site(site) => {
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

/// Whether `site` is a user's line rather than this module's: a path that does not carry
/// `#[track_caller]` all the way from the public method would otherwise lump every call through
/// it into one site; such calls are not remembered (they run in the pool, as without memory).
fn user_site(site: &Location<'_>) -> bool {
    let here = file!();
    let dir = here.strip_suffix("runtime.rs").unwrap_or(here);
    !site.file().starts_with(dir)
}
