//! `throttle scan` as a hyperfine a user can switch to, driven as a real binary: quoted command
//! lines through a shell (and without one, `-N`), several commands compared with hyperfine's
//! summary, a plain benchmark, `--command-name`, the commands run around the measured ones,
//! `-m/-M`; and, when hyperfine is installed, both tools' JSON exports of the same commands
//! compared field by field. No test asserts anything about timing.

mod common;

use std::path::Path;

use serde_json::Value;

use common::{assert_usage_error, read_json, text, throttle, workdir};

/// `throttle scan ARGS`, which must succeed; returns its standard output.
fn scan_ok(args: &[&str]) -> String {
    let out = throttle().arg("scan").args(args).output().expect("runs");
    assert!(
        out.status.success(),
        "scan {args:?}: {}\n{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    text(&out.stdout)
}

fn json_of(path: &Path) -> Value {
    read_json(path)
}

#[test]
fn a_quoted_command_line_runs_through_a_shell_and_without_one_with_n() {
    let dir = workdir("quoted");
    let json = dir.join("q.json");
    let json_s = json.to_str().expect("utf-8");
    // `&&` and `|` need a shell: hyperfine's form runs the line through `sh -c`.
    scan_ok(&[
        "-L",
        "n",
        "1,2",
        "--runs",
        "1",
        "--warmup",
        "0",
        "--export-json",
        json_s,
        "test {n} -ge 1 && echo {n} | cat > /dev/null",
    ]);
    let v = json_of(&json);
    let results = v["results"].as_array().expect("results");
    assert_eq!(results.len(), 2);
    assert_eq!(
        results[1]["command"],
        "test 2 -ge 1 && echo 2 | cat > /dev/null"
    );
    assert_eq!(results[1]["parameters"]["n"], "2");
    // The same line after `--`, as one argument, is read the same way.
    scan_ok(&[
        "-L",
        "n",
        "1",
        "--runs",
        "1",
        "--warmup",
        "0",
        "--",
        "test {n} -ge 1 && true",
    ]);
    // `exit` is a shell builtin: through the shell it runs, with -N there is no such program.
    scan_ok(&["--runs", "1", "--warmup", "0", "exit 0"]);
    let out = throttle()
        .args(["scan", "-N", "--runs", "1", "--warmup", "0", "exit 0"])
        .output()
        .expect("runs");
    assert_usage_error(&out, &["'exit'", "no executable of that name on PATH"]);
    // -N splits with quotes: one argument 'a b' reaches the program whole.
    scan_ok(&["-N", "--runs", "1", "--warmup", "0", "test 'a b' = 'a b'"]);
    let out = throttle()
        .args([
            "scan",
            "-N",
            "--runs",
            "1",
            "--warmup",
            "0",
            "test 'a b' = 'a c'",
        ])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
}

#[test]
fn several_commands_are_compared_with_hyperfines_summary() {
    let dir = workdir("compare");
    let json = dir.join("c.json");
    let stdout = scan_ok(&[
        "--runs",
        "3",
        "--warmup",
        "0",
        "-n",
        "short",
        "--command-name",
        "long",
        "--export-json",
        json.to_str().expect("utf-8"),
        "sleep 0.01",
        "sleep 0.2",
    ]);
    assert!(stdout.contains("Summary: '"), "{stdout}");
    // hyperfine's relative column: the fastest command is 1.00.
    assert!(
        stdout.contains("relative") && stdout.contains(" 1.00 "),
        "{stdout}"
    );
    assert!(stdout.contains(" times faster than '"), "{stdout}");
    // Each ratio carries the one rule's verdict.
    assert!(
        stdout.contains("a real difference (Mann–Whitney")
            || stdout.contains("not told apart from noise"),
        "{stdout}"
    );
    let v = json_of(&json);
    assert_eq!(v["mode"], "commands");
    let results = v["results"].as_array().expect("results");
    let names: Vec<&str> = results
        .iter()
        .map(|r| r["command"].as_str().expect("a name"))
        .collect();
    assert_eq!(names, ["short", "long"]);
    for r in results {
        assert!(r.get("parameters").is_none(), "hyperfine writes none: {r}");
        assert_eq!(r["times"].as_array().map(Vec::len), Some(3));
    }
    // Several commands each over a parameter: every pair measured, named with the value
    // substituted (hyperfine 1.15 repeats the first name for the last pairs; we do not).
    let json2 = dir.join("c2.json");
    scan_ok(&[
        "--runs",
        "1",
        "--warmup",
        "0",
        "-P",
        "n",
        "1",
        "2",
        "-n",
        "first {n}",
        "-n",
        "second {n}",
        "--export-json",
        json2.to_str().expect("utf-8"),
        "echo a{n}",
        "echo b{n}",
    ]);
    let v = json_of(&json2);
    let pairs: Vec<(String, String)> = v["results"]
        .as_array()
        .expect("results")
        .iter()
        .map(|r| {
            (
                r["command"].as_str().expect("name").to_string(),
                r["parameters"]["n"].as_str().expect("value").to_string(),
            )
        })
        .collect();
    let want: Vec<(String, String)> = [
        ("first 1", "1"),
        ("second 1", "1"),
        ("first 2", "2"),
        ("second 2", "2"),
    ]
    .iter()
    .map(|(a, b)| (a.to_string(), b.to_string()))
    .collect();
    assert_eq!(pairs, want);
    // One command alone is a plain benchmark: no summary, no parameter.
    let stdout = scan_ok(&["--runs", "2", "--warmup", "0", "true"]);
    assert!(!stdout.contains("Summary"), "{stdout}");
    assert!(stdout.contains("benchmark of `true`"), "{stdout}");
}

#[test]
fn names_must_match_the_commands_and_every_scanned_command_has_the_placeholder() {
    let out = throttle()
        .args(["scan", "-n", "a", "true", "false", "--runs", "1"])
        .output()
        .expect("runs");
    assert_usage_error(&out, &["--command-name", "2 commands"]);
    let out = throttle()
        .args(["scan", "--procs", "1,2", "true", "false"])
        .output()
        .expect("runs");
    assert_usage_error(&out, &["several commands go without --procs"]);
    let out = throttle()
        .args(["scan", "-L", "n", "1,2", "true {n}", "false"])
        .output()
        .expect("runs");
    assert_usage_error(
        &out,
        &["'false'", "every command must contain the placeholder {n}"],
    );
    let out = throttle()
        .args(["scan", "-N", "--shell", "bash", "true"])
        .output()
        .expect("runs");
    assert_usage_error(&out, &["'-N'", "bash"]);
    let out = throttle()
        .args(["scan", "-n", "x", "-L", "n", "1,2", "true {n}"])
        .output()
        .expect("runs");
    assert_usage_error(
        &out,
        &["--command-name", "a scan's rows are named by their values"],
    );
    // --self-overhead measures `true` itself: a command given with it is an error, not ignored.
    let out = throttle()
        .args(["scan", "--self-overhead", "--", "sleep", "5"])
        .output()
        .expect("runs");
    assert_usage_error(&out, &["--self-overhead", "sleep 5"]);
}

#[test]
fn setup_prepare_conclude_and_cleanup_run_as_often_as_hyperfine_says() {
    let dir = workdir("hooks");
    let log = dir.join("log");
    let log_s = log.to_str().expect("utf-8");
    let hook = |tag: &str| format!("echo {tag}{{n}} >> '{log_s}'");
    // 2 values × (1 warm-up + 2 runs): setup and cleanup once per value, prepare and conclude
    // around all 6 runs.
    scan_ok(&[
        "-L",
        "n",
        "1,2",
        "-m",
        "2",
        "-M",
        "2",
        "--warmup",
        "1",
        "--setup",
        &hook("s"),
        "--prepare",
        &hook("p"),
        "--conclude",
        &hook("c"),
        "--cleanup",
        &hook("x"),
        "true {n}",
    ]);
    let text = std::fs::read_to_string(&log).expect("hooks wrote the log");
    let count = |line: &str| text.lines().filter(|l| *l == line).count();
    for n in ["1", "2"] {
        assert_eq!(count(&format!("s{n}")), 1, "{text}");
        assert_eq!(count(&format!("x{n}")), 1, "{text}");
        assert_eq!(count(&format!("p{n}")), 3, "{text}");
        assert_eq!(count(&format!("c{n}")), 3, "{text}");
    }
    // setup comes before the value's first prepare; cleanup after its last conclude.
    let lines: Vec<&str> = text.lines().collect();
    let at = |line: &str| lines.iter().position(|l| *l == line).expect("present");
    let last = |line: &str| lines.iter().rposition(|l| *l == line).expect("present");
    assert!(at("s1") < at("p1") && last("c1") < at("x1"), "{text}");
    // A failing hook fails the scan and names itself.
    let out = throttle()
        .args([
            "scan",
            "--runs",
            "1",
            "--warmup",
            "0",
            "--prepare",
            "false",
            "true",
        ])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(1));
    assert!(text_of(&out.stderr).contains("--prepare `false` exited with status 1"));
}

