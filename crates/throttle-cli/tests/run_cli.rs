//! `throttle run`: the jobserver command driven as a user would. Bad input is one line and exit
//! status 2; the command's status comes through; the fifo is gone afterwards; a throttle client
//! killed with SIGKILL gives its tokens back. The interop tests run real make and ninja with
//! throttle programs as their recipes and check, from every process's task log, that at no
//! instant more than N tasks ran machine-wide (they need the tools: `.ci/run` installs them).

mod common;

use std::path::Path;

use common::{assert_usage_error, bin, text, throttle, workdir};

/// The most tasks running at once in a `__tasks` log (all processes together), and how many
/// processes wrote to it.
fn max_running(log: &Path) -> (usize, usize) {
    let text = std::fs::read_to_string(log).expect("the task log");
    let mut events: Vec<(u128, i32, String)> = text
        .lines()
        .map(|l| {
            let mut f = l.split_whitespace();
            let kind = f.next().unwrap();
            let t: u128 = f.next().unwrap().parse().unwrap();
            let pid = f.next().unwrap().to_string();
            // At one instant, count stops before starts (a stop stamped at t ended before t).
            (t, if kind == "S" { 1 } else { -1 }, pid)
        })
        .collect();
    events.sort_by_key(|(t, d, _)| (*t, *d));
    let (mut now, mut max) = (0i64, 0i64);
    for (_, d, _) in &events {
        now += i64::from(*d);
        max = max.max(now);
    }
    assert_eq!(now, 0, "every start has a stop");
    let mut pids: Vec<&String> = events.iter().map(|e| &e.2).collect();
    pids.sort();
    pids.dedup();
    (max as usize, pids.len())
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    let run = |args: &[&str]| throttle().arg("run").args(args).output().unwrap();
    assert_usage_error(&run(&["-j", "0", "--", "true"]), &["'0'", "--jobs"]);
    assert_usage_error(&run(&["-j", "abc", "--", "true"]), &["'abc'", "--jobs"]);
    assert_usage_error(&run(&["-j", "2"]), &["missing the command"]);
    assert_usage_error(
        &run(&["--jobserver-style", "sock", "--", "true"]),
        &["'sock'", "--jobserver-style"],
    );
    assert_usage_error(
        &run(&["-j", "2", "--", "/nonexistent/cmd"]),
        &["'/nonexistent/cmd'", "CMD"],
    );
    // A lease TTL whose renewal slack would be under 1 s is refused (the value is checked
    // before the URL, so this needs no etcd and no etcd feature).
    let url = "etcd://127.0.0.1:1/x";
    assert_usage_error(
        &run(&[
            "--budget",
            url,
            "--budget-ttl",
            "2",
            "-j",
            "2",
            "--",
            "true",
        ]),
        &["'2'", "--budget-ttl", "3..=3600"],
    );
}

#[test]
fn exports_the_jobserver_passes_the_status_and_cleans_up() {
    // CARGO_MAKEFLAGS is not exported, and one inherited from outside is removed: clients read
    // it first and make never rewrites it.
    let out = throttle()
        .args(["run", "-j", "3", "--jobserver-style", "fifo", "--", "sh", "-c"])
        .arg("echo \"$MAKEFLAGS\"; echo \"${CARGO_MAKEFLAGS-unset}\"; echo \"$THROTTLE_JOBSERVER_SOCKET\"; exit 3")
        .env("CARGO_MAKEFLAGS", " -j8 --jobserver-auth=fifo:/outer/fifo")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    let so = text(&out.stdout);
    let lines: Vec<&str> = so.lines().collect();
    assert!(lines[0].contains("-j3 --jobserver-auth=fifo:"), "{so}");
    assert_eq!(lines[1], "unset", "CARGO_MAKEFLAGS is not exported: {so}");
    let fifo = lines[0].split("fifo:").nth(1).unwrap().trim();
    assert!(!Path::new(fifo).exists(), "the fifo is removed");
    assert!(!Path::new(lines[2]).exists(), "the socket is removed");
    let err = text(&out.stderr);
    assert!(err.contains("tokens returned: 2 of 2"), "{err}");

    let out = throttle()
        .args([
            "run",
            "-j",
            "2",
            "--jobserver-style",
            "pipe",
            "--",
            "sh",
            "-c",
        ])
        .arg("echo \"$MAKEFLAGS\"; kill -TERM $$")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(128 + 15), "killed by SIGTERM");
    let so = text(&out.stdout);
    let auth = so.split("--jobserver-auth=").nth(1).unwrap().trim();
    let (r, w) = auth.split_once(',').unwrap();
    assert!(r.parse::<u32>().is_ok() && w.parse::<u32>().is_ok(), "{so}");
}

