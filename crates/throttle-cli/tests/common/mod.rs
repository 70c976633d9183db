//! Helpers shared by the CLI's integration tests: each test file says `mod common;`.
//!
//! Every file in `tests/` is a crate of its own and uses only some of these, so unused ones are
//! allowed here rather than warned about in each crate.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command as StdCommand, Output};
use std::time::{Duration, Instant};

use assert_cmd::Command;
use serde_json::Value;

/// The `throttle` binary as a test runs it (no colours, so output compares as plain text).
pub fn throttle() -> Command {
    let mut cmd = Command::cargo_bin("throttle").expect("the throttle binary is built");
    cmd.env("NO_COLOR", "1");
    cmd
}

/// The path of the `throttle` binary, for tests that spawn it themselves (to signal it, or to
/// run it under `timeout`, make or ninja).
pub fn bin() -> PathBuf {
    assert_cmd::cargo::cargo_bin("throttle")
}

/// Output bytes as text (lossy: a test should fail on the content, not on the encoding).
pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A fresh, empty directory for one test's files, named after the test crate, this process
/// and `name`, so parallel tests and runs never share one. It is removed when the value is
/// dropped, unless the test is failing (then it stays for a look, and its path is printed).
pub fn workdir(name: &str) -> Workdir {
    let dir = std::env::temp_dir().join(format!(
        "throttle-{}-test-{}-{name}",
        env!("CARGO_CRATE_NAME"),
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    Workdir(dir)
}

/// A test's directory (see [`workdir`]); derefs to its path.
#[derive(Debug)]
pub struct Workdir(PathBuf);

impl std::ops::Deref for Workdir {
    type Target = Path;

    fn deref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<Path> for Workdir {
    fn as_ref(&self) -> &Path {
        &self.0
    }
}

impl Drop for Workdir {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!("test files kept in {}", self.0.display());
        } else {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

/// A file `name` in a directory of its own (see [`workdir`]); derefs to the file's path.
pub fn temp_file(name: &str) -> TempFile {
    let dir = workdir(name);
    let path = dir.join(name);
    TempFile { _dir: dir, path }
}

/// See [`temp_file`]: the directory goes with the value.
#[derive(Debug)]
pub struct TempFile {
    _dir: Workdir,
    path: PathBuf,
}

impl std::ops::Deref for TempFile {
    type Target = Path;

    fn deref(&self) -> &Path {
        &self.path
    }
}

impl AsRef<Path> for TempFile {
    fn as_ref(&self) -> &Path {
        &self.path
    }
}

/// The JSON document in `path`.
pub fn read_json(path: &Path) -> Value {
    let body = std::fs::read_to_string(path).expect("JSON written");
    serde_json::from_str(&body).expect("valid JSON")
}

/// Asserts that the run succeeded (showing its stdout and stderr if not); returns its stdout.
pub fn assert_success(out: &Output) -> String {
    let stdout = text(&out.stdout);
    assert!(
        out.status.success(),
        "{}\n{stdout}\n{}",
        out.status,
        text(&out.stderr)
    );
    stdout
}

/// Bad usage as the CLI reports it: exit status 2 and one line on stderr that contains every
/// one of `needles` (the flag and the bad value). Returns that stderr.
pub fn assert_usage_error(out: &Output, needles: &[&str]) -> String {
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
    for n in needles {
        assert!(err.contains(n), "{n:?} missing in {err}");
    }
    err
}

/// Fails (never skips) when `program` is missing, naming the Debian package to install.
pub fn require(program: &str, package: &str) {
    let found = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).any(|d| d.join(program).is_file()))
        .unwrap_or(false);
    assert!(
        found,
        "`{program}` is not on PATH: install it with `apt-get install -y {package}` (CI installs it)"
    );
}

/// Headless Chromium with its own profile in `profile`, no network chatter, and its console
/// messages logged to stderr (lines with `:CONSOLE`). Callers add the window size, the action
/// (`--dump-dom`, `--screenshot=...`) and the URL.
pub fn chromium(profile: &Path) -> StdCommand {
    let mut cmd = StdCommand::new("chromium");
    cmd.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--hide-scrollbars",
        "--enable-logging=stderr",
        "--v=0",
    ])
    .arg(format!("--user-data-dir={}", profile.display()));
    cmd
}

