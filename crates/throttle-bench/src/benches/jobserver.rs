//! The jobserver's overhead figures.
//!
//! - `jobserver_token`: one token acquire + release between two processes, p50 and p99. This
//!   process serves a jobserver (`throttle::Server`, 2 slots: one token) and a child process (this
//!   binary, re-run with [`CHILD_ENV`]) takes and gives back the token [`ROUNDS`] times per run:
//!   through the fifo (make's protocol: a read and a write of one byte on the kernel's pipe; the
//!   server process is not involved) and through the server's crash-safe socket (a request, a
//!   grant and a release: a round trip to the server process). Each run gives its p50 and p99;
//!   the table shows their median (min–max) over the runs, fifo and socket interleaved.
//! - `jobserver_absent`: the pool's cost when no jobserver is present, on `tree_sum` at all
//!   threads: a pool built without any jobserver support asked for, against a pool built the way
//!   the global pool is (it looks for a jobserver in `MAKEFLAGS` and finds none). Both run the
//!   same code once built (no budget thread is started; the only difference is one `Option`
//!   check in `set_concurrency`), so their ratio should lie within the spread. A third case
//!   shows the cost when a jobserver *is* present with tokens to spare: the pool starts each run
//!   on its implicit slot and reads a token per extra thread as work waits.

use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use throttle::{Jobserver, Server, Style};
use throttle_workloads::tree::Node;

use super::tree_sum::{build, throttle_case};
use super::Settings;
use crate::harness::{run_interleaved, Baseline, Case, Report, Series, Target};

/// The environment variable that makes this binary the child of `jobserver_token`: `fifo:AUTH`
/// or `socket:PATH`, and the rounds after a space.
pub const CHILD_ENV: &str = "THROTTLE_BENCH_JOBSERVER_CHILD";

/// Acquire + release rounds per run (and under `--quick`): enough for a stable p99.
const ROUNDS: usize = 20_000;
const QUICK_ROUNDS: usize = 2_000;

/// If this process is the child of `jobserver_token`, runs it and returns the exit code.
pub fn child_main() -> Option<std::process::ExitCode> {
    let spec = std::env::var(CHILD_ENV).ok()?;
    Some(match child(&spec) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: jobserver child: {e:#}");
            std::process::ExitCode::FAILURE
        }
    })
}

/// Takes and gives back the one token `rounds` times; prints `p50_ns p99_ns`.
fn child(spec: &str) -> Result<()> {
    let (source, rounds) = spec.rsplit_once(' ').context("malformed child spec")?;
    let rounds: usize = rounds.parse().context("rounds")?;
    let mut js = if let Some(auth) = source.strip_prefix("fifo:") {
        Jobserver::from_auth(auth)?
    } else if let Some(path) = source.strip_prefix("socket:") {
        Jobserver::connect(std::path::Path::new(path))?
    } else {
        bail!("unknown source {source}");
    };
    let mut ns = Vec::with_capacity(rounds);
    for _ in 0..rounds {
        let t = Instant::now();
        let token = js
            .acquire_timeout(Duration::from_secs(5))?
            .context("the one token never came")?;
        js.release(token)?;
        ns.push(t.elapsed().as_nanos() as u64);
    }
    ns.sort_unstable();
    let p = |q: f64| ns[((ns.len() - 1) as f64 * q).round() as usize];
    println!("{} {}", p(0.50), p(0.99));
    Ok(())
}

