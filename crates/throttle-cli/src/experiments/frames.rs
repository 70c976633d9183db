//! `throttle frames`: seeds 002 and 003, the game loop. Every frame transforms every mesh of a
//! scene (a 4×4 matrix per vertex) in one parallel loop, under each of the simple schedulers of
//! `throttle_workloads::frames` and the throttle pool. Per scheduler: frames per second, the ratio
//! to the theoretical minimum (serial time / threads), the average concurrency level (process
//! CPU time / wall time) and the wake-ups ("transitions") per second, counted as voluntary context
//! switches per second from `getrusage`.

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::Context;
use clap::Args;
use throttle_probe::Snapshot;
use throttle_workloads::frames::{
    self, EventPool, FrameScheduler, LockedQueuePool, MutexPool, Scene, Serial, ThreadPerFrame,
    ThrottlePool,
};

use crate::export::{check_writable, OutputArgs};
use crate::interrupt;
use crate::progress::Progress;
use crate::results::{Check, Machine, Report, Row, Sample, Section};
use crate::view::units;

/// Options of `throttle frames`.
#[derive(Debug, Args)]
#[command(
    about = "Seeds 002/003: a game loop under six schedulers; frames/s, concurrency, wake-ups/s",
    long_about = "Seeds 002 and 003 (task scheduler profiling; persistent thread vs thread per \
job): a scene of --meshes meshes × --vertices vertices, one parallel loop over the meshes per \
frame, under: serial; std_spawn (threads created every frame); mutex_pool (persistent \
threads signalled by Mutex+Condvar, seed 003's heavy monitor); event_pool (persistent threads \
signalled by a light event, seed 003's ManualResetEvent); locked_queue (seed 002's first \
version: a shared Mutex<VecDeque> of tasks); and throttle (throttle::Pool::for_range). Every \
scheduler counts the calling thread among its --threads. Per scheduler: frames per second, the \
ratio to the theoretical minimum serial time / threads, the average concurrency level (CPU/wall) \
and wake-ups (voluntary context switches) per second. Every scene's checksum must equal the \
serial one."
)]
pub struct FramesArgs {
    /// Threads per scheduler, the calling thread included (default: usable CPUs).
    #[arg(long, value_name = "N", allow_negative_numbers = true, value_parser = crate::numbers::whole::<u32>(1, 1024))]
    pub threads: Option<u32>,
    /// Meshes in the scene (one loop index each).
    #[arg(long, default_value_t = 2000, allow_negative_numbers = true, value_parser = crate::numbers::whole::<u32>(1, u64::MAX))]
    pub meshes: u32,
    /// Vertices per mesh.
    #[arg(long, default_value_t = 200, allow_negative_numbers = true, value_parser = crate::numbers::whole::<u32>(1, u64::MAX))]
    pub vertices: u32,
    /// Frames per run (default: calibrated to about 1 s serial, 0.15 s with --quick).
    #[arg(long, value_name = "F", allow_negative_numbers = true, value_parser = crate::numbers::whole::<u32>(1, u64::MAX))]
    pub frames: Option<u32>,
    /// Repetitions of every scheduler.
    #[arg(long, value_name = "R", allow_negative_numbers = true, value_parser = crate::numbers::whole::<u32>(1, 1000))]
    pub reps: Option<u32>,
    /// A short run (under 10 s).
    #[arg(long)]
    pub quick: bool,
    /// After the measured runs, run each scheduler that can record a timeline (throttle,
    /// mutex_pool, event_pool, locked_queue) once more with recording on, and write the trace as
    /// Chrome trace event JSON: one file per scheduler, its name inserted before the extension
    /// (`t.json` → `t.throttle.json`, `t.mutex_pool.json`, ...). Open them at
    /// https://ui.perfetto.dev or chrome://tracing.
    #[arg(long, value_name = "FILE.json")]
    pub trace: Option<PathBuf>,
    /// Like --trace, but draw each recording as an SVG timeline (seed 002's pictures: the
    /// concurrency level over time above one lane per thread, wake-ups as lines from waker to
    /// woken); one file per scheduler, named as for --trace (`t.svg` → `t.throttle.svg`, ...).
    #[arg(long, value_name = "FILE.svg")]
    pub timeline: Option<PathBuf>,
    /// Frames of the recorded run of --trace/--timeline (default 10, a picture that shows
    /// single frames; never more than --frames).
    #[arg(long, value_name = "F", allow_negative_numbers = true, value_parser = crate::numbers::whole::<u32>(1, 100_000))]
    pub trace_frames: Option<u32>,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub output: OutputArgs,
}

