//! Parallel iterators against their sequential counterparts: every adapter and consumer, on
//! random lengths (0, 1, below and above the split sizes), while another thread changes the
//! pool's concurrency limit at random.

// The tests compare `par_sort_by` with `sort_by` on purpose.
#![allow(clippy::unnecessary_sort_by)]

use proptest::prelude::*;
use std::collections::HashMap;
use std::num::Wrapping;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;
use std::time::Duration;
use throttle::prelude::*;
use throttle::Pool;

const THREADS: usize = 4;

/// One pool for all tests, whose limit a background thread changes every few hundred µs.
fn pool() -> &'static Pool {
    static POOL: OnceLock<Pool> = OnceLock::new();
    POOL.get_or_init(|| {
        std::thread::spawn(|| {
            let mut x = 0x9E37_79B9_7F4A_7C15u64;
            loop {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                if let Some(p) = POOL.get() {
                    p.set_concurrency(1 + (x % THREADS as u64) as usize)
                        .unwrap();
                }
                std::thread::sleep(Duration::from_micros(200 + x % 500));
            }
        });
        Pool::new(THREADS).unwrap()
    })
}

fn len() -> impl Strategy<Value = usize> {
    prop_oneof![
        Just(0usize),
        Just(1usize),
        2..64usize,
        64..3000usize,
        20_000..40_000usize
    ]
}