/// One child run: (p50, p99) in seconds.
fn one_run(spec: &str) -> Result<(f64, f64)> {
    let exe = std::env::current_exe().context("finding this binary to re-run it")?;
    let out = Command::new(exe)
        .env(CHILD_ENV, spec)
        .output()
        .context("running the jobserver child")?;
    if !out.status.success() {
        bail!("child failed: {}", String::from_utf8_lossy(&out.stderr));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let mut f = text.split_whitespace().map(|w| w.parse::<f64>());
    match (f.next(), f.next()) {
        (Some(Ok(a)), Some(Ok(b))) => Ok((a * 1e-9, b * 1e-9)),
        _ => bail!("unexpected child output {text:?}"),
    }
}

/// Runs `jobserver_token`.
pub fn token(settings: &Settings) -> Result<Report> {
    let rounds = if settings.quick { QUICK_ROUNDS } else { ROUNDS };
    let server = Server::new(2, Style::Fifo).context("starting a jobserver of 2 slots")?;
    let specs = [
        ("fifo", format!("fifo:{} {rounds}", server.auth())),
        (
            "socket",
            format!("socket:{} {rounds}", server.socket_path().display()),
        ),
    ];
    // One unrecorded run of each, then interleaved repetitions.
    for (_, spec) in &specs {
        one_run(spec)?;
    }
    let mut runs = vec![(Vec::new(), Vec::new()); specs.len()];
    for _ in 0..settings.reps {
        for ((_, spec), (p50, p99)) in specs.iter().zip(&mut runs) {
            let (a, b) = one_run(spec)?;
            p50.push(a);
            p99.push(b);
        }
    }
    let back = server.settle(Duration::from_secs(5))?;
    if back != 1 {
        bail!("the jobserver got back {back} of 1 token");
    }
    let mut series = Vec::new();
    for ((system, _), (p50, p99)) in specs.iter().zip(runs) {
        series.push(Series {
            system,
            threads: 1,
            variant: Some("p50"),
            runs: p50,
        });
        series.push(Series {
            system,
            threads: 1,
            variant: Some("p99"),
            runs: p99,
        });
    }
    let what = format!(
        "one token acquire + release by a child process, {rounds} rounds per run; \
         p50 and p99 of each run, median (min–max) over runs"
    );
    let baseline = Baseline {
        system: "fifo",
        threads: 1,
        variant: Some("p50"),
    };
    let mut report = Report::new("jobserver_token", what, baseline, series);
    report.notes.push(
        "fifo: make's protocol, a 1-byte read and write on the kernel's pipe (the server \
         process is not involved); socket: throttle's crash-safe path, a round trip to the \
         server process per acquire (request, grant) plus a release message"
            .into(),
    );
    report.notes.push(
        "a pool asks for a token only when work waits for another thread, at most once per \
         extra thread per burst of work"
            .into(),
    );
    Ok(report)
}

/// Runs `jobserver_absent`.
pub fn absent(settings: &Settings) -> Result<Report> {
    let threads = settings.threads;
    let (tree, depth) = build(settings);
    let want = Node::expected_sum(depth);
    let plain = throttle::Pool::builder()
        .threads(threads)
        .build()
        .context("building a plain pool")?;
    // The global pool's way: join the jobserver in the environment if there is one.
    let found = Jobserver::from_env();
    let env_present = found.is_some();
    let mut b = throttle::Pool::builder().threads(threads);
    if let Some(js) = found {
        b = b.jobserver(js);
    }
    let from_env = b.build().context("building a pool from the environment")?;
    // A jobserver with a token for every extra thread: it never limits the pool.
    let server = Server::new(threads, Style::Fifo).context("starting a jobserver")?;
    let spare = throttle::Pool::builder()
        .threads(threads)
        .jobserver(Jobserver::from_auth(server.auth())?)
        .build()
        .context("building a pool under the jobserver")?;
    let cases = vec![
        Case::new("throttle", threads, throttle_case(&plain, &tree, want)).variant("plain"),
        Case::new("throttle", threads, throttle_case(&from_env, &tree, want)).variant("env_none"),
        Case::new("throttle", threads, throttle_case(&spare, &tree, want))
            .variant("jobserver_spare"),
    ];
    let series = run_interleaved(settings.reps, true, cases)?;
    let what = format!(
        "tree_sum (depth {depth}), {threads} threads: a plain pool; one built as the global pool \
         is, no jobserver in the environment; one under a jobserver with {} spare token(s); wall time",
        threads - 1
    );
    let baseline = Baseline {
        system: "throttle",
        threads,
        variant: Some("plain"),
    };
    let mut report = Report::new("jobserver_absent", what, baseline, series);
    let find = |v: &str| report.find_variant("throttle", threads, Some(v)).cloned();
    if let (Some(p), Some(e), Some(s)) = (find("plain"), find("env_none"), find("jobserver_spare"))
    {
        let r = e.median() / p.median();
        let spread = e.spread() + p.spread();
        if env_present {
            report.notes.push(
                "a jobserver IS present in this environment (MAKEFLAGS): env_none measured \
                 a pool that joined it, not the absent case"
                    .into(),
            );
        }
        report.targets.push(Target {
            target: "no jobserver present: env_none ÷ plain within the spread (none measurable)"
                .into(),
            measured: format!("{r:.3}"),
            met: !env_present && (r - 1.0).abs() <= spread,
            spread: Some(spread),
            within_spread: (r - 1.0).abs() <= spread,
        });
        let rs = s.median() / p.median();
        report.notes.push(format!(
            "under a jobserver with tokens to spare: {rs:.3} × plain ({:+.1} %, spread ±{:.1} %): \
             each run starts on the implicit slot and reads a token per extra thread as work waits",
            (rs - 1.0) * 100.0,
            (s.spread() + p.spread()) * 100.0
        ));
    }
    drop(spare);
    let back = server.settle(Duration::from_secs(5))?;
    if back != threads - 1 {
        bail!("the jobserver got back {back} of {} tokens", threads - 1);
    }
    Ok(report)
}
