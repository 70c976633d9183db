//! The report for people on standard output: a header line, one table row per value, the model
//! and the notes.

use crate::grid::{self, Column};

use super::analysis::{sig3, Analysis};
use super::format::{count, model_lines, opt, secs};
use super::record::{Mode, Scan};

/// The column headers, also used by the Markdown export.
pub const HEADERS: [&str; 15] = [
    "value",
    "wall median",
    "min – max",
    "± stddev",
    "user",
    "system",
    "CPU/wall",
    "vol. sw",
    "invol. sw",
    "rq wait",
    "peak RSS",
    "throughput",
    "speedup",
    "efficiency",
    "Karp–Flatt",
];

/// Which columns a narrow terminal drops first (highest number first; 0 = always shown), in
/// [`HEADERS`] order.
const PRIORITY: [u8; 15] = [0, 0, 3, 5, 4, 5, 2, 6, 6, 4, 6, 2, 1, 2, 5];

/// The cells of one value's row (as text), in [`HEADERS`] order; `None` for an unmeasured value.
pub fn row_cells(scan: &Scan, analysis: &Analysis, index: usize) -> Option<Vec<String>> {
    let p = &scan.points[index];
    let s = analysis.stats.get(index)?.as_ref()?;
    let mut label = p.label.clone();
    if s.failures > 0 {
        label.push_str(&format!(" ({} failed)", s.failures));
    }
    Some(vec![
        label,
        secs(s.wall.median),
        format!("{} – {}", secs(s.wall.min), secs(s.wall.max)),
        super::stats::stddev(&s.wall).map_or_else(|| "–".into(), secs),
        secs(s.user.median),
        secs(s.system.median),
        format!("{:.2}", s.cpu_per_wall),
        count(s.voluntary_switches),
        count(s.involuntary_switches),
        s.run_queue_wait
            .as_ref()
            .map_or_else(|| "–".into(), |d| secs(d.median)),
        format!("{} MiB", sig3(s.max_rss_kib as f64 / 1024.0)),
        format!("{}/s", sig3(s.throughput)),
        format!("{:.2}×", s.speedup),
        s.efficiency
            .map_or_else(|| "–".into(), |e| format!("{:.0} %", e * 100.0)),
        opt(s.karp_flatt),
    ])
}

/// One line saying what was scanned, how often, and on what machine.
pub fn header(scan: &Scan) -> String {
    let runs: Vec<usize> = scan.points.iter().map(|p| p.runs.len()).collect();
    let (lo, hi) = (
        runs.iter().copied().min().unwrap_or(0),
        runs.iter().copied().max().unwrap_or(0),
    );
    let runs = if lo == hi {
        format!("{lo} runs")
    } else {
        format!("{lo}–{hi} runs")
    };
    let what = match scan.mode {
        Mode::Parameter => format!("{} over {}", scan.parameter, labels(scan)),
        Mode::Procs => format!("concurrent copies K = {}", labels(scan)),
    };
    let m = &scan.machine.topology;
    format!(
        "scan of `{}`: {what}; {runs} per value after {} warm-up, interleaved; machine: {} logical CPUs, {} physical cores{}",
        scan.template,
        scan.warmup,
        m.logical_cpus,
        m.physical_cores,
        m.cgroup_quota
            .map_or_else(String::new, |q| format!(", cgroup quota {q} CPUs")),
    )
}

fn labels(scan: &Scan) -> String {
    scan.points
        .iter()
        .map(|p| p.label.as_str())
        .collect::<Vec<_>>()
        .join(",")
}

/// The whole text report.
pub fn render(scan: &Scan, analysis: &Analysis) -> String {
    let mut out = String::new();
    out.push_str(&header(scan));
    out.push('\n');
    let columns: Vec<Column> = HEADERS
        .iter()
        .zip(PRIORITY)
        .enumerate()
        .map(|(i, (h, p))| {
            let header = if i == 0 { scan.parameter.as_str() } else { h };
            Column::new(header, p, i > 0)
        })
        .collect();
    let rows: Vec<Vec<String>> = (0..scan.points.len())
        .filter_map(|i| row_cells(scan, analysis, i))
        .collect();
    out.push_str(&grid::render(&columns, &rows, grid::terminal_width()));
    out.push('\n');
    let unit = match scan.mode {
        Mode::Parameter => "throughput = runs/s (1 / wall)",
        Mode::Procs => "throughput = copies/s (K / wall)",
    };
    out.push_str(&format!(
        "{unit}; CPU/wall = CPUs kept busy; rq wait = time runnable but waiting for a CPU, summed over threads; Karp–Flatt = serial fraction implied by the speedup\n"
    ));
    if let Some(model) = &analysis.model {
        out.push_str("\nModel (fitted to every run's throughput):\n");
        for line in model_lines(model, &scan.parameter) {
            out.push_str(&format!("  {line}\n"));
        }
        for s in &model.summary {
            out.push_str(&format!("  {s}\n"));
        }
    }
    if !analysis.notes.is_empty() {
        out.push_str("\nNotes:\n");
        for n in &analysis.notes {
            out.push_str(&format!("  - {n}\n"));
        }
    }
    if !analysis.warnings.is_empty() {
        out.push_str("\nWarnings:\n");
        for w in &analysis.warnings {
            out.push_str(&format!("  - {w}\n"));
        }
    }
    out
}