fn data() -> impl Strategy<Value = Vec<u32>> {
    len().prop_flat_map(|n| proptest::collection::vec(0..1000u32, n))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(40))]

    #[test]
    fn map_collect_sum_count(v in data()) {
        let p = pool();
        let seq: Vec<u64> = v.iter().map(|&x| u64::from(x) * 3).collect();
        let par: Vec<u64> = p.install(|| v.par_iter().map(|&x| u64::from(x) * 3).collect());
        prop_assert_eq!(&par, &seq);
        prop_assert_eq!(p.install(|| v.par_iter().map(|&x| u64::from(x)).sum::<u64>()),
                        v.iter().map(|&x| u64::from(x)).sum::<u64>());
        prop_assert_eq!(p.install(|| v.par_iter().count()), v.len());
        let wp: Wrapping<u64> = p.install(|| v.par_iter().map(|&x| Wrapping(u64::from(x) | 1)).product());
        prop_assert_eq!(wp, v.iter().map(|&x| Wrapping(u64::from(x) | 1)).product());
    }

    #[test]
    fn filters_and_flat_maps(v in data()) {
        let p = pool();
        let f: Vec<u32> = p.install(|| v.par_iter().copied().filter(|x| x % 3 == 0).collect());
        prop_assert_eq!(f, v.iter().copied().filter(|x| x % 3 == 0).collect::<Vec<_>>());
        let fm: Vec<u32> = p.install(|| v.par_iter().filter_map(|&x| (x % 5 == 1).then_some(x / 5)).collect());
        prop_assert_eq!(fm, v.iter().filter_map(|&x| (x % 5 == 1).then_some(x / 5)).collect::<Vec<_>>());
        let fl: Vec<u32> = p.install(|| v.par_iter().flat_map_iter(|&x| 0..x % 4).collect());
        prop_assert_eq!(fl, v.iter().flat_map(|&x| 0..x % 4).collect::<Vec<_>>());
        let c = p.install(|| v.par_iter().filter(|&&x| x > 500).count());
        prop_assert_eq!(c, v.iter().filter(|&&x| x > 500).count());
        let cl: Vec<u32> = p.install(|| v.par_iter().cloned().with_min_len(7).collect());
        prop_assert_eq!(&cl, &v);
        let seen = AtomicUsize::new(0);
        let n = p.install(|| v.par_iter().inspect(|_| { seen.fetch_add(1, Ordering::Relaxed); }).count());
        prop_assert_eq!((n, seen.into_inner()), (v.len(), v.len()));
    }

    #[test]
    fn indexed_adapters(v in data(), w in data(), size in 1..50usize) {
        let p = pool();
        let e: Vec<(usize, u32)> = p.install(|| v.par_iter().copied().enumerate().collect());
        prop_assert_eq!(e, v.iter().copied().enumerate().collect::<Vec<_>>());
        let z: Vec<(u32, u32)> = p.install(|| v.par_iter().copied().zip(w.par_iter().copied()).collect());
        prop_assert_eq!(z, v.iter().copied().zip(w.iter().copied()).collect::<Vec<_>>());
        let ze: Vec<(usize, (u32, &u32))> = p.install(|| v.par_iter().copied().zip(&w).enumerate().collect());
        prop_assert_eq!(ze, v.iter().copied().zip(&w).enumerate().collect::<Vec<_>>());
        let ch: Vec<Vec<u32>> = p.install(|| v.par_iter().copied().chunks(size).collect());
        prop_assert_eq!(ch, v.chunks(size).map(<[u32]>::to_vec).collect::<Vec<_>>());
        prop_assert_eq!(p.install(|| v.par_iter().map(|x| x + 1).len()), v.len());
    }

    #[test]
    fn chain_take_skip_flatten_extend(v in data(), w in data(), n in 0..50_000usize) {
        let p = pool();
        let c: Vec<u32> = p.install(|| v.par_iter().copied().chain(w.par_iter().copied()).collect());
        prop_assert_eq!(&c, &v.iter().chain(&w).copied().collect::<Vec<_>>());
        let ce: Vec<(usize, u32)> = p.install(|| v.par_iter().copied().chain(w.clone()).enumerate().filter(|(i, _)| i % 3 == 0).collect());
        prop_assert_eq!(ce, v.iter().chain(&w).copied().enumerate().filter(|(i, _)| i % 3 == 0).collect::<Vec<_>>());
        let cs = p.install(|| v.par_iter().filter(|&&x| x % 2 == 0).chain(w.par_iter()).count());
        prop_assert_eq!(cs, v.iter().filter(|&&x| x % 2 == 0).count() + w.len());
        let t: Vec<u32> = p.install(|| v.clone().into_par_iter().take(n).collect());
        prop_assert_eq!(t, v.iter().copied().take(n).collect::<Vec<_>>());
        let s: Vec<u32> = p.install(|| v.par_iter().copied().skip(n).collect());
        prop_assert_eq!(s, v.iter().copied().skip(n).collect::<Vec<_>>());
        let fm: Vec<u32> = p.install(|| v.par_iter().flat_map(|&x| (0..x % 5).into_par_iter()).collect());
        prop_assert_eq!(fm, v.iter().flat_map(|&x| 0..x % 5).collect::<Vec<_>>());
        let fl: Vec<u32> = p.install(|| v.par_iter().map(|&x| (x % 3 == 0).then_some(x)).flatten_iter().collect());
        prop_assert_eq!(fl, v.iter().filter(|&&x| x % 3 == 0).copied().collect::<Vec<_>>());
        let mut e = w.clone();
        p.install(|| e.par_extend(v.par_iter().map(|x| x + 1)));
        prop_assert_eq!(e, w.iter().copied().chain(v.iter().map(|x| x + 1)).collect::<Vec<_>>());
    }

    #[test]
    fn rev_step_by_and_try(v in data(), step in 1..70usize, bad in 0..1200u32) {
        let p = pool();
        let r: Vec<u32> = p.install(|| v.par_iter().copied().rev().collect());
        prop_assert_eq!(r, v.iter().copied().rev().collect::<Vec<_>>());
        let rm: Vec<(usize, u32)> = p.install(|| v.clone().into_par_iter().map(|x| x * 2).rev().enumerate().collect());
        prop_assert_eq!(rm, v.iter().map(|x| x * 2).rev().enumerate().collect::<Vec<_>>());
        let st: Vec<u32> = p.install(|| v.par_iter().copied().step_by(step).collect());
        prop_assert_eq!(st, v.iter().copied().step_by(step).collect::<Vec<_>>());
        let sr: Vec<(usize, u32)> = p.install(|| v.par_iter().copied().rev().step_by(step).enumerate().collect());
        prop_assert_eq!(sr, v.iter().copied().rev().step_by(step).enumerate().collect::<Vec<_>>());
        let n = v.len();
        let rr: Vec<usize> = p.install(|| (0..n).into_par_iter().step_by(step).rev().collect());
        prop_assert_eq!(rr, (0..n).step_by(step).rev().collect::<Vec<_>>());
        // try_for_each: an error iff some item is `bad`; which error is unspecified.
        let seen = AtomicUsize::new(0);
        let t: Result<(), u32> = p.install(|| v.par_iter().try_for_each(|&x| {
            seen.fetch_add(1, Ordering::Relaxed);
            if x == bad { Err(x) } else { Ok(()) }
        }));
        prop_assert_eq!(t, if v.contains(&bad) { Err(bad) } else { Ok(()) });
        if !v.contains(&bad) {
            prop_assert_eq!(seen.load(Ordering::Relaxed), v.len());
        }
        let o: Option<()> = p.install(|| v.par_iter().try_for_each(|&x| (x != bad).then_some(())));
        prop_assert_eq!(o, (!v.contains(&bad)).then_some(()));
        // try_reduce: a checked sum fails iff the sequential checked sum does (u32 items below
        // 1000, so use a small cap to make both cases happen).
        let cap = 1000 * (bad as u64 % 64);
        let checked = |a: u64, b: u64| (a + b <= cap).then_some(a + b);
        let par: Option<u64> = p.install(|| v.par_iter().map(|&x| Some(x as u64)).try_reduce(|| 0, checked));
        let seq: Option<u64> = v.iter().try_fold(0u64, |a, &x| checked(a, x as u64));
        prop_assert_eq!(par, seq);
        let res: Result<u64, u32> = p.install(|| v.par_iter().map(|&x| if x == bad { Err(x) } else { Ok(x as u64) }).try_reduce(|| 0, |a, b| Ok(a + b)));
        let want: Result<u64, u32> = v.iter().map(|&x| if x == bad { Err(x) } else { Ok(x as u64) }).sum();
        prop_assert_eq!(res, want);
    }

    #[test]
    fn slices(v in data(), size in 1..50usize) {
        let p = pool();
        let sums: Vec<u32> = p.install(|| v.par_chunks(size).map(|c| c.iter().sum()).collect());
        prop_assert_eq!(sums, v.chunks(size).map(|c| c.iter().sum()).collect::<Vec<u32>>());
        let wins: Vec<u32> = p.install(|| v.par_windows(size).map(|w| w[0] + w[w.len() - 1]).collect());
        prop_assert_eq!(wins, v.windows(size).map(|w| w[0] + w[w.len() - 1]).collect::<Vec<_>>());
        let mut a = v.clone();
        p.install(|| a.par_iter_mut().for_each(|x| *x = x.wrapping_mul(7) + 1));
        prop_assert_eq!(&a, &v.iter().map(|x| x.wrapping_mul(7) + 1).collect::<Vec<_>>());
        let mut b = v.clone();
        p.install(|| b.par_chunks_mut(size).enumerate().for_each(|(i, c)| c.iter_mut().for_each(|x| *x += i as u32)));
        let mut b2 = v.clone();
        b2.chunks_mut(size).enumerate().for_each(|(i, c)| c.iter_mut().for_each(|x| *x += i as u32));
        prop_assert_eq!(b, b2);
    }

    #[test]
    fn ranges(lo in -50_000i64..50_000, n in len()) {
        let p = pool();
        let hi = lo + n as i64;
        prop_assert_eq!(p.install(|| (lo..hi).into_par_iter().sum::<i64>()), (lo..hi).sum::<i64>());
        let (l32, h32) = (lo as i32, hi as i32);
        prop_assert_eq!(p.install(|| (l32..h32).into_par_iter().map(i64::from).sum::<i64>()), (l32..h32).map(i64::from).sum::<i64>());
        let u = lo.unsigned_abs();
        let un = u + n as u64;
        prop_assert_eq!(p.install(|| (u..un).into_par_iter().collect::<Vec<u64>>()), (u..un).collect::<Vec<u64>>());
        let (u32lo, u32hi) = (u as u32, un as u32);
        prop_assert_eq!(p.install(|| (u32lo..u32hi).into_par_iter().count()), (u32lo..u32hi).count());
        prop_assert_eq!(p.install(|| (0..n).into_par_iter().filter(|i| i % 7 == 0).count()), (0..n).filter(|i| i % 7 == 0).count());
        // Empty and reversed ranges.
        prop_assert_eq!(p.install(|| (hi..lo).into_par_iter().count()), 0);
    }

    #[test]
    fn reductions_keep_order_and_ties(v in data()) {
        let p = pool();
        // Non-commutative: concatenation shows the order.
        let s: String = p.install(|| v.par_iter().map(|x| (x % 10).to_string()).reduce(String::new, |a, b| a + &b));
        prop_assert_eq!(s, v.iter().map(|x| (x % 10).to_string()).collect::<String>());
        let rw = p.install(|| v.par_iter().map(|x| vec![*x]).reduce_with(|mut a, b| { a.extend(b); a }));
        prop_assert_eq!(rw, (!v.is_empty()).then(|| v.clone()));
        // Ties: equal keys, different positions.
        let e: Vec<(usize, u32)> = v.iter().copied().enumerate().collect();
        prop_assert_eq!(p.install(|| e.par_iter().min_by_key(|p| p.1 % 10)), e.iter().min_by_key(|p| p.1 % 10));
        prop_assert_eq!(p.install(|| e.par_iter().max_by_key(|p| p.1 % 10)), e.iter().max_by_key(|p| p.1 % 10));
        prop_assert_eq!(p.install(|| e.par_iter().min_by(|a, b| (a.1 / 100).cmp(&(b.1 / 100)))), e.iter().min_by(|a, b| (a.1 / 100).cmp(&(b.1 / 100))));
        prop_assert_eq!(p.install(|| e.par_iter().max_by(|a, b| (a.1 / 100).cmp(&(b.1 / 100)))), e.iter().max_by(|a, b| (a.1 / 100).cmp(&(b.1 / 100))));
        prop_assert_eq!(p.install(|| v.par_iter().min()), v.iter().min());
        prop_assert_eq!(p.install(|| v.par_iter().max()), v.iter().max());
        let folded: u64 = p.install(|| v.par_iter().fold(|| 0u64, |a, &x| a + u64::from(x)).sum());
        prop_assert_eq!(folded, v.iter().map(|&x| u64::from(x)).sum::<u64>());
        let hist = p.install(|| v.par_iter().fold(|| [0usize; 10], |mut h, &x| { h[(x % 10) as usize] += 1; h })
            .reduce(|| [0usize; 10], |mut a, b| { for i in 0..10 { a[i] += b[i]; } a }));
        let mut expect = [0usize; 10];
        v.iter().for_each(|&x| expect[(x % 10) as usize] += 1);
        prop_assert_eq!(hist, expect);
    }

    #[test]
    fn searches(v in data(), target in 0..1000u32) {
        let p = pool();
        prop_assert_eq!(p.install(|| v.par_iter().any(|&x| x == target)), v.contains(&target));
        prop_assert_eq!(p.install(|| v.par_iter().all(|&x| x != target)), !v.contains(&target));
        prop_assert_eq!(p.install(|| v.par_iter().find_first(|&&x| x >= target)), v.iter().find(|&&x| x >= target));
        prop_assert_eq!(p.install(|| v.par_iter().position_first(|&x| x >= target)), v.iter().position(|&x| x >= target));
        let first_map = p.install(|| v.par_iter().find_map_first(|&x| (x % 97 == target % 97).then_some(x * 2)));
        prop_assert_eq!(first_map, v.iter().find_map(|&x| (x % 97 == target % 97).then_some(x * 2)));
        match p.install(|| v.par_iter().find_any(|&&x| x >= target)) {
            Some(&x) => prop_assert!(x >= target),
            None => prop_assert!(v.iter().all(|&x| x < target)),
        }
        match p.install(|| v.par_iter().position_any(|&x| x >= target)) {
            Some(i) => prop_assert!(v[i] >= target),
            None => prop_assert!(v.iter().all(|&x| x < target)),
        }
    }

    #[test]
    fn init_unzip_partition_collections(v in data()) {
        let p = pool();
        let inits = AtomicUsize::new(0);
        let m: Vec<u32> = p.install(|| v.par_iter().map_init(|| { inits.fetch_add(1, Ordering::Relaxed); 5u32 }, |s, &x| { *s += 1; x + *s - *s }).collect());
        prop_assert_eq!(&m, &v);
        prop_assert!(inits.into_inner() <= v.len().max(1) + 1);
        let total = AtomicUsize::new(0);
        p.install(|| v.par_iter().for_each_init(Vec::new, |buf: &mut Vec<u32>, &x| { buf.push(x); total.fetch_add(x as usize, Ordering::Relaxed); }));
        prop_assert_eq!(total.into_inner(), v.iter().map(|&x| x as usize).sum::<usize>());
        let (a, b): (Vec<u32>, Vec<usize>) = p.install(|| v.par_iter().enumerate().map(|(i, &x)| (x, i)).unzip());
        prop_assert_eq!(&a, &v);
        prop_assert_eq!(b, (0..v.len()).collect::<Vec<_>>());
        let (ev, od): (Vec<u32>, Vec<u32>) = p.install(|| v.par_iter().partition(|&&x| x % 2 == 0));
        let (sev, sod): (Vec<u32>, Vec<u32>) = v.iter().partition(|&&x| x % 2 == 0);
        prop_assert_eq!((ev, od), (sev, sod));
        let counts: HashMap<u32, usize> = p.install(|| v.par_iter().map(|&x| (x % 13, 1)).collect::<Vec<_>>())
            .into_iter().fold(HashMap::new(), |mut m, (k, c)| { *m.entry(k).or_insert(0) += c; m });
        let hm: HashMap<u32, u32> = p.install(|| v.par_iter().map(|&x| (x, x + 1)).collect());
        prop_assert_eq!(hm, v.iter().map(|&x| (x, x + 1)).collect::<HashMap<_, _>>());
        prop_assert_eq!(counts.values().sum::<usize>(), v.len());
        let s: String = p.install(|| v.par_iter().map(|x| char::from(b'a' + (x % 26) as u8)).collect());
        prop_assert_eq!(s, v.iter().map(|x| char::from(b'a' + (x % 26) as u8)).collect::<String>());
        let r: Result<Vec<u32>, u32> = p.install(|| v.par_iter().map(|&x| if x == 999 { Err(x) } else { Ok(x) }).collect());
        prop_assert_eq!(r, v.iter().map(|&x| if x == 999 { Err(x) } else { Ok(x) }).collect::<Result<Vec<_>, _>>());
    }

    #[test]
    fn owned_vecs(v in data()) {
        let p = pool();
        let strings: Vec<String> = v.iter().map(|x| x.to_string()).collect();
        let lens: Vec<usize> = p.install(|| strings.clone().into_par_iter().map(|s| s.len()).collect());
        prop_assert_eq!(lens, strings.iter().map(String::len).collect::<Vec<_>>());
        let back: Vec<String> = p.install(|| strings.clone().into_par_iter().collect());
        prop_assert_eq!(&back, &strings);
        // A short-circuit leaves items behind; they are dropped (Miri/ASan would catch a leak).
        let found = p.install(|| strings.clone().into_par_iter().find_first(|s| s.ends_with('7')));
        prop_assert_eq!(found.as_ref(), strings.iter().find(|s| s.ends_with('7')));
    }

    #[test]
    fn sorts(v in data()) {
        let p = pool();
        let mut a = v.clone();
        p.install(|| a.par_sort());
        let mut e = v.clone();
        e.sort();
        prop_assert_eq!(&a, &e);
        let mut a = v.clone();
        p.install(|| a.par_sort_unstable());
        prop_assert_eq!(&a, &e);
        let mut a = v.clone();
        p.install(|| a.par_sort_unstable_by(|x, y| y.cmp(x)));
        e.reverse();
        prop_assert_eq!(&a, &e);
        // Stability: sort pairs by a coarse key; the index shows the order of equals.
        let pairs: Vec<(u32, usize)> = v.iter().copied().map(|x| x % 8).zip(0..).collect();
        let mut a = pairs.clone();
        p.install(|| a.par_sort_by_key(|q| q.0));
        let mut e = pairs.clone();
        e.sort_by_key(|q| q.0);
        prop_assert_eq!(&a, &e);
        let mut a = pairs.clone();
        p.install(|| a.par_sort_by(|x, y| y.0.cmp(&x.0)));
        let mut e = pairs.clone();
        e.sort_by(|x, y| y.0.cmp(&x.0));
        prop_assert_eq!(&a, &e);
        let mut a = pairs.clone();
        p.install(|| a.par_sort_unstable_by_key(|q| q.0));
        prop_assert!(a.windows(2).all(|w| w[0].0 <= w[1].0));
    }
}

