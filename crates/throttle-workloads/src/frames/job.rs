//! A frame's loop body shared with helper threads for the length of one
//! `for_each` call.

use std::any::Any;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// What a panicking share leaves behind, to be resumed on the caller.
pub(crate) type Panic = Box<dyn Any + Send + 'static>;

/// The body of one `for_each` call (`f` over `0..n`), with its lifetime
/// erased so persistent helper threads can hold it.
#[derive(Clone, Copy)]
pub(crate) struct FrameJob {
    f: &'static (dyn Fn(usize) + Sync),
    n: usize,
}

impl FrameJob {
    /// Wraps `f` over `0..n`.
    ///
    /// # Safety
    ///
    /// The caller must not return (or unwind) from the `for_each` that owns
    /// `f` before every copy of the returned job has been dropped or will
    /// never be used again: the job holds `f` as `'static` although it only
    /// lives as long as that call.
    pub(crate) unsafe fn new(f: &(dyn Fn(usize) + Sync), n: usize) -> FrameJob {
        // SAFETY: only the lifetime changes (same fat-pointer layout); the
        // caller promises that no use outlives the real borrow.
        let f = unsafe {
            std::mem::transmute::<&(dyn Fn(usize) + Sync), &'static (dyn Fn(usize) + Sync)>(f)
        };
        FrameJob { f, n }
    }

    /// The number of indices of the loop.
    pub(crate) fn len(&self) -> usize {
        self.n
    }

    /// Runs share `share` of `shares` equal contiguous shares of `0..n`,
    /// catching a panic so that the caller can wait for the other threads
    /// before resuming it.
    pub(crate) fn run_share(&self, share: usize, shares: usize) -> Result<(), Panic> {
        run_share(self.f, self.n, share, shares)
    }

    /// Runs `f` for `start..end`, catching a panic.
    pub(crate) fn run_range(&self, start: usize, end: usize) -> Result<(), Panic> {
        run_range(self.f, start, end)
    }
}

/// Runs share `share` of `shares` equal contiguous shares of `f` over `0..n`,
/// catching a panic.
pub(crate) fn run_share(
    f: &(dyn Fn(usize) + Sync),
    n: usize,
    share: usize,
    shares: usize,
) -> Result<(), Panic> {
    run_range(f, share * n / shares, (share + 1) * n / shares)
}

/// Runs `f` for `start..end`, catching a panic.
pub(crate) fn run_range(f: &(dyn Fn(usize) + Sync), start: usize, end: usize) -> Result<(), Panic> {
    catch_unwind(AssertUnwindSafe(|| (start..end).for_each(f)))
}

/// Keeps the first of several panics.
pub(crate) fn keep_first(slot: &mut Option<Panic>, result: Result<(), Panic>) {
    if let Err(payload) = result {
        slot.get_or_insert(payload);
    }
}

/// Starts helpers `1..threads` (the caller is share 0), each running `body(&shared, share,
/// threads)` on a thread named `{name}-{share}`. Handles go into `helpers` as they start, so that
/// if a spawn fails the caller's pool (already owning `helpers`) stops the ones started.
pub(crate) fn spawn_helpers<S: Send + Sync + 'static>(
    helpers: &mut Vec<std::thread::JoinHandle<()>>,
    name: &str,
    threads: usize,
    shared: &std::sync::Arc<S>,
    body: fn(&S, usize, usize),
) -> Result<(), crate::Error> {
    for share in 1..threads {
        let shared = std::sync::Arc::clone(shared);
        let handle = std::thread::Builder::new()
            .name(format!("{name}-{share}"))
            .spawn(move || body(&shared, share, threads))
            .map_err(crate::Error::spawn)?;
        helpers.push(handle);
    }
    Ok(())
}
