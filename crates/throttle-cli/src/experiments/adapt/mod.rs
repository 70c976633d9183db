//! `throttle adapt`: the proof that the pool can choose its own concurrency. For each
//! workload it first sweeps every fixed `k` (proving which is best here), then runs auto mode,
//! interleaved with the fixed runs, and reports time, CPU-seconds, the `k` the controller chose
//! over time, and the ratios against auto mode's targets (met, missed or not shown, by the rule
//! of `crate::verdict`). `--sim` prints the simulated machines of 8, 64 and 256 cores instead
//! (the controller against the hill-climbing baseline, in intervals to settle).
//!
//! The phases experiment (how soon auto mode follows a workload that changes) is in
//! `phases.rs`.

use std::time::{Duration, Instant};

use clap::{Args, ValueEnum};
use throttle::controller::sim::{
    blind_spot_plant, run as sim_run, standard_plants, HillClimb, SegmentResult,
};
use throttle::controller::{Config, Controller, ControllerEvent, Reason};
use throttle::Pool;
use throttle_workloads::adaptive::{self, Kind, Shared};
use throttle_workloads::kernels::spin;

use crate::error::usage;
use crate::experiments::adapt_plot::{self, Reference, Timeline};

mod phases;
use anyhow::Context as _;
use phases::phases;

/// A workload of the proof.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Workload {
    /// Uniform compute-bound tasks (best k = cores).
    Cpu,
    /// Short compute, then a long critical section on one shared spinning lock (best k = 1).
    Lock,
    /// Streaming over an array larger than the last-level cache (flat).
    Membound,
    /// Tasks asleep half their time, pool of 8 threads (best k > cores).
    Blocking,
    /// lock, cpu, lock phases (per-phase best).
    Phases,
    /// Seed 001's job-length axis: loops from trivial to long (serial → all threads).
    Jobs,
    /// Uniform work for a while: the controller must not move once settled.
    Steady,
}

/// Options of `throttle adapt`.
#[derive(Debug, Args)]
#[command(
    about = "Auto mode: the pool chooses its own concurrency; fixed-k sweep vs auto, or --sim",
    long_about = "The proof of auto mode (Pool::set_concurrency_auto). For each workload, every \
fixed k is run first (the sweep shows which k is best on this machine), then auto mode, the runs \
interleaved over --reps repetitions. Reported: median wall time (min-max), CPU-seconds of the \
process, the k the controller chose over time, and the ratios against the targets of auto mode \
(docs/auto.md), each marked met, MISSED (only when a Mann–Whitney test on the repetitions says \
so: p ≤ 0.10, at least 3 runs of each) or not shown.\n\n--sim prints the simulated machines (8, 64 and 256 cores, noise 2-10 %, \
step changes) instead: intervals until the controller settles within 5 % of the peak, beside a \
hill-climbing baseline written after .NET's thread pool.\n\nTimings on a shared machine are \
noisy: read the min-max spread before the ratios."
)]
pub struct AdaptArgs {
    /// Print the simulated results (no real work).
    #[arg(long)]
    pub sim: bool,
    /// Workloads, comma-separated.
    #[arg(long, value_enum, value_delimiter = ',', default_values_t = [
        Workload::Cpu, Workload::Lock, Workload::Membound, Workload::Blocking,
        Workload::Phases, Workload::Jobs, Workload::Steady])]
    pub workloads: Vec<Workload>,
    /// Repetitions of every fixed k and of auto.
    #[arg(long, default_value_t = 7, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub reps: u32,
    /// Short runs (about a minute in all, fewer repetitions).
    #[arg(long)]
    pub quick: bool,
    /// Worker threads of the pools (default: the CPUs this process may use; `blocking` uses 8).
    #[arg(long, value_name = "N")]
    pub threads: Option<usize>,
    /// Draw k(t) and throughput(t) of every workload's auto pool as SVG figures in FILE.
    #[arg(long, value_name = "FILE")]
    pub plot: Option<std::path::PathBuf>,
}

