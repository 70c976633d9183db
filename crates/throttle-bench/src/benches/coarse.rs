//! `coarse_join` and `nested_scope`: coarse work that an idle thread must find while its owner
//! runs a long leaf. Both systems get the same program.
//!
//! - `coarse_join`, 2 threads: a scope spawns 20 ms of work for the other thread, then joins two
//!   200 ms leaves. Ideal: 220 ms (the second leaf starts when the other thread is free).
//! - `nested_scope`, 3 threads: `join(|| scope(|s| s.spawn(200 ms)), || 200 ms)`. Ideal: 200 ms
//!   given 2 free CPUs (two leaves on two cores; this machine has 2).

use std::time::Duration;

use anyhow::Result;
use throttle_workloads::kernels::spin_for;

use super::{peers, Settings};
use crate::harness::{run_interleaved, time, Baseline, Case, Report};

/// Leaf and head-start lengths of the full run; `--quick` divides them by 10.
const LEAF: Duration = Duration::from_millis(200);
const HEAD_START: Duration = Duration::from_millis(20);

fn lengths(settings: &Settings) -> (Duration, Duration) {
    if settings.quick {
        (LEAF / 10, HEAD_START / 10)
    } else {
        (LEAF, HEAD_START)
    }
}

fn targets(report: &mut Report, threads: usize, ideal: Duration) {
    let throttle = report.median_of("throttle", threads);
    let rayon = report.median_of("rayon", threads);
    let bound = 1.10 * ideal.as_secs_f64();
    report.target(
        format!("throttle ≤ 1.10 × {} ms", ideal.as_millis()),
        throttle,
        |t| t <= bound,
        |t| format!("{:.1} ms", t * 1e3),
    );
    report.ratio_target(
        format!("throttle ≤ 1.02×rayon ({threads} threads)"),
        throttle,
        rayon,
        1.02,
    );
}

fn baseline(threads: usize) -> Baseline {
    Baseline {
        system: "rayon",
        threads,
        variant: None,
    }
}

/// Runs `coarse_join`.
pub fn run_join(settings: &Settings) -> Result<Report> {
    let threads = 2;
    let (leaf, head) = lengths(settings);
    let pool = peers::throttle_pool(threads)?;
    let rayon = peers::rayon_pool(threads)?;
    let (pool, rayon) = (&pool, &rayon);
    let cases = vec![
        Case::new("throttle", threads, move || {
            let (t, ()) = time(|| {
                pool.scope(|s| {
                    s.spawn(move |_| spin_for(head));
                    throttle::join(|| spin_for(leaf), || spin_for(leaf));
                })
            });
            Ok(t)
        }),
        Case::new("rayon", threads, move || {
            let (t, ()) = time(|| {
                rayon.scope(|s| {
                    s.spawn(move |_| spin_for(head));
                    rayon::join(|| spin_for(leaf), || spin_for(leaf));
                })
            });
            Ok(t)
        }),
    ];
    let series = run_interleaved(settings.reps, true, cases)?;
    let what = format!(
        "scope: spawn {} ms, then join two {} ms leaves, 2 threads; wall time",
        head.as_millis(),
        leaf.as_millis()
    );
    let mut report = Report::new("coarse_join", what, baseline(threads), series);
    targets(&mut report, threads, leaf + head);
    Ok(report)
}

/// Runs `nested_scope`.
pub fn run_nested_scope(settings: &Settings) -> Result<Report> {
    let threads = 3;
    let (leaf, _) = lengths(settings);
    let pool = peers::throttle_pool(threads)?;
    let rayon = peers::rayon_pool(threads)?;
    let (pool, rayon) = (&pool, &rayon);
    let cases = vec![
        Case::new("throttle", threads, move || {
            let (t, _) = time(|| {
                pool.join(
                    || throttle::scope(|s| s.spawn(move |_| spin_for(leaf))),
                    || spin_for(leaf),
                )
            });
            Ok(t)
        }),
        Case::new("rayon", threads, move || {
            let (t, _) = time(|| {
                rayon.join(
                    || rayon::scope(|s| s.spawn(move |_| spin_for(leaf))),
                    || spin_for(leaf),
                )
            });
            Ok(t)
        }),
    ];
    let series = run_interleaved(settings.reps, true, cases)?;
    let what = format!(
        "join(scope(spawn {0} ms), {0} ms), 3 threads; wall time",
        leaf.as_millis()
    );
    let mut report = Report::new("nested_scope", what, baseline(threads), series);
    targets(&mut report, threads, leaf);
    Ok(report)
}
