//! `adaptive`: auto mode against every fixed `k`, on the batch workloads of
//! `throttle_workloads::adaptive` (cpu, lock, membound, blocking). Every fixed `k` and auto run
//! interleaved; the auto pool is kept across repetitions (it learns once, in the warm-up, and
//! keeps what it learned, as a long-lived program's pool would). CPU-seconds of the process are
//! recorded beside each run and reported in the notes. `throttle adapt` runs the same workloads
//! and prints k over time; phases, jobs and steady are in `adaptive_more.rs`.

use std::cell::RefCell;
use std::time::Duration;

use anyhow::{Context, Result};
use throttle::Pool;
use throttle_workloads::adaptive::{self, Kind, Shared};

use super::Settings;
use crate::harness::{median, run_interleaved, time, Baseline, Case, Report};

/// Process CPU time (user + system) so far.
fn cpu_time() -> Duration {
    // SAFETY: getrusage writes into the zeroed struct we pass and reads nothing else.
    let ru = unsafe {
        let mut ru: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut ru);
        ru
    };
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, (t.tv_usec as u32) * 1000);
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

fn run_kind(settings: &Settings, kind: Kind, name: &'static str) -> Result<Report> {
    let threads = if kind == Kind::Blocking {
        8
    } else {
        settings.threads
    };
    let shared = Shared::new();
    shared.prepare(kind);
    let per_item = {
        let t = std::time::Instant::now();
        for _ in 0..20 {
            adaptive::item(kind, &shared);
        }
        t.elapsed().as_secs_f64() / 20.0
    };
    let unit = if settings.quick { 0.2 } else { 1.0 };
    let items = ((unit / per_item) as usize).max(64);
    let fixed: Vec<Pool> = (1..=threads)
        .map(|k| {
            let p = Pool::new(threads)?;
            p.set_concurrency(k)?;
            Ok(p)
        })
        .collect::<Result<_, throttle::Error>>()
        .context("building the fixed pools")?;
    let auto = Pool::new(threads).context("building the auto pool")?;
    auto.set_concurrency_auto()?;
    let settled = adaptive::warm_until_settled(&auto, kind, items, &shared, Duration::from_secs(5));
    // CPU-seconds per case, recorded beside the harness's wall times.
    let cpu: Vec<RefCell<Vec<f64>>> = (0..=threads).map(|_| RefCell::new(Vec::new())).collect();
    let shared = &shared;
    let measure = |pool: &Pool, slot: &RefCell<Vec<f64>>| {
        let c = cpu_time();
        let (t, ()) = time(|| adaptive::run(pool, kind, items, shared));
        slot.borrow_mut().push((cpu_time() - c).as_secs_f64());
        t
    };
    let mut cases = Vec::new();
    for (i, p) in fixed.iter().enumerate() {
        let (m, slot) = (&measure, &cpu[i]);
        cases.push(Case::new("fixed", i + 1, move || Ok(m(p, slot))));
    }
    let (m, slot, a) = (&measure, &cpu[threads], &auto);
    cases.push(Case::new("auto", threads, move || Ok(m(a, slot))));
    let series = run_interleaved(settings.reps, true, cases)?;
    let what = format!("{name}: {items} items, wall time; fixed k = 1..={threads} vs auto");
    let best_k = (1..=threads)
        .min_by(|&a, &b| {
            let m = |k| {
                series
                    .iter()
                    .find(|s| s.system == "fixed" && s.threads == k)
                    .map_or(f64::INFINITY, |s| s.median())
            };
            m(a).total_cmp(&m(b))
        })
        .unwrap_or(1);
    let baseline = Baseline {
        system: "fixed",
        threads: best_k,
        variant: None,
    };
    let mut report = Report::new(name, what, baseline, series);
    report.notes.push(format!(
        "the auto pool {} in its warm-up (it keeps learning during the runs)",
        if settled { "settled" } else { "did not settle" }
    ));
    let (time_bound, cpu_bound) = match kind {
        Kind::Cpu => (1.01, None),
        Kind::Lock => (1.05, Some(0.6)),
        Kind::Membound => (1.05, Some(0.8)),
        Kind::Blocking => (1.05, None),
    };
    let auto_med = report.median_of("auto", threads);
    let best_med = report.median_of("fixed", best_k);
    report.ratio_target(
        format!("auto ≤ {time_bound} × best fixed (k = {best_k})"),
        auto_med,
        best_med,
        time_bound,
    );
    let cores = settings.threads.min(threads);
    let cpu_med = |i: usize| median(&cpu[i].borrow());
    let cpu_ratio = cpu_med(threads) / cpu_med(cores - 1);
    if let Some(c) = cpu_bound {
        report.target(
            format!("auto CPU-s ≤ {c} × CPU-s at k = cores ({cores})"),
            Some(cpu_ratio),
            |r| r <= c,
            |r| format!("{r:.2}"),
        );
    }
    let cpus: Vec<String> = (0..threads)
        .map(|i| format!("k={}: {:.3}", i + 1, cpu_med(i)))
        .collect();
    report.notes.push(format!(
        "CPU-s medians: {}, auto: {:.3}",
        cpus.join(", "),
        cpu_med(threads)
    ));
    let log = auto.controller_log();
    let ks: Vec<String> = log
        .iter()
        .filter(|e| e.old_k != e.new_k)
        .map(|e| format!("{:.2}s→{}", e.at.as_secs_f64(), e.new_k))
        .collect();
    report.notes.push(format!(
        "auto k over time ({} changes): {}; k at the end: {}",
        ks.len(),
        ks.iter()
            .rev()
            .take(16)
            .rev()
            .cloned()
            .collect::<Vec<_>>()
            .join(" "),
        auto.concurrency()
    ));
    Ok(report)
}

/// `adaptive_cpu`.
pub fn cpu(s: &Settings) -> Result<Report> {
    run_kind(s, Kind::Cpu, "adaptive_cpu")
}
/// `adaptive_lock`.
pub fn lock(s: &Settings) -> Result<Report> {
    run_kind(s, Kind::Lock, "adaptive_lock")
}
/// `adaptive_membound`.
pub fn membound(s: &Settings) -> Result<Report> {
    run_kind(s, Kind::Membound, "adaptive_membound")
}
/// `adaptive_blocking`.
pub fn blocking(s: &Settings) -> Result<Report> {
    run_kind(s, Kind::Blocking, "adaptive_blocking")
}
