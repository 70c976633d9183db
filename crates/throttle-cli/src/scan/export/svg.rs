//! `--plot FILE.svg`: two figures drawn by the one plotter, [`crate::chart`]. First, throughput
//! against the concurrency level — every run as a small dot, the medians joined, the fitted USL
//! curve, the Amdahl curve and the linear line through the first value. Second, median wall
//! time and median CPU time against the level: where CPU time climbs while wall time stalls,
//! concurrency costs work. Both mark the physical and logical core counts, tick only whole
//! levels and start the level axis at the first value measured, not at 0.

use crate::chart::{core_marks, stack, Axis, LineChart, Series, PALETTE};
use crate::scan::analysis::{throughput_points, Analysis};
use crate::scan::record::{Mode, Scan};

/// The x coordinate of each point: its level, or its position when the labels are not numbers.
fn xs(scan: &Scan) -> Vec<f64> {
    if numeric(scan) {
        scan.points.iter().map(|p| p.n.unwrap_or(0.0)).collect()
    } else {
        (1..=scan.points.len()).map(|i| i as f64).collect()
    }
}

fn numeric(scan: &Scan) -> bool {
    scan.points.iter().all(|p| p.n.is_some())
}

/// The level axis: whole numbers, labelled with the parameter (or `concurrent copies K`).
fn level_axis(scan: &Scan) -> Axis {
    let label = match scan.mode {
        Mode::Parameter => format!("{} (the value of {{{}}})", scan.parameter, scan.parameter),
        Mode::Procs => "concurrent copies K".to_string(),
    };
    let mut axis = Axis::count(&label);
    if !numeric(scan) {
        axis.extra_ticks = scan
            .points
            .iter()
            .enumerate()
            .map(|(i, p)| ((i + 1) as f64, p.label.clone()))
            .collect();
    }
    axis
}

fn partial(scan: &Scan, title: String) -> String {
    if scan.partial {
        format!("{title} (partial)")
    } else {
        title
    }
}

/// The two figures, each a standalone `<svg>` element.
pub fn charts(scan: &Scan, analysis: &Analysis) -> Vec<String> {
    let x = xs(scan);
    let marks = if numeric(scan) {
        core_marks(
            scan.machine.topology.physical_cores,
            scan.machine.topology.logical_cpus,
        )
    } else {
        Vec::new()
    };
    let subtitle = format!("`{}`", scan.template);
    let against = match scan.mode {
        Mode::Parameter => scan.parameter.clone(),
        Mode::Procs => "concurrent copies K".to_string(),
    };
    let medians: Vec<(f64, f64)> = x
        .iter()
        .zip(&analysis.stats)
        .filter_map(|(&x, s)| s.as_ref().map(|s| (x, s.throughput)))
        .collect();
    let runs = if numeric(scan) {
        throughput_points(scan)
    } else {
        Vec::new()
    };
    let model = analysis.model.as_ref();
    let unit = model.map_or(
        match scan.mode {
            Mode::Parameter => "runs/s",
            Mode::Procs => "copies/s",
        },
        |m| m.unit,
    );
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
    if let Some(&(x0, y0)) = medians.first().filter(|p| p.0 > 0.0 && numeric(scan)) {
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
        title: partial(scan, format!("Throughput ({unit}) against {against}")),
        subtitle: subtitle.clone(),
        x: level_axis(scan),
        y: Axis::linear(&format!("throughput ({unit})")),
        series,
        marks: marks.clone(),
    };
    let pick = |f: &dyn Fn(&crate::scan::analysis::PointStats) -> f64| -> Vec<(f64, f64)> {
        x.iter()
            .zip(&analysis.stats)
            .filter_map(|(&x, s)| s.as_ref().map(|s| (x, f(s))))
            .collect()
    };
    let times = LineChart {
        title: partial(
            scan,
            format!("Wall time and CPU time per run against {against}"),
        ),
        subtitle,
        x: level_axis(scan),
        y: Axis::seconds("median time per run"),
        series: vec![
            Series::line("wall time", PALETTE[0], pick(&|s| s.wall.median)),
            Series::line(
                "CPU time (user + system)",
                PALETTE[1],
                pick(&|s| s.user.median + s.system.median),
            )
            .dashed(),
        ],
        marks,
    };
    vec![throughput.to_svg(), times.to_svg()]
}

/// The SVG document: both figures stacked.
pub fn to_string(scan: &Scan, analysis: &Analysis) -> anyhow::Result<String> {
    Ok(stack(&charts(scan, analysis)))
}
