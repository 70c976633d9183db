//! Parallel sorts, without `unsafe`: the standard library's sorts do the sequential work.
//!
//! - Unstable (`par_sort_unstable*`): a parallel quicksort that partitions in one pass around
//!   the median of a sample (the halves come out within a few percent of equal; a lopsided
//!   split falls back to the standard `select_nth_unstable_by` at the middle), and sorts the
//!   halves in parallel through [`join`](throttle_core::join); pieces below
//!   `len / (threads × PIECES_PER_THREAD)` items use `sort_unstable_by`. The top partition runs
//!   on one thread, so it is the sort's serial part: see `partition_at_sample_median`.
//! - Stable (`par_sort*`): pieces are sorted stably in parallel and merged back up the tree. A
//!   merge of two sorted runs splits itself in parallel: the middle item of the longer run is
//!   located in the other by binary search, a rotation puts the four parts in order, and the two
//!   halves merge in parallel; small merges use the standard stable sort, whose run detection
//!   merges two sorted runs in one pass. Ties keep the left run's items first, so the sort stays
//!   stable.
//!
//! - By a cached key (`par_sort_by_cached_key`): the keys are computed once, in parallel, with
//!   each item's index, the pairs sorted unstably (the index breaks ties, so the order is the
//!   stable one), and the items moved into place by following the permutation's cycles.
//!
//! - "If any at all" (auto mode, the core's `callsite.rs`): called from outside any pool while the
//!   global pool is in auto mode, a call site whose sorts are too short to pay for threads
//!   sorts on the calling thread with the standard sort of the same kind (see [`par_sort`]).
//!
//! A panicking comparator leaves the slice a permutation of its items (the standard sorts
//! guarantee it, and rotations and swaps never duplicate), and `join` resumes the panic after
//! both halves stopped.

use crate::iter::runtime::Way;
use std::cmp::Ordering;

/// Below this many items a sort runs sequentially: a fork and a merge pass cost more than they
/// save on a few thousand items (the standard sort does ~2 000 items in ~10 µs).
const MIN_PARALLEL: usize = 4096;

/// Pieces per thread: enough to balance uneven piece costs (presorted runs sort faster), few
/// enough that the merge levels above them stay shallow.
const PIECES_PER_THREAD: usize = 4;

/// Sorts `v` in the current pool (or the global pool). "If any at all" (auto mode): called from
/// outside any pool while the global pool is in auto mode, the sort consults the memory of its
/// call site (the user's line that called `par_sort*`, `#[track_caller]` from the public
/// methods down to here) like the iterators' consumers, with the cost counted per item: a site
/// whose sorts are too short to pay for threads runs the standard sort on the calling thread
/// (`sort_by` if `stable`, else `sort_unstable_by`; a stable sort's result is the same either
/// way).
#[track_caller]
pub(crate) fn par_sort<T, F>(v: &mut [T], compare: &F, stable: bool)
where
    T: Send,
    F: Fn(&T, &T) -> Ordering + Sync,
{
    let len = v.len();
    super::runtime::remembered(Some(std::panic::Location::caller()), len, |way| match way {
        Way::Serial => sort_piece(v, compare, stable),
        Way::Parallel => sort_in_pool(v, compare, stable),
    });
}

fn sort_in_pool<T, F>(v: &mut [T], compare: &F, stable: bool)
where
    T: Send,
    F: Fn(&T, &T) -> Ordering + Sync,
{
    let threads = throttle_core::current_num_threads();
    if threads == 1 || v.len() <= MIN_PARALLEL {
        sort_piece(v, compare, stable);
        return;
    }
    let piece = (v.len() / (threads * PIECES_PER_THREAD)).max(MIN_PARALLEL);
    if stable {
        merge_sort(v, compare, piece);
    } else {
        quicksort(v, compare, piece);
    }
}

fn sort_piece<T, F>(v: &mut [T], compare: &F, stable: bool)
where
    F: Fn(&T, &T) -> Ordering,
{
    if stable {
        v.sort_by(compare);
    } else {
        v.sort_unstable_by(compare);
    }
}

