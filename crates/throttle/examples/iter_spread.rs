//! Shows how a parallel iterator's items spread over a pool's threads.
use std::sync::atomic::{AtomicUsize, Ordering};
use throttle::prelude::*;

fn main() {
    let pool = throttle::Pool::new(2).unwrap();
    let per: Vec<AtomicUsize> = (0..3).map(|_| AtomicUsize::new(0)).collect();
    let v: Vec<u64> = (0..2_000_000).collect();
    for _ in 0..3 {
        per.iter().for_each(|a| a.store(0, Ordering::Relaxed));
        let t = std::time::Instant::now();
        let s: u64 = pool.install(|| {
            v.par_iter()
                .map(|&x| {
                    let i = throttle::current_thread_index().unwrap_or(2);
                    per[i].fetch_add(1, Ordering::Relaxed);
                    (0..50).fold(x, |a, b| a.wrapping_mul(31).wrapping_add(b))
                })
                .sum()
        });
        println!(
            "sum {s} in {:?}; items on (worker 0, worker 1, caller): {:?}",
            t.elapsed(),
            per.iter()
                .map(|a| a.load(Ordering::Relaxed))
                .collect::<Vec<_>>()
        );
    }
    println!("{:?}", pool.stats());
}
