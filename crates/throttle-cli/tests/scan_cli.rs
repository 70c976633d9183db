//! `throttle scan` driven as a real binary on real parallel programs.
//!
//! The tests that run by default use programs every Linux machine has (coreutils'
//! `sort --parallel`, `sh`) or the project's own binary (`throttle __spin`). The tests on xz,
//! zstd, pigz and headless Chromium need Debian packages (`apt-get install -y xz-utils zstd pigz
//! chromium`): the build script (`build.rs`) looks for each program on PATH, and a test is
//! ignored only when its program was not found, with a reason that says so and what to install.
//! `.ci/run` installs the packages, so there they all run.
//! Inputs are small and runs few; no test asserts anything about timing.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command as StdCommand;

use predicates::prelude::*;

use common::{
    assert_usage_error, bin, chromium, png_size, read_json, require, text, throttle, workdir,
};

/// 1 MiB of mildly compressible bytes (an LCG stream with repeats), so compressors do real work.
fn input(dir: &Path) -> PathBuf {
    let mut x: u32 = 12345;
    let data: Vec<u8> = (0..1 << 20)
        .map(|i| {
            x = x.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            if i % 7 < 3 {
                b'a' + (i % 26) as u8
            } else {
                (x >> 24) as u8
            }
        })
        .collect();
    let path = dir.join("input.bin");
    std::fs::write(&path, data).unwrap();
    path
}

/// Lines of words (a few MiB), so `sort` has real work.
fn text_input(dir: &Path) -> PathBuf {
    let mut x: u32 = 777;
    let mut text = String::new();
    while text.len() < 4 << 20 {
        x = x.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        let word: String = (0..(x >> 28) + 3)
            .map(|i| (b'a' + ((x >> (i % 24)) % 26) as u8) as char)
            .collect();
        text.push_str(&word);
        text.push(if x % 5 == 0 { '\n' } else { ' ' });
    }
    let path = dir.join("words.txt");
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn sort_scan_writes_every_format() {
    let dir = workdir("sort");
    let file = text_input(&dir);
    scan_writes_every_format(
        &dir,
        &["sort", "--parallel={n}", "-S", "64M"],
        &file,
        "sort --parallel={n}",
    );
}

#[test]
#[cfg_attr(
    not(has_xz),
    ignore = "xz was not on PATH when the tests were built: apt-get install -y xz-utils"
)]
fn xz_scan_writes_every_format() {
    require("xz", "xz-utils");
    let dir = workdir("xz");
    let file = input(&dir);
    scan_writes_every_format(&dir, &["xz", "-T{n}", "-0", "-k", "-c"], &file, "xz -T{n}");
}

/// Scans `program` (with `{n}` in its arguments) over n = 1..3 on `file` and checks every export.
fn scan_writes_every_format(dir: &Path, program: &[&str], file: &Path, shown: &str) {
    let (json, csv, md, svg, html) = (
        dir.join("r.json"),
        dir.join("r.csv"),
        dir.join("r.md"),
        dir.join("r.svg"),
        dir.join("r.html"),
    );
    let out = throttle()
        .args(["scan", "-P", "n", "1", "3", "--runs", "2", "--warmup", "0"])
        .arg("--export-json")
        .arg(&json)
        .arg("--export-csv")
        .arg(&csv)
        .arg("--export-markdown")
        .arg(&md)
        .arg("--plot")
        .arg(&svg)
        .arg("--report")
        .arg(&html)
        .arg("--")
        .args(program)
        .arg(file)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let table = String::from_utf8(out).unwrap();
    for needle in [
        "wall median",
        "CPU/wall",
        "run-queue wait",
        "Karp–Flatt",
        "USL:",
        "Amdahl:",
        shown,
    ] {
        assert!(table.contains(needle), "table lacks {needle:?}:\n{table}");
    }

    let j = read_json(&json);
    let results = j["results"].as_array().unwrap();
    assert_eq!(results.len(), 3);
    for (r, n) in results.iter().zip(["1", "2", "3"]) {
        for key in [
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
            "throughput",
            "speedup",
            "cpu_per_wall",
            "runs",
        ] {
            assert!(r.get(key).is_some(), "result lacks {key}: {r}");
        }
        assert_eq!(r["parameters"]["n"], n);
        let flag = program[1].replace("{n}", n);
        assert_eq!(
            r["command"].as_str().unwrap().split(' ').nth(1).unwrap(),
            flag
        );
        assert_eq!(r["times"].as_array().unwrap().len(), 2);
        assert_eq!(r["exit_codes"], serde_json::json!([0, 0]));
        assert!(r["mean"].as_f64().unwrap() > 0.0);
        assert!(r["user"].as_f64().unwrap() > 0.0, "{shown} uses CPU time");
    }
    assert_eq!(j["partial"], false);
    let usl = &j["model"]["usl"];
    for key in ["lambda", "sigma", "kappa", "r_squared", "std_errors"] {
        assert!(usl.get(key).is_some(), "model.usl lacks {key}: {usl}");
    }
    let sigma = usl["sigma"].as_f64().unwrap();
    assert!((0.0..=1.0).contains(&sigma));
    assert!(j["model"]["amdahl"]["sigma"].is_f64());
    assert!(!j["model"]["summary"].as_str().unwrap().is_empty());

    let csv = std::fs::read_to_string(&csv).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert!(lines[0].starts_with("command,mean,stddev,median,user,system,min,max,parameter_n,"));
    assert_eq!(lines.len(), 4, "{csv}");
    let columns = lines[0].split(',').count();
    assert!(
        lines.iter().all(|l| l.split(',').count() == columns),
        "{csv}"
    );

    let md = std::fs::read_to_string(&md).unwrap();
    assert!(md.contains("| `n` |") && md.contains("**Model**"), "{md}");

    let svg = std::fs::read_to_string(&svg).unwrap();
    assert!(svg.contains("<svg") && svg.contains("</svg>"));
    assert!(
        svg.contains("USL fit") && svg.contains("Amdahl fit"),
        "legend missing"
    );
    assert!(svg.contains("<circle"), "no data points drawn");

    let html = std::fs::read_to_string(&html).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(html.contains("<svg") && html.contains("<table>"));
    assert!(
        !html.contains("<?xml"),
        "the inline SVG must not keep its XML declaration"
    );
    assert!(!html.contains("<script"), "no scripts");
    assert!(
        !html.contains("<link") && !html.contains("src=\"http"),
        "no network resources"
    );
}

