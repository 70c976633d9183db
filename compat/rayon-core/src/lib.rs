//! rayon-core's public API, re-exported from throttle's runtime ([`throttle_core`], which the
//! `throttle` crate re-exports) under rayon-core's paths. Nothing is implemented here: every
//! item is throttle's own (`ThreadPool` is `throttle::Pool`), so a dependency tree patched onto
//! this crate runs on throttle's one pool, with its live limit, jobserver budget, stats and
//! trace reachable through `throttle::`.
//!
//! ```toml
//! [patch.crates-io]
//! rayon-core = { path = "…/compat/rayon-core" }
//! rayon = { path = "…/compat/rayon" }
//! ```
//!
//! See `docs/rayon.md` in the repository for what differs from rayon-core.

#![forbid(unsafe_code)]

#[allow(deprecated)]
pub use throttle_core::{initialize, Configuration};

pub use throttle_core::{
    broadcast, current_num_threads, current_thread_has_pending_tasks, current_thread_index,
    in_place_scope, in_place_scope_fifo, join, join_context, max_num_threads, scope, scope_fifo,
    spawn, spawn_broadcast, spawn_fifo, yield_local, yield_now, BroadcastContext, FnContext, Scope,
    ScopeFifo, ThreadBuilder, ThreadPool, ThreadPoolBuildError, ThreadPoolBuilder, Yield,
};
