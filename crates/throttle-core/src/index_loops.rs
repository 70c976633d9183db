//! Parallel loops over index ranges: `for_range` and `map_reduce`.
//!
//! With automatic grain, a loop runs its range in small blocks on one thread and splits off the
//! upper half of what is left only when the pool's state word says a thread is hungry (the same
//! one-load check a fork makes). So a loop costs about one relaxed load per block when nobody
//! could help, and splits as finely as demand asks when somebody can. A forced grain splits
//! eagerly down to that size instead.

use crate::join::join_in;
use crate::worker::Participant;
use std::ops::Range;

/// Blocks per thread that automatic grain aims for: small enough to balance the load at the end
/// of a loop, large enough that the per-block check (one relaxed load) is noise.
const BLOCKS_PER_THREAD: usize = 128;
/// Upper bound of an automatic block, so a split is never delayed by more than a few µs of work.
const MAX_BLOCK: usize = 4096;

pub(crate) fn auto_block(len: usize, threads: usize) -> usize {
    (len / (threads.max(1) * BLOCKS_PER_THREAD)).clamp(1, MAX_BLOCK)
}

pub(crate) fn for_range_in<F>(p: &Participant, range: Range<usize>, block: usize, f: &F)
where
    F: Fn(usize) + Sync,
{
    let (mut lo, hi) = (range.start, range.end);
    while lo < hi {
        // A task boundary: honour a lowered limit (one relaxed load when it is not lowered).
        p.poll_limit();
        if hi - lo > block && p.registry().sleep.load().wants_attention() {
            let mid = lo + (hi - lo) / 2;
            join_in(
                p,
                |p| for_range_in(p, lo..mid, block, f),
                |q| for_range_in(q, mid..hi, block, f),
            );
            return;
        }
        // `lo + block` could overflow near `usize::MAX`; `hi - lo` cannot.
        let end = lo + block.min(hi - lo);
        for i in lo..end {
            f(i);
        }
        p.count_items(end - lo);
        lo = end;
    }
}

pub(crate) fn for_range_grain_in<F>(p: &Participant, range: Range<usize>, grain: usize, f: &F)
where
    F: Fn(usize) + Sync,
{
    if range.len() <= grain {
        let n = range.len();
        for i in range {
            f(i);
        }
        p.count_items(n);
        return;
    }
    let mid = range.start + range.len() / 2;
    let (left, right) = (range.start..mid, mid..range.end);
    // A forced grain asks for pieces of that size to be spread over threads: every split forks.
    join_in(
        p,
        |p| for_range_grain_in(p, left, grain, f),
        |q| for_range_grain_in(q, right, grain, f),
    );
}

pub(crate) fn map_reduce_in<T, ID, M, RD>(
    p: &Participant,
    range: Range<usize>,
    block: usize,
    identity: &ID,
    map: &M,
    reduce: &RD,
) -> T
where
    T: Send,
    ID: Fn() -> T + Sync,
    M: Fn(usize) -> T + Sync,
    RD: Fn(T, T) -> T + Sync,
{
    let (mut lo, hi) = (range.start, range.end);
    let mut acc = identity();
    while lo < hi {
        // A task boundary: honour a lowered limit (one relaxed load when it is not lowered).
        p.poll_limit();
        if hi - lo > block && p.registry().sleep.load().wants_attention() {
            let mid = lo + (hi - lo) / 2;
            let (left, right) = join_in(
                p,
                |p| map_reduce_in(p, lo..mid, block, identity, map, reduce),
                |q| map_reduce_in(q, mid..hi, block, identity, map, reduce),
            );
            return reduce(reduce(acc, left), right);
        }
        // `lo + block` could overflow near `usize::MAX`; `hi - lo` cannot.
        let end = lo + block.min(hi - lo);
        for i in lo..end {
            acc = reduce(acc, map(i));
        }
        p.count_items(end - lo);
        lo = end;
    }
    acc
}