#[test]
#[cfg_attr(
    not(has_zstd),
    ignore = "zstd was not on PATH when the tests were built: apt-get install -y zstd"
)]
fn zstd_scan_list_json() {
    require("zstd", "zstd");
    let dir = workdir("zstd");
    let file = input(&dir);
    let json = dir.join("z.json");
    throttle()
        .args([
            "scan",
            "-L",
            "t",
            "1,2,4",
            "--runs",
            "2",
            "--warmup",
            "0",
            "--export-json",
        ])
        .arg(&json)
        .args(["--", "zstd", "-q", "-T{t}", "-c"])
        .arg(&file)
        .assert()
        .success()
        .stdout(predicate::str::contains("zstd -q -T{t} -c"));
    let j = read_json(&json);
    let labels: Vec<&str> = j["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["parameters"]["t"].as_str().unwrap())
        .collect();
    assert_eq!(labels, ["1", "2", "4"]);
    assert!(j["model"]["usl"]["lambda"].as_f64().unwrap() > 0.0);
    assert!(j["machine"]["logical_cpus"].as_u64().unwrap() >= 1);
}

#[test]
#[cfg_attr(
    not(has_pigz),
    ignore = "pigz was not on PATH when the tests were built: apt-get install -y pigz"
)]
fn pigz_scan_csv_and_adaptive_runs() {
    require("pigz", "pigz");
    let dir = workdir("pigz");
    let file = input(&dir);
    let csv = dir.join("p.csv");
    throttle()
        .args([
            "scan",
            "-P",
            "p",
            "1",
            "2",
            "--min-runs",
            "3",
            "--max-runs",
            "4",
            "--warmup",
            "1",
            "--export-csv",
        ])
        .arg(&csv)
        .args(["--", "pigz", "-p", "{p}", "-c"])
        .arg(&file)
        .assert()
        .success();
    let csv = std::fs::read_to_string(&csv).unwrap();
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let runs_col = header.iter().position(|h| *h == "runs").unwrap();
    for line in csv.lines().skip(1) {
        let runs: usize = line.split(',').nth(runs_col).unwrap().parse().unwrap();
        assert!(
            (3..=4).contains(&runs),
            "adaptive runs out of bounds: {line}"
        );
    }
}

#[test]
fn procs_mode_runs_concurrent_copies() {
    // The project's own CPU-bound kernel as the copy, so this runs on every machine.
    let spin = bin();
    let dir = workdir("procs");
    let json = dir.join("k.json");
    throttle()
        .args([
            "scan",
            "--procs",
            "1,2,3",
            "--runs",
            "2",
            "--warmup",
            "0",
            "--export-json",
        ])
        .arg(&json)
        .arg("--")
        .arg(&spin)
        .args(["__spin", "--iterations", "20000000"])
        .assert()
        .success()
        .stdout(predicate::str::contains("concurrent copies K = 1,2,3"));
    let j = read_json(&json);
    assert_eq!(j["mode"], "procs");
    let r3 = &j["results"][2];
    assert_eq!(r3["copies"], 3);
    // Three copies do three times the work: their summed CPU time exceeds one copy's.
    let cpu1 = j["results"][0]["cpu_median"].as_f64().unwrap();
    let cpu3 = r3["cpu_median"].as_f64().unwrap();
    assert!(cpu3 > 1.5 * cpu1, "cpu1 {cpu1} cpu3 {cpu3}");
    assert_eq!(j["model"]["throughput_unit"], "copies/s");
}

