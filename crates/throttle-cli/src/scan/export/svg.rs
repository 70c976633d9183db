//! `--plot FILE.svg`: two panels. Left, throughput against the concurrency level — every run as
//! a small dot, each median as a large one, the fitted USL curve, the Amdahl curve and the
//! ideal line through the first value. Right, median wall time and median CPU time against the
//! level: where CPU time climbs while wall time stalls, concurrency costs work.

use plotters::coord::Shift;
use plotters::prelude::*;

use crate::scan::analysis::{throughput_points, Analysis};
use crate::scan::record::Scan;

const WIDTH: u32 = 1100;
const HEIGHT: u32 = 440;
const USL_COLOR: RGBColor = RGBColor(0xd6, 0x27, 0x28);
const AMDAHL_COLOR: RGBColor = RGBColor(0x1f, 0x77, 0xb4);
const DATA_COLOR: RGBColor = RGBColor(0x33, 0x33, 0x33);
const CPU_COLOR: RGBColor = RGBColor(0xff, 0x7f, 0x0e);

/// The x coordinate of each point: its level, or its position when the labels are not numbers.
fn xs(scan: &Scan) -> Vec<f64> {
    if scan.points.iter().all(|p| p.n.is_some()) {
        scan.points.iter().map(|p| p.n.unwrap_or(0.0)).collect()
    } else {
        (1..=scan.points.len()).map(|i| i as f64).collect()
    }
}

fn draw_error(e: impl std::fmt::Display) -> anyhow::Error {
    anyhow::anyhow!("drawing the plot: {e}")
}

/// The SVG document.
pub fn to_string(scan: &Scan, analysis: &Analysis) -> anyhow::Result<String> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, HEIGHT)).into_drawing_area();
        root.fill(&WHITE).map_err(draw_error)?;
        let (left, right) = root.split_horizontally(WIDTH / 2);
        throughput_panel(&left, scan, analysis)?;
        time_panel(&right, scan, analysis)?;
        root.present().map_err(draw_error)?;
    }
    Ok(svg)
}

fn throughput_panel(
    area: &DrawingArea<SVGBackend<'_>, Shift>,
    scan: &Scan,
    analysis: &Analysis,
) -> anyhow::Result<()> {
    let x = xs(scan);
    let name = &scan.parameter;
    let medians: Vec<(f64, f64)> = x
        .iter()
        .zip(&analysis.stats)
        .filter_map(|(&x, s)| s.as_ref().map(|s| (x, s.throughput)))
        .collect();
    let runs: Vec<(f64, f64)> = if scan.points.iter().all(|p| p.n.is_some()) {
        throughput_points(scan)
    } else {
        Vec::new()
    };
    let x_max = x.iter().copied().fold(1.0, f64::max) * 1.08;
    let curve = |f: &dyn Fn(f64) -> f64| -> Vec<(f64, f64)> {
        (0..=200)
            .map(|i| {
                let n = 1.0 + (x_max - 1.0) * i as f64 / 200.0;
                (n, f(n))
            })
            .filter(|p| p.1.is_finite())
            .collect()
    };
    let model = analysis.model.as_ref();
    let usl = model
        .and_then(|m| m.usl.as_ref().ok())
        .map(|f| curve(&|n| f.predict(n)));
    let amdahl = model
        .and_then(|m| m.amdahl.as_ref().ok())
        .map(|f| curve(&|n| f.predict(n)));
    let y_data = medians.iter().chain(&runs).map(|p| p.1).fold(0.0, f64::max);
    let y_fit = usl
        .iter()
        .chain(amdahl.iter())
        .flatten()
        .map(|p| p.1)
        .fold(0.0, f64::max);
    let y_max = (y_data.max(y_fit.min(y_data * 2.0)) * 1.15).max(1e-9);
    let unit = model.map_or("runs/s", |m| m.unit);
    let mut chart = ChartBuilder::on(area)
        .caption(format!("Throughput against {name}"), ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(0.0..x_max, 0.0..y_max)
        .map_err(draw_error)?;
    chart
        .configure_mesh()
        .x_desc(name.as_str())
        .y_desc(format!("throughput ({unit})"))
        .light_line_style(WHITE.mix(0.0))
        .draw()
        .map_err(draw_error)?;
    if let (Some(&(x0, y0)), true) = (medians.first(), x0_positive(&medians)) {
        // End the line where it leaves the chart: plotters clamps an out-of-range endpoint,
        // which would bend the line away from the first measurement.
        let slope = y0 / x0;
        let x_end = x_max.min(y_max / slope);
        chart
            .draw_series(DashedLineSeries::new(
                [(0.0, 0.0), (x_end, slope * x_end)],
                4,
                4,
                ShapeStyle::from(&BLACK.mix(0.35)).stroke_width(1),
            ))
            .map_err(draw_error)?
            .label("linear")
            .legend(|(x, y)| PathElement::new([(x, y), (x + 20, y)], BLACK.mix(0.35)));
    }
    if let Some(points) = amdahl {
        chart
            .draw_series(DashedLineSeries::new(
                points,
                8,
                5,
                ShapeStyle::from(&AMDAHL_COLOR).stroke_width(2),
            ))
            .map_err(draw_error)?
            .label("Amdahl fit (κ = 0)")
            .legend(|(x, y)| PathElement::new([(x, y), (x + 20, y)], AMDAHL_COLOR.stroke_width(2)));
    }
    if let Some(points) = usl {
        chart
            .draw_series(LineSeries::new(points, USL_COLOR.stroke_width(2)))
            .map_err(draw_error)?
            .label("USL fit")
            .legend(|(x, y)| PathElement::new([(x, y), (x + 20, y)], USL_COLOR.stroke_width(2)));
    }
    chart
        .draw_series(
            runs.iter()
                .map(|&(x, y)| Circle::new((x, y), 2, DATA_COLOR.mix(0.4).filled())),
        )
        .map_err(draw_error)?;
    chart
        .draw_series(
            medians
                .iter()
                .map(|&(x, y)| Circle::new((x, y), 5, DATA_COLOR.filled())),
        )
        .map_err(draw_error)?
        .label("median (dots: runs)")
        .legend(|(x, y)| Circle::new((x + 10, y), 4, DATA_COLOR.filled()));
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK.mix(0.3))
        .draw()
        .map_err(draw_error)?;
    Ok(())
}