/// Runs `throttle adapt`.
pub fn run(args: &AdaptArgs) -> anyhow::Result<()> {
    if args.threads == Some(0) {
        return Err(usage("--threads", "0", "must be at least 1"));
    }
    if args.sim {
        print_sim();
        return Ok(());
    }
    // Checked before anything is measured: a bad path costs a second, not minutes.
    if let Some(p) = &args.plot {
        crate::export::check_writable("--plot", p)?;
    }
    let plot = args.plot.is_some();
    let mut timelines: Vec<Timeline> = Vec::new();
    let cores = throttle::default_threads();
    let threads = args.threads.unwrap_or(cores);
    let reps = if args.quick {
        args.reps.min(3)
    } else {
        args.reps
    } as usize;
    // Seconds one run takes at k = 1 (the runs at the best k are shorter).
    let unit = if args.quick { 0.3 } else { 1.0 };
    println!(
        "throttle adapt: {cores} usable CPUs, pools of {threads} threads, {reps} repetitions; \
         timings on a shared machine are noisy (see min-max)\n"
    );
    for &w in &args.workloads {
        let tl = match w {
            Workload::Cpu => Some(batch(Kind::Cpu, threads, reps, unit, plot)?),
            Workload::Lock => Some(batch(Kind::Lock, threads, reps, unit, plot)?),
            Workload::Membound => Some(batch(Kind::Membound, threads, reps, unit, plot)?),
            Workload::Blocking => Some(batch(
                Kind::Blocking,
                args.threads.unwrap_or(8),
                reps,
                unit,
                plot,
            )?),
            Workload::Phases => Some(phases(
                threads,
                if args.quick { 0.5 } else { 2.0 },
                reps,
                plot,
            )?),
            Workload::Jobs => {
                jobs(threads, if args.quick { 0.1 } else { 0.3 }, reps)?;
                None
            }
            Workload::Steady => Some(steady(threads, if args.quick { 3.0 } else { 10.0 }, plot)?),
        };
        timelines.extend(tl);
    }
    if let Some(p) = &args.plot {
        std::fs::write(p, adapt_plot::to_svg(&timelines))
            .with_context(|| format!("writing the figures to {}", p.display()))?;
        println!("figures: {}", p.display());
    }
    Ok(())
}

fn print_sim() {
    let fmt = |t: Option<usize>| t.map_or("  -".to_string(), |t| format!("{t:>3}"));
    println!("Simulated machines: intervals until the k in force stays within 5 % of the peak");
    println!("(segments of 60 intervals: scalable, peak at cores/4, flat, scalable; '-' = never)");
    println!(
        "ours = the controller state machine; hc = hill climbing after .NET (its centre in ())\n"
    );
    let total = |r: &[SegmentResult]| -> usize { r.iter().map(|s| s.settle.unwrap_or(60)).sum() };
    for (name, plant) in standard_plants() {
        let ours = sim_run(&plant, &mut Controller::new(Config::new(plant.cores))).segments();
        let base = sim_run(&plant, &mut HillClimb::new(plant.cores)).segments();
        let cells: Vec<String> = ours
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
        let changes: usize = ours.iter().map(|s| s.changes_after).sum();
        println!(
            "{name:<24} {}  | total ours {:>3}, hc {:>3}; k changes after settling: {changes}",
            cells.join(" | "),
            total(&ours),
            total(&base)
        );
    }
    // The blind spot: flat work whose signal at k = 1 is that of every k, then
    // scalable work. Every k is within 5 % of the flat segment's peak, so the throughput-based
    // settling above says nothing there: shown is when k stopped moving, and where.
    let trace = sim_run(&blind_spot_plant(10), &mut Controller::new(Config::new(8)));
    let cells: Vec<String> = (0..2)
        .filter_map(|seg| trace.still_from(seg))
        .map(|(from, k)| format!("k still from {from:>3} at k = {k}"))
        .collect();
    println!(
        "{:<24} {}  (flat, then scalable; ±5 %)",
        "8 cores, flat from k = 1",
        cells.join(" | ")
    );
    println!(
        "\nTarget: ≤ 20 intervals from a cold start and after each step; 0 changes once settled;\n\
         flat work at a small k (the same work with fewer threads)."
    );
}

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

#[derive(Debug, Clone, Copy)]
struct Run {
    wall: f64,
    cpu: f64,
}

fn measure(f: impl FnOnce()) -> Run {
    let (t, c) = (Instant::now(), cpu_time());
    f();
    Run {
        wall: t.elapsed().as_secs_f64(),
        cpu: (cpu_time() - c).as_secs_f64(),
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    if v.is_empty() {
        return f64::NAN;
    }
    v[v.len() / 2]
}

/// Seconds per item from items per second, for [`judged`].
fn times_of(rates: &[f64]) -> Vec<f64> {
    rates.iter().map(|r| 1.0 / r).collect()
}

fn min_max(v: &[f64]) -> (f64, f64) {
    v.iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &x| {
            (a.min(x), b.max(x))
        })
}

