//! The timeline picture of seed 002's thread profiler, from a [`Trace`]: the concurrency level
//! over time on top, one lane per thread under it (what the thread did, one colour per state),
//! and the transitions: a line from a waker to the thread it woke. Plain SVG like every other
//! chart of this module.
//!
//! A lane draws each span at its nesting depth, outer first, so a run inside a join wait (a
//! waiting thread helping) shows as a run over the wait. Spans closer together than a pixel merge
//! into one bar; the concurrency curve is the time-weighted mean level over each pixel column,
//! so short spikes are averaged, never invented.

use std::fmt::Write as _;

use throttle::trace::{Role, Span, Trace};

use super::{escape, nice_step, text};

/// Width of the timeline picture.
pub const WIDTH: f64 = 1100.0;
const LEFT: f64 = 150.0;
const RIGHT: f64 = 24.0;
const TOP: f64 = 62.0;
/// Height of the concurrency panel.
const LEVEL_H: f64 = 120.0;
/// Gap between the panel and the first lane.
const GAP: f64 = 34.0;
const LANE_H: f64 = 20.0;
const LANE_GAP: f64 = 6.0;
/// Room for the time axis, its label and the legend.
const BOTTOM: f64 = 112.0;

/// Colours per span (Okabe & Ito's palette, as the other charts) and the legend's words.
fn style(span: Span) -> (&'static str, &'static str) {
    match span {
        Span::Call => ("#009E73", "own call (caller's share)"),
        Span::Run => ("#0072B2", "run (task from a queue)"),
        Span::JoinWait => ("#E69F00", "join wait (spin or help)"),
        Span::LimitWait => ("#D55E00", "limit wait"),
        Span::Sleep => ("#BBBBBB", "asleep (idle)"),
        Span::JoinSleep => ("#CC79A7", "asleep in join"),
    }
}

const WAKE_COLOR: &str = "#000000";

/// The lanes a picture of `trace` draws: every worker, and a caller that did something.
fn lane_tracks(trace: &Trace) -> Vec<usize> {
    (0..trace.tracks().len())
        .filter(|&i| trace.tracks()[i].role != Role::Pool)
        .filter(|&i| {
            // A caller lane only if the caller did something in the window.
            trace.tracks()[i].role == Role::Worker || !trace.tracks()[i].events.is_empty()
        })
        .collect()
}

/// When the picture's time axis starts: the first event of any lane.
fn first_event_ns(trace: &Trace, lanes: &[usize]) -> u64 {
    lanes
        .iter()
        .filter_map(|&i| trace.tracks()[i].events.first().map(|e| e.at_ns))
        .min()
        .unwrap_or(0)
        .min(trace.duration_ns())
}

/// The time a picture of `trace` spans, from its first event to the end of the recording:
/// give the largest of several to [`to_svg_on`] so their pictures share one time scale.
pub fn span_ns(trace: &Trace) -> u64 {
    let lanes = lane_tracks(trace);
    trace
        .duration_ns()
        .saturating_sub(first_event_ns(trace, &lanes))
}