fn x0_positive(medians: &[(f64, f64)]) -> bool {
    medians.first().is_some_and(|p| p.0 > 0.0)
}

fn time_panel(
    area: &DrawingArea<SVGBackend<'_>, Shift>,
    scan: &Scan,
    analysis: &Analysis,
) -> anyhow::Result<()> {
    let x = xs(scan);
    let name = &scan.parameter;
    let wall: Vec<(f64, f64)> = x
        .iter()
        .zip(&analysis.stats)
        .filter_map(|(&x, s)| s.as_ref().map(|s| (x, s.wall.median)))
        .collect();
    let cpu: Vec<(f64, f64)> = x
        .iter()
        .zip(&analysis.stats)
        .filter_map(|(&x, s)| s.as_ref().map(|s| (x, s.cpu.median)))
        .collect();
    let x_max = x.iter().copied().fold(1.0, f64::max) * 1.08;
    let y_max = (wall.iter().chain(&cpu).map(|p| p.1).fold(0.0, f64::max) * 1.15).max(1e-9);
    let mut chart = ChartBuilder::on(area)
        .caption(
            format!("Wall and CPU time against {name}"),
            ("sans-serif", 20),
        )
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(0.0..x_max, 0.0..y_max)
        .map_err(draw_error)?;
    chart
        .configure_mesh()
        .x_desc(name.as_str())
        .y_desc("seconds per run (median)")
        .light_line_style(WHITE.mix(0.0))
        .draw()
        .map_err(draw_error)?;
    chart
        .draw_series(LineSeries::new(wall.clone(), DATA_COLOR.stroke_width(2)))
        .map_err(draw_error)?
        .label("wall time")
        .legend(|(x, y)| PathElement::new([(x, y), (x + 20, y)], DATA_COLOR.stroke_width(2)));
    chart
        .draw_series(wall.iter().map(|&p| Circle::new(p, 4, DATA_COLOR.filled())))
        .map_err(draw_error)?;
    chart
        .draw_series(LineSeries::new(cpu.clone(), CPU_COLOR.stroke_width(2)))
        .map_err(draw_error)?
        .label("CPU time (user + system)")
        .legend(|(x, y)| PathElement::new([(x, y), (x + 20, y)], CPU_COLOR.stroke_width(2)));
    chart
        .draw_series(cpu.iter().map(|&p| Circle::new(p, 4, CPU_COLOR.filled())))
        .map_err(draw_error)?;
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK.mix(0.3))
        .draw()
        .map_err(draw_error)?;
    Ok(())
}
