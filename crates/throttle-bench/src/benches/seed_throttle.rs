//! `seed_throttle` (seed 000): 64 CPU-bound tasks at concurrency k, as OS
//! threads gated by a semaphore and as pool tasks under a live limit.

use std::time::Duration;

use anyhow::Result;
use throttle_workloads::seed_sum::{calibrate, expected_total, run_pool, run_threads, TASKS};

use super::{peers, Settings};
use crate::harness::{check, run_interleaved, time, Baseline, Case, Report};

/// The concurrency levels measured (this machine's CPU count is added); 0 means unlimited (no
/// semaphore).
const LEVELS: [usize; 7] = [1, 2, 3, 4, 8, 64, 0];
/// Repetitions of a full run, whatever `--reps` says: fewer leave a spread above the 2 % the
/// target compares.
const MIN_REPS: usize = 15;
/// Serial time of all 64 tasks in the full run and under `--quick`.
const WORK: Duration = Duration::from_millis(500);
const QUICK_WORK: Duration = Duration::from_millis(100);

/// Runs the bench.
pub fn run(settings: &Settings) -> Result<Report> {
    let cores = settings.threads;
    let mut levels = LEVELS.to_vec();
    if !levels.contains(&cores) {
        levels.insert(levels.len() - 1, cores);
    }
    let (chunk, repeat) = calibrate(if settings.quick { QUICK_WORK } else { WORK });
    let want = expected_total(TASKS as u64, chunk);
    // One pool thread per task, as the seed has one OS thread per task: then k really is the
    // number of threads that contend (k = 64 or unlimited oversubscribes the cores), and the only
    // difference between the two systems is the gate (a semaphore vs the pool's live limit).
    let pool = peers::throttle_pool(TASKS)?;
    let pool = &pool;
    let mut cases = Vec::new();
    for &k in &levels {
        let limit = (k > 0).then_some(k);
        cases.push(Case::new("semaphore_threads", k, move || {
            let (t, got) = time(|| run_threads(TASKS, chunk, repeat, limit));
            check("semaphore_threads", got, want)?;
            Ok(t)
        }));
        cases.push(Case::new("throttle", k, move || {
            let (t, got) = time(|| run_pool(pool, TASKS, chunk, repeat, limit));
            check("throttle", got, want)?;
            Ok(t)
        }));
    }
    // The target is a 2 % comparison, so the bench needs a spread below that: at least
    // MIN_REPS repetitions in a full run (the table prints each series' spread).
    let reps = if settings.quick {
        settings.reps
    } else {
        settings.reps.max(MIN_REPS)
    };
    let series = run_interleaved(reps, false, cases)?;
    let what = format!(
        "{TASKS} tasks summing 1..{TASKS}·{chunk} (×{repeat}) at concurrency k (threads = k, 0 = unlimited); pool of {TASKS} threads; wall time"
    );
    let baseline = Baseline {
        system: "semaphore_threads",
        threads: 0,
        variant: None,
    };
    let mut report = Report::new("seed_throttle", what, baseline, series);
    let fastest = report.series.iter().map(|s| s.median()).reduce(f64::min);
    let at_cores = report.median_of("throttle", cores);
    report.ratio_target(
        format!("throttle at k = {cores} cores ≤ 1.02×fastest configuration (medians)"),
        at_cores,
        fastest,
        1.02,
    );
    Ok(report)
}
