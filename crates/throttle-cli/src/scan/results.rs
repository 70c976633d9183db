//! A scan as the common results model: [`report`] turns what [`super::measure`] recorded and
//! what [`super::analysis`] concluded into one [`Report`], which every output reads — the
//! terminal table, `--export-markdown` and `--report` through the experiments' writers, and
//! `--export-json`/`--export-csv` through the hyperfine layouts of
//! [`crate::export::json::hyperfine`] and [`crate::export::csv::hyperfine`].
//!
//! The mapping: one [`Section`] (id `scan`) without a series column, whose level is the
//! scanned parameter; one [`Row`] per measured value, its runs kept as [`Sample`]s; what only
//! scan measures (spread, peak RSS, throughput, the Karp–Flatt fraction, outliers, failures,
//! copies) as metrics under the keys of [`crate::results::keys`]; the model in [`Report::model`], the notes in
//! [`Report::findings`], the warnings in [`Report::warnings`]; the mode, parameter, template
//! and warm-up count in [`Report::parameters`] (keys in [`param`]).

use crate::results::keys::*;
use crate::results::{Format, Machine, Report, Row, Sample, Section};

use super::analysis::Analysis;
use super::record::{Mode, Run, Scan};

fn sample(run: &Run, unavailable: Option<&String>) -> Sample {
    let mut s = Sample {
        wall: run.wall,
        user: run.user,
        system: run.system,
        voluntary: run.voluntary_switches,
        involuntary: run.involuntary_switches,
        run_queue_wait: Some(match (run.run_queue_wait, unavailable) {
            (Some(d), _) => Ok(d),
            (None, Some(reason)) => Err(reason.clone()),
            (None, None) => Err("not reported by the kernel".to_string()),
        }),
        metrics: Default::default(),
    }
    .metric(ROUND, run.round as f64)
    .metric(MAX_RSS_KIB, run.max_rss_kib as f64);
    if let Some(code) = run.exit_code {
        s = s.metric(EXIT_CODE, code as f64);
    }
    if let Some(signal) = run.signal {
        s = s.metric(SIGNAL, signal as f64);
    }
    s
}

