//! The pool as a jobserver client, against real jobservers made in the test: the `jobserver`
//! crate's pipe server (an independent implementation), throttle's own fifo server, and its
//! crash-safe socket; bad jobservers; and the kill test (SIGKILL while holding tokens loses none).

use std::os::unix::process::ExitStatusExt;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use throttle::{Jobserver, Pool, Server, Style};

/// Runs a burst of parallel work and returns the most tasks that ran at once.
fn max_concurrency(pool: &Pool) -> usize {
    let now = AtomicUsize::new(0);
    let max = AtomicUsize::new(0);
    pool.for_range_grain(0..400, 1, |_| {
        let n = now.fetch_add(1, Ordering::SeqCst) + 1;
        max.fetch_max(n, Ordering::SeqCst);
        let t = Instant::now();
        while t.elapsed() < Duration::from_micros(300) {
            std::hint::spin_loop();
        }
        now.fetch_sub(1, Ordering::SeqCst);
    });
    let max = max.load(Ordering::SeqCst);
    eprintln!("max concurrency {max}");
    max
}

/// The `--jobserver-auth` value a `jobserver` crate server gives its children.
fn crate_auth(client: &jobserver::Client) -> String {
    let mut cmd = std::process::Command::new("true");
    client.configure_make(&mut cmd);
    let flags = cmd
        .get_envs()
        .find(|(k, _)| *k == "MAKEFLAGS")
        .and_then(|(_, v)| v)
        .unwrap()
        .to_string_lossy()
        .into_owned();
    flags
        .split("--jobserver-auth=")
        .nth(1)
        .unwrap()
        .split(' ')
        .next()
        .unwrap()
        .to_string()
}

/// How long a test waits for what must come (a child's start, a token back, a server's
/// answer): a hang guard, never a timing target.
const PATIENCE: Duration = Duration::from_secs(120);

