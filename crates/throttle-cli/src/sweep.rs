//! `throttle sweep`: THE MAIN JOB. Seed 000's batch file on this machine: the same 64-task sum at
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
use crate::export::OutputArgs;
use crate::interrupt;
use crate::levels::LevelList;
use crate::load::LoadMark;
use crate::progress::Progress;
use crate::report::{Machine, Report, Row, Sample, Section};
use crate::sum::{self, Mode, Work};
use crate::units;

/// The seed's batch file.
const DEFAULT_LEVELS: &str = "1,2,3,4,5,6,8,16,32,64,0";
/// Wall time the default sweep aims at, seconds.
const DEFAULT_SECONDS: f64 = 60.0;
/// Wall time `--quick` aims at, seconds (under 10 with calibration and pool start-up).
const QUICK_SECONDS: f64 = 5.0;

/// Options of `throttle sweep`.
#[derive(Debug, Args)]
#[command(
    about = "THE MAIN JOB: seed 000's batch (N = 1,2,3,4,5,6,8,16,32,64,0) in two modes, repeated",
    long_about = "THE MAIN JOB. Seed 000's batch file on this machine: 64 CPU-bound tasks (task i \
sums 1 + i·chunk ..= (i+1)·chunk) run with at most N at once, for each level N (0 = no limit), \
repeated --reps times with the order of levels and modes interleaved.\n\n\
Both modes have one thread per task (64) and differ only in the gate: `threads` creates 64 OS \
threads per run, gated by a throttle::Throttle semaphore (the seed's program); `pool` runs the \
tasks on one persistent throttle::Pool of 64 threads with set_concurrency(N) (0 = all 64).\n\n\
Per level and mode: wall median (min–max), user and system CPU, CPU/wall, voluntary and \
involuntary context switches, run-queue wait (schedstat: summed over the pool's threads, or read \
by each task thread just before it exits in threads mode), speedup over level 1 and efficiency = speedup / \
min(N, usable CPUs). The best level is marked, and a few sentences say what the numbers mean.\n\n\
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
        if rep > 0 && !fits_before(args.deadline, rep_started, longest_rep) {
            // Out of budget (a busy machine runs slower than calibrated): keep whole
            // repetitions only, so every level has the same number of samples, and start one
            // only when it is expected to end by the deadline — a repetition that starts just
            // before the deadline would overrun it by its whole length (`throttle report
            // --budget` ran ~5 % over on a loaded machine while only the start was checked).
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
    report.findings = findings(&section, &report.machine, work.tasks);
    report.findings.extend(disturbance(&section, outside, cpus));
    if let Some(rec) = recommend_under(&section, cpus, outside) {
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

/// Two to four plain sentences derived from the numbers.
fn findings(section: &Section, machine: &Machine, tasks: usize) -> Vec<String> {
    let mut out = Vec::new();
    let topo = &machine.topology;
    let cpus = machine.usable_cpus();
    let Some(best) = section.rows.iter().find(|r| r.best) else {
        return out;
    };
    let spread = |r: &Row| (r.wall.max - r.wall.min) / r.wall.median * 100.0;
    let speed = best.speedup.map_or(String::new(), |s| {
        format!(", {s:.2}× faster than one at a time")
    });
    out.push(format!(
        "It peaks at {} concurrent tasks ({} mode: {}{}) on a machine with {} usable CPUs \
         ({} physical cores, {} logical).",
        best.label,
        best.series,
        units::secs(best.wall.median),
        speed,
        cpus,
        topo.physical_cores,
        topo.logical_cpus
    ));
    // A peak inside the noise is a plateau: say which levels cannot be told apart from it.
    let tolerance = Tolerance::of(section, best);
    let plateau: Vec<&str> = section
        .rows
        .iter()
        .filter(|r| r.series == best.series)
        .filter(|r| tolerance.admits(r, best))
        .map(|r| r.label.as_str())
        .collect();
    if plateau.len() > 1 {
        out.push(format!(
            "In {} mode the levels {} are all within {:.1} % of that ({}), so read the peak as a \
             plateau, not a single best level.",
            best.series,
            plateau.join(", "),
            tolerance.fraction * 100.0,
            tolerance.why
        ));
    }

    // What oversubscription costs: the unlimited level against the best level of the same mode.
    let mut costs = Vec::new();
    for mode in series_names(section) {
        let rows: Vec<&Row> = section.rows.iter().filter(|r| r.series == mode).collect();
        let Some(mode_best) = rows
            .iter()
            .min_by(|a, b| a.wall.median.total_cmp(&b.wall.median))
        else {
            continue;
        };
        let crowded = rows
            .iter()
            .find(|r| r.level == 0)
            .or_else(|| rows.iter().max_by_key(|r| r.level));
        let Some(crowded) = crowded else { continue };
        if crowded.level == mode_best.level
            || (crowded.level as usize) <= cpus && crowded.level != 0
        {
            continue;
        }
        let cost = (crowded.wall.median / mode_best.wall.median - 1.0) * 100.0;
        let noise = spread(crowded).max(spread(mode_best));
        let verdict = if cost.abs() <= noise {
            "within the run-to-run spread".to_string()
        } else {
            "beyond the run-to-run spread".to_string()
        };
        costs.push(format!(
            "in {mode} mode {} takes {cost:+.1} % against its best level {} ({verdict} of {noise:.1} %; \
             {} involuntary switches per run against {})",
            if crowded.level == 0 {
                format!("letting all {tasks} tasks contend")
            } else {
                format!("level {}", crowded.label)
            },
            mode_best.label,
            units::count(crowded.involuntary_switches),
            units::count(mode_best.involuntary_switches)
        ));
    }
    if !costs.is_empty() {
        out.push(format!("Oversubscription: {}.", costs.join("; ")));
    }

    // The seed's claim: slower from M to 2M, flat beyond.
    let m = cpus as u64;
    for mode in series_names(section) {
        if let (Some(at_m), Some(at_2m)) = (section.row(&mode, m), section.row(&mode, 2 * m)) {
            let change = (at_2m.wall.median / at_m.wall.median - 1.0) * 100.0;
            out.push(format!(
                "From {m} to {} concurrent tasks ({mode} mode) the wall time changes by {change:+.1} % \
                 (the seed predicted a loss between M and 2M cores).",
                2 * m
            ));
            break;
        }
    }

    // The semaphore against the pool, level by level.
    let mut ratios = Vec::new();
    for row in section.rows.iter().filter(|r| r.series == "threads") {
        if let Some(p) = section.row("pool", row.level) {
            ratios.push(row.wall.median / p.wall.median);
        }
    }
    if let Some(summary) = throttle_probe::Summary::of(&ratios) {
        let median = (summary.median - 1.0) * 100.0;
        let faster = if median >= 0.0 { "slower" } else { "faster" };
        out.push(format!(
            "The semaphore with fresh threads is {:.1} % {faster} than the pool's limit (median over \
             {} levels; range {:+.1} % to {:+.1} %).",
            median.abs(),
            summary.count,
            (summary.min - 1.0) * 100.0,
            (summary.max - 1.0) * 100.0
        ));
    }
    out
}

/// The concurrency a sweep recommends and the sentence that says so.
#[derive(Debug, Clone)]
pub struct Recommendation {
    /// The level to use.
    pub level: u64,
    /// The series it was measured in.
    pub series: String,
    /// One plain sentence with the numbers behind it.
    pub sentence: String,
}

/// Repetitions from which a row's own min–max spread is taken as the run-to-run noise: one
/// repetition has no spread at all, and two give a single difference.
const MIN_REPS_FOR_SPREAD: usize = 3;

/// The least difference a sweep trusts when its repetitions are too few to measure the noise:
/// 5 %, the deviation below which `scan` calls a run noise rather than an outlier
/// (`scan::stats::MIN_OUTLIER_DEVIATION`). With the 1 % floor that a measured spread gets,
/// `throttle report --quick`, left one repetition by its budget, recommended 8 tasks at once on
/// a 2-CPU machine because of noise alone. To see this host's noise, run `throttle sweep --reps 1`
/// a few times and compare the rows at and above the CPU count, which the work makes equal.
const FEW_REPS_TOLERANCE: f64 = 0.05;

/// How much slower than the fastest row a level may be and still count as just as fast, and
/// where that margin comes from.
#[derive(Debug, Clone)]
struct Tolerance {
    /// A fraction of the fastest wall time.
    fraction: f64,
    /// Where `fraction` comes from, as a phrase that can stand in parentheses.
    why: String,
}

impl Tolerance {
    /// The tolerance for rows of `best`'s series. With [`MIN_REPS_FOR_SPREAD`] repetitions or
    /// more it is the fastest row's min–max spread (at least 1 %). With fewer, that spread is
    /// not a measurement of the noise (one repetition has none), so it is at least
    /// [`FEW_REPS_TOLERANCE`].
    ///
    /// (The range of the levels that keep every CPU busy, equal work and so equal times on a
    /// quiet machine, is no such margin for one repetition: it contains the fastest row, so it
    /// always admits the slowest of them.)
    fn of(section: &Section, best: &Row) -> Tolerance {
        let reps = section
            .rows
            .iter()
            .filter(|r| r.series == best.series)
            .map(|r| r.wall.count)
            .min()
            .unwrap_or(0);
        let spread = (best.wall.max - best.wall.min) / best.wall.median;
        if reps >= MIN_REPS_FOR_SPREAD {
            return if spread >= 0.01 {
                Tolerance {
                    fraction: spread,
                    why: "the run-to-run spread".to_string(),
                }
            } else {
                Tolerance {
                    fraction: 0.01,
                    why: "the run-to-run spread, taken as at least 1 %".to_string(),
                }
            };
        }
        let runs = if reps == 1 {
            "1 repetition".to_string()
        } else {
            format!("{reps} repetitions")
        };
        if spread > FEW_REPS_TOLERANCE {
            Tolerance {
                fraction: spread,
                why: format!("the spread of {runs}"),
            }
        } else {
            Tolerance {
                fraction: FEW_REPS_TOLERANCE,
                why: format!(
                    "the least difference trusted from {runs}: fewer than \
                     {MIN_REPS_FOR_SPREAD} cannot measure the run-to-run spread"
                ),
            }
        }
    }

    /// True if `row` is within the tolerance of `best`.
    fn admits(&self, row: &Row, best: &Row) -> bool {
        row.wall.median <= best.wall.median * (1.0 + self.fraction)
    }
}

/// The smallest level whose wall time is within the [`Tolerance`] of the fastest row of the
/// same series: more concurrency than that buys nothing measurable. The usable CPU count is
/// preferred whenever it is within the tolerance, so a level away from it must win by more than
/// the tolerance: a noisy baseline or a single lucky run cannot talk the recommendation into 8
/// or 32 threads on 2 CPUs.
pub fn recommend(section: &Section, cpus: usize) -> Option<Recommendation> {
    let best = section.rows.iter().find(|r| r.best)?;
    let tolerance = Tolerance::of(section, best);
    let mut plateau: Vec<&Row> = section
        .rows
        .iter()
        .filter(|r| r.series == best.series && r.level != 0)
        .filter(|r| tolerance.admits(r, best))
        .collect();
    plateau.sort_by_key(|r| r.level);
    let pick = plateau
        .iter()
        .find(|r| r.level == cpus as u64)
        .or_else(|| plateau.first())
        .copied()
        .unwrap_or(best);
    let why = if pick.level == best.level {
        "the fastest level measured".to_string()
    } else {
        format!(
            "within {:.1} % of the fastest ({} at {}), {}",
            tolerance.fraction * 100.0,
            units::secs(best.wall.median),
            best.label,
            tolerance.why
        )
    };
    let cores = if pick.level == cpus as u64 {
        format!(" = the {cpus} usable CPUs")
    } else {
        format!(" (this machine has {cpus} usable CPUs)")
    };
    // Level 0 is "no limit": say what it means rather than "run 0 tasks at once".
    let how = if pick.level == 0 {
        "run with no limit (every task at once)".to_string()
    } else {
        format!("run {} tasks at once", pick.label)
    };
    Some(Recommendation {
        level: pick.level,
        series: pick.series.clone(),
        sentence: format!(
            "Recommendation: {how}{cores}; in {} mode that took {}, {why}.",
            pick.series,
            units::secs(pick.wall.median)
        ),
    })
}

/// Why the sweep's times cannot overrule the CPU count, if they cannot: other programs kept
/// CPUs busy during it, or a speedup above what the CPUs can give shows that its one-at-a-time
/// baseline was slowed down.
fn disturbed_because(section: &Section, cpus: usize, outside: Option<f64>) -> Option<String> {
    if let Some(x) = outside.filter(|&x| crate::load::is_disturbing(x, cpus)) {
        return Some(format!("other programs kept {x:.2} CPUs busy during it"));
    }
    let over = section
        .rows
        .iter()
        .filter(|r| r.efficiency.is_some_and(|e| e > 1.05))
        .max_by(|a, b| {
            a.speedup
                .unwrap_or(0.0)
                .total_cmp(&b.speedup.unwrap_or(0.0))
        })?;
    Some(format!(
        "its {:.2}× speedup at {} ({} mode) is more than {cpus} CPUs can give: its \
         one-at-a-time baseline was slowed down",
        over.speedup.unwrap_or(0.0),
        over.label,
        over.series
    ))
}

/// [`recommend`], unless other programs disturbed the sweep (see [`crate::load`]): then a
/// measured best away from the CPU count cannot overrule it, and the sentence says both.
pub fn recommend_under(
    section: &Section,
    cpus: usize,
    outside: Option<f64>,
) -> Option<Recommendation> {
    let rec = recommend(section, cpus)?;
    let disturbed = disturbed_because(section, cpus, outside);
    let best = section.rows.iter().find(|r| r.best);
    match (disturbed, section.row(&rec.series, cpus as u64), best) {
        (Some(why), Some(at_cpus), Some(best)) if rec.level != cpus as u64 => {
            Some(Recommendation {
                level: cpus as u64,
                series: rec.series.clone(),
                sentence: format!(
                    "Recommendation: run {cpus} tasks at once = the {cpus} usable CPUs. The sweep \
                     was fastest at {} ({} mode: {}; {} at {cpus}), but {why}, so that \
                     measurement cannot overrule the CPU count.",
                    best.label,
                    best.series,
                    units::secs(best.wall.median),
                    units::secs(at_cpus.wall.median),
                ),
            })
        }
        _ => Some(rec),
    }
}

/// Warnings when the numbers cannot be taken at face value: other programs kept CPUs busy, or
/// an efficiency above 100 % shows that the level-1 baseline was slowed down.
fn disturbance(section: &Section, outside: Option<f64>, cpus: usize) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(x) = outside.filter(|&x| crate::load::is_disturbing(x, cpus)) {
        out.push(format!(
            "Warning: other programs kept {x:.2} of the {cpus} CPUs busy on average during the \
             sweep (/proc/stat minus this process): the times include their load, so rerun on an \
             idle machine before trusting small differences."
        ));
    }
    let over = section
        .rows
        .iter()
        .filter(|r| r.efficiency.is_some_and(|e| e > 1.05))
        .max_by(|a, b| {
            a.efficiency
                .unwrap_or(0.0)
                .total_cmp(&b.efficiency.unwrap_or(0.0))
        });
    if let Some(row) = over {
        out.push(format!(
            "Warning: {} mode at {} shows an efficiency of {:.0} %, more than the {} CPUs can give: \
             its level-1 baseline ran slower than the work needs (disturbed by other load or a \
             slow start), so the speedups of that mode are overstated.",
            row.series,
            row.label,
            row.efficiency.unwrap_or(0.0) * 100.0,
            cpus
        ));
    }
    out
}

fn series_names(section: &Section) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for r in &section.rows {
        if !names.contains(&r.series) {
            names.push(r.series.clone());
        }
    }
    names
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// A pool-mode sweep of 64 tasks on 2 CPUs, one repetition per level (wall times in ms).
    fn section(walls_ms: &[(u64, u64)]) -> Section {
        let runs: Vec<(u64, Vec<u64>)> = walls_ms.iter().map(|&(l, ms)| (l, vec![ms])).collect();
        section_of_runs(&runs)
    }

    /// As [`section`], with every repetition's wall time per level.
    fn section_of_runs(runs_ms: &[(u64, Vec<u64>)]) -> Section {
        let mut s = Section::new("sweep", "t", "mode", "concurrent tasks", true);
        for (level, runs) in runs_ms {
            let samples: Vec<Sample> = runs
                .iter()
                .map(|&ms| Sample {
                    wall: Duration::from_millis(ms),
                    ..Sample::default()
                })
                .collect();
            // As the sweep does: "no limit" sits at the task count.
            let x = if *level == 0 { 64.0 } else { *level as f64 };
            let row =
                Row::from_samples("pool", *level, &level.to_string(), x, &samples).expect("row");
            s.rows.push(row);
        }
        s.fill_speedup(1, |l| (l as f64).clamp(1.0, 2.0));
        s.mark_best();
        s
    }

    /// The seed's levels with one repetition each on 2 CPUs: level 1 at 2 s and every level
    /// that keeps both CPUs busy near 1 s, `at_cpus` at 2 and `at_8` at 8.
    fn one_rep_sweep(at_cpus: u64, at_8: u64) -> Section {
        section(&[
            (1, 2000),
            (2, at_cpus),
            (3, 1014),
            (4, 1016),
            (5, 1013),
            (6, 1012),
            (8, at_8),
            (16, 1011),
            (32, 1013),
            (64, 1020),
            (0, 1018),
        ])
    }

    #[test]
    fn one_repetition_of_noise_does_not_recommend_oversubscription() {
        // As in `report --quick` on 2 CPUs with one repetition: 8 tasks at once happened to be
        // 1.5 % faster than 2. One run cannot tell 1.5 % from noise, so the CPU count stands.
        let s = one_rep_sweep(1015, 1000);
        let rec = recommend(&s, 2).expect("rec");
        assert_eq!(rec.level, 2, "{}", rec.sentence);
        assert!(
            rec.sentence.contains("= the 2 usable CPUs")
                && rec.sentence.contains("within 5.0 % of the fastest")
                && rec
                    .sentence
                    .contains("from 1 repetition: fewer than 3 cannot measure"),
            "{}",
            rec.sentence
        );
        assert_eq!(recommend_under(&s, 2, Some(0.0)).expect("rec").level, 2);
        // The plateau finding gives the same margin and the same reason.
        let plateau = findings(&s, &Machine::example(2, 2), 64)
            .into_iter()
            .find(|f| f.contains("plateau"))
            .expect("a plateau finding");
        assert!(plateau.contains("within 5.0 %") && plateau.contains("1 repetition"));

        // A CPU count that is slower than every other busy level by more than that margin is
        // overruled, by the smallest level that is within it.
        let rec = recommend(&one_rep_sweep(1200, 1000), 2).expect("rec");
        assert_eq!(rec.level, 3, "{}", rec.sentence);
    }

    #[test]
    fn a_measured_spread_still_lets_a_clear_winner_away_from_the_cpus_win() {
        // Three repetitions each with a 1 % spread: level 8 beats 2 by 3 %, beyond the spread.
        let runs: Vec<(u64, Vec<u64>)> = [(1, 2000), (2, 1030), (8, 1000)]
            .into_iter()
            .map(|(l, ms)| (l, vec![ms, ms + 5, ms + 10]))
            .collect();
        let rec = recommend(&section_of_runs(&runs), 2).expect("rec");
        assert_eq!(rec.level, 8, "{}", rec.sentence);
        assert!(
            rec.sentence.contains("the fastest level measured"),
            "{}",
            rec.sentence
        );
    }

    #[test]
    fn a_disturbed_baseline_is_called_out_and_the_cpus_recommended() {
        // Level 1 ran slow (disturbed): 2 CPUs give 2.6× "speedup" at level 4.
        let s = section(&[(1, 2600), (2, 1010), (4, 1000), (32, 1005)]);
        let warnings = disturbance(&s, Some(0.05), 2);
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(warnings[0].contains("efficiency of 130 %"), "{warnings:?}");
        let rec = recommend(&s, 2).expect("a recommendation");
        assert_eq!(rec.level, 2, "{}", rec.sentence);
        assert!(
            rec.sentence.contains("= the 2 usable CPUs"),
            "{}",
            rec.sentence
        );
        // Outside load alone.
        let calm = section(&[(1, 2000), (2, 1000)]);
        assert!(disturbance(&calm, Some(1.5), 2)[0].contains("other programs kept 1.50"));
        assert!(disturbance(&calm, Some(0.05), 2).is_empty());
        // Under outside load a best level away from the CPU count does not win.
        let noisy = section(&[(1, 2000), (2, 1100), (32, 1000)]);
        assert_eq!(recommend(&noisy, 2).expect("rec").level, 32);
        let rec = recommend_under(&noisy, 2, Some(1.3)).expect("rec");
        assert_eq!(rec.level, 2, "{}", rec.sentence);
        assert!(
            rec.sentence.contains("other programs kept 1.30"),
            "{}",
            rec.sentence
        );
        assert_eq!(
            recommend_under(&noisy, 2, Some(0.0)).expect("rec").level,
            32
        );
    }

    #[test]
    fn no_limit_fastest_on_a_slowed_baseline_still_recommends_the_cpus() {
        // As in a CI run under load: "no limit" (level 0) fastest, 3.8× over level 1 on 2 CPUs.
        let s = section(&[(1, 780), (2, 400), (4, 390), (0, 205)]);
        let rec = recommend(&s, 2).expect("rec");
        assert_eq!(rec.level, 0);
        assert!(
            rec.sentence.contains("run with no limit") && !rec.sentence.contains("run 0"),
            "{}",
            rec.sentence
        );
        // No outside load was seen, but the speedup itself shows the baseline was slowed.
        let rec = recommend_under(&s, 2, Some(0.0)).expect("rec");
        assert_eq!(rec.level, 2, "{}", rec.sentence);
        assert!(
            rec.sentence.contains("more than 2 CPUs can give"),
            "{}",
            rec.sentence
        );
    }

    #[test]
    fn a_repetition_starts_only_if_it_ends_by_the_deadline() {
        let now = std::time::Instant::now();
        let rep = Duration::from_secs(4);
        assert!(fits_before(None, now, rep));
        assert!(fits_before(Some(now + Duration::from_secs(5)), now, rep));
        assert!(!fits_before(Some(now + Duration::from_secs(3)), now, rep));
    }
}
