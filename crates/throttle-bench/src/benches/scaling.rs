//! `scaling_*`: what one task costs as the pool grows (the design's rule: nothing on the task
//! path loops over all workers or writes a word every thread writes). The same three workloads run
//! on pools of 2, 8, 32 and 64 threads, throttle and rayon interleaved, and each case reports
//! wall time *per task*. On a machine with fewer CPUs than threads the big pools are
//! oversubscribed: that is the point, a cost that grows with the number of workers shows up as
//! a per-task time that grows down the table.
//!
//! - `scaling_tree_sum`: a perfect tree of boxed nodes, a join at every node (a task = a node);
//! - `scaling_spawn`: one scope with many spawns of a tiny body (a task = a spawn);
//! - `scaling_for_range`: a `for_range` over many indices of a tiny body (a task = an index).

use anyhow::Result;
use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};
use throttle_workloads::tree::Node;

use super::tree_sum::{sum_rayon, sum_throttle};
use super::{peers, Settings};
use crate::harness::{check, run_interleaved, time, Baseline, Case, Report};

/// The pool sizes measured.
const THREADS: [usize; 4] = [2, 8, 32, 64];

/// A few nanoseconds of work that the compiler cannot drop.
fn tiny(i: u64) -> u64 {
    black_box(i)
        .wrapping_mul(0x9E37_79B9_7F4A_7C15)
        .rotate_left(17)
}

/// One output cell per task (no word that every task writes: the bench measures the
/// scheduler, not a contended counter), and their sum to check the run.
fn cells(n: usize) -> Vec<AtomicU64> {
    (0..n).map(|_| AtomicU64::new(0)).collect()
}

fn total(cells: &[AtomicU64]) -> u64 {
    cells
        .iter()
        .map(|c| c.load(Ordering::Relaxed))
        .fold(0, u64::wrapping_add)
}

struct Pools {
    throttle: Vec<throttle::Pool>,
    rayon: Vec<rayon::ThreadPool>,
}

fn pools() -> Result<Pools> {
    Ok(Pools {
        throttle: THREADS
            .iter()
            .map(|&t| peers::throttle_pool(t))
            .collect::<Result<_>>()?,
        rayon: THREADS
            .iter()
            .map(|&t| peers::rayon_pool(t))
            .collect::<Result<_>>()?,
    })
}

/// The report of one workload: ratios to throttle on 2 threads, and a note with each system's
/// growth of the per-task cost from 2 to 64 threads.
fn report(bench: &'static str, what: String, cases: Vec<Case<'_>>, reps: usize) -> Result<Report> {
    let series = run_interleaved(reps, true, cases)?;
    let baseline = Baseline {
        system: "throttle",
        threads: THREADS[0],
        variant: None,
    };
    let mut report = Report::new(bench, what, baseline, series);
    let last = THREADS[THREADS.len() - 1];
    for system in ["throttle", "rayon"] {
        if let (Some(small), Some(big)) = (
            report.median_of(system, THREADS[0]),
            report.median_of(system, last),
        ) {
            report.notes.push(format!(
                "{system}: per-task cost on {last} threads = {:.2} × on {} threads",
                big / small,
                THREADS[0]
            ));
        }
    }
    Ok(report)
}

/// `scaling_tree_sum`.
pub fn run_tree_sum(settings: &Settings) -> Result<Report> {
    let depth = if settings.quick { 14 } else { 18 };
    let tree = Node::tree(depth);
    let want = Node::expected_sum(depth);
    let tasks = ((1u64 << depth) - 1) as f64;
    let pools = pools()?;
    let tree = &tree;
    let mut cases = Vec::new();
    for (i, &threads) in THREADS.iter().enumerate() {
        let pool = &pools.throttle[i];
        cases.push(Case::new("throttle", threads, move || {
            let (t, got) = time(|| pool.install(|| sum_throttle(tree)));
            check("throttle", got, want)?;
            Ok(t / tasks)
        }));
        let pool = &pools.rayon[i];
        cases.push(Case::new("rayon", threads, move || {
            let (t, got) = time(|| pool.install(|| sum_rayon(tree)));
            check("rayon", got, want)?;
            Ok(t / tasks)
        }));
    }
    let what = format!(
        "tree of depth {depth}, a join at every node, on pools of 2 to 64 threads; \
         wall time per node"
    );
    report("scaling_tree_sum", what, cases, settings.reps)
}

/// `scaling_spawn`.
pub fn run_spawn(settings: &Settings) -> Result<Report> {
    let n: u64 = if settings.quick { 4_000 } else { 40_000 };
    let want: u64 = (0..n).map(tiny).fold(0, u64::wrapping_add);
    let pools = pools()?;
    let mut cases = Vec::new();
    for (i, &threads) in THREADS.iter().enumerate() {
        let pool = &pools.throttle[i];
        cases.push(Case::new("throttle", threads, move || {
            let out = cells(n as usize);
            let (t, ()) = time(|| {
                pool.install(|| {
                    throttle::scope(|s| {
                        for k in 0..n {
                            let out = &out;
                            s.spawn(move |_| out[k as usize].store(tiny(k), Ordering::Relaxed));
                        }
                    })
                })
            });
            check("throttle", total(&out), want)?;
            Ok(t / n as f64)
        }));
        let pool = &pools.rayon[i];
        cases.push(Case::new("rayon", threads, move || {
            let out = cells(n as usize);
            let (t, ()) = time(|| {
                pool.install(|| {
                    rayon::scope(|s| {
                        for k in 0..n {
                            let out = &out;
                            s.spawn(move |_| out[k as usize].store(tiny(k), Ordering::Relaxed));
                        }
                    })
                })
            });
            check("rayon", total(&out), want)?;
            Ok(t / n as f64)
        }));
    }
    let what = format!(
        "one scope with {n} spawns of a few-ns body, on pools of 2 to 64 threads; \
         wall time per spawn"
    );
    report("scaling_spawn", what, cases, settings.reps)
}

/// `scaling_for_range`.
pub fn run_for_range(settings: &Settings) -> Result<Report> {
    let n: usize = if settings.quick { 200_000 } else { 2_000_000 };
    let want: u64 = (0..n as u64).map(tiny).fold(0, u64::wrapping_add);
    let pools = pools()?;
    let mut cases = Vec::new();
    for (i, &threads) in THREADS.iter().enumerate() {
        let pool = &pools.throttle[i];
        cases.push(Case::new("throttle", threads, move || {
            let out = cells(n);
            let (t, ()) =
                time(|| pool.for_range(0..n, |k| out[k].store(tiny(k as u64), Ordering::Relaxed)));
            check("throttle", total(&out), want)?;
            Ok(t / n as f64)
        }));
        let pool = &pools.rayon[i];
        cases.push(Case::new("rayon", threads, move || {
            use rayon::prelude::*;
            let out = cells(n);
            let (t, ()) = time(|| {
                pool.install(|| {
                    (0..n)
                        .into_par_iter()
                        .for_each(|k| out[k].store(tiny(k as u64), Ordering::Relaxed))
                })
            });
            check("rayon", total(&out), want)?;
            Ok(t / n as f64)
        }));
    }
    let what = format!(
        "for_range over {n} indices of a few-ns body, on pools of 2 to 64 threads; \
         wall time per index"
    );
    report("scaling_for_range", what, cases, settings.reps)
}
