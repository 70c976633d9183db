//! `throttle adapt --plot FILE`: k(t) and throughput(t) of the auto pools, as SVG figures drawn
//! by the CLI's one plotter ([`crate::chart`]), so they follow its conventions: a title that
//! says what is measured, labelled axes with units, integer ticks for `k`, the core counts
//! marked on the `k` axis (as horizontal reference lines: `k` is the y axis here), and a legend
//! whose swatches match the lines.
//!
//! The timeline is recorded from outside the pool, as a user could: a thread samples
//! `Pool::concurrency()` and the pool's completed-task count every [`PERIOD`]. It adds nothing
//! to the pool and does not depend on the controller's log (which keeps only decisions, not
//! the intervals in which it held still).

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use throttle::Pool;

use crate::chart::{Axis, LineChart, Mark, Series, PALETTE};

/// Sampling period of the recorder: the controller's default interval, so that one point is
/// about one controller interval.
pub const PERIOD: Duration = Duration::from_millis(50);

/// One sample of an auto pool seen from outside.
#[derive(Debug, Clone, Copy)]
pub struct Point {
    /// Seconds since recording began.
    pub t: f64,
    /// The limit in force at the end of the period.
    pub k: usize,
    /// Completed tasks per second over the period.
    pub rate: f64,
}

/// What a figure compares the auto pool with: a horizontal line of throughput per span of
/// time (`(from s, to s, tasks/s)`), e.g. the best fixed k of each phase.
#[derive(Debug, Clone, Default)]
pub struct Reference {
    /// Legend text.
    pub name: String,
    /// Spans of time and the throughput of the reference in each.
    pub spans: Vec<(f64, f64, f64)>,
}

/// The recorded timeline of one workload's auto pool.
#[derive(Debug, Clone)]
pub struct Timeline {
    /// The workload's name.
    pub workload: String,
    /// What ran while it was recorded (one line, under the title).
    pub what: String,
    /// Threads of the pool.
    pub threads: usize,
    /// The samples.
    pub points: Vec<Point>,
    /// The best fixed k of the sweep (a reference line on the k figure), if one applies.
    pub best_k: Option<usize>,
    /// A reference on the throughput figure.
    pub reference: Option<Reference>,
    /// Labelled instants (phase changes), drawn on both figures.
    pub marks: Vec<(f64, String)>,
}

/// Runs `f` while a thread samples `pool` every [`PERIOD`]; returns `f`'s result and the
/// samples. Only when `on` (otherwise no thread is started and the samples are empty).
pub fn record<R>(pool: &Pool, on: bool, f: impl FnOnce() -> R) -> (R, Vec<Point>) {
    if !on {
        return (f(), Vec::new());
    }
    let stop = AtomicBool::new(false);
    std::thread::scope(|s| {
        let sampler = s.spawn(|| {
            let start = Instant::now();
            let mut points = Vec::new();
            let (mut last_t, mut last_n) = (0.0, pool.stats().tasks);
            while !stop.load(Ordering::Relaxed) {
                std::thread::sleep(PERIOD);
                let t = start.elapsed().as_secs_f64();
                let n = pool.stats().tasks;
                let rate = n.saturating_sub(last_n) as f64 / (t - last_t).max(1e-9);
                points.push(Point {
                    t,
                    k: pool.concurrency(),
                    rate,
                });
                (last_t, last_n) = (t, n);
            }
            points
        });
        let r = f();
        stop.store(true, Ordering::Relaxed);
        let points = sampler.join().unwrap_or_default();
        (r, points)
    })
}

/// Horizontal lines at the core counts, for the `k` axis (the chart module's core marks are
/// vertical, for a concurrency x axis).
fn core_lines(t_end: f64, color_from: usize) -> Vec<Series> {
    let topo = throttle_probe::Topology::detect();
    let (physical, logical) = (topo.physical_cores, topo.logical_cpus);
    let line = |n: usize, name: String, i: usize| {
        Series::line(
            &name,
            PALETTE[(color_from + i) % PALETTE.len()],
            vec![(0.0, n as f64), (t_end, n as f64)],
        )
        .dashed()
        .no_markers()
    };
    if physical == 0 || physical == logical {
        vec![line(logical, format!("{logical} cores"), 0)]
    } else {
        vec![
            line(physical, format!("{physical} physical cores"), 0),
            line(logical, format!("{logical} logical CPUs"), 1),
        ]
    }
}