/// The timeline of `trace` as a standalone `<svg>` element, on a time axis of `axis_ns` when
/// that is longer than the trace's own span, so pictures of several recordings placed together
/// share one scale (`None`: its own span).
pub fn to_svg_on(trace: &Trace, title: &str, subtitle: &str, axis_ns: Option<u64>) -> String {
    let mut lanes = lane_tracks(trace);
    // Callers first, then workers, whatever order the scheduler made its tracks in, so two
    // timelines read alike.
    lanes.sort_by_key(|&i| (trace.tracks()[i].role != Role::Caller, i));
    let names = lane_names(trace, &lanes);
    let lanes_top = TOP + LEVEL_H + GAP;
    let lanes_h = lanes.len() as f64 * (LANE_H + LANE_GAP);
    let height = lanes_top + lanes_h + BOTTOM;
    let mut out = String::new();
    let _ = writeln!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {height}" width="{WIDTH}" height="{height}" font-family="sans-serif" role="img">"#
    );
    let _ = writeln!(out, "<title>{}</title>", escape(title));
    let _ = writeln!(
        out,
        r##"<rect x="0" y="0" width="{WIDTH}" height="{height}" fill="#ffffff"/>"##
    );
    text(
        &mut out,
        WIDTH / 2.0,
        24.0,
        "middle",
        16.0,
        r#"font-weight="bold""#,
        title,
    );
    text(
        &mut out,
        WIDTH / 2.0,
        42.0,
        "middle",
        12.0,
        r##"fill="#555""##,
        subtitle,
    );

    // The time axis starts at the first event of any lane: the stretch between starting the
    // recording and the first frame's work (ring set-up, a thread not yet scheduled) is not
    // part of the picture.
    let t0 = first_event_ns(trace, &lanes);
    let end_ns = trace
        .duration_ns()
        .saturating_sub(t0)
        .max(axis_ns.unwrap_or(0))
        .max(1);
    let plot_w = WIDTH - LEFT - RIGHT;
    let x_of = |ns: u64| LEFT + plot_w * (ns.saturating_sub(t0) as f64 / end_ns as f64);

    // --- the concurrency level ---
    let workers = trace
        .tracks()
        .iter()
        .filter(|t| t.role == Role::Worker)
        .count();
    let steps: Vec<(u64, usize)> = trace
        .concurrency()
        .into_iter()
        .map(|(t, level)| (t.saturating_sub(t0), level))
        .collect();
    let limit = trace.limit();
    let top_level = steps
        .iter()
        .map(|s| s.1)
        .chain(limit.iter().map(|l| l.1 as usize))
        .max()
        .unwrap_or(1)
        .max(workers)
        .max(1) as f64;
    let y_level = |v: f64| TOP + LEVEL_H - LEVEL_H * v / top_level;
    let columns = plot_w.round() as usize;
    let means = column_means(&steps, end_ns, columns);
    let path = band_path(&means, LEFT, LEFT + plot_w, &y_level);
    let _ = writeln!(
        out,
        r##"<path d="{path}" fill="#56B4E9" fill-opacity="0.55" stroke="#0072B2" stroke-width="0.8"/>"##
    );
    if !limit.is_empty() {
        let mut d = String::new();
        for (i, &(t, k)) in limit.iter().enumerate() {
            let x = x_of(t);
            let y = y_level(f64::from(k));
            if i == 0 {
                let _ = write!(d, "M{x:.1},{y:.1}");
            } else {
                let _ = write!(d, " H{x:.1} V{y:.1}");
            }
        }
        let _ = write!(d, " H{:.1}", LEFT + plot_w);
        let _ = writeln!(
            out,
            r##"<path d="{d}" fill="none" stroke="#D55E00" stroke-width="1.5" stroke-dasharray="6 4"/>"##
        );
    }
    // Level axis: integer ticks.
    let step = nice_step(top_level, 4.0).max(1.0).round();
    let mut v = 0.0;
    while v <= top_level + 1e-9 {
        let y = y_level(v);
        let _ = writeln!(
            out,
            r##"<line x1="{LEFT}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#e5e5e5"/>"##,
            LEFT + plot_w
        );
        text(
            &mut out,
            LEFT - 6.0,
            y + 4.0,
            "end",
            11.0,
            "",
            &format!("{v:.0}"),
        );
        v += step;
    }
    let mid = TOP + LEVEL_H / 2.0;
    text(
        &mut out,
        LEFT - 34.0,
        mid,
        "middle",
        12.0,
        &format!(r#"transform="rotate(-90 {:.1} {mid:.1})""#, LEFT - 34.0),
        "busy threads",
    );

    // --- the lanes ---
    for (row, &track) in lanes.iter().enumerate() {
        let y = lanes_top + row as f64 * (LANE_H + LANE_GAP);
        let t = &trace.tracks()[track];
        let _ = writeln!(
            out,
            r##"<rect x="{LEFT}" y="{y:.1}" width="{plot_w:.1}" height="{LANE_H}" fill="#f7f7f7" stroke="#dddddd" stroke-width="0.5"/>"##
        );
        let mut name = names[row].clone();
        if t.dropped > 0 {
            name.push_str(" (ring full)");
        }
        text(
            &mut out,
            LEFT - 6.0,
            y + LANE_H * 0.7,
            "end",
            11.0,
            "",
            &name,
        );
        let spans = trace.spans(track);
        let max_depth = spans.iter().map(|s| s.depth).max().unwrap_or(0);
        for depth in 0..=max_depth {
            // Inner spans are drawn slightly thinner, so the outer state stays visible.
            let inset = (depth.min(3) as f64) * 2.0;
            let mut pending: Option<(Span, f64, f64)> = None;
            let flush = |out: &mut String, p: Option<(Span, f64, f64)>| {
                if let Some((span, x0, x1)) = p {
                    let w = (x1 - x0).max(0.6);
                    let _ = writeln!(
                        out,
                        r#"<rect x="{x0:.2}" y="{:.1}" width="{w:.2}" height="{:.1}" fill="{}"/>"#,
                        y + inset,
                        LANE_H - 2.0 * inset,
                        style(span).0
                    );
                }
            };
            for s in spans.iter().filter(|s| s.depth == depth) {
                let (x0, x1) = (x_of(s.begin_ns), x_of(s.end_ns));
                pending = match pending {
                    Some((span, a, b)) if span == s.span && x0 <= b + 0.5 => {
                        Some((span, a, b.max(x1)))
                    }
                    other => {
                        flush(&mut out, other);
                        Some((s.span, x0, x1))
                    }
                };
            }
            flush(&mut out, pending);
        }
    }
    // Transitions: waker → woken, from the waker's lane at the wake to the woken lane when it
    // resumed. Wake-ups by threads without a lane (the pool track) start at the panel's foot.
    let lane_y = |track: usize| -> Option<f64> {
        lanes
            .iter()
            .position(|&l| l == track)
            .map(|r| lanes_top + r as f64 * (LANE_H + LANE_GAP) + LANE_H / 2.0)
    };
    let mut last: Option<(usize, usize, i64)> = None;
    for (waker, woken, at, resumed) in trace.wakeups() {
        let Some(y1) = lane_y(woken) else { continue };
        let y0 = lane_y(waker).unwrap_or(TOP + LEVEL_H + 4.0);
        let (x0, x1) = (x_of(at), x_of(resumed));
        // One mark per pixel and pair of lanes is enough.
        let key = (waker, woken, (x1 * 2.0) as i64);
        if last == Some(key) {
            continue;
        }
        last = Some(key);
        let _ = writeln!(
            out,
            r#"<line x1="{x0:.2}" y1="{y0:.1}" x2="{x1:.2}" y2="{y1:.1}" stroke="{WAKE_COLOR}" stroke-width="0.7" stroke-opacity="0.7"/>"#
        );
        let dir = if y1 >= y0 { -1.0 } else { 1.0 };
        let _ = writeln!(
            out,
            r#"<path d="M{x1:.2},{y1:.1} l-2.5,{:.1} h5 Z" fill="{WAKE_COLOR}"/>"#,
            dir * 5.0
        );
    }

    // --- time axis ---
    let axis_y = lanes_top + lanes_h + 2.0;
    let secs = end_ns as f64 / 1e9;
    let (unit, div) = if secs >= 1.0 {
        ("s", 1.0)
    } else if secs >= 1e-3 {
        ("ms", 1e-3)
    } else {
        ("µs", 1e-6)
    };
    let span_u = secs / div;
    let tick = nice_step(span_u, 8.0);
    let mut v = 0.0;
    while v <= span_u + tick * 1e-9 {
        let x = LEFT + plot_w * (v / span_u);
        let _ = writeln!(
            out,
            r##"<line x1="{x:.1}" y1="{TOP}" x2="{x:.1}" y2="{:.1}" stroke="#000000" stroke-opacity="0.08"/>"##,
            axis_y
        );
        let _ = writeln!(
            out,
            r##"<line x1="{x:.1}" y1="{axis_y:.1}" x2="{x:.1}" y2="{:.1}" stroke="#333"/>"##,
            axis_y + 5.0
        );
        let label = if tick >= 1.0 {
            format!("{v:.0}")
        } else {
            let s = format!("{v:.3}");
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        };
        text(&mut out, x, axis_y + 18.0, "middle", 11.0, "", &label);
        v += tick;
    }
    let _ = writeln!(
        out,
        r##"<line x1="{LEFT}" y1="{axis_y:.1}" x2="{:.1}" y2="{axis_y:.1}" stroke="#333"/>"##,
        LEFT + plot_w
    );
    text(
        &mut out,
        LEFT + plot_w / 2.0,
        axis_y + 38.0,
        "middle",
        12.0,
        "",
        &format!("time since the first event ({unit})"),
    );

    // --- legend ---
    let mut entries: Vec<(String, String, &str)> = vec![
        (
            "busy threads (mean per pixel column)".into(),
            "#56B4E9".into(),
            "area",
        ),
        ("concurrency limit".into(), "#D55E00".into(), "dash"),
    ];
    if limit.is_empty() {
        entries.pop();
    }
    for span in [
        Span::Call,
        Span::Run,
        Span::JoinWait,
        Span::LimitWait,
        Span::Sleep,
        Span::JoinSleep,
    ] {
        let used = lanes
            .iter()
            .any(|&l| trace.spans(l).iter().any(|s| s.span == span));
        if used {
            let (c, label) = style(span);
            entries.push((label.into(), c.into(), "box"));
        }
    }
    entries.push(("wake-up: waker → woken".into(), WAKE_COLOR.into(), "line"));
    entries.push((
        "blank: between spans (searching, bookkeeping, waiting for a CPU) or no event yet".into(),
        "#f7f7f7".into(),
        "blank",
    ));
    let mut x = LEFT;
    let mut y = axis_y + 62.0;
    for (label, color, kind) in &entries {
        let w = 40.0 + 6.6 * label.chars().count() as f64;
        if x + w > WIDTH - RIGHT {
            x = LEFT;
            y += 18.0;
        }
        match *kind {
            "dash" => {
                let _ = writeln!(
                    out,
                    r#"<line x1="{x:.1}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="{color}" stroke-width="1.5" stroke-dasharray="6 4"/>"#,
                    x + 24.0
                );
            }
            "line" => {
                let _ = writeln!(
                    out,
                    r#"<line x1="{x:.1}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="{color}" stroke-width="0.9"/>"#,
                    y - 5.0,
                    x + 24.0,
                    y + 5.0
                );
            }
            "area" => {
                let _ = writeln!(
                    out,
                    r##"<rect x="{x:.1}" y="{:.1}" width="24" height="10" fill="{color}" fill-opacity="0.55" stroke="#0072B2" stroke-width="0.8"/>"##,
                    y - 5.0
                );
            }
            "blank" => {
                let _ = writeln!(
                    out,
                    r##"<rect x="{x:.1}" y="{:.1}" width="24" height="10" fill="{color}" stroke="#dddddd"/>"##,
                    y - 5.0
                );
            }
            _ => {
                let _ = writeln!(
                    out,
                    r#"<rect x="{x:.1}" y="{:.1}" width="24" height="10" fill="{color}"/>"#,
                    y - 5.0
                );
            }
        }
        text(&mut out, x + 30.0, y + 4.0, "start", 11.0, "", label);
        x += w;
    }
    out.push_str("</svg>\n");
    out
}

