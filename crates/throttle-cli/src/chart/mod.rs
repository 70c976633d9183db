//! The one SVG plotter: line charts and bar charts drawn as plain SVG text.
//!
//! Every figure the CLI draws (`--plot` of the experiments, `scan --plot`, the `report` page)
//! goes through this module, so a figure always has a title that says what is measured, axis
//! labels with units, integer ticks on count axes, the physical and logical core counts marked
//! on concurrency axes, and a legend whose swatches look like the lines they stand for (dashed
//! for dashed). The SVG has a `viewBox` and scales to its container; it needs no fonts, scripts
//! or network.
//!
//! Written by hand rather than with `plotters`: working around its defaults gave solid legend
//! swatches for dashed lines, fractional ticks on count axes and a special level (`no limit`)
//! drawn over another unlabelled, and these figures need only a small subset of SVG (lines,
//! rects, text) that is simpler to control directly than to configure.

use std::fmt::Write as _;

mod bar;
mod line;
pub mod timeline;

pub use bar::stack;

/// Width of a chart in SVG user units (pixels at 100 %).
pub const WIDTH: f64 = 860.0;
/// Height of a chart.
pub const HEIGHT: f64 = 430.0;
const LEFT: f64 = 78.0;
const RIGHT: f64 = 24.0;
const TOP: f64 = 58.0;
/// Room under the plot for tick labels, the axis label and the legend.
const BOTTOM: f64 = 96.0;
/// Pixels between the spread bars of neighbouring series at one x.
const BAR_DODGE: f64 = 3.0;

/// Colours that stay apart for the colour-blind (Okabe & Ito's palette, in their order).
pub const PALETTE: [&str; 8] = [
    "#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#F0E442",
];

/// How an axis maps values to positions.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Scale {
    /// Linear from `min` to `max`.
    Linear,
    /// Logarithmic; ticks at powers of `base` (2 for concurrency levels, 10 for job lengths).
    Log(f64),
}

/// What an axis shows.
#[derive(Debug, Clone)]
pub struct Axis {
    /// The label under (x) or beside (y) the axis, with its unit: `wall time (s)`.
    pub label: String,
    /// Linear or logarithmic.
    pub scale: Scale,
    /// Counts (threads, processes): ticks only at whole numbers.
    pub integer: bool,
    /// Start a linear axis at zero (times, rates) rather than at the smallest value (levels).
    pub from_zero: bool,
    /// Values are seconds: the ticks are scaled to s, ms or µs and the unit added to the label.
    pub seconds: bool,
    /// Extra labelled positions beyond the data (e.g. `no limit` after the largest level).
    pub extra_ticks: Vec<(f64, String)>,
}

impl Axis {
    /// A linear axis from zero.
    pub fn linear(label: &str) -> Axis {
        Axis {
            label: label.to_string(),
            scale: Scale::Linear,
            integer: false,
            from_zero: true,
            seconds: false,
            extra_ticks: Vec::new(),
        }
    }

    /// A linear axis of seconds from zero, shown in s, ms or µs.
    pub fn seconds(label: &str) -> Axis {
        Axis {
            seconds: true,
            ..Axis::linear(label)
        }
    }

    /// A count axis (integer ticks, starting at the smallest count).
    pub fn count(label: &str) -> Axis {
        Axis {
            integer: true,
            from_zero: false,
            ..Axis::linear(label)
        }
    }

    /// A logarithmic axis with ticks at powers of `base`.
    pub fn log(label: &str, base: f64, integer: bool) -> Axis {
        Axis {
            scale: Scale::Log(base),
            integer,
            from_zero: false,
            ..Axis::linear(label)
        }
    }
}

/// One line (or set of dots) of a line chart.
#[derive(Debug, Clone)]
pub struct Series {
    /// The legend entry.
    pub name: String,
    /// Stroke and fill colour.
    pub color: String,
    /// Dashed line (the legend swatch is dashed too).
    pub dashed: bool,
    /// Draw a dot at every point.
    pub markers: bool,
    /// Draw the connecting line.
    pub line: bool,
    /// The points, in x order.
    pub points: Vec<(f64, f64)>,
    /// Points drawn as dots but not joined to the line (e.g. `no limit`).
    pub loose: Vec<(f64, f64)>,
    /// Spread bars `(x, low, high)`: the min–max of the repetitions behind a median, drawn as
    /// a vertical bar with caps through the point at `x`.
    pub ranges: Vec<(f64, f64, f64)>,
}

