//! The throttle runtime as a frame scheduler.

use throttle::Pool;

use super::FrameScheduler;
use crate::Error;

/// Runs each frame with [`Pool::for_range`] on a pool of its own.
#[derive(Debug)]
pub struct ThrottlePool {
    pool: Pool,
}

impl ThrottlePool {
    /// A pool of `threads` threads (the caller counts as one of them, since
    /// `for_range` lets the waiting caller help).
    ///
    /// # Errors
    ///
    /// If the runtime cannot build the pool (for example `threads == 0`).
    ///
    /// # Examples
    ///
    /// ```
    /// use throttle_workloads::frames::{FrameScheduler, ThrottlePool};
    ///
    /// let pool = ThrottlePool::new(2)?;
    /// assert_eq!(pool.threads(), 2);
    /// # Ok::<(), throttle_workloads::Error>(())
    /// ```
    pub fn new(threads: usize) -> Result<ThrottlePool, Error> {
        if threads == 0 {
            return Err(Error::zero_threads());
        }
        Ok(ThrottlePool {
            pool: Pool::new(threads)?,
        })
    }

    /// The pool, for its statistics.
    pub fn pool(&self) -> &Pool {
        &self.pool
    }
}

impl FrameScheduler for ThrottlePool {
    fn name(&self) -> &'static str {
        "throttle"
    }

    fn threads(&self) -> usize {
        self.pool.threads()
    }

    fn for_each(&mut self, n: usize, f: &(dyn Fn(usize) + Sync)) {
        self.pool.for_range(0..n, f);
    }

    fn start_trace(&mut self) -> bool {
        self.pool.start_trace();
        true
    }

    fn stop_trace(&mut self) -> Option<throttle::trace::Trace> {
        Some(self.pool.stop_trace())
    }
}
