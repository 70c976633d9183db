//! Panics inside parallel iterators and sorts: they reach the caller, every item is dropped
//! exactly once (counted by a `Drop` type), and the pool keeps working.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use throttle::prelude::*;
use throttle::Pool;

/// Counts live values: `made` on creation (and clone), `dropped` on drop. A value dropped twice
/// shows as `dropped > made`; a leak as `dropped < made`.
#[derive(Debug, Default)]
struct Counts {
    made: AtomicUsize,
    dropped: AtomicUsize,
}

#[derive(Debug)]
struct Tracked {
    value: u64,
    counts: Arc<Counts>,
}

impl Tracked {
    fn new(value: u64, counts: &Arc<Counts>) -> Tracked {
        counts.made.fetch_add(1, Ordering::Relaxed);
        Tracked {
            value,
            counts: counts.clone(),
        }
    }
}

impl Clone for Tracked {
    fn clone(&self) -> Tracked {
        Tracked::new(self.value, &self.counts)
    }
}

impl Drop for Tracked {
    fn drop(&mut self) {
        self.counts.dropped.fetch_add(1, Ordering::Relaxed);
    }
}

fn balanced(counts: &Counts) {
    let (made, dropped) = (
        counts.made.load(Ordering::Relaxed),
        counts.dropped.load(Ordering::Relaxed),
    );
    assert_eq!(made, dropped, "made {made} values, dropped {dropped}");
}

fn message(e: Box<dyn std::any::Any + Send>) -> String {
    e.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| e.downcast_ref::<String>().cloned())
        .unwrap_or_default()
}

fn still_works(pool: &Pool) {
    let v: Vec<u64> = (0..100_000).collect();
    assert_eq!(pool.install(|| v.par_iter().sum::<u64>()), 4_999_950_000);
}

const N: u64 = 50_000;
const BAD: u64 = 31_337;

#[test]
fn panics_reach_the_caller_without_leaks_or_double_drops() {
    std::panic::set_hook(Box::new(|_| {})); // keep test output readable
    for threads in [1, 2, 4] {
        let pool = Pool::new(threads).unwrap();

        // map while collecting owned values out of a Vec: the items already made, the items
        // not yet moved out, and the partial Vecs of other pieces must all be dropped.
        let counts = Arc::new(Counts::default());
        let items: Vec<Tracked> = (0..N).map(|i| Tracked::new(i, &counts)).collect();
        let e = catch_unwind(AssertUnwindSafe(|| {
            pool.install(|| {
                items
                    .into_par_iter()
                    .map(|t| {
                        assert!(t.value != BAD, "map");
                        t
                    })
                    .collect::<Vec<Tracked>>()
            })
        }))
        .unwrap_err();
        assert_eq!(message(e), "map");
        balanced(&counts);
        still_works(&pool);

        // filter over borrowed values, collecting clones.
        let counts = Arc::new(Counts::default());
        let items: Vec<Tracked> = (0..N).map(|i| Tracked::new(i, &counts)).collect();
        let e = catch_unwind(AssertUnwindSafe(|| {
            pool.install(|| {
                items
                    .par_iter()
                    .filter(|t| {
                        assert!(t.value != BAD, "filter");
                        t.value % 2 == 0
                    })
                    .cloned()
                    .collect::<Vec<Tracked>>()
            })
        }))
        .unwrap_err();
        assert_eq!(message(e), "filter");
        drop(items);
        balanced(&counts);
        still_works(&pool);

        // for_each over owned values.
        let counts = Arc::new(Counts::default());
        let items: Vec<Tracked> = (0..N).map(|i| Tracked::new(i, &counts)).collect();
        let e = catch_unwind(AssertUnwindSafe(|| {
            pool.install(|| {
                items.into_par_iter().for_each(|t| {
                    assert!(t.value != BAD, "for_each");
                })
            })
        }))
        .unwrap_err();
        assert_eq!(message(e), "for_each");
        balanced(&counts);
        still_works(&pool);

        // collect into a Vec, where making an item panics.
        let counts = Arc::new(Counts::default());
        let e = catch_unwind(AssertUnwindSafe(|| {
            pool.install(|| {
                (0..N)
                    .into_par_iter()
                    .map(|i| {
                        assert!(i != BAD, "collect");
                        Tracked::new(i, &counts)
                    })
                    .collect::<Vec<Tracked>>()
            })
        }))
        .unwrap_err();
        assert_eq!(message(e), "collect");
        balanced(&counts);
        still_works(&pool);

        // A sort whose comparator panics: the items stay a permutation (none lost, none twice).
        for stable in [true, false] {
            let counts = Arc::new(Counts::default());
            let mut items: Vec<Tracked> = (0..N)
                .map(|i| Tracked::new((i * 7919) % N, &counts))
                .collect();
            let calls = AtomicUsize::new(0);
            let cmp = |a: &Tracked, b: &Tracked| {
                assert!(calls.fetch_add(1, Ordering::Relaxed) != 400_000, "compare");
                a.value.cmp(&b.value)
            };
            let e = catch_unwind(AssertUnwindSafe(|| {
                pool.install(|| {
                    if stable {
                        items.par_sort_by(cmp)
                    } else {
                        items.par_sort_unstable_by(cmp)
                    }
                })
            }))
            .unwrap_err();
            assert_eq!(message(e), "compare");
            let mut values: Vec<u64> = items.iter().map(|t| t.value).collect();
            values.sort_unstable();
            assert_eq!(values, (0..N).collect::<Vec<_>>());
            drop(items);
            balanced(&counts);
            still_works(&pool);
        }

        // Short-circuits leave owned items unconsumed: they are dropped too.
        let counts = Arc::new(Counts::default());
        let items: Vec<Tracked> = (0..N).map(|i| Tracked::new(i, &counts)).collect();
        let hit = pool.install(|| items.into_par_iter().find_any(|t| t.value == BAD));
        assert_eq!(hit.map(|t| t.value), Some(BAD));
        balanced(&counts);
    }
}

