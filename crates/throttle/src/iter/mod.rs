//! Parallel iterators: rayon's data-parallel API on throttle's pool.
//!
//! `use throttle::prelude::*;` brings the traits into scope; then slices, `Vec`s, arrays and
//! integer ranges get `par_iter()`, `par_iter_mut()`, `into_par_iter()`, `par_chunks(n)`,
//! `par_chunks_mut(n)`, `par_windows(n)` and the `par_sort` family, and the iterators get
//! rayon's adapters (`map`, `filter`, `enumerate`, `zip`, `fold`, ...) and consumers (`sum`,
//! `collect`, `reduce`, `find_first`, ...). Porting a rayon program means changing its `use`
//! lines.
//!
//! Work runs on the current pool (inside [`Pool::install`](crate::Pool::install) or a pool's
//! task) or else on the global pool, under that pool's live concurrency limit. Splitting is
//! adaptive (see [`plumbing`]); [`ParallelIterator::with_min_len`] keeps pieces from getting
//! shorter than a given length. Items are split in order and results combine in order, so
//! `collect` keeps the order and `find_first` finds the first. A panic in any closure reaches the
//! caller after the other pieces stopped, and items not consumed are dropped, none twice.
//!
//! Called from outside any pool while the global pool is in auto mode
//! ([`Pool::set_concurrency_auto`](crate::Pool::set_concurrency_auto)), a consumer (`sum`,
//! `collect`, `for_each`, ...) remembers per call site what its runs cost, like
//! [`Pool::for_range`](crate::Pool::for_range), and runs a job too short to pay for threads on
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

/// Implements `Clone` and `Debug` for an adapter whose closures sit in `Arc`s, without asking
/// the closures for either: a clone shares them, and `Debug` shows the other fields.
/// Usage: `clone_debug!(Name [cloned generics] [closure generics] { shown } { closures })`.
macro_rules! clone_debug {
    ($name:ident [$($c:ident),*] [$($u:ident),*] { $($shown:ident),* } { $($hidden:ident),* }) => {
        impl<$($c: Clone,)* $($u,)*> Clone for $name<$($c,)* $($u,)*> {
            fn clone(&self) -> Self {
                $name {
                    $($shown: self.$shown.clone(),)*
                    $($hidden: self.$hidden.clone(),)*
                }
            }
        }

        impl<$($c: std::fmt::Debug,)* $($u,)*> std::fmt::Debug for $name<$($c,)* $($u,)*> {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.debug_struct(stringify!($name))
                    $(.field(stringify!($shown), &self.$shown))*
                    .finish_non_exhaustive()
            }
        }
    };
}

#[macro_use]
mod delegate;

mod adapters;
mod blocks;
mod bridge;
mod chain;
mod claim;
mod collect;
pub mod collections;
mod consumers;
mod drain;
mod extend;
mod indexed;
mod indexed_adapters;
mod interleave;
mod into;
mod multizip;
pub mod option;
mod par_iter;
pub mod plumbing;
pub mod range;
pub mod range_inclusive;
mod runtime;
pub mod slice;
mod slice_ext;
mod sort;
mod sources;
mod stop;
pub mod str;
mod try_ops;
pub mod vec;
mod with;
mod write;

pub use adapters::{
    Cloned, Copied, Filter, FilterMap, FilterMapSeq, FilterSeq, FlatMap, FlatMapIter,
    FlatMapIterSeq, FlatMapSeq, Fold, Inspect, InspectSeq, Map, MapInit, MapInitSeq, MapSeq,
    MinLen,
};
pub use blocks::{Blocks, ExponentialBlocks, MaxLen, Positions, PositionsSeq, UniformBlocks};
pub use bridge::{BridgeSeq, IterBridge, ParallelBridge};
pub use chain::Chain;
pub use multizip::{MultiZip, MultiZipSeq};

/// `String`'s parallel iterators (rayon's `rayon::string`).
pub mod string {
    pub use super::drain::StringDrain as Drain;
}

/// Arrays' parallel iterators (rayon's `rayon::array`): `[T; N]::into_par_iter()` moves the
/// items out through a `Vec`'s iterator.
pub mod array {
    pub use super::vec::IntoIter;
}
pub use drain::{Drain, ParallelDrainFull, ParallelDrainRange, StringDrain};
pub use either::Either;
pub use interleave::{Interleave, InterleaveSeq, InterleaveShortest, Intersperse, IntersperseSeq};
#[allow(deprecated)]
pub use sources::repeatn;
pub use sources::{
    empty, once, repeat, repeat_n, split, walk_tree, walk_tree_postfix, walk_tree_prefix, Empty,
    Once, Repeat, RepeatN, RepeatNSeq, Split, WalkTree, WalkTreePostfix, WalkTreePrefix,
};
pub use stop::{
    PanicFuse, PanicFuseSeq, SkipAny, SkipAnySeq, SkipAnyWhile, SkipAnyWhileSeq, TakeAny,
    TakeAnySeq, TakeAnyWhile, TakeAnyWhileSeq, WhileSome, WhileSomeSeq,
};
pub use with::{
    ByClone, ByIdentity, ChunkStart, FoldChunks, FoldChunksBy, FoldChunksSeq, FoldChunksWith,
    FoldWith, MapWith, TryFold, TryFoldWith, Update, UpdateSeq,
};

/// Flattens items that are parallel iterables; see [`ParallelIterator::flatten`].
pub type Flatten<P> =
    FlatMap<P, fn(<P as plumbing::Producer>::Item) -> <P as plumbing::Producer>::Item>;
/// Flattens items that are sequential iterables; see [`ParallelIterator::flatten_iter`].
pub type FlattenIter<P> =
    FlatMapIter<P, fn(<P as plumbing::Producer>::Item) -> <P as plumbing::Producer>::Item>;
pub use collect::FromParallelIterator;
pub use extend::ParallelExtend;
pub use indexed::{IndexedParallelIterator, ZipEq};
pub use indexed_adapters::{Enumerate, ItemChunks, ItemChunksSeq, Rev, StepBy, Zip};
pub use into::{IntoParallelIterator, IntoParallelRefIterator, IntoParallelRefMutIterator};
pub use par_iter::ParallelIterator;
pub use slice::{
    Chunks, ChunksMut, ParallelSlice, ParallelSliceMut, SliceIter, SliceIterMut, Windows,
};
pub use try_ops::Try;
pub use vec::{IntoIter, IntoSeq};