impl Series {
    /// A solid line with dots.
    pub fn line(name: &str, color: &str, points: Vec<(f64, f64)>) -> Series {
        Series {
            name: name.to_string(),
            color: color.to_string(),
            dashed: false,
            markers: true,
            line: true,
            points,
            loose: Vec::new(),
            ranges: Vec::new(),
        }
    }

    /// With spread bars (min–max of the repetitions) at the given x.
    pub fn with_ranges(mut self, ranges: Vec<(f64, f64, f64)>) -> Series {
        self.ranges = ranges;
        self
    }

    /// The same series drawn dashed.
    pub fn dashed(mut self) -> Series {
        self.dashed = true;
        self
    }

    /// Without dots (a fitted curve).
    #[allow(dead_code)]
    pub fn no_markers(mut self) -> Series {
        self.markers = false;
        self
    }

    /// Dots only (every run).
    #[allow(dead_code)]
    pub fn dots(mut self) -> Series {
        self.line = false;
        self
    }
}

/// A vertical line at `x` with a label (core counts).
#[derive(Debug, Clone)]
pub struct Mark {
    /// Where.
    pub x: f64,
    /// What it is: `2 physical cores`.
    pub label: String,
}

/// The physical and logical core counts as marks, one mark when they agree.
pub fn core_marks(physical: usize, logical: usize) -> Vec<Mark> {
    if physical == 0 || physical == logical {
        vec![Mark {
            x: logical as f64,
            label: format!("{logical} cores"),
        }]
    } else {
        vec![
            Mark {
                x: physical as f64,
                label: format!("{physical} physical cores"),
            },
            Mark {
                x: logical as f64,
                label: format!("{logical} logical CPUs"),
            },
        ]
    }
}

/// A line chart.
#[derive(Debug, Clone)]
pub struct LineChart {
    /// What is measured, e.g. `Seed 000: wall time against the concurrency limit`.
    pub title: String,
    /// A smaller line under the title (work size, repetitions), or empty.
    pub subtitle: String,
    /// The x axis.
    pub x: Axis,
    /// The y axis.
    pub y: Axis,
    /// The lines.
    pub series: Vec<Series>,
    /// Vertical marks (core counts); those outside the x range are left out.
    pub marks: Vec<Mark>,
}

/// A grouped bar chart: one group of bars per category.
#[derive(Debug, Clone)]
pub struct BarChart {
    /// What is measured.
    pub title: String,
    /// A smaller line under the title, or empty.
    pub subtitle: String,
    /// The categories along x (schedulers), in order.
    pub categories: Vec<String>,
    /// What the categories are (`scheduler`).
    pub x_label: String,
    /// The value axis (linear).
    pub y: Axis,
    /// One bar per category for each entry: (legend name, colour, value per category).
    pub groups: Vec<(String, String, Vec<Option<f64>>)>,
    /// A horizontal reference line with a label (the theoretical minimum).
    pub reference: Option<(f64, String)>,
    /// Spread bars per group and category, parallel to `groups`: the min–max of the
    /// repetitions behind each bar's median (missing entries draw none).
    pub ranges: Vec<Vec<Option<(f64, f64)>>>,
}

/// Escapes text for SVG (XML) content and attributes.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// Maps values of one axis to pixels.
#[derive(Debug, Clone, Copy)]
struct Map {
    scale: Scale,
    lo: f64,
    hi: f64,
    from: f64,
    to: f64,
}

impl Map {
    fn t(&self, v: f64) -> f64 {
        let (lo, hi, v) = match self.scale {
            Scale::Linear => (self.lo, self.hi, v),
            Scale::Log(_) => (self.lo.ln(), self.hi.ln(), v.max(1e-300).ln()),
        };
        let f = if hi > lo { (v - lo) / (hi - lo) } else { 0.5 };
        self.from + f * (self.to - self.from)
    }
}

/// A "nice" step (1, 2 or 5 × 10^k) giving about `count` ticks over `span`.
fn nice_step(span: f64, count: f64) -> f64 {
    let raw = (span / count).max(1e-300);
    let mag = 10f64.powf(raw.log10().floor());
    let f = raw / mag;
    let nice = if f <= 1.0 {
        1.0
    } else if f <= 2.0 {
        2.0
    } else if f <= 5.0 {
        5.0
    } else {
        10.0
    };
    nice * mag
}

