//! `throttle procs --budget`: seed 004 with and without a machine-wide budget.
//!
//! K copies of a pool program built for all CPUs (`throttle __pool`: the global pool, one thread
//! per usable CPU, 64 tasks of fixed CPU work) run in two settings, interleaved over the
//! repetitions:
//!
//! - **free**: the K copies start at once, no jobserver anywhere: K × CPUs threads contend for
//!   the CPUs.
//! - **budget**: this process serves one jobserver of N = usable CPUs slots (`throttle::Server`,
//!   as `throttle run -j N` does) and launches the copies as `make -jK` does under a jobserver:
//!   the first running copy uses this process's implicit slot, each further one only starts once
//!   this process has read a token for it from the fifo, and that token goes back when the copy
//!   exits. Inside each copy the pool joins the same jobserver (through the server's socket) and
//!   takes a token per extra thread only while it has work for it.
//!
//! Per copy: the completion time (from the batch's start, queueing included), CPU time (wait4)
//! and run-queue wait (schedstat: every thread sampled every [`SAMPLE`] and the zombie's main
//! thread at exit, see `throttle_probe::child`). Per batch: the mean completion time, the
//! makespan (the batch's wall time), the total CPU time and run-queue wait. The rows give medians
//! over the repetitions with min–max, and the budget rows the ratios to the free row of the same
//! repetition (paired, because the host's load drifts).

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::Context;
use throttle::{Jobserver, Server, Style, Token};
use throttle_probe::child::{self, ChildUsage, RunningChild};

use crate::calibrate;
use crate::experiments::procs::{doubling_levels, ProcsArgs};
use crate::interrupt;
use crate::progress::Progress;
use crate::results::{median, Machine, Report, Row, Sample, Section};

/// How often the launcher looks at its children: reaps those that exited, samples the threads
/// of the others (a thread's schedstat after its last sample is lost when the process exits, so
/// shorter is more complete; each look reads /proc/PID/task/*/schedstat, a few µs per thread).
const SAMPLE: Duration = Duration::from_millis(10);

/// Tasks per copy: seed 000's 64 slices.
const TASKS: usize = 64;

/// The two settings, in the order of the first repetition.
const MODES: [&str; 2] = ["free", "budget"];

/// One copy's outcome.
struct Done {
    completion: Duration,
    usage: ChildUsage,
}

/// Runs `throttle procs --budget`.
pub fn run(args: &ProcsArgs, machine: Machine) -> anyhow::Result<Report> {
    let slots = machine.usable_cpus();
    let max = args
        .max
        .map_or(if args.quick { 8 } else { 16 }, |m| m as usize);
    let reps = args.reps.unwrap_or(3) as usize;
    let levels = doubling_levels(max);
    let ms = args.ms.unwrap_or(if args.quick { 100 } else { 400 });
    if !args.command.is_empty() {
        return Err(crate::error::usage(
            "CMD",
            &args.command.join(" "),
            "--budget runs its own pool program; give no command",
        ));
    }
    let per_task = calibrate::spin_iterations_for(ms as f64 / 1000.0 / TASKS as f64);
    let exe = std::env::current_exe().context("finding this program's path to re-run it")?;
    let program = |expect: &str| -> Vec<String> {
        vec![
            exe.display().to_string(),
            "__pool".into(),
            "--tasks".into(),
            TASKS.to_string(),
            "--iterations".into(),
            per_task.to_string(),
            "--jobserver".into(),
            expect.into(),
        ]
    };

    let mut report = Report::new("procs", machine);
    report.param("mode", "budget");
    report.param("levels", &levels);
    report.param("reps", reps);
    report.param("slots", slots);
    report.param("child_pool_threads", throttle::default_threads());
    report.param("cpu_ms_per_copy", ms);
    report.param("tasks_per_copy", TASKS);
    report.param("command", program("required"));

    let progress = Progress::new((reps * levels.len() * 2) as u64, "procs --budget");
    // samples[mode][level]
    let mut samples: Vec<Vec<Vec<Sample>>> = vec![vec![Vec::new(); levels.len()]; 2];
    'reps: for rep in 0..reps {
        for i in 0..levels.len() {
            let li = (i + rep) % levels.len();
            let k = levels[li];
            // Alternate which setting goes first, so neither always runs after the other.
            for m in 0..2 {
                let mode = (m + rep + i) % 2;
                if interrupt::requested() {
                    report.partial = true;
                    break 'reps;
                }
                progress.step(format!("{} × {k}", MODES[mode]));
                let batch = if mode == 0 {
                    run_batch(&program("absent"), k, None)
                } else {
                    run_batch(&program("required"), k, Some(slots))
                };
                match batch {
                    Ok(s) => samples[mode][li].push(s),
                    // Ctrl-C reaches the copies too (one process group): that batch is lost,
                    // what was measured before it is kept.
                    Err(_) if interrupt::requested() => {
                        report.partial = true;
                        break 'reps;
                    }
                    Err(e) => return Err(e),
                }
                progress.done_one();
            }
        }
    }
    progress.finish();

    let mut section = Section::new(
        "procs_budget",
        &format!(
            "seed 004 with and without a budget: K copies of a pool of {} threads ({} ms CPU each); \
             budget = one jobserver of {slots} slots; wall = makespan",
            throttle::default_threads(),
            ms
        ),
        "setting",
        "concurrent copies K",
        true,
    )
    .metric_column("mean_completion_s", "mean completion")
    .metric_column("cpu_total_s", "CPU total")
    .metric_column("rq_wait_per_cpu_ratio", "rq wait ÷ CPU")
    .metric_column("mean_completion_vs_free_ratio", "mean compl. ÷ free")
    .metric_column("makespan_vs_free_ratio", "makespan ÷ free");
    for (li, &k) in levels.iter().enumerate() {
        for (mode, name) in MODES.iter().enumerate() {
            let s = &samples[mode][li];
            let Some(mut row) = Row::from_samples(name, k as u64, &k.to_string(), k as f64, s)
            else {
                continue;
            };
            spread_of(&mut row, s, "mean_completion_s");
            if mode == 1 {
                paired_ratios(&mut row, &samples[0][li], s);
            }
            section.rows.push(row);
        }
    }
    report.findings = findings(&section, slots);
    report.sections.push(section);
    Ok(report)
}