fn text_of(bytes: &[u8]) -> String {
    text(bytes)
}

/// hyperfine and `throttle scan` on the same commands: every field of hyperfine's export is
/// in ours with the same type, the commands, parameters, exit codes and run counts agree.
#[test]
#[cfg_attr(
    not(has_hyperfine),
    ignore = "hyperfine was not on PATH when the tests were built: apt-get install -y hyperfine"
)]
fn the_json_export_is_a_superset_of_hyperfines() {
    let dir = workdir("hyperfine");
    let cases: [&[&str]; 4] = [
        // Several commands, each scanned over a parameter: hyperfine's cross product.
        &[
            "--runs",
            "2",
            "--warmup",
            "0",
            "-L",
            "w",
            "x,y",
            "echo a{w}",
            "echo b{w}",
        ],
        &[
            "-N",
            "--runs",
            "3",
            "--warmup",
            "0",
            "-n",
            "t",
            "-n",
            "s",
            "true",
            "sleep 0.01",
        ],
        &[
            "--runs",
            "2",
            "--warmup",
            "0",
            "-P",
            "n",
            "1",
            "2",
            "sleep 0.0{n}",
        ],
        &["--runs", "2", "--warmup", "1", "-L", "w", "a,b", "echo {w}"],
    ];
    for (i, args) in cases.iter().enumerate() {
        let theirs = dir.join(format!("hf{i}.json"));
        let ours = dir.join(format!("ts{i}.json"));
        let out = std::process::Command::new("hyperfine")
            .args(["--style", "none", "--export-json"])
            .arg(&theirs)
            .args(*args)
            .output()
            .expect("hyperfine runs");
        assert!(
            out.status.success(),
            "hyperfine {args:?}: {}",
            text(&out.stderr)
        );
        let out = throttle()
            .arg("scan")
            .arg("--export-json")
            .arg(&ours)
            .args(*args)
            .output()
            .expect("throttle runs");
        assert!(out.status.success(), "scan {args:?}: {}", text(&out.stderr));
        let (h, t) = (read_json(&theirs), read_json(&ours));
        let (hr, tr) = (
            h["results"].as_array().expect("hyperfine results"),
            t["results"].as_array().expect("our results"),
        );
        assert_eq!(hr.len(), tr.len(), "{args:?}");
        for (a, b) in hr.iter().zip(tr) {
            let a = a.as_object().expect("object");
            for (key, value) in a {
                let ours = b
                    .get(key)
                    .unwrap_or_else(|| panic!("{args:?}: no `{key}` in {b}"));
                let kind = |v: &Value| match v {
                    Value::Null => "null",
                    Value::Bool(_) => "bool",
                    Value::Number(_) => "number",
                    Value::String(_) => "string",
                    Value::Array(_) => "array",
                    Value::Object(_) => "object",
                };
                // A standard deviation is null for one run in both; else the same kind.
                if !(key == "stddev" && (value.is_null() || ours.is_null())) {
                    assert_eq!(
                        kind(value),
                        kind(ours),
                        "{args:?}: `{key}`: {value} vs {ours}"
                    );
                }
                match key.as_str() {
                    "command" | "parameters" | "exit_codes" => {
                        assert_eq!(value, ours, "{args:?}: `{key}`")
                    }
                    "times" | "memory_usage_byte" => assert_eq!(
                        value.as_array().map(Vec::len),
                        ours.as_array().map(Vec::len),
                        "{args:?}: `{key}`"
                    ),
                    _ => {}
                }
            }
            if !a.contains_key("parameters") {
                assert!(b.get("parameters").is_none(), "{args:?}: {b}");
            }
        }
    }
}

