//! `--markdown` and `scan --export-markdown`: a [`Report`] as Markdown, for a README or an
//! issue — the subtitle, each section's table with the same columns and cells as the terminal
//! table ([`crate::view::table::grid_of`], nothing dropped), its legend, the model, the notes and the
//! warnings.

use std::fmt::Write as _;

use crate::results::Report;
use crate::view::table;

/// Escapes a table cell or a line: `|` would end a cell.
fn escape(text: &str) -> String {
    text.replace('|', "\\|")
}

/// The Markdown text.
pub fn to_string(report: &Report) -> String {
    let mut out = String::new();
    if report.partial {
        out.push_str("**Partial**: interrupted before the experiment finished.\n\n");
    }
    if let Some(subtitle) = &report.subtitle {
        let _ = write!(out, "{}\n\n", escape(subtitle));
    }
    for section in &report.sections {
        if !section.title.is_empty() {
            let _ = write!(out, "**{}**\n\n", escape(&section.title));
        }
        let (columns, rows) = table::grid_of(section);
        let headers: Vec<String> = columns
            .iter()
            .map(|c| {
                if section.level_is_placeholder && c.header == section.level_name {
                    format!("`{}`", c.header)
                } else {
                    escape(&c.header)
                }
            })
            .collect();
        let _ = writeln!(out, "| {} |", headers.join(" | "));
        let align: Vec<&str> = columns
            .iter()
            .map(|c| if c.right { "---:" } else { ":---" })
            .collect();
        let _ = writeln!(out, "|{}|", align.join("|"));
        for row in rows {
            let cells: Vec<String> = row.iter().map(|c| escape(c)).collect();
            let _ = writeln!(out, "| {} |", cells.join(" | "));
        }
        if let Some(legend) = &section.legend_text() {
            let _ = write!(out, "\n{}\n", escape(legend));
        }
        out.push('\n');
    }
    if let Some(model) = &report.model {
        out.push_str("**Model** (fitted to every run's throughput):\n\n");
        for line in table::model_lines(report, model) {
            let _ = writeln!(out, "- {}", escape(&line));
        }
        let _ = write!(out, "\n{}\n\n", model.summary.join(" "));
    }
    for (title, items) in [("Notes", &report.findings), ("Warnings", &report.warnings)] {
        if !items.is_empty() {
            let _ = write!(out, "**{title}**\n\n");
            for item in items {
                let _ = writeln!(out, "- {item}");
            }
            out.push('\n');
        }
    }
    while out.ends_with("\n\n") {
        out.pop();
    }
    out
}
