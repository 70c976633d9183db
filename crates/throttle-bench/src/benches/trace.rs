//! `trace_off` and `trace_on`: what the timeline recording costs.
//!
//! `trace_off`: recording is compiled in and off by default; its cost when off is one relaxed
//! load of a flag per event site. Measured as `tree_sum` and `fib` on a pool whose recording
//! was never started against a pool of the same size that recorded once before the
//! measurement (rings allocated, flag back off): the same binary, so any difference is the
//! noise of this host, or an effect of the allocated rings. (A build without the recording
//! cannot run in the same process; see the README for a comparison against the previous build.)
//!
//! `trace_on`: the frames workload (seed 002's game loop on the throttle pool) with recording
//! on against off, interleaved; the notes give the slowdown and the cost per recorded event
//! ((time on − time off) / events per run). A direct micro-measure: one thread appending
//! events to a `Recorder` track (clock read included).

use std::cell::Cell;

use anyhow::{bail, Context, Result};
use throttle::trace::{EventKind, Recorder};
use throttle_workloads::fib::fib_serial;
use throttle_workloads::frames::{run_frames, FrameScheduler, Scene};
use throttle_workloads::tree::Node;

use super::fib::{fib_throttle, N, QUICK_N};
use super::frames::{MESHES, VERTICES};
use super::tree_sum::{build, throttle_case};
use super::Settings;
use crate::harness::{check, run_interleaved, time, Baseline, Case, Report};

fn pool(threads: usize, capacity: usize) -> Result<throttle::Pool> {
    throttle::Pool::builder()
        .threads(threads)
        .trace_capacity(capacity)
        .build()
        .with_context(|| format!("building a throttle pool of {threads} threads"))
}

/// fib(`n`) on `pool`, checked.
fn fib_case(pool: &throttle::Pool, n: u32, want: u64) -> impl FnMut() -> Result<f64> + '_ {
    move || {
        let (t, got) = time(|| pool.install(|| fib_throttle(n)));
        check("throttle fib", got, want)?;
        Ok(t)
    }
}

/// The frames' loop on a borrowed pool (`ThrottlePool` owns its pool, with default rings).
struct PoolFrames<'a>(&'a throttle::Pool);

impl FrameScheduler for PoolFrames<'_> {
    fn name(&self) -> &'static str {
        "throttle"
    }

    fn threads(&self) -> usize {
        self.0.threads()
    }

    fn for_each(&mut self, n: usize, f: &(dyn Fn(usize) + Sync)) {
        self.0.for_range(0..n, f);
    }
}

/// Ratio of two variants' medians with their combined spread, as a note.
fn ratio_note(report: &Report, system: &str, threads: usize, a: &str, b: &str) -> String {
    let sa = report.find_variant(system, threads, Some(a));
    let sb = report.find_variant(system, threads, Some(b));
    match (sa, sb) {
        (Some(sa), Some(sb)) => {
            let r = sa.median() / sb.median();
            format!(
                "{system} {a} / {b} = {r:.3} ({:+.1} %), spread ±{:.1} % (IQR/median of both)",
                (r - 1.0) * 100.0,
                (sa.spread() + sb.spread()) * 100.0
            )
        }
        _ => format!("{system} {a} / {b}: not measured"),
    }
}

/// Runs `trace_off`.
pub fn run_off(settings: &Settings) -> Result<Report> {
    let threads = settings.threads;
    let (tree, depth) = build(settings);
    let want = Node::expected_sum(depth);
    let n = if settings.quick { QUICK_N } else { N };
    let fib_want = fib_serial(n);
    let never = pool(threads, throttle::trace::DEFAULT_CAPACITY)?;
    let stopped = pool(threads, throttle::trace::DEFAULT_CAPACITY)?;
    stopped.start_trace();
    stopped.install(|| fib_throttle(10));
    let _ = stopped.stop_trace();
    let cases = vec![
        Case::new("tree_sum", threads, throttle_case(&never, &tree, want)).variant("never"),
        Case::new("tree_sum", threads, throttle_case(&stopped, &tree, want)).variant("stopped"),
        Case::new("fib", threads, fib_case(&never, n, fib_want)).variant("never"),
        Case::new("fib", threads, fib_case(&stopped, n, fib_want)).variant("stopped"),
    ];
    let series = run_interleaved(settings.reps, true, cases)?;
    let what = format!(
        "tree_sum (depth {depth}) and fib({n}) on throttle pools whose recording was never \
         started vs started and stopped before; wall time"
    );
    let baseline = Baseline {
        system: "tree_sum",
        threads,
        variant: Some("never"),
    };
    let mut report = Report::new("trace_off", what, baseline, series);
    for system in ["tree_sum", "fib"] {
        let note = ratio_note(&report, system, threads, "stopped", "never");
        report.notes.push(note);
    }
    report.notes.push(
        "both pools run the same code (flag off); the pair bounds what recording that is off \
         but was used costs, and shows this host's noise"
            .into(),
    );
    Ok(report)
}

