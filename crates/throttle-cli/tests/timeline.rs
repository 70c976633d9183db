//! `throttle frames --trace FILE.json --timeline FILE.svg` driven as a real binary: one file per
//! scheduler that can record (its name before the extension), JSON that parses with matched
//! slices, SVG pictures with their legend, bad flags as one line with exit status 2, and the
//! pictures rendered in headless Chromium.
//!
//! The Chromium test needs the Debian package `chromium`: it is ignored only when the build
//! script found no `chromium` on PATH, with a reason that says so (`.ci/run` installs it). No
//! test asserts anything about timing.

mod common;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use common::{
    assert_success, assert_usage_error, chromium, png_size, read_json, require, text, throttle,
    workdir,
};

const TRACED: [&str; 4] = ["mutex_pool", "event_pool", "locked_queue", "throttle"];

/// Runs a small `frames` with both outputs into `dir`; returns the base paths.
fn traced_frames(dir: &Path) -> (PathBuf, PathBuf) {
    let (json, svg) = (dir.join("t.json"), dir.join("t.svg"));
    let out = throttle()
        .args([
            "frames",
            "--quick",
            "--threads",
            "2",
            "--meshes",
            "200",
            "--vertices",
            "50",
            "--frames",
            "20",
            "--reps",
            "1",
            "--trace-frames",
            "5",
            "--trace",
        ])
        .arg(&json)
        .arg("--timeline")
        .arg(&svg)
        .output()
        .expect("runs");
    let stdout = assert_success(&out);
    for name in TRACED {
        assert!(
            stdout.contains(&format!("Timeline of {name} (5 frames recorded")),
            "no finding for {name}:\n{stdout}"
        );
    }
    (json, svg)
}

fn per_scheduler(base: &Path, name: &str) -> PathBuf {
    let ext = base.extension().unwrap().to_str().unwrap();
    base.with_file_name(format!("t.{name}.{ext}"))
}

#[test]
fn frames_writes_a_trace_and_a_timeline_per_scheduler() {
    let dir = workdir("files");
    let (json, svg) = traced_frames(&dir);
    assert!(
        !json.exists() && !svg.exists(),
        "no file without a scheduler name"
    );
    for name in TRACED {
        let doc: Value = read_json(&per_scheduler(&json, name));
        assert_eq!(doc["otherData"]["scheduler"], name);
        let events = doc["traceEvents"].as_array().expect("traceEvents");
        // Every B has its E on its thread, properly nested.
        let mut open: HashMap<u64, Vec<&str>> = HashMap::new();
        let mut slices = 0;
        for e in events {
            let tid = e["tid"].as_u64().unwrap();
            match e["ph"].as_str().unwrap() {
                "B" => {
                    let n = e["name"].as_str().unwrap();
                    slices += 1;
                    open.entry(tid).or_default().push(n);
                }
                "E" => assert_eq!(
                    open.get_mut(&tid).and_then(|s| s.pop()),
                    e["name"].as_str(),
                    "{name}: E without its B"
                ),
                _ => {}
            }
        }
        assert!(
            open.values().all(|s| s.is_empty()),
            "{name}: unclosed slices"
        );
        // Which thread ran what depends on the schedule (a tiny frame may run entirely on the
        // caller), so only that something was drawn is checked.
        assert!(slices > 0, "{name}: no slices");
        let threads = events
            .iter()
            .filter(|e| e["ph"] == "M" && e["name"] == "thread_name")
            .count();
        assert!(threads >= 2, "{name}: {threads} named threads");
        assert!(events
            .iter()
            .any(|e| e["ph"] == "C" && e["name"] == "concurrency"));
        // Every arrow that starts ends (whether any wake-up happened depends on the schedule).
        let count = |ph: &str| events.iter().filter(|e| e["ph"] == ph).count();
        assert_eq!(count("s"), count("f"), "{name}: unpaired flow events");

        let picture = std::fs::read_to_string(per_scheduler(&svg, name)).expect("SVG written");
        assert!(picture.starts_with("<svg") && picture.trim_end().ends_with("</svg>"));
        let title = format!("{name}: what each thread did over 5 frames");
        for needle in [
            title.as_str(),
            "busy threads",
            "time since the first event (",
            "wake-up: waker → woken",
            "own call (caller",
        ] {
            assert!(picture.contains(needle), "{name}: no {needle:?}");
        }
    }
}

#[test]
fn bad_trace_flags_are_one_line_and_exit_2() {
    let cases: &[(&[&str], &[&str])] = &[
        (
            &["frames", "--trace-frames", "0"],
            &["'0'", "--trace-frames"],
        ),
        (
            &["frames", "--trace-frames", "x"],
            &["'x'", "--trace-frames"],
        ),
        (
            &["frames", "--trace", "/nonexistent-dir/t.json"],
            &["--trace", "/nonexistent-dir/t.mutex_pool.json"],
        ),
        (
            &["frames", "--timeline", "/nonexistent-dir/t.svg"],
            &["--timeline", "/nonexistent-dir/t.mutex_pool.svg"],
        ),
    ];
    for (args, needles) in cases {
        let out = throttle().args(*args).output().expect("runs");
        assert_usage_error(&out, needles);
    }
}

#[test]
#[cfg_attr(
    not(has_chromium),
    ignore = "chromium was not on PATH when the tests were built: apt-get install -y chromium"
)]
fn timelines_render_in_headless_chromium() {
    require("chromium", "chromium");
    let dir = workdir("chromium");
    let (_, svg) = traced_frames(&dir);
    for name in TRACED {
        let file = per_scheduler(&svg, name);
        let shot = dir.join(format!("{name}.png"));
        let out = chromium(&dir.join(format!("profile-{name}")))
            .arg("--window-size=1150,600")
            .arg(format!("--screenshot={}", shot.display()))
            .arg(format!("file://{}", file.display()))
            .output()
            .expect("chromium runs");
        let log = text(&out.stderr);
        let problems: Vec<&str> = log
            .lines()
            .filter(|l| l.contains(":CONSOLE") || l.contains("error on line"))
            .collect();
        assert!(problems.is_empty(), "{name}: {problems:?}");
        let bytes = std::fs::read(&shot).expect("screenshot written");
        assert_eq!(png_size(&bytes), (1150, 600));
        // A blank white page compresses to a few kB; the picture's lanes and text do not.
        assert!(
            bytes.len() > 20_000,
            "{name}: the screenshot looks blank ({} bytes)",
            bytes.len()
        );
        eprintln!("screenshot: {}", shot.display());
    }
}
