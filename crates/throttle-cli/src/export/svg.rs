//! `--plot`: the figures of an experiment, drawn by [`crate::chart`], stacked into one SVG.
//!
//! Which figure a section gets depends on what it measured: the sweep draws wall and CPU time
//! against the concurrency limit (log axis of powers of two, `no limit` labelled on its own
//! beside it); the overhead sections draw jobs per second, as their titles say, and the
//! user:system ratio; the frame schedulers get bars (time per frame against the theoretical
//! minimum, average concurrency and wake-ups per second); the process levels draw wall time and
//! CPU time per process. Concurrency axes mark the physical and logical core counts.

use crate::chart::{core_marks, Axis, BarChart, LineChart, Mark, Series, PALETTE};
use crate::results::{Report, Row, Sample, Section};

/// The report's charts as one SVG document.
pub fn to_string(report: &Report) -> anyhow::Result<String> {
    Ok(crate::chart::stack(&charts(report)))
}

/// Every chart of the report, each a standalone `<svg>` element.
pub fn charts(report: &Report) -> Vec<String> {
    let mut out = Vec::new();
    for section in report.sections.iter().filter(|s| !s.rows.is_empty()) {
        out.extend(section_charts(report, section));
    }
    if out.is_empty() {
        out.push(
            LineChart {
                title: format!("{}: nothing was measured", report.experiment),
                subtitle: String::new(),
                x: Axis::count("level"),
                y: Axis::seconds("wall time"),
                series: Vec::new(),
                marks: Vec::new(),
            }
            .to_svg(),
        );
    }
    out
}

fn series_names(section: &Section) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for r in &section.rows {
        if !names.contains(&r.series) {
            names.push(r.series.clone());
        }
    }
    names
}

fn rows_of<'a>(section: &'a Section, series: &'a str) -> impl Iterator<Item = &'a Row> + 'a {
    section.rows.iter().filter(move |r| r.series == series)
}

/// The min–max of `f` over a row's repetitions, when there are at least two of them: the
/// spread bar drawn through the row's median.
fn spread(r: &Row, f: &dyn Fn(&Sample) -> Option<f64>) -> Option<(f64, f64)> {
    let v: Vec<f64> = r
        .samples
        .iter()
        .filter_map(f)
        .filter(|v| v.is_finite())
        .collect();
    (v.len() > 1).then(|| {
        v.iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &x| {
                (lo.min(x), hi.max(x))
            })
    })
}

/// A sample's wall time, seconds.
fn wall_of(s: &Sample) -> Option<f64> {
    Some(s.wall.as_secs_f64())
}

/// A sample's CPU time (user + system), seconds.
fn cpu_of(s: &Sample) -> Option<f64> {
    Some((s.user + s.system).as_secs_f64())
}

/// Spread bars of `f` for `rows`, at the x that `at` gives each row.
fn bars<'a>(
    rows: impl Iterator<Item = &'a Row>,
    at: impl Fn(&Row) -> f64,
    f: &dyn Fn(&Sample) -> Option<f64>,
) -> Vec<(f64, f64, f64)> {
    rows.filter_map(|r| spread(r, f).map(|(lo, hi)| (at(r), lo, hi)))
        .collect()
}

fn metric(r: &Row, key: &str) -> Option<f64> {
    r.metrics.get(key).copied().filter(|v| v.is_finite())
}

fn partial(report: &Report, title: String) -> String {
    if report.partial {
        format!("{title} (partial)")
    } else {
        title
    }
}

fn marks(report: &Report, section: &Section) -> Vec<Mark> {
    let t = &report.machine.topology;
    if section.levels_are_concurrency {
        core_marks(t.physical_cores, t.logical_cpus)
    } else {
        Vec::new()
    }
}

/// An x axis for the section's levels: powers of two when they span 8× or more.
fn level_axis(section: &Section) -> Axis {
    let xs: Vec<f64> = section.rows.iter().map(|r| r.x).collect();
    let lo = xs.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = xs.iter().copied().fold(0.0, f64::max);
    let label = section.level_name.clone();
    if section.levels_are_concurrency {
        if lo > 0.0 && hi / lo >= 8.0 {
            Axis::log(&label, 2.0, true)
        } else {
            Axis::count(&label)
        }
    } else if lo > 0.0 && hi / lo >= 100.0 {
        Axis::log(&label, 10.0, true)
    } else {
        Axis::count(&label)
    }
}