#[test]
fn a_client_killed_holding_tokens_gives_them_back() {
    let dir = workdir("kill");
    let log = dir.join("log");
    // A throttle program holding tokens (4 threads of busy work) is killed with SIGKILL, once
    // the server says it holds both of them (asked every 10 ms, 12 000 times at most).
    let script = format!(
        "{bin} __tasks --tasks 100000 --micros 2000 --log {log} & pid=$!; \
         i=0; until {bin} run --status | grep -q ' 0 tokens free'; do \
           i=$((i+1)); if [ $i -ge 12000 ]; then echo 'the client never held both tokens' >&2; exit 1; fi; \
           sleep 0.01; \
         done; \
         kill -KILL $pid; wait $pid; exit 0",
        bin = bin().display(),
        log = log.display()
    );
    let out = throttle()
        .args(["run", "-j", "3", "--", "sh", "-c", &script])
        .env("THROTTLE_THREADS", "4")
        .output()
        .unwrap();
    let err = text(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("tokens returned: 2 of 2"), "{err}");
    let (max, _) = max_running_lenient(&log);
    assert!(max <= 3, "{max} tasks at once under -j 3");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Like [`max_running`], for a log whose writer was killed (starts without stops at the end).
fn max_running_lenient(log: &Path) -> (usize, usize) {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let mut ev: Vec<(u128, i64)> = text
        .lines()
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            let d = if f.next()? == "S" { 1 } else { -1 };
            Some((f.next()?.parse().ok()?, d))
        })
        .collect();
    ev.sort();
    let (mut now, mut max) = (0i64, 0i64);
    for (_, d) in ev {
        now += d;
        max = max.max(now);
    }
    (max as usize, 1)
}

