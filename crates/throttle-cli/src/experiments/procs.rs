//! `throttle procs`: seed 004. K concurrent processes of the same CPU-bound job, for K = 1, 2, 4,
//! ... up to `--max`: the wall time of the batch against the CPU time each process used, and the
//! time each spent waiting for a CPU. On an SMT machine the CPU time per process rises between the
//! physical and the logical core counts (siblings share a core); beyond the logical count the CPU
//! time stays flat and the wall time grows linearly.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::Context;
use clap::Args;
use throttle_probe::child;

use crate::calibrate;
use crate::export::OutputArgs;
use crate::interrupt;
use crate::progress::Progress;
use crate::results::{Machine, Report, Row, Sample, Section};
use crate::view::units;

/// Options of `throttle procs`.
#[derive(Debug, Args)]
#[command(
    about = "Seed 004: 1, 2, 4, ... K concurrent processes; wall time vs CPU time per process",
    long_about = "Seed 004 (elapsed vs CPU time under load): run 1, 2, 4, ... up to --max copies of \
a CPU-bound process at once and report, per level: the batch's wall time (median of --reps), the \
CPU time per process (user + system from wait4), and the run-queue wait per process (schedstat of \
the exited child, read before it is reaped). The built-in job is this binary's hidden `__spin` \
busy loop sized to --ms of CPU; give `-- CMD ARGS...` to run copies of any command instead. The \
plot marks the physical and logical core counts."
)]
pub struct ProcsArgs {
    /// The largest number of concurrent processes (default: 4 × logical CPUs, 2 × with --quick).
    #[arg(long, value_name = "K", allow_negative_numbers = true, value_parser = crate::numbers::whole::<u32>(1, 4096))]
    pub max: Option<u32>,
    /// CPU time of the built-in job per process, in milliseconds.
    #[arg(long, value_name = "MS", allow_negative_numbers = true, value_parser = crate::numbers::whole::<u64>(1, 86400000))]
    pub ms: Option<u64>,
    /// Repetitions of every level.
    #[arg(long, value_name = "R", allow_negative_numbers = true, value_parser = crate::numbers::whole::<u32>(1, 1000))]
    pub reps: Option<u32>,
    /// A short run: 2 × logical CPUs at most, 100 ms per process (with --budget: K up to 8).
    #[arg(long)]
    pub quick: bool,
    /// Seed 004 with and without a machine-wide budget: K = 1, 2, 4, ... --max (default 16)
    /// copies of a pool program built for all CPUs, free vs launched under one jobserver of N =
    /// usable CPUs slots that their pools join (as under `throttle run -j N -- make -jK`).
    /// Prints per K the mean completion time, the makespan, the total CPU time and run-queue
    /// wait, and the budget ÷ free ratios.
    #[arg(long, conflicts_with = "command")]
    pub budget: bool,
    /// Run copies of this command instead of the built-in job.
    #[arg(last = true, value_name = "CMD")]
    pub command: Vec<String>,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub output: OutputArgs,
}

/// The levels 1, 2, 4, ... up to `max`, with `max` itself last when it is not a power of two.
pub fn doubling_levels(max: usize) -> Vec<usize> {
    let mut levels = Vec::new();
    let mut k = 1;
    while k <= max {
        levels.push(k);
        k *= 2;
    }
    if levels.last() != Some(&max) {
        levels.push(max);
    }
    levels
}

/// Runs `throttle procs`.
pub fn run(args: &ProcsArgs, machine: Machine) -> anyhow::Result<Report> {
    if args.budget {
        return crate::experiments::procs_budget::run(args, machine);
    }
    let logical = machine.topology.logical_cpus.max(1);
    let max = args
        .max
        .map_or(if args.quick { 2 * logical } else { 4 * logical }, |m| {
            m as usize
        });
    let reps = args.reps.unwrap_or(3) as usize;
    let levels = doubling_levels(max);
    let program: Vec<String> = if args.command.is_empty() {
        let ms = args.ms.unwrap_or(if args.quick { 100 } else { 400 });
        let iterations = calibrate::spin_iterations_for(ms as f64 / 1000.0);
        let exe = std::env::current_exe().context("finding this program's path to re-run it")?;
        vec![
            exe.display().to_string(),
            "__spin".into(),
            "--iterations".into(),
            iterations.to_string(),
        ]
    } else {
        args.command.clone()
    };

    let mut report = Report::new("procs", machine);
    report.param("levels", &levels);
    report.param("reps", reps);
    report.param("command", &program);
    report.param("built_in_job", args.command.is_empty());

    let progress = Progress::new((reps * levels.len()) as u64, "procs");
    let mut samples: Vec<Vec<Sample>> = vec![Vec::new(); levels.len()];
    'reps: for rep in 0..reps {
        for i in 0..levels.len() {
            let index = (i + rep) % levels.len();
            if interrupt::requested() {
                report.partial = true;
                break 'reps;
            }
            progress.step(format!("{} processes", levels[index]));
            samples[index].push(run_batch(&program, levels[index])?);
            progress.done_one();
        }
    }
    progress.finish();

    let mut section = Section::new(
        "procs",
        &format!("seed 004: concurrent copies of `{}`", short(&program)),
        "job",
        "concurrent processes",
        true,
    )
    .metric_column("cpu_per_process_s", "CPU/process")
    .metric_column("run_queue_wait_per_process_s", "rq wait/process");
    let name = if args.command.is_empty() {
        "spin"
    } else {
        "command"
    };
    for (level, s) in levels.iter().zip(&samples) {
        if let Some(row) =
            Row::from_samples(name, *level as u64, &level.to_string(), *level as f64, s)
        {
            section.rows.push(row);
        }
    }
    report.findings = findings(&section, &report.machine);
    report.sections.push(section);
    Ok(report)
}

