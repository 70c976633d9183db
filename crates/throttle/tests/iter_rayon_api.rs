//! rayon's iterator API on throttle, checked against std's sequential iterators.

use proptest::prelude::*;
use std::collections::{BTreeMap, BTreeSet, BinaryHeap, HashMap, HashSet, LinkedList, VecDeque};
use throttle::iter::Either;
use throttle::prelude::*;

fn pool() -> throttle::Pool {
    throttle::Pool::new(3).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn finds_match_sequential(v in prop::collection::vec(0u32..50, 0..3000), k in 0u32..50) {
        let p = pool();
        p.install(|| {
            prop_assert_eq!(v.par_iter().find_first(|&&x| x == k), v.iter().find(|&&x| x == k));
            prop_assert_eq!(v.par_iter().find_last(|&&x| x == k), v.iter().rev().find(|&&x| x == k));
            prop_assert_eq!(v.par_iter().position_last(|&x| x == k), v.iter().rposition(|&x| x == k));
            let pos: Vec<usize> = v.par_iter().positions(|&x| x == k).collect();
            let seq: Vec<usize> = v.iter().enumerate().filter(|(_, &x)| x == k).map(|(i, _)| i).collect();
            prop_assert_eq!(pos, seq);
            Ok(())
        })?;
    }

    #[test]
    fn strings_split_as_std(s in "[a-c,; \n\r]{0,400}") {
        let p = pool();
        p.install(|| {
            let a: Vec<&str> = s.par_split(',').collect();
            prop_assert_eq!(a, s.split(',').collect::<Vec<_>>());
            let a: Vec<&str> = s.par_split_terminator([',', ';']).collect();
            prop_assert_eq!(a, s.split_terminator([',', ';']).collect::<Vec<_>>());
            let a: Vec<&str> = s.par_split_inclusive(|c| c == ';').collect();
            prop_assert_eq!(a, s.split_inclusive(';').collect::<Vec<_>>());
            let a: Vec<&str> = s.par_lines().collect();
            prop_assert_eq!(a, s.lines().collect::<Vec<_>>());
            let a: Vec<&str> = s.par_split_whitespace().collect();
            prop_assert_eq!(a, s.split_whitespace().collect::<Vec<_>>());
            let a: Vec<(usize, &str)> = s.par_match_indices(',').collect();
            prop_assert_eq!(a, s.match_indices(',').collect::<Vec<_>>());
            Ok(())
        })?;
    }

    #[test]
    fn unicode_chars_as_std(s in "\\PC{0,300}") {
        let a: Vec<(usize, char)> = s.par_char_indices().collect();
        prop_assert_eq!(a, s.char_indices().collect::<Vec<_>>());
        let u: Vec<u16> = s.par_encode_utf16().collect();
        prop_assert_eq!(u, s.encode_utf16().collect::<Vec<_>>());
    }

    #[test]
    fn interleave_and_intersperse(a in prop::collection::vec(0i32..9, 0..500), b in prop::collection::vec(0i32..9, 0..500)) {
        let got: Vec<i32> = a.par_iter().interleave(&b).copied().collect();
        let mut want = Vec::new();
        for i in 0..a.len().max(b.len()) {
            want.extend(a.get(i));
            want.extend(b.get(i));
        }
        prop_assert_eq!(got, want);
        let got: Vec<i32> = a.par_iter().copied().intersperse(-1).collect();
        let mut want = Vec::new();
        for (i, &x) in a.iter().enumerate() {
            if i > 0 { want.push(-1); }
            want.push(x);
        }
        prop_assert_eq!(got.clone(), want);
        let back: Vec<i32> = a.par_iter().copied().intersperse(-1).rev().collect();
        prop_assert_eq!(back, got.into_iter().rev().collect::<Vec<_>>());
    }

    #[test]
    fn chunk_folds_and_compare(v in prop::collection::vec(0u64..100, 0..2000), size in 1usize..40) {
        let got: Vec<u64> = v.par_iter().fold_chunks(size, || 0, |a, &x| a + x).collect();
        let want: Vec<u64> = v.chunks(size).map(|c| c.iter().sum()).collect();
        prop_assert_eq!(got, want);
        let w: Vec<u64> = v.iter().map(|x| x / 2).collect();
        prop_assert_eq!(v.par_iter().map(|x| x / 2).cmp(w.clone()), std::cmp::Ordering::Equal);
        prop_assert_eq!(v.par_iter().cmp(&w), v.iter().cmp(w.iter()));
        prop_assert_eq!(v.par_iter().lt(&w), v.iter().lt(w.iter()));
    }

    #[test]
    fn ranges_as_std(a in -300i64..300, b in -300i64..300) {
        let v: Vec<i64> = (a..=b).into_par_iter().collect();
        prop_assert_eq!(v, (a..=b).collect::<Vec<_>>());
        let c: Vec<char> = ('\u{D7F0}'..='\u{E010}').into_par_iter().collect();
        prop_assert_eq!(c, ('\u{D7F0}'..='\u{E010}').collect::<Vec<_>>());
    }
}

