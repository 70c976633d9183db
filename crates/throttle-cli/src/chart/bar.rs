//! Bar charts (one group of bars per category) and stacking charts into one document.

use std::fmt::Write as _;

use super::{
    legend, open_svg, seconds_unit, text, tick_label, ticks, BarChart, Map, Scale, BOTTOM, HEIGHT,
    LEFT, RIGHT, TOP, WIDTH,
};

/// A bar's value as printed over it: three significant digits, `0` for zero.
fn value_label(v: f64) -> String {
    if v == 0.0 {
        "0".to_string()
    } else if v.abs() >= 100.0 {
        format!("{v:.0}")
    } else {
        crate::view::units::sig3(v)
    }
}

impl BarChart {
    /// The chart as an SVG element.
    pub fn to_svg(&self) -> String {
        let mut out = String::new();
        let has_ranges = self.ranges.iter().flatten().any(Option::is_some);
        let subtitle = if has_ranges {
            let sep = if self.subtitle.is_empty() { "" } else { "; " };
            format!(
                "{}{sep}bars: medians, whiskers: min–max of the repetitions",
                self.subtitle
            )
        } else {
            self.subtitle.clone()
        };
        open_svg(&mut out, &self.title, &subtitle);
        let values: Vec<f64> = self
            .groups
            .iter()
            .flat_map(|g| g.2.iter().flatten().copied())
            .chain(self.ranges.iter().flatten().flatten().map(|r| r.1))
            .chain(self.reference.iter().map(|r| r.0))
            .filter(|v| v.is_finite())
            .collect();
        if values.is_empty() || self.categories.is_empty() {
            text(
                &mut out,
                WIDTH / 2.0,
                HEIGHT / 2.0,
                "middle",
                14.0,
                "",
                "nothing was measured",
            );
            out.push_str("</svg>\n");
            return out;
        }
        let hi = values.iter().copied().fold(0.0, f64::max);
        let (unit, div) = if self.y.seconds {
            seconds_unit(hi)
        } else {
            ("", 1.0)
        };
        let (y0, y1, yt) = ticks(&self.y, 0.0, hi / div);
        let ym = Map {
            scale: Scale::Linear,
            lo: y0,
            hi: y1,
            from: HEIGHT - BOTTOM,
            to: TOP,
        };
        let base = HEIGHT - BOTTOM;
        for &v in &yt {
            let y = ym.t(v);
            let _ = writeln!(
                out,
                r##"<line x1="{LEFT}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#e4e4e4"/>"##,
                WIDTH - RIGHT
            );
            text(
                &mut out,
                LEFT - 6.0,
                y + 4.0,
                "end",
                11.0,
                "",
                &tick_label(v),
            );
        }
        let slot = (WIDTH - LEFT - RIGHT) / self.categories.len() as f64;
        let bar = (slot * 0.7 / self.groups.len().max(1) as f64).min(60.0);
        for (c, name) in self.categories.iter().enumerate() {
            let center = LEFT + slot * (c as f64 + 0.5);
            let start = center - bar * self.groups.len() as f64 / 2.0;
            for (g, (_, color, vals)) in self.groups.iter().enumerate() {
                if let Some(v) = vals.get(c).copied().flatten() {
                    let y = ym.t(v / div);
                    let left = start + bar * g as f64;
                    let mid = left + (bar - 2.0) / 2.0;
                    let _ = writeln!(
                        out,
                        r#"<rect x="{left:.1}" y="{y:.1}" width="{:.1}" height="{:.1}" fill="{color}"/>"#,
                        bar - 2.0,
                        (base - y).max(0.0)
                    );
                    let range = self.ranges.get(g).and_then(|r| r.get(c).copied().flatten());
                    if let Some((lo, hi)) = range {
                        let (y_lo, y_hi) = (ym.t(lo / div), ym.t(hi / div));
                        let _ = writeln!(
                            out,
                            r##"<path d="M{:.1},{y_lo:.1} H{:.1} M{mid:.1},{y_lo:.1} V{y_hi:.1} M{:.1},{y_hi:.1} H{:.1}" fill="none" stroke="#222" stroke-width="1.5"/>"##,
                            mid - 5.0,
                            mid + 5.0,
                            mid - 5.0,
                            mid + 5.0
                        );
                    }
                    // The value at the bar's top, beside the whisker (so it reads as the bar's
                    // height, not the whisker's), so a zero and a short bar read differently.
                    let (lx, anchor) = if range.is_some() {
                        (mid + 4.0, "start")
                    } else {
                        (mid, "middle")
                    };
                    text(
                        &mut out,
                        lx,
                        y - 4.0,
                        anchor,
                        11.0,
                        "",
                        &value_label(v / div),
                    );
                }
            }
            text(&mut out, center, base + 18.0, "middle", 11.0, "", name);
        }
        if let Some((v, label)) = &self.reference {
            let y = ym.t(v / div);
            // Labelled in the legend, so no text sits on the bars.
            let _ = (
                label,
                writeln!(
                    out,
                    r##"<line x1="{LEFT}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#000" stroke-dasharray="6 4"/>"##,
                    WIDTH - RIGHT
                ),
            );
        }
        let _ = writeln!(
            out,
            r##"<path d="M{LEFT},{TOP} V{base:.1} H{:.1}" fill="none" stroke="#333"/>"##,
            WIDTH - RIGHT
        );
        text(
            &mut out,
            (LEFT + WIDTH - RIGHT) / 2.0,
            base + 38.0,
            "middle",
            13.0,
            "",
            &self.x_label,
        );
        let y_label = if unit.is_empty() {
            self.y.label.clone()
        } else {
            format!("{} ({unit})", self.y.label)
        };
        let mid = (TOP + base) / 2.0;
        text(
            &mut out,
            18.0,
            mid,
            "middle",
            13.0,
            &format!(r#"transform="rotate(-90 18 {mid:.1})""#),
            &y_label,
        );
        let mut entries: Vec<(String, String, bool, bool, bool)> = Vec::new();
        if self.groups.len() > 1 {
            for (name, color, _) in &self.groups {
                entries.push((name.clone(), color.clone(), false, true, false));
            }
        }
        if let Some((_, label)) = &self.reference {
            entries.push((label.clone(), "#000".into(), true, true, false));
        }
        legend(&mut out, &entries);
        out.push_str("</svg>\n");
        out
    }
}

/// Stacks charts vertically into one SVG document (for `--plot FILE.svg`).
pub fn stack(charts: &[String]) -> String {
    let n = charts.len().max(1) as f64;
    let mut out = String::new();
    let _ = writeln!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {}" width="{WIDTH}" height="{}">"#,
        HEIGHT * n,
        HEIGHT * n
    );
    for (i, c) in charts.iter().enumerate() {
        let _ = writeln!(out, r#"<g transform="translate(0 {})">"#, HEIGHT * i as f64);
        out.push_str(c);
        out.push_str("</g>\n");
    }
    out.push_str("</svg>\n");
    out
}