/// Runs `throttle frames`.
pub fn run(args: &FramesArgs, machine: Machine) -> anyhow::Result<Report> {
    let threads = args.threads.map_or(machine.usable_cpus(), |t| t as usize);
    // Every trace file is checked before anything is measured.
    for (flag, path) in [("--trace", &args.trace), ("--timeline", &args.timeline)] {
        if let Some(path) = path {
            for name in TRACED {
                check_writable(flag, &per_scheduler(path, name))?;
            }
        }
    }
    let reps = args.reps.unwrap_or(3) as usize;
    let (meshes, vertices) = (args.meshes as usize, args.vertices as usize);
    let frames = match args.frames {
        Some(f) => f as usize,
        None => {
            let target = if args.quick { 0.15 } else { 1.0 };
            let mut scene = Scene::new(meshes, vertices);
            let start = Instant::now();
            frames::run_frames(&mut scene, &mut Serial::new(), 3);
            let per_frame = start.elapsed().as_secs_f64() / 3.0;
            ((target / per_frame.max(1e-9)).round() as usize).clamp(10, 100_000)
        }
    };
    let mut schedulers: Vec<Box<dyn FrameScheduler>> = vec![
        Box::new(Serial::new()),
        Box::new(ThreadPerFrame::new(threads)),
        Box::new(MutexPool::new(threads).context("starting mutex_pool")?),
        Box::new(EventPool::new(threads).context("starting event_pool")?),
        Box::new(LockedQueuePool::new(threads).context("starting locked_queue")?),
        Box::new(ThrottlePool::new(threads).context("starting the throttle pool")?),
    ];

    let mut report = Report::new("frames", machine);
    report.param("threads", threads);
    report.param("meshes", meshes);
    report.param("vertices", vertices);
    report.param("frames", frames);
    report.param("reps", reps);

    let progress = Progress::new((reps * schedulers.len()) as u64, "frames");
    let count = schedulers.len();
    let mut samples: Vec<Vec<Sample>> = vec![Vec::new(); count];
    let mut checksums: Vec<Option<f64>> = vec![None; count];
    'reps: for rep in 0..reps {
        for i in 0..count {
            let index = (i + rep) % count;
            if interrupt::requested() {
                report.partial = true;
                break 'reps;
            }
            let sched = &mut schedulers[index];
            progress.step(sched.name().to_string());
            let mut scene = Scene::new(meshes, vertices);
            let before = Snapshot::now();
            frames::run_frames(&mut scene, sched.as_mut(), frames);
            let span = before.elapsed();
            let wall = span.wall.as_secs_f64().max(1e-12);
            let mut sample = Sample::from_span(&span)
                .metric("frames_per_sec", frames as f64 / wall)
                .metric("avg_concurrency", span.cpu().as_secs_f64() / wall)
                .metric("wakeups_per_sec", span.voluntary_switches as f64 / wall);
            if matches!(sched.name(), "std_spawn" | "thread_per_frame") {
                sample.run_queue_wait = Some(Err(
                    "threads exit every frame; the kernel drops an exited thread's schedstat"
                        .into(),
                ));
            }
            samples[index].push(sample);
            let sum = scene.checksum();
            // Keep a wrong checksum if any repetition produced one.
            if checksums[index].is_none_or_eq(sum) {
                checksums[index] = Some(sum);
            }
            progress.done_one();
        }
    }
    progress.finish();

    let mut section = Section::new(
        "frames",
        &format!(
            "seeds 002/003: {meshes} meshes × {vertices} vertices × {frames} frames, {threads} threads"
        ),
        "scheduler",
        "threads",
        false,
    )
    .metric_column("frames_per_sec", "frames/s")
    .metric_column("ratio_to_ideal", "× ideal")
    .metric_column("avg_concurrency", "avg concurrency")
    .metric_column("wakeups_per_sec", "wake-ups/s");
    let expected = checksums[0];
    for (i, sched) in schedulers.iter().enumerate() {
        let t = sched.threads();
        if let Some(mut row) = Row::from_samples(
            sched.name(),
            t as u64,
            &t.to_string(),
            i as f64 + 1.0,
            &samples[i],
        ) {
            if let (Some(e), Some(g)) = (expected, checksums[i]) {
                row.check = Some(Check {
                    expected: format!("{e:e}"),
                    got: format!("{g:e}"),
                    ok: e.to_bits() == g.to_bits(),
                });
            }
            section.rows.push(row);
        }
    }
    if let Some(serial) = section.row("serial", 1).map(|r| r.wall.median) {
        let ideal = serial / threads as f64;
        for row in &mut section.rows {
            row.metrics
                .insert("ratio_to_ideal".into(), row.wall.median / ideal);
        }
    }
    section.mark_best();
    report.findings = findings(&section, threads);
    report.sections.push(section);

    if (args.trace.is_some() || args.timeline.is_some()) && !report.partial {
        let traced_frames = args.trace_frames.map_or(10, |f| f as usize).min(frames);
        for sched in &mut schedulers {
            let Some(trace) = traced_run(sched.as_mut(), meshes, vertices, traced_frames) else {
                continue;
            };
            if let Some(path) = &args.trace {
                let path = per_scheduler(path, sched.name());
                let file = std::fs::File::create(&path)
                    .with_context(|| format!("creating {}", path.display()))?;
                trace
                    .write_chrome_json(std::io::BufWriter::new(file))
                    .with_context(|| format!("writing {}", path.display()))?;
                eprintln!("trace of {}: {}", sched.name(), path.display());
            }
            if let Some(path) = &args.timeline {
                let path = per_scheduler(path, sched.name());
                let svg = timeline_svg(&trace, traced_frames, meshes, vertices, None);
                std::fs::write(&path, svg)
                    .with_context(|| format!("writing {}", path.display()))?;
                eprintln!("timeline of {}: {}", sched.name(), path.display());
            }
            report.findings.push(trace_finding(&trace, traced_frames));
        }
    }
    Ok(report)
}

