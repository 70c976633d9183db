//! Ctrl-C and SIGTERM as a user sends them (a terminal, `timeout`, a process group): the
//! binary stops between measurements, keeps what it measured (marked partial, exit status
//! 130 or 143), and says so once, naming the signal.
//!
//! No signal is sent before the process can act on it: each test waits until the binary has
//! installed its handlers, or until the measurements it means to interrupt are under way.

mod common;

use std::process::{Command, Output, Stdio};

use common::{bin, read_json, signal, text, wait_until, KillOnPanic};

/// A file `name` in a directory of its own, removed with the value unless the test fails.
fn temp(name: &str) -> common::TempFile {
    common::temp_file(name)
}

/// Runs `throttle ARGS` under coreutils' `timeout -s SIGNAL`, which signals the process and
/// then its whole process group: the echo must not count as a second Ctrl-C. `timeout` passes
/// a signal it receives on exactly as it sends its own when its time is up (to the process,
/// then to the process group), and its own time (an hour) never runs out here.
///
/// The signal goes to `timeout` once two things hold. `throttle` has installed its handlers,
/// and `timeout` itself waits in `rt_sigsuspend`. The second matters on a loaded host:
/// `timeout` installs its handler before it forks, and until its own `fork` call has returned
/// it does not yet know its child. A signal that arrives in that window (the child already ran
/// and exec'd `throttle`, the parent has not been scheduled since) makes `timeout` exit 130
/// at once and leaves `throttle` running, unsignalled, with the test's pipes open. In
/// `rt_sigsuspend` it has stored the child's pid.
fn interrupted_by_timeout(name: &str, number: libc::c_int, args: &[&str]) -> Output {
    let timeout = Command::new("timeout")
        .args(["--preserve-status", "-s", name, "3600"])
        .arg(bin())
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("timeout runs");
    // `timeout` leads a process group of its own, with `throttle` in it.
    let _guard = KillOnPanic(-(timeout.id() as i32));
    wait_until(
        "throttle, started by timeout, installs its handlers, and timeout waits for it",
        || {
            common::children(timeout.id())
                .into_iter()
                .any(|pid| common::runs_with_handlers(pid, &bin()))
                && common::in_syscall(timeout.id(), libc::SYS_rt_sigsuspend)
        },
    );
    signal(timeout.id() as i32, number);
    timeout.wait_with_output().expect("timeout exits")
}

#[test]
fn timeout_sigint_and_sigterm_keep_partial_sweep_results() {
    for (name, number, status) in [("INT", libc::SIGINT, 130), ("TERM", libc::SIGTERM, 143)] {
        let json = temp(&format!("timeout-{name}.json"));
        let out = interrupted_by_timeout(
            name,
            number,
            &[
                "sweep",
                "--levels",
                "1,2,0",
                "--tasks",
                "8",
                "--chunk",
                "200000",
                // Far more than the wait for the handlers can outlast on a loaded host (about
                // 25 minutes of work): the signal always comes mid-sweep.
                "--repeat",
                "100",
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
    for (name, number, status) in [("INT", libc::SIGINT, 130), ("TERM", libc::SIGTERM, 143)] {
        let json = temp(&format!("timeout-scan-{name}.json"));
        let out = interrupted_by_timeout(
            name,
            number,
            &[
                "scan",
                "-L",
                "n",
                "1,2",
                // Minutes of runs: the signal always comes mid-scan.
                "--runs",
                "100000",
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
    // Threads mode only: each measurement starts its 8 task threads, and they have all ended
    // before the next one starts; the binary runs no other thread but its main one.
    let child = Command::new(bin())
        .args([
            "sweep", "--modes", "threads", "--levels", "1,2,0", "--tasks", "8", "--chunk",
            "2000000", "--reps", "1000",
        ])
        .args(["--json", json.to_str().expect("utf-8")])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("starts");
    let _guard = KillOnPanic(child.id() as i32);
    // More than twice 8 threads seen besides the main one: a third measurement has started,
    // so the first ones have ended and are kept.
    let mut seen = std::collections::BTreeSet::new();
    wait_until("the sweep starts its third measurement", || {
        seen.extend(
            common::threads(child.id())
                .into_iter()
                .filter(|&tid| tid != child.id()),
        );
        seen.len() > 16
    });
    signal(child.id() as i32, libc::SIGINT);
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
    for (number, name) in [(libc::SIGINT, "SIGINT"), (libc::SIGTERM, "SIGTERM")] {
        let child = Command::new(bin())
            .args(["procs", "--max", "4", "--ms", "3000", "--reps", "50"])
            .process_group(0)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("starts");
        let group = -(child.id() as i32);
        let _guard = KillOnPanic(group);
        // The parent installs its handlers before it starts a batch; a spin child that runs
        // and has installed its own handlers is one the group's signal reaches too.
        wait_until("a __spin child runs with its handlers installed", || {
            common::children(child.id()).into_iter().any(|pid| {
                common::cmdline(pid).iter().any(|a| a == "__spin")
                    && common::catches(pid, &[libc::SIGINT, libc::SIGTERM])
            })
        });
        signal(group, number);
        let out = child.wait_with_output().expect("exits");
        let err = text(&out.stderr);
        let messages = err.matches("finishing the current measurement").count();
        assert_eq!(messages, 1, "{name}: {err}");
        assert!(err.contains(name), "{err}");
        if number == libc::SIGTERM {
            assert!(!err.contains("Ctrl-C"), "{err}");
        }
    }
}
