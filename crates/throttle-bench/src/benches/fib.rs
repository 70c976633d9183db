//! `fib`: naive Fibonacci with a join at every call, no sequential cutoff.

use anyhow::Result;
use throttle_workloads::fib::fib_serial;

use super::floor::{fib_floor, Floor};
use super::tree_sum::{fork_join_targets, serial_baseline, FLOOR};
use super::{peers, Settings};
use crate::harness::{check, run_interleaved, time, Case, Report};

/// `n` of the full run.
pub(super) const N: u32 = 32;
/// `n` under `--quick`.
pub(super) const QUICK_N: u32 = 25;

pub(super) fn fib_throttle(n: u32) -> u64 {
    if n < 2 {
        return u64::from(n);
    }
    let (a, b) = throttle::join(|| fib_throttle(n - 1), || fib_throttle(n - 2));
    a + b
}

pub(super) fn fib_throttle_cx(cx: &throttle::Context, n: u32) -> u64 {
    if n < 2 {
        return u64::from(n);
    }
    let (a, b) = cx.join(
        |cx| fib_throttle_cx(cx, n - 1),
        |cx| fib_throttle_cx(cx, n - 2),
    );
    a + b
}

pub(super) fn fib_rayon(n: u32) -> u64 {
    if n < 2 {
        return u64::from(n);
    }
    let (a, b) = rayon::join(|| fib_rayon(n - 1), || fib_rayon(n - 2));
    a + b
}

pub(super) fn fib_chili(n: u32, s: &mut chili::Scope<'_>) -> u64 {
    if n < 2 {
        return u64::from(n);
    }
    let (a, b) = s.join(|s| fib_chili(n - 1, s), |s| fib_chili(n - 2, s));
    a + b
}

/// Runs the bench.
pub fn run(settings: &Settings) -> Result<Report> {
    let n = if settings.quick { QUICK_N } else { N };
    let want = fib_serial(n);
    let counts = settings.one_and_all();
    let throttles = counts
        .iter()
        .map(|&t| peers::throttle_pool(t))
        .collect::<Result<Vec<_>>>()?;
    let rayons = counts
        .iter()
        .map(|&t| peers::rayon_pool(t))
        .collect::<Result<Vec<_>>>()?;
    let chilis = counts
        .iter()
        .map(|&t| peers::chili_pool(t))
        .collect::<Result<Vec<_>>>()?;
    let floor = Floor::new();
    let mut cases = vec![Case::new("serial", 1, || {
        let (t, got) = time(|| fib_serial(std::hint::black_box(n)));
        check("serial", got, want)?;
        Ok(t)
    })];
    let floor = &floor;
    cases.push(Case::new(FLOOR, 1, move || {
        let (t, got) = time(|| fib_floor(floor, std::hint::black_box(n)));
        check(FLOOR, got, want)?;
        Ok(t)
    }));
    for (i, &threads) in counts.iter().enumerate() {
        let throttle = &throttles[i];
        cases.push(Case::new("throttle", threads, move || {
            let (t, got) = time(|| throttle.install(|| fib_throttle(n)));
            check("throttle", got, want)?;
            Ok(t)
        }));
        cases.push(
            Case::new("throttle", threads, move || {
                let (t, got) = time(|| throttle.install_cx(|cx| fib_throttle_cx(cx, n)));
                check("throttle cx", got, want)?;
                Ok(t)
            })
            .variant("cx"),
        );
        let rayon = &rayons[i];
        cases.push(Case::new("rayon", threads, move || {
            let (t, got) = time(|| rayon.install(|| fib_rayon(n)));
            check("rayon", got, want)?;
            Ok(t)
        }));
        let chili = &chilis[i];
        cases.push(Case::new("chili", threads, move || {
            let (t, got) = time(|| fib_chili(n, &mut chili.scope()));
            check("chili", got, want)?;
            Ok(t)
        }));
    }
    let series = run_interleaved(settings.reps, true, cases)?;
    let what = format!("fib({n}), join at every call; wall time");
    let mut report = Report::new("fib", what, serial_baseline(), series);
    fork_join_targets(&mut report, settings);
    Ok(report)
}