/// The whole scan as a [`Report`] (see the module docs for the mapping).
pub fn report(scan: &Scan, analysis: &Analysis) -> Report {
    let mut report = Report::new("scan", scan.machine.clone());
    report.partial = scan.partial;
    let mode = match scan.mode {
        Mode::Parameter => "parameter",
        Mode::Procs => "procs",
        Mode::Commands => "commands",
    };
    report.param(param::MODE, mode);
    report.param(param::PARAMETER, &scan.parameter);
    report.param(param::TEMPLATE, &scan.template);
    report.param(param::WARMUP, scan.warmup);
    report.subtitle = Some(header(scan));

    let unit = match scan.mode {
        Mode::Parameter | Mode::Commands => "throughput = runs/s (1 / wall)",
        Mode::Procs => "throughput = copies/s (K / wall)",
    };
    let mut section = Section::new("scan", "", "", &scan.parameter, true)
        .metric_column_as(WALL_STDDEV, "± stddev", Format::Secs, 5)
        .metric_column_as(MAX_RSS_KIB, "peak RSS", Format::KibAsMib, 6)
        .metric_column_as(THROUGHPUT, "throughput", Format::PerSec, 2);
    section = if scan.mode == Mode::Commands {
        // hyperfine's "Relative" column: mean wall time over the fastest command's.
        section.metric_column_as(RELATIVE, "relative", Format::ByKey, 2)
    } else {
        section.metric_column_as(KARP_FLATT, "Karp–Flatt", Format::Sig3, 5)
    };
    let fastest_mean = analysis
        .stats
        .iter()
        .flatten()
        .map(|s| s.wall.mean)
        .fold(f64::INFINITY, f64::min);
    section.levels_are_concurrency = scan.points.iter().all(|p| p.n.is_some());
    section.level_is_placeholder = scan.mode == Mode::Parameter;
    section.legend = Some(format!(
        "medians over the runs, min–max beside the wall time; {unit}; CPU/wall = CPUs kept busy; run-queue wait = time runnable but waiting for a CPU, summed over threads; {}",
        if scan.mode == Mode::Commands {
            "relative = mean wall time over the fastest command's"
        } else {
            "Karp–Flatt = serial fraction implied by the speedup"
        }
    ));
    let numeric = scan.points.iter().all(|p| p.n.is_some());
    for (i, (point, stats)) in scan.points.iter().zip(&analysis.stats).enumerate() {
        let Some(stats) = stats else { continue };
        let position = (i + 1) as f64;
        let (level, x) = match point.n {
            Some(n) if numeric && n >= 0.0 && n.fract() == 0.0 => (n as u64, n),
            Some(n) if numeric => (i as u64 + 1, n),
            _ => (i as u64 + 1, position),
        };
        let samples: Vec<Sample> = point
            .runs
            .iter()
            .map(|r| sample(r, scan.run_queue_unavailable.as_ref()))
            .collect();
        let Some(mut row) = Row::from_samples("", level, &point.label, x, &samples) else {
            continue;
        };
        row.value = point.n;
        row.command = Some(point.command.clone());
        row.parameters = point.parameter.iter().cloned().collect();
        row.speedup = stats.speedup;
        row.efficiency = stats.efficiency;
        row.metrics.clear();
        let mut put = |key: &str, v: Option<f64>| {
            if let Some(v) = v {
                row.metrics.insert(key.to_string(), v);
            }
        };
        put(WALL_STDDEV, super::stats::stddev(&stats.wall));
        put(MAX_RSS_KIB, Some(stats.max_rss_kib as f64));
        put(THROUGHPUT, Some(stats.throughput));
        put(KARP_FLATT, stats.karp_flatt);
        put(OUTLIERS, Some(stats.outliers as f64));
        put(FAILURES, Some(stats.failures as f64));
        put(COPIES, Some(point.copies as f64));
        put(CPU_MEDIAN, Some(stats.cpu.median));
        if scan.mode == Mode::Commands && fastest_mean > 0.0 && fastest_mean.is_finite() {
            row.metrics
                .insert(RELATIVE.to_string(), stats.wall.mean / fastest_mean);
        }
        section.rows.push(row);
    }
    report.sections.push(section);
    report.model = analysis.model.clone();
    report.findings = analysis.notes.clone();
    report.warnings = analysis.warnings.clone();
    report
}

/// One line saying what was scanned, how often, and on what machine.
fn header(scan: &Scan) -> String {
    let runs: Vec<usize> = scan.points.iter().map(|p| p.runs.len()).collect();
    let (lo, hi) = (
        runs.iter().copied().min().unwrap_or(0),
        runs.iter().copied().max().unwrap_or(0),
    );
    let runs = if lo == hi {
        crate::view::units::plural(lo as u64, "run")
    } else {
        format!("{lo}–{hi} runs")
    };
    let labels = scan
        .points
        .iter()
        .map(|p| p.label.as_str())
        .collect::<Vec<_>>()
        .join(",");
    let what = match scan.mode {
        Mode::Parameter => format!("{} over {labels}", scan.parameter),
        Mode::Procs => format!("concurrent copies K = {labels}"),
        Mode::Commands => {
            return format!(
                "benchmark of {}; {runs} per command after {}, interleaved; machine: {}",
                scan.points
                    .iter()
                    .map(|p| format!("`{}`", p.command))
                    .collect::<Vec<_>>()
                    .join(", "),
                crate::view::units::plural(scan.warmup as u64, "warm-up run"),
                machine_line(&scan.machine),
            )
        }
    };
    format!(
        "scan of `{}`: {what}; {runs} per value after {}, interleaved; machine: {}",
        scan.template,
        crate::view::units::plural(scan.warmup as u64, "warm-up run"),
        machine_line(&scan.machine),
    )
}

/// `2 logical CPUs, 2 physical cores[, cgroup quota 1.5 CPUs]`.
fn machine_line(m: &Machine) -> String {
    let t = &m.topology;
    format!(
        "{} logical CPUs, {} physical cores{}",
        t.logical_cpus,
        t.physical_cores,
        t.cgroup_quota
            .map_or_else(String::new, |q| format!(", cgroup quota {q} CPUs")),
    )
}

