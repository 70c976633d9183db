//! `--export-csv`: one line per value. The first columns are hyperfine's (`command`, `mean`,
//! `stddev`, `median`, `user`, `system`, `min`, `max`, `parameter_<name>`), then ours. Times are
//! seconds; an empty field means "not measured".

use crate::scan::analysis::Analysis;
use crate::scan::record::Scan;

use crate::export::csv::field;

/// The experiments' number field ([`crate::export::csv::num`]); empty when missing.
fn num(v: Option<f64>) -> String {
    crate::export::csv::num(v.unwrap_or(f64::NAN))
}

/// The CSV text.
pub fn to_string(scan: &Scan, analysis: &Analysis) -> String {
    let mut out = format!(
        "command,mean,stddev,median,user,system,min,max,parameter_{},copies,runs,cpu_per_wall,voluntary_switches,involuntary_switches,run_queue_wait,max_rss_kib,throughput,speedup,efficiency,karp_flatt,outliers,failures\n",
        scan.parameter
    );
    for (p, s) in scan.points.iter().zip(&analysis.stats) {
        let Some(s) = s else { continue };
        let cells = [
            field(&p.command),
            num(Some(s.wall.mean)),
            num(crate::scan::stats::stddev(&s.wall)),
            num(Some(s.wall.median)),
            num(Some(s.user.mean)),
            num(Some(s.system.mean)),
            num(Some(s.wall.min)),
            num(Some(s.wall.max)),
            field(&p.label),
            p.copies.to_string(),
            p.runs.len().to_string(),
            num(Some(s.cpu_per_wall)),
            num(Some(s.voluntary_switches)),
            num(Some(s.involuntary_switches)),
            num(s.run_queue_wait.as_ref().map(|d| d.median)),
            s.max_rss_kib.to_string(),
            num(Some(s.throughput)),
            num(Some(s.speedup)),
            num(s.efficiency),
            num(s.karp_flatt),
            s.outliers.to_string(),
            s.failures.to_string(),
        ];
        out.push_str(&cells.join(","));
        out.push('\n');
    }
    out
}
