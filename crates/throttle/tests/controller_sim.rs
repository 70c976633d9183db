//! The controller state machine against the simulated plants (8, 64, 256 cores; noise 2–10 %;
//! step changes), beside the hill-climbing baseline. Counts of intervals, no times.

use throttle::controller::sim::{run, standard_plants, HillClimb, SegmentResult};
use throttle::controller::{Config, Controller};

/// Settle target of the issue, in intervals, from a cold start and after each step.
const SETTLE_MAX: usize = 20;

fn fmt(r: Option<usize>) -> String {
    match r {
        Some(t) => format!("{t:>3}"),
        None => "  -".into(),
    }
}

#[test]
fn controller_settles_fast_stays_still_and_beats_hill_climbing() {
    let mut failures = Vec::new();
    for (name, plant) in standard_plants() {
        let ours = run(&plant, &mut Controller::new(Config::new(plant.cores))).segments();
        let base = run(&plant, &mut HillClimb::new(plant.cores)).segments();
        let line: Vec<String> = ours
            .iter()
            .zip(&base)
            .map(|(o, b)| {
                format!(
                    "{} vs {} ({})",
                    fmt(o.settle),
                    fmt(b.settle),
                    fmt(b.settle_centre)
                )
            })
            .collect();
        println!(
            "{name:<26} settle (ours vs hill climbing (its centre)): {}",
            line.join(" | ")
        );
        for (i, o) in ours.iter().enumerate() {
            match o.settle {
                Some(t) if t <= SETTLE_MAX => {}
                _ => failures.push(format!("{name} segment {i}: settle {:?}", o.settle)),
            }
            if o.changes_after > 0 {
                failures.push(format!(
                    "{name} segment {i}: {} changes after settling",
                    o.changes_after
                ));
            }
        }
        // Beat the baseline on the plant: fewer intervals to settle over all its segments (a
        // segment never settled counts its whole length).
        let total =
            |r: &[SegmentResult]| -> usize { r.iter().map(|s| s.settle.unwrap_or(60)).sum() };
        let (t, tb) = (total(&ours), total(&base));
        println!("{name:<26} total settle intervals: ours {t}, hill climbing {tb}");
        if t >= tb {
            failures.push(format!("{name}: total settle ours {t} vs baseline {tb}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Not one lucky seed: every standard plant under 50 seeds of noise (1 800 segments). Never a
/// change of `k` once settled; settled within 20 intervals in at least 99 % of the segments.
/// The rare misses are honest limits, printed: at ±10 % noise the edge of a plateau cannot be
/// placed within 5 % by a handful of single-interval points, and a step that moves the
/// throughput at the settled `k` by less than the noise is (by design) not noticed.
#[test]
fn settles_under_many_seeds() {
    let (mut worst, mut total, mut misses) = (0, 0, Vec::new());
    for (name, plant) in standard_plants() {
        for seed in 100..150 {
            let mut p = plant.clone();
            p.seed = seed;
            let r = run(&p, &mut Controller::new(Config::new(p.cores))).segments();
            for (i, s) in r.iter().enumerate() {
                total += 1;
                assert_eq!(s.changes_after, 0, "{name} seed {seed} segment {i}: {s:?}");
                match s.settle {
                    Some(t) if t <= SETTLE_MAX => worst = worst.max(t),
                    _ => misses.push(format!("{name} seed {seed} segment {i}: {:?}", s.settle)),
                }
            }
        }
    }
    println!(
        "{} of {total} segments settled within {SETTLE_MAX} intervals (worst {worst}); misses:",
        total - misses.len()
    );
    for m in &misses {
        println!("  {m}");
    }
    assert!(
        misses.len() * 100 <= total,
        "{} misses of {total}",
        misses.len()
    );
}
