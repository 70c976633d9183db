//! The budget is on by default in every program that links throttle, so it must never touch a
//! descriptor that is not provably the jobserver's, and must change nothing process-wide
//! unasked. Each test re-runs this binary as a child (a program of its own, with its own
//! environment and descriptors); each but the two-pipe one fails on the code before these
//! safeguards (the parent of commit e3dc604):
//!
//! - a recipe of real make 4.3 `make -j2` without `+` (fds named in `MAKEFLAGS` but closed) whose
//!   program makes a pipe first (std and libc) and then uses the global pool: no hang, its data
//!   intact; with `+` the pool joins and the data is intact too;
//! - the same under make 4.4 `make -j2` (fifo by default; the binary in `THROTTLE_MAKE44`, which
//!   `scripts/make44.sh` builds): every recipe, `+` or not, is given the fifo's path, the pool
//!   joins through it and the program's own pipe is left alone;
//! - inherited pipes named swapped (`W,R`) or mismatched (ends of two pipes): not joined, nothing
//!   read or written; the right pair: joined;
//! - two pipes (a throttle server's `Style::TwoPipes`, tokens out through one and back
//!   through the other): joined only when `THROTTLE_JOBSERVER_ID` and
//!   `THROTTLE_JOBSERVER_RETURN_ID` name exactly those two pipes, and then every token read from
//!   the first comes back into the second; named the other way round, or by nobody: not joined,
//!   nothing read or written;
//! - `adopt_from_env` at the top of `main`, then the descriptors closed and reused: the pool uses
//!   the adopted jobserver, the program's pipe is untouched;
//! - a program that installs its own chaining SIGINT handler after using the pool survives SIGINT;
//! - a `fork()` child dropping a permit does not give its parent's token back; a dropped
//!   `Jobserver` gives back tokens read through it and never released;
//! - the budget thread of an idle pool sleeps (no timed wake-ups) and still answers work.

use std::io::{Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use throttle::{Jobserver, Server, Style, Throttle};

const DATA: &[u8] = b"USERDATA";

/// This binary, to run one `child` test in a process of its own; no jobserver inherited unless
/// the caller sets one.
fn child(test: &str) -> Command {
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.args(["--exact", test, "--nocapture", "--test-threads=1"])
        .env_remove("MAKEFLAGS")
        .env_remove("CARGO_MAKEFLAGS")
        .env_remove("MFLAGS")
        .env_remove(throttle::SOCKET_ENV)
        .env_remove(throttle::ID_ENV)
        .env_remove(throttle::RETURN_ID_ENV)
        .env_remove(throttle::JOBSERVER_ENV);
    cmd
}

fn ok(o: &Output) -> String {
    let s = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(o.status.success(), "{}: {s}", o.status);
    s
}

/// A pipe made the way the program chooses: std's (close-on-exec) or libc's (inheritable).
fn program_pipe(kind: &str) -> (OwnedFd, OwnedFd) {
    // "std": close-on-exec, exactly as `std::io::pipe()` makes it (pipe2 with O_CLOEXEC; the
    // call itself is newer than this workspace's MSRV).
    let flags = if kind == "std" { libc::O_CLOEXEC } else { 0 };
    let mut fds = [0; 2];
    // SAFETY: `fds` has room for two descriptors; pipe2(2) fills them.
    assert_eq!(unsafe { libc::pipe2(fds.as_mut_ptr(), flags) }, 0);
    // SAFETY: pipe2(2) just returned both; we own them.
    unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) }
}

/// How long a test waits for what must come (tokens back, a thread asleep): a hang guard,
/// never a timing target.
const PATIENCE: Duration = Duration::from_secs(120);

