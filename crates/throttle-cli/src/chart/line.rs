//! Line charts: series of points over two axes, with the core counts marked.

use std::fmt::Write as _;

use super::{
    legend, open_svg, seconds_unit, text, tick_label, ticks, Axis, LineChart, Map, Scale,
    BAR_DODGE, BOTTOM, HEIGHT, LEFT, RIGHT, TOP, WIDTH,
};

impl LineChart {
    /// Whether a point can be drawn: finite, and positive on a logarithmic axis (a ratio with
    /// no system time at all has no place on a log scale; the table still shows it).
    fn shows(&self, (x, y): (f64, f64)) -> bool {
        let fits = |v: f64, axis: &Axis| v.is_finite() && (axis.scale == Scale::Linear || v > 0.0);
        fits(x, &self.x) && fits(y, &self.y)
    }

    /// The chart as an SVG element (no XML declaration, so it can be inlined in HTML).
    pub fn to_svg(&self) -> String {
        let mut out = String::new();
        let subtitle = if self.series.iter().any(|s| !s.ranges.is_empty()) {
            let sep = if self.subtitle.is_empty() { "" } else { "; " };
            format!("{}{sep}bars: min–max of the repetitions", self.subtitle)
        } else {
            self.subtitle.clone()
        };
        open_svg(&mut out, &self.title, &subtitle);
        let all: Vec<(f64, f64)> = self
            .series
            .iter()
            .flat_map(|s| {
                let ends = s.ranges.iter().flat_map(|&(x, lo, hi)| [(x, lo), (x, hi)]);
                s.points.iter().chain(&s.loose).copied().chain(ends)
            })
            .filter(|p| self.shows(*p))
            .collect();
        if all.is_empty() {
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
        let fold = |f: fn(f64, f64) -> f64, init: f64, pick: fn(&(f64, f64)) -> f64| {
            all.iter().map(pick).fold(init, f)
        };
        let mut x_lo = fold(f64::min, f64::INFINITY, |p| p.0);
        let mut x_hi = fold(f64::max, f64::NEG_INFINITY, |p| p.0);
        for (x, _) in &self.x.extra_ticks {
            x_lo = x_lo.min(*x);
            x_hi = x_hi.max(*x);
        }
        let y_lo = fold(f64::min, f64::INFINITY, |p| p.1);
        let y_hi = fold(f64::max, f64::NEG_INFINITY, |p| p.1);
        let (y_unit, y_div) = if self.y.seconds {
            seconds_unit(y_hi)
        } else {
            ("", 1.0)
        };
        let (x0, x1, mut xt) = ticks(&self.x, x_lo, x_hi);
        let (y0, y1, yt) = ticks(&self.y, y_lo / y_div, y_hi / y_div);
        // Extra ticks replace automatic ones near them.
        xt.retain(|v| self.x.extra_ticks.iter().all(|(e, _)| (v - e).abs() > 1e-9));
        let xm = Map {
            scale: self.x.scale,
            lo: x0,
            hi: x1,
            from: LEFT,
            to: WIDTH - RIGHT,
        };
        let ym = Map {
            scale: self.y.scale,
            lo: y0,
            hi: y1,
            from: HEIGHT - BOTTOM,
            to: TOP,
        };
        // Grid and ticks.
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
        let tick_y = HEIGHT - BOTTOM;
        for &v in &xt {
            let x = xm.t(v);
            let _ = writeln!(
                out,
                r##"<line x1="{x:.1}" y1="{tick_y:.1}" x2="{x:.1}" y2="{:.1}" stroke="#333"/>"##,
                tick_y + 5.0
            );
            text(
                &mut out,
                x,
                tick_y + 18.0,
                "middle",
                11.0,
                "",
                &tick_label(v),
            );
        }
        for (v, label) in &self.x.extra_ticks {
            let x = xm.t(*v);
            let _ = writeln!(
                out,
                r##"<line x1="{x:.1}" y1="{tick_y:.1}" x2="{x:.1}" y2="{:.1}" stroke="#333"/>"##,
                tick_y + 5.0
            );
            text(
                &mut out,
                x,
                tick_y + 18.0,
                "middle",
                11.0,
                r#"font-style="italic""#,
                label,
            );
        }
        // Axes.
        let _ = writeln!(
            out,
            r##"<path d="M{LEFT},{TOP} V{tick_y:.1} H{:.1}" fill="none" stroke="#333"/>"##,
            WIDTH - RIGHT
        );
        text(
            &mut out,
            (LEFT + WIDTH - RIGHT) / 2.0,
            tick_y + 38.0,
            "middle",
            13.0,
            "",
            &self.x.label,
        );
        let y_label = if y_unit.is_empty() {
            self.y.label.clone()
        } else {
            format!("{} ({y_unit})", self.y.label)
        };
        let mid = (TOP + tick_y) / 2.0;
        text(
            &mut out,
            18.0,
            mid,
            "middle",
            13.0,
            &format!(r#"transform="rotate(-90 18 {mid:.1})""#),
            &y_label,
        );
        // Core marks inside the range, labels staggered so two marks never overprint.
        for (i, m) in self
            .marks
            .iter()
            .filter(|m| m.x >= x0 && m.x <= x1)
            .enumerate()
        {
            let x = xm.t(m.x);
            let _ = writeln!(
                out,
                r##"<line x1="{x:.1}" y1="{TOP}" x2="{x:.1}" y2="{tick_y:.1}" stroke="#888" stroke-dasharray="2 3"/>"##
            );
            // Labels in the right half end at their line, so they stay inside the plot.
            let (lx, anchor) = if x > (LEFT + WIDTH - RIGHT) / 2.0 {
                (x - 4.0, "end")
            } else {
                (x + 4.0, "start")
            };
            text(
                &mut out,
                lx,
                TOP + 12.0 + 14.0 * i as f64,
                anchor,
                11.0,
                r##"fill="#555""##,
                &m.label,
            );
        }
        // Spread bars of several series at the same x would hide each other: each series'
        // bars sit a few pixels beside the point, side by side in the order of the legend.
        let ranged: Vec<usize> = (0..self.series.len())
            .filter(|&i| !self.series[i].ranges.is_empty())
            .collect();
        let dodge = |i: usize| -> f64 {
            ranged.iter().position(|&r| r == i).map_or(0.0, |k| {
                (k as f64 - (ranged.len() as f64 - 1.0) / 2.0) * BAR_DODGE
            })
        };
        // Series.
        for (index, s) in self.series.iter().enumerate() {
            let pts: Vec<(f64, f64)> = s
                .points
                .iter()
                .filter(|p| self.shows(**p))
                .map(|&(x, y)| (xm.t(x), ym.t(y / y_div)))
                .collect();
            if s.line && pts.len() > 1 {
                let d: Vec<String> = pts.iter().map(|(x, y)| format!("{x:.1},{y:.1}")).collect();
                let dash = if s.dashed {
                    r#" stroke-dasharray="6 4""#
                } else {
                    ""
                };
                let _ = writeln!(
                    out,
                    r#"<polyline points="{}" fill="none" stroke="{}" stroke-width="2"{dash}/>"#,
                    d.join(" "),
                    s.color
                );
            }
            let loose: Vec<(f64, f64)> = s
                .loose
                .iter()
                .filter(|p| self.shows(**p))
                .map(|&(x, y)| (xm.t(x), ym.t(y / y_div)))
                .collect();
            for &(x, lo, hi) in &s.ranges {
                if !(self.shows((x, lo)) && self.shows((x, hi))) {
                    continue;
                }
                let (px, y_lo, y_hi) = (xm.t(x) + dodge(index), ym.t(lo / y_div), ym.t(hi / y_div));
                let _ = writeln!(
                    out,
                    r#"<path d="M{:.1},{y_lo:.1} H{:.1} M{px:.1},{y_lo:.1} V{y_hi:.1} M{:.1},{y_hi:.1} H{:.1}" fill="none" stroke="{}" stroke-width="1.5" opacity="0.7"/>"#,
                    px - 4.0,
                    px + 4.0,
                    px - 4.0,
                    px + 4.0,
                    s.color
                );
            }
            let r = if s.line { 3.5 } else { 2.5 };
            if s.markers || !s.line {
                for (x, y) in pts.iter().chain(&loose) {
                    let _ = writeln!(
                        out,
                        r#"<circle cx="{x:.1}" cy="{y:.1}" r="{r}" fill="{}"/>"#,
                        s.color
                    );
                }
            }
        }
        let entries: Vec<(String, String, bool, bool, bool)> = self
            .series
            .iter()
            .map(|s| {
                (
                    s.name.clone(),
                    s.color.clone(),
                    s.dashed,
                    s.line,
                    s.markers || !s.line,
                )
            })
            .collect();
        legend(&mut out, &entries);
        out.push_str("</svg>\n");
        out
    }
}
