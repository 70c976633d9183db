//! `for_range_compute` and `for_range_memory`: one parallel loop mapping
//! 10^7 doubles, compute-bound and memory-bound.
//!
//! Every system runs the same per-index body, `out[i] = map(input[i])`, with
//! the output stored through a relaxed `AtomicU64` (a plain store on x86-64
//! and AArch64) so the loop needs no `unsafe` and is identical everywhere.

use std::sync::atomic::{AtomicU64, Ordering};

use anyhow::{bail, Result};
use rayon::prelude::*;
use throttle_workloads::kernels::{compute_map, memory_map};

use super::tree_sum::serial_baseline;
use super::{peers, Settings};
use crate::harness::{run_interleaved, time, Case, Report};

/// Elements of the full run.
const LEN: usize = 10_000_000;
/// Elements under `--quick`.
const QUICK_LEN: usize = 1_000_000;

/// Runs the compute-bound map.
pub fn run_compute(settings: &Settings) -> Result<Report> {
    run(settings, "for_range_compute", "compute-bound", compute_map)
}

/// Runs the memory-bound map.
pub fn run_memory(settings: &Settings) -> Result<Report> {
    run(settings, "for_range_memory", "memory-bound", memory_map)
}

/// Runs `f` over `0..n` on `threads` scoped threads, equal contiguous
/// chunks, the caller running the first.
fn std_spawn(threads: usize, n: usize, f: &(dyn Fn(usize) + Sync)) {
    std::thread::scope(|s| {
        for t in 1..threads {
            s.spawn(move || (t * n / threads..(t + 1) * n / threads).for_each(f));
        }
        (0..n / threads).for_each(f);
    });
}

fn run(
    settings: &Settings,
    bench: &'static str,
    kind: &str,
    map: fn(f64) -> f64,
) -> Result<Report> {
    let n = if settings.quick { QUICK_LEN } else { LEN };
    let threads = settings.threads;
    let input: Vec<f64> = (0..n).map(|i| i as f64 * 1e-3).collect();
    let output: Vec<AtomicU64> = (0..n).map(|_| AtomicU64::new(0)).collect();
    let want: Vec<u64> = input.iter().map(|&x| map(x).to_bits()).collect();
    let body = |i: usize| output[i].store(map(input[i]).to_bits(), Ordering::Relaxed);
    let body = &body;
    let (output, want) = (&output, &want);
    // Clears the output (untimed), times `run`, then checks every element.
    let measure = move |system: &'static str, run: &dyn Fn()| -> Result<f64> {
        output.iter().for_each(|o| o.store(0, Ordering::Relaxed));
        let (t, ()) = time(run);
        if let Some(i) = (0..n).find(|&i| output[i].load(Ordering::Relaxed) != want[i]) {
            bail!("{system} left element {i} of {n} wrong");
        }
        Ok(t)
    };
    let pool = peers::throttle_pool(threads)?;
    let rayon = peers::rayon_pool(threads)?;
    let (pool, rayon) = (&pool, &rayon);
    let cases = vec![
        Case::new("serial", 1, move || {
            measure("serial", &|| (0..n).for_each(body))
        }),
        Case::new("throttle", threads, move || {
            measure("throttle", &|| pool.for_range(0..n, body))
        }),
        Case::new("rayon", threads, move || {
            measure("rayon", &|| {
                rayon.install(|| (0..n).into_par_iter().for_each(body))
            })
        }),
        Case::new("std_spawn", threads, move || {
            measure("std_spawn", &|| std_spawn(threads, n, body))
        }),
    ];
    let series = run_interleaved(settings.reps, true, cases)?;
    let what = format!("{kind} map over {n} f64, out[i] = f(in[i]); wall time");
    let mut report = Report::new(bench, what, serial_baseline(), series);
    let throttle = report.median_of("throttle", threads);
    let best_peer = ["rayon", "std_spawn"]
        .iter()
        .filter_map(|p| report.median_of(p, threads))
        .reduce(f64::min);
    report.ratio_target("throttle ≤ 1.02×best peer", throttle, best_peer, 1.02);
    if bench == "for_range_compute" {
        let speedup = report
            .median_of("serial", 1)
            .zip(throttle)
            .map(|(s, t)| s / t);
        let need = 0.95 * threads as f64;
        report.target(
            format!("speedup serial/throttle ≥ 0.95×{threads} cores = {need:.2}"),
            speedup,
            |s| s >= need,
            |s| format!("{s:.2}"),
        );
    }
    Ok(report)
}