/// One name per lane, the same for every scheduler: `caller` (`caller 1`, … when several
/// threads called in) and `worker 0`, `worker 1`, … in track order. The schedulers' own thread
/// names differ (`throttle-0`, `locked-queue-1`) and say nothing the role does not.
fn lane_names(trace: &Trace, lanes: &[usize]) -> Vec<String> {
    let callers = lanes
        .iter()
        .filter(|&&i| trace.tracks()[i].role == Role::Caller)
        .count();
    let (mut caller, mut worker) = (0, 0);
    lanes
        .iter()
        .map(|&i| {
            if trace.tracks()[i].role == Role::Caller {
                caller += 1;
                if callers == 1 {
                    "caller".to_string()
                } else {
                    format!("caller {}", caller - 1)
                }
            } else {
                worker += 1;
                format!("worker {}", worker - 1)
            }
        })
        .collect()
}

/// The outline of the concurrency band: a step from column to column, one horizontal and one
/// vertical segment only where the level changes (a stretch of equal columns is one segment;
/// the old outline had two points for every pixel column).
fn band_path(means: &[f64], left: f64, right: f64, y_level: &dyn Fn(f64) -> f64) -> String {
    let base = y_level(0.0);
    let mut path = format!("M{left:.1},{base:.1}");
    let mut current: Option<String> = None;
    for (c, m) in means.iter().enumerate() {
        // Compared as printed: levels that draw on the same pixel row are one segment.
        let y = format!("{:.1}", y_level(*m));
        if current.as_deref() != Some(y.as_str()) {
            let _ = write!(path, " H{:.1} V{y}", left + c as f64);
            current = Some(y);
        }
    }
    let _ = write!(path, " H{right:.1} V{base:.1} Z");
    path
}