fn section_charts(report: &Report, section: &Section) -> Vec<String> {
    match section.id.as_str() {
        "sweep" => vec![sweep_chart(report, section)],
        "trivial_jobs" | "job_length" => rate_charts(report, section),
        "frames" => frames_charts(report, section),
        "procs" => vec![procs_chart(report, section)],
        "procs_budget" => vec![budget_chart(report, section)],
        _ => vec![time_chart(report, section)],
    }
}

/// Seed 000: wall and CPU time against the limit; level 0 (`no limit`) sits apart, labelled.
fn sweep_chart(report: &Report, section: &Section) -> String {
    let max_level = section.rows.iter().map(|r| r.level).max().unwrap_or(1) as f64;
    let no_limit_x = (max_level * 2.0).max(2.0);
    let mut series = Vec::new();
    for (i, name) in series_names(section).iter().enumerate() {
        let color = PALETTE[i % PALETTE.len()];
        let limited = |f: fn(&Row) -> f64| -> Vec<(f64, f64)> {
            let mut v: Vec<(f64, f64)> = rows_of(section, name)
                .filter(|r| r.level != 0)
                .map(|r| (r.level as f64, f(r)))
                .collect();
            v.sort_by(|a, b| a.0.total_cmp(&b.0));
            v
        };
        let free = |f: fn(&Row) -> f64| -> Vec<(f64, f64)> {
            rows_of(section, name)
                .filter(|r| r.level == 0)
                .map(|r| (no_limit_x, f(r)))
                .collect()
        };
        let at = |r: &Row| {
            if r.level == 0 {
                no_limit_x
            } else {
                r.level as f64
            }
        };
        let mut wall = Series::line(
            &format!("{name}: wall time"),
            color,
            limited(|r| r.wall.median),
        )
        .with_ranges(bars(rows_of(section, name), at, &wall_of));
        wall.loose = free(|r| r.wall.median);
        let mut cpu = Series::line(
            &format!("{name}: CPU time (user + system)"),
            color,
            limited(|r| r.user + r.system),
        )
        .dashed()
        .with_ranges(bars(rows_of(section, name), at, &cpu_of));
        cpu.loose = free(|r| r.user + r.system);
        series.push(wall);
        series.push(cpu);
    }
    let mut x = Axis::log(
        "concurrency limit N (tasks allowed to run at once)",
        2.0,
        true,
    );
    if section.rows.iter().any(|r| r.level == 0) {
        x.extra_ticks.push((no_limit_x, "no limit".into()));
    }
    LineChart {
        title: partial(
            report,
            "Seed 000: time to sum 64 slices against the concurrency limit".into(),
        ),
        subtitle: section.title.clone(),
        x,
        y: Axis::seconds("median time per batch"),
        series,
        marks: marks(report, section),
    }
    .to_svg()
}

