//! The `throttle` binary driven as a user would: every experiment in a small, quick configuration,
//! its table, JSON, CSV and SVG checked; bad input rejected with one line and exit status 2.

mod common;

use std::path::Path;
use std::process::Output;

use serde_json::Value;

use common::{assert_usage_error, read_json, text, throttle};

/// A file `name` in a directory of its own, removed with the value unless the test fails.
fn temp(name: &str) -> common::TempFile {
    common::temp_file(name)
}

fn run_ok(args: &[&str]) -> Output {
    let out = throttle().args(args).output().expect("runs");
    assert!(
        out.status.success(),
        "{args:?} failed: {}\n{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    out
}

/// A minimal well-formedness check: every opened tag is closed in order.
fn assert_well_formed_xml(doc: &str) {
    let start = doc.find("<svg").expect("an <svg> element");
    let mut stack: Vec<String> = Vec::new();
    let mut rest = &doc[start..];
    while let Some(open) = rest.find('<') {
        rest = &rest[open..];
        if rest.starts_with("<!--") {
            let end = rest.find("-->").expect("comment closed");
            rest = &rest[end + 3..];
            continue;
        }
        let end = rest.find('>').expect("tag closed");
        let tag = &rest[1..end];
        if let Some(name) = tag.strip_prefix('/') {
            let top = stack.pop().expect("closing tag has an opener");
            assert_eq!(top, name.trim(), "mismatched tags");
        } else if !tag.ends_with('/') && !tag.starts_with('?') && !tag.starts_with('!') {
            let name = tag.split_whitespace().next().unwrap_or_default();
            stack.push(name.to_string());
        }
        rest = &rest[end + 1..];
    }
    assert!(stack.is_empty(), "unclosed tags: {stack:?}");
    assert!(doc.trim_end().ends_with("</svg>"));
}

fn closed_form(tasks: u128, chunk: u128) -> u128 {
    let n = tasks * chunk;
    n * (n + 1) / 2
}

#[test]
fn sum_prints_the_seed_line() {
    let out = run_ok(&["sum", "2", "--tasks", "8", "--chunk", "20000"]);
    let stdout = text(&out.stdout);
    let line = stdout.trim_end_matches('\n');
    assert!(line.starts_with("    2 -- "), "{stdout:?}");
    let secs: f64 = line["    2 -- ".len()..].parse().expect("seconds");
    assert!(secs >= 0.0);
    assert_eq!(line.split('.').nth(1).map(str::len), Some(3), "{line}");
}

#[test]
fn sum_verbose_pool_json_checks_the_sum() {
    let json = temp("sum.json");
    let out = run_ok(
        &[
            "sum",
            "0",
            "--mode",
            "pool",
            "--tasks",
            "16",
            "--chunk",
            "5000",
            "--verbose",
            "--json",
        ]
        .iter()
        .copied()
        .chain([json.to_str().expect("utf-8 path")])
        .collect::<Vec<_>>(),
    );
    let stdout = text(&out.stdout);
    assert!(stdout.starts_with("    0 -- "), "{stdout}");
    assert!(stdout.contains("ok"), "{stdout}");
    let v = read_json(&json);
    let expected = closed_form(16, 5000).to_string();
    assert_eq!(
        v["parameters"]["expected_sum"],
        Value::String(expected.clone())
    );
    let row = &v["sections"][0]["rows"][0];
    assert_eq!(row["check"]["got"], Value::String(expected));
    assert_eq!(row["check"]["ok"], Value::Bool(true));
    assert_eq!(row["series"], "pool");
}

#[test]
fn sweep_quick_writes_every_format() {
    let (json, csv, svg) = (temp("sweep.json"), temp("sweep.csv"), temp("sweep.svg"));
    let out = run_ok(&[
        "sweep",
        "--quick",
        "--levels",
        "1,2,0",
        "--tasks",
        "16",
        "--chunk",
        "20000",
        "--json",
        json.to_str().expect("utf-8"),
        "--csv",
        csv.to_str().expect("utf-8"),
        "--plot",
        svg.to_str().expect("utf-8"),
    ]);
    let table = text(&out.stdout);
    for needle in [
        "wall median",
        "run-queue wait",
        "speedup",
        "efficiency",
        "◀ best",
        "threads",
        "pool",
    ] {
        assert!(table.contains(needle), "missing {needle:?} in\n{table}");
    }
    // The peak is stated either as a single level or as a plateau, by the test's verdict.
    assert!(
        table.contains("It peaks at") || table.contains("The fastest median is at"),
        "{table}"
    );

    let v = read_json(&json);
    assert_eq!(v["schema_version"], 1);
    assert_eq!(v["experiment"], "sweep");
    assert_eq!(v["partial"], false);
    assert!(v["machine"]["topology"]["logical_cpus"]
        .as_u64()
        .is_some_and(|n| n >= 1));
    let expected = closed_form(16, 20000).to_string();
    assert_eq!(
        v["parameters"]["expected_sum"],
        Value::String(expected.clone())
    );
    let rows = v["sections"][0]["rows"].as_array().expect("rows");
    assert_eq!(rows.len(), 6, "3 levels × 2 modes");
    assert_eq!(rows.iter().filter(|r| r["best"] == true).count(), 1);
    for row in rows {
        for field in [
            "series",
            "level",
            "label",
            "wall",
            "wall_runs",
            "user",
            "system",
            "cpu_per_wall",
            "voluntary_switches",
            "involuntary_switches",
            "run_queue_wait",
            "speedup",
            "efficiency",
        ] {
            assert!(row.get(field).is_some(), "row lacks {field}: {row}");
        }
        assert_eq!(row["wall"]["count"], 3);
        assert_eq!(row["wall_runs"].as_array().map(Vec::len), Some(3));
        assert_eq!(row["check"]["got"], Value::String(expected.clone()));
        assert_eq!(row["check"]["ok"], true);
    }
    assert!(v["findings"].as_array().is_some_and(|f| !f.is_empty()));

    let csv_text = std::fs::read_to_string(&csv).expect("CSV written");
    let mut lines = csv_text.lines();
    let header: Vec<&str> = lines.next().expect("header").split(',').collect();
    for col in [
        "experiment",
        "series",
        "level",
        "wall_median_s",
        "user_s",
        "system_s",
        "run_queue_wait_s",
        "speedup",
        "efficiency",
        "best",
        "check_ok",
    ] {
        assert!(header.contains(&col), "CSV lacks {col}: {header:?}");
    }
    let body: Vec<&str> = lines.collect();
    assert_eq!(body.len(), 6);
    assert!(body.iter().all(|l| l.split(',').count() == header.len()));

    assert_well_formed_xml(&std::fs::read_to_string(&svg).expect("SVG written"));
}

#[test]
fn overhead_quick() {
    let json = temp("overhead.json");
    let out = run_ok(&[
        "overhead",
        "--quick",
        "--reps",
        "1",
        "--json",
        json.to_str().expect("utf-8"),
    ]);
    let table = text(&out.stdout);
    assert!(table.contains("(a)") && table.contains("(b)"), "{table}");
    assert!(table.contains("jobs/s") && table.contains("user:sys"));
    assert!(table.contains("Point A"), "{table}");
    let v = read_json(&json);
    let sections = v["sections"].as_array().expect("sections");
    assert_eq!(sections.len(), 2);
    assert_eq!(sections[0]["id"], "trivial_jobs");
    assert_eq!(sections[1]["id"], "job_length");
    let lengths: Vec<u64> = sections[1]["rows"]
        .as_array()
        .expect("rows")
        .iter()
        .filter_map(|r| r["level"].as_u64())
        .collect();
    assert!(lengths.contains(&10) && lengths.contains(&1_000_000));
    assert!(sections[0]["rows"][0]["metrics"]["jobs_per_sec"]
        .as_f64()
        .is_some_and(|r| r > 0.0));
}

#[test]
fn frames_quick_checks_every_scheduler() {
    let (json, svg) = (temp("frames.json"), temp("frames.svg"));
    let out = run_ok(&[
        "frames",
        "--quick",
        "--meshes",
        "200",
        "--vertices",
        "50",
        "--frames",
        "20",
        "--json",
        json.to_str().expect("utf-8"),
        "--plot",
        svg.to_str().expect("utf-8"),
    ]);
    let table = text(&out.stdout);
    for needle in [
        "serial",
        "mutex_pool",
        "event_pool",
        "locked_queue",
        "throttle",
        "frames/s",
        "wake-ups/s",
    ] {
        assert!(table.contains(needle), "missing {needle:?} in\n{table}");
    }
    let v = read_json(&json);
    let rows = v["sections"][0]["rows"].as_array().expect("rows");
    assert_eq!(rows.len(), 6);
    for row in rows {
        assert_eq!(row["check"]["ok"], true, "{row}");
        for m in [
            "frames_per_sec",
            "ratio_to_ideal",
            "avg_concurrency",
            "wakeups_per_sec",
        ] {
            assert!(row["metrics"][m].as_f64().is_some(), "{m} missing in {row}");
        }
    }
    assert_well_formed_xml(&std::fs::read_to_string(&svg).expect("SVG written"));
}

#[test]
fn procs_quick_builtin_and_command() {
    let csv = temp("procs.csv");
    let out = run_ok(&[
        "procs",
        "--quick",
        "--max",
        "2",
        "--ms",
        "30",
        "--csv",
        csv.to_str().expect("utf-8"),
    ]);
    let table = text(&out.stdout);
    assert!(
        table.contains("CPU/process") && table.contains("concurrent processes"),
        "{table}"
    );
    let csv_text = std::fs::read_to_string(&csv).expect("CSV");
    assert_eq!(
        csv_text.lines().count(),
        3,
        "header + levels 1 and 2:\n{csv_text}"
    );
    assert!(csv_text
        .lines()
        .next()
        .is_some_and(|h| h.contains("cpu_per_process_s")));

    let out = run_ok(&[
        "procs", "--max", "2", "--reps", "1", "--json", "-", "--", "true",
    ]);
    let v: Value = serde_json::from_slice(&out.stdout).expect("JSON on stdout");
    assert_eq!(v["parameters"]["command"][0], "true");
    assert!(
        text(&out.stderr).contains("concurrent processes"),
        "table goes to stderr"
    );

    let out = throttle()
        .args(["procs", "--max", "1", "--reps", "1", "--", "false"])
        .output()
        .expect("runs");
    assert_eq!(
        out.status.code(),
        Some(1),
        "a failing command fails the run"
    );
    assert!(text(&out.stderr).contains("exit status 1"));
}

#[test]
fn topology_json() {
    let out = run_ok(&["topology"]);
    assert!(text(&out.stdout).contains("recommended concurrency"));
    let out = run_ok(&["topology", "--json", "-"]);
    let v: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(v["experiment"], "topology");
    assert!(v["machine"]["topology"]["recommended"]
        .as_u64()
        .is_some_and(|n| n >= 1));
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    let cases: &[(&[&str], &[&str])] = &[
        (&["sum", "65"], &["'65'", "<N>", "0..=64"]),
        (&["sum", "-1"], &["'-1'", "<N>"]),
        (&["sum", "abc"], &["'abc'", "<N>"]),
        (&["sweep", "--levels", "2,x"], &["'2,x'", "--levels"]),
        (&["sweep", "--levels", "1,65"], &["--levels", "65"]),
        (
            &["sweep", "--levels", "99999999999999999999"],
            &["--levels", "too large"],
        ),
        (&["procs", "--max", "0"], &["'0'", "--max"]),
        (
            &["sweep", "--json", "/nonexistent-dir/out.json"],
            &["--json", "/nonexistent-dir/out.json"],
        ),
        (
            &["frames", "--plot", "/nonexistent-dir/p.svg"],
            &["--plot", "/nonexistent-dir/p.svg"],
        ),
        (
            &["sweep", "--modes", "threads,bogus"],
            &["bogus", "--modes"],
        ),
        // Numbers out of range: one line naming the flag and the value, never a panic.
        (&["sweep", "--seconds", "1e300"], &["'1e300'", "--seconds"]),
        (&["sweep", "--seconds", "1e20"], &["'1e20'", "--seconds"]),
        (&["sweep", "--seconds", "-3"], &["'-3'", "--seconds"]),
        (&["sweep", "--levels", "-1"], &["'-1'", "--levels"]),
        (&["sweep", "--reps", "-2"], &["'-2'", "--reps"]),
        (&["sum", "2", "--tasks", "-5"], &["'-5'", "--tasks"]),
        (&["frames", "--threads", "-1"], &["'-1'", "--threads"]),
        (&["procs", "--ms", "0"], &["'0'", "--ms"]),
        (&["scan", "--runs", "-1", "--", "true"], &["'-1'", "--runs"]),
        (
            &[
                "scan",
                "-L",
                "n",
                "1,2",
                "--max-runs",
                "0",
                "--",
                "true",
                "{n}",
            ],
            &["'0'", "--max-runs"],
        ),
        (
            &[
                "scan",
                "-L",
                "n",
                "1,2",
                "--max-runs",
                "2",
                "--",
                "true",
                "{n}",
            ],
            &["'2'", "--max-runs", "--min-runs"],
        ),
        // A mistyped option before `--` is an unknown option, not the command.
        (
            &[
                "scan",
                "-L",
                "n",
                "1,2",
                "--export-jsn",
                "x.json",
                "--",
                "true",
                "{n}",
            ],
            &["unknown option", "'--export-jsn'"],
        ),
        // A command that cannot start is bad input in procs as in scan.
        (
            &[
                "procs",
                "--max",
                "1",
                "--reps",
                "1",
                "--",
                "/no/such/program",
            ],
            &["CMD", "/no/such/program"],
        ),
        (
            &[
                "scan",
                "--procs",
                "1",
                "--runs",
                "1",
                "--",
                "/no/such/program",
            ],
            &["CMD", "/no/such/program"],
        ),
    ];
    for (args, needles) in cases {
        let out = throttle().args(*args).output().expect("runs");
        let stderr = assert_usage_error(&out, needles);
        assert!(!stderr.contains("panicked"), "{stderr}");
        assert!(
            out.stdout.is_empty(),
            "{args:?} measured something before failing"
        );
    }
}

/// The default levels shrink to fit a small --tasks instead of blaming a flag the user never gave.
#[test]
fn sweep_with_few_tasks_uses_the_levels_that_fit() {
    let json = temp("few-tasks.json");
    run_ok(&[
        "sweep",
        "--tasks",
        "1",
        "--chunk",
        "1000",
        "--reps",
        "1",
        "--json",
        json.to_str().expect("utf-8"),
    ]);
    let v = read_json(&json);
    assert_eq!(v["parameters"]["levels"], serde_json::json!([1, 0]));
}

/// `--json -` (experiments) and `--export-json -` (scan) both mean standard output, with the
/// table moved to standard error.
#[test]
fn dash_means_stdout_for_every_json_flag() {
    let out = run_ok(&[
        "sweep", "--levels", "1", "--tasks", "2", "--chunk", "1000", "--reps", "1", "--modes",
        "pool", "--json", "-",
    ]);
    let v: Value = serde_json::from_slice(&out.stdout).expect("JSON on stdout");
    assert_eq!(v["experiment"], "sweep");
    assert!(text(&out.stderr).contains("wall median"));
    let out = run_ok(&[
        "scan",
        "-L",
        "n",
        "1,2",
        "--runs",
        "1",
        "--warmup",
        "0",
        "--export-json",
        "-",
        "--",
        "true",
        "{n}",
    ]);
    let v: Value = serde_json::from_slice(&out.stdout).expect("JSON on stdout");
    assert_eq!(v["results"].as_array().map(Vec::len), Some(2));
    assert!(text(&out.stderr).contains("wall median"));
    assert!(!Path::new("-").exists(), "no file named '-' was written");
}

/// The scan help's examples keep their `{NAME}` placeholders (clap reads `{n}` as a line break).
#[test]
fn scan_help_examples_are_intact() {
    let out = run_ok(&["scan", "--help"]);
    let help = text(&out.stdout);
    assert!(
        help.contains("throttle scan -P threads 1 4 -- xz -T{threads} -k -c -3 data.bin"),
        "{help}"
    );
    for line in help
        .lines()
        .filter(|l| l.trim_start().starts_with("throttle scan -"))
    {
        assert!(!line.ends_with("-T"), "mangled example: {line}");
    }
}

/// A narrow terminal drops low-priority columns and says so; a pipe keeps them all.
#[test]
fn tables_fit_the_terminal_width() {
    let args = [
        "sweep", "--levels", "1,2", "--tasks", "2", "--chunk", "1000", "--reps", "1",
    ];
    let wide = text(&run_ok(&args).stdout);
    assert!(wide.contains("invol. sw"), "{wide}");
    let out = throttle()
        .args(args)
        .env("COLUMNS", "80")
        .output()
        .expect("runs");
    assert!(out.status.success());
    let narrow = text(&out.stdout);
    assert!(narrow.contains("left out to fit 80"), "{narrow}");
    let widest = narrow
        .lines()
        .filter(|l| l.starts_with('│') || l.starts_with('┌'))
        .map(|l| l.chars().count())
        .max()
        .expect("a table");
    assert!(widest <= 80, "{narrow}");
}

/// `cargo doc` must not document two crates named `throttle` into one directory.
#[test]
fn binary_is_not_documented_over_the_library() {
    let manifest = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml"))
        .expect("manifest");
    let bin = manifest.split("[[bin]]").nth(1).expect("a [[bin]] section");
    assert!(bin.contains("doc = false"), "{bin}");
}

#[test]
fn help_explains_the_seeds() {
    let out = run_ok(&["sweep", "--help"]);
    let help = text(&out.stdout);
    assert!(
        help.contains("seed 000") && help.contains("set_concurrency"),
        "{help}"
    );
    let out = run_ok(&["--help"]);
    let top = text(&out.stdout);
    for sub in [
        "report", "sum", "sweep", "overhead", "frames", "procs", "topology", "scan",
    ] {
        assert!(top.contains(sub));
    }
    // The main job is named once, "seed" is said once what it means, and no issue number
    // leaks into the help of any subcommand.
    assert_eq!(top.to_lowercase().matches("main job").count(), 1, "{top}");
    assert!(top.contains("starting experiments"), "{top}");
    for sub in [
        "report", "sum", "sweep", "overhead", "frames", "procs", "topology", "scan", "adapt",
    ] {
        let help = text(&run_ok(&[sub, "--help"]).stdout);
        assert!(!help.to_lowercase().contains("issue"), "{sub}: {help}");
    }
}

/// Busy loops beside the sweep, one per CPU: the sweep's answer says that other programs kept
/// CPUs busy instead of presenting disturbed numbers as the machine's.
#[test]
fn sweep_detects_outside_load() {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut hogs: Vec<std::process::Child> = (0..cpus)
        .map(|_| {
            std::process::Command::new("sh")
                .args(["-c", "while :; do :; done"])
                .spawn()
                .expect("sh starts")
        })
        .collect();
    let hog_guards: Vec<common::KillOnPanic> = hogs
        .iter()
        .map(|h| common::KillOnPanic(h.id() as i32))
        .collect();
    // The loops are going before the sweep starts measuring: each has used CPU time.
    for hog in &hogs {
        common::wait_until("a busy loop runs", || cpu_ticks(hog.id()) > 0);
    }
    let json = temp("outside-load.json");
    let out = throttle()
        .args([
            "sweep",
            "--levels",
            "1,2",
            "--tasks",
            "4",
            "--chunk",
            "2000000",
            "--reps",
            "2",
            "--json",
            json.to_str().expect("utf-8"),
        ])
        .output();
    for hog in &mut hogs {
        let _ = hog.kill();
        let _ = hog.wait();
    }
    drop(hog_guards);
    let out = out.expect("runs");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v = read_json(&json);
    assert!(v["parameters"]["outside_load_cpus"]
        .as_f64()
        .is_some_and(|x| x > 0.2));
    let findings = v["findings"].to_string();
    assert!(findings.contains("other programs kept"), "{findings}");
    assert!(findings.contains("Recommendation: run "), "{findings}");
}

/// The user and system CPU time of process `pid` in clock ticks (`/proc/PID/stat` fields 14
/// and 15); 0 once it is gone.
fn cpu_ticks(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| {
            // The fields after the command name; utime and stime are the 12th and 13th.
            let rest = stat.rsplit_once(')')?.1;
            let f: Vec<&str> = rest.split_whitespace().collect();
            Some(f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?)
        })
        .unwrap_or(0)
}