/// Waits until `f` holds (tokens come back after a grace period of a few milliseconds).
fn eventually(what: &str, f: impl Fn() -> bool) {
    let start = Instant::now();
    while !f() {
        assert!(start.elapsed() < PATIENCE, "never: {what}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn pool_is_capped_by_a_pipe_jobserver_of_the_jobserver_crate() {
    // 2 tokens: the pool may run 1 + 2 = 3 threads although it has 6.
    let server = jobserver::Client::new(2).unwrap();
    let auth = crate_auth(&server);
    let js = Jobserver::from_auth(&auth).unwrap();
    let pool = Pool::builder().threads(6).jobserver(js).build().unwrap();
    assert_eq!(pool.concurrency(), 1, "starts on the implicit slot");
    let max = max_concurrency(&pool);
    assert!(max <= 3, "{max} tasks ran at once under 1 + 2 tokens");
    // Work ran out: the tokens go back after the grace period, and the implicit slot stays.
    eventually("tokens returned", || server.available().unwrap() == 2);
    assert_eq!(pool.jobserver_tokens(), Some(0));
    assert_eq!(pool.concurrency(), 1);
    // A token another client holds is not available to the pool.
    let held = server.acquire().unwrap();
    assert!(max_concurrency(&pool) <= 2);
    drop(held);
    drop(pool);
    assert_eq!(server.available().unwrap(), 2);
}

#[test]
fn pool_is_capped_by_a_fifo_server_and_returns_every_token() {
    let server = Server::new(3, Style::Fifo).unwrap();
    let auth = server.makeflags();
    let auth = auth.split("--jobserver-auth=").nth(1).unwrap().trim();
    let js = Jobserver::from_auth(auth).unwrap();
    let pool = Pool::builder().threads(4).jobserver(js).build().unwrap();
    let max = max_concurrency(&pool);
    assert!(max <= 3, "{max}");
    drop(pool);
    assert_eq!(server.tokens_in_pool().unwrap(), 2);
}

#[test]
fn user_limit_and_budget_compose_as_a_min() {
    let server = jobserver::Client::new(4).unwrap();
    let js = Jobserver::from_auth(&crate_auth(&server)).unwrap();
    let pool = Pool::builder().threads(4).jobserver(js).build().unwrap();
    pool.set_concurrency(2).unwrap();
    assert_eq!(pool.user_concurrency(), 2);
    let max = max_concurrency(&pool);
    assert!(max <= 2, "{max}");
    assert!(
        pool.jobserver_tokens().unwrap() <= 1,
        "never hoards beyond the user's limit"
    );
    drop(pool);
    assert_eq!(server.available().unwrap(), 4);
}

#[test]
fn socket_client_holds_tokens_through_the_server() {
    let server = Server::new(3, Style::Pipe).unwrap();
    let js = Jobserver::connect(server.socket_path()).unwrap();
    let pool = Pool::builder().threads(4).jobserver(js).build().unwrap();
    let max = max_concurrency(&pool);
    assert!(max <= 3, "{max}");
    drop(pool);
    assert_eq!(server.settle(PATIENCE).unwrap(), 2);
}

#[test]
fn bad_jobservers_are_refused_with_a_reason_and_never_hang() {
    // Closed descriptors (a recipe without '+').
    let e = Jobserver::from_auth("900,901").unwrap_err().to_string();
    assert!(e.contains("closed"), "{e}");
    // A path that is not a fifo.
    let dir = std::env::temp_dir().join(format!("throttle-js-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("plain");
    std::fs::write(&file, b"++").unwrap();
    let e = Jobserver::from_auth(&format!("fifo:{}", file.display()))
        .unwrap_err()
        .to_string();
    assert!(e.contains("not a fifo"), "{e}");
    // Descriptors that are not pipes.
    let f = std::fs::File::open(&file).unwrap();
    use std::os::fd::AsRawFd;
    let fd = f.as_raw_fd();
    let e = Jobserver::from_auth(&format!("{fd},{fd}"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("not a pipe"), "{e}");
    // A fifo nobody serves: the pool runs on its implicit slot and finishes.
    let fifo = dir.join("fifo");
    let _ = std::fs::remove_file(&fifo);
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: `c` is a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let js = Jobserver::from_auth(&format!("fifo:{}", fifo.display())).unwrap();
    let pool = Pool::builder().threads(3).jobserver(js).build().unwrap();
    assert_eq!(max_concurrency(&pool), 1);
    drop(pool);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The kill test's child: holds a random number of tokens through the server's socket with a
/// busy pool, until it is killed. Runs only when re-executed by `kill_test`.
#[test]
fn kill_test_child() {
    let Ok(sock) = std::env::var("THROTTLE_KILL_TEST_SOCKET") else {
        return;
    };
    let want: usize = std::env::var("THROTTLE_KILL_TEST_THREADS")
        .unwrap()
        .parse()
        .unwrap();
    let js = Jobserver::connect(std::path::Path::new(&sock)).unwrap();
    let pool = Pool::builder().threads(4).jobserver(js).build().unwrap();
    pool.set_concurrency(want).unwrap();
    loop {
        max_concurrency(&pool);
    }
}

#[test]
fn kill_test_sigkill_while_holding_tokens_loses_none() {
    const N: usize = 4;
    let rounds: usize = std::env::var("THROTTLE_KILL_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100);
    let server = Server::new(N, Style::Fifo).unwrap();
    let exe = std::env::current_exe().unwrap();
    let mut seed = 0x9e37_79b9_7f4a_7c15u64 ^ u64::from(std::process::id());
    let mut rand = move |n: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % n
    };
    let mut held_at_kill = 0;
    for round in 0..rounds {
        // Every other round kills the child once it holds a token (it needs a limit of 2 at
        // least to want one); the others at a random moment, from its start on.
        let holding = round % 2 == 0;
        let threads = if holding { 2 + rand(3) } else { 1 + rand(4) };
        let mut child = std::process::Command::new(&exe)
            .args([
                "--exact",
                "kill_test_child",
                "--nocapture",
                "--test-threads=1",
            ])
            .env("THROTTLE_KILL_TEST_SOCKET", server.socket_path())
            .env("THROTTLE_KILL_TEST_THREADS", threads.to_string())
            .stdout(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let free = if holding {
            let start = Instant::now();
            loop {
                let free = server.tokens_in_pool().unwrap();
                if free < N - 1 {
                    break free;
                }
                assert!(start.elapsed() < PATIENCE, "the child never took a token");
                std::thread::sleep(Duration::from_millis(1));
            }
        } else {
            std::thread::sleep(Duration::from_millis(rand(40)));
            server.tokens_in_pool().unwrap()
        };
        held_at_kill += (N - 1) - free;
        // SAFETY: kill(2) on our own child's pid, which we have not reaped yet.
        unsafe {
            libc::kill(child.id() as i32, libc::SIGKILL);
        }
        let status = child.wait().unwrap();
        assert_eq!(status.signal(), Some(libc::SIGKILL), "{status:?}");
    }
    let back = server.settle(PATIENCE).unwrap();
    assert_eq!(back, N - 1, "tokens back after {rounds} SIGKILLs");
    // The rounds did hold tokens when killed (else the test proves nothing).
    assert!(held_at_kill > 0, "no round held a token when killed");
    eprintln!("kill test: {rounds} rounds, {held_at_kill} tokens held at kill time in total, {back} of {} back", N - 1);
}

/// Re-runs this test binary for `test` with `env`, returning its output.
fn rerun(test: &str, env: &[(&str, &str)]) -> std::process::Output {
    let mut cmd = std::process::Command::new(std::env::current_exe().unwrap());
    cmd.args(["--exact", test, "--nocapture", "--test-threads=1"])
        .env_remove("MAKEFLAGS")
        .env_remove("CARGO_MAKEFLAGS")
        .env_remove("MFLAGS")
        .env_remove(throttle::SOCKET_ENV);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().unwrap()
}

#[test]
fn global_pool_child() {
    let Ok(expect) = std::env::var("THROTTLE_GLOBAL_CHILD") else {
        return;
    };
    let pool = throttle::global_pool().unwrap();
    let joined = pool.jobserver_tokens().is_some();
    assert_eq!(joined, expect == "joined", "{expect}");
    if joined {
        assert!(max_concurrency(pool) <= 2);
        // A test thread is not `main`: nothing gives the tokens back at exit on its behalf, so
        // wait for the grace period.
        eventually("the tokens went back", || {
            pool.jobserver_tokens() == Some(0)
        });
    }
}

#[test]
fn global_pool_joins_the_environments_jobserver_unless_opted_out() {
    let server = Server::new(2, Style::Fifo).unwrap();
    let flags = server.makeflags();
    let ok = |o: std::process::Output| {
        assert!(
            o.status.success(),
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        String::from_utf8_lossy(&o.stderr).into_owned()
    };
    ok(rerun(
        "global_pool_child",
        &[("THROTTLE_GLOBAL_CHILD", "joined"), ("MAKEFLAGS", &flags)],
    ));
    ok(rerun(
        "global_pool_child",
        &[
            ("THROTTLE_GLOBAL_CHILD", "alone"),
            ("MAKEFLAGS", &flags),
            (throttle::JOBSERVER_ENV, "off"),
        ],
    ));
    // Negative descriptors: make turned the jobserver off; silently alone.
    let err = ok(rerun(
        "global_pool_child",
        &[
            ("THROTTLE_GLOBAL_CHILD", "alone"),
            ("MAKEFLAGS", " -j4 --jobserver-auth=-2,-2"),
        ],
    ));
    assert!(!err.contains("warning"), "{err}");
    // Closed descriptors (a make 4.3 recipe without '+'): alone, silently.
    let err = ok(rerun(
        "global_pool_child",
        &[
            ("THROTTLE_GLOBAL_CHILD", "alone"),
            ("MAKEFLAGS", " -j --jobserver-auth=901,902"),
        ],
    ));
    assert!(!err.contains("throttle:"), "{err}");
    // An unknown format: alone, with one warning saying why.
    for bad in [" --jobserver-auth=sem:x", " -j --jobserver-auth=fifo:"] {
        let err = ok(rerun(
            "global_pool_child",
            &[("THROTTLE_GLOBAL_CHILD", "alone"), ("MAKEFLAGS", bad)],
        ));
        assert!(
            err.contains("throttle: warning: ignoring the jobserver in MAKEFLAGS"),
            "{err}"
        );
    }
    assert_eq!(server.tokens_in_pool().unwrap(), 1);
}

#[test]
fn sigint_child() {
    let Ok(auth) = std::env::var("THROTTLE_SIGINT_CHILD") else {
        return;
    };
    // A program started as a background job by a non-interactive shell (`cmd &` in a script,
    // as some CI launchers do) inherits SIGINT ignored, and the hooks rightly leave an ignored
    // signal alone: the child then never died, and the test waited for it forever (seen when
    // the whole suite ran that way). This child stands for a program whose SIGINT and SIGTERM
    // do what they do by default, so it says so first.
    for sig in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: signal(2) with SIG_DFL, before any other thread of this process exists.
        unsafe {
            libc::signal(sig, libc::SIG_DFL);
        }
    }
    let js = Jobserver::from_auth(&auth).unwrap();
    // The hooks are opt-in.
    let pool = Pool::builder()
        .threads(4)
        .jobserver(js)
        .jobserver_exit_hooks(true)
        .build()
        .unwrap();
    loop {
        max_concurrency(&pool);
    }
}

#[test]
fn sigint_and_sigterm_give_fifo_tokens_back_when_the_hooks_are_asked_for() {
    let server = Server::new(4, Style::Fifo).unwrap();
    let flags = server.makeflags();
    let auth = flags
        .split("--jobserver-auth=")
        .nth(1)
        .unwrap()
        .trim()
        .to_string();
    let exe = std::env::current_exe().unwrap();
    for sig in [libc::SIGINT, libc::SIGTERM] {
        let mut child = std::process::Command::new(&exe)
            .args(["--exact", "sigint_child", "--nocapture", "--test-threads=1"])
            .env("THROTTLE_SIGINT_CHILD", &auth)
            .env_remove(throttle::SOCKET_ENV)
            .stdout(std::process::Stdio::null())
            .spawn()
            .unwrap();
        // Wait until the child holds tokens (it reads them straight from the fifo, no socket).
        eventually("the child holds tokens", || {
            server.tokens_in_pool().unwrap() < 3
        });
        // SAFETY: kill(2) on our own unreaped child.
        unsafe {
            libc::kill(child.id() as i32, sig);
        }
        // Bounded: a child that does not die of the signal is killed and the test fails with
        // what it saw, instead of hanging the suite.
        let start = Instant::now();
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break status;
            }
            if start.elapsed() > PATIENCE {
                child.kill().unwrap();
                let status = child.wait().unwrap();
                panic!(
                    "the child survived signal {sig} for {PATIENCE:?} (then killed: {status:?})"
                );
            }
            std::thread::sleep(Duration::from_millis(5));
        };
        assert_eq!(status.signal(), Some(sig), "died of the signal: {status:?}");
        assert_eq!(
            server.tokens_in_pool().unwrap(),
            3,
            "all 3 tokens back after signal {sig}"
        );
    }
}

#[test]
fn resize_grows_at_once_and_shrinks_as_tokens_come_back() {
    let server = Server::new(3, Style::Pipe).unwrap();
    assert_eq!(server.tokens_in_pool().unwrap(), 2);
    server.resize(5).unwrap();
    assert_eq!(server.tokens_in_pool().unwrap(), 4);
    assert_eq!(server.tokens_expected(), 4);
    // A client holds 2 tokens; shrinking to 2 slots must take 3 out, only as they come back.
    let mut js = Jobserver::connect(server.socket_path()).unwrap();
    let a = js.acquire_timeout(PATIENCE).unwrap().unwrap();
    let b = js.acquire_timeout(PATIENCE).unwrap().unwrap();
    server.resize(2).unwrap();
    eventually("the 2 free tokens are collected", || {
        server.tokens_in_pool().unwrap() == 0
    });
    assert!(
        server
            .status()
            .contains("shrinking: 1 tokens still to collect"),
        "{}",
        server.status()
    );
    js.release(a).unwrap();
    js.release(b).unwrap();
    eventually("the shrink is paid and 1 token is left", || {
        server.tokens_expected() == 1 && server.tokens_in_pool().unwrap() == 1
    });
    assert_eq!(server.slots(), 2);
    drop(js);
    assert_eq!(server.settle(PATIENCE).unwrap(), 1);
}

/// A server made empty (as `throttle run --budget` makes one, backing each token with a cluster
/// slot): tokens come and go only by its owner; a socket client gets one only before the grant
/// deadline; an idle token is taken back, a held one only once it is back.
#[test]
fn an_empty_server_grants_only_what_its_owner_adds_and_before_its_deadline() {
    let server = Server::new_empty(3, Style::Fifo).unwrap();
    assert!(server.makeflags().contains("-j3"));
    assert_eq!(
        (server.tokens_in_pool().unwrap(), server.tokens_expected()),
        (0, 0)
    );
    assert!(server.resize(4).is_err(), "its N is its owner's");
    let mut js = Jobserver::connect(server.socket_path()).unwrap();
    assert!(js
        .acquire_timeout(Duration::from_millis(100))
        .unwrap()
        .is_none());
    // Past the deadline the request waits, with the token in the fifo.
    server.set_grant_deadline(Some(Instant::now()));
    server.add_token().unwrap();
    assert!(js
        .acquire_timeout(Duration::from_millis(300))
        .unwrap()
        .is_none());
    assert_eq!(server.tokens_in_pool().unwrap(), 1);
    server.set_grant_deadline(Some(Instant::now() + Duration::from_secs(3600)));
    let t = js.acquire_timeout(PATIENCE).unwrap().unwrap();
    assert!(
        !server.take_idle_token().unwrap(),
        "a held token is not idle"
    );
    js.release(t).unwrap();
    eventually("the token is back in the fifo", || {
        server.tokens_in_pool().unwrap() == 1
    });
    assert!(server.take_idle_token().unwrap());
    assert_eq!(server.tokens_expected(), 0);
    drop(js);
    assert_eq!(server.settle(PATIENCE).unwrap(), 0);
    // A server made by `new` has no owner's tokens.
    let plain = Server::new(2, Style::Fifo).unwrap();
    assert!(plain.add_token().is_err() && plain.take_idle_token().is_err());
    assert_eq!(plain.tokens_in_pool().unwrap(), 1);
}

/// Auto mode under a jobserver: the controller's choice is the first
/// term of `min(k, 1 + tokens held)`, like a user's `k`, so the budget caps it. The controller
/// starts its scan at `k = threads()` = 4 and moves `k` often (a 5 ms interval); with 1 token
/// in the jobserver no more than 2 tasks ever run at once, the limit never reads above 2, and
/// every token comes back.
#[test]
fn auto_mode_never_runs_more_than_the_jobserver_budget() {
    let server = jobserver::Client::new(1).unwrap();
    let js = Jobserver::from_auth(&crate_auth(&server)).unwrap();
    let pool = Pool::builder().threads(4).jobserver(js).build().unwrap();
    pool.set_concurrency_auto_every(Duration::from_millis(5))
        .unwrap();
    let now = AtomicUsize::new(0);
    let max = AtomicUsize::new(0);
    let max_limit = AtomicUsize::new(0);
    let start = Instant::now();
    // 600 ms of work, and on until the controller has logged a decision.
    while start.elapsed() < Duration::from_millis(600) || pool.controller_log().is_empty() {
        assert!(
            start.elapsed() < PATIENCE,
            "the controller decided nothing in {PATIENCE:?}"
        );
        pool.scope(|s| {
            for _ in 0..32 {
                s.spawn(|_| {
                    let n = now.fetch_add(1, Ordering::SeqCst) + 1;
                    max.fetch_max(n, Ordering::SeqCst);
                    max_limit.fetch_max(pool.concurrency(), Ordering::SeqCst);
                    let t = Instant::now();
                    while t.elapsed() < Duration::from_micros(100) {
                        std::hint::spin_loop();
                    }
                    now.fetch_sub(1, Ordering::SeqCst);
                });
            }
        });
    }
    let (max, max_limit) = (max.into_inner(), max_limit.into_inner());
    eprintln!("max in flight {max}, max limit {max_limit}");
    assert!(max <= 2, "{max} tasks ran at once under 1 + 1 token");
    assert!(max_limit <= 2, "the limit read {max_limit}");
    let log = pool.controller_log();
    assert!(!log.is_empty(), "the controller ran and decided");
    assert!(
        log.iter().all(|e| e.old_k <= 2),
        "every interval ran within the budget: {log:?}"
    );
    assert!(pool.is_concurrency_auto());
    drop(pool);
    assert_eq!(server.available().unwrap(), 1);
}

/// Not a test: a foreign pipe client (as make is) for the two-pipe tests. With
/// `THROTTLE_RAW_CLIENT=K`, reads K tokens from the `R` of `--jobserver-auth=R,W` (blocking,
/// as make ≤ 4.3 does), then writes each back into `W`.
#[test]
fn raw_pipe_client_child() {
    let Ok(k) = std::env::var("THROTTLE_RAW_CLIENT") else {
        return;
    };
    let k: usize = k.parse().unwrap();
    let flags = std::env::var("MAKEFLAGS").unwrap();
    let auth = flags.split("--jobserver-auth=").nth(1).unwrap();
    let (r, w) = auth
        .split_whitespace()
        .next()
        .unwrap()
        .split_once(',')
        .unwrap();
    let (r, w): (i32, i32) = (r.parse().unwrap(), w.parse().unwrap());
    let mut got = Vec::new();
    for _ in 0..k {
        let mut b = 0u8;
        // SAFETY: reads one byte into `b` from an inherited descriptor.
        assert_eq!(unsafe { libc::read(r, (&mut b as *mut u8).cast(), 1) }, 1);
        got.push(b);
    }
    println!("got {}", got.len());
    if std::env::var_os("THROTTLE_RAW_HOLD").is_some() {
        // Holds the tokens until the parent closes our stdin.
        let mut rest = Vec::new();
        std::io::Read::read_to_end(&mut std::io::stdin(), &mut rest).unwrap();
    }
    for b in got {
        // SAFETY: writes one byte from `b` into an inherited descriptor.
        assert_eq!(unsafe { libc::write(w, (&b as *const u8).cast(), 1) }, 1);
    }
}

/// `raw_pipe_client_child` under `server` (its `MAKEFLAGS`, ids and descriptors), taking `k`
/// tokens and giving them back at once, or with `hold`, once its stdin is closed (dropped by
/// [`raw_client_done`]).
fn raw_client_cmd(server: &Server, k: usize, hold: bool) -> std::process::Command {
    let mut cmd = std::process::Command::new(std::env::current_exe().unwrap());
    cmd.args([
        "--exact",
        "raw_pipe_client_child",
        "--nocapture",
        "--test-threads=1",
    ])
    .env("THROTTLE_RAW_CLIENT", k.to_string())
    .stdin(std::process::Stdio::piped())
    .stdout(std::process::Stdio::piped());
    if hold {
        cmd.env("THROTTLE_RAW_HOLD", "1");
    }
    server.configure(&mut cmd);
    cmd
}

/// Waits for a `raw_client_cmd` child (closing its stdin first, which ends a hold) and checks
/// that it took its `k` tokens.
fn raw_client_done(mut child: std::process::Child, k: usize) {
    drop(child.stdin.take());
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success() && String::from_utf8_lossy(&out.stdout).contains(&format!("got {k}")),
        "{out:?}"
    );
}

/// Runs `raw_pipe_client_child` under `server`: takes and gives back `k` tokens.
fn raw_client(server: &Server, k: usize) {
    raw_client_done(raw_client_cmd(server, k, false).spawn().unwrap(), k);
}

/// A server of two pipes sees every token a foreign client gives back. Before its owner's deadline
/// and within its limit the token goes back into circulation; past the deadline, or over the
/// limit, it leaves circulation — which a single fifo or pipe cannot do, since the client reads
/// back what it wrote before anyone else can look.
#[test]
fn two_pipes_pass_every_returned_token_through_the_server() {
    let server = Server::new_empty(3, Style::TwoPipes).unwrap();
    let auth = server.auth().to_string();
    let (r, w) = auth.split_once(',').unwrap();
    assert_ne!(r, w);
    assert!(server.return_id().is_some_and(|id| id != server.id()));
    server.add_token().unwrap();
    server.add_token().unwrap();
    // Within the deadline (none) and the limit (none): both come back into the pool.
    raw_client(&server, 2);
    eventually("both tokens are back in the pool", || {
        server.tokens_in_pool().unwrap() == 2
    });
    assert_eq!(server.tokens_expected(), 2);
    // Over the limit: of two returned, the first leaves (2 > 1), the second stays (1 ≤ 1).
    server.set_token_limit(Some(1));
    raw_client(&server, 2);
    assert_eq!(server.settle(PATIENCE).unwrap(), 1);
    assert_eq!(server.tokens_expected(), 1);
    // A token held across the deadline: when it comes back it leaves circulation.
    server.set_token_limit(None);
    let client = raw_client_cmd(&server, 1, true).spawn().unwrap();
    eventually("the client holds the token", || {
        server.tokens_in_pool().unwrap() == 0
    });
    server.set_grant_deadline(Some(Instant::now()));
    raw_client_done(client, 1);
    assert_eq!(server.settle(PATIENCE).unwrap(), 0);
    assert_eq!(server.tokens_expected(), 0);
    // An idle token does not outlive the deadline either: the server takes it out itself.
    server.add_token().unwrap();
    eventually("the idle token is taken out", || {
        server.tokens_expected() == 0 && server.tokens_in_pool().unwrap() == 0
    });
    assert!(
        server
            .status()
            .contains("3 tokens taken out of circulation"),
        "{}",
        server.status()
    );
    // A server made by `new` passes every returned token on.
    let plain = Server::new(3, Style::TwoPipes).unwrap();
    plain.set_grant_deadline(Some(Instant::now()));
    raw_client(&plain, 2);
    assert_eq!(plain.settle(PATIENCE).unwrap(), 2);
}

/// The same with real make (`make` on PATH is 4.3 in CI; with `THROTTLE_MAKE44` also make 4.4): 12
/// jobs of 200 ms under an owned server of 3 slots (2 tokens). Once make holds both tokens (its
/// first jobs run), the owner's deadline passes. With two pipes, make's returned tokens leave
/// circulation: every job that begins after the deadline begins alone (on make's implicit slot,
/// once the jobs running at the deadline have ended). With a single pipe (the control), make keeps
/// recycling its 2 tokens: jobs begin beside 2 others. Each job logs its begin and end
/// (CLOCK_REALTIME, ns).
#[test]
#[ignore = "needs GNU make (Debian's make 4.3); .ci/run installs it (and THROTTLE_MAKE44 for make 4.4)"]
fn two_pipes_stop_make_recycling_past_the_deadline() {
    let mut makes = vec![("make 4.3".to_string(), "make".to_string())];
    if let Ok(m44) = std::env::var("THROTTLE_MAKE44") {
        makes.push(("make 4.4".into(), m44));
    }
    for (name, make) in &makes {
        let two = make_after_deadline(make, Style::TwoPipes);
        let one = make_after_deadline(make, Style::Pipe);
        eprintln!(
            "{name}: most jobs running when a job began after the deadline: two pipes {two}, one pipe {one}"
        );
        assert_eq!(two, 1, "{name}: make recycled its tokens through two pipes");
        assert!(
            one > 1,
            "{name}: the one-pipe control ran {one} at once (the check could not fail)"
        );
    }
}

/// Runs 12 logged jobs of 200 ms with `make` under an owned server of `style` whose deadline
/// passes once make holds both tokens; the most jobs running (itself included) when a job began 50 ms or more
/// after the deadline (a job whose token was read just before it may log its begin a little
/// after it).
fn make_after_deadline(make: &str, style: Style) -> usize {
    let dir = std::env::temp_dir().join(format!(
        "throttle-two-pipes-{}-{:?}",
        std::process::id(),
        style
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let log = dir.join("log");
    let mut mk = String::from("all:");
    for i in 0..12 {
        mk.push_str(&format!(" t{i}"));
    }
    mk.push('\n');
    for i in 0..12 {
        mk.push_str(&format!(
            "t{i}:\n\t@echo b $$(date +%s%N) >> {0}; sleep 0.2; echo e $$(date +%s%N) >> {0}\n",
            log.display()
        ));
    }
    std::fs::write(dir.join("Makefile"), mk).unwrap();
    let server = Server::new_empty(3, style).unwrap();
    server.add_token().unwrap();
    server.add_token().unwrap();
    let mut cmd = std::process::Command::new(make);
    cmd.args(["-s", "-f"]).arg(dir.join("Makefile"));
    server.configure(&mut cmd);
    let mut child = cmd.spawn().unwrap();
    // The deadline passes once make runs its first jobs on both tokens.
    eventually("make holds both tokens", || {
        server.tokens_in_pool().unwrap() == 0
    });
    server.set_grant_deadline(Some(Instant::now()));
    let deadline_ns = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as i128;
    assert!(child.wait().unwrap().success());
    let mut events: Vec<(i128, i32)> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(|l| {
            let (k, t) = l.split_once(' ').unwrap();
            (t.trim().parse().unwrap(), if k == "b" { 1 } else { -1 })
        })
        .collect();
    events.sort();
    let from = deadline_ns + 50_000_000;
    let (mut now, mut peak) = (0i32, 0i32);
    for (t, d) in events {
        now += d;
        if d > 0 && t >= from {
            peak = peak.max(now);
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
    peak as usize
}

/// A timeout too long for the clock waits without a deadline (the deadline
/// `now + Duration::MAX` would overflow and panic).
#[test]
fn acquire_timeout_with_duration_max_takes_a_token() {
    let server = Server::new(2, Style::Pipe).unwrap();
    let mut js = Jobserver::connect(server.socket_path()).unwrap();
    let t = js.acquire_timeout(Duration::MAX).unwrap();
    let t = t.expect("a free token was there");
    js.release(t).unwrap();
    drop(js);
    assert_eq!(server.settle(PATIENCE).unwrap(), 1);
}
