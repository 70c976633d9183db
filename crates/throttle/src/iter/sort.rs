//! Parallel sorts, without `unsafe`: the standard library's sorts do the sequential work.
//!
//! - Unstable (`par_sort_unstable*`): a parallel quicksort whose partition is the standard
//!   `select_nth_unstable_by` at the middle, so the two halves are equal and sort in parallel
//!   through [`join`](crate::join); pieces below `len / (threads × PIECES_PER_THREAD)` items
//!   use `sort_unstable_by`. Measured here on 10^7 random u64, a selection costs a tenth of a
//!   sort, so the sequential top selection bounds the speedup well above two cores.
//! - Stable (`par_sort*`): pieces are sorted stably in parallel and merged back up the tree. A
//!   merge of two sorted runs splits itself in parallel: the middle item of the longer run is
//!   located in the other by binary search, a rotation puts the four parts in order, and the two
//!   halves merge in parallel; small merges use the standard stable sort, whose run detection
//!   merges two sorted runs in one pass. Ties keep the left run's items first, so the sort stays
//!   stable.
//!
//! A panicking comparator leaves the slice a permutation of its items (the standard sorts
//! guarantee it, and rotations and swaps never duplicate), and `join` resumes the panic after
//! both halves stopped.

use std::cmp::Ordering;

/// Below this many items a sort runs sequentially: a fork and a merge pass cost more than they
/// save on a few thousand items (the standard sort does ~2 000 items in ~10 µs).
const MIN_PARALLEL: usize = 4096;

/// Pieces per thread: enough to balance uneven piece costs (presorted runs sort faster), few
/// enough that the merge levels above them stay shallow.
const PIECES_PER_THREAD: usize = 4;

pub(crate) fn par_sort<T, F>(v: &mut [T], compare: &F, stable: bool)
where
    T: Send,
    F: Fn(&T, &T) -> Ordering + Sync,
{
    super::runtime::in_pool(|| sort_in_pool(v, compare, stable));
}

fn sort_in_pool<T, F>(v: &mut [T], compare: &F, stable: bool)
where
    T: Send,
    F: Fn(&T, &T) -> Ordering + Sync,
{
    let threads = crate::current_num_threads();
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
    let mid = v.len() / 2;
    let (left, _, right) = v.select_nth_unstable_by(mid, compare);
    crate::join(
        || quicksort(left, compare, piece),
        || quicksort(right, compare, piece),
    );
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
    crate::join(
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
    crate::join(
        || merge(left, i, compare, piece),
        || merge(right, mid - i, compare, piece),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sorts_like_std_and_stays_stable() {
        let pool = crate::Pool::new(2).unwrap();
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
}