/// Width and height from a PNG's IHDR chunk (bytes 16..24), checking the signature.
pub fn png_size(bytes: &[u8]) -> (u32, u32) {
    assert!(
        bytes.len() > 24 && bytes.starts_with(b"\x89PNG\r\n\x1a\n"),
        "not a PNG"
    );
    assert_eq!(&bytes[12..16], b"IHDR");
    let w = u32::from_be_bytes(bytes[16..20].try_into().expect("4 bytes"));
    let h = u32::from_be_bytes(bytes[20..24].try_into().expect("4 bytes"));
    (w, h)
}

/// The etcd cluster harness of the cluster-budget tests.
#[cfg(feature = "etcd")]
pub mod etcd;

/// How long a test waits for a condition before it gives up: a guard against a hang, never a
/// bound on how fast anything must be (a loaded machine may be slow, not this slow).
pub const HANG_GUARD: Duration = Duration::from_secs(120);

/// Polls `cond` every 5 ms until it holds; panics naming `what` after [`HANG_GUARD`].
pub fn wait_until(what: &str, mut cond: impl FnMut() -> bool) {
    let start = Instant::now();
    while !cond() {
        assert!(
            start.elapsed() < HANG_GUARD,
            "still waiting after {HANG_GUARD:?}: {what}"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Sends `signal` to `pid` (a negative `pid`: to that process group).
pub fn signal(pid: i32, signal: libc::c_int) {
    // SAFETY: kill(2) has no memory effects; the callers signal only their own children or
    // the process groups those lead.
    let rc = unsafe { libc::kill(pid, signal) };
    assert_eq!(
        rc,
        0,
        "kill({pid}, {signal}): {}",
        std::io::Error::last_os_error()
    );
}

/// SIGKILLs `pid` (a negative `pid`: its process group) when dropped while the test is failing,
/// so that a test that gives up leaves no process of its own behind.
pub struct KillOnPanic(pub i32);

impl Drop for KillOnPanic {
    fn drop(&mut self) {
        if std::thread::panicking() {
            // SAFETY: as in `signal`; a process already gone gives ESRCH, which is fine.
            unsafe { libc::kill(self.0, libc::SIGKILL) };
        }
    }
}

/// The arguments of process `pid` (`/proc/PID/cmdline`); empty once it is gone.
pub fn cmdline(pid: u32) -> Vec<String> {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .map(|b| {
            b.split(|&c| c == 0)
                .filter(|a| !a.is_empty())
                .map(|a| String::from_utf8_lossy(a).into_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// The live children of `parent` (every process of `/proc` whose parent it is).
pub fn children(parent: u32) -> Vec<u32> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
                // The fields after the command name, which may hold spaces and parentheses:
                // state, then the parent's pid.
                stat.rsplit_once(')')
                    .and_then(|(_, rest)| rest.split_whitespace().nth(1)?.parse::<u32>().ok())
                    == Some(parent)
            })
        })
        .collect()
}

/// Whether process `pid` has a handler installed for every one of `signals` (the `SigCgt`
/// mask of `/proc/PID/status`); false once it is gone.
pub fn catches(pid: u32, signals: &[libc::c_int]) -> bool {
    let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) else {
        return false;
    };
    let Some(mask) = status
        .lines()
        .find_map(|l| l.strip_prefix("SigCgt:"))
        .and_then(|m| u64::from_str_radix(m.trim(), 16).ok())
    else {
        return false;
    };
    signals.iter().all(|&s| mask & (1u64 << (s - 1)) != 0)
}

/// Whether `pid` runs `program` (its first argument, so not a forked copy of its parent that
/// has yet to exec) and has installed its SIGINT and SIGTERM handlers.
pub fn runs_with_handlers(pid: u32, program: &Path) -> bool {
    cmdline(pid).first().map(Path::new) == Some(program)
        && catches(pid, &[libc::SIGINT, libc::SIGTERM])
}

/// Whether process `pid` is blocked in system call `number` now: the first field of
/// `/proc/PID/syscall` (readable by the process's parent). False once it is gone, while it
/// runs, or in another call.
pub fn in_syscall(pid: u32, number: libc::c_long) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/syscall"))
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse::<libc::c_long>().ok())
        == Some(number)
}

/// The thread ids of process `pid` alive now (`/proc/PID/task`).
pub fn threads(pid: u32) -> Vec<u32> {
    std::fs::read_dir(format!("/proc/{pid}/task"))
        .map(|d| {
            d.flatten()
                .filter_map(|e| e.file_name().to_str()?.parse().ok())
                .collect()
        })
        .unwrap_or_default()
}
