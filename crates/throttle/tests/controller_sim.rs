//! The controller state machine against the simulated plants (8, 64, 256 cores; noise 2–10 %;
//! step changes), beside the hill-climbing baseline. Counts of intervals, no times.

use throttle::controller::sim::{
    blind_spot_plant, run, standard_plants, Curve, HillClimb, Plant, SegmentResult,
};
use throttle::controller::{Config, Controller};

/// Settle target, in intervals, from a cold start and after each step.
const SETTLE_MAX: usize = 20;
/// The most intervals the controller may take to settle over a standard plant's four segments
/// (a cold start and three steps): the most it took when this bound was set (25 on 8 cores,
/// 28–29 on 64, 32 on 256).
const PLANT_TOTAL_MAX: usize = 32;

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
        if t > PLANT_TOTAL_MAX {
            failures.push(format!(
                "{name}: total settle {t} intervals, more than {PLANT_TOTAL_MAX}"
            ));
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

/// The `k` in force at the end of each segment of the blind-spot plant
/// (`sim::blind_spot_plant`).
fn ends(plant: &Plant) -> Vec<usize> {
    let trace = run(plant, &mut Controller::new(Config::new(8)));
    (0..2)
        .map(|seg| trace.still_from(seg).expect("the segment ran").1)
        .collect()
}

/// The simulator's plant for the blind spot: under 20 seeds the controller stops moving
/// within [`SETTLE_MAX`] intervals of the cold start and of the step, and never moves again in
/// the segment (on the flat segment every `k` is within 5 % of the peak from the start, so the
/// throughput-based `settle` of the other tests says nothing there; `still_from` judges `k`).
#[test]
fn on_the_blind_spot_plant_k_stops_moving_within_the_settle_target() {
    let mut late = Vec::new();
    for seed in 1..=20 {
        let trace = run(
            &blind_spot_plant(seed),
            &mut Controller::new(Config::new(8)),
        );
        for seg in 0..2 {
            let (from, k) = trace.still_from(seg).expect("the segment ran");
            if from > SETTLE_MAX {
                late.push(format!(
                    "seed {seed} segment {seg}: still from {from} at k = {k}"
                ));
            }
        }
    }
    assert!(late.is_empty(), "{}", late.join("\n"));
}

/// On the flat-then-scalable plant, under 20 seeds of ±5 % noise, the controller returns to
/// the top once the work scales again, whatever it chose for the flat work.
#[test]
fn after_work_that_does_not_scale_scalable_work_gets_the_top() {
    for seed in 1..=20 {
        let e = ends(&blind_spot_plant(seed));
        assert!(
            e[1] >= 7,
            "seed {seed}: scalable work ended at k = {}",
            e[1]
        );
    }
}

/// The CPU-seconds target: on work that does not scale a smaller k is as fast, and auto uses
/// it. Without the controller's check whether k matters at all (`throttle-controller/src/flat.rs`), the USL
/// fit of noisy points on this flat curve puts its peak anywhere and the jackknife pushes the
/// choice up: seeds 1–20 ended at [3, 8, 3, 2, 8, 8, 2, 2, 8, 8, 2, 8, 8, 8, 7, 2, 6, 8, 8, 1].
#[test]
fn work_that_does_not_scale_settles_at_a_small_k() {
    let ends: Vec<usize> = (1..=20)
        .map(|seed| ends(&blind_spot_plant(seed))[0])
        .collect();
    println!("k at the end of the flat segment, 20 seeds: {ends:?}");
    assert!(ends.iter().all(|&k| k <= 2), "flat work ended at {ends:?}");
}

/// The other side of the flat-work test: a curve that gains only about 10 % from 1 thread to
/// all of them is not flat, and taking it for flat costs that 10 %. With the test of flatness
/// on the scan alone (single samples, the prior's 6 % noise) 8 cores at ±2 % noise settled
/// within 5 % of the peak in 0 of 50 seeds (50 of 50 before there was a test); the repeats at
/// the two ends of the scan measure the noise and keep at least 40 of 50 (the figures are
/// printed). A gain this small at ±5 % noise is near what three samples per end can resolve.
#[test]
fn a_small_real_gain_is_not_taken_for_flat_work() {
    let gentle = Curve::new(0.9, 0.0);
    let mut failures = Vec::new();
    for cores in [8usize, 64] {
        for noise in [0.02, 0.05] {
            let settled = (1..=50)
                .filter(|&seed| {
                    // Within 5 % of the peak from some interval to the end, and settled (most
                    // k are within 5 % here, so the band is entered before the choice is made:
                    // moves inside it are not counted as changes after settling).
                    let p = Plant::new(cores, noise, vec![(gentle, 60)], seed);
                    let mut c = Controller::new(Config::new(cores));
                    let r = run(&p, &mut c).segments();
                    r[0].settle.is_some() && c.is_settled()
                })
                .count();
            let gain = gentle.peak(cores) / gentle.x(1);
            println!(
                "gain {gain:.3} over {cores} cores, noise ±{:.0} %: {settled} of 50 seeds end within 5 % of the peak",
                noise * 100.0
            );
            if settled < 40 {
                failures.push(format!("{cores} cores ±{noise}: {settled} of 50"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("; "));
}
