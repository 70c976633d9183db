//! `--plot`: wall time and CPU time against the level, one chart per section, as SVG.
//!
//! Each series gets one colour: a solid line with dots for the wall-time median and a dashed line
//! for the CPU time (user + system). The x axis is logarithmic when the levels span a factor of
//! 8 or more; on concurrency axes, grey vertical lines mark the physical and logical core counts.

use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::coord::Shift;
use plotters::prelude::*;

use crate::report::{Report, Section};

/// Width of the image in pixels.
const WIDTH: u32 = 900;
/// Height of one section's chart in pixels.
const CHART_HEIGHT: u32 = 480;

/// The report's charts as an SVG document.
pub fn to_string(report: &Report) -> anyhow::Result<String> {
    let sections: Vec<&Section> = report
        .sections
        .iter()
        .filter(|s| !s.rows.is_empty())
        .collect();
    let charts = sections.len().max(1);
    let mut text = String::new();
    {
        let root = SVGBackend::with_string(&mut text, (WIDTH, CHART_HEIGHT * charts as u32))
            .into_drawing_area();
        root.fill(&WHITE).map_err(plot_error)?;
        if sections.is_empty() {
            root.draw_text(
                "nothing was measured",
                &("sans-serif", 20).into_text_style(&root),
                (20, 40),
            )
            .map_err(plot_error)?;
        }
        let areas = root.split_evenly((charts, 1));
        let topo = &report.machine.topology;
        // One mark when the counts agree (no SMT), so the labels do not print over each other.
        let marks: Vec<(f64, &str)> = if topo.physical_cores == topo.logical_cpus {
            vec![(topo.logical_cpus as f64, "cores (physical = logical)")]
        } else {
            vec![
                (topo.physical_cores as f64, "physical cores"),
                (topo.logical_cpus as f64, "logical CPUs"),
            ]
        };
        for (area, section) in areas.iter().zip(&sections) {
            let title = if report.partial {
                format!("{} (partial)", section.title)
            } else {
                section.title.clone()
            };
            let (lo, hi) = x_bounds(section);
            let y_max = section
                .rows
                .iter()
                .map(|r| r.wall.max.max(r.user + r.system))
                .fold(0.0, f64::max)
                .max(1e-9)
                * 1.1;
            let marks: &[(f64, &str)] = if section.levels_are_concurrency {
                &marks[..]
            } else {
                &[]
            };
            if lo > 0.0 && hi / lo >= LOG_AXIS_SPAN {
                draw_chart(
                    area,
                    section,
                    &title,
                    (lo..hi).log_scale(),
                    lo,
                    hi,
                    y_max,
                    marks,
                )?;
            } else {
                draw_chart(area, section, &title, lo..hi, lo, hi, y_max, marks)?;
            }
        }
        root.present().map_err(plot_error)?;
    }
    Ok(text)
}

/// Levels spanning this factor or more get a logarithmic x axis: with 1, 2, 3 … 64 on a linear
/// axis the interesting low levels crowd into the first tenth of the plot.
const LOG_AXIS_SPAN: f64 = 8.0;

/// The x range: the rows' positions with a margin (multiplicative when it may become a log axis).
fn x_bounds(section: &Section) -> (f64, f64) {
    let min = section
        .rows
        .iter()
        .map(|r| r.x)
        .fold(f64::INFINITY, f64::min);
    let max = section
        .rows
        .iter()
        .map(|r| r.x)
        .fold(f64::NEG_INFINITY, f64::max);
    if !min.is_finite() || !max.is_finite() {
        return (0.0, 1.0);
    }
    if min > 0.0 && max / min >= LOG_AXIS_SPAN {
        (min / 1.3, max * 1.3)
    } else {
        let pad = ((max - min) * 0.05).max(0.5);
        ((min - pad).max(0.0), max + pad)
    }
}

