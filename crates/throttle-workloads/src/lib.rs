//! The seeds' workloads and a few deliberately simple baseline schedulers.
//!
//! Both the `throttle` command line and the `throttle-bench` benchmark binary
//! run the same work, so it lives here once:
//!
//! - [`seed_sum`]: seed 000's 64 tasks that each sum a slice of `1..=64·chunk`,
//!   gated by a [`throttle::Throttle`] or run on a [`throttle::Pool`] with a
//!   concurrency limit;
//! - [`frames`]: the game loop of seeds 002 and 003 (meshes transformed every
//!   frame) and the schedulers those seeds compare;
//! - [`tree`], [`fib`]: recursive fork-join shapes;
//! - [`kernels`]: small compute-bound and memory-bound per-element maps.
//!
//! # Example
//!
//! Run seed 000's experiment with at most two tasks at a time, and check the
//! answer against the closed form:
//!
//! ```
//! use throttle_workloads::seed_sum;
//!
//! let (tasks, chunk, repeat) = (64, 1_000, 1);
//! let total = seed_sum::run_threads(tasks, chunk, repeat, Some(2));
//! assert_eq!(total, seed_sum::expected_total(tasks as u64, chunk));
//! ```

pub mod adaptive;
mod error;
pub mod fib;
pub mod frames;
pub mod kernels;
pub mod seed_sum;
pub mod tree;

pub use error::Error;