/// The schedulers that can record a timeline, in the order `frames` runs them.
pub const TRACED: [&str; 4] = ["mutex_pool", "event_pool", "locked_queue", "throttle"];

/// `path` with `name` inserted before its extension: `t.json` → `t.throttle.json`.
pub fn per_scheduler(path: &Path, name: &str) -> PathBuf {
    let stem = path
        .file_stem()
        .map_or_else(String::new, |s| s.to_string_lossy().into_owned());
    let file = match path.extension() {
        Some(ext) => format!("{stem}.{name}.{}", ext.to_string_lossy()),
        None => format!("{stem}.{name}"),
    };
    path.with_file_name(file)
}

/// One more run of `frames` frames on `sched` with its timeline recorded, or `None` if the
/// scheduler cannot record one.
pub fn traced_run(
    sched: &mut dyn FrameScheduler,
    meshes: usize,
    vertices: usize,
    frames: usize,
) -> Option<throttle::trace::Trace> {
    let mut scene = Scene::new(meshes, vertices);
    // One untraced frame first: the recording starts from the steady state between frames.
    frames::run_frames(&mut scene, sched, 1);
    if !sched.start_trace() {
        return None;
    }
    frames::run_frames(&mut scene, sched, frames);
    sched.stop_trace()
}

/// The SVG timeline of a recorded run, titled with what was run.
pub fn timeline_svg(
    trace: &throttle::trace::Trace,
    frames: usize,
    meshes: usize,
    vertices: usize,
    axis_ns: Option<u64>,
) -> String {
    let title = format!(
        "{}: what each thread did over {frames} frames",
        trace.scheduler
    );
    let dropped = match trace.dropped() {
        0 => String::new(),
        d => format!(", {d} events dropped (rings full)"),
    };
    let subtitle = format!(
        "seed 002's profiler view: {meshes} meshes × {vertices} vertices per frame; average concurrency {:.2}, {}{dropped}",
        trace.average_concurrency(),
        units::plural(trace.wakeups().len() as u64, "wake-up"),
    );
    crate::chart::timeline::to_svg_on(trace, &title, &subtitle, axis_ns)
}

/// A finding from a recorded run: what the timeline shows in numbers.
fn trace_finding(trace: &throttle::trace::Trace, frames: usize) -> String {
    use throttle::trace::{EventKind, Span};
    let secs = trace.duration.as_secs_f64().max(1e-12);
    let sleeps = trace.count(|k| {
        matches!(
            k,
            EventKind::Begin {
                span: Span::Sleep,
                ..
            }
        )
    });
    format!(
        "Timeline of {} ({frames} frames recorded, {}): average concurrency {:.2}, {} ({}/s), {}, {}, {} dropped.",
        trace.scheduler,
        units::secs(secs),
        trace.average_concurrency(),
        units::plural(trace.wakeups().len() as u64, "wake-up"),
        units::count(trace.wakeups().len() as f64 / secs),
        units::plural(sleeps, "sleep"),
        units::plural(trace.count(|k| matches!(k, EventKind::Steal { .. })), "steal"),
        units::plural(trace.dropped(), "event")
    )
}

