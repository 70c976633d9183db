//! The one table renderer for people: a comfy-table grid that fits the terminal.
//!
//! Both the experiments' tables and `scan`'s go through [`render`]. When standard output is a
//! terminal (or `COLUMNS` is set) and the table is wider than it, the columns of lowest priority
//! are dropped, one at a time, until it fits, and a line under the table names what was left
//! out. Exports (JSON, CSV, Markdown, HTML) always keep every column.

use comfy_table::{presets, Cell, CellAlignment, ContentArrangement, Table};

/// A column: its header and how much it matters (0 = never dropped; higher = dropped first).
#[derive(Debug, Clone)]
pub struct Column {
    /// The header text.
    pub header: String,
    /// Drop order: the highest priority number goes first; 0 never goes.
    pub priority: u8,
    /// Right-aligned (numbers) or left-aligned (names).
    pub right: bool,
}

impl Column {
    /// A column with `header`, drop `priority` and alignment.
    pub fn new(header: impl Into<String>, priority: u8, right: bool) -> Column {
        Column {
            header: header.into(),
            priority,
            right,
        }
    }
}

/// The width of the terminal standard output goes to: `COLUMNS` if set, else the terminal's
/// own size; `None` when standard output is not a terminal (a pipe or a file gets every column).
pub fn terminal_width() -> Option<usize> {
    if let Some(cols) = std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.trim().parse::<usize>().ok())
        .filter(|&c| c > 0)
    {
        return Some(cols);
    }
    // SAFETY: `ws` is a valid, writable winsize; TIOCGWINSZ only writes to it, and fails
    // harmlessly (non-zero return) when fd 1 is not a terminal.
    let mut ws: libc::winsize = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    let ok = unsafe { libc::ioctl(1, libc::TIOCGWINSZ, &mut ws) } == 0;
    (ok && ws.ws_col > 0).then_some(ws.ws_col as usize)
}

fn draw(columns: &[Column], rows: &[Vec<String>], keep: &[bool]) -> String {
    let mut table = Table::new();
    table
        .load_preset(presets::UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Disabled)
        .set_header(
            columns
                .iter()
                .zip(keep)
                .filter(|(_, k)| **k)
                .map(|(c, _)| Cell::new(&c.header)),
        );
    for row in rows {
        table.add_row(row.iter().zip(columns).zip(keep).filter(|(_, k)| **k).map(
            |((text, c), _)| {
                let cell = Cell::new(text);
                if c.right {
                    cell.set_alignment(CellAlignment::Right)
                } else {
                    cell
                }
            },
        ));
    }
    table.to_string()
}

fn width(text: &str) -> usize {
    text.lines().map(|l| l.chars().count()).max().unwrap_or(0)
}

/// Renders `rows` under `columns`, fitted to `max_width` when given (see the module docs).
/// Ends without a newline.
pub fn render(columns: &[Column], rows: &[Vec<String>], max_width: Option<usize>) -> String {
    let mut keep = vec![true; columns.len()];
    let mut text = draw(columns, rows, &keep);
    let Some(max) = max_width else {
        return text;
    };
    let mut dropped = Vec::new();
    while width(&text) > max {
        // The droppable column of highest priority number, the rightmost among equals.
        let victim = columns
            .iter()
            .enumerate()
            .filter(|(i, c)| keep[*i] && c.priority > 0)
            .max_by_key(|(i, c)| (c.priority, *i))
            .map(|(i, _)| i);
        let Some(i) = victim else { break };
        keep[i] = false;
        dropped.push(columns[i].header.trim().to_string());
        text = draw(columns, rows, &keep);
    }
    if !dropped.is_empty() {
        text.push_str(&format!(
            "\n({} column{} left out to fit {max} terminal columns: {}; the exports keep them)",
            dropped.len(),
            if dropped.len() == 1 { "" } else { "s" },
            dropped.join(", ")
        ));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn narrow_terminals_drop_low_priority_columns() {
        let columns = [
            Column::new("name", 0, false),
            Column::new("important", 1, true),
            Column::new("detail", 5, true),
        ];
        let rows = vec![vec!["a".into(), "1.00".into(), "12345678901234".into()]];
        let full = render(&columns, &rows, None);
        assert!(full.contains("detail"));
        let narrow = render(&columns, &rows, Some(24));
        assert!(!narrow.contains("12345678901234"), "{narrow}");
        assert!(
            narrow.contains("important") && narrow.contains("left out"),
            "{narrow}"
        );
        let table_width = narrow.lines().take(3).map(|l| l.chars().count()).max();
        assert!(table_width <= Some(24), "{narrow}");
    }
}
