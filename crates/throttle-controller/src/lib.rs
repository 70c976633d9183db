//! The adaptive-concurrency controller: a pure state machine that takes the measurements of one
//! interval and returns the concurrency `k` for the next one, with a reason.
//!
//! It owns no threads and reads no clocks, so it is tested by feeding it numbers (see
//! [`sim`], a simulated machine of 8 to 256 cores). The pool drives it from a background thread
//! (`throttle`'s `controller/auto.rs`) when `Pool::set_concurrency_auto` is on.
//! The design and the reasons for it are in `src/README.md`; in short:
//!
//! 1. **Scan**: start at the highest `k`, halve it each interval until throughput has clearly
//!    fallen (below [`Config::scan_stop`] of the best seen, after at least three points) or
//!    `k = 1`.
//! 2. **Does `k` matter?** (`flat.rs`): when the points cannot tell the `k`s apart within the
//!    measured noise, measure the smallest and the best `k` again (3 samples each); if they
//!    still cannot, the work does not scale and the smallest measured `k` is the choice.
//! 3. **Fit**: fit `k / X(k) = a + b·k + c·k²` (the Universal Scalability Law, which is exactly
//!    this quadratic) to all points by weighted least squares. Take the *smallest* `k` whose
//!    predicted throughput is within [`Config::slack`] of the predicted peak: the same work with
//!    fewer threads.
//! 4. **Verify**: measure that `k` once; if it falls far short of the best measured point, the
//!    model was wrong and the best measured point wins.
//! 5. **Settled**: stay still. Only a sustained shift of the throughput (or of the run-queue
//!    wait) away from what was measured when it settled starts a new scan. No probing while
//!    settled: a settled pool pays nothing for the controller. A rescan that settles on the
//!    `k` it left (the shift was the host's noise) buys quiet: for 1 s, then twice as long
//!    after each further such rescan, up to 32 s, a shift must pass twice the threshold to
//!    start a rescan (a burst like the last one passes, a lasting change does not); finding
//!    another `k` ends it. Load shifts start none during the quiet. A sample shorter than
//!    the pool's interval moves the throughput CUSUM by its length, unless it shows a clear
//!    change ([`Config::cusum_period`]).
//!
//! # Examples
//! ```
//! use throttle_controller::{Config, Controller, Sample};
//! use std::time::Duration;
//! // A machine whose throughput peaks at k = 4 of 16.
//! let x = |k: usize| { let k = k as f64; 1000.0 * k / (1.0 + 0.05 * (k - 1.0) + 0.05 * k * (k - 1.0)) };
//! let mut c = Controller::new(Config::new(16));
//! let mut k = c.k();
//! for _ in 0..20 {
//!     k = c.step(&Sample::throughput(k, x(k), Duration::from_millis(100))).k;
//! }
//! assert!(x(k) >= 0.95 * x(4));
//! ```
//!
//! # Modules
//!
//! | file | what |
//! |---|---|
//! | `sample.rs` | what one interval measured ([`Sample`]), the answer ([`Decision`], [`Reason`]), the log entry ([`ControllerEvent`]) |
//! | `config.rs` | the knobs ([`Config`]) |
//! | `machine.rs` | the state machine ([`Controller`]): scan, flat test, fit, verify, settled |
//! | `fit.rs` | the USL fit ([`Fit`]) |
//! | `judge.rs` | how points are compared against the measured noise |
//! | `flat.rs`, `load.rs`, `noise.rs` | does `k` matter; the run-queue wait's shift; the noise learned while settled |
//! | [`sim`] | simulated machines of 8 to 256 cores |

mod config;
mod fit;
mod flat;
mod judge;
mod load;
mod machine;
mod noise;
mod sample;
pub mod sim;

pub use config::Config;
pub use fit::Fit;
pub use machine::Controller;
pub use sample::{ControllerEvent, Decision, Reason, Sample};

#[cfg(test)]
mod tests;
