//! Prints what the probe sees on this machine: the topology and a short measured span.
//!
//! Run with `cargo run -p throttle-probe --example probe_report`.

use throttle_probe::{Snapshot, Topology};

fn main() {
    let t = Topology::detect();
    println!("{t:#?}");
    let start = Snapshot::now();
    let sum: u64 = (0..50_000_000u64).map(std::hint::black_box).sum();
    let span = start.elapsed();
    println!("sum {sum}");
    println!("{span:#?}");
}
