//! Running the plan: warm-up, interleaved rounds, adaptive repetition, Ctrl-C.
//!
//! Each round runs every value once, in an order shuffled afresh per round (a seeded
//! xorshift, so a scan is reproducible), so slow drift of the machine — thermal throttling,
//! a backup starting — spreads over all values instead of biasing the last ones. Without
//! `--runs`, rounds continue past `--min-runs` until every value's median is known to ±2.5 %
//! (see [`STABLE`]) or `--max-runs` is reached.

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use anyhow::Context;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use throttle_probe::{child, ProbeError};

use super::plan::{Plan, RunPolicy};
use super::record::{Point, Run, Scan};
use super::sampler::ThreadSampler;
use super::stats;
use crate::error::usage;
use crate::results::Machine;

/// A median is "stable" when its approximate 95 % confidence half-width is below 2.5 % of it:
/// finer than that, run-to-run noise on a shared machine dominates anyway.
const STABLE: f64 = 0.025;

/// How often the worker threads of a running child are sampled for their run-queue wait. 10 ms
/// is the kernel's order of a timeslice: finer sampling costs CPU the measured program could use.
const SAMPLE_INTERVAL: Duration = Duration::from_millis(10);

/// xorshift64: a tiny seeded generator for the run order.
struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// Fisher–Yates shuffle.
    fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = (self.next() % (i as u64 + 1)) as usize;
            items.swap(i, j);
        }
    }
}

/// Progress on standard error, drawn only when it is a terminal.
struct Progress(ProgressBar);

impl Progress {
    fn new(total: u64) -> Progress {
        let bar = if std::io::stderr().is_terminal() {
            let b = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
            if let Ok(style) = ProgressStyle::with_template("scan {bar:30} {pos}/{len} runs  {msg}")
            {
                b.set_style(style);
            }
            b
        } else {
            ProgressBar::hidden()
        };
        Progress(bar)
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.0.finish_and_clear();
    }
}

/// Runs the plan and returns what was measured. `partial` is set when Ctrl-C stopped it.
///
/// # Errors
///
/// A usage error when the command cannot be started; a run error when it fails and
/// `--ignore-failure` was not given.
pub fn measure(plan: &Plan, machine: Machine) -> anyhow::Result<Scan> {
    let sampler = ThreadSampler::start(SAMPLE_INTERVAL).context("starting the sampler thread")?;
    let mut scan = Scan {
        mode: plan.mode,
        parameter: plan.parameter.clone(),
        template: plan.template_display(),
        points: plan
            .values
            .iter()
            .enumerate()
            .map(|(i, v)| Point {
                label: v.label.clone(),
                n: v.n,
                copies: v.copies,
                command: plan.display(i),
                parameter: v.parameter.clone(),
                runs: Vec::new(),
            })
            .collect(),
        machine,
        partial: false,
        run_queue_unavailable: None,
        warmup: plan.warmup,
    };
    let (min_rounds, max_rounds) = match plan.runs {
        RunPolicy::Fixed(r) => (r, r),
        RunPolicy::Adaptive { min, max } => (min, max),
    };
    let values = plan.values.len();
    let progress = Progress::new(((plan.warmup + min_rounds) * values) as u64);
    let mut rng = XorShift(0x2545_F491_4F6C_DD1D);
    let mut order: Vec<usize> = (0..values).collect();
    // Values whose --setup ran (their first run started), so --cleanup runs for them only.
    let mut set_up = vec![false; values];
    let total_rounds = plan.warmup + max_rounds;
    for round in 0..total_rounds {
        let warming = round < plan.warmup;
        if !warming {
            let measured = round - plan.warmup;
            if measured >= min_rounds && (measured >= max_rounds || stable(&scan)) {
                break;
            }
            if measured >= min_rounds {
                progress.0.inc_length(values as u64);
            }
        }
        rng.shuffle(&mut order);
        for &i in &order {
            progress.0.set_message(format!(
                "{} {} = {}",
                if warming { "warm-up" } else { "measuring" },
                plan.parameter,
                plan.values[i].label
            ));
            if !set_up[i] {
                hook(plan, "--setup", plan.hooks.setup.as_deref(), i)?;
                set_up[i] = true;
            }
            hook(plan, "--prepare", plan.hooks.prepare.as_deref(), i)?;
            let run = run_once(
                plan,
                i,
                round.saturating_sub(plan.warmup),
                &sampler,
                &mut scan,
            )?;
            hook(plan, "--conclude", plan.hooks.conclude.as_deref(), i)?;
            progress.0.inc(1);
            if crate::interrupt::requested() {
                // The run in flight saw the SIGINT too: discard it.
                scan.partial = true;
                // What was measured is kept whatever the cleanup does (it saw the signal too).
                if let Err(e) = cleanup(plan, &set_up) {
                    eprintln!("warning: {e:#}");
                }
                return Ok(scan);
            }
            if !run.succeeded() && !plan.ignore_failure {
                let code = match (run.exit_code, run.signal) {
                    (_, Some(sig)) => format!("was killed by signal {sig}"),
                    (Some(c), None) => format!("exited with status {c}"),
                    (None, None) => "failed".to_string(),
                };
                if plan.shell.is_some()
                    && run.exit_code == Some(127)
                    && scan.points.iter().all(|p| p.runs.is_empty())
                {
                    return Err(usage(
                        "CMD",
                        &plan.display(i),
                        "cannot be started: the shell says command not found (status 127)",
                    ));
                }
                anyhow::bail!(
                    "`{}` {code}{}; use --ignore-failure to go on, --show-output to see its output",
                    plan.display(i),
                    if warming { " during warm-up" } else { "" }
                );
            }
            if !warming {
                scan.points[i].runs.push(run);
            }
        }
    }
    cleanup(plan, &set_up)?;
    Ok(scan)
}

