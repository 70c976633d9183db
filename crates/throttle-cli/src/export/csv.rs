//! `--csv` and `scan --export-csv`: one CSV writer (quoting, numbers, one line per row), two
//! layouts of the one [`Report`].
//!
//! - [`to_string`]: one line per measured row of every section, with a fixed set of leading
//!   columns followed by the experiment's own metrics (the union over all rows, sorted by name).
//! - [`hyperfine`]: scan's layout, hyperfine's leading columns (`command`, `mean`, `stddev`,
//!   `median`, `user`, `system`, `min`, `max`, `parameter_<name>`), then scan's metrics.
//!
//! Times are in seconds. Empty fields mean "not measured" (never a made-up zero).

use std::collections::BTreeSet;

use throttle_probe::Summary;

use crate::results::keys::*;
use crate::results::{Report, Row};

/// The fixed leading columns, in order.
pub const COLUMNS: &[&str] = &[
    "experiment",
    "section",
    "series",
    "level",
    "label",
    "runs",
    "wall_median_s",
    "wall_min_s",
    "wall_max_s",
    "wall_mean_s",
    "wall_stddev_s",
    "user_s",
    "system_s",
    "cpu_per_wall",
    "voluntary_switches",
    "involuntary_switches",
    "run_queue_wait_s",
    "speedup",
    "efficiency",
    "best",
    "check_ok",
    "partial",
];

/// The report as CSV text (header line first, `\n` line ends).
pub fn to_string(report: &Report) -> String {
    let metrics: BTreeSet<&str> = report
        .sections
        .iter()
        .flat_map(|s| s.rows.iter())
        .flat_map(|r| r.metrics.keys().map(String::as_str))
        .collect();
    let mut out = String::new();
    let header: Vec<String> = COLUMNS
        .iter()
        .copied()
        .chain(metrics.iter().copied())
        .map(field)
        .collect();
    out.push_str(&header.join(","));
    out.push('\n');
    for section in &report.sections {
        for row in &section.rows {
            let mut fields = fixed_fields(report, &section.id, row);
            for key in &metrics {
                fields.push(row.metrics.get(*key).map_or(String::new(), |v| num(*v)));
            }
            out.push_str(&fields.join(","));
            out.push('\n');
        }
    }
    out
}

fn fixed_fields(report: &Report, section: &str, row: &Row) -> Vec<String> {
    let opt = |v: Option<f64>| v.map_or(String::new(), num);
    vec![
        field(&report.experiment),
        field(section),
        field(&row.series),
        row.level.to_string(),
        field(&row.label),
        row.wall.count.to_string(),
        num(row.wall.median),
        num(row.wall.min),
        num(row.wall.max),
        num(row.wall.mean),
        num(row.wall.stddev),
        num(row.user),
        num(row.system),
        num(row.cpu_per_wall),
        num(row.voluntary_switches),
        num(row.involuntary_switches),
        opt(row.run_queue_wait),
        opt(row.speedup),
        opt(row.efficiency),
        row.best.to_string(),
        row.check
            .as_ref()
            .map_or(String::new(), |c| c.ok.to_string()),
        report.partial.to_string(),
    ]
}

/// scan's hyperfine-compatible CSV of `report` (see the module docs).
pub fn hyperfine(report: &Report) -> String {
    let parameter = report
        .parameters
        .get("parameter")
        .and_then(serde_json::Value::as_str)
        .unwrap_or("n");
    let mut out = format!(
        "command,mean,stddev,median,user,system,min,max,parameter_{parameter},copies,runs,cpu_per_wall,voluntary_switches,involuntary_switches,run_queue_wait,max_rss_kib,throughput,speedup,efficiency,karp_flatt,outliers,failures\n"
    );
    let opt = |v: Option<f64>| v.map_or(String::new(), num);
    let metric = |row: &Row, key: &str| opt(row.metrics.get(key).copied());
    let mean = |row: &Row, f: &dyn Fn(&crate::results::Sample) -> f64| {
        opt(Summary::of(&row.samples.iter().map(f).collect::<Vec<_>>()).map(|s| s.mean))
    };
    for row in report.sections.iter().flat_map(|s| &s.rows) {
        let cells = [
            field(row.command.as_deref().unwrap_or("")),
            num(row.wall.mean),
            opt((row.wall.count > 1).then_some(row.wall.stddev)),
            num(row.wall.median),
            mean(row, &|s| s.user.as_secs_f64()),
            mean(row, &|s| s.system.as_secs_f64()),
            num(row.wall.min),
            num(row.wall.max),
            field(&row.label),
            metric(row, COPIES),
            row.wall.count.to_string(),
            num(row.cpu_per_wall),
            num(row.voluntary_switches),
            num(row.involuntary_switches),
            opt(row.run_queue_wait),
            metric(row, MAX_RSS_KIB),
            metric(row, THROUGHPUT),
            opt(row.speedup),
            opt(row.efficiency),
            metric(row, KARP_FLATT),
            metric(row, OUTLIERS),
            metric(row, FAILURES),
        ];
        out.push_str(&cells.join(","));
        out.push('\n');
    }
    out
}

/// A number in plain decimal notation (no exponent), empty when not finite.
pub fn num(v: f64) -> String {
    if v.is_finite() {
        format!("{v}")
    } else {
        String::new()
    }
}

/// Quotes a text field when it contains a comma, a quote or a line break (RFC 4180).
pub fn field(text: &str) -> String {
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_only_when_needed() {
        assert_eq!(field("pool"), "pool");
        assert_eq!(field("a,b"), "\"a,b\"");
        assert_eq!(field("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(num(f64::NAN), "");
        assert_eq!(num(0.5), "0.5");
    }
}