/// Bad usage: one line on stderr naming the flag, exit status 2, nothing run.
#[test]
fn bad_input_is_one_line_and_exit_2() {
    let cases: &[(&[&str], &str)] = &[
        (
            &["-P", "n", "4", "1", "--", "true", "{n}"],
            "MIN must not be greater than MAX",
        ),
        (
            &["-P", "n", "1", "4", "-D", "0", "--", "true", "{n}"],
            "'-D'",
        ),
        (
            &["-P", "n", "1", "x", "--", "true", "{n}"],
            "expected an integer",
        ),
        (&["-P", "n", "1", "4", "--", "true"], "placeholder {n}"),
        (
            &["-L", "n", "1,2", "--", "no-such-program-xyz", "{n}"],
            "cannot be started",
        ),
        (&["--procs", "0,2", "--", "true"], "'--procs'"),
        // Without -P/-L/--procs the command is a plain benchmark (as in hyperfine), so the
        // bad input here is a step with nothing to step.
        (&["-D", "2", "--", "true"], "-D only goes with -P"),
        (&["-P", "n", "1", "2"], "give the command"),
        (
            &[
                "-P",
                "n",
                "1",
                "2",
                "--export-json",
                "/nonexistent-dir/x.json",
                "--",
                "true",
                "{n}",
            ],
            "'--export-json'",
        ),
    ];
    for (args, needle) in cases {
        let out = throttle().arg("scan").args(*args).output().unwrap();
        assert_usage_error(&out, &[*needle]);
        assert!(out.stdout.is_empty(), "{args:?}: nothing should run");
    }
}

#[test]
fn failing_command_shows_exit_code_and_ignore_failure_goes_on() {
    throttle()
        .args([
            "scan", "-L", "c", "0,3", "--runs", "1", "--warmup", "0", "--", "sh", "-c", "exit {c}",
        ])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("exited with status 3"))
        .stderr(predicate::str::contains("--ignore-failure"));
    let dir = workdir("fail");
    let json = dir.join("f.json");
    throttle()
        .args([
            "scan",
            "-L",
            "c",
            "0,3",
            "--runs",
            "2",
            "--warmup",
            "0",
            "-i",
            "--export-json",
        ])
        .arg(&json)
        .args(["--", "sh", "-c", "exit {c}"])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "2 of 2 runs failed (exit 3, exit 3)",
        ));
    let j = read_json(&json);
    assert_eq!(j["results"][1]["exit_codes"], serde_json::json!([3, 3]));
}

#[test]
fn shell_mode_runs_pipelines() {
    throttle()
        .args([
            "scan",
            "--shell",
            "-L",
            "n",
            "1,2",
            "--runs",
            "1",
            "--warmup",
            "0",
            "--",
            "echo {n} | cat",
        ])
        .assert()
        .success()
        .stdout(predicate::str::contains("echo {n} | cat"));
}

#[test]
fn values_that_are_not_counts_get_no_model_and_say_why() {
    let dir = workdir("not-counts");
    let json = dir.join("r.json");
    throttle()
        .args([
            "scan",
            "-P",
            "n",
            "-1",
            "2",
            "--runs",
            "1",
            "--warmup",
            "0",
            "--export-json",
        ])
        .arg(&json)
        .args(["--", "echo", "{n}"])
        .assert()
        .success()
        .stdout(predicate::str::contains("No scalability model"));
    let v = read_json(&json);
    assert!(v["model"].is_null(), "model: {}", v["model"]);
    assert_eq!(v["results"].as_array().map(Vec::len), Some(4));
}

#[test]
fn help_documents_scan() {
    throttle()
        .args(["scan", "--help"])
        .assert()
        .success()
        .stdout(predicate::str::contains("Universal Scalability Law"))
        .stdout(predicate::str::contains("--procs"))
        .stdout(predicate::str::contains("Karp–Flatt"))
        .stdout(predicate::str::contains("--self-overhead"));
}

/// Headless Chromium screenshot of a blank page of the same size, for comparison.
fn chromium_screenshot(url: &str, png: &Path, profile: &Path) {
    let out = chromium(profile)
        .arg(format!("--screenshot={}", png.display()))
        .arg("--window-size=1200,1600")
        .arg(url)
        .output()
        .expect("chromium runs");
    assert!(
        png.is_file(),
        "chromium wrote no screenshot for {url}: {}",
        text(&out.stderr)
    );
}