/// Adds `KEY_min`/`KEY_max` beside a metric's median (the spread of the repetitions).
fn spread_of(row: &mut Row, samples: &[Sample], key: &str) {
    let v: Vec<f64> = samples
        .iter()
        .filter_map(|s| s.metrics.get(key).copied())
        .collect();
    if v.is_empty() {
        return;
    }
    let stem = key.trim_end_matches("_s");
    let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    row.metrics.insert(format!("{stem}_min_s"), lo);
    row.metrics.insert(format!("{stem}_max_s"), hi);
}

/// Budget ÷ free of the same repetition, for each measure: median, min and max over the pairs.
fn paired_ratios(row: &mut Row, free: &[Sample], budget: &[Sample]) {
    for (key, name) in [
        ("mean_completion_s", "mean_completion_vs_free"),
        ("makespan_s", "makespan_vs_free"),
        ("cpu_total_s", "cpu_total_vs_free"),
        ("rq_wait_total_s", "rq_wait_total_vs_free"),
    ] {
        let r: Vec<f64> = free
            .iter()
            .zip(budget)
            .filter_map(|(f, b)| {
                let (f, b) = (f.metrics.get(key)?, b.metrics.get(key)?);
                (*f > 0.0).then(|| b / f)
            })
            .collect();
        if r.is_empty() {
            continue;
        }
        row.metrics.insert(format!("{name}_ratio"), median(&r));
        row.metrics.insert(
            format!("{name}_min_ratio"),
            r.iter().copied().fold(f64::INFINITY, f64::min),
        );
        row.metrics.insert(
            format!("{name}_max_ratio"),
            r.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        );
    }
}

/// A running copy and the slot it runs on (budget): `None` = the implicit slot.
struct Copy {
    child: RunningChild,
    token: Option<Token>,
}

