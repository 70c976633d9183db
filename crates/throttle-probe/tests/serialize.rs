//! The JSON shape of the probe's types: durations as seconds, unavailable data as null.

use std::process::Command;

use throttle_probe::{child, Scenario, ScenarioLog, Snapshot, Summary, Topology};

#[test]
fn span_serializes_durations_as_seconds() {
    let span = Snapshot::now().elapsed();
    let v = serde_json::to_value(&span).unwrap();
    assert!(v["wall"].is_f64());
    assert!(v["user"].is_f64());
    assert!(v["voluntary_switches"].is_u64());
    // Measured fields are a number or null, never an {"Ok": ..} wrapper.
    for key in [
        "on_cpu",
        "run_queue_wait",
        "thread_on_cpu",
        "thread_run_queue_wait",
    ] {
        assert!(v[key].is_f64() || v[key].is_null(), "{key}: {}", v[key]);
    }
    assert!(v["timeslices"].is_u64() || v["timeslices"].is_null());
}

#[test]
fn scenario_log_and_summary_serialize() {
    let mut log = ScenarioLog::new();
    let s = Scenario::begin("a");
    log.record(s.end());
    log.measure("a", || ());
    let v = serde_json::to_value(log.summaries()).unwrap();
    assert_eq!(v[0]["name"], "a");
    assert_eq!(v[0]["count"], 2);
    assert!(v[0]["wall"]["median"].is_f64());
    let sum = serde_json::to_value(Summary::of(&[1.0, 2.0]).unwrap()).unwrap();
    assert_eq!(sum["median"], 1.5);
}

#[test]
fn child_usage_and_topology_serialize() {
    let u = child::run(&mut Command::new("true")).unwrap();
    let v = serde_json::to_value(&u).unwrap();
    assert_eq!(v["exit_code"], 0);
    assert!(v["signal"].is_null());
    assert!(v["wall"].is_f64());
    let t = serde_json::to_value(Topology::detect()).unwrap();
    assert!(t["recommended"].as_u64().unwrap() >= 1);
    assert!(t["reason"].is_string());
    assert!(t["affinity"].is_array());
}

#[test]
fn probe_error_serializes_as_its_message() {
    let err = child::run(&mut Command::new("throttle-missing-xyz")).unwrap_err();
    let v = serde_json::to_value(&err).unwrap();
    assert!(v.as_str().unwrap().contains("throttle-missing-xyz"));
}