/// Waits until the global pool has given back its tokens (the grace period after its work): a
/// test thread is not `main`, so nothing gives them back at exit on its behalf.
fn settle_global() {
    let pool = throttle::global_pool().unwrap();
    let t = Instant::now();
    while pool.jobserver_tokens().is_some_and(|n| n > 0) {
        assert!(t.elapsed() < PATIENCE, "tokens never went back");
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// Runs parallel work on the global pool; returns the most tasks at once.
fn use_the_pool() -> usize {
    let now = AtomicUsize::new(0);
    let max = AtomicUsize::new(0);
    throttle::for_range_grain(0..200, 1, |_| {
        let n = now.fetch_add(1, Ordering::SeqCst) + 1;
        max.fetch_max(n, Ordering::SeqCst);
        std::thread::sleep(Duration::from_micros(200));
        now.fetch_sub(1, Ordering::SeqCst);
    });
    max.load(Ordering::SeqCst)
}

/// The program of the takeover repro: a pipe first, data into it, then the pool, then the data
/// back. Prints the pipe's descriptors and whether the pool joined a jobserver.
#[test]
fn takeover_child() {
    let Ok(kind) = std::env::var("TAKEOVER_KIND") else {
        return;
    };
    if std::env::var_os("TAKEOVER_ADOPT").is_some() {
        assert!(throttle::jobserver::adopt_from_env(), "adopted");
        // The program now closes what it inherited (as a daemon does) and reuses the numbers.
        let (r, w) = parse_fds(&std::env::var("MAKEFLAGS").unwrap());
        // SAFETY: closing descriptors this process inherited and does not use itself.
        unsafe {
            libc::close(r);
            libc::close(w);
        }
    }
    let (r, w) = program_pipe(&kind);
    println!("pipe fds {},{}", r.as_raw_fd(), w.as_raw_fd());
    let mut w = std::fs::File::from(w);
    w.write_all(DATA).unwrap();
    use_the_pool();
    let joined = throttle::global_pool()
        .unwrap()
        .jobserver_tokens()
        .is_some();
    println!("joined {joined}");
    settle_global();
    drop(w);
    let mut back = Vec::new();
    std::fs::File::from(r).read_to_end(&mut back).unwrap();
    assert_eq!(String::from_utf8_lossy(&back), "USERDATA");
    println!("data intact");
}

fn parse_fds(flags: &str) -> (i32, i32) {
    let v = flags.split("--jobserver-auth=").nth(1).unwrap();
    let v = v.split_whitespace().next().unwrap();
    let (r, w) = v.split_once(',').unwrap();
    (r.parse().unwrap(), w.parse().unwrap())
}

/// Runs `takeover_child` as the recipe of `make -s -j2` (`make` the program given), with and
/// without `+`, with a std and a libc pipe; `check(plus, output)` judges each run, whose output
/// starts with the recipe's `MAKEFLAGS`. `tag` names the test's own directory (tests run in
/// parallel).
fn takeover_under_make(make: &str, tag: &str, check: impl Fn(&str, &str)) {
    let exe = std::env::current_exe().unwrap();
    let dir = std::env::temp_dir().join(format!("throttle-takeover-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (plus, kind) in [("", "std"), ("", "libc"), ("+", "std"), ("+", "libc")] {
        let mk = format!(
            "all:\n\t{plus}echo \"flags $$MAKEFLAGS\"; TAKEOVER_KIND={kind} {} --exact takeover_child --nocapture --test-threads=1\n",
            exe.display()
        );
        std::fs::write(dir.join("Makefile"), mk).unwrap();
        let out = Command::new("timeout")
            .args(["300", make, "-s", "-j2"])
            .current_dir(&dir)
            .env_remove("MAKEFLAGS")
            .env_remove("MFLAGS")
            .env_remove("CARGO_MAKEFLAGS")
            .env_remove(throttle::SOCKET_ENV)
            .output()
            .unwrap();
        let s = ok(&out);
        assert!(s.contains("data intact"), "{plus}{kind}: {s}");
        check(plus, &s);
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Real make 4.3 (`make -j2`, pipe jobserver), recipes with and without `+`.
#[test]
#[ignore = "needs GNU make (Debian's make 4.3); .ci/run installs it"]
fn a_recipe_without_plus_keeps_its_own_pipe_under_make() {
    let pipe_style = make_is_pipe_style();
    takeover_under_make("make", "make", |plus, s| {
        if plus.is_empty() {
            // make 4.3 closed its pipe for this recipe: the program's pipe took the numbers
            // MAKEFLAGS names (else this case would prove nothing), and the pool left it alone.
            if pipe_style {
                assert!(s.contains("pipe fds 3,4"), "{s}");
            }
            assert!(s.contains("joined false"), "{s}");
        } else {
            assert!(s.contains("joined true"), "{plus}: {s}");
        }
    });
}

/// Real make 4.4 (`make -j2`, fifo jobserver by default): every recipe is given the fifo's path,
/// `+` or not, and no descriptor of it; the pool joins through the path, the pipe is untouched.
#[test]
#[ignore = "needs make 4.4: scripts/make44.sh"]
fn a_recipe_with_or_without_plus_joins_make_4_4s_fifo_and_keeps_its_own_pipe() {
    let make = std::env::var("THROTTLE_MAKE44").expect(
        "THROTTLE_MAKE44 names a make 4.4 binary: export THROTTLE_MAKE44=\"$(scripts/make44.sh)\"",
    );
    let v = Command::new(&make).arg("--version").output().unwrap();
    assert!(
        String::from_utf8_lossy(&v.stdout).starts_with("GNU Make 4.4"),
        "THROTTLE_MAKE44={make} is not make 4.4"
    );
    takeover_under_make(&make, "make44", |plus, s| {
        assert!(s.contains("--jobserver-auth=fifo:"), "{plus}: {s}");
        assert!(s.contains("joined true"), "{plus}: {s}");
    });
}

fn make_is_pipe_style() -> bool {
    let v = Command::new("make").arg("--version").output().unwrap();
    String::from_utf8_lossy(&v.stdout).starts_with("GNU Make 4.3")
}

/// Runs `takeover_child` with the two ends of a real pipe `(r, w)` inherited at their own numbers
/// and `MAKEFLAGS` naming `auth`, plus `env`. The pipe holds 2 tokens; returns the child's output
/// and the tokens in the pipe afterwards.
fn with_inherited_pipe(
    auth: impl Fn(i32, i32) -> String,
    env: &[(&str, &str)],
    also: Option<i32>,
) -> (String, usize) {
    // Close-on-exec here (other tests' children must not inherit it); cleared in the child.
    let (r, w) = program_pipe("std");
    let (rf, wf) = (r.as_raw_fd(), w.as_raw_fd());
    let mut wfile = std::fs::File::from(w.try_clone().unwrap());
    wfile.write_all(b"++").unwrap();
    let mut cmd = child("takeover_child");
    cmd.env("TAKEOVER_KIND", "libc").env(
        "MAKEFLAGS",
        format!(" -j3 --jobserver-auth={}", auth(rf, wf)),
    );
    for (k, v) in env {
        cmd.env(k, v);
    }
    // SAFETY: only fcntl(2) between fork and exec: both ends stay open across exec.
    unsafe {
        cmd.pre_exec(move || {
            for fd in [Some(rf), Some(wf), also].into_iter().flatten() {
                libc::fcntl(fd, libc::F_SETFD, 0);
            }
            Ok(())
        });
    }
    let out = cmd.output().unwrap();
    let s = ok(&out);
    let mut n: libc::c_int = 0;
    // SAFETY: FIONREAD writes one c_int.
    unsafe { libc::ioctl(rf, libc::FIONREAD, &mut n) };
    drop((r, w));
    (s, n as usize)
}

#[test]
fn inherited_pipes_are_joined_only_when_they_are_one_pipes_two_ends() {
    // The right pair: joined, every token back.
    let (s, left) = with_inherited_pipe(|r, w| format!("{r},{w}"), &[], None);
    assert!(s.contains("joined true"), "{s}");
    assert_eq!(left, 2, "{s}");
    // Swapped ends: not joined, nothing read or written (the old code lost a token here).
    let (s, left) = with_inherited_pipe(|r, w| format!("{w},{r}"), &[], None);
    assert!(s.contains("joined false"), "{s}");
    assert_eq!(left, 2, "{s}");
    // Ends of two different pipes (the read end of this one, the write end of another): the old
    // code minted tokens from a stranger's bytes.
    let (other_r, other_w) = program_pipe("std");
    let ow = other_w.as_raw_fd();
    let _keep = (other_r, other_w);
    let (s, left) = with_inherited_pipe(move |r, _| format!("{r},{ow}"), &[], Some(ow));
    assert!(s.contains("joined false"), "{s}");
    assert_eq!(left, 2, "{s}");
}

/// `DEV:INODE` of a descriptor, as a throttle server names its pipes.
fn fd_id(fd: i32) -> String {
    // SAFETY: a zeroed stat is a valid out-parameter; fstat(2) fills it.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: `st` is valid and writable.
    assert_eq!(unsafe { libc::fstat(fd, &mut st) }, 0);
    format!("{}:{}", st.st_dev, st.st_ino)
}

/// Runs `takeover_child` with the read end of pipe `out` (2 tokens in it) and the write end of
/// pipe `back` inherited, `MAKEFLAGS` naming `R,W` of those two, and `ids(out, back)` as the
/// environment's names for them (`None`: unset). Returns the output and the bytes then in
/// `out` and in `back`.
fn with_two_pipes(
    ids: impl Fn(String, String) -> Option<(String, String)>,
) -> (String, usize, usize) {
    let (out_r, out_w) = program_pipe("std");
    let (back_r, back_w) = program_pipe("std");
    let (rf, wf) = (out_r.as_raw_fd(), back_w.as_raw_fd());
    std::fs::File::from(out_w.try_clone().unwrap())
        .write_all(b"++")
        .unwrap();
    let mut cmd = child("takeover_child");
    cmd.env("TAKEOVER_KIND", "libc")
        .env("MAKEFLAGS", format!(" -j3 --jobserver-auth={rf},{wf}"));
    if let Some((a, b)) = ids(fd_id(rf), fd_id(back_r.as_raw_fd())) {
        cmd.env(throttle::ID_ENV, a).env(throttle::RETURN_ID_ENV, b);
    }
    // SAFETY: only fcntl(2) between fork and exec: both named ends stay open across exec.
    unsafe {
        cmd.pre_exec(move || {
            for fd in [rf, wf] {
                libc::fcntl(fd, libc::F_SETFD, 0);
            }
            Ok(())
        });
    }
    let out = cmd.output().unwrap();
    let s = ok(&out);
    let count = |fd: i32| {
        let mut n: libc::c_int = 0;
        // SAFETY: FIONREAD writes one c_int.
        unsafe { libc::ioctl(fd, libc::FIONREAD, &mut n) };
        n as usize
    };
    let counts = (count(out_r.as_raw_fd()), count(back_r.as_raw_fd()));
    drop((out_r, out_w, back_r, back_w));
    (s, counts.0, counts.1)
}

#[test]
fn two_pipes_are_joined_only_when_a_throttle_server_names_them() {
    // Named as a throttle server of Style::TwoPipes names them: joined; whatever it read from
    // the first pipe it wrote into the second (a token is never written where it came from).
    let (s, out, back) = with_two_pipes(|a, b| Some((a, b)));
    assert!(s.contains("joined true"), "{s}");
    assert_eq!(out + back, 2, "{s}");
    // Nobody names them (the ends of two pipes, as any program could inherit): not joined.
    let (s, out, back) = with_two_pipes(|_, _| None);
    assert!(s.contains("joined false"), "{s}");
    assert_eq!((out, back), (2, 0), "{s}");
    // Named the other way round: not joined, nothing read or written.
    let (s, out, back) = with_two_pipes(|a, b| Some((b, a)));
    assert!(s.contains("joined false"), "{s}");
    assert_eq!((out, back), (2, 0), "{s}");
    // Only one of the two named right: not joined.
    let (s, out, back) = with_two_pipes(|a, _| Some((a, "0:0".into())));
    assert!(s.contains("joined false"), "{s}");
    assert_eq!((out, back), (2, 0), "{s}");
}

#[test]
fn adopt_from_env_then_closing_and_reusing_the_numbers_keeps_both_safe() {
    let (s, left) =
        with_inherited_pipe(|r, w| format!("{r},{w}"), &[("TAKEOVER_ADOPT", "1")], None);
    assert!(s.contains("joined true"), "{s}");
    assert!(s.contains("data intact"), "{s}");
    assert_eq!(left, 2, "{s}");
}

static HANDLED: AtomicBool = AtomicBool::new(false);
static mut PREVIOUS: Option<libc::sigaction> = None;

extern "C" fn my_handler(sig: libc::c_int) {
    HANDLED.store(true, Ordering::SeqCst);
    // Chain to the previous handler, as signal-hook and tokio do.
    // SAFETY: PREVIOUS was written once before the handler was installed, never again.
    let prev = unsafe { *std::ptr::addr_of!(PREVIOUS) };
    if let Some(p) = prev {
        if p.sa_sigaction != libc::SIG_DFL && p.sa_sigaction != libc::SIG_IGN {
            // SAFETY: the previous disposition was a plain handler taking the signal number.
            let f: extern "C" fn(libc::c_int) = unsafe { std::mem::transmute(p.sa_sigaction) };
            f(sig);
        }
    }
}

#[test]
fn sigint_child() {
    if std::env::var_os("SIGINT_CHILD").is_none() {
        return;
    }
    assert!(use_the_pool() >= 1);
    assert!(throttle::global_pool()
        .unwrap()
        .jobserver_tokens()
        .is_some());
    settle_global();
    // SAFETY: a zeroed sigaction with our handler is valid; PREVIOUS is written before the
    // handler can run (installed just after).
    unsafe {
        let mut old: libc::sigaction = std::mem::zeroed();
        libc::sigaction(libc::SIGINT, std::ptr::null(), &mut old);
        *std::ptr::addr_of_mut!(PREVIOUS) = Some(old);
        let mut new: libc::sigaction = std::mem::zeroed();
        new.sa_sigaction = my_handler as extern "C" fn(libc::c_int) as usize;
        libc::sigemptyset(&mut new.sa_mask);
        libc::sigaction(libc::SIGINT, &new, std::ptr::null_mut());
        libc::raise(libc::SIGINT);
    }
    assert!(HANDLED.load(Ordering::SeqCst));
    println!("survived SIGINT");
}

#[test]
fn a_programs_own_sigint_handler_runs_and_the_program_survives() {
    let server = Server::new(3, Style::Fifo).unwrap();
    let out = child("sigint_child")
        .env("SIGINT_CHILD", "1")
        .env("MAKEFLAGS", server.makeflags())
        .output()
        .unwrap();
    assert_eq!(
        out.status.signal(),
        None,
        "killed by a signal: {:?}",
        out.status
    );
    assert!(ok(&out).contains("survived SIGINT"));
    assert_eq!(server.settle(PATIENCE).unwrap(), 2);
}

#[test]
fn a_fork_child_never_gives_back_its_parents_tokens() {
    let server = Server::new(3, Style::Fifo).unwrap();
    let gate = Throttle::with_jobserver(4, Jobserver::from_auth(server.auth()).unwrap());
    let implicit = gate.acquire();
    let token = gate.acquire();
    assert_eq!(server.tokens_in_pool().unwrap(), 1);
    // SAFETY: the child only drops the permit (a lock nobody else holds now, a getpid, no
    // write) and leaves with _exit, running no atexit hook or destructor.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0);
    if pid == 0 {
        drop(token);
        // SAFETY: ends the child at once.
        unsafe { libc::_exit(0) };
    }
    let mut status = 0;
    // SAFETY: waits for our own child.
    unsafe { libc::waitpid(pid, &mut status, 0) };
    assert_eq!(
        server.tokens_in_pool().unwrap(),
        1,
        "the child wrote back a token its parent still holds"
    );
    drop(token);
    drop(implicit);
    assert_eq!(server.tokens_in_pool().unwrap(), 2);
}

#[test]
fn a_dropped_jobserver_gives_back_the_tokens_read_through_it() {
    let server = Server::new(3, Style::Fifo).unwrap();
    let mut js = Jobserver::from_auth(server.auth()).unwrap();
    let t = js.acquire_timeout(PATIENCE).unwrap().unwrap();
    assert_eq!(server.tokens_in_pool().unwrap(), 1);
    // The token is never released: dropping the connection gives it back.
    let _never_released = t;
    drop(js);
    assert_eq!(server.tokens_in_pool().unwrap(), 2);
}

/// The id of this process's thread named `name`, waiting for it to be listed. A listing of
/// `/proc/self/task` can skip a live thread while others start or exit (the kernel resumes the
/// listing by position), so a thread missing from one listing is looked for again.
fn tid_of(name: &str) -> u32 {
    let t = Instant::now();
    loop {
        let found = std::fs::read_dir("/proc/self/task").ok().and_then(|dir| {
            dir.flatten().find_map(|e| {
                let comm = std::fs::read_to_string(e.path().join("comm")).ok()?;
                (comm.trim() == name).then(|| e.file_name().to_str()?.parse().ok())?
            })
        });
        if let Some(tid) = found {
            return tid;
        }
        assert!(t.elapsed() < PATIENCE, "no thread named {name}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// The state letter (`S`, `R`, ...) and voluntary context switches of this process's thread
/// `tid` (read from its own folder, which no other thread's start or exit hides).
fn sched(tid: u32) -> (char, u64) {
    let st = std::fs::read_to_string(format!("/proc/self/task/{tid}/status")).expect("the thread");
    let field = |key: &str| st.lines().find_map(|l| l.strip_prefix(key)).map(str::trim);
    let state = field("State:")
        .and_then(|s| s.chars().next())
        .expect("a state");
    let switches = field("voluntary_ctxt_switches:").and_then(|s| s.parse().ok());
    (state, switches.expect("a switch count"))
}

/// Voluntary context switches of this process's thread `tid`.
fn switches(tid: u32) -> u64 {
    sched(tid).1
}

/// Waits until the thread named `name` sleeps in one wait: asleep (`S`) at two looks 50 ms
/// apart with no voluntary switch between them, so it neither woke nor went back to sleep in
/// between. A thread that wakes every 10 ms never passes (the
/// hang guard then fails the test); one kept from running by a loaded host is runnable (`R`),
/// not asleep, and is looked at again.
fn until_asleep_for_good(name: &str, tid: u32) {
    let t = Instant::now();
    loop {
        assert!(
            t.elapsed() < PATIENCE,
            "{name} never slept 50 ms in one wait"
        );
        let first = sched(tid);
        std::thread::sleep(Duration::from_millis(50));
        let second = sched(tid);
        if first.0 == 'S' && second.0 == 'S' && first.1 == second.1 {
            return;
        }
    }
}

#[test]
fn idle_child() {
    if std::env::var_os("IDLE_CHILD").is_none() {
        return;
    }
    let pool = throttle::global_pool().unwrap();
    use_the_pool();
    // Let the grace period pass and every token go back.
    let t = Instant::now();
    while pool.jobserver_tokens() != Some(0) {
        assert!(t.elapsed() < PATIENCE, "tokens never went back");
        std::thread::sleep(Duration::from_millis(5));
    }
    // The workers go to sleep after their search, and then the budget thread does.
    let budget = tid_of("throttle-jobser");
    until_asleep_for_good("throttle-jobser", budget);
    let before = switches(budget);
    std::thread::sleep(Duration::from_millis(500));
    let after = switches(budget);
    println!("budget thread woke {} times in 500 ms idle", after - before);
    // A thread that looked every 10 ms idle would wake about 50 times here.
    assert!(
        after - before <= 2,
        "{} wake-ups while idle",
        after - before
    );
    // The bell: work after the idle sleep still gets the tokens. A loaded host may run one
    // burst to its end before the woken budget thread or a worker runs; the bell must wake it
    // for one of them.
    let t = Instant::now();
    while use_the_pool() < 2 {
        assert!(t.elapsed() < PATIENCE, "no token after the idle sleep");
    }
    settle_global();
}

#[test]
fn an_idle_pools_budget_thread_sleeps_until_work_comes() {
    let server = Server::new(3, Style::Fifo).unwrap();
    let out = child("idle_child")
        .env("IDLE_CHILD", "1")
        .env("MAKEFLAGS", server.makeflags())
        .env("THROTTLE_THREADS", "3")
        .output()
        .unwrap();
    eprintln!("{}", ok(&out));
    assert_eq!(server.settle(PATIENCE).unwrap(), 2);
}
