//! The workloads of the adaptive-concurrency measurements (`throttle adapt`, bench group
//! `adaptive`): each is a batch of independent items spawned into a pool's scope, one task per
//! item, so that the pool's task count is the completed work its controller learns from.
//!
//! | kind | one item | best fixed k expected |
//! |---|---|---|
//! | `cpu` | 200 µs of CPU | cores |
//! | `lock` | 5 µs of CPU, then ~200 µs of writes to data beside one shared *spinning* lock | 1 |
//! | `membound` | sums 1 MiB at a random place of a 256 MiB array (beyond any LLC) | flat |
//! | `blocking` | 500 µs asleep, then 500 µs of CPU | > cores |
//!
//! The lock spins (as many user-space locks do) so that threads waiting for it burn CPU: with a
//! blocking mutex the extra threads would sleep and every k would cost the same CPU, which
//! proves nothing about choosing k. The critical section is a fixed number of writes to a
//! counter on the lock's cache line, so a spinning waiter slows the holder (the line bounces):
//! more threads make it slower, not just dearer. (A first version held the lock for 200 µs of
//! CPU after 20 µs outside; on this 2-core machine k = 2 then won by 10 %, the outside work
//! overlapping the critical section, so it did not separate the settings.)

use crate::kernels::spin_for;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;
use throttle::Pool;

/// A kind of item.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Compute-bound: 200 µs of CPU.
    Cpu,
    /// A short compute, then a long critical section on one shared spinning lock.
    Lock,
    /// Streaming over memory larger than the last-level cache.
    Membound,
    /// Half asleep, half computing.
    Blocking,
}

impl Kind {
    /// Its name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Cpu => "cpu",
            Kind::Lock => "lock",
            Kind::Membound => "membound",
            Kind::Blocking => "blocking",
        }
    }
}

/// CPU time of a `cpu` item.
pub const CPU_ITEM: Duration = Duration::from_micros(200);
/// Compute before the lock of a `lock` item.
pub const LOCK_OUTSIDE: Duration = Duration::from_micros(5);
/// Writes inside the lock: about 200 µs uncontended (an atomic add is a few ns).
pub const LOCK_INSIDE_WRITES: u64 = 40_000;
/// Sleep and compute of a `blocking` item.
pub const BLOCKING_HALF: Duration = Duration::from_micros(500);
/// The membound array: 256 MiB of `u64`, far beyond any last-level cache of today.
pub const MEMBOUND_BYTES: usize = 256 << 20;
/// Bytes one membound item streams.
pub const MEMBOUND_ITEM: usize = 1 << 20;

#[derive(Debug, Default)]
#[repr(C, align(64))]
struct Guarded {
    lock: AtomicBool,
    data: AtomicU64,
}

/// What the items share: the lock and the big array (allocated on first membound use).
#[derive(Debug, Default)]
pub struct Shared {
    /// The lock and the data it guards, on one cache line.
    guarded: Guarded,
    big: std::sync::OnceLock<Vec<u64>>,
    seed: AtomicU64,
    /// A sink so that the compiler keeps the sums.
    pub sink: AtomicU64,
}

impl Shared {
    /// Fresh shared state.
    pub fn new() -> Shared {
        Shared::default()
    }

    fn big(&self) -> &[u64] {
        self.big
            .get_or_init(|| (0..MEMBOUND_BYTES / 8).map(|i| i as u64).collect())
    }

    /// Allocates and touches the membound array now (so that no run pays for it).
    pub fn prepare(&self, kind: Kind) {
        if kind == Kind::Membound {
            let _ = self.big();
        }
    }
}

/// Runs one item of `kind`.
pub fn item(kind: Kind, shared: &Shared) {
    match kind {
        Kind::Cpu => spin_for(CPU_ITEM),
        Kind::Lock => {
            spin_for(LOCK_OUTSIDE);
            let g = &shared.guarded;
            while g
                .lock
                .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
                .is_err()
            {
                std::hint::spin_loop();
            }
            for _ in 0..LOCK_INSIDE_WRITES {
                g.data.fetch_add(1, Ordering::Relaxed);
            }
            // Pairs with the Acquire of the next holder's exchange.
            g.lock.store(false, Ordering::Release);
        }
        Kind::Membound => {
            let big = shared.big();
            let words = MEMBOUND_ITEM / 8;
            // A cheap pseudo-random start (splitmix step), so items do not share cache lines.
            let s = shared
                .seed
                .fetch_add(0x9E37_79B9_7F4A_7C15, Ordering::Relaxed)
                .wrapping_mul(0xBF58_476D_1CE4_E5B9);
            let start = (s >> 8) as usize % (big.len() - words);
            let sum: u64 = big[start..start + words]
                .iter()
                .copied()
                .fold(0, u64::wrapping_add);
            shared.sink.fetch_add(sum, Ordering::Relaxed);
        }
        Kind::Blocking => {
            std::thread::sleep(BLOCKING_HALF);
            spin_for(BLOCKING_HALF);
        }
    }
}

/// Runs `items` items of `kind` on `pool`, one spawned task each, in batches of 64 so that
/// the pool always has queued work but the queue stays short.
pub fn run(pool: &Pool, kind: Kind, items: usize, shared: &Shared) {
    let mut left = items;
    while left > 0 {
        let n = left.min(64);
        pool.scope(|s| {
            for _ in 0..n {
                s.spawn(|_| item(kind, shared));
            }
        });
        left -= n;
    }
}

/// Runs batches of `items` on an auto-mode `pool` until its controller has settled (a
/// `verified` or `best-measured` decision in its log, made after this call began) or `limit`
/// passed. Returns whether it settled. The measured runs that follow then see a pool that has
/// learned, as a long-lived program's pool would have.
pub fn warm_until_settled(
    pool: &Pool,
    kind: Kind,
    items: usize,
    shared: &Shared,
    limit: Duration,
) -> bool {
    let from = pool.controller_log().len();
    let start = std::time::Instant::now();
    loop {
        run(pool, kind, items.min(256), shared);
        let log = pool.controller_log();
        if log
            .iter()
            .skip(from.min(log.len()))
            .any(|e| e.reason.settles())
        {
            return true;
        }
        if start.elapsed() >= limit {
            return false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_runs() {
        let pool = Pool::new(2).unwrap();
        let shared = Shared::new();
        for kind in [Kind::Cpu, Kind::Lock, Kind::Blocking] {
            run(&pool, kind, 10, &shared);
        }
        assert!(pool.stats().tasks >= 30);
    }
}
