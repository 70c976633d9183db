//! `--export-markdown`: the table, the model and the notes as Markdown, for a README or an issue.

use crate::scan::analysis::Analysis;
use crate::scan::format::model_lines;
use crate::scan::record::Scan;
use crate::scan::table::{header, row_cells, HEADERS};

fn escape(cell: &str) -> String {
    cell.replace('|', "\\|")
}

/// The Markdown text.
pub fn to_string(scan: &Scan, analysis: &Analysis) -> String {
    let mut out = format!("{}\n\n", escape(&header(scan)));
    let mut headers: Vec<String> = HEADERS.iter().map(|h| h.to_string()).collect();
    headers[0] = format!("`{}`", scan.parameter);
    out.push_str(&format!("| {} |\n", headers.join(" | ")));
    out.push_str(&format!("|:---|{}\n", "---:|".repeat(headers.len() - 1)));
    for i in 0..scan.points.len() {
        if let Some(cells) = row_cells(scan, analysis, i) {
            let cells: Vec<String> = cells.iter().map(|c| escape(c)).collect();
            out.push_str(&format!("| {} |\n", cells.join(" | ")));
        }
    }
    if let Some(model) = &analysis.model {
        out.push_str("\n**Model** (fitted to every run's throughput):\n\n");
        for line in model_lines(model, &scan.parameter) {
            out.push_str(&format!("- {}\n", escape(&line)));
        }
        out.push('\n');
        out.push_str(&model.summary.join(" "));
        out.push('\n');
    }
    if !analysis.notes.is_empty() {
        out.push_str("\n**Notes**\n\n");
        for n in &analysis.notes {
            out.push_str(&format!("- {n}\n"));
        }
    }
    if !analysis.warnings.is_empty() {
        out.push_str("\n**Warnings**\n\n");
        for w in &analysis.warnings {
            out.push_str(&format!("- {w}\n"));
        }
    }
    out
}