/// Runs `trace_on`.
pub fn run_on(settings: &Settings) -> Result<Report> {
    let threads = settings.threads;
    let frames = if settings.quick { 100 } else { 1_000 };
    // Rings big enough that no event of a run is dropped (a dropped event costs less than a
    // recorded one and would flatter the cost per event).
    let capacity = 1 << 20;
    let traced = pool(threads, capacity)?;
    let plain = pool(threads, capacity)?;
    let events = Cell::new(0u64);
    let dropped = Cell::new(0u64);
    let runs = Cell::new(0u64);
    let mut scene_on = Scene::new(MESHES, VERTICES);
    let mut scene_off = Scene::new(MESHES, VERTICES);
    // The micro-measure: one thread appending to its own track.
    const RECORDS: usize = 100_000;
    let cases = vec![
        Case::new("frames", threads, || {
            let mut sched = PoolFrames(&traced);
            traced.start_trace();
            let (t, ()) = time(|| run_frames(&mut scene_on, &mut sched, frames));
            let trace = traced.stop_trace();
            let n: u64 = trace.tracks().iter().map(|t| t.events.len() as u64).sum();
            events.set(events.get() + n);
            dropped.set(dropped.get() + trace.dropped());
            runs.set(runs.get() + 1);
            Ok(t)
        })
        .variant("on"),
        Case::new("frames", threads, || {
            let mut sched = PoolFrames(&plain);
            let (t, ()) = time(|| run_frames(&mut scene_off, &mut sched, frames));
            Ok(t)
        })
        .variant("off"),
        Case::new("record", 1, || {
            let rec = Recorder::with_capacity("bench", RECORDS);
            let track = rec.track("t");
            let (t, ()) = time(|| {
                for _ in 0..RECORDS {
                    track.record(EventKind::Share);
                }
            });
            let trace = rec.finish();
            if trace.dropped() != 0 || trace.tracks()[0].events.len() != RECORDS {
                bail!("the recorder lost events");
            }
            Ok(t)
        })
        .variant("100k events"),
    ];
    let series = run_interleaved(settings.reps, true, cases)?;
    if scene_on.checksum() != scene_off.checksum() {
        bail!("recording changed the frames' result");
    }
    let what = format!(
        "frames ({MESHES} meshes × {VERTICES} vertices, {frames} frames) on throttle with \
         recording on vs off; and 100 000 events appended to one Recorder track; wall time"
    );
    let baseline = Baseline {
        system: "frames",
        threads,
        variant: Some("off"),
    };
    let mut report = Report::new("trace_on", what, baseline, series);
    report
        .notes
        .push(ratio_note(&report, "frames", threads, "on", "off"));
    let per_run = events.get() as f64 / runs.get().max(1) as f64;
    let on = report
        .find_variant("frames", threads, Some("on"))
        .map(|s| s.median());
    let off = report
        .find_variant("frames", threads, Some("off"))
        .map(|s| s.median());
    if let (Some(on), Some(off)) = (on, off) {
        report.notes.push(format!(
            "{per_run:.0} events recorded per run ({} dropped in all): {:.1} ns per event \
             in the pool ((on − off) / events; negative = within noise)",
            dropped.get(),
            (on - off) / per_run.max(1.0) * 1e9
        ));
    }
    if let Some(r) = report.find_variant("record", 1, Some("100k events")) {
        report.notes.push(format!(
            "Recorder::record: {:.1} ns per event (median; min {:.1}, max {:.1}), a clock read \
             included",
            r.median() / RECORDS as f64 * 1e9,
            r.min() / RECORDS as f64 * 1e9,
            r.max() / RECORDS as f64 * 1e9
        ));
    }
    Ok(report)
}