/// The axis range and its ticks for values in `lo..=hi`.
fn ticks(axis: &Axis, lo: f64, hi: f64) -> (f64, f64, Vec<f64>) {
    match axis.scale {
        Scale::Log(base) => {
            let lo = lo.max(1e-12);
            let hi = hi.max(lo * base);
            let first = (lo.ln() / base.ln()).floor() as i32;
            let last = (hi.ln() / base.ln()).ceil() as i32;
            let mut t: Vec<f64> = (first..=last).map(|e| base.powi(e)).collect();
            // Keep at most ~10 labels: every other power when they crowd.
            while t.len() > 10 {
                t = t.into_iter().step_by(2).collect();
            }
            let (lo, hi) = (lo / base.powf(0.25), hi * base.powf(0.25));
            let t: Vec<f64> = t
                .into_iter()
                .filter(|v| *v >= lo && *v <= hi)
                .filter(|v| !axis.integer || *v >= 1.0)
                .collect();
            (lo, hi, t)
        }
        Scale::Linear => {
            let lo = if axis.from_zero { lo.min(0.0) } else { lo };
            let (lo, hi) = if hi > lo {
                (lo, hi)
            } else {
                (lo - 0.5, hi + 0.5)
            };
            let mut step = nice_step(hi - lo, 6.0);
            if axis.integer {
                step = step.max(1.0).round();
            }
            let start = (lo / step).ceil() * step;
            let mut t = Vec::new();
            let mut v = start;
            while v <= hi + step * 1e-9 {
                t.push(if v.abs() < step * 1e-9 { 0.0 } else { v });
                v += step;
            }
            let pad = if axis.from_zero && lo == 0.0 {
                0.0
            } else {
                (hi - lo) * 0.04
            };
            let top = (hi - lo) * 0.06;
            (lo - pad, hi + top, t)
        }
    }
}

/// The unit and divisor for an axis of seconds whose largest value is `max`.
fn seconds_unit(max: f64) -> (&'static str, f64) {
    if max >= 1.0 {
        ("s", 1.0)
    } else if max >= 1e-3 {
        ("ms", 1e-3)
    } else {
        ("µs", 1e-6)
    }
}