/// A producer that promises an exact length and breaks the promise: `collect` panics instead of
/// exposing uninitialised slots, and drops what was written.
#[test]
fn a_broken_length_promise_panics_cleanly() {
    use throttle::iter::plumbing::{
        bridge, Consumer, Producer, ProducerCallback, UnindexedConsumer,
    };

    struct Liar {
        counts: Arc<Counts>,
        range: std::ops::Range<u64>,
    }
    impl Producer for Liar {
        type Item = Tracked;
        type IntoIter = std::vec::IntoIter<Tracked>;
        fn split_at(self, i: usize) -> (Self, Self) {
            let mid = self.range.start + i as u64;
            (
                Liar {
                    counts: self.counts.clone(),
                    range: self.range.start..mid,
                },
                Liar {
                    counts: self.counts,
                    range: mid..self.range.end,
                },
            )
        }
        fn into_iter(self) -> Self::IntoIter {
            // Yields one item too few on the piece that holds 777, and one too many elsewhere.
            let mut v: Vec<Tracked> = self
                .range
                .clone()
                .filter(|&i| i != 777)
                .map(|i| Tracked::new(i, &self.counts))
                .collect();
            if !self.range.contains(&777) {
                v.push(Tracked::new(0, &self.counts));
            }
            v.into_iter()
        }
    }
    impl ParallelIterator for Liar {
        type Item = Tracked;
        fn drive_unindexed<C: UnindexedConsumer<Tracked>>(self, consumer: C) -> C::Result {
            bridge(self, consumer)
        }
        fn opt_len(&self) -> Option<usize> {
            Some(self.len())
        }
    }
    impl IndexedParallelIterator for Liar {
        fn len(&self) -> usize {
            (self.range.end - self.range.start) as usize
        }
        fn drive<C: Consumer<Tracked>>(self, consumer: C) -> C::Result {
            bridge(self, consumer)
        }
        fn with_producer<CB: ProducerCallback<Tracked>>(self, callback: CB) -> CB::Output {
            callback.callback(self)
        }
    }

    let pool = Pool::new(2).unwrap();
    let counts = Arc::new(Counts::default());
    let liar = Liar {
        counts: counts.clone(),
        range: 0..10_000,
    };
    let e = catch_unwind(AssertUnwindSafe(|| {
        pool.install(|| liar.collect::<Vec<Tracked>>())
    }))
    .unwrap_err();
    assert!(message(e).contains("exact-length parallel iterator"));
    balanced(&counts);
    still_works(&pool);
}

/// A panic in a nested iterator (which splits by forks, not claimed pieces) reaches the caller
/// through both levels, and every owned item is dropped once.
#[test]
fn nested_panics_reach_the_caller() {
    let pool = Pool::new(3).unwrap();
    let counts = Arc::new(Counts::default());
    let rows: Vec<Vec<Tracked>> = (0..64u64)
        .map(|r| {
            (0..500)
                .map(|i| Tracked::new(r * 1000 + i, &counts))
                .collect()
        })
        .collect();
    let e = catch_unwind(AssertUnwindSafe(|| {
        pool.install(|| {
            rows.into_par_iter()
                .map(|row| {
                    row.into_par_iter()
                        .map(|t| {
                            assert!(t.value != 40_123, "nested");
                            t.value
                        })
                        .sum::<u64>()
                })
                .collect::<Vec<u64>>()
        })
    }))
    .unwrap_err();
    assert_eq!(message(e), "nested");
    balanced(&counts);
    still_works(&pool);
}

/// rayon's panic semantics for pieces: with `with_max_len(1)` every item is a piece of its own,
/// joined as rayon joins halves, so a panic in one does not keep the others from running (all
/// items but the panicking one are reached, on one thread too); `panic_fuse` stops them early.
/// Before, a panic ended its whole leaf, and 0xC000 of 0x10000 items ran.
#[test]
fn a_panicking_piece_leaves_the_other_pieces_running_unless_fused() {
    let pool = Pool::new(1).unwrap();
    let count = |fuse: bool| {
        let reached = AtomicUsize::new(0);
        let r = catch_unwind(AssertUnwindSafe(|| {
            pool.install(|| {
                let iter = (0..0x1_0000i32).into_par_iter().with_max_len(1);
                let body = |i: i32| {
                    assert!(i != 0xC000, "boom");
                    reached.fetch_add(1, Ordering::Relaxed);
                };
                if fuse {
                    iter.panic_fuse().for_each(body);
                } else {
                    iter.for_each(body);
                }
            })
        }));
        assert_eq!(message(r.unwrap_err()), "boom");
        reached.into_inner()
    };
    assert_eq!(count(false), 0xFFFF);
    assert!(count(true) < 0xFFFF);
}