/// A helper for "record unless a different value is already recorded".
trait KeepFirstDifferent {
    fn is_none_or_eq(&self, value: f64) -> bool;
}

impl KeepFirstDifferent for Option<f64> {
    fn is_none_or_eq(&self, value: f64) -> bool {
        match self {
            None => true,
            Some(v) => v.to_bits() == value.to_bits(),
        }
    }
}

fn findings(section: &Section, threads: usize) -> Vec<String> {
    let mut out = Vec::new();
    let metric = |r: &Row, k: &str| r.metrics.get(k).copied().unwrap_or(f64::NAN);
    if let Some(best) = section.rows.iter().find(|r| r.best) {
        // The one rule of `crate::verdict`: the schedulers the runs cannot tell from the fastest
        // share its place.
        let ties: Vec<(&Row, crate::verdict::Comparison)> = section
            .rows
            .iter()
            .filter(|r| r.series != best.series)
            .map(|r| (r, crate::verdict::compare(&r.wall_runs, &best.wall_runs)))
            .filter(|(_, c)| !c.is_real())
            .collect();
        let shared = if ties.is_empty() {
            format!(
                "; every other scheduler is slower by the test ({})",
                crate::verdict::RULE_SHORT
            )
        } else {
            format!(
                "; the test cannot tell it from {} ({})",
                ties.iter()
                    .map(|(r, _)| r.series.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
                crate::verdict::reasons(&ties.iter().map(|(_, c)| *c).collect::<Vec<_>>())
            )
        };
        out.push(format!(
            "Fastest median: {} at {} frames/s, {:.2}× the theoretical minimum (serial time / \
             {threads}), average concurrency {:.2}{shared}.",
            best.series,
            units::count(metric(best, "frames_per_sec")),
            metric(best, "ratio_to_ideal"),
            metric(best, "avg_concurrency")
        ));
    }
    let parallel: Vec<&Row> = section
        .rows
        .iter()
        .filter(|r| r.series != "serial")
        .collect();
    if let (Some(most), Some(least)) = (
        parallel
            .iter()
            .max_by(|a, b| metric(a, "wakeups_per_sec").total_cmp(&metric(b, "wakeups_per_sec"))),
        parallel
            .iter()
            .min_by(|a, b| metric(a, "wakeups_per_sec").total_cmp(&metric(b, "wakeups_per_sec"))),
    ) {
        out.push(format!(
            "Wake-ups: {} causes the most transitions ({}/s), {} the fewest ({}/s).",
            most.series,
            units::count(metric(most, "wakeups_per_sec")),
            least.series,
            units::count(metric(least, "wakeups_per_sec"))
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn section(rows: &[(&str, [u64; 3])]) -> Section {
        let mut s = Section::new("frames", "t", "scheduler", "threads", false);
        for (name, walls) in rows {
            let samples: Vec<Sample> = walls
                .iter()
                .map(|&ms| {
                    Sample {
                        wall: Duration::from_millis(ms),
                        ..Sample::default()
                    }
                    .metric("frames_per_sec", 1000.0 / ms as f64)
                })
                .collect();
            s.rows
                .push(Row::from_samples(name, 2, "2", 2.0, &samples).expect("row"));
        }
        s.mark_best();
        s
    }

    #[test]
    fn the_fastest_scheduler_shares_its_place_with_those_the_test_cannot_tell_from_it() {
        let s = section(&[
            ("serial", [200, 201, 202]),
            ("event_pool", [100, 140, 101]),
            ("throttle", [102, 103, 104]),
        ]);
        let f = findings(&s, 2);
        assert!(f[0].starts_with("Fastest median: event_pool"), "{}", f[0]);
        assert!(f[0].contains("cannot tell it from throttle"), "{}", f[0]);
        assert!(!f[0].contains("serial ("), "{}", f[0]);
        let s = section(&[("serial", [200, 201, 202]), ("throttle", [102, 103, 104])]);
        assert!(findings(&s, 2)[0].contains("every other scheduler is slower by the test"));
    }
}
