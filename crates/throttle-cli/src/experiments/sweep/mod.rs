//! `throttle sweep`: seed 000's batch file on this machine: the same 64-task sum at
//! concurrency levels 1, 2, 3, 4, 5, 6, 8, 16, 32, 64 and 0 (no limit), in two modes, repeated with
//! the order of levels and modes interleaved so drift does not favour one configuration.
//!
//! Both modes have one thread per task (64 by default) and differ only in the gate:
//! `threads` = 64 OS threads created per run and gated by a `throttle::Throttle` semaphore (the
//! seed's program); `pool` = one persistent `throttle::Pool` of 64 threads whose live limit is
//! `set_concurrency(level)`. So the sweep measures exactly what the seed measures — N runnable
//! threads contending for the cores — and what a pool's limit does against a semaphore.

use std::collections::BTreeMap;
use std::time::Duration;

use clap::Args;

use crate::error::usage;
use crate::experiments::sum::{self, Mode, Work};
use crate::export::OutputArgs;
use crate::interrupt;
use crate::levels::LevelList;
use crate::load::LoadMark;
use crate::progress::Progress;
use crate::results::{Machine, Report, Row, Sample, Section};

mod findings;

use findings::{disturbance, findings};
pub use findings::{oversubscription, recommend_under};

/// The seed's batch file.
const DEFAULT_LEVELS: &str = "1,2,3,4,5,6,8,16,32,64,0";
/// Wall time the default sweep aims at, seconds.
const DEFAULT_SECONDS: f64 = 60.0;
/// Wall time `--quick` aims at, seconds (under 10 with calibration and pool start-up).
const QUICK_SECONDS: f64 = 5.0;

/// Options of `throttle sweep`.
#[derive(Debug, Args)]
#[command(
    about = "The concurrency sweep in detail: 64 tasks at N = 1,2,3,4,5,6,8,16,32,64,0 in two modes",
    long_about = "The concurrency sweep (seed 000, the first section of `throttle report`) in detail: 64 CPU-bound tasks (task i \
sums 1 + i·chunk ..= (i+1)·chunk) run with at most N at once, for each level N (0 = no limit), \
repeated --reps times with the order of levels and modes interleaved.\n\n\
Both modes have one thread per task (64) and differ only in the gate: `threads` creates 64 OS \
threads per run, gated by a throttle::Throttle semaphore (the seed's program); `pool` runs the \
tasks on one persistent throttle::Pool of 64 threads with set_concurrency(N) (0 = all 64).\n\n\
Per level and mode: wall median (min–max), user and system CPU, CPU/wall, voluntary and \
involuntary context switches, run-queue wait (schedstat: summed over the pool's threads, or read \
by each task thread just before it exits in threads mode), speedup over level 1 and efficiency = speedup / \
min(N, usable CPUs). The best level is marked, and a few sentences say what the numbers mean; a difference is \
called real only when a Mann–Whitney test on the repetitions says so (p ≤ 0.10, at least 3 \
repetitions of each).\n\n\
The work is calibrated so the whole sweep takes about --seconds (60 by default, 5 with --quick)."
)]
pub struct SweepArgs {
    /// Concurrency levels, comma-separated; 0 = no limit [default: 1,2,3,4,5,6,8,16,32,64,0,
    /// those up to --tasks].
    #[arg(long, value_name = "LIST", allow_hyphen_values = true)]
    pub levels: Option<LevelList>,
    /// Modes to compare, comma-separated.
    #[arg(long, value_enum, value_delimiter = ',', default_values_t = [Mode::Threads, Mode::Pool])]
    pub modes: Vec<Mode>,
    /// Repetitions of every level and mode (medians are reported).
    #[arg(long, value_name = "R", allow_negative_numbers = true, value_parser = crate::numbers::whole::<u32>(1, 1000))]
    pub reps: Option<u32>,
    /// A short sweep (under 10 s): less work per task, 3 repetitions.
    #[arg(long)]
    pub quick: bool,
    /// Approximate duration of the whole sweep in seconds (sets the calibrated work).
    #[arg(long, value_name = "S", allow_negative_numbers = true, value_parser = crate::numbers::seconds(crate::numbers::MAX_SECONDS))]
    pub seconds: Option<f64>,
    /// Number of tasks (and threads per mode).
    #[arg(long, default_value_t = 64, allow_negative_numbers = true, value_parser = crate::numbers::whole::<usize>(1, 4096))]
    pub tasks: usize,
    /// Numbers summed per task (skips calibration).
    #[arg(long, value_name = "C", allow_negative_numbers = true, value_parser = crate::numbers::whole::<u64>(1, u64::MAX))]
    pub chunk: Option<u64>,
    /// Repetitions of each task's sum (with --chunk).
    #[arg(long, value_name = "R", allow_negative_numbers = true, value_parser = crate::numbers::whole::<u32>(1, u64::MAX))]
    pub repeat: Option<u32>,
    /// `throttle report`'s budget: no new repetition starts after this instant (at least one
    /// always runs). Not a flag.
    #[arg(skip)]
    pub deadline: Option<std::time::Instant>,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub output: OutputArgs,
}

