//! `throttle run` with the build tools on this machine: the style make reads is picked
//! by itself, a make given its own `-j` gets one warning line, paths with spaces, every
//! `throttle run` example of README.md and docs/jobserver.md run as written, and real builds
//! (a few hundred generated C files under make 4.3 and ninja 1.13, a cargo workspace) whose
//! compilers are counted from a log: at no instant more than N at once. The real-build tests
//! print their max concurrency and wall time (`--nocapture`). They need GNU make >= 4.3, ninja >=
//! 1.13 and gcc, and are ignored only when build.rs did not find them; the cargo build is
//! ignored as slow and run by `.ci/run`.
//!
//! The make 4.4 tests (the fifo jobserver: the same C build, make 4.4's escaped paths under a
//! TMPDIR with a space, throttle programs as clients of make 4.4's own fifo and of `throttle
//! run`'s through make 4.4) run the binary named by `THROTTLE_MAKE44`; Debian 12 has no make 4.4,
//! so `scripts/make44.sh` builds it from Debian's source package and prints its path.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use common::{bin, require, text, throttle, workdir};

/// The most compilers running at once in a log of `S <ns> <pid>` / `E <ns> <pid>` lines, and the
/// number of compilations.
fn max_running(log: &Path) -> (usize, usize) {
    let body = std::fs::read_to_string(log).expect("the compiler log");
    let mut ev: Vec<(u128, i64)> = body
        .lines()
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            let d = if f.next()? == "S" { 1 } else { -1 };
            Some((f.next()?.parse().ok()?, d))
        })
        .collect();
    ev.sort();
    let starts = ev.iter().filter(|e| e.1 == 1).count();
    let (mut now, mut max) = (0i64, 0i64);
    for (_, d) in ev {
        now += d;
        max = max.max(now);
    }
    assert_eq!(now, 0, "every start has an end");
    (max as usize, starts)
}

/// A wrapper that logs the start and end of every run of the command it is given.
fn logging_wrapper(dir: &Path, log: &Path) -> PathBuf {
    let w = dir.join("logged");
    std::fs::write(
        &w,
        format!(
            "#!/bin/sh\necho \"S $(date +%s%N) $$\" >> {log}\n\"$@\"\nrc=$?\necho \"E $(date +%s%N) $$\" >> {log}\nexit $rc\n",
            log = log.display()
        ),
    )
    .unwrap();
    let ok = std::process::Command::new("chmod")
        .arg("+x")
        .arg(&w)
        .status()
        .unwrap();
    assert!(ok.success());
    w
}

/// `n` C files with some code each, for a real compiler to chew on.
fn c_sources(dir: &Path, n: usize) -> Vec<String> {
    let mut names = Vec::new();
    for i in 0..n {
        let mut src = String::new();
        for f in 0..40 {
            src.push_str(&format!(
                "int f{i}_{f}(int x) {{ int s = 0; for (int k = 0; k < x; k++) s += (k * {f}) ^ (s >> 3); return s; }}\n"
            ));
        }
        let name = format!("f{i}");
        std::fs::write(dir.join(format!("{name}.c")), src).unwrap();
        names.push(name);
    }
    names
}