/// A tick label: integers without decimals, large values with k/M, others with up to 3
/// significant digits.
fn tick_label(v: f64) -> String {
    let a = v.abs();
    if a >= 1e6 && (v / 1e6).fract() == 0.0 {
        format!("{}M", v / 1e6)
    } else if a >= 1e4 && (v / 1e3).fract() == 0.0 {
        format!("{}k", v / 1e3)
    } else if v.fract() == 0.0 {
        format!("{v:.0}")
    } else if a < 1e-3 {
        format!("{v:.0e}")
    } else {
        let s = format!("{v:.3}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

fn text(out: &mut String, x: f64, y: f64, anchor: &str, size: f64, extra: &str, body: &str) {
    let _ = writeln!(
        out,
        r#"<text x="{x:.1}" y="{y:.1}" text-anchor="{anchor}" font-size="{size}" {extra}>{}</text>"#,
        escape(body)
    );
}

fn open_svg(out: &mut String, title: &str, subtitle: &str) {
    let _ = writeln!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {HEIGHT}" width="{WIDTH}" height="{HEIGHT}" font-family="sans-serif" role="img">"#
    );
    let _ = writeln!(out, "<title>{}</title>", escape(title));
    let _ = writeln!(
        out,
        r##"<rect x="0" y="0" width="{WIDTH}" height="{HEIGHT}" fill="#ffffff"/>"##
    );
    text(
        out,
        WIDTH / 2.0,
        24.0,
        "middle",
        16.0,
        r#"font-weight="bold""#,
        title,
    );
    if !subtitle.is_empty() {
        text(
            out,
            WIDTH / 2.0,
            42.0,
            "middle",
            12.0,
            r##"fill="#555""##,
            subtitle,
        );
    }
}

/// The legend, in one or two rows under the x axis label; swatches copy the line style.
fn legend(out: &mut String, entries: &[(String, String, bool, bool, bool)]) {
    // (name, colour, dashed, line, marker)
    let mut x = LEFT;
    let mut y = HEIGHT - 22.0;
    let widths: Vec<f64> = entries
        .iter()
        .map(|e| 48.0 + 7.2 * e.0.chars().count() as f64)
        .collect();
    if widths.iter().sum::<f64>() > WIDTH - LEFT - RIGHT {
        y -= 16.0;
    }
    for (e, w) in entries.iter().zip(widths) {
        if x + w > WIDTH - RIGHT {
            x = LEFT;
            y += 16.0;
        }
        let (name, color, dashed, line, marker) = e;
        if *line {
            let dash = if *dashed {
                r#" stroke-dasharray="6 4""#
            } else {
                ""
            };
            let _ = writeln!(
                out,
                r#"<line x1="{x:.1}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="{color}" stroke-width="2"{dash}/>"#,
                x + 26.0
            );
        }
        if *marker {
            let _ = writeln!(
                out,
                r#"<circle cx="{:.1}" cy="{y:.1}" r="3.5" fill="{color}"/>"#,
                x + 13.0
            );
        }
        text(out, x + 32.0, y + 4.0, "start", 12.0, "", name);
        x += w;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integer_axes_tick_only_whole_numbers_and_need_not_start_at_zero() {
        let (lo, _, t) = ticks(&Axis::count("n"), 1.0, 4.0);
        assert!(t.iter().all(|v| v.fract() == 0.0), "{t:?}");
        assert!(lo > 0.0, "{lo}");
        let (_, _, t) = ticks(&Axis::log("level", 2.0, true), 1.0, 64.0);
        assert_eq!(t, vec![1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0]);
        assert_eq!(tick_label(10_000.0), "10k");
        assert_eq!(tick_label(0.25), "0.25");
    }

    #[test]
    fn dashed_series_get_dashed_swatches_and_marks_are_labelled() {
        let chart = LineChart {
            title: "t & t".into(),
            subtitle: String::new(),
            x: Axis::count("copies"),
            y: Axis::seconds("wall time"),
            series: vec![
                Series::line("wall", PALETTE[0], vec![(1.0, 0.5), (2.0, 0.6)]),
                Series::line("CPU", PALETTE[1], vec![(1.0, 0.5), (2.0, 1.1)]).dashed(),
            ],
            marks: core_marks(2, 2),
        };
        let svg = chart.to_svg();
        assert!(svg.contains("t &amp; t"));
        // One dashed polyline and one dashed legend swatch.
        assert_eq!(svg.matches("stroke-dasharray=\"6 4\"").count(), 2, "{svg}");
        assert!(svg.contains("2 cores"));
        assert!(svg.contains("wall time (ms)") || svg.contains("wall time (s)"));
        assert!(!svg.contains("min–max"), "no bars, no note");
    }

    #[test]
    fn spread_bars_are_drawn_and_widen_the_axis() {
        let chart = LineChart {
            title: "t".into(),
            subtitle: String::new(),
            x: Axis::count("level"),
            y: Axis::linear("time"),
            series: vec![
                Series::line("wall", PALETTE[0], vec![(1.0, 2.0), (2.0, 1.0)])
                    .with_ranges(vec![(1.0, 1.9, 2.1), (2.0, 0.5, 9.0)]),
            ],
            marks: Vec::new(),
        };
        let svg = chart.to_svg();
        // Two bars, each one path with caps, and the note that says what they are.
        assert_eq!(
            svg.matches("stroke-width=\"1.5\" opacity").count(),
            2,
            "{svg}"
        );
        assert!(svg.contains("bars: min–max of the repetitions"));
        // A second series with bars at the same x: its bars stand beside the first's.
        let mut two = chart.clone();
        two.series.push(
            Series::line("cpu", PALETTE[1], vec![(1.0, 2.0), (2.0, 1.0)])
                .with_ranges(vec![(1.0, 1.9, 2.1), (2.0, 0.5, 9.0)]),
        );
        let svg2 = two.to_svg();
        let bar_x = |color: &str| -> Vec<String> {
            svg2.lines()
                .filter(|l| l.contains("opacity=\"0.7\"") && l.contains(color))
                .map(|l| l.split(' ').nth(3).unwrap_or_default().to_string())
                .collect()
        };
        let (a, b) = (bar_x(PALETTE[0]), bar_x(PALETTE[1]));
        assert_eq!((a.len(), b.len()), (2, 2), "{svg2}");
        assert_ne!(a, b, "the bars of two series at one x overlap: {svg2}");
        // The y axis reaches the top of the widest bar.
        assert!(
            svg.contains(">8<") || svg.contains(">9<") || svg.contains(">10<"),
            "{svg}"
        );
    }
}
