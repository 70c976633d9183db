//! Parallel sorts: sort pieces in parallel, then merge neighbours back up the tree.
//!
//! The slice is halved recursively through [`join`](crate::join) down to pieces of about
//! `len / (threads × PIECES_PER_THREAD)` items, each sorted with the standard library's sort
//! (stable or unstable). Two sorted neighbours are merged by the standard *stable* sort, whose
//! run detection sees the two runs and merges them in one linear pass (the documented behaviour
//! "two or more sorted sequences concatenated"). Stability: every piece is sorted stably and
//! every merge is stable, so the whole sort is. No `unsafe`: a panicking comparator leaves the
//! slice a permutation of its items (the standard sorts guarantee it), and `join` resumes the
//! panic after both halves stopped.
//!
//! Each merge runs on one thread, so the top merge (one pass over the slice) is the sequential
//! part of the sort; a parallel merge is the next step if the benches ask for it.

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
    let threads = crate::current_num_threads();
    if threads == 1 || v.len() <= MIN_PARALLEL {
        sort_piece(v, compare, stable);
        return;
    }
    let piece = (v.len() / (threads * PIECES_PER_THREAD)).max(MIN_PARALLEL);
    sort_rec(v, compare, stable, piece);
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

fn sort_rec<T, F>(v: &mut [T], compare: &F, stable: bool, piece: usize)
where
    T: Send,
    F: Fn(&T, &T) -> Ordering + Sync,
{
    if v.len() <= piece {
        sort_piece(v, compare, stable);
        return;
    }
    let mid = v.len() / 2;
    let (left, right) = v.split_at_mut(mid);
    crate::join(
        || sort_rec(left, compare, stable, piece),
        || sort_rec(right, compare, stable, piece),
    );
    if compare(&v[mid - 1], &v[mid]) != Ordering::Greater {
        return; // already in order: nothing to merge
    }
    // Two sorted runs: the stable sort detects them and merges in one pass.
    v.sort_by(compare);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sorts_like_std_and_stays_stable() {
        let pool = crate::Pool::new(2).unwrap();
        for n in [0usize, 1, 2, 4095, 4097, 50_000] {
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
