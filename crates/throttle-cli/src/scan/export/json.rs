//! `--export-json`: hyperfine's layout (`results[]` with `command`, `mean`, `stddev`,
//! `median`, `user`, `system`, `min`, `max`, `times`, `exit_codes`, `parameters`), so tools that
//! read hyperfine's files read ours; plus per-value scaling metrics, per-run details, and a
//! top-level `model`, `notes`, `machine` and `partial`. Times are seconds; missing data is
//! `null`, never a made-up zero.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::{json, Value};

use crate::scan::analysis::{Analysis, Model};
use crate::scan::record::{Mode, Run, Scan};
use crate::scan::usl::Fit;

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

#[derive(Serialize)]
struct RunJson {
    round: usize,
    wall: f64,
    user: f64,
    system: f64,
    max_rss_kib: u64,
    voluntary_switches: u64,
    involuntary_switches: u64,
    run_queue_wait: Option<f64>,
    exit_code: Option<i32>,
    signal: Option<i32>,
}

impl From<&Run> for RunJson {
    fn from(r: &Run) -> RunJson {
        RunJson {
            round: r.round,
            wall: r.wall.as_secs_f64(),
            user: r.user.as_secs_f64(),
            system: r.system.as_secs_f64(),
            max_rss_kib: r.max_rss_kib,
            voluntary_switches: r.voluntary_switches,
            involuntary_switches: r.involuntary_switches,
            run_queue_wait: r.run_queue_wait.map(|d| d.as_secs_f64()),
            exit_code: r.exit_code,
            signal: r.signal,
        }
    }
}

/// The JSON document.
pub fn to_value(scan: &Scan, analysis: &Analysis) -> Value {
    let mut results = Vec::new();
    for (p, s) in scan.points.iter().zip(&analysis.stats) {
        let Some(s) = s else { continue };
        let mut parameters = BTreeMap::new();
        parameters.insert(scan.parameter.clone(), p.label.clone());
        results.push(json!({
            "command": p.command,
            "mean": s.wall.mean,
            "stddev": crate::scan::stats::stddev(&s.wall),
            "median": s.wall.median,
            "user": s.user.mean,
            "system": s.system.mean,
            "min": s.wall.min,
            "max": s.wall.max,
            "times": p.runs.iter().map(|r| r.wall.as_secs_f64()).collect::<Vec<_>>(),
            "memory_usage_byte": p.runs.iter().map(|r| r.max_rss_kib * 1024).collect::<Vec<_>>(),
            "exit_codes": p.runs.iter().map(|r| r.exit_code).collect::<Vec<_>>(),
            "parameters": parameters,
            "value": p.label,
            "n": p.n,
            "copies": p.copies,
            "user_median": s.user.median,
            "system_median": s.system.median,
            "cpu_median": s.cpu.median,
            "cpu_per_wall": s.cpu_per_wall,
            "voluntary_switches": s.voluntary_switches,
            "involuntary_switches": s.involuntary_switches,
            "run_queue_wait": s.run_queue_wait.as_ref().map(|d| d.median),
            "max_rss_kib": s.max_rss_kib,
            "throughput": s.throughput,
            "speedup": s.speedup,
            "efficiency": s.efficiency,
            "karp_flatt": s.karp_flatt,
            "outliers": s.outliers,
            "failures": s.failures,
            "runs": p.runs.iter().map(RunJson::from).collect::<Vec<_>>(),
        }));
    }
    let m = &scan.machine.topology;
    json!({
        "tool": "throttle scan",
        "version": env!("CARGO_PKG_VERSION"),
        "partial": scan.partial,
        "mode": match scan.mode { Mode::Parameter => "parameter", Mode::Procs => "procs" },
        "parameter": scan.parameter,
        "template": scan.template,
        "warmup": scan.warmup,
        "machine": {
            "logical_cpus": m.logical_cpus,
            "physical_cores": m.physical_cores,
            "affinity": m.affinity.len(),
            "cgroup_quota": m.cgroup_quota,
            "recommended": m.recommended,
            "reason": m.reason,
        },
        "results": results,
        "model": analysis.model.as_ref().map(model_json),
        "notes": analysis.notes,
        "warnings": analysis.warnings,
    })
}

/// The JSON document as pretty-printed text, by the experiments' JSON writer
/// ([`crate::export::json::to_string`]); non-finite floats became `null` in [`to_value`].
pub fn to_string(scan: &Scan, analysis: &Analysis) -> anyhow::Result<String> {
    crate::export::json::to_string(&to_value(scan, analysis))
}
