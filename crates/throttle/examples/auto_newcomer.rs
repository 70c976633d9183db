//! What a newcomer to auto mode does first: build a pool in auto mode and call `map_reduce`
//! over 20 000 indices again and again. Prints every decision of the controller, how many
//! times it changed `k`, and the time per call against the same loop at fixed `k` (all threads),
//! the two interleaved in rounds.
//!
//! `cargo run --release -p throttle --example auto_newcomer -- [SECONDS_PER_ROUND] [ROUNDS]`
//! (defaults: 1 s, 3 rounds). Not a test: it measures time, and this host is noisy.

use std::hint::black_box;
use std::time::{Duration, Instant};

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

/// Calls the loop for `span` and returns (calls, mean time per call).
fn round(pool: &throttle::Pool, span: Duration) -> (u64, Duration) {
    let start = Instant::now();
    let mut calls = 0;
    while start.elapsed() < span {
        let s = pool.map_reduce(0..20_000, || 0u64, work, |a, b| a + b);
        black_box(s);
        calls += 1;
    }
    (calls, start.elapsed() / calls.max(1) as u32)
}

fn main() {
    let mut args = std::env::args().skip(1);
    let secs: f64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(1.0);
    let rounds: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(3);
    let span = Duration::from_secs_f64(secs);
    let threads = throttle::default_threads();
    let auto = throttle::Pool::builder()
        .auto_concurrency()
        .build()
        .expect("an auto pool");
    let fixed = throttle::Pool::new(threads).expect("a fixed pool");
    for r in 0..rounds {
        let (na, ta) = round(&auto, span);
        let (nf, tf) = round(&fixed, span);
        println!(
            "round {r}: auto {ta:?} per call ({na} calls, k now {}), fixed k = {threads} {tf:?} per call ({nf} calls); auto ÷ fixed = {:.3}",
            auto.concurrency(),
            ta.as_secs_f64() / tf.as_secs_f64()
        );
    }
    let log = auto.controller_log();
    let changes = log.iter().filter(|e| e.old_k != e.new_k).count();
    for e in &log {
        println!(
            "  {:>8.3} s  k {} -> {}  {:?}  {:.0}/s",
            e.at.as_secs_f64(),
            e.old_k,
            e.new_k,
            e.reason,
            e.throughput
        );
    }
    println!(
        "{} decisions, {changes} changes of k in {:.1} s of auto rounds",
        log.len(),
        secs * rounds as f64
    );
}