#[allow(clippy::too_many_arguments)]
fn draw_chart<X>(
    area: &DrawingArea<SVGBackend<'_>, Shift>,
    section: &Section,
    title: &str,
    x_spec: X,
    x_lo: f64,
    x_hi: f64,
    y_max: f64,
    marks: &[(f64, &str)],
) -> anyhow::Result<()>
where
    X: AsRangedCoord<Value = f64>,
    X::CoordDescType: ValueFormatter<f64>,
{
    let mut chart = ChartBuilder::on(area)
        .caption(title, ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(70)
        .build_cartesian_2d(x_spec, 0.0..y_max)
        .map_err(plot_error)?;
    chart
        .configure_mesh()
        .x_desc(section.level_name.as_str())
        .y_desc("seconds")
        .draw()
        .map_err(plot_error)?;

    for &(x, name) in marks {
        if x < x_lo || x > x_hi {
            continue;
        }
        let grey = RGBColor(150, 150, 150);
        chart
            .draw_series(LineSeries::new(
                [(x, 0.0), (x, y_max)],
                grey.stroke_width(1),
            ))
            .map_err(plot_error)?;
        chart
            .draw_series(std::iter::once(Text::new(
                format!("{name} = {x}"),
                (x, y_max * 0.97),
                ("sans-serif", 13).into_font().color(&grey),
            )))
            .map_err(plot_error)?;
    }

    let mut series: Vec<&str> = Vec::new();
    for row in &section.rows {
        if !series.contains(&row.series.as_str()) {
            series.push(&row.series);
        }
    }
    for (i, name) in series.iter().enumerate() {
        let color = Palette99::pick(i).to_rgba();
        let mut points: Vec<(f64, f64, f64)> = section
            .rows
            .iter()
            .filter(|r| r.series == *name)
            .map(|r| (r.x, r.wall.median, r.user + r.system))
            .collect();
        points.sort_by(|a, b| a.0.total_cmp(&b.0));
        let wall: Vec<(f64, f64)> = points.iter().map(|p| (p.0, p.1)).collect();
        let cpu: Vec<(f64, f64)> = points.iter().map(|p| (p.0, p.2)).collect();
        chart
            .draw_series(LineSeries::new(wall.clone(), color.stroke_width(2)))
            .map_err(plot_error)?
            .label(format!("{name}: wall"))
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 20, y)], color.stroke_width(2)));
        chart
            .draw_series(wall.iter().map(|&p| Circle::new(p, 3, color.filled())))
            .map_err(plot_error)?;
        chart
            .draw_series(DashedLineSeries::new(cpu, 6, 4, color.stroke_width(1)))
            .map_err(plot_error)?
            .label(format!("{name}: CPU (user+system)"))
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 20, y)], color.stroke_width(1)));
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .position(SeriesLabelPosition::UpperRight)
        .draw()
        .map_err(plot_error)?;
    Ok(())
}

fn plot_error(e: impl std::fmt::Debug) -> anyhow::Error {
    anyhow::anyhow!("drawing the plot: {e:?}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{Machine, Row, Sample};
    use std::time::Duration;

    #[test]
    fn draws_a_well_formed_svg() {
        let mut report = Report::new("t", Machine::detect());
        let mut sec = Section::new("s", "Sweep", "mode", "level", true);
        for (level, ms) in [(1u64, 40u64), (2, 20), (64, 25)] {
            let s = Sample {
                wall: Duration::from_millis(ms),
                user: Duration::from_millis(40),
                ..Sample::default()
            };
            sec.rows.push(
                Row::from_samples("pool", level, &level.to_string(), level as f64, &[s])
                    .expect("row"),
            );
        }
        report.sections.push(sec);
        let svg = to_string(&report).expect("svg");
        assert!(svg.starts_with("<svg") || svg.contains("<svg"));
        assert!(svg.trim_end().ends_with("</svg>"));
        assert!(svg.contains("pool: wall"));
    }

    #[test]
    fn empty_report_still_draws() {
        let report = Report::new("t", Machine::detect());
        assert!(to_string(&report)
            .expect("svg")
            .contains("nothing was measured"));
    }
}