/// Starts `k` copies at once and waits for all; fails if one cannot start or fails.
fn run_batch(program: &[String], k: usize) -> anyhow::Result<Sample> {
    let (exe, rest) = program
        .split_first()
        .ok_or_else(|| anyhow::anyhow!("no command to run"))?;
    let start = Instant::now();
    let mut running = Vec::with_capacity(k);
    for _ in 0..k {
        let mut cmd = Command::new(exe);
        cmd.args(rest).stdin(Stdio::null()).stdout(Stdio::null());
        match child::spawn(&mut cmd) {
            Ok(c) => running.push(c),
            Err(e) => {
                for c in running {
                    let _ = c.wait();
                }
                // A command that cannot start is bad input, as in `scan`: exit status 2.
                return Err(match e {
                    throttle_probe::ProbeError::Spawn { ref source, .. }
                        if source.kind() == std::io::ErrorKind::NotFound =>
                    {
                        crate::error::missing_program(exe)
                    }
                    throttle_probe::ProbeError::Spawn { .. } => {
                        crate::error::usage("CMD", &program.join(" "), &e.to_string())
                    }
                    other => anyhow::Error::new(other).context(format!("starting `{exe}`")),
                });
            }
        }
    }
    let mut usages = Vec::with_capacity(k);
    for c in running {
        usages.push(c.wait().with_context(|| format!("waiting for `{exe}`"))?);
    }
    let wall = start.elapsed();
    if let Some(bad) = usages.iter().find(|u| !u.success()) {
        let how = match (bad.exit_code, bad.signal) {
            (Some(code), _) => format!("exit status {code}"),
            (None, Some(sig)) => format!("signal {sig}"),
            _ => "an unknown status".into(),
        };
        anyhow::bail!("`{}` failed with {how}", short(program));
    }
    let waits: Result<Vec<Duration>, String> = usages
        .iter()
        .map(|u| u.run_queue_wait.clone().map_err(|e| e.reason.to_string()))
        .collect();
    let cpu: Duration = usages.iter().map(|u| u.cpu()).sum();
    let mut sample = Sample {
        wall,
        user: usages.iter().map(|u| u.user).sum(),
        system: usages.iter().map(|u| u.system).sum(),
        voluntary: usages.iter().map(|u| u.voluntary_switches).sum(),
        involuntary: usages.iter().map(|u| u.involuntary_switches).sum(),
        run_queue_wait: Some(waits.clone().map(|w| w.iter().sum())),
        metrics: Default::default(),
    }
    .metric("cpu_per_process_s", cpu.as_secs_f64() / k as f64);
    if let Ok(w) = waits {
        let total: Duration = w.iter().sum();
        sample = sample.metric(
            "run_queue_wait_per_process_s",
            total.as_secs_f64() / k as f64,
        );
    }
    Ok(sample)
}

fn short(program: &[String]) -> String {
    let mut parts: Vec<String> = program.to_vec();
    if let Some(first) = parts.first_mut() {
        if let Some(name) = std::path::Path::new(first.as_str()).file_name() {
            *first = name.to_string_lossy().into_owned();
        }
    }
    parts.join(" ")
}

/// Sentences about the CPU time per process below, between and beyond the core counts.
fn findings(section: &Section, machine: &Machine) -> Vec<String> {
    let mut out = Vec::new();
    let physical = machine.topology.physical_cores.max(1) as u64;
    let logical = machine.topology.logical_cpus.max(1) as u64;
    let cpu = |r: &Row| r.metrics.get("cpu_per_process_s").copied().unwrap_or(0.0);
    let at_most = |n: u64| {
        section
            .rows
            .iter()
            .filter(|r| r.level <= n)
            .max_by_key(|r| r.level)
    };
    let Some(one) = section.rows.iter().find(|r| r.level == 1) else {
        return out;
    };
    if let Some(p) = at_most(physical) {
        out.push(format!(
            "Up to {} processes ({physical} physical cores) the CPU time per process goes from {} to {} \
             ({:+.1} %) and the wall time from {} to {}.",
            p.level,
            units::secs(cpu(one)),
            units::secs(cpu(p)),
            (cpu(p) / cpu(one) - 1.0) * 100.0,
            units::secs(one.wall.median),
            units::secs(p.wall.median)
        ));
        if logical > physical {
            if let Some(l) = at_most(logical).filter(|l| l.level > p.level) {
                out.push(format!(
                    "Between {} and {} processes (SMT siblings share a core) the CPU time per process \
                     changes by {:+.1} %.",
                    p.level,
                    l.level,
                    (cpu(l) / cpu(p) - 1.0) * 100.0
                ));
            }
        }
    }
    if let (Some(l), Some(top)) = (
        at_most(logical),
        section.rows.iter().max_by_key(|r| r.level),
    ) {
        if top.level > l.level {
            out.push(format!(
                "Beyond {} logical CPUs the wall time grows {:.2}× for {:.2}× the processes, while \
                 the CPU time per process changes by {:+.1} %: the extra time is spent waiting for \
                 a CPU{}.",
                logical,
                top.wall.median / l.wall.median,
                top.level as f64 / l.level as f64,
                (cpu(top) / cpu(l) - 1.0) * 100.0,
                top.metrics
                    .get("run_queue_wait_per_process_s")
                    .map_or(String::new(), |w| format!(
                        " ({} per process in the run queue at {})",
                        units::secs(*w),
                        top.level
                    ))
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_double_up_to_max() {
        assert_eq!(doubling_levels(1), vec![1]);
        assert_eq!(doubling_levels(8), vec![1, 2, 4, 8]);
        assert_eq!(doubling_levels(6), vec![1, 2, 4, 6]);
    }
}
