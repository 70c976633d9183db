//! The outermost parallel iterator of a computation hands out its work as pieces claimed from a
//! shared counter (guided self-scheduling), instead of a tree of forks.
//!
//! Why: a thread that waits in a fork for its stolen other half is not a hungry thread in the
//! pool's state word, so nobody splits work for it; with a tree of forks, the thread that
//! finishes its half early (an uneven predicate) waits for the other. Here the run is cut in
//! order into `threads × PIECES_PER_THREAD` pieces; `threads` claimer tasks (the caller first)
//! each take the next unclaimed piece until none is left, so every thread works as long as
//! pieces remain, and the longest wait at the end is one piece (and inside a piece a leaf still
//! splits on demand, see `engine.rs`). The consumer is cut along with the producer, and the
//! pieces' results are kept and joined in order by the reducers of the cuts.
//!
//! Nested iterators (a parallel iterator inside a piece) use the fork tree of `engine.rs`:
//! by then every thread already has a piece, and a fork costs far less than this set-up
//! (two small vectors and a lock per piece).

use super::engine::{leaf, Pieces, Sink, Splitter};
use super::{Reducer, WorkOrder};
use crate::iter::plumbing::Folder;
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};

/// Pieces per thread: the work left when a thread runs out is at most one piece, 1/32 of the
/// run on two threads; the set-up costs a lock per piece, noise next to any piece worth having.
const PIECES_PER_THREAD: usize = 16;

thread_local! {
    /// True while this thread runs a claimed piece.
    static IN_PIECE: Cell<bool> = const { Cell::new(false) };
}

/// True if a run started here should claim pieces: the thread is not already inside a piece.
pub(crate) fn outermost() -> bool {
    !IN_PIECE.with(Cell::get)
}

/// Marks the thread as running a piece until dropped (also on unwinding).
struct InPiece(bool);

impl InPiece {
    fn enter() -> InPiece {
        InPiece(IN_PIECE.with(|c| c.replace(true)))
    }
}

impl Drop for InPiece {
    fn drop(&mut self) {
        IN_PIECE.with(|c| c.set(self.0));
    }
}

/// The end of piece `i` of `n` over `len` units: `(i + 1)·len / n`, computed in 128 bits so that
/// runs of up to `usize::MAX` units (`(0..u64::MAX).into_par_iter()`) neither overflow (a panic
/// in debug builds) nor wrap (empty pieces in release builds).
fn piece_end(i: usize, len: usize, n: usize) -> usize {
    // The quotient is at most `len` because `i + 1 <= n`, so it fits in `usize`.
    ((i as u128 + 1) * len as u128 / n as u128) as usize
}

/// Sets a flag if dropped while unwinding: a claimer panicked, so the others stop claiming.
struct StopOnPanic<'a>(&'a AtomicBool);

impl Drop for StopOnPanic<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.store(true, Ordering::Relaxed);
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic never happens while a piece's lock is held (pieces run after it is released).
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// One piece waiting to be claimed: its source, its consumer, and its length in units.
type Piece<P, S> = Mutex<Option<(P, S, usize)>>;