#[test]
#[cfg_attr(
    not(has_make_4_3),
    ignore = "GNU make >= 4.3 was not on PATH when the tests were built: apt-get install -y make"
)]
fn make_4_3_with_recursion_stays_within_the_budget() {
    let dir = workdir("make");
    let log = dir.join("log");
    let t = bin();
    std::fs::write(
        dir.join("Makefile"),
        format!(
            "all: a b c\na:\n\t+$(MAKE) -s -f sub.mk\nb c:\n\t+{t} __tasks --tasks 6 --micros 4000 --log {log}\n",
            t = t.display(),
            log = log.display()
        ),
    )
    .unwrap();
    std::fs::write(
        dir.join("sub.mk"),
        format!(
            "all: x y z\nx y z:\n\t+env -u THROTTLE_JOBSERVER_SOCKET {t} __tasks --tasks 6 --micros 4000 --log {log}\n",
            t = t.display(),
            log = log.display()
        ),
    )
    .unwrap();
    // No --jobserver-style: `throttle run` asks make its version and serves make 4.3 a pipe.
    let out = throttle()
        .current_dir(&dir)
        .args(["run", "-j", "2", "--", "make", "-s"])
        .output()
        .unwrap();
    let err = text(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("tokens returned: 1 of 1"), "{err}");
    // b and c hold tokens through the socket; x, y, z (no socket) read make's pipe directly.
    let (max, procs) = max_running(&log);
    assert_eq!(procs, 5, "five throttle programs logged");
    assert!(max <= 2, "{max} tasks ran at once machine-wide under -j 2");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
#[cfg_attr(
    not(has_ninja_1_13),
    ignore = "ninja >= 1.13 was not on PATH when the tests were built: pip install ninja"
)]
fn ninja_1_13_under_the_fifo_stays_within_the_budget() {
    let dir = workdir("ninja");
    let log = dir.join("log");
    let mut build = format!(
        "rule t\n  command = {t} __tasks --tasks 6 --micros 4000 --log {log} && touch $out\n",
        t = bin().display(),
        log = log.display()
    );
    for i in 0..6 {
        build.push_str(&format!("build o{i}: t\n"));
    }
    std::fs::write(dir.join("build.ninja"), build).unwrap();
    let out = throttle()
        .current_dir(&dir)
        .args(["run", "-j", "2", "--", "ninja"])
        .output()
        .unwrap();
    let err = text(&out.stderr);
    let so = text(&out.stdout);
    assert!(out.status.success(), "{so}{err}");
    assert!(so.contains("Jobserver mode detected"), "ninja joined: {so}");
    assert!(err.contains("tokens returned: 1 of 1"), "{err}");
    let (max, procs) = max_running(&log);
    assert_eq!(procs, 6);
    assert!(max <= 2, "{max} tasks ran at once machine-wide under -j 2");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn status_and_resize_from_inside_the_command_tree() {
    let t = bin();
    let script = format!(
        "{t} run --status; {t} run --resize 4; {t} run --status",
        t = t.display()
    );
    let out = throttle()
        .args(["run", "-j", "2", "--", "sh", "-c", &script])
        .output()
        .unwrap();
    let so = text(&out.stdout);
    let err = text(&out.stderr);
    assert!(out.status.success(), "{so}{err}");
    assert!(so.contains("2 slots: 1 tokens free"), "{so}");
    assert!(so.contains("resized to 4 slots"), "{so}");
    assert!(so.contains("4 slots: 3 tokens free"), "{so}");
    assert!(err.contains("4 slots; tokens returned: 3 of 3"), "{err}");
    // Outside any tree and without --socket: one line, exit 2.
    let out = throttle()
        .args(["run", "--status"])
        .env_remove("THROTTLE_JOBSERVER_SOCKET")
        .output()
        .unwrap();
    assert_usage_error(&out, &["--socket"]);
}

/// A throttle program (`__pool`: the global pool, which joins the jobserver in `MAKEFLAGS` by
/// default) under a `MAKEFLAGS` it cannot use: the program runs without the budget after one
/// warning line naming the variable, the option and why (an unknown form, a path that is not a
/// fifo); closed descriptors, as make 4.3 leaves them for a recipe without `+`, are normal and
/// silent (a note only with `THROTTLE_JOBSERVER=debug`). It never hangs (the timeout) and its own
/// exit status is unchanged. A fifo nobody serves is a jobserver with no free token: the pool
/// joins it and runs on its implicit slot.
#[test]
fn unusable_makeflags_give_one_warning_line_and_never_hang() {
    let dir = workdir("bad-makeflags");
    let plain = dir.join("plain");
    std::fs::write(&plain, b"++").unwrap();
    let fifo = dir.join("fifo");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let pool = |makeflags: &str, expect: &str| {
        throttle()
            .args(["__pool", "--tasks", "8", "--iterations", "20000"])
            .args(["--jobserver", expect])
            .env("MAKEFLAGS", makeflags)
            .env_remove("CARGO_MAKEFLAGS")
            .env_remove("MFLAGS")
            .env_remove("THROTTLE_JOBSERVER")
            .timeout(std::time::Duration::from_secs(60))
            .output()
            .unwrap()
    };
    let cases: [(String, &[&str]); 2] = [
        (
            format!(" -j4 --jobserver-auth=fifo:{}", plain.display()),
            &["MAKEFLAGS", "is not a fifo", plain.to_str().unwrap()],
        ),
        (
            " -j4 --jobserver-auth=sem:x".into(),
            &["MAKEFLAGS", "'sem:x'"],
        ),
    ];
    for (flags, needles) in cases {
        let out = pool(&flags, "absent");
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{flags}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
        for n in needles {
            assert!(err.contains(n), "{n:?} missing in {err}");
        }
    }
    // Closed descriptors (a make 4.3 recipe without '+') are normal, not a misconfiguration:
    // the program runs alone and says nothing, unless THROTTLE_JOBSERVER=debug asks why.
    let out = pool(" -j4 --jobserver-auth=900,901", "absent");
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stderr), "", "closed descriptors: silent");
    let out = throttle()
        .args(["__pool", "--tasks", "8", "--iterations", "20000"])
        .args(["--jobserver", "absent"])
        .env("MAKEFLAGS", " -j4 --jobserver-auth=900,901")
        .env_remove("CARGO_MAKEFLAGS")
        .env("THROTTLE_JOBSERVER", "debug")
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .unwrap();
    let err = text(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "one note: {err}");
    assert!(
        err.contains("'--jobserver-auth=900,901'") && err.contains("descriptor 900 is closed"),
        "{err}"
    );
    let out = pool(
        &format!(" -j4 --jobserver-auth=fifo:{}", fifo.display()),
        "required",
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stderr), "", "a fifo nobody serves is no error");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn procs_budget_quick_exports_every_format() {
    let dir = workdir("procs-budget");
    let (json, csv, svg) = (dir.join("r.json"), dir.join("r.csv"), dir.join("r.svg"));
    let out = throttle()
        .args([
            "procs", "--budget", "--max", "2", "--reps", "2", "--ms", "20",
        ])
        .arg("--json")
        .arg(&json)
        .arg("--csv")
        .arg(&csv)
        .arg("--plot")
        .arg(&svg)
        .timeout(std::time::Duration::from_secs(300))
        .output()
        .unwrap();
    let so = text(&out.stdout);
    assert!(out.status.success(), "{so}{}", text(&out.stderr));
    for needle in [
        "mean completion",
        "makespan ÷ free",
        "rq wait ÷ CPU",
        "budget",
        "free",
    ] {
        assert!(so.contains(needle), "{needle:?} missing:\n{so}");
    }
    assert!(
        so.contains("K = 2 (the largest K measured up to 8)"),
        "{so}"
    );
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(v["parameters"]["mode"], "budget");
    let rows = v["sections"][0]["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 4, "free and budget at K = 1 and 2");
    for r in rows {
        assert_eq!(r["wall"]["count"], 2, "two repetitions");
        assert!(r["metrics"]["mean_completion_s"].as_f64().unwrap() > 0.0);
        assert!(r["metrics"]["cpu_total_s"].as_f64().unwrap() > 0.0);
        if r["series"] == "budget" {
            assert!(r["metrics"]["makespan_vs_free_ratio"].as_f64().unwrap() > 0.0);
        }
    }
    let csv_text = std::fs::read_to_string(&csv).unwrap();
    assert_eq!(csv_text.lines().count(), 5, "{csv_text}");
    assert!(csv_text
        .lines()
        .next()
        .unwrap()
        .contains("mean_completion_vs_free_ratio"));
    let svg_text = std::fs::read_to_string(&svg).unwrap();
    assert!(
        svg_text.contains("<svg") && svg_text.contains("budget"),
        "an SVG with the budget series"
    );
    // A command is bad input with --budget: one line, exit 2.
    let out = throttle()
        .args(["procs", "--budget", "--", "true"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn procs_budget_sigterm_keeps_partial_results() {
    let dir = workdir("procs-budget-term");
    let json = dir.join("r.json");
    let child = std::process::Command::new(bin())
        .args([
            "procs", "--budget", "--max", "4", "--reps", "1000", "--ms", "20",
        ])
        .arg("--json")
        .arg(&json)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let _guard = common::KillOnPanic(child.id() as i32);
    // The first batch runs one copy (K = 1 comes first): a second copy seen means the first
    // batch has ended and is kept.
    let mut copies = std::collections::BTreeSet::new();
    common::wait_until("procs --budget starts its second copy", || {
        copies.extend(
            common::children(child.id())
                .into_iter()
                .filter(|&pid| common::cmdline(pid).iter().any(|a| a == "__pool")),
        );
        copies.len() >= 2
    });
    common::signal(child.id() as i32, libc::SIGTERM);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(143), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("PARTIAL"),
        "{}",
        text(&out.stdout)
    );
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(v["partial"], true);
    assert!(!v["sections"][0]["rows"].as_array().unwrap().is_empty());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn sigusr1_prints_the_status_while_the_command_runs() {
    // The command signals its parent, `throttle run`, then waits until the status is in
    // `throttle run`'s standard error, a file (read every 10 ms, 12 000 times at most).
    let dir = workdir("sigusr1");
    let err_path = dir.join("stderr");
    let script = format!(
        "kill -USR1 $PPID; i=0; until grep -q 'tokens free' '{err}'; do \
           i=$((i+1)); if [ $i -ge 12000 ]; then echo 'no status after SIGUSR1' >&2; exit 1; fi; \
           sleep 0.01; \
         done",
        err = err_path.display()
    );
    let out = std::process::Command::new(bin())
        .args(["run", "-j", "3", "--", "sh", "-c", &script])
        .env("NO_COLOR", "1")
        .stderr(std::fs::File::create(&err_path).unwrap())
        .output()
        .unwrap();
    let err = std::fs::read_to_string(&err_path).unwrap();
    assert!(out.status.success(), "{err}");
    assert!(err.contains("throttle run: status"), "{err}");
    assert!(err.contains("3 slots: 2 tokens free"), "{err}");
}