/// Runs the hook `line` (given as `flag`) for value `index`, if there is one; fails the scan
/// when it cannot start or exits non-zero.
fn hook(plan: &Plan, flag: &str, line: Option<&str>, index: usize) -> anyhow::Result<()> {
    let Some(line) = line else { return Ok(()) };
    let status = plan
        .hook(line, index)
        .status()
        .with_context(|| format!("starting {flag} `{line}`"))?;
    // A hook stopped by the Ctrl-C that stops the scan is no failure of its own: the caller
    // sees the interrupt and keeps what was measured.
    if !status.success() && !crate::interrupt::requested() {
        anyhow::bail!(
            "{flag} `{line}` {} (for `{}`); use --show-output to see its output",
            match status.code() {
                Some(c) => format!("exited with status {c}"),
                None => "was killed by a signal".to_string(),
            },
            plan.display(index)
        );
    }
    Ok(())
}

/// `--cleanup` once for every value whose `--setup` ran (`set_up[i]`).
fn cleanup(plan: &Plan, set_up: &[bool]) -> anyhow::Result<()> {
    for (i, _) in set_up.iter().enumerate().filter(|(_, done)| **done) {
        hook(plan, "--cleanup", plan.hooks.cleanup.as_deref(), i)?;
    }
    Ok(())
}

/// True when every value's median wall time is known well enough.
fn stable(scan: &Scan) -> bool {
    scan.points.iter().all(|p| {
        let walls: Vec<f64> = p.runs.iter().map(|r| r.wall.as_secs_f64()).collect();
        stats::median_relative_uncertainty(&walls).is_some_and(|u| u <= STABLE)
    })
}

fn spawn_error(plan: &Plan, index: usize, e: ProbeError) -> anyhow::Error {
    match e {
        ProbeError::Spawn { .. } => usage("CMD", &plan.display(index), &format!("{e}")),
        other => anyhow::Error::new(other).context(format!("running `{}`", plan.display(index))),
    }
}

/// One run of value `index`: `copies` children at once, their usage summed.
fn run_once(
    plan: &Plan,
    index: usize,
    round: usize,
    sampler: &ThreadSampler,
    scan: &mut Scan,
) -> anyhow::Result<Run> {
    let copies = plan.values[index].copies;
    let mut commands: Vec<_> = (0..copies).map(|_| plan.command(index)).collect();
    let started = Instant::now();
    let mut running = Vec::with_capacity(copies);
    // With `--output pipe`, one thread per child reads its standard output to the end.
    let mut drains = Vec::new();
    for cmd in &mut commands {
        match child::spawn(cmd) {
            Ok(mut c) => {
                sampler.watch(c.pid());
                if let Some(mut out) = c.take_stdout() {
                    drains.push(std::thread::spawn(move || {
                        let _ = std::io::copy(&mut out, &mut std::io::sink());
                    }));
                }
                running.push(c);
            }
            Err(e) => {
                // Reap what was started before reporting.
                for c in running {
                    let pid = c.pid();
                    let _ = c.wait();
                    sampler.finish(pid);
                }
                for d in drains {
                    let _ = d.join();
                }
                return Err(spawn_error(plan, index, e));
            }
        }
    }
    let mut run = Run {
        round,
        wall: Duration::ZERO,
        user: Duration::ZERO,
        system: Duration::ZERO,
        max_rss_kib: 0,
        voluntary_switches: 0,
        involuntary_switches: 0,
        run_queue_wait: Some(Duration::ZERO),
        exit_code: Some(0),
        signal: None,
    };
    let mut first_error = None;
    let mut single_wall = Duration::ZERO;
    for c in running {
        let pid = c.pid();
        let waited = c.wait();
        let (workers_wait, _) = sampler.finish(pid);
        let usage = match waited {
            Ok(u) => u,
            Err(e) => {
                first_error.get_or_insert(e);
                continue;
            }
        };
        single_wall = usage.wall;
        run.user += usage.user;
        run.system += usage.system;
        run.max_rss_kib = run.max_rss_kib.max(usage.max_rss_kib);
        run.voluntary_switches += usage.voluntary_switches;
        run.involuntary_switches += usage.involuntary_switches;
        run.run_queue_wait = match (run.run_queue_wait, &usage.run_queue_wait) {
            (Some(total), Ok(main)) => Some(total + *main + workers_wait),
            (_, Err(why)) => {
                scan.run_queue_unavailable
                    .get_or_insert_with(|| why.reason.clone());
                None
            }
            (None, Ok(_)) => None,
        };
        if run.succeeded() && !usage.success() {
            run.exit_code = usage.exit_code;
            run.signal = usage.signal;
        }
    }
    // The pipes end when the children (and any descendants still holding them) have exited.
    for d in drains {
        let _ = d.join();
    }
    // One child: the probe's own spawn-to-exit clock, which excludes reaping. Several: from the
    // first spawn until the last one was reaped.
    run.wall = if copies == 1 {
        single_wall
    } else {
        started.elapsed()
    };
    if let Some(e) = first_error {
        return Err(anyhow::Error::new(e).context(format!("waiting for `{}`", plan.display(index))));
    }
    Ok(run)
}