/// Seed 001: jobs per second (as the section titles say), then the user:system ratio.
fn rate_charts(report: &Report, section: &Section) -> Vec<String> {
    let x = level_axis(section);
    let mut rates = Vec::new();
    let mut ratios = Vec::new();
    for (i, series) in series_names(section).iter().enumerate() {
        let color = PALETTE[i % PALETTE.len()];
        let name = series;
        let pts = |key: &str| -> Vec<(f64, f64)> {
            rows_of(section, series)
                .filter_map(|r| Some((r.x, metric(r, key)?)))
                .collect()
        };
        // On the job-length axis every line but the loop and the pool creates a thread per
        // job: the legend says so.
        let legend = if section.id == "job_length" && name != "sequential" && name != "pool" {
            format!("a thread per job, {name}")
        } else {
            name.clone()
        };
        // The rows are found by the series' own name, not by the legend's wording.
        let key_of = |s: &Sample| s.metrics.get("jobs_per_sec").copied();
        rates.push(
            Series::line(&legend, color, pts("jobs_per_sec")).with_ranges(bars(
                rows_of(section, series),
                |r| r.x,
                &key_of,
            )),
        );
        let ratio_of = |s: &Sample| s.metrics.get("user_per_system").copied();
        let ratio_pts = pts("user_per_system");
        // A line without a single ratio still gets its legend entry, saying why it is empty.
        let ratio_legend = if ratio_pts.is_empty() {
            format!("{legend}: no run long enough to split")
        } else {
            legend.clone()
        };
        ratios.push(
            Series::line(&ratio_legend, color, ratio_pts).with_ranges(bars(
                rows_of(section, series),
                |r| r.x,
                &ratio_of,
            )),
        );
    }
    // Seed 001's points A and B on the job-length axis.
    let mut marks = marks(report, section);
    if section.id == "job_length" {
        for (key, label) in [
            ("point_a_iterations", "A: a thread per job starts to pay"),
            ("point_b_iterations", "B: 32 × cores threads stop paying"),
        ] {
            if let Some(x) = report.parameters.get(key).and_then(|v| v.as_f64()) {
                marks.push(Mark {
                    x,
                    label: label.to_string(),
                });
            }
        }
    }
    let what = if section.id == "trivial_jobs" {
        "Seed 001: jobs per second against threads (trivial jobs)"
    } else {
        "Seed 001: jobs per second against job length"
    };
    let mut out = vec![LineChart {
        title: partial(report, what.into()),
        subtitle: section.title.clone(),
        x: x.clone(),
        y: Axis::log("jobs per second", 10.0, false),
        series: rates,
        marks: marks.clone(),
    }
    .to_svg()];
    // The seed's rule as a line: above a user:system ratio of 2, threading pays. It spans the
    // whole measured axis, so this chart and the jobs-per-second chart share their x range.
    let xs = section.rows.iter().map(|r| r.x).filter(|x| x.is_finite());
    let (x_lo, x_hi) = xs.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| {
        (a.min(x), b.max(x))
    });
    if x_lo.is_finite() && x_hi.is_finite() {
        ratios.push(
            Series::line(
                "user:system = 2 (above it, the seed says, threading pays)",
                "#000000",
                vec![(x_lo, 2.0), (x_hi, 2.0)],
            )
            .dashed()
            .no_markers(),
        );
    }
    if ratios
        .iter()
        .any(|s| !s.points.is_empty() && s.color != "#000000")
    {
        out.push(
            LineChart {
                title: partial(
                    report,
                    format!(
                        "Seed 001: user:system CPU ratio against {} (above ~2 threading pays)",
                        section.level_name
                    ),
                ),
                // The section's name without what its own chart plots ("(a) 3000 trivial jobs"),
                // so the subtitle fits the chart's width.
                subtitle: format!(
                    "{}; runs under {:.0} ms CPU or with 0 user/system left out (ticks)",
                    section.title.split(':').next().unwrap_or(&section.title),
                    crate::results::CPU_SPLIT_RESOLUTION * 1e3
                ),
                x,
                y: Axis::log("user time / system time", 10.0, false),
                series: ratios,
                marks,
            }
            .to_svg(),
        );
    }
    out
}