#[test]
#[cfg_attr(
    not(has_chromium),
    ignore = "chromium was not on PATH when the tests were built: apt-get install -y chromium"
)]
fn html_report_renders_in_headless_chromium() {
    require("chromium", "chromium");
    let dir = workdir("chromium");
    let html = dir.join("report.html");
    throttle()
        .args([
            "scan", "-L", "n", "1,2,3", "--runs", "2", "--warmup", "0", "--report",
        ])
        .arg(&html)
        .args([
            "--",
            "sh",
            "-c",
            "i=0; while [ $i -lt $((2000 / {n})) ]; do i=$((i+1)); done",
        ])
        .assert()
        .success();
    let url = format!("file://{}", html.display());

    let dom = chromium(&dir.join("profile-dom"))
        .arg("--dump-dom")
        .arg(&url)
        .output()
        .expect("chromium runs");
    let dom = text(&dom.stdout);
    assert!(
        dom.contains("<svg"),
        "the SVG plot is not in the rendered DOM:\n{dom}"
    );
    assert!(dom.contains("USL fit"), "the plot legend is not in the DOM");
    assert!(dom.contains("<table>"), "the table is not in the DOM");

    let shot = dir.join("report.png");
    chromium_screenshot(&url, &shot, &dir.join("profile-shot"));
    let blank_html = dir.join("blank.html");
    std::fs::write(&blank_html, "<!DOCTYPE html><html><body></body></html>").unwrap();
    let blank = dir.join("blank.png");
    chromium_screenshot(
        &format!("file://{}", blank_html.display()),
        &blank,
        &dir.join("profile-blank"),
    );
    let (shot_bytes, blank_bytes) = (
        std::fs::read(&shot).unwrap(),
        std::fs::read(&blank).unwrap(),
    );
    assert_eq!(png_size(&shot_bytes), png_size(&blank_bytes));
    // A blank page compresses to almost nothing; text, a table and two charts do not.
    assert!(
        shot_bytes.len() > 5 * blank_bytes.len(),
        "the screenshot looks blank: {} bytes vs {} for an empty page",
        shot_bytes.len(),
        blank_bytes.len()
    );
}

#[test]
fn ctrl_c_exports_partial_results() {
    let dir = workdir("interrupt");
    let json = dir.join("i.json");
    // Every run appends a line as it starts.
    let started = dir.join("started");
    let runs_per_value = 1000;
    let child = StdCommand::new(bin())
        .args(["scan", "-L", "n", "1,2", "--warmup", "0"])
        .args(["--runs", &runs_per_value.to_string()])
        .arg("--export-json")
        .arg(&json)
        .args([
            "--",
            "sh",
            "-c",
            &format!("echo {{n}} >> '{}'; sleep 0.05", started.display()),
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let _guard = common::KillOnPanic(child.id() as i32);
    // Two runs started: the first has ended and is kept (a run starts only after the one
    // before it was recorded). Then SIGINT to the profiler alone (as Ctrl-C would, minus the
    // child, which the profiler discards anyway).
    common::wait_until("the scan starts its second run", || {
        std::fs::read_to_string(&started).is_ok_and(|s| s.lines().count() >= 2)
    });
    common::signal(child.id() as i32, libc::SIGINT);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", text(&out.stderr));
    let j = read_json(&json);
    assert_eq!(j["partial"], true);
    let runs: usize = j["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["times"].as_array().unwrap().len())
        .sum();
    assert!(
        runs > 0 && runs < 2 * runs_per_value,
        "{runs} runs of {}",
        2 * runs_per_value
    );
}

/// Copies that share nothing, past the CPU count: the model's reading names the CPUs as the
/// limit and never says a flat or falling curve "keeps rising".
#[test]
fn procs_past_the_cpu_count_name_the_cpus_in_the_model() {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let levels: Vec<String> = [1, cpus, cpus + 1, cpus + 2]
        .iter()
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .map(|k| k.to_string())
        .collect();
    let dir = workdir("procs-model");
    let json = dir.join("m.json");
    throttle()
        .args([
            "scan",
            "--procs",
            &levels.join(","),
            "--runs",
            "2",
            "--warmup",
            "0",
        ])
        .arg("--export-json")
        .arg(&json)
        .arg("--")
        .arg(bin())
        .args(["__spin", "--iterations", "50000000"])
        .assert()
        .success();
    let j = read_json(&json);
    let summary = j["model"]["summary"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(summary.contains("passes the"), "{summary}");
    assert!(!summary.contains("keeps rising"), "{summary}");
}