/// The time-weighted mean of a step function `(time_ns, level)` over `columns` equal columns of
/// `[0, end_ns)`.
fn column_means(steps: &[(u64, usize)], end_ns: u64, columns: usize) -> Vec<f64> {
    let columns = columns.max(1);
    let width = end_ns as f64 / columns as f64;
    let mut sums = vec![0.0; columns];
    for (i, &(t, level)) in steps.iter().enumerate() {
        let next = steps.get(i + 1).map_or(end_ns, |s| s.0).min(end_ns);
        let (a, b) = (t as f64, next as f64);
        if b <= a {
            continue;
        }
        let first = ((a / width) as usize).min(columns - 1);
        let last = ((b / width) as usize).min(columns - 1);
        for (c, sum) in sums.iter_mut().enumerate().take(last + 1).skip(first) {
            let lo = a.max(c as f64 * width);
            let hi = b.min((c + 1) as f64 * width);
            if hi > lo {
                *sum += level as f64 * (hi - lo);
            }
        }
    }
    sums.into_iter().map(|s| s / width).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;
    use throttle::trace::{Event, EventKind, Track};

    fn ev(at_ns: u64, kind: EventKind) -> Event {
        Event { at_ns, kind }
    }

    #[test]
    fn the_band_has_a_segment_per_change_not_per_pixel() {
        let y = |v: f64| 100.0 - 10.0 * v;
        // 1000 columns at level 2, then 1000 at level 1: two steps, not 4000 points.
        let means: Vec<f64> = (0..2000)
            .map(|c| if c < 1000 { 2.0 } else { 1.0 })
            .collect();
        let d = band_path(&means, 60.0, 2060.0, &y);
        assert_eq!(d, "M60.0,100.0 H60.0 V80.0 H1060.0 V90.0 H2060.0 V100.0 Z");
    }

    #[test]
    fn column_means_weight_by_time() {
        let m = column_means(&[(0, 0), (50, 2)], 100, 2);
        assert_eq!(m, [0.0, 2.0]);
        let m = column_means(&[(0, 1), (25, 3), (75, 1)], 100, 2);
        assert_eq!(m, [2.0, 2.0]);
    }

    #[test]
    fn lanes_legend_and_wake_marks_are_drawn() {
        let b = |span| EventKind::Begin { span, site: None };
        let e = |span, flow| EventKind::End { span, flow };
        let w0 = Track {
            name: "w0".into(),
            role: Role::Worker,
            dropped: 0,
            events: vec![
                ev(0, b(Span::Run)),
                ev(0, EventKind::Busy),
                ev(40, EventKind::Wake { flow: 1 }),
                ev(60, EventKind::Idle),
                ev(60, e(Span::Run, None)),
            ],
        };
        let w1 = Track {
            name: "w1 <&>".into(),
            role: Role::Worker,
            dropped: 0,
            events: vec![
                ev(0, b(Span::Sleep)),
                ev(45, e(Span::Sleep, Some(1))),
                ev(46, EventKind::Busy),
                ev(90, EventKind::Idle),
            ],
        };
        let trace = Trace::new("test", Duration::from_nanos(100), vec![w0, w1]);
        let svg = to_svg_on(&trace, "title", "sub", None);
        assert_eq!(span_ns(&trace), 100);
        // On a shared axis twice as long, the ticks run on to 200 ns = 0.2 µs.
        let wide = to_svg_on(&trace, "title", "sub", Some(200));
        assert!(wide.contains(">0.2<") && !svg.contains(">0.2<"), "{wide}");
        assert!(svg.starts_with("<svg") && svg.ends_with("</svg>\n"));
        // Lanes are named by role, the same for every scheduler.
        assert!(
            svg.contains(">worker 0<") && svg.contains(">worker 1<"),
            "{svg}"
        );
        assert!(!svg.contains("w1 &lt;"), "{svg}");
        assert!(svg.contains("run (task from a queue)") && svg.contains("asleep (idle)"));
        assert!(
            !svg.contains("limit wait"),
            "legend lists only what is drawn"
        );
        assert!(svg.contains("wake-up: waker → woken"));
        assert!(svg.contains(r##"stroke="#000000" stroke-width="0.7""##));
        assert!(svg.contains("time since the first event (µs)"));
        assert!(svg.contains("busy threads"));
    }
}
