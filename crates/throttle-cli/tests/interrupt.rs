//! Ctrl-C and SIGTERM as a user sends them (a terminal, `timeout`, a process group): the
//! binary stops between measurements, keeps what it measured (marked partial, exit status
//! 130 or 143), and says so once, naming the signal.

mod common;

use std::process::Output;

use common::{bin, read_json, text};

/// A file `name` in a directory of its own, removed with the value unless the test fails.
fn temp(name: &str) -> common::TempFile {
    common::temp_file(name)
}

/// Runs `throttle ARGS` under coreutils' `timeout -s SIGNAL`, which signals the process and
/// then its whole process group: the echo must not count as a second Ctrl-C.
fn interrupted_by_timeout(signal: &str, args: &[&str]) -> Output {
    std::process::Command::new("timeout")
        .args(["--preserve-status", "-s", signal, "2"])
        .arg(bin())
        .args(args)
        .output()
        .expect("timeout runs")
}

#[test]
fn timeout_sigint_and_sigterm_keep_partial_sweep_results() {
    for (signal, status) in [("INT", 130), ("TERM", 143)] {
        let json = temp(&format!("timeout-{signal}.json"));
        let out = interrupted_by_timeout(
            signal,
            &[
                "sweep",
                "--levels",
                "1,2,0",
                "--tasks",
                "8",
                "--chunk",
                "200000",
                "--reps",
                "1000",
                "--json",
                json.to_str().expect("utf-8"),
            ],
        );
        assert_eq!(out.status.code(), Some(status), "{}", text(&out.stderr));
        assert!(
            text(&out.stdout).contains("PARTIAL"),
            "{}",
            text(&out.stdout)
        );
        let v = read_json(&json);
        assert_eq!(v["partial"], true);
    }
}

#[test]
fn timeout_sigint_and_sigterm_keep_partial_scan_results() {
    for (signal, status) in [("INT", 130), ("TERM", 143)] {
        let json = temp(&format!("timeout-scan-{signal}.json"));
        let out = interrupted_by_timeout(
            signal,
            &[
                "scan",
                "-L",
                "n",
                "1,2",
                "--runs",
                "1000",
                "--warmup",
                "0",
                "--export-json",
                json.to_str().expect("utf-8"),
                "--",
                "sleep",
                "0.0{n}",
            ],
        );
        assert_eq!(out.status.code(), Some(status), "{}", text(&out.stderr));
        let v = read_json(&json);
        assert_eq!(v["partial"], true);
    }
}

#[test]
fn ctrl_c_saves_partial_results() {
    let json = temp("partial.json");
    let child = std::process::Command::new(bin())
        .args([
            "sweep", "--levels", "1,2,0", "--tasks", "8", "--chunk", "200000", "--reps", "1000",
        ])
        .args(["--json", json.to_str().expect("utf-8")])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("starts");
    std::thread::sleep(std::time::Duration::from_millis(1500));
    // SAFETY: kill(2) on our own child's pid with SIGINT; no memory is involved.
    let rc = unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
    assert_eq!(rc, 0);
    let out = child.wait_with_output().expect("exits");
    assert_eq!(out.status.code(), Some(130), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("PARTIAL"));
    let v = read_json(&json);
    assert_eq!(v["partial"], true);
    assert!(!v["sections"][0]["rows"]
        .as_array()
        .expect("rows")
        .is_empty());
}

/// A Ctrl-C in a terminal signals the whole foreground process group: `procs`' `__spin`
/// children get it too. The user must see one message, naming the signal, not one per process.
#[test]
fn one_interrupt_message_per_process_group_naming_the_signal() {
    use std::os::unix::process::CommandExt as _;
    for (signal, name) in [(libc::SIGINT, "SIGINT"), (libc::SIGTERM, "SIGTERM")] {
        let child = std::process::Command::new(bin())
            .args(["procs", "--max", "4", "--ms", "3000", "--reps", "50"])
            .process_group(0)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("starts");
        // Long enough for the spin children of the first batches to be running.
        std::thread::sleep(std::time::Duration::from_millis(1500));
        // SAFETY: kill(2) on the process group this test created for its own child; no
        // memory is involved.
        let rc = unsafe { libc::kill(-(child.id() as libc::pid_t), signal) };
        assert_eq!(rc, 0);
        let out = child.wait_with_output().expect("exits");
        let err = text(&out.stderr);
        let messages = err.matches("finishing the current measurement").count();
        assert_eq!(messages, 1, "{name}: {err}");
        assert!(err.contains(name), "{err}");
        if signal == libc::SIGTERM {
            assert!(!err.contains("Ctrl-C"), "{err}");
        }
    }
}
