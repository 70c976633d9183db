//! The cluster budget in etcd (issue 20) against a real 3-member etcd cluster on 127.0.0.1
//! (`common/etcd.rs` starts it in temporary directories and removes it at the end).
//!
//! Simulated hosts are separate `throttle run --budget etcd://.../NAME -j 3 -- make` process
//! trees with their own `THROTTLE_HOST`. Every task logs its begin and end with CLOCK_MONOTONIC
//! to one log (a line per event, one `write(2)` on an `O_APPEND` file); a sweep over the log
//! counts the tasks running at each instant machine-wide. The make recipes' logger is this test
//! binary run again (`helper_task_logger`, ignored, does nothing unless `CB_TASK` is set).
//!
//! Needs etcd (`THROTTLE_ETCD_BIN`, else `etcd` on PATH): without it each test prints "skipped:
//! etcd not on PATH" and returns, or fails when `THROTTLE_REQUIRE_ETCD=1` (CI). Run with
//! `--nocapture --test-threads 1` to see the figures; the tests print their measured bounds in
//! lines starting `cluster_budget:`.
#![cfg(feature = "etcd")]

mod common;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::etcd::{self, mono_ns, Cluster, Task};

/// Starts a cluster or returns from the test (skip) when etcd is missing.
macro_rules! cluster {
    ($tag:expr) => {
        match etcd::etcd_or_skip($tag) {
            Some(bin) => Cluster::start(&bin, $tag, 3),
            None => return,
        }
    };
}

/// Not a test: the task logger that make recipes run (this binary again, with
/// `CB_TASK="LOG HOST MILLIS"`). Appends `begin HOST PID T`, sleeps, appends `end HOST PID T`.
#[test]
#[ignore = "helper process for the other tests, not a test"]
fn helper_task_logger() {
    let Ok(spec) = std::env::var("CB_TASK") else {
        return;
    };
    let mut f = spec.split_whitespace();
    let (log, host, ms) = (
        f.next().expect("log"),
        f.next().expect("host"),
        f.next().expect("millis").parse::<u64>().expect("millis"),
    );
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
        .expect("task log");
    let pid = std::process::id();
    let stamp = |what: &str, file: &mut std::fs::File| {
        let t = mono_ns();
        let line = format!(
            "{what} {host} {pid} {}.{:09}\n",
            t / 1_000_000_000,
            t % 1_000_000_000
        );
        file.write_all(line.as_bytes()).expect("task log write");
    };
    stamp("begin", &mut file);
    std::thread::sleep(Duration::from_millis(ms));
    stamp("end", &mut file);
}

/// The shell command a make recipe runs to log one task of `ms` ms on `host` into `log`.
fn logger_cmd(log: &Path, host: &str, ms: u64) -> String {
    let me = std::env::current_exe().expect("the test binary");
    format!(
        "CB_TASK='{} {host} {ms}' {} helper_task_logger --exact --ignored --quiet --test-threads 1 >/dev/null",
        log.display(),
        me.display()
    )
}

/// A scratch directory for one test.
fn scratch(name: &str) -> PathBuf {
    common::workdir(name)
}

