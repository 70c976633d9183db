//! The rest of the bench group `adaptive`: `phases` (lock, cpu, lock),
//! `jobs` (seed 001's job-length axis) and `steady` (no change of k once settled). The same
//! workloads as `throttle adapt`, measured by the bench harness (interleaved cases, medians
//! with min/max, ratios against a named baseline).

use std::cell::RefCell;
use std::time::{Duration, Instant};

use anyhow::Result;
use throttle::Pool;
use throttle_workloads::adaptive::{self, Kind, Shared};
use throttle_workloads::kernels::spin;

use super::Settings;
use crate::harness::{median, run_interleaved, time, Baseline, Case, Report};

/// Items of `kind` that take about `secs` on one thread.
fn items_for(kind: Kind, shared: &Shared, secs: f64) -> usize {
    let t = Instant::now();
    for _ in 0..20 {
        adaptive::item(kind, shared);
    }
    let per = t.elapsed().as_secs_f64() / 20.0;
    ((secs / per) as usize).max(64)
}

/// `adaptive_phases`: lock, cpu, lock (a fixed number of items each), every fixed k and auto
/// interleaved. The auto pool is kept across repetitions (warm), so each repetition is the
/// next cycle of a long-running program's phases. Target: auto ≤ 1.10 × the sum of each
/// phase's best fixed-k median.
pub fn phases(settings: &Settings) -> Result<Report> {
    let threads = settings.threads;
    let plan = [Kind::Lock, Kind::Cpu, Kind::Lock];
    let shared = Shared::new();
    let secs = if settings.quick { 0.2 } else { 0.7 };
    let items: Vec<usize> = plan.iter().map(|&k| items_for(k, &shared, secs)).collect();
    let fixed: Vec<Pool> = (1..=threads)
        .map(|k| {
            let p = Pool::new(threads)?;
            p.set_concurrency(k)?;
            Ok(p)
        })
        .collect::<Result<_, throttle::Error>>()?;
    let auto = Pool::new(threads)?;
    auto.set_concurrency_auto()?;
    adaptive::warm_until_settled(&auto, plan[2], 256, &shared, Duration::from_secs(5));
    // Per case, per phase: wall times.
    let phase_times: Vec<RefCell<Vec<Vec<f64>>>> = (0..=threads)
        .map(|_| RefCell::new(vec![Vec::new(); plan.len()]))
        .collect();
    let (shared, plan_ref, items_ref) = (&shared, &plan, &items);
    let measure = |pool: &Pool, slot: &RefCell<Vec<Vec<f64>>>| {
        let (t, ()) = time(|| {
            for (i, &kind) in plan_ref.iter().enumerate() {
                let (p, ()) = time(|| adaptive::run(pool, kind, items_ref[i], shared));
                slot.borrow_mut()[i].push(p);
            }
        });
        t
    };
    let mut cases = Vec::new();
    for (i, p) in fixed.iter().enumerate() {
        let (m, slot) = (&measure, &phase_times[i]);
        cases.push(Case::new("fixed", i + 1, move || Ok(m(p, slot))));
    }
    let (m, slot, a) = (&measure, &phase_times[threads], &auto);
    cases.push(Case::new("auto", threads, move || Ok(m(a, slot))));
    let series = run_interleaved(settings.reps, true, cases)?;
    let what = format!(
        "adaptive_phases: lock {} items, cpu {} items, lock {} items; fixed k = 1..={threads} vs auto",
        items[0], items[1], items[2]
    );
    // Per phase: the best fixed k's median time.
    let med = |case: usize, phase: usize| median(&phase_times[case].borrow()[phase]);
    let best: Vec<(usize, f64)> = (0..plan.len())
        .map(|ph| {
            (0..threads)
                .map(|c| (c + 1, med(c, ph)))
                .min_by(|a, b| a.1.total_cmp(&b.1))
                .unwrap_or((1, f64::NAN))
        })
        .collect();
    let best_total: f64 = best.iter().map(|b| b.1).sum();
    let baseline = Baseline {
        system: "fixed",
        threads: best[0].0,
        variant: None,
    };
    let mut report = Report::new("adaptive_phases", what, baseline, series);
    let auto_total = report.median_of("auto", threads);
    report.target(
        "auto ≤ 1.10 × Σ per-phase best fixed k",
        auto_total.map(|a| a / best_total),
        |r| r <= 1.10,
        |r| format!("{r:.2}"),
    );
    let per_phase: Vec<String> = plan
        .iter()
        .enumerate()
        .map(|(ph, k)| {
            format!(
                "{}: best fixed k = {} {:.3} s, auto {:.3} s",
                k.name(),
                best[ph].0,
                best[ph].1,
                med(threads, ph)
            )
        })
        .collect();
    report.notes.push(format!(
        "per-phase medians: {}; the time to reach each phase's best k is printed by `throttle adapt --workloads phases`",
        per_phase.join("; ")
    ));
    Ok(report)
}

/// The job lengths of `adaptive_jobs` (spin iterations per job).
const JOB_LENGTHS: [(u64, &str); 6] = [
    (1, "L=1"),
    (10, "L=10"),
    (100, "L=100"),
    (1_000, "L=1000"),
    (10_000, "L=10000"),
    (100_000, "L=100000"),
];