fn quicksort<T, F>(v: &mut [T], compare: &F, piece: usize)
where
    T: Send,
    F: Fn(&T, &T) -> Ordering + Sync,
{
    if v.len() <= piece {
        v.sort_unstable_by(compare);
        return;
    }
    let len = v.len();
    let mid = partition_at_sample_median(v, compare);
    let mid = if mid.min(len - 1 - mid) >= len / UNBALANCED {
        mid
    } else {
        // Many items equal to the pivot (all on its right) or a freak sample: select the
        // exact middle instead. It costs one more pass here, never a deeper recursion.
        v.select_nth_unstable_by(len / 2, compare);
        len / 2
    };
    let (left, rest) = v.split_at_mut(mid);
    let right = &mut rest[1..];
    throttle_core::join(
        || quicksort(left, compare, piece),
        || quicksort(right, compare, piece),
    );
}

/// Items in the pivot sample: the median of 255 lands within ~3 % of the true median for
/// random data (the standard error of a sample median is about `0.5 / sqrt(255)` of the items).
const SAMPLE: usize = 255;

/// A split with a side shorter than `len / UNBALANCED` falls back to selecting the middle.
const UNBALANCED: usize = 8;

/// Partitions `v` (longer than [`SAMPLE`]) around the median of an evenly spaced sample, in one
/// pass: items less than the pivot go left of it, the others right. Returns the pivot's index.
///
/// Why not `select_nth_unstable_by` at the middle: a quickselect makes ~2 passes over the
/// items on average, and the top level of the sort runs on one thread while the others wait,
/// so its cost is the sort's serial part. Measured here on 10^7 random u64 (min of 5, loaded
/// 2-CPU VM, `rustc -O`): select 48–78 ms, this partition 33–44 ms (split 0.478), a whole
/// `sort_unstable` 680 ms. On two threads the critical path (a partition of n, of n/2, two of
/// n/4, then four sorts of n/8 per thread) goes from ~0.65 to ~0.57 of the serial sort.
/// Re-measure with `throttle-bench --bench sort_unstable`.
fn partition_at_sample_median<T, F>(v: &mut [T], compare: &F) -> usize
where
    F: Fn(&T, &T) -> Ordering,
{
    let step = v.len() / (SAMPLE + 1);
    let mut sample: Vec<usize> = (1..=SAMPLE).map(|k| k * step).collect();
    sample.sort_unstable_by(|&a, &b| compare(&v[a], &v[b]));
    v.swap(0, sample[SAMPLE / 2]);
    let (pivot, rest) = v.split_first_mut().expect("longer than the sample");
    // Branch-free Lomuto: `rest[store..i]` holds the items not less than the pivot seen so
    // far; each item is swapped to `store` and kept there only if it is less. Swaps only, so a
    // panicking comparator leaves a permutation.
    let mut store = 0;
    for i in 0..rest.len() {
        let less = compare(&rest[i], pivot) == Ordering::Less;
        rest.swap(store, i);
        store += usize::from(less);
    }
    v.swap(0, store);
    store
}

fn merge_sort<T, F>(v: &mut [T], compare: &F, piece: usize)
where
    T: Send,
    F: Fn(&T, &T) -> Ordering + Sync,
{
    if v.len() <= piece {
        v.sort_by(compare);
        return;
    }
    let mid = v.len() / 2;
    let (left, right) = v.split_at_mut(mid);
    throttle_core::join(
        || merge_sort(left, compare, piece),
        || merge_sort(right, compare, piece),
    );
    merge(v, mid, compare, piece);
}