/// Seeds 002/003: bars per scheduler.
fn frames_charts(report: &Report, section: &Section) -> Vec<String> {
    let names = series_names(section);
    let values = |key: &str| -> Vec<Option<f64>> {
        names
            .iter()
            .map(|n| {
                section
                    .rows
                    .iter()
                    .find(|r| &r.series == n)
                    .and_then(|r| metric(r, key))
            })
            .collect()
    };
    // Min–max over the repetitions of the value `f` reads from a sample.
    let ranges = |f: &dyn Fn(&Sample) -> Option<f64>| -> Vec<Option<(f64, f64)>> {
        names
            .iter()
            .map(|n| {
                let row = section.rows.iter().find(|r| &r.series == n)?;
                spread(row, f)
            })
            .collect()
    };
    let key = |k: &'static str| move |s: &Sample| s.metrics.get(k).copied();
    let per_frame_of = |s: &Sample| {
        s.metrics
            .get("frames_per_sec")
            .filter(|f| **f > 0.0)
            .map(|f| 1.0 / f)
    };
    let per_frame: Vec<Option<f64>> = values("frames_per_sec")
        .into_iter()
        .map(|v| v.filter(|f| *f > 0.0).map(|f| 1.0 / f))
        .collect();
    let threads = report
        .parameters
        .get("threads")
        .and_then(|v| v.as_u64())
        .unwrap_or(1)
        .max(1);
    let reference = names
        .iter()
        .position(|n| n == "serial")
        .and_then(|i| per_frame[i])
        .map(|serial| {
            (
                serial / threads as f64,
                format!("theoretical minimum: serial / {threads} threads"),
            )
        });
    let time = BarChart {
        title: partial(
            report,
            "Seed 003: time per frame by scheduler, against serial time / threads".into(),
        ),
        subtitle: section.title.clone(),
        categories: names.clone(),
        x_label: "scheduler".into(),
        y: Axis::seconds("median time per frame"),
        groups: vec![("time per frame".into(), PALETTE[0].into(), per_frame)],
        reference,
        ranges: vec![ranges(&per_frame_of)],
    };
    let concurrency = BarChart {
        title: partial(
            report,
            "Seed 002: average concurrency level (CPU time / wall time) by scheduler".into(),
        ),
        subtitle: section.title.clone(),
        categories: names.clone(),
        x_label: "scheduler".into(),
        y: Axis::linear("threads busy on average"),
        groups: vec![(
            "average concurrency".into(),
            PALETTE[2].into(),
            values("avg_concurrency"),
        )],
        reference: Some((threads as f64, format!("{threads} threads"))),
        ranges: vec![ranges(&key("avg_concurrency"))],
    };
    let wakeups = BarChart {
        title: partial(
            report,
            "Seed 002: wake-ups (voluntary context switches) per second by scheduler".into(),
        ),
        subtitle: section.title.clone(),
        categories: names.clone(),
        x_label: "scheduler".into(),
        y: Axis::linear("wake-ups per second"),
        groups: vec![(
            "wake-ups per second".into(),
            PALETTE[1].into(),
            values("wakeups_per_sec"),
        )],
        reference: None,
        ranges: vec![ranges(&key("wakeups_per_sec"))],
    };
    vec![time.to_svg(), concurrency.to_svg(), wakeups.to_svg()]
}

/// Seed 004: wall time of the batch and CPU time per process against concurrent processes.
fn procs_chart(report: &Report, section: &Section) -> String {
    let mut series = Vec::new();
    for name in series_names(section) {
        let pts = |f: &dyn Fn(&Row) -> Option<f64>| -> Vec<(f64, f64)> {
            rows_of(section, &name)
                .filter_map(|r| Some((r.x, f(r)?)))
                .collect()
        };
        let cpu_per_process = |s: &Sample| s.metrics.get("cpu_per_process_s").copied();
        series.push(
            Series::line(
                "elapsed (wall) time of the batch",
                PALETTE[0],
                pts(&|r| Some(r.wall.median)),
            )
            .with_ranges(bars(rows_of(section, &name), |r| r.x, &wall_of)),
        );
        series.push(
            Series::line(
                "CPU time per process",
                PALETTE[1],
                pts(&|r| metric(r, "cpu_per_process_s")),
            )
            .dashed()
            .with_ranges(bars(rows_of(section, &name), |r| r.x, &cpu_per_process)),
        );
        series.push(
            Series::line(
                "run-queue wait per process",
                PALETTE[2],
                pts(&|r| metric(r, "run_queue_wait_per_process_s")),
            )
            .dashed(),
        );
    }
    LineChart {
        title: partial(
            report,
            "Seed 004: elapsed and CPU time against concurrent processes".into(),
        ),
        subtitle: section.title.clone(),
        x: level_axis(section),
        y: Axis::seconds("median time"),
        series,
        marks: marks(report, section),
    }
    .to_svg()
}

