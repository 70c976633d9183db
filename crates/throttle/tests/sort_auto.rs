//! "If any at all" for the parallel sorts: called from outside any pool while the
//! global pool is in auto mode, a `par_sort*` call site remembers what its sorts cost per item
//! and runs a sort too short to pay for threads on the calling thread alone, as the standard
//! library's sort. Its own process: the global pool is per process, and the checks read the
//! global pool's counters, so everything runs in one test (as `iter_auto.rs`).

use std::time::Duration;
use throttle::prelude::*;

/// Sorts of the global pool that auto mode's call-site memory ran the serial way (on the
/// calling thread alone, in the pool's context).
fn serial_calls() -> u64 {
    throttle::global_pool().unwrap().stats().serial_calls
}

/// Time the global pool spent on work: its outside callers' and its workers' busy time. A sort
/// on the calling thread alone leaves it unchanged.
fn pool_busy() -> Duration {
    let s = throttle::global_pool().unwrap().stats();
    s.busy_outside + s.busy_per_worker.iter().sum::<Duration>()
}

/// `n` pseudo-random numbers (xorshift), reproducible from `seed`.
fn random(n: usize, mut seed: u64) -> Vec<u64> {
    (0..n)
        .map(|_| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        })
        .collect()
}

/// Pairs with many equal keys, so that a stable sort's order of equals is checked.
fn keyed(n: usize, seed: u64) -> Vec<(u8, u32)> {
    random(n, seed)
        .into_iter()
        .enumerate()
        .map(|(i, x)| ((x % 5) as u8, i as u32))
        .collect()
}

/// Each sort below is one call site.
fn tiny_unstable(v: &mut [u64]) {
    v.par_sort_unstable();
}

fn tiny_stable(v: &mut [(u8, u32)]) {
    v.par_sort_by_key(|p| p.0);
}

fn long_unstable(v: &mut [u64]) {
    v.par_sort_unstable();
}

#[test]
fn sorts_remember_their_call_sites_in_auto_mode() {
    throttle::Pool::builder().threads(2).build_global().unwrap();
    let pool = throttle::global_pool().unwrap();

    // Fixed mode: no memory, every sort runs in the pool, even a tiny one.
    for call in 0..100 {
        let mut v = random(8, call + 1);
        let before = pool_busy();
        tiny_unstable(&mut v);
        assert!(pool_busy() > before, "fixed mode ran a sort serially");
        assert!(v.windows(2).all(|w| w[0] <= w[1]));
    }

    pool.set_concurrency_auto().unwrap();

    // (1) and (3): three call sites, interleaved. The tiny ones (8 items; stable and unstable)
    // learn to sort serially; the long one keeps sorting in the pool. "Long" is sized on this
    // machine so that a serial sort takes at least 8 ms: split over the pool's 2 threads, a
    // call still takes over 1 ms, where threads always pay and the site stops exploring the
    // serial way.
    let mut long = 1usize << 16;
    // Timed in the thread's CPU time, the sort's own time whatever the load, and the least of
    // three.
    let (long_input, long_want) = loop {
        let input = random(long, 0x2545_F491_4F6C_DD1D);
        let mut want = input.clone();
        let least = (0..3)
            .map(|_| {
                want.clone_from(&input);
                let t = throttle_probe::thread_cpu_time();
                want.sort_unstable();
                throttle_probe::thread_cpu_time() - t
            })
            .min()
            .unwrap();
        if least >= Duration::from_millis(8) {
            break (input, want);
        }
        long *= 2;
    };
    // Each tiny site has learned when 48 of its last 64 calls ran serially (a few explore the
    // pool). The sites time their calls, and on a loaded host a preempted call misleads one for
    // a while, so the calls go on until both hold (a hang guard of two minutes ends them); every
    // long call meanwhile must run in the pool.
    let (mut unstable_recent, mut stable_recent) = (Vec::new(), Vec::new());
    let (mut long_calls, mut long_in_pool) = (0, 0);
    let learned = |recent: &[bool]| {
        let window = &recent[recent.len().saturating_sub(64)..];
        (window.len() == 64, window.iter().filter(|&&s| s).count())
    };
    let start = std::time::Instant::now();
    for call in 0..u64::MAX {
        let mut v = random(8, call + 1);
        let mut want = v.clone();
        want.sort_unstable();
        let before = serial_calls();
        tiny_unstable(&mut v);
        if call >= 136 {
            unstable_recent.push(serial_calls() == before + 1);
        }
        assert_eq!(v, want);

        let mut v = keyed(8, call + 1);
        let mut want = v.clone();
        want.sort_by_key(|p| p.0);
        let before = serial_calls();
        tiny_stable(&mut v);
        if call >= 136 {
            stable_recent.push(serial_calls() == before + 1);
        }
        assert_eq!(v, want, "a stable sort changed the order of equal keys");

        if call % 20 == 0 {
            let mut v = long_input.clone();
            let before = serial_calls();
            long_unstable(&mut v);
            long_calls += 1;
            if serial_calls() == before {
                long_in_pool += 1;
            }
            assert!(v == long_want, "the long sort sorted wrong");
        }
        let (unstable_full, unstable_serial) = learned(&unstable_recent);
        let (stable_full, stable_serial) = learned(&stable_recent);
        if unstable_full && stable_full && unstable_serial >= 48 && stable_serial >= 48 {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "after {call} calls, {unstable_serial} of the last 64 tiny unstable sorts and \
             {stable_serial} of the last 64 tiny stable sorts ran serially"
        );
    }
    assert_eq!(long_in_pool, long_calls, "the long sort ran serially");

    // (2) Every sort method equals the standard library's sort, whichever way each call runs:
    // sizes 0..48 (serial after a while) and two above the parallel threshold.
    for call in 0..200u64 {
        let n = match call % 50 {
            0 => 5000,
            1 => 20_000,
            k => k as usize - 2,
        };
        let seed = call + 7;
        let input = keyed(n, seed);

        let mut want = input.clone();
        want.sort_by_key(|p| p.0);
        let mut got = input.clone();
        got.par_sort_by_key(|p| p.0);
        assert_eq!(got, want, "par_sort_by_key, {n} items");
        let mut got = input.clone();
        got.par_sort_by(|a, b| a.0.cmp(&b.0));
        assert_eq!(got, want, "par_sort_by, {n} items");

        let mut want = input.clone();
        want.sort();
        let mut got = input.clone();
        got.par_sort();
        assert_eq!(got, want, "par_sort, {n} items");
        // Distinct items (the second field is the index): an unstable sort's result is unique.
        let mut got = input.clone();
        got.par_sort_unstable();
        assert_eq!(got, want, "par_sort_unstable, {n} items");
        let mut got = input.clone();
        got.par_sort_unstable_by(|a, b| b.cmp(a));
        got.reverse();
        assert_eq!(got, want, "par_sort_unstable_by, {n} items");
        let mut got = input.clone();
        got.par_sort_unstable_by_key(|p| (p.0, p.1));
        assert_eq!(got, want, "par_sort_unstable_by_key, {n} items");
    }

    // Inside a pool the sorts do not consult the memory: they are plain pool work there.
    let local = throttle::Pool::builder()
        .threads(2)
        .auto_concurrency()
        .build()
        .unwrap();
    for call in 0..50 {
        let mut v = random(8, call + 1);
        let mut want = v.clone();
        want.sort_unstable();
        local.install(|| tiny_unstable(&mut v));
        assert_eq!(v, want);
    }
}
