//! The serial baseline.

use super::FrameScheduler;

/// Runs every index on the calling thread, in order.
#[derive(Debug, Default, Clone, Copy)]
pub struct Serial;

impl Serial {
    /// The serial scheduler (one thread: the caller).
    ///
    /// # Examples
    ///
    /// ```
    /// use throttle_workloads::frames::{FrameScheduler, Serial};
    ///
    /// assert_eq!(Serial::new().threads(), 1);
    /// ```
    pub fn new() -> Serial {
        Serial
    }
}

impl FrameScheduler for Serial {
    fn name(&self) -> &'static str {
        "serial"
    }

    fn threads(&self) -> usize {
        1
    }

    fn for_each(&mut self, n: usize, f: &(dyn Fn(usize) + Sync)) {
        (0..n).for_each(f);
    }
}