/// Outside any `install`, iterators run on the global pool.
#[test]
fn runs_on_the_global_pool_too() {
    let v: Vec<u64> = (0..10_000).collect();
    assert_eq!(v.par_iter().sum::<u64>(), 49_995_000);
    assert_eq!(
        throttle::current_num_threads(),
        throttle::global_pool().unwrap().threads()
    );
}

/// Nested parallel iterators (a `par_iter` in a `par_iter`'s closure) give the nested result.
#[test]
fn nested_iterators() {
    let rows: Vec<Vec<u64>> = (0..200).map(|r| (0..r * 17 % 300).collect()).collect();
    let expect: u64 = rows.iter().map(|r| r.iter().sum::<u64>()).sum();
    let got: u64 = pool().install(|| rows.par_iter().map(|r| r.par_iter().sum::<u64>()).sum());
    assert_eq!(got, expect);
}

/// Zero-sized items go through the owned-`Vec` source and the in-place collect.
#[test]
fn zero_sized_items() {
    let p = pool();
    assert_eq!(
        p.install(|| vec![(); 10_000].into_par_iter().count()),
        10_000
    );
    let units: Vec<()> = p.install(|| (0..5000u32).into_par_iter().map(|_| ()).collect());
    assert_eq!(units.len(), 5000);
    let empty: Vec<u8> = p.install(|| Vec::<u8>::new().into_par_iter().collect());
    assert!(empty.is_empty());
}