#[test]
fn literal_ranges_infer_i32() {
    assert!((0..1000).into_par_iter().all(|x| x < 1000));
    let s = (1..=100).into_par_iter().sum::<i32>();
    assert_eq!(s, 5050);
}

#[test]
fn wide_ranges_find_first_last_any() {
    let p = pool();
    let n: u128 = 1 << 80;
    p.install(|| {
        assert_eq!((0..n).into_par_iter().find_first(|_| true), Some(0));
        assert_eq!((0..=n).into_par_iter().find_first(|&x| x > 5), Some(6));
        assert_eq!((0..n).into_par_iter().take_any(3).count(), 3);
        // Searches that need the back, or any part, of a run too long to scan: `find_last`
        // starts from the back, `find_any` spreads its first pieces over the run.
        assert_eq!((0..n).into_par_iter().find_last(|_| true), Some(n - 1));
        assert_eq!((0..=n).into_par_iter().find_last(|_| true), Some(n));
        assert!((0..n).into_par_iter().find_any(|&x| x > n / 2).is_some());
    });
}

#[test]
fn stopping_adapters() {
    let p = pool();
    p.install(|| {
        assert_eq!((0..10_000u32).into_par_iter().take_any(17).count(), 17);
        assert_eq!((0..10_000u32).into_par_iter().skip_any(17).count(), 9983);
        assert_eq!(throttle::iter::repeat(1u8).take_any(100).count(), 100);
        let none: Vec<u8> = throttle::iter::repeat(None::<u8>).while_some().collect();
        assert!(none.is_empty());
        let some: Vec<u32> = (0..1000u32)
            .into_par_iter()
            .map(Some)
            .while_some()
            .collect();
        assert_eq!(some, (0..1000).collect::<Vec<_>>());
        let taken: Vec<u32> = (0..1000u32)
            .into_par_iter()
            .take_any_while(|_| true)
            .collect();
        assert_eq!(taken.len(), 1000);
        let r = std::panic::catch_unwind(|| {
            (0..100_000u32)
                .into_par_iter()
                .panic_fuse()
                .for_each(|x| assert_ne!(x, 5));
        });
        assert!(r.is_err());
    });
}

#[test]
fn folds_with_values_and_max_len() {
    let pieces = (0..100u32)
        .into_par_iter()
        .with_max_len(1)
        .fold_with(0, |a, _| a + 1)
        .count();
    assert_eq!(pieces, 100);
    let total: u32 = (0..100u32).into_par_iter().fold_with(0, |a, x| a + x).sum();
    assert_eq!(total, 4950);
    let r: Option<u32> = (0..100u32)
        .into_par_iter()
        .try_fold(|| 0u32, |a, x| a.checked_add(x))
        .try_reduce_with(|a, b| a.checked_add(b))
        .flatten();
    assert_eq!(r, Some(4950));
    let bad: Result<u32, u32> = (0..100u32)
        .into_par_iter()
        .try_fold_with(0, |a, x| if x == 50 { Err(x) } else { Ok(a + x) })
        .try_reduce(|| 0, |a, b| Ok(a + b));
    assert_eq!(bad, Err(50));
}

