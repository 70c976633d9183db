//! The table for people: every section of a [`Report`] as a comfy-table, then the findings.

use crate::grid::{self, Column};

use crate::report::{Report, Row, Section};
use crate::units;

/// Renders the whole report: a title line per section, its table, then the findings as plain
/// sentences. Ends with a newline.
pub fn render(report: &Report) -> String {
    let mut out = String::new();
    if report.partial {
        out.push_str("PARTIAL RESULTS: interrupted before the experiment finished.\n\n");
    }
    for section in &report.sections {
        out.push_str(&section.title);
        out.push('\n');
        out.push_str(&render_section(section));
        out.push_str("\n\n");
    }
    for finding in &report.findings {
        out.push_str(finding);
        out.push('\n');
    }
    out
}

/// One section as a table, fitted to the terminal's width.
pub fn render_section(section: &Section) -> String {
    render_section_fitted(section, grid::terminal_width())
}

/// One section as a table at most `max_width` characters wide (all columns when `None`).
pub fn render_section_fitted(section: &Section, max_width: Option<usize>) -> String {
    let (columns, cells) = grid_of(section);
    grid::render(&columns, &cells, max_width)
}

/// The columns and the cells (as text) of a section: what the terminal table and the HTML
/// table both show.
pub fn grid_of(section: &Section) -> (Vec<Column>, Vec<Vec<String>>) {
    let rows = &section.rows;
    let any_speedup = rows.iter().any(|r| r.speedup.is_some());
    let any_efficiency = rows.iter().any(|r| r.efficiency.is_some());
    let any_wait = rows.iter().any(|r| r.run_queue_wait.is_some());

    let mut columns = vec![
        Column::new(section.series_name.clone(), 0, false),
        Column::new(section.level_name.clone(), 0, true),
        Column::new("wall median (min–max)", 0, true),
        Column::new("user", 4, true),
        Column::new("system", 5, true),
        Column::new("CPU/wall", 2, true),
        Column::new("vol. sw", 6, true),
        Column::new("invol. sw", 6, true),
        Column::new("run-queue wait", 3, true),
    ];
    if any_speedup {
        columns.push(Column::new("speedup", 1, true));
    }
    if any_efficiency {
        columns.push(Column::new("efficiency", 2, true));
    }
    columns.extend(
        section
            .metric_columns
            .iter()
            .map(|(_, h)| Column::new(h.clone(), 1, true)),
    );
    columns.push(Column::new("", 0, false));
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|row| cells(section, row, any_speedup, any_efficiency, any_wait))
        .collect();
    (columns, cells)
}

fn cells(
    section: &Section,
    row: &Row,
    any_speedup: bool,
    any_efficiency: bool,
    any_wait: bool,
) -> Vec<String> {
    let mut cells = vec![
        row.series.clone(),
        row.label.clone(),
        units::secs_range(row.wall.median, row.wall.min, row.wall.max),
        units::secs(row.user),
        units::secs(row.system),
        units::ratio(row.cpu_per_wall),
        units::count(row.voluntary_switches),
        units::count(row.involuntary_switches),
        match row.run_queue_wait {
            Some(w) => units::secs(w),
            None if any_wait => "n/a".into(),
            None => "unavailable".into(),
        },
    ];
    if any_speedup {
        cells.push(row.speedup.map_or("–".into(), |s| format!("{s:.2}×")));
    }
    if any_efficiency {
        cells.push(row.efficiency.map_or("–".into(), units::percent));
    }
    for (key, _) in &section.metric_columns {
        cells.push(row.metrics.get(key).map_or("–".into(), |v| metric(key, *v)));
    }
    cells.push(if row.best {
        "◀ best".into()
    } else {
        String::new()
    });
    cells
}

/// Formats a metric by its key: `*_s` as a duration, ratios and concurrency levels with two
/// decimals, anything else as a count or rate.
fn metric(key: &str, value: f64) -> String {
    if key.ends_with("_s") {
        units::secs(value)
    } else if key.contains("ratio") || key.contains("concurrency") || key.contains("_per_system") {
        units::ratio(value)
    } else {
        units::count(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{Machine, Sample};
    use std::time::Duration;

    #[test]
    fn renders_rows_and_marks() {
        let mut report = Report::new("test", Machine::detect());
        let mut sec =
            Section::new("s", "Title", "mode", "level", true).metric_column("m", "jobs/s");
        for ms in [40u64, 20] {
            let s = Sample {
                wall: Duration::from_millis(ms),
                ..Sample::default()
            }
            .metric("m", 12_345.0);
            sec.rows.push(
                Row::from_samples("pool", ms, &ms.to_string(), ms as f64, &[s]).expect("row"),
            );
        }
        sec.fill_speedup(40, |_| 1.0);
        sec.mark_best();
        report.sections.push(sec);
        report.findings.push("It peaks.".into());
        report.partial = true;
        let text = render(&report);
        assert!(text.starts_with("PARTIAL"));
        assert!(text.contains("Title"));
        assert!(text.contains("◀ best"));
        assert!(text.contains("2.00×"));
        assert!(text.contains("12.3k"));
        assert!(text.contains("jobs/s"));
        assert!(text.trim_end().ends_with("It peaks."));
    }
}