/// Seed 004 with and without a budget: mean completion time (solid) and makespan (dashed) of
/// each setting against the number of copies.
fn budget_chart(report: &Report, section: &Section) -> String {
    let mut series = Vec::new();
    for (i, name) in series_names(section).iter().enumerate() {
        let color = PALETTE[i % PALETTE.len()];
        let pts = |f: &dyn Fn(&Row) -> Option<f64>| -> Vec<(f64, f64)> {
            rows_of(section, name)
                .filter_map(|r| Some((r.x, f(r)?)))
                .collect()
        };
        let completion = |s: &Sample| s.metrics.get("mean_completion_s").copied();
        series.push(
            Series::line(
                &format!("{name}: mean completion time"),
                color,
                pts(&|r| metric(r, "mean_completion_s")),
            )
            .with_ranges(bars(rows_of(section, name), |r| r.x, &completion)),
        );
        series.push(
            Series::line(
                &format!("{name}: makespan"),
                color,
                pts(&|r| Some(r.wall.median)),
            )
            .dashed()
            .with_ranges(bars(rows_of(section, name), |r| r.x, &wall_of)),
        );
    }
    LineChart {
        title: partial(
            report,
            "Seed 004 with and without a budget: completion time against concurrent copies".into(),
        ),
        subtitle: section.title.clone(),
        x: level_axis(section),
        y: Axis::seconds("median time"),
        series,
        marks: marks(report, section),
    }
    .to_svg()
}

/// Any other section: wall (solid) and CPU (dashed) time against the level.
fn time_chart(report: &Report, section: &Section) -> String {
    let mut series = Vec::new();
    for (i, name) in series_names(section).iter().enumerate() {
        let color = PALETTE[i % PALETTE.len()];
        let pts = |f: fn(&Row) -> f64| -> Vec<(f64, f64)> {
            rows_of(section, name).map(|r| (r.x, f(r))).collect()
        };
        series.push(
            Series::line(&format!("{name}: wall time"), color, pts(|r| r.wall.median))
                .with_ranges(bars(rows_of(section, name), |r| r.x, &wall_of)),
        );
        series.push(
            Series::line(
                &format!("{name}: CPU time"),
                color,
                pts(|r| r.user + r.system),
            )
            .dashed()
            .with_ranges(bars(rows_of(section, name), |r| r.x, &cpu_of)),
        );
    }
    LineChart {
        title: partial(report, section.title.clone()),
        subtitle: String::new(),
        x: level_axis(section),
        y: Axis::seconds("median time"),
        series,
        marks: marks(report, section),
    }
    .to_svg()
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::results::Machine;

    fn sample(ms: u64, jobs_per_sec: f64) -> Sample {
        Sample {
            wall: Duration::from_millis(ms),
            user: Duration::from_millis(ms),
            system: Duration::from_millis(1),
            ..Sample::default()
        }
        .metric("jobs_per_sec", jobs_per_sec)
    }

    /// The job-length chart's thread-per-job lines, whose legend reads "a thread per job, …",
    /// keep their spread bars (they were looked up by the legend's words and found no rows).
    #[test]
    fn thread_per_job_lines_on_the_job_length_axis_have_spread_bars() {
        let mut section = Section::new(
            "job_length",
            "(b) jobs per second against job length",
            "system",
            "iterations per job",
            false,
        );
        let runs = [sample(10, 100.0), sample(12, 200.0), sample(14, 300.0)];
        let with_ratio = runs.clone().map(|s| s.metric("user_per_system", 3.0));
        for x in [10u64, 100] {
            for (series, runs) in [("1 thread", &runs), ("sequential", &with_ratio)] {
                let row = Row::from_samples(series, x, &x.to_string(), x as f64, runs);
                section.rows.push(row.expect("a row"));
            }
        }
        let mut report = Report::new("overhead", Machine::detect());
        report.sections.push(section);
        let charts = charts(&report);
        let rates = &charts[0];
        assert!(rates.contains("a thread per job, 1 thread"), "{rates}");
        let bars = rates
            .lines()
            .filter(|l| l.contains(r#"opacity="0.7""#) && l.contains(PALETTE[0]))
            .count();
        assert_eq!(bars, 2, "one min–max bar per length: {rates}");
        // The thread per job has no ratio (no batch long enough): its legend entry says why.
        let ratios = &charts[1];
        assert!(ratios.contains("no run long enough to split"), "{ratios}");
    }
}
