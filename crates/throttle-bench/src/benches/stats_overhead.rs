//! `stats_overhead`: the cost of the pool's counters, as `tree_sum` on a
//! pool with statistics on against the same pool size with them off.

use anyhow::{Context, Result};
use throttle_workloads::tree::Node;

use super::tree_sum::{build, throttle_case};
use super::Settings;
use crate::harness::{run_interleaved, Baseline, Case, Report};

fn pool(threads: usize, stats: bool) -> Result<throttle::Pool> {
    throttle::Pool::builder()
        .threads(threads)
        .stats(stats)
        .build()
        .with_context(|| format!("building a throttle pool of {threads} threads, stats {stats}"))
}

/// Runs the bench.
pub fn run(settings: &Settings) -> Result<Report> {
    let threads = settings.threads;
    let (tree, depth) = build(settings);
    let want = Node::expected_sum(depth);
    let on = pool(threads, true)?;
    let off = pool(threads, false)?;
    let cases = vec![
        Case::new("throttle", threads, throttle_case(&on, &tree, want)).variant("stats_on"),
        Case::new("throttle", threads, throttle_case(&off, &tree, want)).variant("stats_off"),
    ];
    let series = run_interleaved(settings.reps, true, cases)?;
    let what =
        format!("tree_sum (depth {depth}) on a throttle pool with stats on vs off; wall time");
    let baseline = Baseline {
        system: "throttle",
        threads,
        variant: Some("stats_off"),
    };
    let mut report = Report::new("stats_overhead", what, baseline, series);
    let ratio = report
        .find_variant("throttle", threads, Some("stats_on"))
        .zip(report.find_variant("throttle", threads, Some("stats_off")))
        .map(|(a, b)| a.median() / b.median());
    let stated = ratio.map_or("not measured".to_string(), |r| {
        format!("stats on / off = {r:.3} ({:+.1} %)", (r - 1.0) * 100.0)
    });
    report.notes.push(format!(
        "{stated}; no limit is set: the cost is measured and stated"
    ));
    Ok(report)
}