#[cfg(test)]
mod tests {
    //! The exporters on a fixed scan (hyperfine's `export/tests.rs` habit): the hyperfine JSON
    //! and CSV are contracts, so they are compared with snapshots taken from the writers scan
    //! had before it filled the common model (byte for byte the same).
    use super::super::analysis::analyse;
    use super::super::record::{Point, Run};
    use super::*;
    use crate::export::{csv, json, markdown};
    use std::time::Duration;

    fn fixture() -> Scan {
        let run = |round: usize, wall: f64, cpu: f64, rss: u64, code: Option<i32>| Run {
            round,
            wall: Duration::from_secs_f64(wall),
            user: Duration::from_secs_f64(cpu * 0.8),
            system: Duration::from_secs_f64(cpu * 0.2),
            max_rss_kib: rss,
            voluntary_switches: 10 + round as u64,
            involuntary_switches: 100 * (round as u64 + 1),
            run_queue_wait: Some(Duration::from_secs_f64(0.001 * (round + 1) as f64)),
            exit_code: code,
            signal: None,
        };
        let point = |n: f64, walls: &[f64]| Point {
            label: format!("{n}"),
            n: Some(n),
            copies: 1,
            command: format!("prog -j{n} 'a b'"),
            parameter: None,
            runs: walls
                .iter()
                .enumerate()
                .map(|(i, &w)| {
                    run(
                        i,
                        w,
                        1.1 + 0.01 * i as f64,
                        50_000 + 1000 * n as u64,
                        Some(0),
                    )
                })
                .collect(),
        };
        Scan {
            mode: Mode::Parameter,
            parameter: "n".into(),
            template: "prog -j{n} 'a b'".into(),
            points: vec![
                point(1.0, &[1.0, 1.02, 0.99]),
                point(2.0, &[0.55, 0.56, 0.6]),
                point(3.0, &[0.45, 0.44, 0.47]),
                point(4.0, &[0.43]),
            ],
            machine: Machine::example(2, 2),
            partial: false,
            run_queue_unavailable: None,
            warmup: 1,
        }
    }

    #[test]
    fn hyperfine_json_and_csv_match_their_snapshots() {
        let scan = fixture();
        let report = report(&scan, &analyse(&scan));
        let text = json::to_string(&json::hyperfine(&report)).unwrap();
        let expected = include_str!("snapshots/fixture.json")
            .replace("\"VERSION\"", &format!("\"{}\"", env!("CARGO_PKG_VERSION")));
        assert_eq!(text, expected);
        assert_eq!(
            csv::hyperfine(&report),
            include_str!("snapshots/fixture.csv")
        );
    }

    #[test]
    fn one_run_has_no_stddev_and_hyperfine_fields_are_there() {
        let scan = fixture();
        let report = report(&scan, &analyse(&scan));
        let doc = json::hyperfine(&report);
        let results = doc["results"].as_array().unwrap();
        for key in json::HYPERFINE_FIELDS {
            assert!(results.iter().all(|r| r.get(key).is_some()), "{key}");
        }
        assert!(results[0]["stddev"].is_f64());
        assert!(
            results[3]["stddev"].is_null(),
            "one run: null, as hyperfine"
        );
        assert_eq!(results[3]["parameters"]["n"], "4");
    }

    #[test]
    fn the_report_holds_what_the_views_need() {
        let mut scan = fixture();
        scan.points[1].label = "fast".into();
        scan.points[1].n = None;
        scan.points[2].runs[0].exit_code = Some(3);
        let report = report(&scan, &analyse(&scan));
        let rows = &report.sections[0].rows;
        assert_eq!(rows[1].label, "fast");
        assert_eq!(rows[1].value, None);
        assert_eq!(rows[1].x, 2.0, "a label sits at its position");
        assert_eq!(rows[2].metrics[FAILURES], 1.0);
        assert!(report.model.is_none(), "a label is not a count: no model");
        let text = crate::view::table::render(&report);
        assert!(text.contains("3 (1 failed)"), "{text}");
        let md = markdown::to_string(&report);
        assert!(md.starts_with("scan of `prog -j{n} 'a b'`"), "{md}");
        assert!(md.contains("| `n` | wall median (min–max) |"), "{md}");
        assert!(md.contains("**Warnings**"), "{md}");
    }
}