/// Runs `k` copies, free (`slots` = None: all at once) or under a jobserver of `slots` slots
/// (started as slots allow, like make), and returns the batch's sample.
fn run_batch(program: &[String], k: usize, slots: Option<usize>) -> anyhow::Result<Sample> {
    let server = match slots {
        Some(n) => Some(
            Server::new(n, Style::Fifo)
                .map_err(|e| anyhow::anyhow!("starting a jobserver of {n} slots: {e}"))?,
        ),
        None => None,
    };
    // This process's own client of the fifo, as make is one of its pipe: it reads a token
    // before starting each copy beyond the one on its implicit slot.
    let mut launcher = match &server {
        Some(s) => Some(Jobserver::from_auth(s.auth()).context("opening the jobserver's fifo")?),
        None => None,
    };
    let start = Instant::now();
    let mut pending = k;
    let mut running: Vec<Copy> = Vec::with_capacity(k);
    let mut implicit_busy = false;
    let mut done: Vec<Done> = Vec::with_capacity(k);
    let mut failure: Option<anyhow::Error> = None;
    // A token read while waiting, for the next copy.
    let mut ready: Option<Token> = None;
    while pending > 0 || !running.is_empty() {
        // Start every copy the setting allows now.
        while pending > 0 && failure.is_none() {
            let token = match (&mut launcher, implicit_busy) {
                (None, _) | (Some(_), false) => None,
                (Some(js), true) => match ready.take() {
                    Some(t) => Some(t),
                    None => match js.acquire_timeout(Duration::ZERO)? {
                        Some(t) => Some(t),
                        None => break,
                    },
                },
            };
            let mut cmd = Command::new(&program[0]);
            cmd.args(&program[1..])
                .stdin(Stdio::null())
                .stdout(Stdio::null());
            for var in throttle::jobserver::MAKEFLAGS_VARS {
                cmd.env_remove(var);
            }
            cmd.env_remove(throttle::SOCKET_ENV)
                .env_remove(throttle::ID_ENV)
                .env_remove(throttle::JOBSERVER_ENV);
            if let Some(s) = &server {
                s.configure(&mut cmd);
            }
            match child::spawn(&mut cmd) {
                Ok(c) => {
                    if launcher.is_some() && token.is_none() {
                        implicit_busy = true;
                    }
                    running.push(Copy { child: c, token });
                    pending -= 1;
                }
                Err(e) => {
                    if let (Some(js), Some(t)) = (&mut launcher, token) {
                        let _ = js.release(t);
                    }
                    failure = Some(anyhow::Error::new(e).context("starting a copy"));
                    pending = 0;
                }
            }
        }
        // Reap the copies that exited; sample the threads of the others.
        let mut i = 0;
        while i < running.len() {
            if running[i].child.has_exited()? {
                let copy = running.swap_remove(i);
                let completion = start.elapsed();
                let usage = copy.child.wait()?;
                match (copy.token, &mut launcher) {
                    (Some(t), Some(js)) => js.release(t)?,
                    (None, Some(_)) => implicit_busy = false,
                    _ => {}
                }
                if !usage.success() && failure.is_none() {
                    failure = Some(anyhow::anyhow!(
                        "a copy of `{}` failed (exit {:?}, signal {:?})",
                        program[1..].join(" "),
                        usage.exit_code,
                        usage.signal
                    ));
                }
                done.push(Done { completion, usage });
            } else {
                running[i].child.sample();
                i += 1;
            }
        }
        if pending == 0 && running.is_empty() {
            break;
        }
        // Wait: for a token if a copy waits for one (read at once when it comes, as make
        // blocks on its pipe), else one sampling period.
        match &mut launcher {
            Some(js) if pending > 0 && implicit_busy && failure.is_none() => {
                ready = js.acquire_timeout(SAMPLE)?;
            }
            _ => std::thread::sleep(SAMPLE),
        }
    }
    if let (Some(js), Some(t)) = (&mut launcher, ready.take()) {
        js.release(t)?;
    }
    drop(launcher);
    if let Some(e) = failure {
        return Err(e);
    }
    if let Some(s) = &server {
        let back = s.settle(Duration::from_secs(5)).unwrap_or(0);
        anyhow::ensure!(
            back == s.tokens_expected(),
            "the jobserver got back {back} of {} tokens",
            s.tokens_expected()
        );
    }
    Ok(sample_of(&done, start.elapsed()))
}

fn sample_of(done: &[Done], makespan: Duration) -> Sample {
    let n = done.len().max(1) as f64;
    let cpu: Duration = done.iter().map(|d| d.usage.cpu()).sum();
    let waits: Result<Vec<Duration>, String> = done
        .iter()
        .map(|d| {
            d.usage
                .run_queue_wait
                .clone()
                .map_err(|e| e.reason.to_string())
        })
        .collect();
    let on_cpu: Option<Duration> = done
        .iter()
        .map(|d| d.usage.on_cpu.clone().ok())
        .sum::<Option<Duration>>();
    let mean_completion = done.iter().map(|d| d.completion.as_secs_f64()).sum::<f64>() / n;
    let mut s = Sample {
        wall: makespan,
        user: done.iter().map(|d| d.usage.user).sum(),
        system: done.iter().map(|d| d.usage.system).sum(),
        voluntary: done.iter().map(|d| d.usage.voluntary_switches).sum(),
        involuntary: done.iter().map(|d| d.usage.involuntary_switches).sum(),
        run_queue_wait: Some(waits.clone().map(|w| w.iter().sum())),
        metrics: Default::default(),
    }
    .metric("mean_completion_s", mean_completion)
    .metric("makespan_s", makespan.as_secs_f64())
    .metric("cpu_total_s", cpu.as_secs_f64());
    if let Ok(w) = waits {
        let total: Duration = w.iter().sum();
        s = s.metric("rq_wait_total_s", total.as_secs_f64());
        if cpu > Duration::ZERO {
            s = s.metric(
                "rq_wait_per_cpu_ratio",
                total.as_secs_f64() / cpu.as_secs_f64(),
            );
        }
    }
    if let Some(on) = on_cpu.filter(|_| cpu > Duration::ZERO) {
        // How much of the CPU time the sampled threads' schedstat covers (1.0 = all of it).
        s = s.metric(
            "schedstat_coverage_ratio",
            on.as_secs_f64() / cpu.as_secs_f64(),
        );
    }
    s
}

