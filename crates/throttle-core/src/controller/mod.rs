//! Auto mode: the pool chooses its own concurrency.
//!
//! The controller is the pure state machine of the `throttle-controller` crate, re-exported
//! here ([`Controller`], [`Sample`], [`Config`], [`sim`], ...): measurements of one interval in,
//! the concurrency `k` for the next one out, with a reason. This module adds the pool's side
//! (`auto.rs`): the sampler thread that reads the pool's counters every interval, feeds the
//! controller and applies its `k` as the pool's limit, and the log of its decisions. Design,
//! reasons and limits: `crates/throttle-controller/src/README.md`.
//!
//! # Examples
//! ```
//! use throttle::controller::{Config, Controller, Sample};
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

pub use throttle_controller::*;

pub(crate) mod auto;

pub use auto::DEFAULT_INTERVAL;
