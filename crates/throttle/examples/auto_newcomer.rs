//! What a newcomer to auto mode does first: build a pool in auto mode and call a loop again and
//! again. Prints every decision of the controller, how many times it changed `k`, and the time
//! per call against the same loop at fixed `k` (all threads), the two interleaved in rounds.
//!
//! `cargo run --release -p throttle --example auto_newcomer -- [SECONDS_PER_ROUND] [ROUNDS] [LOOP]`
//! (defaults: 1 s, 3 rounds, `map_reduce`). `LOOP` is `map_reduce` (`map_reduce(0..20_000)`,
//! about 2 ms a call) or `par_iter` (`install(|| (0..1_000_000).into_par_iter().map(..).sum())`,
//! about 100 ms a call). The rounds of the auto pool come first, so `-- 3 1` shows its first
//! 3 s. Not a test: it measures time, and this host is noisy.

use std::hint::black_box;
use std::time::{Duration, Instant};
use throttle::prelude::*;

/// A few hundred ns of arithmetic per index.
fn work(i: usize) -> u64 {
    let mut x = i as u64 | 1;
    for _ in 0..64 {
        // Not an affine map, so the compiler cannot fold the 64 rounds into one.
        x ^= x >> 29;
        x = x.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    }
    x >> 60
}

#[derive(Clone, Copy)]
enum Loop {
    MapReduce,
    ParIter,
}

/// One call of the loop in `pool`.
fn call(pool: &throttle::Pool, l: Loop) -> u64 {
    match l {
        Loop::MapReduce => pool.map_reduce(0..20_000, || 0u64, work, |a, b| a + b),
        Loop::ParIter => pool.install(|| (0..1_000_000usize).into_par_iter().map(work).sum()),
    }
}

/// Calls the loop for `span` and returns (calls, mean time per call).
fn round(pool: &throttle::Pool, l: Loop, span: Duration) -> (u64, Duration) {
    let start = Instant::now();
    let mut calls = 0;
    while start.elapsed() < span {
        black_box(call(pool, l));
        calls += 1;
    }
    (calls, start.elapsed() / calls.max(1) as u32)
}

fn main() {
    let mut args = std::env::args().skip(1);
    let secs: f64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(1.0);
    let rounds: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(3);
    let l = match args.next().as_deref() {
        None | Some("map_reduce") => Loop::MapReduce,
        Some("par_iter") => Loop::ParIter,
        Some(other) => {
            eprintln!("invalid value '{other}' for LOOP: must be map_reduce or par_iter");
            std::process::exit(2);
        }
    };
    let span = Duration::from_secs_f64(secs);
    let threads = throttle::default_threads();
    let auto = throttle::Pool::builder()
        .auto_concurrency()
        .build()
        .expect("an auto pool");
    let fixed = throttle::Pool::new(threads).expect("a fixed pool");
    let (mut auto_calls, mut fixed_calls) = (0u64, 0u64);
    let (mut auto_time, mut fixed_time) = (Duration::ZERO, Duration::ZERO);
    for r in 0..rounds {
        let before = auto.stats();
        let (na, ta) = round(&auto, l, span);
        let s = auto.stats().since(&before);
        let (nf, tf) = round(&fixed, l, span);
        (auto_calls, auto_time) = (auto_calls + na, auto_time + ta * na as u32);
        (fixed_calls, fixed_time) = (fixed_calls + nf, fixed_time + tf * nf as u32);
        println!(
            "round {r}: auto {ta:?} per call ({na} calls, k now {}; the pool counted {} items, \
             {} tasks, {} serial calls, mean busy threads {:.2}), fixed k = {threads} {tf:?} per \
             call ({nf} calls); auto ÷ fixed = {:.3}",
            auto.concurrency(),
            s.items,
            s.tasks,
            s.serial_calls,
            s.average_concurrency(),
            ta.as_secs_f64() / tf.as_secs_f64()
        );
    }
    let log = auto.controller_log();
    let changes = log.iter().filter(|e| e.old_k != e.new_k).count();
    for e in &log {
        println!(
            "  {:>8.3} s  k {} -> {}  {:<16}  {:.0}/s",
            e.at.as_secs_f64(),
            e.old_k,
            e.new_k,
            e.reason.to_string(),
            e.throughput
        );
    }
    let per = |t: Duration, n: u64| t.as_secs_f64() / n.max(1) as f64;
    println!(
        "{} decisions, {changes} changes of k in {:.1} s of auto rounds; per call over all \
         rounds: auto {:.3} ms, fixed k = {threads} {:.3} ms, auto ÷ fixed = {:.3}",
        log.len(),
        secs * rounds as f64,
        per(auto_time, auto_calls) * 1e3,
        per(fixed_time, fixed_calls) * 1e3,
        per(auto_time, auto_calls) / per(fixed_time, fixed_calls)
    );
}