/// Runs `pieces` (`len` units) into `sink` as claimed pieces on `threads` claimers.
pub(crate) fn run_claimed<P, S>(
    pieces: P,
    len: usize,
    sink: S,
    splitter: Splitter,
    threads: usize,
) -> S::Result
where
    P: Pieces,
    S: Sink<P::Item>,
{
    let n = (threads * PIECES_PER_THREAD).min(len / splitter.min).max(1);
    // Cut in order; piece `i` holds units `[i·len/n, (i+1)·len/n)`. Cutting piece `i` off the
    // front of the rest gives the reducer that joins it to everything after it.
    let mut slots: Vec<Piece<P, S>> = Vec::with_capacity(n);
    let mut reducers = Vec::with_capacity(n - 1);
    let mut rest = Some((pieces, sink));
    let mut start = 0;
    for i in 0..n {
        let end = piece_end(i, len, n);
        let (whole, whole_sink) = rest.take().expect("one source left per piece");
        if i + 1 == n {
            slots.push(Mutex::new(Some((whole, whole_sink, end - start))));
        } else {
            let (piece, tail) = whole.split_at(end - start);
            let (piece_sink, tail_sink, reducer) = whole_sink.split(end - start, len - start);
            slots.push(Mutex::new(Some((piece, piece_sink, end - start))));
            reducers.push(reducer);
            rest = Some((tail, tail_sink));
        }
        start = end;
    }
    let results: Vec<Mutex<Option<S::Result>>> = (0..n).map(|_| Mutex::new(None)).collect();
    let order = {
        let first = lock(&slots[0]);
        let (_, sink, _) = first.as_ref().expect("not yet claimed");
        claim_order(n, sink.order())
    };
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let claim = || {
        let _in_piece = InPiece::enter();
        let _stop = StopOnPanic(&stop);
        while !stop.load(Ordering::Relaxed) {
            let k = next.fetch_add(1, Ordering::Relaxed);
            if k >= n {
                break;
            }
            let i = order[k];
            let Some((piece, sink, len)) = lock(&slots[i]).take() else {
                continue;
            };
            let r = if sink.full() {
                sink.into_folder().complete()
            } else {
                leaf(piece, sink, splitter, len)
            };
            *lock(&results[i]) = Some(r);
        }
    };
    claimers(threads, &claim);
    // Join from the back, each piece's reducer joining it to everything after it: the
    // grouping the cuts made.
    let mut all: Vec<S::Result> = results
        .into_iter()
        .map(|m| {
            m.into_inner()
                .unwrap_or_else(|poisoned| poisoned.into_inner())
                .expect("every piece ran (a panic would have been resumed)")
        })
        .collect();
    let mut acc = all.pop().expect("at least one piece");
    while let Some(reducer) = reducers.pop() {
        let r = all.pop().expect("one result per reducer");
        acc = reducer.reduce(r, acc);
    }
    acc
}

/// Runs `claim` on `k` tasks of the current pool: the caller's first, the others forked.
fn claimers<F: Fn() + Sync>(k: usize, claim: &F) {
    if k <= 1 {
        claim();
    } else {
        throttle_core::join(|| claimers(k / 2, claim), || claimers(k - k / 2, claim));
    }
}

/// The order in which the `n` pieces are claimed: `order[k]` is the `k`-th piece to start.
fn claim_order(n: usize, order: WorkOrder) -> Vec<usize> {
    match order {
        WorkOrder::Front => (0..n).collect(),
        WorkOrder::Back => (0..n).rev().collect(),
        WorkOrder::Spread => {
            // Bit-reversed counting over the next power of two, keeping those below `n`:
            // 0, n/2, n/4, 3n/4, ... (each piece once).
            let bits = n.next_power_of_two().trailing_zeros();
            (0..n.next_power_of_two())
                .map(|k| {
                    if bits == 0 {
                        0
                    } else {
                        k.reverse_bits() >> (usize::BITS - bits)
                    }
                })
                .filter(|&i| i < n)
                .collect()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claim_orders_are_permutations() {
        for n in 1..70 {
            for order in [WorkOrder::Front, WorkOrder::Back, WorkOrder::Spread] {
                let mut v = claim_order(n, order);
                v.sort_unstable();
                assert_eq!(v, (0..n).collect::<Vec<_>>(), "{order:?} of {n}");
            }
        }
        assert_eq!(claim_order(4, WorkOrder::Spread), [0, 2, 1, 3]);
    }

    /// Pieces tile `[0, len)` in order, also for the longest runs (they overflowed or wrapped
    /// when computed as `(i + 1) * len / n` in `usize`).
    #[test]
    fn pieces_tile_the_run_even_at_usize_max() {
        for len in [0, 1, 31, 1000, 1 << 60, usize::MAX - 1, usize::MAX] {
            for n in [1, 2, 3, 32, 64] {
                let mut start = 0;
                for i in 0..n {
                    let end = piece_end(i, len, n);
                    assert!(
                        end >= start,
                        "piece {i} of {n} over {len} ends before it starts"
                    );
                    start = end;
                }
                assert_eq!(start, len, "{n} pieces over {len} units");
            }
        }
    }
}
