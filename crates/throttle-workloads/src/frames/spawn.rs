//! Threads created for every frame (seed 003's `ParameterizedThreadStart`).

use super::job::{keep_first, run_share};
use super::FrameScheduler;

/// Creates `threads − 1` scoped threads per frame; each thread, the caller
/// included, runs one equal contiguous share of the loop.
#[derive(Debug, Clone, Copy)]
pub struct ThreadPerFrame {
    threads: usize,
}

impl ThreadPerFrame {
    /// A scheduler that uses `threads` threads per frame, the caller included
    /// (0 is treated as 1).
    ///
    /// # Examples
    ///
    /// ```
    /// use throttle_workloads::frames::{FrameScheduler, ThreadPerFrame};
    ///
    /// let mut sched = ThreadPerFrame::new(2);
    /// let sum = std::sync::atomic::AtomicUsize::new(0);
    /// sched.for_each(10, &|i| { sum.fetch_add(i, std::sync::atomic::Ordering::Relaxed); });
    /// assert_eq!(sum.into_inner(), 45);
    /// ```
    pub fn new(threads: usize) -> ThreadPerFrame {
        ThreadPerFrame {
            threads: threads.max(1),
        }
    }
}

impl FrameScheduler for ThreadPerFrame {
    fn name(&self) -> &'static str {
        "std_spawn"
    }

    fn threads(&self) -> usize {
        self.threads
    }

    fn for_each(&mut self, n: usize, f: &(dyn Fn(usize) + Sync)) {
        let shares = self.threads;
        let mut panic = None;
        std::thread::scope(|s| {
            let helpers: Vec<_> = (1..shares)
                .map(|share| {
                    let spawned = std::thread::Builder::new()
                        .spawn_scoped(s, move || run_share(f, n, share, shares));
                    // If the OS refuses a thread, the caller runs that share.
                    spawned.map_err(|_| share)
                })
                .collect();
            keep_first(&mut panic, run_share(f, n, 0, shares));
            for helper in helpers {
                let result = match helper {
                    Ok(handle) => handle.join().unwrap_or_else(Err),
                    Err(share) => run_share(f, n, share, shares),
                };
                keep_first(&mut panic, result);
            }
        });
        if let Some(payload) = panic {
            std::panic::resume_unwind(payload);
        }
    }
}