/// `--markdown` is the one Markdown writer scan also uses: the same table, for any experiment.
#[test]
fn experiments_write_markdown() {
    let out = run_ok(&[
        "sweep",
        "--levels",
        "1,2",
        "--tasks",
        "2",
        "--chunk",
        "1000",
        "--reps",
        "1",
        "--markdown",
        "-",
    ]);
    let md = text(&out.stdout);
    assert!(md.contains("| mode | concurrent tasks |"), "{md}");
    assert!(md.contains("|:---|---:|"), "{md}");
    assert!(md.contains("**Notes**"), "{md}");
    assert!(
        text(&out.stderr).contains("wall median"),
        "the table goes to standard error"
    );
}

/// A program that does not exist gets one wording from every subcommand that runs commands.
#[test]
fn a_missing_program_is_worded_the_same_by_scan_and_procs() {
    let scan = throttle()
        .args(["scan", "-L", "n", "1", "--", "no-such-program-xyz", "{n}"])
        .output()
        .expect("runs");
    let procs = throttle()
        .args([
            "procs",
            "--max",
            "1",
            "--reps",
            "1",
            "--",
            "no-such-program-xyz",
        ])
        .output()
        .expect("runs");
    let line = |out: &Output| {
        assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
        text(&out.stderr).trim().to_string()
    };
    let (scan, procs) = (line(&scan), line(&procs));
    assert_eq!(scan, procs);
    assert!(
        scan.contains("'no-such-program-xyz'")
            && scan.contains("no executable of that name on PATH"),
        "{scan}"
    );
}
