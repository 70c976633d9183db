//! `throttle topology`: what `throttle_probe::Topology::detect()` found about the CPUs this
//! process may use, and the concurrency it recommends.

use std::path::PathBuf;

use clap::Args;
use comfy_table::{presets, Table};

use crate::results::Report;

/// Options of `throttle topology`.
#[derive(Debug, Args)]
#[command(
    about = "Show the CPU topology the probe detects and the concurrency it recommends",
    long_about = "Show what the probe finds: logical CPUs, physical cores (distinct package/die/core \
ids), SMT siblings per core, the affinity mask, the cgroup CPU quota (v2 cpu.max or v1 \
cfs_quota_us/cfs_period_us), and the concurrency it recommends for CPU-bound work, with the reason."
)]
pub struct TopologyArgs {
    /// Write the topology as JSON to FILE (`-` for standard output).
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
}

/// The topology as a two-column table followed by the recommendation.
pub fn render(report: &Report) -> String {
    let m = &report.machine;
    let t = &m.topology;
    let mut table = Table::new();
    table.load_preset(presets::UTF8_FULL_CONDENSED);
    table.set_header(["property", "value"]);
    let quota = t
        .cgroup_quota
        .map_or("none".to_string(), |q| format!("{q:.2} CPUs"));
    let rows = [
        ("CPU model", m.cpu_model.clone()),
        ("kernel", m.kernel.clone()),
        ("logical CPUs", t.logical_cpus.to_string()),
        ("physical cores", t.physical_cores.to_string()),
        ("packages", t.packages.to_string()),
        ("threads per core", t.threads_per_core.to_string()),
        ("affinity", cpu_list(&t.affinity)),
        ("cgroup quota", quota),
        (
            "cgroup source",
            t.cgroup_source.clone().unwrap_or_else(|| "none".into()),
        ),
        ("recommended concurrency", t.recommended.to_string()),
    ];
    for (k, v) in rows {
        table.add_row([k.to_string(), v]);
    }
    format!(
        "{table}\nRecommended concurrency {}: {}\n",
        t.recommended, t.reason
    )
}

/// A CPU list in the kernel's compact form: `0-3,6`.
fn cpu_list(cpus: &[usize]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < cpus.len() {
        let start = cpus[i];
        let mut end = start;
        while i + 1 < cpus.len() && cpus[i + 1] == end + 1 {
            i += 1;
            end = cpus[i];
        }
        parts.push(if start == end {
            start.to_string()
        } else {
            format!("{start}-{end}")
        });
        i += 1;
    }
    if parts.is_empty() {
        "unknown".to_string()
    } else {
        parts.join(",")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compact_cpu_lists() {
        assert_eq!(cpu_list(&[0, 1, 2, 3, 6]), "0-3,6");
        assert_eq!(cpu_list(&[1]), "1");
        assert_eq!(cpu_list(&[]), "unknown");
    }
}