#[test]
fn partition_map_and_unzip_keep_order() {
    let (evens, odds): (Vec<u32>, VecDeque<String>) =
        (0..100u32).into_par_iter().partition_map(|x| {
            if x % 2 == 0 {
                Either::Left(x)
            } else {
                Either::Right(x.to_string())
            }
        });
    assert_eq!(evens, (0..100).step_by(2).collect::<Vec<_>>());
    assert_eq!(odds.front().map(String::as_str), Some("1"));
    let (a, (b, c)): (Vec<u32>, (Vec<u32>, Vec<u32>)) = (0..10u32)
        .into_par_iter()
        .map(|x| (x, (x + 1, x + 2)))
        .unzip();
    assert_eq!((a[9], b[9], c[9]), (9, 10, 11));
}

#[test]
fn collections_iterate_like_std() {
    let m: BTreeMap<u32, u32> = (0..500).map(|i| (i, i * 2)).collect();
    let v: Vec<(&u32, &u32)> = m.par_iter().collect();
    assert_eq!(v, m.iter().collect::<Vec<_>>());
    let mut h: HashMap<u32, u32> = (0..500).map(|i| (i, i)).collect();
    h.par_iter_mut().for_each(|(_, v)| *v += 1);
    assert_eq!(h.par_iter().map(|(_, v)| *v).sum::<u32>(), 125_250);
    let set: BTreeSet<u32> = (0..100).collect();
    assert_eq!(
        set.par_iter().copied().collect::<Vec<_>>(),
        set.iter().copied().collect::<Vec<_>>()
    );
    let hs: HashSet<u32> = set.clone().into_par_iter().collect();
    assert_eq!(hs.len(), 100);
    let list: LinkedList<u32> = (0..100).collect();
    assert_eq!(list.par_iter().sum::<u32>(), 4950);
    let mut dq: VecDeque<u32> = (0..10).collect();
    dq.rotate_left(3);
    assert_eq!(
        dq.par_iter().copied().collect::<Vec<_>>(),
        dq.iter().copied().collect::<Vec<_>>()
    );
    let heap: BinaryHeap<u32> = (0..100).collect();
    assert_eq!(heap.into_par_iter().max(), Some(99));
    assert_eq!(Some(3).par_iter().copied().sum::<i32>(), 3);
    let r: Result<u32, ()> = Err(());
    assert_eq!(r.into_par_iter().count(), 0);
}

#[test]
fn drains_remove_items() {
    let mut v: Vec<u32> = (0..100).collect();
    let d: Vec<u32> = v.par_drain(10..20).collect();
    assert_eq!(d, (10..20).collect::<Vec<_>>());
    assert_eq!(v.len(), 90);
    let mut s = String::from("héllo");
    let c: String = s.par_drain(..3).collect();
    assert_eq!((c.as_str(), s.as_str()), ("hé", "llo"));
    let mut h: HashMap<u32, u32> = (0..10).map(|i| (i, i)).collect();
    assert_eq!(h.par_drain().count(), 10);
    assert!(h.is_empty());
}

#[test]
fn sources_yield_their_items() {
    assert_eq!(throttle::iter::empty::<u8>().count(), 0);
    assert_eq!(throttle::iter::once(5).collect::<Vec<_>>(), [5]);
    assert_eq!(throttle::iter::repeat_n("a", 1000).count(), 1000);
    assert_eq!(throttle::iter::repeat_n("a", 0).count(), 0);
    let pieces: Vec<u32> = throttle::iter::split(0u32..1000, |r| {
        if r.len() < 10 {
            (r, None)
        } else {
            let mid = r.start + (r.end - r.start) / 2;
            (r.start..mid, Some(mid..r.end))
        }
    })
    .flat_map_iter(|r| r)
    .collect();
    assert_eq!(pieces, (0..1000).collect::<Vec<_>>());
    let post: Vec<u32> = throttle::iter::walk_tree_postfix(1u32, |&n| {
        if n < 8 {
            vec![2 * n, 2 * n + 1]
        } else {
            vec![]
        }
    })
    .collect();
    assert_eq!(post.len(), 15);
    assert_eq!(post.last(), Some(&1));
}