/// Merges the sorted runs `v[..mid]` and `v[mid..]`, stably, in parallel above `piece` items.
fn merge<T, F>(v: &mut [T], mid: usize, compare: &F, piece: usize)
where
    T: Send,
    F: Fn(&T, &T) -> Ordering + Sync,
{
    if mid == 0 || mid == v.len() || compare(&v[mid - 1], &v[mid]) != Ordering::Greater {
        return; // one run is empty, or they are already in order
    }
    if v.len() <= piece {
        v.sort_by(compare); // two runs: one merging pass
        return;
    }
    let (a_len, b_len) = (mid, v.len() - mid);
    // Split both runs so that everything in (a[..i], b[..j]) goes before everything in
    // (a[i..], b[j..]), with ties between the runs on the left run's side.
    let (i, j) = if a_len >= b_len {
        let i = a_len / 2;
        let j = v[mid..].partition_point(|x| compare(x, &v[i]) == Ordering::Less);
        (i, j)
    } else {
        let j = b_len / 2;
        let i = v[..mid].partition_point(|x| compare(x, &v[mid + j]) != Ordering::Greater);
        (i, j)
    };
    // a[..i] a[i..] b[..j] b[j..]  →  a[..i] b[..j] | a[i..] b[j..]
    v[i..mid + j].rotate_left(mid - i);
    let (left, right) = v.split_at_mut(i + j);
    throttle_core::join(
        || merge(left, i, compare, piece),
        || merge(right, mid - i, compare, piece),
    );
}

/// `par_sort_by_cached_key`: computes every item's key once, in parallel, sorts the
/// `(key, index)` pairs (an unstable sort: the index breaks ties, so the order is the stable
/// one), and then moves the items into that order in place, one cycle of the permutation at a
/// time. Not `#[track_caller]`: its two parallel calls would share the caller's line in auto
/// mode's memory; from here they run in the pool, unremembered.
pub(crate) fn par_sort_by_cached_key<T, K, F>(v: &mut [T], key: &F)
where
    T: Send,
    K: Ord + Send,
    F: Fn(&T) -> K + Sync,
{
    use super::slice::ParallelSliceMut;
    use super::{IndexedParallelIterator, IntoParallelRefMutIterator, ParallelIterator};
    let len = v.len();
    if len < 2 {
        return;
    }
    let mut keyed: Vec<(K, usize)> = v
        .par_iter_mut()
        .enumerate()
        .map(|(i, x)| (key(&*x), i))
        .collect();
    keyed.par_sort_unstable();
    // `keyed[i].1` is where the item that belongs at `i` is now. Items before `i` are in place;
    // an item moved away from a place before `i` is found by following where it went.
    for i in 0..len {
        let mut from = keyed[i].1;
        while from < i {
            from = keyed[from].1;
        }
        keyed[i].1 = from;
        v.swap(i, from);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sorts_like_std_and_stays_stable() {
        let pool = throttle_core::Pool::new(2).unwrap();
        for n in [0usize, 1, 2, 4095, 4097, 50_000, 300_001] {
            let mut x = 0x2545_F491_4F6C_DD1Du64;
            let v: Vec<(u8, u32)> = (0..n as u32)
                .map(|i| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    ((x % 7) as u8, i)
                })
                .collect();
            let mut expect = v.clone();
            expect.sort_by_key(|p| p.0);
            let mut got = v.clone();
            pool.install(|| par_sort(&mut got, &|a: &(u8, u32), b| a.0.cmp(&b.0), true));
            assert_eq!(got, expect);
            let mut got = v;
            pool.install(|| par_sort(&mut got, &|a: &(u8, u32), b| a.cmp(b), false));
            expect.sort();
            assert_eq!(got, expect);
        }
    }

    /// Inputs that make a sample pivot lopsided: all equal, two values, sorted, reversed.
    #[test]
    fn unstable_sort_of_lopsided_inputs() {
        let pool = throttle_core::Pool::new(2).unwrap();
        let n = 200_003u32;
        let inputs: Vec<Vec<u32>> = vec![
            vec![7; n as usize],
            (0..n).map(|i| u32::from(i % 97 == 0)).collect(),
            (0..n).map(|i| i % 3).collect(),
            (0..n).collect(),
            (0..n).rev().collect(),
        ];
        for v in inputs {
            let mut expect = v.clone();
            expect.sort_unstable();
            let mut got = v;
            pool.install(|| par_sort(&mut got, &|a: &u32, b: &u32| a.cmp(b), false));
            assert_eq!(got, expect);
        }
    }
}
