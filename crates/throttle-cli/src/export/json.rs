//! `--json` and `scan --export-json`: one JSON writer, two layouts of the one [`Report`].
//!
//! - [`to_string`] of a [`Report`] is the experiments' document (docs/json.md, `schema_version`).
//! - [`hyperfine`] is scan's layout: hyperfine's `results[]` fields (`command`, `mean`, `stddev`,
//!   `median`, `user`, `system`, `min`, `max`, `times`, `exit_codes`, `parameters`), so tools
//!   that read hyperfine's files read ours, plus per-value scaling metrics, per-run details and
//!   a top-level `model`, `notes`, `warnings`, `machine` and `partial`. It is a view of the
//!   report, not a writer of its own: every number comes from the report's rows, their samples
//!   and metrics (keys in [`crate::results::keys`]). Times are seconds; missing data is `null`.

use std::collections::BTreeMap;

use anyhow::Context;
use serde::Serialize;
use serde_json::{json, Value};
use throttle_probe::Summary;

use crate::results::keys::*;
use crate::results::model::usl::Fit;
use crate::results::{Model, Report, Row, Sample};

/// hyperfine's fields of each `results[]` object, in hyperfine's order: what
/// [`hyperfine`] must always write (the contract its tests check).
#[cfg(test)]
pub const HYPERFINE_FIELDS: [&str; 11] = [
    "command",
    "mean",
    "stddev",
    "median",
    "user",
    "system",
    "min",
    "max",
    "times",
    "exit_codes",
    "parameters",
];

/// Any serialisable value as pretty JSON with a trailing newline.
pub fn to_string(value: &impl Serialize) -> anyhow::Result<String> {
    let mut text = serde_json::to_string_pretty(value).context("encoding results as JSON")?;
    text.push('\n');
    Ok(text)
}

fn fit_json(fit: &Result<Fit, String>) -> Value {
    match fit {
        Ok(f) => json!({
            "lambda": f.lambda,
            "sigma": f.sigma,
            "kappa": f.kappa,
            "std_errors": f.std_errors.map(|e| json!({"lambda": e[0], "sigma": e[1], "kappa": e[2]})),
            "r_squared": f.r_squared,
            "rms_relative_error": f.rms_relative_error,
            "peak_n": f.peak(),
            "peak_throughput": f.peak().map(|p| f.predict(p)),
            "ceiling": f.ceiling(),
            "points": f.points,
        }),
        Err(e) => json!({ "error": e }),
    }
}

fn model_json(model: &Model) -> Value {
    json!({
        "law": "X(N) = lambda*N / (1 + sigma*(N-1) + kappa*N*(N-1))",
        "throughput_unit": model.unit,
        "fitted_to": "throughput of every run",
        "usl": fit_json(&model.usl),
        "amdahl": fit_json(&model.amdahl),
        "summary": model.summary.join(" "),
    })
}

/// A per-run metric as an integer, `null` when the run has none.
fn int(sample: &Sample, key: &str) -> Option<i64> {
    sample.metrics.get(key).map(|v| *v as i64)
}

/// A row metric as an integer (counts), 0 when missing.
fn count(row: &Row, key: &str) -> u64 {
    row.metrics.get(key).map_or(0, |v| *v as u64)
}

fn run_json(s: &Sample) -> Value {
    json!({
        "round": int(s, ROUND),
        "wall": s.wall.as_secs_f64(),
        "user": s.user.as_secs_f64(),
        "system": s.system.as_secs_f64(),
        "max_rss_kib": int(s, MAX_RSS_KIB),
        "voluntary_switches": s.voluntary,
        "involuntary_switches": s.involuntary,
        "run_queue_wait": s.run_queue_wait.as_ref().and_then(|w| w.as_ref().ok()).map(|d| d.as_secs_f64()),
        "exit_code": int(s, EXIT_CODE),
        "signal": int(s, SIGNAL),
    })
}

/// The mean of one per-run quantity, seconds.
fn mean(row: &Row, f: impl Fn(&Sample) -> f64) -> Option<f64> {
    Summary::of(&row.samples.iter().map(f).collect::<Vec<_>>()).map(|s| s.mean)
}

/// One result; `parameter` is `None` for a comparison of commands, which has none (hyperfine
/// then writes no `parameters` and names each result by its `--command-name`, or its text).
fn result_json(row: &Row, parameter: Option<&str>) -> Value {
    let mut parameters = BTreeMap::new();
    if let Some(parameter) = parameter {
        parameters.insert(parameter.to_string(), row.label.clone());
    }
    parameters.extend(row.parameters.clone());
    let command = match parameter {
        Some(_) => row.command.clone(),
        None => Some(row.label.clone()),
    };
    let mut v = json!({
        "command": command,
        "mean": row.wall.mean,
        "stddev": (row.wall.count > 1).then_some(row.wall.stddev),
        "median": row.wall.median,
        "user": mean(row, |s| s.user.as_secs_f64()),
        "system": mean(row, |s| s.system.as_secs_f64()),
        "min": row.wall.min,
        "max": row.wall.max,
        "times": row.wall_runs,
        "memory_usage_byte": row.samples.iter().map(|s| int(s, MAX_RSS_KIB).unwrap_or(0) * 1024).collect::<Vec<_>>(),
        "exit_codes": row.samples.iter().map(|s| int(s, EXIT_CODE)).collect::<Vec<_>>(),
        "parameters": parameters,
        "value": row.label,
        "n": row.value,
        "copies": count(row, COPIES),
        "user_median": row.user,
        "system_median": row.system,
        "cpu_median": row.metrics.get(CPU_MEDIAN),
        "cpu_per_wall": row.cpu_per_wall,
        "voluntary_switches": row.voluntary_switches,
        "involuntary_switches": row.involuntary_switches,
        "run_queue_wait": row.run_queue_wait,
        "max_rss_kib": count(row, MAX_RSS_KIB),
        "throughput": row.metrics.get(THROUGHPUT),
        "speedup": row.speedup,
        "efficiency": row.efficiency,
        "karp_flatt": row.metrics.get(KARP_FLATT),
        "outliers": count(row, OUTLIERS),
        "failures": count(row, FAILURES),
        "runs": row.samples.iter().map(run_json).collect::<Vec<_>>(),
    });
    if parameter.is_none() && row.parameters.is_empty() {
        if let Some(map) = v.as_object_mut() {
            map.remove("parameters");
        }
    }
    v
}

/// scan's hyperfine-compatible document of `report` (see the module docs; docs/json.md).
pub fn hyperfine(report: &Report) -> Value {
    let param = |k: &str| report.parameters.get(k).cloned().unwrap_or(Value::Null);
    let parameter = report
        .parameters
        .get("parameter")
        .and_then(Value::as_str)
        .unwrap_or("n");
    let results: Vec<Value> = report
        .sections
        .iter()
        .flat_map(|s| &s.rows)
        .map(|r| result_json(r, (param("mode") != "commands").then_some(parameter)))
        .collect();
    let t = &report.machine.topology;
    json!({
        "tool": "throttle scan",
        "version": env!("CARGO_PKG_VERSION"),
        "partial": report.partial,
        "mode": param("mode"),
        "parameter": parameter,
        "template": param("template"),
        "warmup": param("warmup"),
        "machine": {
            "logical_cpus": t.logical_cpus,
            "physical_cores": t.physical_cores,
            "affinity": t.affinity.len(),
            "cgroup_quota": t.cgroup_quota,
            "recommended": t.recommended,
            "reason": t.reason,
        },
        "results": results,
        "model": report.model.as_ref().map(model_json),
        "notes": report.findings,
        "warnings": report.warnings,
    })
}