#[test]
fn clones_run_afresh() {
    let it = (0..1000u32).into_par_iter().take_any(10);
    assert_eq!(it.clone().count(), 10);
    assert_eq!(it.count(), 10);
    let it = (0..100u32)
        .into_par_iter()
        .map(|x| x + 1)
        .filter(|x| x % 2 == 0);
    assert_eq!(it.clone().collect::<Vec<_>>(), it.collect::<Vec<_>>());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn slice_views_as_std(v in prop::collection::vec(0u8..4, 0..600), size in 1usize..20) {
        let p = pool();
        p.install(|| {
            let a: Vec<&[u8]> = v.par_chunks_exact(size).collect();
            prop_assert_eq!(a, v.chunks_exact(size).collect::<Vec<_>>());
            prop_assert_eq!(v.par_chunks_exact(size).remainder(), v.chunks_exact(size).remainder());
            let a: Vec<&[u8]> = v.par_rchunks(size).collect();
            prop_assert_eq!(a, v.rchunks(size).collect::<Vec<_>>());
            let a: Vec<&[u8]> = v.par_rchunks_exact(size).collect();
            prop_assert_eq!(a, v.rchunks_exact(size).collect::<Vec<_>>());
            let a: Vec<&[u8]> = v.par_split(|&x| x == 0).collect();
            prop_assert_eq!(a, v.split(|&x| x == 0).collect::<Vec<_>>());
            let a: Vec<&[u8]> = v.par_split_inclusive(|&x| x == 0).collect();
            prop_assert_eq!(a, v.split_inclusive(|&x| x == 0).collect::<Vec<_>>());
            let a: Vec<&[u8]> = v.par_chunk_by(|a, b| a <= b).collect();
            prop_assert_eq!(a, v.chunk_by(|a, b| a <= b).collect::<Vec<_>>());
            let a: Vec<&[u8; 3]> = v.par_array_windows().collect();
            prop_assert_eq!(a, v.windows(3).map(|w| <&[u8; 3]>::try_from(w).unwrap()).collect::<Vec<_>>());
            let mut m = v.clone();
            let lens: Vec<usize> = m.par_split_mut(|&x| x == 0).map(|p| { p.reverse(); p.len() }).collect();
            prop_assert_eq!(lens, v.split(|&x| x == 0).map(<[u8]>::len).collect::<Vec<_>>());
            let mut want = v.clone();
            want.split_mut(|&x| x == 0).for_each(<[u8]>::reverse);
            prop_assert_eq!(m, want);
            let mut m = v.clone();
            m.par_chunk_by_mut(|a, b| a == b).for_each(|run| run[0] = 9);
            let mut want = v.clone();
            want.chunk_by_mut(|a, b| a == b).for_each(|run| run[0] = 9);
            prop_assert_eq!(m, want);
            Ok(())
        })?;
    }
}

#[test]
fn par_bridge_yields_every_item_once() {
    let p = pool();
    p.install(|| {
        let mut got: Vec<u32> = (0..10_000u32)
            .filter(|x| x % 3 != 0)
            .par_bridge()
            .map(|x| x + 1)
            .collect();
        got.sort_unstable();
        let want: Vec<u32> = (0..10_000u32)
            .filter(|x| x % 3 != 0)
            .map(|x| x + 1)
            .collect();
        assert_eq!(got, want);
        // `next` that itself runs pool work, nested in a parallel loop (rayon's recursion case).
        let mut nested: Vec<(usize, String)> = (0..2000usize)
            .into_par_iter()
            .flat_map(|i| {
                std::iter::once_with(move || throttle::join(move || i, move || i.to_string()))
                    .par_bridge()
            })
            .collect();
        nested.par_sort_unstable();
        assert_eq!(
            nested,
            (0..2000).map(|i| (i, i.to_string())).collect::<Vec<_>>()
        );
    });
}

