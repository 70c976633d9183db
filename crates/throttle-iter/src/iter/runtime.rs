//! The iterator layer's one door into the scheduler: the core's `seam` (a task boundary inside
//! a leaf, a fork for a hungry thread, running in the current pool, the call-site memory of
//! auto mode), and the call sites of consumer methods.
//!
//! - [`remembered`]: `seam::remembered` for a data-parallel call (an iterator's consumer, a
//!   sort) that consults its call site's memory in auto mode ("if any at all") and may run on
//!   the calling thread alone instead; a site inside this module is not remembered.
//! - [`at_site`] / [`take_site`]: a consumer method (`sum`, `collect`, ...) notes the user's
//!   line that called it for the run it starts; the run's outermost bridge takes it. The
//!   consumer travels down through adapters (and third-party `drive_unindexed`s) that cannot
//!   carry `#[track_caller]`, so the site goes beside it, in a thread-local of the calling
//!   thread (the bridge is reached on that thread before the run enters a pool).

use std::cell::Cell;
use std::panic::Location;
use throttle_core::seam;
pub(crate) use throttle_core::seam::{count_items, fork, in_pool, poll_hungry, Way};

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

/// "If any at all" (auto mode) for the iterator layer: [`seam::remembered`] for a call made at
/// `site`, except that a site inside this module (see [`user_site`]) is not remembered.
///
/// `run(Way::Serial)` must compute what `run(Way::Parallel)` does, sequentially.
pub(crate) fn remembered<R: Send>(
    site: Option<&'static Location<'static>>,
    len: usize,
    run: impl FnOnce(Way) -> R + Send,
) -> R {
    seam::remembered(site.filter(|s| user_site(s)), len, run)
}

/// Whether `site` is a user's line rather than this module's: a path that does not carry
/// `#[track_caller]` all the way from the public method would otherwise lump every call through
/// it into one site; such calls are not remembered (they run in the pool, as without memory).
fn user_site(site: &Location<'_>) -> bool {
    let here = file!();
    let dir = here.strip_suffix("runtime.rs").unwrap_or(here);
    !site.file().starts_with(dir)
}
