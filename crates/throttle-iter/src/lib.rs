//! rayon's parallel iterators and parallel sorts on the throttle runtime: the traits of rayon
//! 1.12 (plumbing included), their adapters and consumers, the sources (slices, `Vec`s, ranges,
//! strings, collections), and the `par_sort` family.
//!
//! Programs depend on the `throttle` crate, which re-exports this crate's modules at the same
//! paths as rayon's (`throttle::iter`, `throttle::slice`, `throttle::prelude`, ...); its
//! documentation is the one to read. This crate sits on `throttle-core` as rayon sits on
//! rayon-core, and reaches the scheduler only through the core's `seam` (`iter/runtime.rs`).
//!
//! Where each concept lives: `src/README.md`.

#![warn(missing_docs)]

pub mod iter;
pub mod prelude;

pub use iter::option::result;
pub use iter::{array, collections, option, range, range_inclusive, slice, str, string, vec};