/// How long one item takes on one thread (a short serial calibration).
fn item_seconds(kind: Kind, shared: &Shared) -> f64 {
    let n = 20;
    let t = Instant::now();
    for _ in 0..n {
        adaptive::item(kind, shared);
    }
    t.elapsed().as_secs_f64() / f64::from(n)
}

/// A time target judged by the one rule of [`crate::verdict`]: auto's times against the best
/// fixed k's times scaled by `factor` (the target "auto ≤ factor × best"). `met` when auto's
/// median is within it; `MISSED` only when the test calls auto slower than the target; and
/// otherwise `not shown`, with the reason: a median above the target that the runs cannot tell
/// from it is no miss.
fn judged(auto: &[f64], best: &[f64], factor: f64) -> String {
    let target: Vec<f64> = best.iter().map(|t| t * factor).collect();
    let c = crate::verdict::compare(auto, &target);
    if c.ratio <= 1.0 {
        "met".to_string()
    } else if c.is_real() {
        format!("MISSED ({})", c.reason())
    } else {
        format!(
            "not shown: the median is {:.1} % above the target, {}",
            c.percent(),
            c.clause()
        )
    }
}

fn met(ok: bool) -> &'static str {
    if ok {
        "met"
    } else {
        "MISSED"
    }
}

/// The CPU target: where a smaller `k` is as fast as the best (within its spread), auto
/// uses at most this many times that `k`'s CPU-seconds.
const FRUGAL_CPU: f64 = 1.2;

/// The index (`k - 1`) of the fewest threads whose median wall time lies within the spread
/// (min-max) of the best fixed `k`'s, `best` itself if none smaller does.
fn frugal_k(walls: &[Vec<f64>], best: usize) -> usize {
    let (_, best_max) = min_max(&walls[best]);
    (0..best)
        .find(|&k| median(walls[k].clone()) <= best_max)
        .unwrap_or(best)
}

/// A batch workload: fixed k = 1..=threads, then auto, interleaved.
fn batch(
    kind: Kind,
    threads: usize,
    reps: usize,
    unit: f64,
    plot: bool,
) -> anyhow::Result<Timeline> {
    let shared = Shared::new();
    shared.prepare(kind);
    let items = ((unit / item_seconds(kind, &shared)) as usize).max(64);
    let fixed = Pool::new(threads)?;
    let auto = Pool::new(threads)?;
    auto.set_concurrency_auto()?;
    let mut walls: Vec<Vec<f64>> = vec![Vec::new(); threads + 1];
    let mut cpus: Vec<Vec<f64>> = vec![Vec::new(); threads + 1];
    let (settled, points) = adapt_plot::record(&auto, plot, || -> anyhow::Result<bool> {
        // Warm-up: the auto pool learns before the recorded runs ("recent runtime history").
        let settled =
            adaptive::warm_until_settled(&auto, kind, items, &shared, Duration::from_secs(5));
        for rep in 0..reps {
            // Index `threads` stands for auto; the order rotates each repetition.
            for j in 0..=threads {
                let case = (j + rep) % (threads + 1);
                let r = if case == threads {
                    measure(|| adaptive::run(&auto, kind, items, &shared))
                } else {
                    fixed.set_concurrency(case + 1)?;
                    measure(|| adaptive::run(&fixed, kind, items, &shared))
                };
                walls[case].push(r.wall);
                cpus[case].push(r.cpu);
            }
        }
        Ok(settled)
    });
    let settled = settled?;
    println!(
        "== {} ({items} items, pool of {threads} threads; auto pool {} in warm-up) ==",
        kind.name(),
        if settled { "settled" } else { "did NOT settle" }
    );
    println!(
        "{:>6} {:>10} {:>19} {:>8}",
        "k", "wall s", "min-max", "CPU s"
    );
    let med: Vec<f64> = walls.iter().map(|v| median(v.clone())).collect();
    let cpu: Vec<f64> = cpus.iter().map(|v| median(v.clone())).collect();
    for case in 0..=threads {
        let (lo, hi) = min_max(&walls[case]);
        let name = if case == threads {
            "auto".to_string()
        } else {
            (case + 1).to_string()
        };
        println!(
            "{name:>6} {:>10.3} {:>9.3}-{:<9.3} {:>8.3}",
            med[case], lo, hi, cpu[case]
        );
    }
    let best = (0..threads)
        .min_by(|&a, &b| med[a].total_cmp(&med[b]))
        .unwrap_or(0);
    let cores = throttle::default_threads().min(threads);
    let time_ratio = med[threads] / med[best];
    let cpu_ratio = cpu[threads] / cpu[cores - 1];
    println!(
        "best fixed k = {}; auto/best time = {time_ratio:.3}; auto CPU-s / CPU-s at k = cores ({cores}) = {cpu_ratio:.3}",
        best + 1
    );
    let (time_target, cpu_target) = match kind {
        Kind::Cpu => (1.01, None),
        Kind::Lock => (1.05, Some(0.6)),
        Kind::Membound => (1.05, Some(0.8)),
        Kind::Blocking => (1.05, None),
    };
    print!(
        "target: time ≤ {time_target} × best: {}",
        judged(&walls[threads], &walls[best], time_target)
    );
    if let Some(c) = cpu_target {
        print!("; CPU-s ≤ {c} × k = cores: {}", met(cpu_ratio <= c));
    }
    println!();
    let frugal = frugal_k(&walls[..threads], best);
    println!(
        "fewest threads as fast as the best (median within its min-max): k = {}; auto CPU-s / \
         its CPU-s = {:.3}; target ≤ {FRUGAL_CPU} ×: {}",
        frugal + 1,
        cpu[threads] / cpu[frugal],
        judged(&cpus[threads], &cpus[frugal], FRUGAL_CPU)
    );
    print_k_over_time(&auto.controller_log(), auto.concurrency());
    println!();
    Ok(Timeline {
        workload: kind.name().into(),
        what: format!(
            "warm-up, then {reps} runs of {items} items interleaved with the fixed-k runs \
             (the gaps)"
        ),
        threads,
        points,
        best_k: Some(best + 1),
        reference: Some(Reference {
            name: format!("best fixed k = {} (median run)", best + 1),
            spans: vec![(0.0, f64::INFINITY, items as f64 / med[best])],
        }),
        marks: Vec::new(),
    })
}

