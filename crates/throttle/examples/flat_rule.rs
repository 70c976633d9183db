//! The figures behind "Does `k` matter at all?" in `throttle-controller/src/README.md`: the simulated
//! controller on work that does not scale, and on curves whose whole gain is small (5–25 %),
//! over many seeds. Deterministic (the simulator's noise is seeded); no timing.
//!
//! ```text
//! cargo run --release -p throttle --example flat_rule
//! ```

use throttle::controller::sim::{run, Curve, Plant};
use throttle::controller::{Config, Controller};

/// One 60-interval segment of `curve`: the `k` at its end, and whether it ended within 5 % of
/// the peak with the controller settled.
fn one(cores: usize, noise: f64, curve: Curve, seed: u64) -> (usize, bool) {
    let plant = Plant::new(cores, noise, vec![(curve, 60)], seed);
    let mut c = Controller::new(Config::new(cores));
    let trace = run(&plant, &mut c);
    let end = trace.steps.last().map_or(0, |s| s.k);
    (end, trace.segments()[0].settle.is_some() && c.is_settled())
}

fn main() {
    println!("Work that does not scale (the same throughput at every k): k at the end, seeds 1-20");
    for cores in [2usize, 4, 8, 64, 256] {
        for noise in [0.02, 0.05, 0.10] {
            let ends: Vec<usize> = (1..=20)
                .map(|seed| one(cores, noise, Curve::new(1.0, 0.0), seed).0)
                .collect();
            let high = ends.iter().filter(|&&k| k > 2).count();
            println!(
                "  {cores:>3} threads, noise ±{:>2.0} %: {high:>2} of 20 above k = 2  {ends:?}",
                noise * 100.0
            );
        }
    }
    println!("Small gains (USL with sigma near 1): seeds 1-50 ending within 5 % of the peak");
    for cores in [2usize, 4, 8, 64, 256] {
        for sigma in [0.95, 0.9, 0.8, 0.7] {
            let curve = Curve::new(sigma, 0.0);
            let gain = curve.peak(cores) / curve.x(1);
            let counts: Vec<String> = [0.02, 0.05, 0.10]
                .iter()
                .map(|&noise| {
                    let ok = (1..=50).filter(|&s| one(cores, noise, curve, s).1).count();
                    format!("±{:.0} %: {ok:>2}", noise * 100.0)
                })
                .collect();
            println!(
                "  gain {gain:.3} over {cores:>3} threads: {}",
                counts.join(", ")
            );
        }
    }
}
