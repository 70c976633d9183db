//! rayon's public API, re-exported from the [`throttle`] runtime under rayon's module paths.
//! Nothing is implemented here: every item is throttle's own, so a dependency tree patched onto
//! this crate (and `compat/rayon-core`) runs on throttle's one pool.
//!
//! ```toml
//! [patch.crates-io]
//! rayon = { path = "…/compat/rayon" }
//! rayon-core = { path = "…/compat/rayon-core" }
//! ```
//!
//! The modules below re-export throttle's own modules of the same names. throttle's parallel
//! iterator traits are rayon 1.12's, plumbing included (`rayon::iter::plumbing`'s `Producer`,
//! `Consumer`, `Folder`, `Reducer`, `UnindexedConsumer`, `UnindexedProducer`,
//! `ProducerCallback` and the `bridge` functions), so a crate that implements parallel
//! iterators for its own types against rayon compiles and runs here unchanged. See
//! `docs/rayon.md` in the repository.

#![forbid(unsafe_code)]

pub use throttle::{
    broadcast, current_num_threads, current_thread_index, in_place_scope, in_place_scope_fifo,
    join, join_context, max_num_threads, scope, scope_fifo, spawn, spawn_broadcast, spawn_fifo,
    yield_local, yield_now, BroadcastContext, FnContext, Scope, ScopeFifo, ThreadBuilder,
    ThreadPool, ThreadPoolBuildError, ThreadPoolBuilder, Yield,
};

/// rayon's `rayon::iter`: the parallel iterator traits, adapters and plumbing.
pub mod iter {
    pub use throttle::iter::*;
}

/// rayon's `rayon::prelude`: the traits a data-parallel program needs in scope.
pub mod prelude {
    pub use throttle::prelude::*;
}

pub use throttle::{array, collections, option, range, range_inclusive, result, slice, str};
pub use throttle::{string, vec};

/// rayon's `rayon::iter::Either`, re-exported at the crate root as rayon does.
pub use throttle::iter::Either;