fn print_k_over_time(log: &[ControllerEvent], now: usize) {
    let changes: Vec<String> = log
        .iter()
        .filter(|e| {
            e.old_k != e.new_k
                || e.reason.settles()
                || matches!(e.reason, Reason::ThroughputShift | Reason::LoadShift)
        })
        .map(|e| {
            format!(
                "{:.2}s {}→{} ({})",
                e.at.as_secs_f64(),
                e.old_k,
                e.new_k,
                e.reason
            )
        })
        .collect();
    let shown = changes.len().min(12);
    println!(
        "k over time (last {shown} of {} decisions): {}; k now {now}",
        changes.len(),
        changes[changes.len() - shown..].join(", ")
    );
}

/// Items per batch of [`run_for`].
const BATCH: usize = 64;

/// Runs items of `kind` on `pool` for `secs`; returns items done.
fn run_for(pool: &Pool, kind: Kind, secs: f64, shared: &Shared) -> usize {
    run_for_marked(pool, kind, secs, shared).0
}

/// [`run_for`], also returning when each batch of [`BATCH`] items ended (since the start).
fn run_for_marked(pool: &Pool, kind: Kind, secs: f64, shared: &Shared) -> (usize, Vec<Duration>) {
    let t = Instant::now();
    let mut n = 0;
    let mut ends = Vec::new();
    while t.elapsed().as_secs_f64() < secs {
        adaptive::run(pool, kind, BATCH, shared);
        n += BATCH;
        ends.push(t.elapsed());
    }
    (n, ends)
}

