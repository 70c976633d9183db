//! The `throttle report` page: one self-contained HTML document (no scripts, no fonts, no
//! network) with the recommendation on top, the machine, then one section per seed with its
//! figures (inline SVG from [`crate::chart`]), its findings in sentences and its measured table
//! folded under them.

use std::fmt::Write as _;

use crate::chart::escape;
use crate::report::{Machine, Report};
use crate::table;

/// One seed's part of the page.
#[derive(Debug, Clone)]
pub struct SeedSection {
    /// `seed-000`: the element id (the browser test looks for it).
    pub id: String,
    /// The heading.
    pub title: String,
    /// What the seed claimed, in one sentence.
    pub claim: String,
    /// The figures, each a standalone `<svg>` element.
    pub figures: Vec<String>,
    /// The findings, plain sentences.
    pub findings: Vec<String>,
    /// The experiment whose tables to fold under the findings, if it ran.
    pub report: Option<Report>,
    /// Why the section is empty, when it is.
    pub missing: Option<String>,
}

const STYLE: &str = "body{font-family:system-ui,sans-serif;margin:1.5em auto;max-width:1000px;\
color:#222;padding:0 1em;line-height:1.45}\
h1{font-size:1.5em}h2{font-size:1.2em;margin-top:2em;border-bottom:1px solid #ddd}\
.rec{background:#eef6ff;border:1px solid #9cc3e6;padding:.6em 1.2em}\
.partial{background:#fff3cd;border:1px solid #e0c060;padding:.5em 1em}\
figure{margin:1em 0}svg{width:100%;height:auto;display:block}\
details{margin:.6em 0}summary{cursor:pointer;color:#0a58ca}\
.scroll{overflow-x:auto;max-width:100%}\
table{border-collapse:collapse;font-size:.75em;margin:.5em 0}\
th,td{border:1px solid #ccc;padding:.2em .4em;text-align:right}\
td{white-space:nowrap}th{background:#f3f3f3}\
td:first-child,th:first-child{text-align:left}\
dl.machine{display:grid;grid-template-columns:max-content auto;gap:.2em 1em}\
dl.machine dt{font-weight:bold}dl.machine dd{margin:0}\
.small{color:#666;font-size:.85em}";

fn list(out: &mut String, items: &[String]) {
    if items.is_empty() {
        return;
    }
    out.push_str("<ul>\n");
    for i in items {
        let _ = writeln!(out, "<li>{}</li>", escape(i));
    }
    out.push_str("</ul>\n");
}

/// The machine as a definition list.
fn machine(out: &mut String, m: &Machine, outside_load: Option<f64>) {
    let t = &m.topology;
    let smt = if t.threads_per_core > 1 {
        format!("yes, {} threads per core", t.threads_per_core)
    } else {
        "no".to_string()
    };
    let mut rows = vec![
        ("CPU model", m.cpu_model.clone()),
        ("kernel", format!("Linux {}", m.kernel)),
        ("logical CPUs", t.logical_cpus.to_string()),
        ("physical cores", t.physical_cores.to_string()),
        ("SMT", smt),
        ("CPUs in the affinity mask", t.affinity.len().to_string()),
        (
            "cgroup CPU quota",
            t.cgroup_quota
                .map_or("none".to_string(), |q| format!("{q:.2} CPUs")),
        ),
        (
            "usable CPUs (the probe's recommendation)",
            format!("{} — {}", t.recommended, t.reason),
        ),
    ];
    if let Some(x) = outside_load {
        rows.push((
            "other load during the run",
            format!("{x:.2} CPUs busy on average (from /proc/stat, minus this process)"),
        ));
    }
    out.push_str("<dl class=\"machine\">\n");
    for (k, v) in rows {
        let _ = writeln!(out, "<dt>{}</dt><dd>{}</dd>", escape(k), escape(&v));
    }
    out.push_str("</dl>\n");
}

/// Every section of `report` as an HTML table with all columns (nothing is dropped here).
pub fn tables(report: &Report) -> String {
    let mut out = String::new();
    for section in &report.sections {
        let (columns, rows) = table::grid_of(section);
        let _ = writeln!(out, "<p class=\"small\">{}</p>", escape(&section.title));
        out.push_str("<div class=\"scroll\"><table>\n<thead><tr>");
        for c in &columns {
            let _ = write!(out, "<th>{}</th>", escape(&c.header));
        }
        out.push_str("</tr></thead>\n<tbody>\n");
        for row in rows {
            out.push_str("<tr>");
            for cell in row {
                let _ = write!(out, "<td>{}</td>", escape(&cell));
            }
            out.push_str("</tr>\n");
        }
        out.push_str("</tbody></table></div>\n");
    }
    out
}

/// The whole page.
pub fn page(
    machine_info: &Machine,
    recommendation: &[String],
    sections: &[SeedSection],
    partial: bool,
    header: &str,
    outside_load: Option<f64>,
) -> String {
    let mut out = String::new();
    out.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    out.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    let _ = writeln!(
        out,
        "<title>throttle report: {} CPUs</title>\n<style>{STYLE}</style>\n</head>\n<body>",
        machine_info.usable_cpus()
    );
    out.push_str("<h1>throttle report: the right concurrency for this machine</h1>\n");
    let _ = writeln!(out, "<p class=\"small\">{}</p>", escape(header));
    if partial {
        out.push_str("<p class=\"partial\">PARTIAL: the run was interrupted; the sections below show what was measured before it stopped.</p>\n");
    }
    out.push_str("<section id=\"recommendation\" class=\"rec\">\n<h2>Recommendation</h2>\n");
    list(&mut out, recommendation);
    out.push_str("<p class=\"small\">Every number above appears in a figure or a folded table below.</p>\n</section>\n");
    out.push_str("<h2 id=\"machine\">The machine</h2>\n");
    machine(&mut out, machine_info, outside_load);
    for s in sections {
        let _ = writeln!(
            out,
            "<section id=\"{}\">\n<h2>{}</h2>\n<p><em>{}</em></p>",
            escape(&s.id),
            escape(&s.title),
            escape(&s.claim)
        );
        if let Some(why) = &s.missing {
            let _ = writeln!(out, "<p class=\"partial\">{}</p>", escape(why));
        }
        for f in &s.figures {
            out.push_str("<figure>\n");
            out.push_str(f.trim());
            out.push_str("\n</figure>\n");
        }
        list(&mut out, &s.findings);
        if let Some(r) = &s.report {
            out.push_str("<details><summary>The measured table (medians over the repetitions, min–max beside the wall time)</summary>\n");
            out.push_str(&tables(r));
            out.push_str("</details>\n");
        }
        out.push_str("</section>\n");
    }
    let _ = writeln!(
        out,
        "<p class=\"small\">Generated by throttle {} (<code>throttle report</code>).</p>\n</body>\n</html>",
        env!("CARGO_PKG_VERSION")
    );
    out
}