#[test]
fn tuples_zip_their_members() {
    let a: Vec<u32> = (0..100).collect();
    let b: Vec<u32> = (0..90).map(|x| x * 2).collect();
    let v: Vec<(u32, u32, u32)> = (&a, &b, a.clone())
        .into_par_iter()
        .map(|(x, y, z)| (*x, *y, z))
        .collect();
    assert_eq!(v.len(), 90);
    assert_eq!(v[89], (89, 178, 89));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn reversed_adapters_as_std(a in prop::collection::vec(0u16..9, 0..300), b in prop::collection::vec(0u16..9, 0..300), size in 1usize..9) {
        let fwd: Vec<u16> = a.par_iter().interleave(&b).copied().collect();
        let back: Vec<u16> = a.par_iter().interleave(&b).copied().rev().collect();
        prop_assert_eq!(back, fwd.into_iter().rev().collect::<Vec<_>>());
        let chunks: Vec<Vec<u16>> = a.par_iter().copied().chunks(size).rev().collect();
        prop_assert_eq!(chunks, a.chunks(size).rev().map(<[u16]>::to_vec).collect::<Vec<_>>());
        let en: Vec<(usize, u16)> = a.par_iter().copied().enumerate().rev().collect();
        prop_assert_eq!(en, a.iter().copied().enumerate().rev().collect::<Vec<_>>());
    }
}

#[test]
fn either_runs_the_side_it_holds() {
    let v: Vec<u32> = (0..10).collect();
    let pick = |left: bool| -> Either<throttle::vec::IntoIter<u32>, throttle::range::Iter<u32>> {
        if left {
            Either::Left(v.clone().into_par_iter())
        } else {
            Either::Right((100..105u32).into_par_iter())
        }
    };
    assert_eq!(pick(true).sum::<u32>(), 45);
    assert_eq!(pick(false).collect::<Vec<_>>(), [100, 101, 102, 103, 104]);
    let mut sides: Either<Vec<u32>, Vec<u32>> = Either::Right(vec![]);
    sides.par_extend(0..3u32);
    assert_eq!(sides, Either::Right(vec![0, 1, 2]));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    /// Every piece holds between `min` and `max + min - 1` items (rayon's bounds), counted by
    /// a fold per piece.
    #[test]
    fn pieces_respect_min_and_max_len(n in 1usize..20_000, min in 1usize..300, max in 1usize..300) {
        let p = pool();
        let counts: Vec<usize> = p.install(|| {
            (0..n).into_par_iter().with_min_len(min).with_max_len(max).fold(|| 0, |c, _| c + 1).collect()
        });
        let lo = min.min(n);
        let hi = max.max(lo + lo - 1);
        prop_assert_eq!(counts.iter().sum::<usize>(), n);
        prop_assert!(counts.iter().all(|&c| c >= lo && c <= hi), "{:?} not in {}..={}", counts, lo, hi);
    }
}

#[test]
fn skipped_items_still_run_their_adapters() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let seen = AtomicUsize::new(0);
    let n = (0..1000u32)
        .into_par_iter()
        .inspect(|_| {
            seen.fetch_add(1, Ordering::Relaxed);
        })
        .skip(600)
        .count();
    assert_eq!((n, seen.into_inner()), (400, 1000));
}

/// rayon's `ParallelSliceMut` has one required method: a type of the user's that provides only
/// `as_parallel_slice_mut` gets every sort, `par_sort_by_cached_key` included (a stable sort
/// that computes each key once).
#[test]
fn slice_traits_need_only_the_slice() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use throttle::slice::ParallelSliceMut;

    struct Deck(Vec<(u32, u32)>);
    impl ParallelSliceMut<(u32, u32)> for Deck {
        fn as_parallel_slice_mut(&mut self) -> &mut [(u32, u32)] {
            &mut self.0
        }
    }

    let cards: Vec<(u32, u32)> = (0..10_000u32).map(|i| ((i * 7919) % 13, i)).collect();
    let mut want = cards.clone();
    want.sort_by_key(|c| c.0);
    let calls = AtomicUsize::new(0);
    let mut deck = Deck(cards);
    pool().install(|| {
        deck.par_sort_by_cached_key(|c| {
            calls.fetch_add(1, Ordering::Relaxed);
            c.0
        })
    });
    assert_eq!(deck.0, want, "stable, as sort_by_key");
    assert_eq!(calls.into_inner(), 10_000, "one key per item");
    deck.par_sort_unstable_by_key(|c| std::cmp::Reverse(c.1));
    assert!(deck.0.windows(2).all(|w| w[0].1 > w[1].1));
}