/// Seed 001's job-length axis: a loop of 16 jobs of `len` spin iterations each, called over and
/// over from one call site; calls per second serially, on all threads, and in auto mode. Each
/// length is warmed up once in auto mode, then the three ways run `reps` times interleaved
/// (`secs` each); the table shows medians and each length's verdict on the median times per
/// call.
fn jobs(threads: usize, secs: f64, reps: usize) -> anyhow::Result<()> {
    println!(
        "== jobs: for_range over 16 jobs of L spin iterations, {secs} s per run, {reps} runs \
         of each way interleaved =="
    );
    println!(
        "{:>9} {:>12} {:>12} {:>12} {:>8} {:>15}  target (auto ≥ 0.95 × the faster way)",
        "L", "serial/s", "all/s", "auto/s", "ratio", "ratio min-max"
    );
    let all = Pool::new(threads)?;
    let auto = Pool::new(threads)?;
    auto.set_concurrency_auto()?;
    let mut worst: f64 = f64::INFINITY;
    let mut misses = 0;
    for len in [1u64, 10, 100, 1_000, 10_000, 100_000] {
        let body = |_: usize| {
            std::hint::black_box(spin(len));
        };
        let rate = |f: &dyn Fn()| {
            let t = Instant::now();
            let mut n = 0u64;
            while t.elapsed().as_secs_f64() < secs {
                f();
                n += 1;
            }
            n as f64 / t.elapsed().as_secs_f64()
        };
        // One call site (this closure) for every length, as a program's loop whose jobs grow.
        let call = || auto.for_range(0..16, body);
        let _ = rate(&call);
        let (mut serial, mut par, mut a) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..reps {
            serial.push(rate(&|| (0..16).for_each(body)));
            par.push(rate(&|| all.for_range(0..16, body)));
            a.push(rate(&call));
        }
        let (ms, mp, ma) = (
            median(serial.clone()),
            median(par.clone()),
            median(a.clone()),
        );
        let best = if ms >= mp { &serial } else { &par };
        let ratio = ma / ms.max(mp);
        let per_run: Vec<f64> = (0..reps).map(|i| a[i] / serial[i].max(par[i])).collect();
        let (lo, hi) = min_max(&per_run);
        let verdict = judged(&times_of(&a), &times_of(best), 1.0 / 0.95);
        if verdict.starts_with("MISSED") {
            misses += 1;
        }
        worst = worst.min(ratio);
        println!(
            "{len:>9} {ms:>12.0} {mp:>12.0} {ma:>12.0} {ratio:>8.3} {:>15}  {verdict}",
            format!("{lo:.2}-{hi:.2}")
        );
    }
    println!(
        "target: at every length auto ≥ 0.95 × max(serial, all threads): worst median ratio \
         {worst:.3}; lengths missed: {misses}\n"
    );
    print_k_over_time(&auto.controller_log(), auto.concurrency());
    println!();
    Ok(())
}

/// Uniform work for `secs`: changes of k after the controller first settled.
fn steady(threads: usize, secs: f64, plot: bool) -> anyhow::Result<Timeline> {
    let shared = Shared::new();
    let auto = Pool::new(threads)?;
    auto.set_concurrency_auto()?;
    let (n, points) = adapt_plot::record(&auto, plot, || run_for(&auto, Kind::Cpu, secs, &shared));
    let log = auto.controller_log();
    let settled = log.iter().position(|e| e.reason.settles());
    let after = settled.map_or(0, |i| {
        log[i + 1..].iter().filter(|e| e.old_k != e.new_k).count()
    });
    println!("== steady: cpu items for {secs} s, pool of {threads} threads: {n} items ==");
    println!(
        "settled at {}; changes of k after settling: {after} (target 0: {})",
        settled.map_or("never".to_string(), |i| format!(
            "{:.2} s on k = {}",
            log[i].at.as_secs_f64(),
            log[i].new_k
        )),
        met(settled.is_some() && after == 0)
    );
    print_k_over_time(&log, auto.concurrency());
    println!();
    Ok(Timeline {
        workload: "steady".into(),
        what: format!("cpu items for {secs} s"),
        threads,
        points,
        best_k: None,
        reference: None,
        marks: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_target_is_missed_only_when_the_test_says_so() {
        let best = [1.00, 1.01, 1.02];
        assert_eq!(judged(&[1.0, 1.0, 1.01], &best, 1.01), "met");
        // 1.9× the best: a real miss.
        assert!(judged(&[1.9, 1.91, 1.92], &best, 1.01).starts_with("MISSED (Mann–Whitney"));
        // Above the target by its median, but one run of auto is inside it: not shown.
        let j = judged(&[1.0, 1.1, 1.12], &best, 1.01);
        assert!(j.starts_with("not shown"), "{j}");
        // One repetition each can never miss.
        assert!(judged(&[5.0], &[1.0], 1.01).contains("too few runs"));
    }

    #[test]
    fn the_frugal_k_is_the_fewest_threads_within_the_best_spread() {
        // k = 2 best (1.0-1.2 s), k = 1 within it (1.1 s median): k = 1.
        let walls = vec![
            vec![1.1, 1.1, 1.3],
            vec![1.0, 1.0, 1.2],
            vec![2.0, 2.0, 2.0],
        ];
        assert_eq!(frugal_k(&walls, 1), 0);
        // k = 1 outside the best's spread: the best itself.
        let walls = vec![vec![1.5, 1.5, 1.5], vec![1.0, 1.0, 1.2]];
        assert_eq!(frugal_k(&walls, 1), 1);
        // The best is k = 1: itself.
        assert_eq!(frugal_k(&[vec![1.0]], 0), 0);
    }
}
