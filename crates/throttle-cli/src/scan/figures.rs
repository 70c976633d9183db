//! scan's figures, drawn from the common [`Report`] by the one plotter, [`crate::chart`]; they
//! plug into `--plot FILE.svg` (stacked) and into the `--report` page
//! ([`crate::export::html::report_page`]). First, throughput
//! against the concurrency level — every run as a small dot, the medians joined, the fitted USL
//! curve, the Amdahl curve and the linear line through the first value. Second, median wall
//! time and median CPU time against the level: where CPU time climbs while wall time stalls,
//! concurrency costs work. Both mark the physical and logical core counts, tick only whole
//! levels and start the level axis at the first value measured, not at 0.

use crate::chart::{core_marks, stack, Axis, LineChart, Series, PALETTE};
use crate::results::keys::{COPIES, THROUGHPUT};
use crate::results::{Report, Row};

/// What the figures need to know about a scan, read from the report.
struct View<'a> {
    rows: Vec<&'a Row>,
    procs: bool,
    parameter: String,
    template: String,
    numeric: bool,
    partial: bool,
}

impl<'a> View<'a> {
    fn of(report: &'a Report) -> View<'a> {
        let text = |k: &str| {
            report
                .parameters
                .get(k)
                .and_then(serde_json::Value::as_str)
                .unwrap_or_default()
                .to_string()
        };
        let rows: Vec<&Row> = report.sections.iter().flat_map(|s| &s.rows).collect();
        View {
            numeric: rows.iter().all(|r| r.value.is_some()),
            rows,
            procs: text("mode") == "procs",
            parameter: text("parameter"),
            template: text("template"),
            partial: report.partial,
        }
    }

    /// The level axis: whole numbers, labelled with the parameter (or `concurrent copies K`).
    fn level_axis(&self) -> Axis {
        let label = if self.procs {
            "concurrent copies K".to_string()
        } else {
            format!("{} (the value of {{{}}})", self.parameter, self.parameter)
        };
        let mut axis = Axis::count(&label);
        if !self.numeric {
            axis.extra_ticks = self.rows.iter().map(|r| (r.x, r.label.clone())).collect();
        }
        axis
    }

    fn title(&self, title: String) -> String {
        if self.partial {
            format!("{title} (partial)")
        } else {
            title
        }
    }

    /// Every run's throughput `(n, copies / wall)`, the points the model is fitted to.
    fn run_throughputs(&self) -> Vec<(f64, f64)> {
        self.rows
            .iter()
            .filter_map(|r| Some((r.value?, r)))
            .flat_map(|(n, r)| {
                let copies = r.metrics.get(COPIES).copied().unwrap_or(1.0);
                r.samples
                    .iter()
                    .map(move |s| (n, copies / s.wall.as_secs_f64().max(1e-12)))
            })
            .collect()
    }
}

/// The two figures, each a standalone `<svg>` element.
pub fn charts(report: &Report) -> Vec<String> {
    let view = View::of(report);
    let x: Vec<f64> = view.rows.iter().map(|r| r.x).collect();
    let marks = if view.numeric {
        let t = &report.machine.topology;
        core_marks(t.physical_cores, t.logical_cpus)
    } else {
        Vec::new()
    };
    let subtitle = format!("`{}`", view.template);
    let against = if view.procs {
        "concurrent copies K".to_string()
    } else {
        view.parameter.clone()
    };
    let medians: Vec<(f64, f64)> = view
        .rows
        .iter()
        .filter_map(|r| Some((r.x, *r.metrics.get(THROUGHPUT)?)))
        .collect();
    let runs = if view.numeric {
        view.run_throughputs()
    } else {
        Vec::new()
    };
    let model = report.model.as_ref();
    let unit = model.map_or(if view.procs { "copies/s" } else { "runs/s" }, |m| m.unit);
    let (x_lo, x_hi) = (
        x.iter().copied().fold(f64::INFINITY, f64::min),
        x.iter().copied().fold(0.0, f64::max),
    );
    let y_data = medians.iter().chain(&runs).map(|p| p.1).fold(0.0, f64::max);
    // Curves are drawn over the measured range and cut where they leave twice the data's
    // height, so a runaway fit cannot flatten the measurements.
    let curve = |f: &dyn Fn(f64) -> f64| -> Vec<(f64, f64)> {
        (0..=120)
            .map(|i| x_lo + (x_hi - x_lo) * i as f64 / 120.0)
            .map(|n| (n, f(n)))
            .take_while(|p| p.1.is_finite() && p.1 <= 2.0 * y_data)
            .collect()
    };
    let mut series = Vec::new();
    if !runs.is_empty() {
        series.push(Series::line("every run", "#999999", runs).dots());
    }
    series.push(Series::line("median", PALETTE[6], medians.clone()));
    if let Some(&(x0, y0)) = medians.first().filter(|p| p.0 > 0.0 && view.numeric) {
        series.push(
            Series::line(
                "linear from the first value",
                "#777777",
                curve(&|n| y0 * n / x0),
            )
            .dashed()
            .no_markers(),
        );
    }
    if let Some(fit) = model.and_then(|m| m.amdahl.as_ref().ok()) {
        series.push(
            Series::line("Amdahl fit (κ = 0)", PALETTE[0], curve(&|n| fit.predict(n)))
                .dashed()
                .no_markers(),
        );
    }
    if let Some(fit) = model.and_then(|m| m.usl.as_ref().ok()) {
        series.push(Series::line("USL fit", PALETTE[1], curve(&|n| fit.predict(n))).no_markers());
    }
    let throughput = LineChart {
        title: view.title(format!("Throughput ({unit}) against {against}")),
        subtitle: subtitle.clone(),
        x: view.level_axis(),
        y: Axis::linear(&format!("throughput ({unit})")),
        series,
        marks: marks.clone(),
    };
    let pick = |f: &dyn Fn(&Row) -> f64| -> Vec<(f64, f64)> {
        view.rows.iter().map(|r| (r.x, f(r))).collect()
    };
    let times = LineChart {
        title: view.title(format!("Wall time and CPU time per run against {against}")),
        subtitle,
        x: view.level_axis(),
        y: Axis::seconds("median time per run"),
        series: vec![
            Series::line("wall time", PALETTE[0], pick(&|r| r.wall.median))
                .with_ranges(spread(view.rows.iter().copied(), &|s| s.wall.as_secs_f64())),
            Series::line(
                "CPU time (user + system)",
                PALETTE[1],
                pick(&|r| r.user + r.system),
            )
            .dashed()
            .with_ranges(spread(view.rows.iter().copied(), &|s| {
                (s.user + s.system).as_secs_f64()
            })),
        ],
        marks,
    };
    vec![throughput.to_svg(), times.to_svg()]
}

/// Min–max bars of `f` over each row's runs (rows with at least two).
fn spread<'a>(
    rows: impl Iterator<Item = &'a Row>,
    f: &dyn Fn(&crate::results::Sample) -> f64,
) -> Vec<(f64, f64, f64)> {
    rows.filter(|r| r.samples.len() > 1)
        .map(|r| {
            let (lo, hi) = r
                .samples
                .iter()
                .map(f)
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
                    (a.min(v), b.max(v))
                });
            (r.x, lo, hi)
        })
        .collect()
}

/// The SVG document: both figures stacked.
pub fn to_string(report: &Report) -> String {
    stack(&charts(report))
}

/// What the figures show, for the caption under them on the HTML page.
pub const CAPTION: &str = "First: throughput of every run (small grey dots), the medians, the USL and Amdahl fits and the linear line through the first value. Second: median wall and CPU time per run, with bars from the fastest to the slowest run. Dotted vertical lines mark the core counts.";