/// `adaptive_jobs`: seed 001's job-length axis. A call is `for_range` over 16 jobs of L spin
/// iterations; per L, a fixed number of calls serially on the caller, on all threads, and in
/// auto mode (per-call-site memory; one call site). Target per L: auto ≥ 0.95 × the faster of
/// the two in throughput, i.e. time ≤ min(serial, all) / 0.95.
pub fn jobs(settings: &Settings) -> Result<Report> {
    let threads = settings.threads;
    let all = Pool::new(threads)?;
    let auto = Pool::new(threads)?;
    auto.set_concurrency_auto()?;
    let secs = if settings.quick { 0.02 } else { 0.1 };
    let mut cases = Vec::new();
    let mut calls_of = Vec::new();
    for &(len, label) in &JOB_LENGTHS {
        let body = move |_: usize| {
            std::hint::black_box(spin(len));
        };
        // Calls that take about `secs` serially.
        let t = Instant::now();
        let mut n = 0u64;
        while t.elapsed().as_secs_f64() < secs / 10.0 {
            (0..16).for_each(body);
            n += 1;
        }
        let calls = (n * 10).max(4);
        calls_of.push(calls);
        cases.push(
            Case::new("serial", 1, move || {
                Ok(time(|| (0..calls).for_each(|_| (0..16).for_each(body))).0)
            })
            .variant(label),
        );
        let all = &all;
        cases.push(
            Case::new("all", threads, move || {
                Ok(time(|| (0..calls).for_each(|_| all.for_range(0..16, body))).0)
            })
            .variant(label),
        );
        let auto = &auto;
        cases.push(
            Case::new("auto", threads, move || {
                // One call site for every run of this length: the closure below.
                Ok(time(|| (0..calls).for_each(|_| auto.for_range(0..16, body))).0)
            })
            .variant(label),
        );
    }
    let series = run_interleaved(settings.reps, true, cases)?;
    let what = format!(
        "adaptive_jobs: for_range over 16 jobs of L spin iterations, calls per L: {}",
        calls_of
            .iter()
            .map(|c| c.to_string())
            .collect::<Vec<_>>()
            .join("/")
    );
    let baseline = Baseline {
        system: "serial",
        threads: 1,
        variant: Some(JOB_LENGTHS[0].1),
    };
    let mut report = Report::new("adaptive_jobs", what, baseline, series);
    for &(_, label) in &JOB_LENGTHS {
        let m = |system: &str, t: usize| {
            report
                .find_variant(system, t, Some(label))
                .map(|s| s.median())
        };
        let (s, p, a) = (m("serial", 1), m("all", threads), m("auto", threads));
        let ratio = match (s, p, a) {
            (Some(s), Some(p), Some(a)) => Some(s.min(p) / a),
            _ => None,
        };
        report.target(
            format!("{label}: auto throughput ≥ 0.95 × max(serial, all threads)"),
            ratio,
            |r| r >= 0.95,
            |r| format!("{r:.2}"),
        );
    }
    Ok(report)
}

/// `adaptive_steady`: uniform cpu items on a fresh (cold) auto pool each repetition, beside a
/// fixed pool at k = cores. Target: no change of k after the controller first settled, in
/// every repetition.
pub fn steady(settings: &Settings) -> Result<Report> {
    let threads = settings.threads;
    let shared = Shared::new();
    let items = items_for(Kind::Cpu, &shared, if settings.quick { 1.0 } else { 4.0 });
    let fixed = Pool::new(threads)?;
    let after: RefCell<Vec<usize>> = RefCell::new(Vec::new());
    let settled_at: RefCell<Vec<Option<f64>>> = RefCell::new(Vec::new());
    let shared = &shared;
    let mut cases = vec![Case::new("fixed", threads, || {
        Ok(time(|| adaptive::run(&fixed, Kind::Cpu, items, shared)).0)
    })];
    let (after_ref, settled_ref) = (&after, &settled_at);
    cases.push(Case::new("auto", threads, move || {
        let auto = Pool::new(threads)?;
        auto.set_concurrency_auto()?;
        let (t, ()) = time(|| adaptive::run(&auto, Kind::Cpu, items, shared));
        let log = auto.controller_log();
        let first = log.iter().position(|e| e.reason.settles());
        after_ref.borrow_mut().push(first.map_or(usize::MAX, |i| {
            log[i + 1..].iter().filter(|e| e.old_k != e.new_k).count()
        }));
        settled_ref
            .borrow_mut()
            .push(first.map(|i| log[i].at.as_secs_f64()));
        Ok(t)
    }));
    let series = run_interleaved(settings.reps, false, cases)?;
    let what = format!(
        "adaptive_steady: {items} cpu items; fixed k = {threads} vs a cold auto pool per run"
    );
    let baseline = Baseline {
        system: "fixed",
        threads,
        variant: None,
    };
    let mut report = Report::new("adaptive_steady", what, baseline, series);
    let after = after.into_inner();
    let worst = after.iter().copied().max().unwrap_or(usize::MAX);
    report.target(
        "0 changes of k after settling (worst repetition)",
        (worst != usize::MAX).then_some(worst as f64),
        |w| w == 0.0,
        |w| format!("{w:.0}"),
    );
    let (a, f) = (
        report.median_of("auto", threads),
        report.median_of("fixed", threads),
    );
    report.ratio_target(
        "auto (cold start included) ≤ 1.05 × fixed k = cores",
        a,
        f,
        1.05,
    );
    let settled: Vec<String> = settled_at
        .into_inner()
        .iter()
        .map(|s| s.map_or("never".into(), |s| format!("{s:.2}s")))
        .collect();
    report.notes.push(format!(
        "settled at (per run): {}; changes after settling (per run): {:?}",
        settled.join(", "),
        after
    ));
    Ok(report)
}