/// The harness itself, against etcd alone: three healthy members, a key read back in creation
/// order, a lease of 2 s whose key etcd removes (its expiry measured and printed), one member
/// killed (writes go on), two killed (a write through the last one fails: no quorum), both
/// restarted (writes go on, the data kept).
#[test]
fn harness_cluster_survives_one_member_and_stalls_without_quorum() {
    let mut c = cluster!("harness");
    assert_eq!(c.size(), 3);
    c.put("/t/a", "1", None).unwrap();
    c.put("/t/b", "2", None).unwrap();
    let kvs = c.range_prefix("/t/").unwrap();
    let keys: Vec<&str> = kvs.iter().map(|k| k.key.as_str()).collect();
    assert_eq!(keys, ["/t/a", "/t/b"]);
    assert!(kvs[0].create_revision < kvs[1].create_revision);
    assert_eq!(kvs[1].value, "2");

    // A lease's key goes when the lease expires.
    let lease = c.lease_grant(2).unwrap();
    c.put("/t/leased", "x", Some(lease)).unwrap();
    let t = Instant::now();
    assert_eq!(c.range_prefix("/t/leased").unwrap()[0].lease, lease);
    while !c.range_prefix("/t/leased").unwrap().is_empty() {
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "lease of 2 s still there"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    eprintln!(
        "cluster_budget: harness: a 2 s etcd lease's key was gone after {} ms",
        t.elapsed().as_millis()
    );

    c.kill(0);
    c.put_via(1, "/t/c", "3", Duration::from_secs(5)).unwrap();
    c.kill(1);
    let t = Instant::now();
    let lost = c.put_via(2, "/t/d", "4", Duration::from_secs(3));
    assert!(lost.is_err(), "a write with 1 of 3 members up succeeded");
    assert!(t.elapsed() < Duration::from_secs(10));
    c.restart(0);
    c.restart(1);
    c.wait_healthy(&[0, 1, 2], etcd::STARTUP_TIMEOUT);
    c.put_via(0, "/t/e", "5", Duration::from_secs(5)).unwrap();
    let keys: Vec<String> = c
        .range_prefix_via(1, "/t/", Duration::from_secs(5))
        .unwrap()
        .into_iter()
        .map(|k| k.key)
        .collect();
    assert!(
        keys.contains(&"/t/a".to_string()) && keys.contains(&"/t/e".to_string()),
        "{keys:?}"
    );
    let dir = c.dir().to_path_buf();
    drop(c);
    assert!(!dir.exists(), "the cluster's directory is removed on drop");
}

/// The logger and the sweep: three loggers run at once (two overlapping, then one after),
/// and the sweep counts exactly the overlap it was given; an open task runs until the time the
/// caller says.
#[test]
fn checker_counts_overlaps_from_real_logger_processes() {
    let dir = scratch("checker");
    let log = dir.join("tasks.log");
    let run = |host: &str, ms: u64| {
        std::process::Command::new("sh")
            .arg("-c")
            .arg(logger_cmd(&log, host, ms))
            .spawn()
            .unwrap()
    };
    let a = run("h1", 400);
    let b = run("h2", 400);
    assert!(a.wait_with_output().unwrap().status.success());
    assert!(b.wait_with_output().unwrap().status.success());
    let c = run("h3", 100);
    assert!(c.wait_with_output().unwrap().status.success());
    let tasks = etcd::read_tasks(&log, "?");
    assert_eq!(tasks.len(), 3, "{tasks:?}");
    assert!(tasks.iter().all(|t| t.end.is_some()));
    let all: Vec<&Task> = tasks.iter().collect();
    let (max, _) = etcd::max_concurrency(&all, &|_| unreachable!());
    assert_eq!(max, 2, "two loggers overlapped: {tasks:?}");
    // A begin with no end is open until the given time: it overlaps everything after it.
    let mut open = tasks.clone();
    open[0].end = None;
    let refs: Vec<&Task> = open.iter().collect();
    let (max, _) = etcd::max_concurrency(&refs, &|_| u64::MAX);
    assert_eq!(max, 2);
    let late = open.iter().map(|t| t.end.unwrap_or(0)).max().unwrap() + 1;
    let (max, _) = etcd::max_concurrency(&refs, &|_| late);
    assert_eq!(max, 2);
    // `throttle __tasks` lines pair per process.
    std::fs::write(
        dir.join("pool.log"),
        "S 100 7\nS 150 7\nS 160 8\nE 200 7\nE 300 7\nE 400 8\n",
    )
    .unwrap();
    let pool = etcd::read_tasks(&dir.join("pool.log"), "h9");
    let refs: Vec<&Task> = pool.iter().collect();
    assert_eq!(etcd::max_concurrency(&refs, &|_| 0).0, 3);
    assert!(pool.iter().all(|t| t.host == "h9"));
    let _ = mono_ns();
    std::fs::remove_dir_all(&dir).unwrap();
}