/// The targets at K = 8 (or the largest K measured below it), met or missed, with the
/// spread of the paired ratios; and the run-queue wait of both settings.
fn findings(section: &Section, slots: usize) -> Vec<String> {
    let mut out = Vec::new();
    let m = |r: &Row, k: &str| r.metrics.get(k).copied();
    let level = section
        .rows
        .iter()
        .filter(|r| r.series == "budget" && r.level <= 8)
        .map(|r| r.level)
        .max();
    let Some(k) = level else {
        return out;
    };
    let (Some(free), Some(budget)) = (section.row("free", k), section.row("budget", k)) else {
        return out;
    };
    let verdict = |ok: bool| if ok { "met" } else { "missed" };
    let ratio = |name: &str, target: f64, label: &str| -> Option<String> {
        let r = m(budget, &format!("{name}_ratio"))?;
        let lo = m(budget, &format!("{name}_min_ratio"))?;
        let hi = m(budget, &format!("{name}_max_ratio"))?;
        let noise = if lo <= target && target <= hi {
            "; the target lies within the spread"
        } else {
            ""
        };
        Some(format!(
            "{label} under the budget = {r:.2} × free (paired repetitions {lo:.2}–{hi:.2}; target ≤ {target}: {}{noise})",
            verdict(r <= target)
        ))
    };
    let mut parts = Vec::new();
    parts.extend(ratio(
        "mean_completion_vs_free",
        0.6,
        "mean completion time",
    ));
    parts.extend(ratio("makespan_vs_free", 1.05, "makespan"));
    if let Some(share) = m(budget, "rq_wait_per_cpu_ratio") {
        parts.push(format!(
            "run-queue wait = {:.1} % of CPU time (target ≤ 5 %: {})",
            share * 100.0,
            verdict(share <= 0.05)
        ));
    }
    if !parts.is_empty() {
        out.push(format!(
            "K = {k}{}: {}.",
            if k == 8 {
                String::new()
            } else {
                " (the largest K measured up to 8)".into()
            },
            parts.join("; ")
        ));
    }
    if let Some(one) = section.row("budget", 1) {
        if let Some(r) = m(one, "mean_completion_vs_free_ratio") {
            out.push(format!(
                "Null comparison: at K = 1 both settings run the same work on the same {} threads \
                 (the one copy gets every slot), yet budget ÷ free = {r:.2} there (paired \
                 repetitions {:.2}–{:.2}). A ratio far from 1 at K = 1 is the host's doing (other \
                 programs' load, the scheduler's share for a process that wakes often), and the \
                 ratios at larger K carry the same bias.",
                throttle::default_threads(),
                m(one, "mean_completion_vs_free_min_ratio").unwrap_or(r),
                m(one, "mean_completion_vs_free_max_ratio").unwrap_or(r),
            ));
        }
    }
    if let Some(share) = m(free, "rq_wait_per_cpu_ratio") {
        out.push(format!(
            "Free at K = {k}: run-queue wait = {:.1} % of CPU time ({} copies of a pool of all CPUs on {slots} usable CPUs).",
            share * 100.0,
            k
        ));
    }
    let coverage: Vec<f64> = section
        .rows
        .iter()
        .filter_map(|r| m(r, "schedstat_coverage_ratio"))
        .collect();
    if !coverage.is_empty() {
        let lo = coverage.iter().copied().fold(f64::INFINITY, f64::min);
        out.push(format!(
            "Run-queue wait is read per thread (sampled every {} ms, plus each copy's main thread at exit); \
             the sampled threads cover at least {:.0} % of the CPU time (wait4), so the wait is a lower bound.",
            SAMPLE.as_millis(),
            lo * 100.0
        ));
    }
    out
}
