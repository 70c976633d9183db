//! Building the peers so that `threads` counts the calling thread, as
//! throttle's own count does.

use std::num::NonZeroUsize;

use anyhow::{Context, Result};

/// A rayon pool of `threads` workers. Work enters through `install`, which
/// blocks the caller, so `threads` threads run work.
pub fn rayon_pool(threads: usize) -> Result<rayon::ThreadPool> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .with_context(|| format!("building a rayon pool of {threads} threads"))
}

/// A chili pool for `threads` threads: chili starts `thread_count − 1`
/// workers and the thread that calls `scope().join(..)` is the last one.
pub fn chili_pool(threads: usize) -> Result<chili::ThreadPool> {
    let count = NonZeroUsize::new(threads).context("a chili pool needs at least 1 thread")?;
    Ok(chili::ThreadPool::with_config(chili::Config {
        thread_count: Some(count),
        ..chili::Config::default()
    }))
}

/// A throttle pool of `threads` threads (the caller of `install` takes part).
pub fn throttle_pool(threads: usize) -> Result<throttle::Pool> {
    throttle::Pool::new(threads)
        .with_context(|| format!("building a throttle pool of {threads} threads"))
}
