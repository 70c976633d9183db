//! The table for people, the one table definition of the CLI: which columns a section has and
//! how each cell is printed ([`grid_of`]). The terminal table ([`render`]), the Markdown export
//! and the HTML pages all print these cells, for the experiments and for `scan` alike, so a
//! fix to a column or a unit lands in every view.

use std::fmt::Write as _;

use crate::view::grid::{self, Column};

use crate::results::{Format, Report, Row, Section};
use crate::view::units;

/// Renders the whole report: the partial marker, the subtitle, a title line per section, its
/// table and legend, the model, then the findings as plain sentences and the warnings. Ends
/// with a newline.
pub fn render(report: &Report) -> String {
    let mut out = String::new();
    if report.partial {
        out.push_str("PARTIAL RESULTS: interrupted before the experiment finished.\n\n");
    }
    if let Some(subtitle) = &report.subtitle {
        out.push_str(subtitle);
        out.push('\n');
    }
    for section in &report.sections {
        if !section.title.is_empty() {
            out.push_str(&section.title);
            out.push('\n');
        }
        out.push_str(&render_section(section));
        out.push('\n');
        if let Some(legend) = &section.legend_text() {
            out.push_str(legend);
            out.push('\n');
        }
        out.push('\n');
    }
    if let Some(model) = &report.model {
        out.push_str("Model (fitted to every run's throughput):\n");
        for line in model_lines(report, model) {
            let _ = writeln!(out, "  {line}");
        }
        for s in &model.summary {
            let _ = writeln!(out, "  {s}");
        }
        out.push('\n');
    }
    for finding in &report.findings {
        out.push_str(finding);
        out.push('\n');
    }
    if !report.warnings.is_empty() {
        if !out.ends_with("\n\n") {
            out.push('\n');
        }
        out.push_str("Warnings:\n");
        for w in &report.warnings {
            let _ = writeln!(out, "  - {w}");
        }
    }
    out
}

/// The model's fit lines (`USL: λ = ...`, `Amdahl: ...`), named after the report's level.
pub fn model_lines(report: &Report, model: &crate::results::Model) -> Vec<String> {
    let name = report
        .sections
        .first()
        .map_or("n", |s| s.level_name.as_str());
    crate::results::model::model_lines(model, name)
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

/// The columns and the cells (as text) of a section: what the terminal table, the Markdown
/// and the HTML tables all show. A section whose `series_name` is empty has one series and no
/// series column (scan); the `best` column appears when a row is marked best.
pub fn grid_of(section: &Section) -> (Vec<Column>, Vec<Vec<String>>) {
    let rows = &section.rows;
    let shape = Shape {
        series: !section.series_name.is_empty(),
        speedup: rows.iter().any(|r| r.speedup.is_some()),
        efficiency: rows.iter().any(|r| r.efficiency.is_some()),
        wait: rows.iter().any(|r| r.run_queue_wait.is_some()),
        best: rows.iter().any(|r| r.best),
    };

    let mut columns = Vec::new();
    if shape.series {
        columns.push(Column::new(section.series_name.clone(), 0, false));
    }
    columns.extend([
        Column::new(section.level_name.clone(), 0, shape.series),
        Column::new("wall median (min–max)", 0, true),
        Column::new("user", 4, true),
        Column::new("system", 5, true),
        Column::new("CPU/wall", 2, true),
        Column::new("vol. sw", 6, true),
        Column::new("invol. sw", 6, true),
        Column::new("run-queue wait", 3, true),
    ]);
    if shape.speedup {
        columns.push(Column::new("speedup", 1, true));
    }
    if shape.efficiency {
        columns.push(Column::new("efficiency", 2, true));
    }
    columns.extend(
        section
            .metric_columns
            .iter()
            .map(|m| Column::new(m.header.clone(), m.priority, true)),
    );
    if shape.best {
        columns.push(Column::new("", 0, false));
    }
    let cells: Vec<Vec<String>> = rows.iter().map(|row| cells(section, row, shape)).collect();
    (columns, cells)
}

/// Which optional columns a section's table has.
#[derive(Clone, Copy)]
struct Shape {
    series: bool,
    speedup: bool,
    efficiency: bool,
    wait: bool,
    best: bool,
}

fn cells(section: &Section, row: &Row, shape: Shape) -> Vec<String> {
    let mut cells = Vec::new();
    if shape.series {
        cells.push(row.series.clone());
    }
    let mut label = row.label.clone();
    if let Some(failed) = row.metrics.get("failures").filter(|f| **f > 0.0) {
        let _ = write!(label, " ({failed} failed)");
    }
    cells.extend([
        label,
        units::secs_range(row.wall.median, row.wall.min, row.wall.max),
        cpu_side(row, row.user),
        cpu_side(row, row.system),
        units::ratio(row.cpu_per_wall),
        units::events(row.voluntary_switches),
        units::events(row.involuntary_switches),
        match row.run_queue_wait {
            Some(w) => units::secs(w),
            None if shape.wait => "n/a".into(),
            None => "unavailable".into(),
        },
    ]);
    if shape.speedup {
        cells.push(row.speedup.map_or("–".into(), |s| format!("{s:.2}×")));
    }
    if shape.efficiency {
        cells.push(row.efficiency.map_or("–".into(), units::percent));
    }
    for m in &section.metric_columns {
        cells.push(
            row.metrics
                .get(&m.key)
                .map_or("–".into(), |v| metric(&m.key, m.format, *v)),
        );
    }
    if shape.best {
        cells.push(if row.best {
            "◀ best".into()
        } else {
            String::new()
        });
    }
    cells
}

/// A user or system time cell: [`crate::results::UNRESOLVED`] for the 0 side of a split the
/// kernel could not make.
fn cpu_side(row: &Row, value: f64) -> String {
    if value == 0.0 && row.cpu_split_unresolved() {
        crate::results::UNRESOLVED.to_string()
    } else {
        units::secs(value)
    }
}

/// Formats a metric by its column's [`Format`].
fn metric(key: &str, format: Format, value: f64) -> String {
    match format {
        Format::Secs => units::secs(value),
        Format::Sig3 => units::sig3(value),
        Format::PerSec => format!("{}/s", units::sig3(value)),
        Format::KibAsMib => format!("{} MiB", units::sig3(value / 1024.0)),
        Format::ByKey if key.ends_with("_s") => units::secs(value),
        Format::ByKey
            if key.contains("ratio")
                || key.contains("concurrency")
                || key.contains("_per_system")
                || key == crate::results::keys::RELATIVE =>
        {
            units::ratio(value)
        }
        Format::ByKey => units::count(value),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::{Machine, Sample};
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