#[test]
#[cfg_attr(
    not(has_make_4_3),
    ignore = "GNU make >= 4.3 was not on PATH when the tests were built: apt-get install -y make"
)]
fn a_make_given_its_own_j_gets_one_warning_line() {
    require("make", "make");
    let dir = workdir("make-j");
    std::fs::write(dir.join("Makefile"), "all: a b\na b:\n\t@true\n").unwrap();
    let out = throttle()
        .current_dir(&dir)
        .args(["run", "-j", "2", "--", "make", "-s", "-j4"])
        .output()
        .unwrap();
    let err = text(&out.stderr);
    assert!(out.status.success(), "{err}");
    let ours: Vec<&str> = err
        .lines()
        .filter(|l| l.contains("warning: '-j4'"))
        .collect();
    assert_eq!(ours.len(), 1, "{err}");
    assert!(
        ours[0].ends_with("leave it out: throttle run -j 2 -- make -s"),
        "{err}"
    );
    // Without -j: no warning at all.
    let out = throttle()
        .current_dir(&dir)
        .args(["run", "-j", "2", "--", "make", "-s"])
        .output()
        .unwrap();
    let err = text(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(!err.contains("warning"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A fifo whose path has a space, written as make 4.4 writes it (`fifo:/a\ b/fifo`), is read;
/// and `throttle run` under a TMPDIR with a space serves a fifo every client can open.
#[test]
fn paths_with_spaces() {
    let dir = workdir("space");
    let spaced = dir.join("a b");
    std::fs::create_dir_all(&spaced).unwrap();
    let fifo = spaced.join("fifo");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let escaped = fifo.to_str().unwrap().replace(' ', "\\ ");
    let out = throttle()
        .args(["__pool", "--tasks", "8", "--iterations", "2000"])
        .args(["--jobserver", "required"])
        .env("MAKEFLAGS", format!(" -j2 --jobserver-auth=fifo:{escaped}"))
        .env_remove("CARGO_MAKEFLAGS")
        .env_remove("THROTTLE_JOBSERVER")
        .env_remove("THROTTLE_JOBSERVER_SOCKET")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stderr), "");
    // TMPDIR with a space: the client in the tree joins the server's fifo.
    let script = format!(
        "echo \"$MAKEFLAGS\"; {} __pool --tasks 8 --iterations 2000 --jobserver required",
        bin().display()
    );
    let out = throttle()
        .args(["run", "-j", "2", "--jobserver-style", "fifo", "--"])
        .args(["sh", "-c", &script])
        .env("TMPDIR", &spaced)
        .output()
        .unwrap();
    let err = text(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("tokens returned: 1 of 1"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The `throttle run ...` lines of the ```sh blocks in `file`.
fn examples(file: &Path) -> Vec<String> {
    let body = std::fs::read_to_string(file).unwrap();
    let mut out = Vec::new();
    let mut in_sh = false;
    for line in body.lines() {
        let t = line.trim();
        if t.starts_with("```") {
            in_sh = t == "```sh";
            continue;
        }
        if in_sh && t.starts_with("throttle run ") {
            let cmd = t.split(" #").next().unwrap().trim().to_string();
            out.push(cmd);
        }
    }
    out
}

#[test]
#[cfg_attr(
    not(all(has_make_4_3, has_ninja_1_13)),
    ignore = "GNU make >= 4.3 or ninja >= 1.13 was not on PATH when the tests were built"
)]
fn every_throttle_run_example_in_the_docs_runs_as_written() {
    require("make", "make");
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut all = Vec::new();
    for f in [
        "README.md",
        "docs/jobserver.md",
        "crates/throttle-core/src/jobserver/README.md",
    ] {
        let ex = examples(&root.join(f));
        assert!(!ex.is_empty(), "no throttle run example in {f}");
        all.extend(ex);
    }
    let dir = workdir("examples");
    std::fs::write(dir.join("Makefile"), "all: a b c\na b c:\n\t@echo $@\n").unwrap();
    std::fs::write(
        dir.join("build.ninja"),
        "rule t\n  command = echo $out\nbuild a: t\nbuild b: t\nbuild c: t\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("Cargo.toml"),
        "[package]\nname = \"example\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[workspace]\n",
    )
    .unwrap();
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::write(dir.join("src/main.rs"), "fn main() {}\n").unwrap();
    std::fs::write(dir.join("work.sh"), "echo working\n").unwrap();
    for line in all {
        let cmd = line.replacen("throttle", &bin().display().to_string(), 1);
        let out = std::process::Command::new("sh")
            .args(["-c", &cmd])
            .current_dir(&dir)
            .env("CARGO_TARGET_DIR", dir.join("target"))
            .env_remove("MAKEFLAGS")
            .env_remove("CARGO_MAKEFLAGS")
            .output()
            .unwrap();
        let err = text(&out.stderr);
        assert!(out.status.success(), "`{line}` failed: {err}");
        assert!(!err.contains("warning"), "`{line}`: {err}");
        assert!(!err.contains("error"), "`{line}`: {err}");
        let back = err
            .lines()
            .find_map(|l| l.split("tokens returned: ").nth(1))
            .unwrap_or_else(|| panic!("`{line}`: {err}"));
        let (x, n) = back.split_once(" of ").unwrap();
        assert_eq!(x, n.trim(), "`{line}`: {err}");
        eprintln!("ran as written: {line}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

fn report(what: &str, log: &Path, t: Instant, slots: usize) {
    let (max, n) = max_running(log);
    eprintln!(
        "{what}: {n} compilations, at most {max} at once under -j {slots}, wall {:.2} s",
        t.elapsed().as_secs_f64()
    );
    assert!(
        max <= slots,
        "{what}: {max} compilers at once under -j {slots}"
    );
    assert!(n > 0);
}

/// `throttle run -j 2 -- MAKE -s` over 200 generated C files, each compiler run logged: at most 2
/// at once. Make writes its `MAKEFLAGS` to a file in the last recipe: `fifo` says whether it must
/// name a fifo (make 4.4) or a pipe (make 4.3), the style `throttle run` picked from the version.
fn c_build_under_make(make: &str, what: &str, fifo: bool) {
    require("gcc", "gcc");
    let dir = workdir(&format!("c-make-{}", if fifo { "fifo" } else { "pipe" }));
    let log = dir.join("log");
    let wrap = logging_wrapper(&dir, &log);
    let names = c_sources(&dir, 200);
    let objs: Vec<String> = names.iter().map(|n| format!("{n}.o")).collect();
    std::fs::write(
        dir.join("Makefile"),
        format!(
            "all: {}\n\t@printf '%s\\n' \"$$MAKEFLAGS\" > makeflags\n%.o: %.c\n\t{} gcc -O2 -c $< -o $@\n",
            objs.join(" "),
            wrap.display()
        ),
    )
    .unwrap();
    let t = Instant::now();
    let out = throttle()
        .current_dir(&dir)
        .args(["run", "-j", "2", "--", make, "-s"])
        .output()
        .unwrap();
    let err = text(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("tokens returned: 1 of 1"), "{err}");
    report(what, &log, t, 2);
    let flags = std::fs::read_to_string(dir.join("makeflags")).unwrap();
    let auth = flags
        .split_whitespace()
        .find_map(|w| w.strip_prefix("--jobserver-auth="))
        .unwrap_or_else(|| panic!("no jobserver in make's MAKEFLAGS: {flags}"));
    assert_eq!(auth.starts_with("fifo:"), fifo, "{what}: {flags}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
#[cfg_attr(
    not(all(has_make_4_3, has_gcc)),
    ignore = "GNU make >= 4.3 or gcc was not on PATH when the tests were built"
)]
fn a_c_build_under_make_4_3_keeps_the_budget() {
    require("make", "make");
    c_build_under_make("make", "make 4.3 (pipe), 200 C files", false);
}

/// make 4.4 as `scripts/make44.sh` built it: the path in `THROTTLE_MAKE44`, checked to be 4.4.
fn make44() -> String {
    let p = std::env::var("THROTTLE_MAKE44").expect(
        "THROTTLE_MAKE44 names a make 4.4 binary: export THROTTLE_MAKE44=\"$(scripts/make44.sh)\"",
    );
    let out = Command::new(&p)
        .arg("--version")
        .env_remove("MAKEFLAGS")
        .output()
        .unwrap_or_else(|e| panic!("THROTTLE_MAKE44={p}: {e}"));
    let first = text(&out.stdout)
        .lines()
        .next()
        .unwrap_or_default()
        .to_owned();
    assert!(
        first.starts_with("GNU Make 4.4"),
        "THROTTLE_MAKE44={p}: {first}"
    );
    p
}

#[test]
#[ignore = "needs make 4.4: scripts/make44.sh"]
fn a_c_build_under_make_4_4_keeps_the_budget() {
    // No --jobserver-style: `throttle run` asks this make its version and serves a fifo.
    c_build_under_make(&make44(), "make 4.4 (fifo), 200 C files", true);
}

/// make 4.4 started by the test itself: no jobserver of the test's environment inherited.
fn bare(program: &str) -> Command {
    let mut cmd = Command::new(program);
    for v in [
        "MAKEFLAGS",
        "MFLAGS",
        "CARGO_MAKEFLAGS",
        "THROTTLE_JOBSERVER",
        "THROTTLE_JOBSERVER_SOCKET",
        "THROTTLE_JOBSERVER_ID",
    ] {
        cmd.env_remove(v);
    }
    cmd
}

/// Two recipes that write their `MAKEFLAGS` to `<target>.flags` and run a throttle program that
/// fails unless its pool joined the jobserver `MAKEFLAGS` names (the socket of `throttle run`,
/// which a client would otherwise prefer, unset: the fifo's path is what is read).
fn flag_writing_makefile(dir: &Path) {
    std::fs::write(
        dir.join("Makefile"),
        format!(
            "all: p q\np q:\n\t@printf '%s\\n' \"$$MAKEFLAGS\" > $@.flags\n\t@env -u THROTTLE_JOBSERVER_SOCKET {} __pool --tasks 8 --iterations 2000 --jobserver required\n",
            bin().display()
        ),
    )
    .unwrap();
}

/// The fifo path make 4.4 passed to recipe `target`, as written (escaped) in its `MAKEFLAGS`.
fn fifo_written(dir: &Path, target: &str) -> String {
    let flags = std::fs::read_to_string(dir.join(format!("{target}.flags"))).unwrap();
    let at = flags
        .find("--jobserver-auth=fifo:")
        .unwrap_or_else(|| panic!("no fifo in {flags}"));
    flags[at + "--jobserver-auth=fifo:".len()..]
        .trim_end()
        .to_owned()
}

/// make 4.4 escapes a space in the fifo's path (`fifo:/x/a\ b/...`) in `MAKEFLAGS`. Under a
/// TMPDIR with a space, (1) make 4.4 as the jobserver itself (`-j2`, its own `GMfifo` there):
/// the throttle programs in its recipes read the escaped path and join; (2) `throttle run` keeps
/// its fifo out of such a TMPDIR (under `/tmp`, so that ninja 1.13, which does not unescape, can
/// read it too), and make 4.4 and the programs in its recipes join it.
#[test]
#[ignore = "needs make 4.4: scripts/make44.sh"]
fn make_4_4_escaped_paths_with_a_space_are_read() {
    let make = make44();
    let dir = workdir("make44-space");
    let spaced = dir.join("a b");
    std::fs::create_dir_all(&spaced).unwrap();
    flag_writing_makefile(&dir);
    let escaped_dir = spaced.to_str().unwrap().replace(' ', "\\ ");

    let out = bare(&make)
        .current_dir(&dir)
        .args(["-s", "-B", "-j2"])
        .env("TMPDIR", &spaced)
        .output()
        .unwrap();
    let err = text(&out.stderr);
    assert!(out.status.success(), "make 4.4 -j2: {err}");
    for t in ["p", "q"] {
        let fifo = fifo_written(&dir, t);
        assert!(
            fifo.starts_with(&format!("{escaped_dir}/GMfifo")),
            "{fifo}: make's own fifo under {escaped_dir}"
        );
    }
    let out = throttle()
        .current_dir(&dir)
        .args(["run", "-j", "2", "--", &make, "-s"])
        .env("TMPDIR", &spaced)
        .output()
        .unwrap();
    let err = text(&out.stderr);
    assert!(out.status.success(), "throttle run -- make 4.4: {err}");
    assert!(err.contains("tokens returned: 1 of 1"), "{err}");
    for t in ["p", "q"] {
        let fifo = fifo_written(&dir, t);
        assert!(
            !fifo.contains([' ', '\\']),
            "throttle run's fifo {fifo}: no whitespace or backslash"
        );
    }

    std::fs::remove_dir_all(&dir).unwrap();
}

/// Five throttle programs (4 threads each, 6 tasks of 4 ms) in the recipes of make 4.4, with and
/// without `+` and in a sub-make, read the fifo: at no instant more than 2 tasks machine-wide,
/// (1) with make 4.4 as the jobserver (`make -j2`, fifo by default) and (2) under
/// `throttle run -j 2 -- make` (the socket unset in d and the sub-make: those read the fifo).
#[test]
#[ignore = "needs make 4.4: scripts/make44.sh"]
fn throttle_programs_as_clients_of_make_4_4_keep_the_budget() {
    let make = make44();
    let dir = workdir("make44-clients");
    let log = dir.join("log");
    let t = bin();
    let tasks = |socket: bool| {
        format!(
            "{}{} __tasks --tasks 6 --micros 4000 --log {}",
            if socket {
                ""
            } else {
                "env -u THROTTLE_JOBSERVER_SOCKET "
            },
            t.display(),
            log.display()
        )
    };
    std::fs::write(
        dir.join("Makefile"),
        format!(
            "all: a b c d\na:\n\t+$(MAKE) -s -f sub.mk\nb:\n\t+{sock}\nc:\n\t{sock}\nd:\n\t{fifo}\n",
            sock = tasks(true),
            fifo = tasks(false)
        ),
    )
    .unwrap();
    std::fs::write(
        dir.join("sub.mk"),
        format!("all: x y\nx:\n\t+{0}\ny:\n\t{0}\n", tasks(false)),
    )
    .unwrap();
    let check = |what: &str| {
        let (max, n) = max_running(&log);
        eprintln!("{what}: {n} tasks in 5 throttle programs, at most {max} at once under -j 2");
        assert_eq!(n, 30, "{what}: each of the 5 programs ran its 6 tasks");
        assert!(
            max <= 2,
            "{what}: {max} tasks at once machine-wide under -j 2"
        );
        std::fs::remove_file(&log).unwrap();
    };

    let out = bare(&make)
        .current_dir(&dir)
        .args(["-s", "-j2"])
        .env("THROTTLE_THREADS", "4")
        .output()
        .unwrap();
    assert!(out.status.success(), "make 4.4 -j2: {}", text(&out.stderr));
    check("make 4.4 -j2 as the jobserver");

    let out = throttle()
        .current_dir(&dir)
        .args(["run", "-j", "2", "--", &make, "-s"])
        .env("THROTTLE_THREADS", "4")
        .output()
        .unwrap();
    let err = text(&out.stderr);
    assert!(out.status.success(), "throttle run -- make 4.4: {err}");
    assert!(err.contains("tokens returned: 1 of 1"), "{err}");
    check("throttle run -j 2 -- make 4.4");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
#[cfg_attr(
    not(all(has_ninja_1_13, has_gcc)),
    ignore = "ninja >= 1.13 or gcc was not on PATH when the tests were built"
)]
fn a_c_build_under_ninja_keeps_the_budget() {
    require("ninja", "ninja (pip install 'ninja>=1.13')");
    require("gcc", "gcc");
    let dir = workdir("c-ninja");
    let log = dir.join("log");
    let wrap = logging_wrapper(&dir, &log);
    let names = c_sources(&dir, 200);
    let mut build = format!(
        "rule cc\n  command = {} gcc -O2 -c $in -o $out\n",
        wrap.display()
    );
    for n in &names {
        build.push_str(&format!("build {n}.o: cc {n}.c\n"));
    }
    std::fs::write(dir.join("build.ninja"), build).unwrap();
    let t = Instant::now();
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
    report("ninja 1.13, 200 C files", &log, t, 2);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
#[ignore = "builds a workspace with cargo (slow); .ci/run runs it"]
fn a_cargo_build_keeps_the_budget() {
    let dir = workdir("cargo");
    let log = dir.join("log");
    let wrap = logging_wrapper(&dir, &log);
    let members: Vec<String> = (0..6).map(|i| format!("c{i}")).collect();
    std::fs::write(
        dir.join("Cargo.toml"),
        format!(
            "[workspace]\nresolver = \"2\"\nmembers = [{}]\n",
            members
                .iter()
                .map(|m| format!("\"{m}\""))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    )
    .unwrap();
    for m in &members {
        std::fs::create_dir_all(dir.join(m).join("src")).unwrap();
        std::fs::write(
            dir.join(m).join("Cargo.toml"),
            format!("[package]\nname = \"{m}\"\nversion = \"0.1.0\"\nedition = \"2021\"\n"),
        )
        .unwrap();
        let mut src = String::new();
        for f in 0..200 {
            src.push_str(&format!(
                "pub fn f{f}(x: u64) -> u64 {{ (0..x).map(|k| k.wrapping_mul({f}) ^ (k >> 3)).sum() }}\n"
            ));
        }
        std::fs::write(dir.join(m).join("src/lib.rs"), src).unwrap();
    }
    // The wrapper logs every rustc run (cargo's own `rustc -vV` probes included: at most one
    // at a time before the build starts).
    std::fs::write(
        dir.join("rustc-wrapper"),
        format!("#!/bin/sh\nexec {} \"$@\"\n", wrap.display()),
    )
    .unwrap();
    let ok = std::process::Command::new("chmod")
        .args(["+x"])
        .arg(dir.join("rustc-wrapper"))
        .status()
        .unwrap();
    assert!(ok.success());
    let t = Instant::now();
    let out = throttle()
        .current_dir(&dir)
        .args([
            "run",
            "-j",
            "2",
            "--",
            "cargo",
            "build",
            "-j",
            "8",
            "--offline",
        ])
        .env("RUSTC_WRAPPER", dir.join("rustc-wrapper"))
        .env("CARGO_TARGET_DIR", dir.join("target"))
        .env_remove("MAKEFLAGS")
        .env_remove("CARGO_MAKEFLAGS")
        .env("CARGO_BUILD_PIPELINING", "false")
        .output()
        .unwrap();
    let err = text(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("tokens returned: 1 of 1"), "{err}");
    report("cargo build -j 8, 6 crates", &log, t, 2);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `throttle run` killed with SIGKILL cannot remove its private directory; the next
/// `throttle run` removes it (its pid is gone).
#[test]
fn the_next_server_removes_the_directory_of_one_killed_with_sigkill() {
    use std::io::BufRead;
    let mut run = std::process::Command::new(bin())
        .args([
            "run",
            "-j",
            "2",
            "--jobserver-style",
            "fifo",
            "--",
            "sh",
            "-c",
        ])
        .arg("echo \"$THROTTLE_JOBSERVER_SOCKET $$\"; exec sleep 60")
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufReader::new(run.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let (socket, child) = line.trim().split_once(' ').unwrap();
    let dir = Path::new(socket).parent().unwrap().to_path_buf();
    assert!(dir.join("fifo").exists());
    // SAFETY: kill(2) on our own child, then on the command it left behind.
    unsafe {
        libc::kill(run.id() as i32, libc::SIGKILL);
    }
    run.wait().unwrap();
    // SAFETY: as above; the orphaned sleep is ours to end.
    unsafe {
        libc::kill(child.parse::<i32>().unwrap(), libc::SIGKILL);
    }
    assert!(dir.exists(), "SIGKILL leaves the directory behind");
    let out = throttle()
        .args(["run", "-j", "2", "--", "true"])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(!dir.exists(), "the next server removed {}", dir.display());
}

/// A program whose `main` uses the global pool under a plain fifo jobserver (no socket, no
/// exit hooks) and returns right after its parallel work: the tokens it still held go back as
/// `main`'s thread-local destructor runs inside `exit` (the global pool is never dropped, and
/// there is no `atexit` hook any more). Twenty runs, every token back after each.
#[test]
fn a_program_returning_from_main_gives_its_tokens_back_without_hooks() {
    let server = throttle::Server::new(4, throttle::Style::Fifo).unwrap();
    for round in 0..20 {
        let out = throttle()
            .args(["__pool", "--tasks", "64", "--iterations", "200000"])
            .args(["--jobserver", "required"])
            .env("MAKEFLAGS", server.makeflags())
            .env("THROTTLE_THREADS", "4")
            .env_remove("CARGO_MAKEFLAGS")
            .env_remove("THROTTLE_JOBSERVER")
            .env_remove("THROTTLE_JOBSERVER_HOOKS")
            .env_remove("THROTTLE_JOBSERVER_SOCKET")
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", text(&out.stderr));
        assert_eq!(
            server.tokens_in_pool().unwrap(),
            3,
            "round {round}: a token left with the process"
        );
    }
}