/// The seed's levels up to `tasks`, with 0 (no limit) last.
pub fn default_levels(tasks: usize) -> Vec<usize> {
    let all: LevelList = DEFAULT_LEVELS.parse().expect("the default levels parse");
    all.values().into_iter().filter(|&l| l <= tasks).collect()
}

/// Runs `throttle sweep`.
pub fn run(args: &SweepArgs, machine: Machine) -> anyhow::Result<Report> {
    let levels = match &args.levels {
        Some(list) => {
            let levels = list.values();
            if let Some(&bad) = levels.iter().find(|&&l| l > args.tasks) {
                return Err(usage(
                    "--levels",
                    list.raw(),
                    &format!("level {bad} exceeds --tasks {}", args.tasks),
                ));
            }
            levels
        }
        // The seed's levels that fit the task count (0 = no limit always fits).
        None => default_levels(args.tasks),
    };
    let mut modes: Vec<Mode> = Vec::new();
    for &m in &args.modes {
        if !modes.contains(&m) {
            modes.push(m);
        }
    }
    let reps = args.reps.unwrap_or(3) as usize;
    let seconds = match args.seconds {
        Some(s) if !(s.is_finite() && s > 0.0) => {
            return Err(usage(
                "--seconds",
                &s.to_string(),
                "must be a positive number",
            ))
        }
        Some(s) => s,
        None if args.quick => QUICK_SECONDS,
        None => DEFAULT_SECONDS,
    };
    let cpus = machine.usable_cpus();
    // Expected wall of one batch relative to its serial time: 1 / min(level, cpus).
    let parallel = |level: usize| -> usize {
        let effective = if level == 0 { args.tasks } else { level };
        effective.min(cpus).max(1)
    };
    let relative: f64 = levels.iter().map(|&l| 1.0 / parallel(l) as f64).sum();
    let serial_target = seconds / (reps as f64 * modes.len() as f64 * relative);
    let work = Work::from_flags(
        args.tasks,
        args.chunk,
        args.repeat,
        Duration::from_secs_f64(serial_target),
    )?;
    let pool = if modes.contains(&Mode::Pool) {
        Some(sum::task_pool(work.tasks)?)
    } else {
        None
    };

    let mut report = Report::new("sweep", machine);
    report.param("levels", &levels);
    report.param("modes", modes.iter().map(|m| m.name()).collect::<Vec<_>>());
    report.param("reps", reps);
    report.param("tasks", work.tasks);
    report.param("chunk", work.chunk);
    report.param("repeat", work.repeat);
    report.param("expected_sum", work.expected().to_string());
    report.param("usable_cpus", cpus);
    report.param("target_seconds", seconds);

    let progress = Progress::new((reps * levels.len() * modes.len()) as u64, "sweep");
    let mut samples: BTreeMap<(usize, usize), Vec<Sample>> = BTreeMap::new();
    let mut checks = BTreeMap::new();
    let load = LoadMark::now();
    // The longest repetition so far: the estimate of the next one's duration.
    let mut longest_rep = Duration::ZERO;
    'reps: for rep in 0..reps {
        let rep_started = std::time::Instant::now();
        if rep >= crate::verdict::MIN_REPS && !fits_before(args.deadline, rep_started, longest_rep)
        {
            // Out of budget (a busy machine runs slower than calibrated): keep whole
            // repetitions only, so every level has the same number of samples, and start one
            // only when it is expected to end by the deadline — a repetition that starts just
            // before the deadline would overrun it by its whole length (`throttle report
            // --budget` ran ~5 % over on a loaded machine while only the start was checked).
            // The first MIN_REPS repetitions always run: with fewer, the statistics rule can
            // call no difference real and the sweep would have no verdict at all, so a busy
            // machine overruns the budget by up to a repetition instead.
            report.param("repetitions_done", rep);
            break 'reps;
        }
        // Interleave: each repetition starts at a different level and alternates the mode order.
        for i in 0..levels.len() {
            let level_index = (i + rep) % levels.len();
            let level = levels[level_index];
            for j in 0..modes.len() {
                let mode_index = if rep % 2 == 0 { j } else { modes.len() - 1 - j };
                if interrupt::requested() {
                    report.partial = true;
                    break 'reps;
                }
                let mode = modes[mode_index];
                progress.step(format!("{} at {}", mode.name(), sum::level_label(level)));
                let (sample, check) = sum::measure_once(mode, level, &work, pool.as_ref())?;
                samples
                    .entry((level_index, mode_index))
                    .or_default()
                    .push(sample);
                let entry = checks
                    .entry((level_index, mode_index))
                    .or_insert(check.clone());
                if !check.ok {
                    *entry = check;
                }
                progress.done_one();
            }
        }
        longest_rep = longest_rep.max(rep_started.elapsed());
    }
    progress.finish();
    let outside = load.outside_cpus();
    if let Some(outside) = outside {
        report.param("outside_load_cpus", outside);
    }

    let mut section = Section::new(
        "sweep",
        &format!(
            "seed 000 sweep: {} tasks × {} numbers × {} repeat(s), {} repetition(s), {} usable CPUs",
            work.tasks,
            work.chunk,
            work.repeat,
            samples.values().map(Vec::len).max().unwrap_or(0),
            cpus
        ),
        "mode",
        "concurrent tasks",
        true,
    );
    for (li, &level) in levels.iter().enumerate() {
        for (mi, mode) in modes.iter().enumerate() {
            let Some(s) = samples.get(&(li, mi)) else {
                continue;
            };
            let x = if level == 0 { work.tasks } else { level } as f64;
            if let Some(mut row) =
                Row::from_samples(mode.name(), level as u64, &sum::level_label(level), x, s)
            {
                row.check = checks.remove(&(li, mi));
                section.rows.push(row);
            }
        }
    }
    section.fill_speedup(1, |level| parallel(level as usize) as f64);
    section.mark_best();
    let rec = recommend_under(&section, cpus, outside);
    report.findings = findings(&section, &report.machine, work.tasks, &levels, rec.as_ref());
    report.findings.extend(disturbance(&section, outside, cpus));
    if let Some(rec) = rec {
        report.findings.insert(0, rec.sentence);
    }
    report.sections.push(section);
    Ok(report)
}

/// True when a repetition that starts at `now` and lasts `expected` ends by `deadline` (always,
/// without a deadline).
fn fits_before(
    deadline: Option<std::time::Instant>,
    now: std::time::Instant,
    expected: Duration,
) -> bool {
    deadline.map_or(true, |d| now + expected <= d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_repetition_starts_only_if_it_ends_by_the_deadline() {
        let now = std::time::Instant::now();
        let rep = Duration::from_secs(4);
        assert!(fits_before(None, now, rep));
        assert!(fits_before(Some(now + Duration::from_secs(5)), now, rep));
        assert!(!fits_before(Some(now + Duration::from_secs(3)), now, rep));
    }
}
