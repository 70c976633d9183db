//! The cluster budget in etcd against a real 3-member etcd cluster on 127.0.0.1
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
/// `CB_TASK="LOG HOST MILLIS [RELEASE]"`). Appends `begin HOST PID T JOB_BY JOB_PID`, sleeps,
/// waits until the file RELEASE exists if one is named, appends `end HOST PID T`. JOB_PID is
/// make's job for this recipe (`etcd::make_job`), JOB_BY when it had been created at the latest
/// (`etcd::created_by`): a job make started before its host was frozen may log its begin only
/// after the thaw, and it is a job running at the freeze all the same.
#[test]
#[ignore = "helper process for the other tests, not a test"]
fn helper_task_logger() {
    let Ok(spec) = std::env::var("CB_TASK") else {
        return;
    };
    let mut f = spec.split_whitespace();
    let (log, host, ms, release) = (
        f.next().expect("log"),
        f.next().expect("host"),
        f.next().expect("millis").parse::<u64>().expect("millis"),
        f.next(),
    );
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
        .expect("task log");
    let pid = std::process::id();
    let secs = |t: u64| format!("{}.{:09}", t / 1_000_000_000, t % 1_000_000_000);
    let job_pid = etcd::make_job().unwrap_or(pid);
    let job_by = etcd::created_by(job_pid);
    let t = mono_ns();
    // Without /proc: created by now.
    let job = secs(job_by.unwrap_or(t).min(t));
    let begin = format!("begin {host} {pid} {} {job} {job_pid}\n", secs(t));
    file.write_all(begin.as_bytes()).expect("task log write");
    std::thread::sleep(Duration::from_millis(ms));
    if let Some(release) = release {
        let t = Instant::now();
        while !Path::new(release).exists() {
            assert!(
                t.elapsed() < common::HANG_GUARD,
                "{release} not created in {:?}",
                common::HANG_GUARD
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }
    let end = format!("end {host} {pid} {}\n", secs(mono_ns()));
    file.write_all(end.as_bytes()).expect("task log write");
}

/// The shell command a make recipe runs to log one task of `ms` ms on `host` into `log`.
fn logger_cmd(log: &Path, host: &str, ms: u64) -> String {
    logger_cmd_until(log, host, ms, None)
}

/// As [`logger_cmd`], for a task that ends only once `ms` ms have passed and the file
/// `release` (if given) exists.
fn logger_cmd_until(log: &Path, host: &str, ms: u64, release: Option<&Path>) -> String {
    let me = std::env::current_exe().expect("the test binary");
    let release = release.map_or(String::new(), |r| format!(" {}", r.display()));
    format!(
        "CB_TASK='{} {host} {ms}{release}' {} helper_task_logger --exact --ignored --quiet --test-threads 1 >/dev/null",
        log.display(),
        me.display()
    )
}

/// A scratch directory for one test (removed when dropped, unless the test fails).
fn scratch(name: &str) -> common::Workdir {
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
            t.elapsed() < common::HANG_GUARD,
            "the key of a 2 s lease still there after {:?}",
            common::HANG_GUARD
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    eprintln!(
        "cluster_budget: harness: a 2 s etcd lease's key was gone after {} ms",
        t.elapsed().as_millis()
    );

    c.kill(0);
    c.wait_healthy(&[1, 2], etcd::STARTUP_TIMEOUT);
    c.put_via(1, "/t/c", "3", Duration::from_secs(5)).unwrap();
    c.kill(1);
    let lost = c.put_via(2, "/t/d", "4", Duration::from_secs(3));
    assert!(lost.is_err(), "a write with 1 of 3 members up succeeded");
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

/// The logger and the sweep: three loggers (two overlapping, then one after), and the sweep
/// counts exactly the overlap it was given; an open task runs until the time the caller says.
/// The two overlap by construction: neither ends before both have begun.
#[test]
fn checker_counts_overlaps_from_real_logger_processes() {
    let dir = scratch("checker");
    let log = dir.join("tasks.log");
    let release = dir.join("release");
    let run = |host: &str, ms: u64, release: Option<&Path>| {
        std::process::Command::new("sh")
            .arg("-c")
            .arg(logger_cmd_until(&log, host, ms, release))
            .spawn()
            .unwrap()
    };
    let a = run("h1", 0, Some(&release));
    let b = run("h2", 0, Some(&release));
    assert!(
        wait_for(common::HANG_GUARD, || etcd::read_tasks(&log, "?").len()
            == 2),
        "the two loggers did not both begin"
    );
    std::fs::write(&release, "").unwrap();
    assert!(a.wait_with_output().unwrap().status.success());
    assert!(b.wait_with_output().unwrap().status.success());
    let c = run("h3", 100, None);
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

// ---------------------------------------------------------------------------------------------
// Simulated hosts: `throttle run --budget URL -j N -- make` process trees.

/// The lease TTL the CLI tests give `--budget-ttl`: 3 s (the minimum), so faults resolve fast.
/// The library's margin for it is max(1 s, TTL/4) = 1 s and it renews every third of the
/// 2 s trust window, so a renewal may be late by 1.33 s before the lease counts as lost.
/// (A TTL below 3 s is refused: at 2 s the slack would be 0.67 s, which a loaded 2-core
/// machine's hiccups exceed.)
const TTL_S: u64 = 3;

/// One simulated host: a `throttle run` tree in its own process group, its stderr in a file.
struct Host {
    name: String,
    child: std::process::Child,
    stderr: PathBuf,
    /// When it was SIGKILLed (its tasks without an end line ended then).
    killed_at: Option<u64>,
    /// When it was frozen (tasks running then are excluded from the invariant).
    stopped_at: Vec<u64>,
    /// When each freeze's thaw began (one per entry of `stopped_at` but a freeze still on).
    resumed_at: Vec<u64>,
    /// Per freeze: the processes of the tree that were not stopped (by `throttle run`'s hold)
    /// when it froze.
    running_at: Vec<std::collections::HashSet<i32>>,
    /// Whether it is frozen now.
    frozen: bool,
    /// Its cgroup freezer, when this machine has one (`freeze` then uses it).
    freezer: Option<etcd::Freezer>,
    /// What the test did to it and when (for failure messages).
    events: Vec<(u64, &'static str)>,
}

/// A Makefile in `dir` for `host`: `tasks` recipes, each one logged task of `ms` ms, plus
/// `pools` recipes that each run a throttle program (`throttle __tasks`, 4 tasks of 30 ms on
/// its pool, which joins the jobserver) logging to `<log>.<host>.pool`. Those recipes are
/// marked `+`: make 4.3 passes its jobserver only to such recipes, and without it the pool
/// (4 threads) runs outside every budget, with or without `--budget`.
fn makefile(dir: &Path, host: &str, log: &Path, tasks: usize, ms: u64, pools: usize) -> PathBuf {
    let mut targets = Vec::new();
    let mut rules = String::new();
    for i in 0..tasks {
        targets.push(format!("t{i}"));
        rules.push_str(&format!("t{i}:\n\t@{}\n", logger_cmd(log, host, ms)));
    }
    for i in 0..pools {
        targets.push(format!("p{i}"));
        rules.push_str(&format!(
            "p{i}:\n\t+@{} __tasks --tasks 4 --micros 30000 --log {}\n",
            common::bin().display(),
            pool_log(log, host).display()
        ));
    }
    let path = dir.join(format!("{host}.mk"));
    std::fs::write(&path, format!("all: {}\n{rules}", targets.join(" "))).unwrap();
    path
}

/// The log of `host`'s throttle-pool tasks.
fn pool_log(log: &Path, host: &str) -> PathBuf {
    PathBuf::from(format!("{}.{host}.pool", log.display()))
}

/// Starts `throttle run [--budget URL --budget-ttl TTL_S] -j n -- make -s -f MAKEFILE` as
/// `host` (THROTTLE_HOST), in its own process group.
fn spawn_host(dir: &Path, budget: Option<&str>, n: usize, host: &str, mk: &Path) -> Host {
    let make = [
        "make".to_string(),
        "-s".into(),
        "-f".into(),
        mk.display().to_string(),
    ];
    spawn_cmd(dir, budget, n, host, &make)
}

/// Starts `throttle run [--budget URL --budget-ttl TTL_S] -j n -- CMD...` as `host`.
fn spawn_cmd(dir: &Path, budget: Option<&str>, n: usize, host: &str, command: &[String]) -> Host {
    use std::os::unix::process::CommandExt;
    let stderr = dir.join(format!("{host}.stderr"));
    let mut cmd = std::process::Command::new(common::bin());
    cmd.arg("run");
    if let Some(url) = budget {
        cmd.args(["--budget", url, "--budget-ttl", &TTL_S.to_string()]);
    }
    cmd.args(["-j", &n.to_string(), "--"])
        .args(command)
        .current_dir(dir)
        .env("THROTTLE_HOST", host)
        .env("NO_COLOR", "1")
        .env("THROTTLE_THREADS", "4")
        // `throttle run --budget` then stamps its hold lines with CLOCK_MONOTONIC
        // (`held_intervals`).
        .env("THROTTLE_JOBSERVER", "debug")
        .env_remove("MAKEFLAGS")
        .env_remove("MFLAGS")
        .env_remove("CARGO_MAKEFLAGS")
        .env_remove("THROTTLE_JOBSERVER_SOCKET")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::fs::File::create(&stderr).unwrap())
        .process_group(0);
    etcd::die_with_parent(&mut cmd);
    let freezer = etcd::Freezer::new(host);
    if let Some(f) = &freezer {
        f.join_in_child(&mut cmd);
    }
    Host {
        name: host.to_string(),
        child: cmd.spawn().expect("starting throttle run"),
        freezer,
        stderr,
        killed_at: None,
        stopped_at: Vec::new(),
        resumed_at: Vec::new(),
        running_at: Vec::new(),
        frozen: false,
        events: vec![(mono_ns(), "started")],
    }
}

impl Host {
    fn pid(&self) -> i32 {
        self.child.id() as i32
    }

    /// SIGKILL the whole tree (throttle run first), reap it, note the time.
    fn kill(&mut self) {
        etcd::signal_tree(self.pid(), libc::SIGKILL);
        self.killed_at = Some(mono_ns());
        self.events.push((mono_ns(), "SIGKILL"));
        // The tree's processes are gone with their group; reap the one child we own.
        let _ = self.child.wait();
    }

    /// Freezes the whole tree at one instant, like a paused VM: with the cgroup freezer when
    /// this machine has one (each process keeps its own stopped state: what `throttle run`
    /// holds stays held through the thaw), else like `stop_group`.
    fn freeze(&mut self) {
        self.stopped_at.push(mono_ns());
        match &self.freezer {
            Some(f) => {
                let ok = f.freeze();
                self.events.push((
                    mono_ns(),
                    if ok {
                        "frozen"
                    } else {
                        "freeze (not confirmed in 5 s)"
                    },
                ));
                // Frozen, the tree holds still: what the hold had not stopped was running.
                self.running_at.push(etcd::unstopped(self.pid()));
            }
            None => {
                // Read just before the signal (a process forked in between is missed).
                self.running_at.push(etcd::unstopped(self.pid()));
                self.signal_group(libc::SIGSTOP);
                self.events.push((mono_ns(), "SIGSTOP"));
            }
        }
        self.frozen = true;
    }

    /// Thaws what `freeze` froze, like a VM that resumes.
    fn thaw(&mut self) {
        self.resumed_at.push(mono_ns());
        match &self.freezer {
            Some(f) => {
                f.thaw();
                self.events.push((mono_ns(), "thawed"));
            }
            None => {
                self.signal_group(libc::SIGCONT);
                self.events.push((mono_ns(), "SIGCONT"));
            }
        }
        self.frozen = false;
    }

    /// SIGSTOP the whole tree at one instant: one signal to the host's process group
    /// (`throttle run` leads it; make, its jobs and their programs are in it).
    fn stop_group(&mut self) {
        self.stopped_at.push(mono_ns());
        self.running_at.push(etcd::unstopped(self.pid()));
        self.signal_group(libc::SIGSTOP);
        self.frozen = true;
        self.events.push((mono_ns(), "SIGSTOP"));
    }

    /// SIGCONT the whole tree at one instant (a shell's `fg`, or a resume done with signals).
    /// This also continues what `throttle run` holds stopped: someone continued it from
    /// outside, which it must notice and undo. (One signal to the group, not one process at a
    /// time: continuing the processes one by one, parents first, in several passes over /proc,
    /// also continues, a few milliseconds later, processes that `throttle run` has already
    /// stopped again.)
    fn cont_group(&mut self) {
        self.resumed_at.push(mono_ns());
        self.signal_group(libc::SIGCONT);
        self.frozen = false;
        self.events.push((mono_ns(), "SIGCONT"));
    }

    /// Whether task `t` of this host counts as running when the host was frozen: it began
    /// before a freeze and ended after it, or its job (the process make started) was a process
    /// of the tree not stopped by the hold when the host froze, and its program logged the
    /// begin only after the thaw (frozen between make's fork and the logger's first line).
    /// Such jobs go on after the thaw like any job started before the host lost its slot
    /// (docs/cluster-budget.md). A job held stopped at the freeze is not one of them.
    fn running_at_freeze(&self, t: &Task, open_until: u64) -> bool {
        let end = t.end.unwrap_or(open_until);
        self.stopped_at.iter().enumerate().any(|(i, &s)| {
            let resumed = self.resumed_at.get(i).copied().unwrap_or(u64::MAX);
            let running = |pid: i32| self.running_at.get(i).is_some_and(|r| r.contains(&pid));
            end > s
                && (t.begin <= s
                    || (t.job_by.is_some_and(|j| j <= resumed) && t.job_pid.is_some_and(running)))
        })
    }

    /// Whether task `t` of this host is a job started in the race right after the host
    /// resumed (docs/cluster-budget.md, Guarantees: "after a whole host resumes"): its task
    /// began after the test resumed the host, a look of `throttle run` within
    /// `OUTSIDE_CONT_RACE_NS` of that resume stopped its job (its pid is among the look's
    /// `[stopped …]` pids), and it began before that hold ended. Such a job may begin before
    /// the look reaches it, and then waits, stopped, for a slot like the command; the
    /// invariant leaves it out and counts it (`check_invariant`). A job of the race that the
    /// look did not stop is counted like any other. `stops` is [`Host::stops`], read once
    /// for all of the host's tasks.
    fn raced_and_stopped(&self, t: &Task, stops: &Stops) -> bool {
        let Some(job) = t.job_pid else { return false };
        stops.lines.iter().any(|(s, pids)| {
            pids.contains(&job)
                && self
                    .resumed_at
                    .iter()
                    .any(|&c| t.begin >= c && *s >= c && *s < c + OUTSIDE_CONT_RACE_NS)
                && stops
                    .holds
                    .iter()
                    .any(|&(a, b)| a <= *s && *s < b && t.begin < b)
        })
    }

    /// What `throttle run` said about holding this host's command, from its stderr: the
    /// hold intervals (an open one ends at the host's kill or at `now`) and the stop lines.
    fn stops(&self, now: u64) -> Stops {
        Stops {
            holds: held_intervals(self, now),
            lines: stop_lines(self),
        }
    }

    fn signal_group(&self, sig: libc::c_int) {
        // SAFETY: kill(2) of our own child's process group (it leads it: `process_group(0)`);
        // no memory effects.
        unsafe {
            libc::kill(-self.pid(), sig);
        }
    }

    /// Exited (reaped) or not.
    fn done(&mut self) -> Option<std::process::ExitStatus> {
        self.child.try_wait().ok().flatten()
    }

    /// Waits at most `limit` for the host to exit; its status, or a panic with its stderr.
    fn wait(&mut self, limit: Duration) -> std::process::ExitStatus {
        let t = Instant::now();
        loop {
            if let Some(s) = self.done() {
                return s;
            }
            if t.elapsed() > limit {
                self.kill();
                panic!(
                    "{} did not finish in {limit:?}; stderr:\n{}",
                    self.name,
                    self.stderr_text()
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn stderr_text(&self) -> String {
        std::fs::read_to_string(&self.stderr).unwrap_or_default()
    }
}

impl Drop for Host {
    fn drop(&mut self) {
        if self.done().is_none() {
            etcd::signal_tree(self.pid(), libc::SIGKILL);
            let _ = self.child.wait();
        }
    }
}

/// Every task of a run: the shared log and each host's throttle-pool log.
fn all_tasks(log: &Path, hosts: &[&Host]) -> Vec<Task> {
    let mut tasks = etcd::read_tasks(log, "?");
    for h in hosts {
        tasks.extend(etcd::read_tasks(&pool_log(log, &h.name), &h.name));
    }
    tasks
}

/// The invariant: at no instant more than `n` tasks, counting every task except those that
/// were running on a host when it was SIGSTOPped (a frozen holder's running tasks may finish
/// after its lease expired; only NEW tasks after the thaw must wait for slots) and the jobs of
/// the resume race that `throttle run`'s look stopped (`Host::raced_and_stopped`). A task with
/// no end ran until its host was killed, or until `now`. Returns (peak, tasks counted, tasks
/// excluded); panics with the tasks at the peak if it exceeds `n`.
fn check_invariant(
    tasks: &[Task],
    hosts: &[&Host],
    n: usize,
    now: u64,
    what: &str,
) -> (usize, usize, usize) {
    let host_of = |name: &str| hosts.iter().find(|h| h.name == name);
    let open_until = |t: &Task| host_of(&t.host).and_then(|h| h.killed_at).unwrap_or(now);
    let stops: Vec<Stops> = hosts
        .iter()
        .map(|h| h.stops(h.killed_at.unwrap_or(now)))
        .collect();
    let excluded = |t: &Task| {
        hosts.iter().zip(&stops).any(|(h, st)| {
            h.name == t.host
                && (h.running_at_freeze(t, open_until(t)) || h.raced_and_stopped(t, st))
        })
    };
    let counted: Vec<&Task> = tasks.iter().filter(|t| !excluded(t)).collect();
    let (peak, at) = etcd::max_concurrency(&counted, &open_until);
    if peak > n {
        let running = etcd::running_at(&counted, at, &open_until);
        let lines: Vec<String> = running
            .iter()
            .map(|t| format!("  {} {} begin {} end {:?}", t.host, t.id, t.begin, t.end))
            .collect();
        // The hosts at the peak: what the test did to them and what they said.
        let stderrs: Vec<String> = hosts
            .iter()
            .filter(|h| running.iter().any(|t| t.host == h.name))
            .map(|h| {
                let ev: Vec<String> = h
                    .events
                    .iter()
                    .map(|(t, e)| format!("{e} at {:+.0} ms", (*t as f64 - at as f64) / 1e6))
                    .collect();
                format!(
                    "--- {} ({}) ---\n{}",
                    h.name,
                    ev.join(", "),
                    h.stderr_text()
                )
            })
            .collect();
        panic!(
            "{what}: {peak} tasks at once (budget {n}) at t={at} ns:\n{}\n{}",
            lines.join("\n"),
            stderrs.join("\n")
        );
    }
    (peak, counted.len(), tasks.len() - counted.len())
}

/// The intervals (CLOCK_MONOTONIC ns) during which `throttle run` held `host`'s command
/// stopped, from its stamped lines (`throttle run: CMD stopped (SIGSTOP) … [CLOCK_MONOTONIC
/// S.N]` to `… continued (SIGCONT) … [CLOCK_MONOTONIC S.N]`); one still open ends at the
/// host's kill or at `now`.
fn held_intervals(h: &Host, now: u64) -> Vec<(u64, u64)> {
    let mut out = Vec::new();
    let mut open = None;
    for l in h.stderr_text().lines() {
        if !l.starts_with("throttle run: ") {
            continue;
        }
        if l.contains(" stopped (SIGSTOP)") {
            open = open.or(line_stamp(l));
        } else if l.contains(" continued (SIGCONT)") {
            if let (Some(from), Some(to)) = (open.take(), line_stamp(l)) {
                out.push((from, to));
            }
        }
    }
    if let Some(from) = open {
        out.push((from, h.killed_at.unwrap_or(now)));
    }
    out
}

/// A host's hold intervals and stop lines (`Host::stops`).
struct Stops {
    holds: Vec<(u64, u64)>,
    lines: Vec<(u64, Vec<i32>)>,
}

/// The stop lines of `throttle run` on `h`'s stderr (`… stopped (SIGSTOP)…` and `… stopped
/// again…`): each one's stamp (CLOCK_MONOTONIC ns, when the command was stopped) and the pids
/// of the command's tree that that look stopped (`[stopped PID …]`).
fn stop_lines(h: &Host) -> Vec<(u64, Vec<i32>)> {
    let mut out = Vec::new();
    for l in h.stderr_text().lines() {
        if !l.starts_with("throttle run: ")
            || !(l.contains(" stopped (SIGSTOP)") || l.contains("stopped again"))
        {
            continue;
        }
        let Some(at) = line_stamp(l) else { continue };
        let pids = l
            .split_once(" [stopped ")
            .and_then(|(_, r)| r.split_once(']'))
            .map(|(p, _)| {
                p.split_whitespace()
                    .filter_map(|v| v.parse().ok())
                    .collect()
            })
            .unwrap_or_default();
        out.push((at, pids));
    }
    out
}

/// The ` [CLOCK_MONOTONIC S.N]` stamp that ends a line of `throttle run`, in ns.
fn line_stamp(l: &str) -> Option<u64> {
    let v = l.rsplit_once("[CLOCK_MONOTONIC ")?.1.strip_suffix(']')?;
    let (s, n) = v.split_once('.')?;
    Some(s.parse::<u64>().ok()? * 1_000_000_000 + n.parse::<u64>().ok()?)
}

/// How long after the test continues a host (its thaw, a SIGCONT to the host's process group)
/// a task that begins while the host's command is held counts as the known race rather than a
/// failure: the thaw continues the held command and its held jobs too, and they run until
/// `throttle run` has stopped them again (SIGCHLD, then a scan of /proc: milliseconds).
const OUTSIDE_CONT_RACE_NS: u64 = 100_000_000;

/// What `check_hold` saw.
struct HoldCheck {
    /// Hold intervals over all hosts.
    holds: usize,
    /// Their total length, ms.
    held_ms: f64,
    /// Tasks that began while held, within `OUTSIDE_CONT_RACE_NS` after the test continued
    /// their host: how long after that SIGCONT each began, ms.
    raced: Vec<f64>,
    /// Tasks that began while held whose job make had created before the hold began (a job
    /// started before its host's slot ended, which goes on, or one started between the end
    /// and `throttle run`'s look, which that look stops): how long after the hold's start
    /// each began, ms.
    existing: Vec<f64>,
}

/// The hold: no job of a host is created while `throttle run` holds its
/// command stopped, so no task begins then, except the task of a job created before the hold
/// began (counted in `existing`: its program may log its begin a few milliseconds after its
/// job was created) and in the race right after the test itself continued that host's whole
/// process group (counted in `raced`). Panics with the offending tasks otherwise.
fn check_hold(tasks: &[Task], hosts: &[&Host], now: u64, what: &str) -> HoldCheck {
    let mut out = HoldCheck {
        holds: 0,
        held_ms: 0.0,
        raced: Vec::new(),
        existing: Vec::new(),
    };
    let tick = etcd::tick_ns();
    for h in hosts {
        let held = held_intervals(h, now);
        out.holds += held.len();
        out.held_ms += ms(held.iter().map(|(a, b)| b.saturating_sub(*a)).sum::<u64>());
        let thaws: Vec<u64> = h
            .events
            .iter()
            .filter(|(_, e)| *e == "SIGCONT")
            .map(|(t, _)| *t)
            .collect();
        let mut bad = Vec::new();
        let open_until = h.killed_at.unwrap_or(now);
        for t in tasks.iter().filter(|t| t.host == h.name) {
            let Some(&(a, _)) = held.iter().find(|&&(a, b)| t.begin > a && t.begin < b) else {
                continue;
            };
            if h.running_at_freeze(t, open_until) {
                continue;
            }
            // Created (at the earliest: `job_by` is rounded up to a clock tick) before the
            // hold's SIGSTOP was sent: not a job the held command started.
            if t.job_by.is_some_and(|j| j.saturating_sub(tick) <= a) {
                out.existing.push(ms(t.begin - a));
                continue;
            }
            // The thaw is stamped after the signal was sent: a begin a little before it counts.
            match thaws
                .iter()
                .filter(|&&c| t.begin + 5_000_000 >= c && t.begin < c + OUTSIDE_CONT_RACE_NS)
                .max()
            {
                Some(&c) => out.raced.push((t.begin as f64 - c as f64) / 1e6),
                None => bad.push(format!(
                    "  {} {} began at {}, its job created by {}",
                    t.host,
                    t.id,
                    t.begin,
                    t.job_by.map_or("?".to_string(), |j| j.to_string())
                )),
            }
        }
        assert!(
            bad.is_empty(),
            "{what}: tasks began while {}'s command was held stopped {held:?}:\n{}\ntest's actions on it (CLOCK_MONOTONIC ns): {}; exit: {:?}\n{}",
            h.name,
            bad.join("\n"),
            h.events
                .iter()
                .map(|(t, e)| format!("{e} at {t}"))
                .collect::<Vec<_>>()
                .join(", "),
            h.killed_at.map_or("not killed".to_string(), |k| format!("killed at {k}")),
            h.stderr_text()
        );
    }
    out
}

/// The frozen-holder setup: host "frozen" (`frozen` = its make's tasks and their length, ms)
/// takes the budget's 3 slots, hosts "busy1" and "busy2" (`busy` tasks of 200 ms each) queue
/// behind it, and after `settle_ms` the frozen host's whole process group is stopped for TTL +
/// 2 s, so that its lease expires, and then until the others have taken its slots (one of
/// their tasks began TTL after the stop). Returns the three hosts and when the stop was sent
/// (CLOCK_MONOTONIC ns); the frozen host is still stopped.
fn freeze_a_holder(
    dir: &Path,
    url: &str,
    log: &Path,
    frozen: (usize, u64),
    busy: usize,
    settle_ms: u64,
) -> (Host, Vec<Host>, u64) {
    let mk = makefile(dir, "frozen", log, frozen.0, frozen.1, 0);
    let mut a = spawn_host(dir, Some(url), 3, "frozen", &mk);
    assert!(
        wait_for(common::HANG_GUARD, || etcd::read_tasks(log, "?").len() >= 3),
        "the first host started nothing:\n{}",
        a.stderr_text()
    );
    let others: Vec<Host> = ["busy1", "busy2"]
        .iter()
        .map(|h| {
            let mk = makefile(dir, h, log, busy, 200, 0);
            spawn_host(dir, Some(url), 3, h, &mk)
        })
        .collect();
    std::thread::sleep(Duration::from_millis(settle_ms));
    a.stop_group();
    let ts = *a.stopped_at.last().unwrap();
    std::thread::sleep(Duration::from_secs(TTL_S + 2));
    let took_over = wait_for(common::HANG_GUARD, || {
        etcd::read_tasks(log, "?")
            .iter()
            .any(|t| t.host != "frozen" && t.begin > ts + TTL_S * 1_000_000_000)
    });
    assert!(
        took_over,
        "the other hosts got no slot while the holder was frozen"
    );
    (a, others, ts)
}

/// Waits until `pred` holds, at most `limit` (the callers give [`common::HANG_GUARD`]: a guard
/// against a hang, never a bound on how fast anything must be); false on timeout.
fn wait_for(limit: Duration, mut pred: impl FnMut() -> bool) -> bool {
    let t = Instant::now();
    while t.elapsed() < limit {
        if pred() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    pred()
}

/// The time (ns) of the first task begin on `host` after `after`, if any.
fn first_begin(log: &Path, host: &str, after: u64) -> Option<u64> {
    etcd::read_tasks(log, "?")
        .into_iter()
        .filter(|t| t.host == host && t.begin > after)
        .map(|t| t.begin)
        .min()
}

/// The slot keys of budget `name` whose value names `host`.
fn host_keys(c: &Cluster, name: &str, host: &str) -> usize {
    c.range_prefix(&format!("/throttle/budget/{name}/slots/"))
        .unwrap_or_default()
        .iter()
        .filter(|k| k.value.contains(&format!("\"host\":\"{host}\"")))
        .count()
}

/// The tasks that began in (from, to) while another task of the same host ran: each needed a
/// token (a command's implicit slot runs one task at a time).
fn token_tasks(tasks: &[Task], from: u64, to: u64) -> Vec<Task> {
    tasks
        .iter()
        .filter(|t| t.begin > from && t.begin < to)
        .filter(|t| {
            tasks.iter().any(|o| {
                o.host == t.host
                    && o.id != t.id
                    && o.begin <= t.begin
                    && o.end.map_or(true, |e| e > t.begin)
            })
        })
        .cloned()
        .collect()
}

fn ms(ns: u64) -> f64 {
    ns as f64 / 1e6
}

/// Four hosts, one budget of N = 3: make recipes and throttle-pool tasks from all four never
/// run more than 3 at once. The control run, the same four hosts each with its own `-j 3` and
/// no budget, goes above 3 (so the check can fail).
#[test]
fn the_budget_holds_across_four_hosts() {
    let c = cluster!("holds");
    let dir = scratch("holds");
    let url = c.url("holds");
    let run = |budget: Option<&str>, log: &Path| {
        let mut hosts: Vec<Host> = (1..=4)
            .map(|k| {
                let name = format!("host{k}");
                let mk = makefile(&dir, &name, log, 8, 150, 1);
                spawn_host(&dir, budget, 3, &name, &mk)
            })
            .collect();
        for h in &mut hosts {
            let s = h.wait(Duration::from_secs(90));
            assert!(s.success(), "{}: {s}\n{}", h.name, h.stderr_text());
        }
        let refs: Vec<&Host> = hosts.iter().collect();
        let tasks = all_tasks(log, &refs);
        assert_eq!(
            tasks.len(),
            4 * (8 + 4),
            "every recipe and pool task ran once"
        );
        assert!(tasks.iter().all(|t| t.end.is_some()));
        (tasks, hosts)
    };
    let t = Instant::now();
    let log = dir.join("budget.log");
    let (tasks, hosts) = run(Some(&url), &log);
    let refs: Vec<&Host> = hosts.iter().collect();
    let (peak, n, _) = check_invariant(&tasks, &refs, 3, mono_ns(), "4 hosts, budget 3");
    eprintln!(
        "cluster_budget: 4 hosts under one budget of 3: at most {peak} of {n} tasks at once ({} ms)",
        t.elapsed().as_millis()
    );
    assert!(peak >= 2, "the budget was used in parallel at all: {peak}");

    let log = dir.join("control.log");
    let (tasks, _hosts) = run(None, &log);
    let all: Vec<&Task> = tasks.iter().collect();
    let (peak, _) = etcd::max_concurrency(&all, &|_| unreachable!());
    eprintln!(
        "cluster_budget: control, 4 hosts with -j 3 each and no budget: {peak} tasks at once"
    );
    assert!(
        peak > 3,
        "the control run without the budget stayed within 3 ({peak}): the check could not fail"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// SIGKILL of a holder's whole tree (3 runs): its slot keys go, and a waiting host's task
/// begins. Both times after the kill are printed, beside the bound they are expected to keep,
/// TTL + 2 s (etcd checks for expired leases every 500 ms); a loaded machine may take longer,
/// so the bound is not asserted.
#[test]
fn sigkill_of_a_holder_returns_its_slots_within_ttl_and_margin() {
    let c = cluster!("crash");
    let dir = scratch("crash");
    let bound = Duration::from_secs(TTL_S + 2);
    let mut gone = Vec::new();
    let mut granted = Vec::new();
    for round in 1..=3 {
        let name = format!("crash{round}");
        let url = c.url(&name);
        let log = dir.join(format!("{name}.log"));
        let a = format!("holder{round}");
        let b = format!("waiter{round}");
        let mk = makefile(&dir, &a, &log, 3, 60_000, 0);
        let mut ha = spawn_host(&dir, Some(&url), 3, &a, &mk);
        let three = wait_for(common::HANG_GUARD, || {
            etcd::read_tasks(&log, "?")
                .iter()
                .filter(|t| t.host == a)
                .count()
                == 3
        });
        assert!(
            three,
            "{a} did not start its 3 tasks:\n{}",
            ha.stderr_text()
        );
        let mk = makefile(&dir, &b, &log, 3, 100, 0);
        let mut hb = spawn_host(&dir, Some(&url), 3, &b, &mk);
        // The waiter is queued (its key exists) and runs nothing while the holder holds all 3.
        assert!(
            wait_for(common::HANG_GUARD, || host_keys(&c, &name, &b) > 0),
            "{b} never queued:\n{}",
            hb.stderr_text()
        );
        std::thread::sleep(Duration::from_millis(500));
        assert_eq!(
            first_begin(&log, &b, 0),
            None,
            "{b} ran while {a} held every slot"
        );
        assert_eq!(host_keys(&c, &name, &a), 3, "{a} holds 3 slot keys");
        ha.kill();
        let t0 = ha.killed_at.unwrap();
        let mut t_gone = None;
        let mut t_grant = None;
        let ok = wait_for(common::HANG_GUARD, || {
            if t_gone.is_none() && host_keys(&c, &name, &a) == 0 {
                t_gone = Some(mono_ns());
            }
            if t_grant.is_none() {
                t_grant = first_begin(&log, &b, t0);
            }
            t_gone.is_some() && t_grant.is_some()
        });
        assert!(
            ok,
            "after SIGKILL of {a}: keys gone {t_gone:?}, waiter began {t_grant:?}"
        );
        let (g, r) = (t_gone.unwrap() - t0, t_grant.unwrap() - t0);
        eprintln!(
            "cluster_budget: slot return after SIGKILL (run {round}): keys gone after {:.0} ms, waiter's task began after {:.0} ms (TTL {} ms, bound TTL + 2 s = {} ms)",
            ms(g),
            ms(r),
            TTL_S * 1000,
            bound.as_millis()
        );
        gone.push(g);
        granted.push(r);
        let s = hb.wait(Duration::from_secs(60));
        assert!(s.success(), "{b}: {s}\n{}", hb.stderr_text());
        let tasks = etcd::read_tasks(&log, "?");
        check_invariant(&tasks, &[&ha, &hb], 3, mono_ns(), &name);
    }
    let worst = *granted.iter().max().unwrap();
    eprintln!(
        "cluster_budget: slot return after SIGKILL: worst of 3: keys gone {:.0} ms, waiter began {:.0} ms; bound TTL + 2 s = {} ms",
        ms(*gone.iter().max().unwrap()),
        ms(worst),
        bound.as_millis()
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// SIGSTOP of a holder's whole tree for TTL + 2 s (a frozen host; the randomized run freezes
/// hosts with the cgroup freezer instead, where it has one): the other hosts get its
/// slots while it is frozen; after SIGCONT it says `budget lost`, starts no new task on slots
/// it no longer holds (the invariant holds, counting every task except those it was running
/// when frozen, which may finish), and still completes its work once it has slots again.
///
/// What makes it hold: make gets two pipes, so every token it gives back passes through
/// `throttle run`, which keeps it out of circulation once the trust window has ended (with one
/// pipe, make re-reads its own returned token within microseconds, and 4–6 tasks ran at once
/// here); and `throttle run` holds make stopped while no slot backs its implicit one (the test's
/// SIGCONT to every process of the tree continues make too: `throttle run` stops it again).
#[test]
fn a_frozen_holder_starts_nothing_on_lost_slots_after_it_thaws() {
    let c = cluster!("freeze");
    let dir = scratch("freeze");
    let url = c.url("freeze");
    let log = dir.join("tasks.log");
    let (mut a, mut others, _) = freeze_a_holder(&dir, &url, &log, (30, 200), 30, 700);
    a.cont_group();
    let t_thaw = mono_ns();
    for h in others.iter_mut().chain(std::iter::once(&mut a)) {
        let s = h.wait(Duration::from_secs(120));
        assert!(s.success(), "{}: {s}\n{}", h.name, h.stderr_text());
    }
    let err = a.stderr_text();
    let lost: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("throttle run: budget lost:"))
        .collect();
    assert!(
        !lost.is_empty(),
        "no `throttle run: budget lost:` line after the thaw:\n{err}"
    );
    eprintln!("cluster_budget: frozen holder said: {}", lost[0]);
    for l in err.lines().filter(|l| {
        l.starts_with("throttle run: make ") || l.starts_with("throttle run: budget back")
    }) {
        eprintln!("cluster_budget: frozen holder said: {l}");
    }
    let tasks = etcd::read_tasks(&log, "?");
    assert_eq!(tasks.len(), 90, "every recipe ran once");
    let refs = [&a, &others[0], &others[1]];
    let (peak, counted, excluded) = check_invariant(&tasks, &refs, 3, mono_ns(), "SIGSTOP");
    let hold = check_hold(&tasks, &refs, mono_ns(), "SIGSTOP");
    let first_hold = held_intervals(&a, mono_ns()).first().copied();
    eprintln!(
        "cluster_budget: SIGSTOP: the frozen host's make was held stopped {} time(s), {:.0} ms in all, from {} after the SIGCONT to its process group; {} task(s) began while held (the race right after the SIGCONT)",
        hold.holds,
        hold.held_ms,
        first_hold.map_or("never".into(), |(from, _)| format!(
            "{:+.1} ms",
            (from as f64 - t_thaw as f64) / 1e6
        )),
        hold.raced.len()
    );
    let after = tasks
        .iter()
        .filter(|t| t.host == "frozen" && t.begin > t_thaw)
        .count();
    let a_stops = a.stops(mono_ns());
    let raced = tasks
        .iter()
        .filter(|t| t.host == "frozen" && a.raced_and_stopped(t, &a_stops))
        .count();
    eprintln!(
        "cluster_budget: SIGSTOP {} s > TTL {} s: at most {peak} tasks at once over {counted} tasks ({excluded} excluded: {raced} of a job started in the resume race and stopped by throttle run's look, the others running on the frozen host when it stopped); the frozen host ran {after} new tasks after the thaw",
        TTL_S + 2,
        TTL_S
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The resume race, made wide: a holder frozen past its trust window is resumed process by
/// process, its make and make's jobs first and `throttle run` only once make has started a new
/// job (a task of the host begins), as happens for a few milliseconds when a whole host resumes
/// and make is scheduled before `throttle run`. The look `throttle run` makes when it runs must
/// stop make and every job started meanwhile (their pids in its `[stopped …]` line) and keep
/// them stopped until a slot is granted; the invariant then holds with those jobs left out as
/// the resume race (`Host::raced_and_stopped`), and without that rule it would not (the race
/// did happen: more than 3 tasks began and ran at once).
#[test]
fn jobs_started_in_the_resume_race_are_stopped_at_the_first_look() {
    let c = cluster!("race");
    let dir = scratch("race");
    let url = c.url("race");
    let log = dir.join("tasks.log");
    // Long tasks: a job started in the race still runs when `throttle run` looks.
    let (mut a, mut others, ts) = freeze_a_holder(&dir, &url, &log, (12, 1500), 40, 300);
    // Everything of the host but `throttle run` resumes (its running jobs' sleeps have long
    // ended: they exit, and make starts the next ones on their slots).
    a.resumed_at.push(mono_ns());
    for pid in etcd::tree(a.pid()) {
        if pid != a.pid() {
            // SAFETY: kill(2) of a process of this test's own host tree; no memory effects.
            unsafe { libc::kill(pid, libc::SIGCONT) };
        }
    }
    a.events
        .push((mono_ns(), "SIGCONT to all but throttle run"));
    let began = wait_for(common::HANG_GUARD, || {
        first_begin(&log, "frozen", ts).is_some()
    });
    // SAFETY: as above, `throttle run` itself.
    unsafe { libc::kill(a.pid(), libc::SIGCONT) };
    a.frozen = false;
    a.events.push((mono_ns(), "SIGCONT to throttle run"));
    assert!(
        began,
        "make started no job within 10 s of its resume:\n{}",
        a.stderr_text()
    );
    for h in others.iter_mut().chain(std::iter::once(&mut a)) {
        let s = h.wait(Duration::from_secs(120));
        assert!(s.success(), "{}: {s}\n{}", h.name, h.stderr_text());
    }
    let tasks = etcd::read_tasks(&log, "?");
    assert_eq!(tasks.len(), 12 + 80, "every recipe ran once");
    let now = mono_ns();
    let stops = a.stops(now);
    let raced: Vec<&Task> = tasks
        .iter()
        .filter(|t| t.host == "frozen" && t.begin > ts)
        .filter(|t| a.raced_and_stopped(t, &stops))
        .collect();
    let first_stop = stop_lines(&a).first().cloned();
    assert!(
        !raced.is_empty(),
        "no job of the race was stopped by the first look (stop lines {:?}); tasks of the host after the freeze: {:?}\n{}",
        stop_lines(&a),
        tasks
            .iter()
            .filter(|t| t.host == "frozen" && t.begin > ts)
            .map(|t| (t.id.clone(), t.begin, t.job_pid))
            .collect::<Vec<_>>(),
        a.stderr_text()
    );
    // Held: each ended only after the hold that stopped it ended (1.5 s tasks whose sleep ran
    // out while stopped end at once when continued).
    let holds = held_intervals(&a, now);
    for t in &raced {
        let hold = holds.iter().find(|&&(_, to)| t.begin < to);
        assert!(
            hold.is_some_and(|&(_, to)| t.end.is_some_and(|e| e >= to)),
            "task {} of the race ended at {:?}, before its hold {hold:?} ended",
            t.id,
            t.end
        );
    }
    let refs = [&a, &others[0], &others[1]];
    // Without the rule for the race (only the tasks running at the freeze left out), more
    // than 3 ran at once: the race happened.
    let unruled_set: Vec<&Task> = tasks
        .iter()
        .filter(|t| {
            !refs
                .iter()
                .any(|h| h.name == t.host && h.running_at_freeze(t, now))
        })
        .collect();
    let (unruled, _) = etcd::max_concurrency(&unruled_set, &|_| now);
    let (peak, counted, excluded) = check_invariant(&tasks, &refs, 3, now, "resume race");
    eprintln!(
        "cluster_budget: resume race: {} job(s) of the frozen host began after make resumed and before throttle run's first look ({}), which stopped them; at most {peak} tasks at once over {counted} tasks ({excluded} excluded), {unruled} at once counting them",
        raced.len(),
        first_stop.map_or("no stop line".to_string(), |(at, pids)| format!(
            "{:+.1} ms after the resume, pids {pids:?}",
            (at as f64 - *a.resumed_at.last().unwrap() as f64) / 1e6
        )),
    );
    assert!(
        unruled > 3,
        "the race did not happen: at most {unruled} tasks at once counting every task"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Killing one etcd member: tasks keep starting, and a host started then (the first member of
/// its URL down) connects and queues. Killing a second (no quorum): within the
/// lease TTL no host starts a new task, and each host says `throttle run: budget lost:`.
/// Restarting both: tasks start again, and over the whole run never more than 3 at once.
#[test]
fn member_faults_one_keeps_working_two_stop_grants_restart_resumes() {
    let mut c = cluster!("members");
    let dir = scratch("members");
    let url = c.url("members");
    let log = dir.join("tasks.log");
    let mut hosts: Vec<Host> = (1..=3)
        .map(|k| {
            let name = format!("host{k}");
            let mk = makefile(&dir, &name, &log, 400, 100, 0);
            spawn_host(&dir, Some(&url), 3, &name, &mk)
        })
        .collect();
    let begins_in = |from: u64, to: u64| {
        etcd::read_tasks(&log, "?")
            .iter()
            .filter(|t| t.begin > from && t.begin < to)
            .count()
    };
    assert!(
        wait_for(common::HANG_GUARD, || begins_in(0, u64::MAX) >= 6),
        "no work started:\n{}",
        hosts[0].stderr_text()
    );
    c.kill(0);
    let t_k0 = mono_ns();
    // A host that starts now, with the first member of its URL down, connects and queues
    // (its key appears; it may wait long for a slot while the others stay busy).
    // (After the two others agree on a leader: a connect during the election may time out.)
    c.wait_healthy(&[1, 2], etcd::STARTUP_TIMEOUT);
    let joiner = vec![
        "sh".to_string(),
        "-c".into(),
        logger_cmd(&log, "joiner", 50),
    ];
    let j = spawn_cmd(&dir, Some(&url), 3, "joiner", &joiner);
    let joined = wait_for(common::HANG_GUARD, || {
        host_keys(&c, "members", "joiner") > 0
    });
    assert!(
        joined,
        "a host started with 1 of 3 members down did not join the queue:\n{}",
        j.stderr_text()
    );
    std::thread::sleep(Duration::from_secs(3));
    let mut with_two = 0;
    assert!(
        wait_for(common::HANG_GUARD, || {
            with_two = begins_in(t_k0 + 1_000_000_000, mono_ns());
            with_two > 0
        }),
        "no task started from 1 s after one member of 3 was killed"
    );
    c.kill(1);
    let t_k1 = mono_ns();
    std::thread::sleep(Duration::from_secs(TTL_S + 3));
    let t_back = mono_ns();
    let last = etcd::read_tasks(&log, "?")
        .iter()
        .filter(|t| t.begin > t_k1)
        .map(|t| t.begin - t_k1)
        .max();
    // A token is what a host grants; its command's own implicit slot needs none, so make
    // may go on running one recipe at a time on it. A task that begins while another task of
    // the same host runs took a token: none may begin that way once the lease can have
    // expired (TTL after the second kill).
    let quiet_from = t_k1 + TTL_S * 1_000_000_000;
    let tasks = etcd::read_tasks(&log, "?");
    let on_token = token_tasks(&tasks, quiet_from, t_back);
    let last_token = token_tasks(&tasks, t_k1, t_back)
        .iter()
        .map(|t| t.begin - t_k1)
        .max();
    eprintln!(
        "cluster_budget: quorum lost: last task begun beside another of its host {} after the second kill (trust ends TTL - margin = {} ms after the last renewal; a host's make is held from then on, checked below)",
        last_token.map_or("never".to_string(), |l| format!("{:.0} ms", ms(l))),
        TTL_S * 1000 - 1000
    );
    let serial = begins_in(quiet_from, t_back);
    eprintln!(
        "cluster_budget: quorum lost: {with_two} tasks started with 2 of 3 members; last task start {} after the second kill (TTL {} ms); after TTL: {} tasks began beside another of their host, {serial} began in all",
        last.map_or("none".to_string(), |l| format!("{:.0} ms", ms(l))),
        TTL_S * 1000,
        on_token.len()
    );
    // No new token: per host, its peak from TTL after the kill to the restart is at most its
    // peak in the 2 s before its trust could end (TTL - margin after the kill). (A host's make
    // is held stopped from the end of its trust window on, and no task begins while it is
    // held: `check_hold` below.)
    let trust_end = t_k1 + (TTL_S - 1) * 1_000_000_000;
    for h in &hosts {
        let mine: Vec<&Task> = tasks.iter().filter(|t| t.host == h.name).collect();
        let peak_in = |from: u64, to: u64| {
            let clipped: Vec<Task> = mine
                .iter()
                .filter(|t| t.begin < to && t.end.map_or(true, |e| e > from))
                .map(|t| Task {
                    begin: t.begin.max(from),
                    end: Some(t.end.unwrap_or(to).min(to)),
                    ..(*t).clone()
                })
                .collect();
            let refs: Vec<&Task> = clipped.iter().collect();
            etcd::max_concurrency(&refs, &|_| to).0
        };
        let before = peak_in(trust_end - 2_000_000_000, trust_end);
        let after = peak_in(quiet_from, t_back);
        eprintln!(
            "cluster_budget: quorum lost: {} ran at most {before} at once before its trust ended, {after} after",
            h.name
        );
        assert!(
            after <= before,
            "{} ran {after} tasks at once after quorum was lost, {before} before: a new token",
            h.name
        );
    }
    // Every holder (a host that ran tasks before the quorum went) says why it stopped; a host
    // still waiting for its first slot holds nothing to stop.
    let holders: Vec<&Host> = hosts
        .iter()
        .filter(|h| first_begin(&log, &h.name, 0).is_some_and(|b| b < t_k1))
        .collect();
    assert!(!holders.is_empty());
    for h in holders {
        let said = |h: &Host| {
            h.stderr_text()
                .lines()
                .any(|l| l.starts_with("throttle run: budget lost:"))
        };
        assert!(
            wait_for(common::HANG_GUARD, || said(h)),
            "{} did not say `throttle run: budget lost:`:\n{}",
            h.name,
            h.stderr_text()
        );
    }
    eprintln!(
        "cluster_budget: a host said: {}",
        hosts
            .iter()
            .find_map(|h| h
                .stderr_text()
                .lines()
                .find(|l| l.starts_with("throttle run: budget lost:"))
                .map(str::to_string))
            .unwrap()
    );
    c.restart(0);
    c.restart(1);
    c.wait_healthy(&[0, 1, 2], etcd::STARTUP_TIMEOUT);
    let t_healthy = mono_ns();
    // Work resumes: every host that lost the budget takes slots again (`budget back`), the
    // budget's slots are held again in etcd, and tasks start.
    let lost: Vec<usize> = (0..hosts.len())
        .filter(|&i| {
            hosts[i]
                .stderr_text()
                .contains("throttle run: budget lost:")
        })
        .collect();
    let back = wait_for(common::HANG_GUARD, || {
        lost.iter()
            .all(|&i| hosts[i].stderr_text().contains("throttle run: budget back"))
    });
    let t_all_back = mono_ns();
    assert!(
        back,
        "not every host took slots again after the members came back:\n{}",
        hosts[0].stderr_text()
    );
    let mut held = 0;
    assert!(
        wait_for(common::HANG_GUARD, || {
            held = c
                .range_prefix("/throttle/budget/members/slots/")
                .unwrap()
                .len();
            held >= 3
        }),
        "only {held} slot keys in etcd after the restart"
    );
    let started = wait_for(common::HANG_GUARD, || begins_in(t_all_back, u64::MAX) > 0);
    assert!(started, "no task started after every host was back");
    eprintln!(
        "cluster_budget: members restarted: healthy after {:.0} ms; all {} hosts that lost the budget said `budget back` {:.0} ms after that; {held} slot keys in etcd",
        ms(t_healthy - t_back),
        lost.len(),
        ms(t_all_back - t_healthy)
    );
    std::thread::sleep(Duration::from_secs(2));
    for h in &mut hosts {
        h.kill();
    }
    let mut j = j;
    j.kill();
    let refs: Vec<&Host> = hosts.iter().chain(std::iter::once(&j)).collect();
    let tasks = etcd::read_tasks(&log, "?");
    let (peak, n, _) = check_invariant(&tasks, &refs, 3, mono_ns(), "member faults");
    let hold = check_hold(&tasks, &refs, mono_ns(), "member faults");
    assert!(hold.raced.is_empty(), "the test continued no host here");
    eprintln!(
        "cluster_budget: member faults: commands held stopped {} time(s), {:.0} ms in all; no task began while held",
        hold.holds, hold.held_ms
    );
    let ran: Vec<String> = refs
        .iter()
        .map(|h| {
            format!(
                "{} {}",
                h.name,
                tasks.iter().filter(|t| t.host == h.name).count()
            )
        })
        .collect();
    eprintln!(
        "cluster_budget: member faults: tasks per host: {}",
        ran.join(", ")
    );
    eprintln!("cluster_budget: member faults: at most {peak} tasks at once over {n} tasks");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Fairness: with a budget of 1 held by one host, five hosts that start 300 ms apart are
/// queued in that order (`throttle budget status --json` shows it) and served in that order.
#[test]
fn waiters_are_served_in_arrival_order() {
    let c = cluster!("fair");
    let dir = scratch("fair");
    let url = c.url("fair");
    let log = dir.join("tasks.log");
    let task =
        |host: &str, ms: u64| vec!["sh".to_string(), "-c".into(), logger_cmd(&log, host, ms)];
    // The holder holds the one slot until the queue has been read.
    let release = dir.join("release");
    let holder_task = vec![
        "sh".to_string(),
        "-c".into(),
        logger_cmd_until(&log, "holder", 0, Some(&release)),
    ];
    let mut holder = spawn_cmd(&dir, Some(&url), 1, "holder", &holder_task);
    assert!(
        wait_for(common::HANG_GUARD, || first_begin(&log, "holder", 0)
            .is_some()),
        "the holder did not start:\n{}",
        holder.stderr_text()
    );
    let mut waiters = Vec::new();
    for k in 1..=5 {
        let name = format!("w{k}");
        waiters.push(spawn_cmd(&dir, Some(&url), 1, &name, &task(&name, 100)));
        assert!(
            wait_for(common::HANG_GUARD, || host_keys(&c, "fair", &name) == 1),
            "{name} did not queue"
        );
        std::thread::sleep(Duration::from_millis(300));
    }
    let out = common::throttle()
        .args(["budget", "status", &url, "--json"])
        .output()
        .unwrap();
    let status = common::assert_success(&out);
    let v: serde_json::Value = serde_json::from_str(&status).expect("status --json is JSON");
    let hosts = |k: &str| -> Vec<String> {
        v[k].as_array()
            .unwrap_or_else(|| panic!("no {k} in {status}"))
            .iter()
            .map(|e| e["host"].as_str().unwrap_or("?").to_string())
            .collect()
    };
    assert_eq!(v["slots"], 1, "{status}");
    assert_eq!(v["in_use"], 1, "{status}");
    assert_eq!(hosts("holders"), ["holder"], "{status}");
    assert_eq!(hosts("waiters"), ["w1", "w2", "w3", "w4", "w5"], "{status}");
    std::fs::write(&release, "").unwrap();
    for h in waiters.iter_mut().chain(std::iter::once(&mut holder)) {
        let s = h.wait(Duration::from_secs(60));
        assert!(s.success(), "{}: {s}\n{}", h.name, h.stderr_text());
    }
    let mut tasks = etcd::read_tasks(&log, "?");
    tasks.sort_by_key(|t| t.begin);
    let order: Vec<&str> = tasks.iter().map(|t| t.host.as_str()).collect();
    eprintln!("cluster_budget: fairness: served in order {order:?}");
    assert_eq!(order, ["holder", "w1", "w2", "w3", "w4", "w5"]);
    let refs: Vec<&Host> = waiters.iter().chain(std::iter::once(&holder)).collect();
    check_invariant(&tasks, &refs, 1, mono_ns(), "fairness, budget 1");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Grant latency on loopback through the library: `acquire()` to grant when a slot is free
/// (a put and a read through raft), over many grants; p50 and p99 printed.
#[test]
fn grant_latency_on_loopback() {
    use throttle_budget::{BudgetUrl, EtcdBudget, Options};
    let c = cluster!("latency");
    let url: BudgetUrl = c.url("latency").parse().expect("the harness's URL parses");
    let budget = EtcdBudget::connect(&url, 3, Options::default().with_host("latency"))
        .expect("connecting to the cluster");
    for _ in 0..10 {
        drop(budget.acquire().unwrap());
    }
    let k: usize = std::env::var("THROTTLE_LATENCY_GRANTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(300);
    let mut lat: Vec<Duration> = (0..k)
        .map(|_| {
            let t = Instant::now();
            let slot = budget.acquire().unwrap();
            let d = t.elapsed();
            assert!(slot.is_valid());
            drop(slot);
            d
        })
        .collect();
    lat.sort();
    let q = |p: f64| lat[((lat.len() as f64 * p).ceil() as usize).clamp(1, lat.len()) - 1];
    eprintln!(
        "cluster_budget: grant latency p50 {:.2} ms p99 {:.2} ms over {k} grants (library acquire() with a free slot, 3-member etcd on loopback)",
        q(0.50).as_secs_f64() * 1e3,
        q(0.99).as_secs_f64() * 1e3
    );
    assert!(
        wait_for(common::HANG_GUARD, || budget.status().unwrap().in_use == 0),
        "every slot was given back: {:?}",
        budget.status()
    );
}

/// Hand-over latency on loopback through the library: two processes' worth of budget (two
/// `EtcdBudget`s, two leases) on a budget of N = 1; one holds the slot while the other waits in
/// `acquire()`; the time from the holder's release (`drop` of its slot) to the waiter's grant,
/// over `THROTTLE_HANDOVER_ROUNDS` rounds (default 200): a delete, the watch event, the
/// waiter's range read and its re-put through raft. p50 and p99 printed.
#[test]
fn handover_latency_on_loopback() {
    use std::sync::Arc;
    use throttle_budget::{BudgetUrl, EtcdBudget, Options};
    let c = cluster!("handover");
    let url: BudgetUrl = c.url("handover").parse().expect("the harness's URL parses");
    let holder = EtcdBudget::connect(&url, 1, Options::default().with_host("holder"))
        .expect("connecting to the cluster");
    let waiter = Arc::new(
        EtcdBudget::connect(&url, 1, Options::default().with_host("waiter"))
            .expect("connecting to the cluster"),
    );
    let k: usize = std::env::var("THROTTLE_HANDOVER_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200);
    let mut lat = Vec::with_capacity(k);
    for _ in 0..k + 10 {
        let held = holder.acquire().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        let w = waiter.clone();
        let t = std::thread::spawn(move || {
            let slot = w.acquire().unwrap();
            let granted = Instant::now();
            assert!(slot.is_valid());
            tx.send(granted).unwrap();
            drop(slot);
        });
        // The waiter's key is queued behind the holder's before the release.
        assert!(
            wait_for(common::HANG_GUARD, || holder
                .status()
                .is_ok_and(|s| s.waiters.len() == 1)),
            "the waiter never queued"
        );
        let released = Instant::now();
        drop(held);
        let granted = rx
            .recv_timeout(common::HANG_GUARD)
            .expect("the waiter is granted the released slot");
        t.join().unwrap();
        lat.push(granted.duration_since(released));
    }
    // The first 10 rounds warm the connections up.
    let mut lat: Vec<Duration> = lat.split_off(10);
    lat.sort();
    let q = |p: f64| lat[((lat.len() as f64 * p).ceil() as usize).clamp(1, lat.len()) - 1];
    eprintln!(
        "cluster_budget: hand-over latency p50 {:.2} ms p99 {:.2} ms max {:.2} ms over {k} hand-overs (release by one lease to grant to the waiting one, library, 3-member etcd on loopback)",
        q(0.50).as_secs_f64() * 1e3,
        q(0.99).as_secs_f64() * 1e3,
        q(1.0).as_secs_f64() * 1e3
    );
}

/// A host frozen while it joins still joins once it resumes (the case behind the randomized
/// fault run's rare exit 2). The URL names first a "member" that accepts connections and never
/// answers (a listener of this test), then the three real members: joining asks one member per
/// attempt, so the first attempt hangs for its 1 s; the host is frozen (SIGSTOP to its process
/// group) as soon as it has connected to the silent member, for 5 s, longer than the 4 s
/// patience, then continued. It must go on
/// to ask the real members, run its task and exit 0. Were the frozen time counted against the
/// patience, it would resume past it and exit 2 at once, `cannot reach the etcd cluster … (no
/// answer within 1000 ms from the member asked)`, without asking anyone again.
#[test]
fn a_host_frozen_while_it_joins_joins_when_it_resumes() {
    let c = cluster!("frozenjoin");
    let dir = scratch("frozenjoin");
    let log = dir.join("tasks.log");
    // Accepts (the kernel's backlog does) and never says a word.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!(
        "etcd://127.0.0.1:{},{}/frozenjoin",
        silent.local_addr().unwrap().port(),
        c.endpoints()
    );
    let task = vec!["sh".to_string(), "-c".into(), logger_cmd(&log, "f", 10)];
    silent.set_nonblocking(true).unwrap();
    let t0 = mono_ns();
    let mut h = spawn_cmd(&dir, Some(&url), 3, "f", &task);
    // Joining: the host has connected to the silent member. The connection is kept open (and
    // unanswered) until the end.
    let mut connected = Vec::new();
    assert!(
        wait_for(common::HANG_GUARD, || {
            if let Ok((conn, _)) = silent.accept() {
                connected.push(conn);
            }
            !connected.is_empty()
        }),
        "the host never connected to the first member of its URL:\n{}",
        h.stderr_text()
    );
    h.freeze();
    std::thread::sleep(Duration::from_secs(5));
    h.thaw();
    let st = h.wait(Duration::from_secs(60));
    assert!(st.success(), "f: {st}\n{}", h.stderr_text());
    let begin = first_begin(&log, "f", t0).expect("the task ran");
    eprintln!(
        "cluster_budget: a host frozen 5 s while it joined (first member asked never answers) joined and ran its task {:.0} ms after its start",
        ms(begin - t0)
    );
    drop(connected);
    drop(silent);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A host started while one member is down joins: `THROTTLE_B2_ROUNDS` rounds
/// (default 12); each kills one member (SIGKILL or SIGTERM, in turn; every fourth round the
/// leader, by SIGKILL) and starts a host 0 to 1.2 s later, within the cluster's reaction to the
/// loss, then restarts the member (every third round just before the host starts, so that it
/// rejoins while the host connects). Every host must run its task and exit 0; the time from its
/// start to its task's begin is printed (p50 and max).
#[test]
fn hosts_started_with_one_member_down_join() {
    let mut c = cluster!("b2");
    let dir = scratch("b2");
    let url = c.url("b2");
    let log = dir.join("tasks.log");
    let rounds: usize = std::env::var("THROTTLE_B2_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(12);
    let mut waits = Vec::new();
    let mut failed = Vec::new();
    for round in 0..rounds {
        // Every fourth round takes the leader (the hardest case: an election under way).
        let m = match round % 4 {
            0 => c.leader().unwrap_or(0),
            _ => round % c.size(),
        };
        if round % 2 == 0 {
            c.kill(m);
        } else {
            c.stop(m);
        }
        std::thread::sleep(Duration::from_millis((round as u64 * 311) % 1200));
        // Every third round the member comes back just before the host starts (it rejoins
        // while the host connects), as in the randomized run.
        let back_early = round % 3 == 2;
        if back_early {
            c.restart(m);
        }
        let name = format!("j{round}");
        let task = vec!["sh".to_string(), "-c".into(), logger_cmd(&log, &name, 10)];
        let t0 = mono_ns();
        let mut h = spawn_cmd(&dir, Some(&url), 3, &name, &task);
        let st = h.wait(Duration::from_secs(60));
        match first_begin(&log, &name, t0) {
            Some(b) if st.success() => waits.push(b - t0),
            _ => failed.push(format!(
                "round {round} (member {m} {}): {st}: {}",
                if round % 2 == 0 { "killed" } else { "stopped" },
                h.stderr_text().trim()
            )),
        }
        if !back_early {
            c.restart(m);
        }
        c.wait_healthy(&[0, 1, 2], etcd::STARTUP_TIMEOUT);
    }
    waits.sort_unstable();
    let q = |p: f64| {
        waits
            .get(((waits.len() as f64 * p).ceil() as usize).clamp(1, waits.len().max(1)) - 1)
            .map_or(f64::NAN, |&w| ms(w))
    };
    eprintln!(
        "cluster_budget: hosts started with one member down: {} of {rounds} joined and ran; start to task p50 {:.0} ms, max {:.0} ms",
        waits.len(),
        q(0.5),
        q(1.0)
    );
    assert!(
        failed.is_empty(),
        "hosts that did not join:\n{}",
        failed.join("\n")
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Reports, once each, the hosts of the randomized run that exited non-zero without having
/// been killed: their exit status, what the test did to them (relative to their start), the
/// member faults from 5 s before their start to their end, and their whole stderr. Printed at
/// once (so that a later panic cannot hide it) and kept in `failed` for the final assert.
fn report_failed_hosts(
    hosts: &mut [Host],
    reported: &mut Vec<bool>,
    member_events: &[(u64, String)],
    failed: &mut Vec<String>,
) {
    reported.resize(hosts.len(), false);
    let now = mono_ns();
    for (i, h) in hosts.iter_mut().enumerate() {
        if reported[i] || h.killed_at.is_some() {
            continue;
        }
        let Some(status) = h.done() else { continue };
        reported[i] = true;
        if status.success() {
            continue;
        }
        let start = h.events.first().map_or(0, |e| e.0);
        let rel = |t: u64| (t as f64 - start as f64) / 1e6;
        let ev: Vec<String> = h
            .events
            .iter()
            .map(|(t, e)| format!("{e} at {:+.0} ms", rel(*t)))
            .collect();
        let members: Vec<String> = member_events
            .iter()
            .filter(|(t, _)| *t + 5_000_000_000 >= start && *t <= now)
            .map(|(t, e)| format!("{e} at {:+.0} ms", rel(*t)))
            .collect();
        let text = format!(
            "{}: {status} (seen {:.0} ms after its start); test's actions on it: {}; member faults: {}\n--- {} stderr ---\n{}--- end of {} stderr ---",
            h.name,
            rel(now),
            ev.join(", "),
            if members.is_empty() { "none".to_string() } else { members.join(", ") },
            h.name,
            h.stderr_text(),
            h.name,
        );
        eprintln!("cluster_budget: host that was not killed failed: {text}");
        failed.push(text);
    }
}

/// A small xorshift generator: the randomized run is reproducible from its printed seed.
struct Rng(u64);

impl Rng {
    fn step(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.step() % n
    }
}

/// The randomized fault run: `THROTTLE_FAULT_ROUNDS` rounds (default 1,000) of one random
/// short action each, about 100 ms apart: SIGKILL a host's tree, freeze a host (thawed after
/// 0.2 to TTL + 1.5 s; only 0.1 to 0.6 s, no lease lost, with THROTTLE_FAULT_LONG_STOPS=0),
/// stop or SIGKILL an etcd member and restart it later (at most one down at a time), or start
/// a new host; hosts that finish are replaced. The invariant (never more than 3 tasks at once,
/// tasks running on a host when it was frozen excluded) and the hold (no task begins while its
/// host's command is held stopped) are checked every 100 rounds and at the end. Seed:
/// `THROTTLE_FAULT_SEED` (printed); the actions to draw from: `THROTTLE_FAULT_KINDS` (default
/// `kill,stop,member,start`).
///
/// Hosts are frozen as a whole with the cgroup v2 freezer (`etcd::Freezer`), as a paused VM or
/// `docker pause` is: every process keeps its own stopped state through the thaw. SIGSTOP to
/// its process group and SIGCONT would not do: SIGCONT also continues whatever `throttle run`
/// holds stopped, so a host frozen while held would come back with its command continued *from
/// outside*, which no resumed host does, and a job that command started before it was stopped
/// again could begin its task (3 of 6 runs failed that way at loads 4.5 to 13, 2.7 to 138 ms
/// after the `stopped again` line). That case (a shell's `fg`, someone's SIGCONT) keeps its own
/// tests with its window documented:
/// `a_frozen_holder_starts_nothing_on_lost_slots_after_it_thaws` and
/// `hold::tests::a_command_held_inside_posix_spawn_and_continued_from_outside_is_stopped_again`.
/// Without a writable cgroup v2 freezer the default leaves freezes out and says so.
///
/// With the freezer, one run in the first three failed the hold check: a job make had forked
/// just before the freeze logged its begin 2.6 ms after the thaw, when `throttle run` had
/// already held make. It is a job started before the freeze (and before the host's slot
/// ended), which goes on as documented; the logger now writes its job's pid and creation time,
/// the test notes the processes the hold had not stopped when a freeze took hold, and a task
/// whose job was one of them counts as running at the freeze (`Host::running_at_freeze`).
/// One later run (load 0.9, no freeze near it) failed the hold check once more, on a task
/// that began 6.9 ms after the hold's SIGSTOP to make, from a job created in the 10 ms tick
/// that held the SIGSTOP, which the hold's search for jobs started after the slot ended did
/// not count as one: a job started before the slot ended, or in the instant between its end
/// and the look (both documented). The hold's promise is about jobs: the check now fails on a
/// job *created* while held, and counts and prints the tasks of jobs created before the hold
/// began.
///
/// What this run has found: a lost lease let make recycle tokens the host no longer held (4 at
/// once in runs that failed at rounds 100–700); a host started right after a member's SIGKILL
/// and frozen while joining during the election exited 2 once it resumed past its patience,
/// which counted the frozen time (joining counts only time the process ran:
/// `a_host_frozen_while_it_joins_joins_when_it_resumes`); a held make inside
/// posix_spawn (`CLONE_VFORK`), continued from outside, ran on unheld (the hold reads /proc at
/// every look while held). The test never takes the quorum away (one member down at a time, a
/// new fault only while all three are healthy), so no exit 2 is accepted.
#[test]
fn randomized_faults_keep_the_budget() {
    let mut c = cluster!("random");
    let dir = scratch("random");
    let url = c.url("random");
    let log = dir.join("tasks.log");
    let rounds: usize = std::env::var("THROTTLE_FAULT_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1000);
    let seed: u64 = std::env::var("THROTTLE_FAULT_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| mono_ns() | 1);
    let long_stops = std::env::var("THROTTLE_FAULT_LONG_STOPS").as_deref() != Ok("0");
    // Host freezes need the cgroup v2 freezer: with signals, the thaw's SIGCONT to every
    // process also continues what `throttle run` holds stopped, and a job that command starts
    // before it is stopped again can begin its task (the window `cont_group` documents; its
    // own test is `hold::tests`). Without a freezer the default leaves freezes out.
    let freezer = etcd::Freezer::new("probe").is_some();
    // Which actions run (default all): kill, stop, member, start.
    let kinds = std::env::var("THROTTLE_FAULT_KINDS").unwrap_or_else(|_| {
        if freezer {
            "kill,stop,member,start".into()
        } else {
            "kill,member,start".into()
        }
    });
    let kind = |k: &str| kinds.split(',').any(|x| x.trim() == k);
    eprintln!(
        "cluster_budget: randomized fault run: {rounds} rounds, seed {seed}, actions {kinds}, host stops up to {} ms (THROTTLE_FAULT_ROUNDS, THROTTLE_FAULT_SEED, THROTTLE_FAULT_KINDS, THROTTLE_FAULT_LONG_STOPS), {}",
        if long_stops { TTL_S * 1000 + 1500 } else { 600 },
        if freezer {
            "hosts frozen with the cgroup v2 freezer"
        } else {
            "no cgroup v2 freezer here: host freezes left out unless THROTTLE_FAULT_KINDS names `stop` (then done with SIGSTOP and SIGCONT to the host's process group)"
        }
    );
    let mut rng = Rng(seed);
    let mut hosts: Vec<Host> = Vec::new();
    let mut serial = 0;
    let mut new_host = |hosts: &mut Vec<Host>, rng: &mut Rng| {
        serial += 1;
        let name = format!("r{serial}");
        let tasks = 20 + rng.below(40) as usize;
        let mk = makefile(&dir, &name, &log, tasks, 30 + rng.below(150), 0);
        hosts.push(spawn_host(&dir, Some(&url), 3, &name, &mk));
    };
    for _ in 0..4 {
        new_host(&mut hosts, &mut rng);
    }
    // (thaw at, host index) for frozen hosts; (restart at, member) for a member that is down.
    let mut thaws: Vec<(Instant, usize)> = Vec::new();
    let mut down: Option<(Instant, usize)> = None;
    // What the test did to the members and when (CLOCK_MONOTONIC ns), for failure messages.
    let mut member_events: Vec<(u64, String)> = Vec::new();
    // Hosts that were not killed and exited non-zero, with everything known about them, each
    // printed once as soon as it is seen (a later panic must not hide it).
    let mut failed: Vec<String> = Vec::new();
    let mut reported: Vec<bool> = Vec::new();
    let (mut kills, mut stops, mut member_faults, mut starts) = (0, 0, 0, 0);
    let t_run = Instant::now();
    let check = |hosts: &Vec<Host>, what: &str| {
        let refs: Vec<&Host> = hosts.iter().collect();
        let tasks = etcd::read_tasks(&log, "?");
        check_hold(&tasks, &refs, mono_ns(), what);
        check_invariant(&tasks, &refs, 3, mono_ns(), what)
    };
    for round in 1..=rounds {
        std::thread::sleep(Duration::from_millis(50 + rng.below(100)));
        let now = Instant::now();
        thaws.retain(|&(at, i)| {
            if at <= now {
                hosts[i].thaw();
                false
            } else {
                true
            }
        });
        if let Some((at, m)) = down {
            if at <= now {
                c.restart(m);
                member_events.push((mono_ns(), format!("m{m} restarted")));
                down = None;
            }
        }
        report_failed_hosts(&mut hosts, &mut reported, &member_events, &mut failed);
        let live: Vec<usize> = (0..hosts.len())
            .filter(|&i| hosts[i].killed_at.is_none() && hosts[i].done().is_none())
            .collect();
        match rng.below(100) {
            0..=9 if kind("kill") && !live.is_empty() => {
                let i = live[rng.below(live.len() as u64) as usize];
                thaws.retain(|&(_, j)| j != i);
                hosts[i].kill();
                kills += 1;
            }
            10..=19 if kind("stop") && !live.is_empty() => {
                let i = live[rng.below(live.len() as u64) as usize];
                if !hosts[i].frozen {
                    hosts[i].freeze();
                    // Long stops (up to TTL + 1.5 s) lose the lease; with
                    // THROTTLE_FAULT_LONG_STOPS=0 only short ones (0.1 to 0.6 s, thawed at the
                    // next round: under the 1 s margin), which lose nothing.
                    let hold = if long_stops {
                        200 + rng.below(TTL_S * 1000 + 1300)
                    } else {
                        100 + rng.below(500)
                    };
                    thaws.push((now + Duration::from_millis(hold), i));
                    stops += 1;
                }
            }
            // A member fault only while all three are healthy (a restarted member takes a
            // moment to rejoin; two down is the quorum test's case, not this run's).
            20..=24
                if kind("member")
                    && down.is_none()
                    && (0..c.size()).all(|m| c.healthy(m, Duration::from_millis(300))) =>
            {
                let m = rng.below(c.size() as u64) as usize;
                let leader = c.leader();
                if rng.below(2) == 0 {
                    c.kill(m);
                    member_events.push((mono_ns(), format!("m{m} SIGKILL (leader {leader:?})")));
                } else {
                    c.stop(m);
                    member_events.push((mono_ns(), format!("m{m} SIGTERM (leader {leader:?})")));
                }
                down = Some((now + Duration::from_millis(300 + rng.below(2500)), m));
                member_faults += 1;
            }
            25..=34 if kind("start") && live.len() < 6 => {
                new_host(&mut hosts, &mut rng);
                starts += 1;
            }
            _ => {}
        }
        let running = (0..hosts.len())
            .filter(|&i| hosts[i].killed_at.is_none() && hosts[i].done().is_none())
            .count();
        if running < 3 {
            new_host(&mut hosts, &mut rng);
            starts += 1;
        }
        if round % 100 == 0 {
            let (peak, n, x) = check(&hosts, &format!("round {round}"));
            eprintln!(
                "cluster_budget: round {round}: {n} tasks counted ({x} excluded), at most {peak} at once, {:.0} s",
                t_run.elapsed().as_secs_f64()
            );
        }
    }
    for (_, i) in thaws.drain(..) {
        hosts[i].thaw();
    }
    if let Some((_, m)) = down {
        c.restart(m);
        member_events.push((mono_ns(), format!("m{m} restarted")));
    }
    report_failed_hosts(&mut hosts, &mut reported, &member_events, &mut failed);
    for h in &mut hosts {
        if h.done().is_none() {
            h.kill();
        }
    }
    let (peak, n, x) = check(&hosts, "end of run");
    let refs: Vec<&Host> = hosts.iter().collect();
    let hold = check_hold(&etcd::read_tasks(&log, "?"), &refs, mono_ns(), "end");
    eprintln!(
        "cluster_budget: randomized fault run: commands held stopped {} time(s), {:.0} ms in all; tasks that began while held: {} from jobs created before the hold began ({}), {} in the race after the test continued their host ({}), none otherwise",
        hold.holds,
        hold.held_ms,
        hold.existing.len(),
        hold.existing
            .iter()
            .map(|r| format!("{r:+.1} ms"))
            .collect::<Vec<_>>()
            .join(", "),
        hold.raced.len(),
        hold.raced
            .iter()
            .map(|r| format!("{r:+.1} ms"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    // From make's fork of a job to its program's first line (JOB_BY is rounded up to a clock
    // tick, so a short lag reads 0).
    let mut lag: Vec<f64> = etcd::read_tasks(&log, "?")
        .iter()
        .filter_map(|t| t.job_by.map(|j| ms(t.begin.saturating_sub(j))))
        .collect();
    lag.sort_by(f64::total_cmp);
    if !lag.is_empty() {
        eprintln!(
            "cluster_budget: randomized fault run: from a job's creation to its task's begin: median {:.1} ms, max {:.1} ms over {} tasks; {} task(s) began after a thaw from a job created before it (counted as running at the freeze)",
            lag[lag.len() / 2],
            lag[lag.len() - 1],
            lag.len(),
            etcd::read_tasks(&log, "?")
                .iter()
                .filter(|t| {
                    hosts.iter().any(|h| {
                        h.name == t.host
                            && h.stopped_at.iter().all(|&s| t.begin > s || t.end.is_some_and(|e| e <= s))
                            && h.running_at_freeze(t, h.killed_at.unwrap_or(u64::MAX))
                    })
                })
                .count()
        );
    }
    let finished = hosts.iter_mut().filter(|h| h.killed_at.is_none()).count();
    eprintln!(
        "cluster_budget: randomized fault run: {rounds} rounds in {:.0} s: {kills} host kills, {stops} host freezes, {member_faults} member faults, {starts} hosts started, {finished} finished their make; {n} tasks counted ({x} excluded), at most {peak} at once",
        t_run.elapsed().as_secs_f64()
    );
    assert!(
        failed.is_empty(),
        "hosts that were not killed failed:\n{}",
        failed.join("\n")
    );
    assert!(
        n > rounds / 10,
        "too little work got done: {n} tasks in {rounds} rounds"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
