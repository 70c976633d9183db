//! Parallel iterators: rayon's data-parallel API on throttle's pool.
//!
//! `use throttle::prelude::*;` brings the traits into scope; then slices, `Vec`s, arrays and
//! integer ranges get `par_iter()`, `par_iter_mut()`, `into_par_iter()`, `par_chunks(n)`,
//! `par_chunks_mut(n)`, `par_windows(n)` and the `par_sort` family, and the iterators get
//! rayon's adapters (`map`, `filter`, `enumerate`, `zip`, `fold`, ...) and consumers (`sum`,
//! `collect`, `reduce`, `find_first`, ...). The traits are rayon 1.12's, plumbing included, so
//! porting a rayon program means changing its `use` lines, and a type that implements rayon's
//! traits for itself (ndarray's arrays, say) works here too.
//!
//! Work runs on the current pool (inside [`Pool::install`](throttle_core::Pool::install) or a pool's
//! task) or else on the global pool, under that pool's live concurrency limit. Splitting is
//! adaptive (see [`plumbing`]);
//! [`IndexedParallelIterator::with_min_len`] keeps pieces from getting shorter than a given
//! length. Items are split in order and results combine in order, so
//! `collect` keeps the order and `find_first` finds the first. A panic in any closure reaches the
//! caller after the other pieces stopped, and items not consumed are dropped, none twice.
//!
//! Called from outside any pool while the global pool is in auto mode
//! ([`Pool::set_concurrency_auto`](throttle_core::Pool::set_concurrency_auto)), a consumer (`sum`,
//! `collect`, `for_each`, ...) remembers per call site what its runs cost, like
//! [`Pool::for_range`](throttle_core::Pool::for_range), and runs a job too short to pay for threads on
//! the calling thread alone, as one sequential piece (same result, same order). The `par_sort`
//! family does the same with the standard library's sort of the same kind. Inside a pool it is
//! plain pool work.
//!
//! # Examples
//! ```
//! use throttle::prelude::*;
//!
//! let pool = throttle::Pool::new(2).unwrap();
//! let text = "the quick brown fox jumps over the lazy dog the end";
//! let words: Vec<&str> = text.split(' ').collect();
//! let (the, longest) = pool.install(|| {
//!     let the = words.par_iter().filter(|w| **w == "the").count();
//!     let longest = words.par_iter().copied().max_by_key(|w| w.len());
//!     (the, longest)
//! });
//! assert_eq!((the, longest), (3, Some("jumps")));
//!
//! let mut grid = vec![0u32; 12];
//! grid.par_chunks_mut(4).enumerate().for_each(|(row, cells)| {
//!     for (col, c) in cells.iter_mut().enumerate() {
//!         *c = (row * 10 + col) as u32;
//!     }
//! });
//! assert_eq!(grid[5], 11);
//!
//! let mut v: Vec<u64> = (0..10_000).map(|i| (i * 7919) % 10_007).collect();
//! v.par_sort_unstable();
//! assert!(v.windows(2).all(|w| w[0] <= w[1]));
//! ```

#[macro_use]
pub(crate) mod adapt;
#[macro_use]
mod delegate;

mod array_impl;
mod blocks;
mod bridge;
mod chain;
mod chunks;
mod collect;
pub mod collections;
mod consumers;
mod drain;
mod either;
mod filter;
mod find;
mod flat_map;
mod fold;
mod indexed;
mod indexed_adapters;
mod interleave;
mod into;
mod map;
mod multizip;
pub mod option;
mod par_iter;
pub mod plumbing;
pub mod range;
pub mod range_inclusive;
pub(crate) mod runtime;
pub mod slice;
mod slice_ext;
mod sort;
mod sources;
mod stop;
pub mod str;
pub mod string;
mod try_ops;
mod try_reduce;
pub mod vec;
mod zip;

pub use ::either::Either;
pub use blocks::{ExponentialBlocks, UniformBlocks};
pub use bridge::{IterBridge, ParallelBridge};
pub use chain::Chain;
pub use chunks::{Chunks, FoldChunks, FoldChunksWith};
pub use collect::{FromParallelIterator, ParallelExtend};
pub use drain::{ParallelDrainFull, ParallelDrainRange};
pub use filter::{Filter, FilterMap, FlatMapIter, FlattenIter, Positions};
pub use flat_map::{FlatMap, Flatten};
pub use fold::{Fold, FoldWith, TryFold, TryFoldWith};
pub use indexed::IndexedParallelIterator;
pub use indexed_adapters::{Enumerate, MaxLen, MinLen, Rev, Skip, StepBy, Take};
pub use interleave::{Interleave, InterleaveShortest, Intersperse};
pub use into::{IntoParallelIterator, IntoParallelRefIterator, IntoParallelRefMutIterator};
pub use map::{Cloned, Copied, Inspect, Map, MapInit, MapWith, Update};
pub use multizip::MultiZip;
pub use par_iter::ParallelIterator;
#[allow(deprecated)]
pub use sources::repeatn;
pub use sources::{
    empty, once, repeat, repeat_n, split, walk_tree, walk_tree_postfix, walk_tree_prefix, Empty,
    Once, Repeat, RepeatN, Split, WalkTree, WalkTreePostfix, WalkTreePrefix,
};
pub use stop::{PanicFuse, SkipAny, SkipAnyWhile, TakeAny, TakeAnyWhile, WhileSome};
pub use try_ops::Try;
pub use zip::{Zip, ZipEq};

/// Arrays' parallel iterators (rayon's `rayon::array`).
pub mod array {
    pub use super::array_impl::IntoIter;
}
