//! The sort benches: `sort_unstable` (10^7 random u64) and `sort_stable` (10^7 random
//! `(u32, u32)` by key), serial std sorts against throttle's and rayon's parallel sorts.

use anyhow::{bail, Result};

use super::tree_sum::serial_baseline;
use super::{peers, Settings};
use crate::harness::{run_interleaved, time, Case, Report};

const LEN: usize = 10_000_000;
const QUICK_LEN: usize = 1_000_000;

fn random(n: usize, mut seed: u64) -> Vec<u64> {
    (0..n)
        .map(|_| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        })
        .collect()
}

/// Copies `input` (untimed), times `sort` on the copy, and compares with `want`.
fn measure<T: Clone + PartialEq>(
    system: &str,
    input: &[T],
    want: &[T],
    sort: impl FnOnce(&mut [T]),
) -> Result<f64> {
    let mut v = input.to_vec();
    let (t, ()) = time(|| sort(&mut v));
    if v != want {
        bail!("{system} sorted wrong");
    }
    Ok(t)
}

/// `sort_unstable`: `par_sort_unstable` of 10^7 random u64.
pub fn run_unstable(settings: &Settings) -> Result<Report> {
    let n = if settings.quick { QUICK_LEN } else { LEN };
    let threads = settings.threads;
    let input = random(n, 0x2545_F491_4F6C_DD1D);
    let mut want = input.clone();
    want.sort_unstable();
    let (input, want) = (&input, &want);
    let pool = peers::throttle_pool(threads)?;
    let rayon = peers::rayon_pool(threads)?;
    let cases = vec![
        Case::new("serial", 1, move || {
            measure("serial", input, want, |v| v.sort_unstable())
        }),
        Case::new("throttle", threads, || {
            measure("throttle", input, want, |v| {
                pool.install(|| throttle::slice::ParallelSliceMut::par_sort_unstable(v))
            })
        }),
        Case::new("rayon", threads, || {
            measure("rayon", input, want, |v| {
                rayon.install(|| rayon::slice::ParallelSliceMut::par_sort_unstable(v))
            })
        }),
    ];
    let series = run_interleaved(settings.reps, true, cases)?;
    let what = format!("par_sort_unstable of {n} random u64; wall time");
    let mut report = Report::new("sort_unstable", what, serial_baseline(), series);
    let throttle = report.median_of("throttle", threads);
    report.ratio_target(
        format!("throttle ≤ 1.0×rayon ({threads} threads)"),
        throttle,
        report.median_of("rayon", threads),
        1.0,
    );
    report.ratio_target(
        "throttle ≤ 0.6×serial sort_unstable",
        throttle,
        report.median_of("serial", 1),
        0.6,
    );
    Ok(report)
}

/// `sort_stable`: `par_sort_by_key` of 10^7 random `(u32, u32)` by the first field.
pub fn run_stable(settings: &Settings) -> Result<Report> {
    let n = if settings.quick { QUICK_LEN } else { LEN };
    let threads = settings.threads;
    let input: Vec<(u32, u32)> = random(n, 0x9E37_79B9_7F4A_7C15)
        .into_iter()
        .map(|x| ((x >> 40) as u32, x as u32))
        .collect();
    let mut want = input.clone();
    want.sort_by_key(|p| p.0);
    let (input, want) = (&input, &want);
    let pool = peers::throttle_pool(threads)?;
    let rayon = peers::rayon_pool(threads)?;
    let cases = vec![
        Case::new("serial", 1, move || {
            measure("serial", input, want, |v| v.sort_by_key(|p| p.0))
        }),
        Case::new("throttle", threads, || {
            measure("throttle", input, want, |v| {
                pool.install(|| throttle::slice::ParallelSliceMut::par_sort_by_key(v, |p| p.0))
            })
        }),
        Case::new("rayon", threads, || {
            measure("rayon", input, want, |v| {
                rayon.install(|| rayon::slice::ParallelSliceMut::par_sort_by_key(v, |p| p.0))
            })
        }),
    ];
    let series = run_interleaved(settings.reps, true, cases)?;
    let what = format!("par_sort_by_key of {n} random (u32, u32) by .0 (stable); wall time");
    let mut report = Report::new("sort_stable", what, serial_baseline(), series);
    report.ratio_target(
        format!("throttle ≤ 1.0×rayon ({threads} threads)"),
        report.median_of("throttle", threads),
        report.median_of("rayon", threads),
        1.0,
    );
    Ok(report)
}