#[test]
fn input_and_output_files_reach_the_command() {
    let dir = workdir("io");
    let (input, output) = (dir.join("in.txt"), dir.join("out.txt"));
    std::fs::write(&input, "three\nlines\nhere\n").expect("input written");
    scan_ok(&[
        "--runs",
        "2",
        "--warmup",
        "0",
        "--input",
        input.to_str().expect("utf-8"),
        "--output",
        output.to_str().expect("utf-8"),
        "cat; echo done",
    ]);
    // Created afresh for every run: one copy, not two.
    assert_eq!(
        std::fs::read_to_string(&output).expect("output written"),
        "three\nlines\nhere\ndone\n"
    );
    let out = throttle()
        .args(["scan", "--input", "/nonexistent-dir/in.txt", "cat"])
        .output()
        .expect("runs");
    assert_usage_error(&out, &["--input", "/nonexistent-dir/in.txt"]);
}

/// `--output pipe`: the command writes into a pipe (which the shell's `test -p` sees) that the
/// scan reads to the end, so output larger than a pipe's buffer (64 KiB) does not block it; with
/// the default `null` the same check fails.
#[test]
fn output_pipe_gives_the_command_a_pipe_that_is_read_to_the_end() {
    scan_ok(&[
        "--runs",
        "2",
        "--warmup",
        "0",
        "--output",
        "pipe",
        "test -p /dev/stdout && head -c 1000000 /dev/zero",
    ]);
    let out = throttle()
        .args([
            "scan",
            "--runs",
            "2",
            "--warmup",
            "0",
            "--output",
            "null",
            "test -p /dev/stdout",
        ])
        .output()
        .expect("runs");
    assert!(!out.status.success(), "{}", text(&out.stderr));
}

#[test]
fn time_unit_and_sort_order_the_table_as_hyperfine_does() {
    let dir = workdir("sort");
    let json = dir.join("s.json");
    let stdout = scan_ok(&[
        "--runs",
        "3",
        "--warmup",
        "0",
        "-u",
        "second",
        "--sort",
        "mean-time",
        "--export-json",
        json.to_str().expect("utf-8"),
        "sleep 0.05",
        "true",
    ]);
    // Every duration in seconds, zero included.
    assert!(
        !stdout.contains(" ms") && !stdout.contains(" µs"),
        "{stdout}"
    );
    // Sorted by the means the export itself reports (no assumption about which is faster).
    let v = read_json(&json);
    let means: Vec<f64> = v["results"]
        .as_array()
        .expect("results")
        .iter()
        .map(|r| r["mean"].as_f64().expect("a mean"))
        .collect();
    assert_eq!(means.len(), 2);
    assert!(means[0] <= means[1], "{means:?}");
}