/// The two figures of one timeline: k(t) and throughput(t).
pub fn charts(tl: &Timeline) -> Vec<String> {
    let marks: Vec<Mark> = tl
        .marks
        .iter()
        .map(|(x, label)| Mark {
            x: *x,
            label: label.clone(),
        })
        .collect();
    let t_end = tl.points.last().map_or(1.0, |p| p.t);
    // k as a step function: each sample's k holds from the previous sample to this one.
    let mut steps = Vec::new();
    let mut prev_t = 0.0;
    for p in &tl.points {
        steps.push((prev_t, p.k as f64));
        steps.push((p.t, p.k as f64));
        prev_t = p.t;
    }
    let mut k_series = vec![Series::line("k chosen by auto mode", PALETTE[0], steps).no_markers()];
    if let Some(b) = tl.best_k {
        k_series.push(
            Series::line(
                &format!("best fixed k of the sweep ({b})"),
                PALETTE[2],
                vec![(0.0, b as f64), (t_end, b as f64)],
            )
            .dashed()
            .no_markers(),
        );
    }
    // The pool's size (the largest k auto mode may choose) and the core counts; one line
    // when they coincide, so that no line hides another.
    let cores = core_lines(t_end, 6);
    let same = cores.len() == 1 && cores[0].points.first().map(|p| p.1) == Some(tl.threads as f64);
    if same {
        k_series.extend(cores.into_iter().map(|mut s| {
            s.name = format!("{} = pool size", s.name);
            s
        }));
    } else {
        k_series.extend(cores);
        k_series.push(
            Series::line(
                &format!("pool size ({} threads)", tl.threads),
                "#888888",
                vec![(0.0, tl.threads as f64), (t_end, tl.threads as f64)],
            )
            .dashed()
            .no_markers(),
        );
    }
    // From zero, so that k = 1 is never the bottom edge; ticks at whole threads only.
    let k_axis = Axis {
        from_zero: true,
        ..Axis::count("concurrency limit k (threads)")
    };
    let k_chart = LineChart {
        title: format!(
            "{}: the concurrency limit k auto mode chose, over time",
            tl.workload
        ),
        subtitle: format!(
            "{}; pool of {} threads; sampled every {} ms",
            tl.what,
            tl.threads,
            PERIOD.as_millis()
        ),
        x: Axis::linear("time since the auto pool's first run (s)"),
        y: k_axis,
        series: k_series,
        marks: marks.clone(),
    };
    let mut x_series = vec![Series::line(
        "auto mode",
        PALETTE[0],
        tl.points.iter().map(|p| (p.t, p.rate)).collect(),
    )
    .no_markers()];
    if let Some(r) = &tl.reference {
        let mut pts = Vec::new();
        for &(a, b, x) in &r.spans {
            pts.push((a.min(t_end), x));
            pts.push((b.min(t_end), x));
        }
        x_series.push(Series::line(&r.name, PALETTE[2], pts).dashed().no_markers());
    }
    let x_chart = LineChart {
        title: format!("{}: throughput of the auto pool, over time", tl.workload),
        subtitle: format!(
            "{}; completed tasks per {} ms period",
            tl.what,
            PERIOD.as_millis()
        ),
        x: Axis::linear("time since the auto pool's first run (s)"),
        y: Axis::linear("throughput (tasks/s)"),
        series: x_series,
        marks,
    };
    vec![k_chart.to_svg(), x_chart.to_svg()]
}

/// All timelines' figures as one SVG document.
pub fn to_svg(timelines: &[Timeline]) -> String {
    let charts: Vec<String> = timelines.iter().flat_map(charts).collect();
    crate::chart::stack(&charts)
}
