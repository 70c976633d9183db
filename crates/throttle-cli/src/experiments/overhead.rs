//! `throttle overhead`: seed 001, what threads cost before they pay.
//!
//! (a) Trivial jobs: jobs per second against the number of threads, with a thread created per job
//!     (at most N alive at once) and with a `throttle::Pool` of N threads.
//! (b) Job length: jobs per second for jobs of 10 to 10^7 busy-loop iterations, run sequentially
//!     and with a thread per job at 1, `cores` and 32 × `cores` threads.
//! (c) The user:system CPU ratio of every configuration (a column of both tables).
//!
//! From (b) it reports the seed's two points: the job length from which threads beat the
//! sequential loop, and the one from which 32 × cores threads stop paying over `cores` threads.

use std::time::Duration;

use clap::Args;
use throttle::Pool;
use throttle_probe::Snapshot;
use throttle_workloads::kernels;

use crate::calibrate;
use crate::export::OutputArgs;
use crate::interrupt;
use crate::progress::Progress;
use crate::results::{Machine, Report, Row, Sample, Section};
use crate::view::units;

/// Options of `throttle overhead`.
#[derive(Debug, Args)]
#[command(
    about = "Seed 001: jobs/s vs threads for trivial jobs, throughput vs job length, user:system",
    long_about = "Seed 001 (thread-overhead explorer). (a) jobs per second against the number of \
threads for trivial jobs, creating a thread per job (at most N alive) and with a throttle::Pool of \
N threads; (b) jobs per second against job length, 10 to 10^7 busy-loop iterations, sequential \
and with a thread per job at 1, cores and 32 × cores threads; (c) the user:system CPU ratio of \
every configuration (the seed found threading pays above about 2). Reports the job length from \
which threads beat the sequential loop, and the one from which 32 × cores threads stop paying \
over cores threads."
)]
pub struct OverheadArgs {
    /// Repetitions of every configuration.
    #[arg(long, value_name = "R", allow_negative_numbers = true, value_parser = crate::numbers::whole::<u32>(1, 1000))]
    pub reps: Option<u32>,
    /// A short run (under 10 s): fewer jobs, lengths up to 10^6.
    #[arg(long)]
    pub quick: bool,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub output: OutputArgs,
}

/// Sizes of the experiment.
struct Plan {
    reps: usize,
    trivial_jobs: usize,
    thread_counts: Vec<usize>,
    lengths: Vec<u64>,
    /// Aimed-at sequential seconds per configuration of (b).
    seconds_per_config: f64,
    max_jobs: usize,
}

/// One way of running a batch of jobs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum System {
    Sequential,
    ThreadPerJob(usize),
    Pool(usize),
}

impl System {
    fn series(self, cores: usize) -> String {
        match self {
            System::Sequential => "sequential".into(),
            System::ThreadPerJob(n) if n == cores && n > 1 => format!("{n} threads (cores)"),
            System::ThreadPerJob(n) if n == 32 * cores => format!("{n} threads (32×cores)"),
            System::ThreadPerJob(n) => format!("{n} thread{}", if n == 1 { "" } else { "s" }),
            System::Pool(_) => "pool".into(),
        }
    }
}

/// Runs `throttle overhead`.
pub fn run(args: &OverheadArgs, machine: Machine) -> anyhow::Result<Report> {
    let cores = machine.usable_cpus();
    let plan = Plan {
        reps: args.reps.unwrap_or(3) as usize,
        trivial_jobs: if args.quick { 600 } else { 3000 },
        thread_counts: if args.quick {
            vec![1, 2, 4, 16, 64]
        } else {
            vec![1, 2, 4, 8, 16, 32, 64, 128]
        },
        lengths: if args.quick {
            (1..=6).map(|e| 10u64.pow(e)).collect()
        } else {
            (1..=7).map(|e| 10u64.pow(e)).collect()
        },
        seconds_per_config: if args.quick { 0.02 } else { 0.12 },
        max_jobs: if args.quick { 400 } else { 2000 },
    };
    let per_iteration = calibrate::spin_seconds_per_iteration();
    let mut report = Report::new("overhead", machine);
    report.param("reps", plan.reps);
    report.param("trivial_jobs", plan.trivial_jobs);
    report.param("thread_counts", &plan.thread_counts);
    report.param("lengths", &plan.lengths);
    report.param("spin_ns_per_iteration", per_iteration * 1e9);
    report.param("cores", cores);

    let pools: Vec<(usize, Pool)> = plan
        .thread_counts
        .iter()
        .map(|&n| Pool::new(n).map(|p| (n, p)))
        .collect::<Result<_, _>>()
        .map_err(|e| anyhow::anyhow!("creating a pool: {e}"))?;
    let mut length_systems = vec![System::Sequential, System::ThreadPerJob(1)];
    for n in [cores, 32 * cores] {
        if !length_systems.contains(&System::ThreadPerJob(n)) {
            length_systems.push(System::ThreadPerJob(n));
        }
    }
    let jobs_for = |length: u64| -> usize {
        let wanted = (plan.seconds_per_config / (length as f64 * per_iteration)).round() as usize;
        wanted.clamp(2 * 32 * cores, plan.max_jobs.max(2 * 32 * cores))
    };

    let steps =
        plan.reps * (plan.thread_counts.len() * 2 + plan.lengths.len() * length_systems.len());
    let progress = Progress::new(steps as u64, "overhead");
    let mut trivial = Section::new(
        "trivial_jobs",
        &format!(
            "(a) {} trivial jobs: jobs per second against threads",
            plan.trivial_jobs
        ),
        "system",
        "threads",
        true,
    )
    .metric_column("jobs_per_sec", "jobs/s")
    .metric_column("user_per_system", "user:sys");
    let mut lengths = Section::new(
        "job_length",
        "(b) jobs per second against job length (iterations per job)",
        "system",
        "iterations per job",
        false,
    )
    .metric_column("jobs", "jobs")
    .metric_column("jobs_per_sec", "jobs/s")
    .metric_column("user_per_system", "user:sys");

    let mut trivial_samples: Vec<Vec<Sample>> = vec![Vec::new(); plan.thread_counts.len() * 2];
    let mut length_samples: Vec<Vec<Sample>> =
        vec![Vec::new(); plan.lengths.len() * length_systems.len()];
    'reps: for rep in 0..plan.reps {
        for i in 0..plan.thread_counts.len() {
            let ti = (i + rep) % plan.thread_counts.len();
            for k in 0..2 {
                let which = (k + rep) % 2;
                if interrupt::requested() {
                    report.partial = true;
                    break 'reps;
                }
                let (n, pool) = (&pools[ti].0, &pools[ti].1);
                let system = if which == 0 {
                    System::ThreadPerJob(*n)
                } else {
                    System::Pool(*n)
                };
                progress.step(format!("(a) {} at {n}", system.series(cores)));
                trivial_samples[ti * 2 + which].push(measure(
                    system,
                    plan.trivial_jobs,
                    1,
                    Some(pool),
                ));
                progress.done_one();
            }
        }
        for i in 0..plan.lengths.len() {
            let li = (i + rep) % plan.lengths.len();
            let length = plan.lengths[li];
            for k in 0..length_systems.len() {
                let si = (k + rep) % length_systems.len();
                if interrupt::requested() {
                    report.partial = true;
                    break 'reps;
                }
                let system = length_systems[si];
                progress.step(format!("(b) {} at {length}", system.series(cores)));
                let jobs = jobs_for(length);
                length_samples[li * length_systems.len() + si]
                    .push(measure(system, jobs, length, None).metric("jobs", jobs as f64));
                progress.done_one();
            }
        }
    }
    progress.finish();

    for (ti, &n) in plan.thread_counts.iter().enumerate() {
        for (which, system) in [System::ThreadPerJob(n), System::Pool(n)]
            .iter()
            .enumerate()
        {
            let name = if which == 0 {
                "thread per job".to_string()
            } else {
                system.series(cores)
            };
            if let Some(row) = Row::from_samples(
                &name,
                n as u64,
                &n.to_string(),
                n as f64,
                &trivial_samples[ti * 2 + which],
            ) {
                trivial.rows.push(row);
            }
        }
    }
    for (li, &length) in plan.lengths.iter().enumerate() {
        for (si, system) in length_systems.iter().enumerate() {
            let s = &length_samples[li * length_systems.len() + si];
            if let Some(row) = Row::from_samples(
                &system.series(cores),
                length,
                &length.to_string(),
                length as f64,
                s,
            ) {
                lengths.rows.push(row);
            }
        }
    }
    let mut points = Points::default();
    report.findings = findings(&trivial, &lengths, &length_systems, cores, &mut points);
    // The seed's points A and B, for the figures to mark (absent when not found).
    if let Some(a) = points.a {
        report.param("point_a_iterations", a);
    }
    if let Some(b) = points.b {
        report.param("point_b_iterations", b);
    }
    report.sections.push(trivial);
    report.sections.push(lengths);
    Ok(report)
}

/// Runs `jobs` jobs of `length` iterations on `system` and measures the whole batch.
fn measure(system: System, jobs: usize, length: u64, pool: Option<&Pool>) -> Sample {
    let before = Snapshot::now();
    match (system, pool) {
        (System::Sequential, _) => {
            for _ in 0..jobs {
                std::hint::black_box(kernels::spin(length));
            }
        }
        (System::ThreadPerJob(n), _) => {
            let mut done = 0;
            while done < jobs {
                let batch = n.min(jobs - done);
                std::thread::scope(|s| {
                    for _ in 0..batch {
                        s.spawn(|| std::hint::black_box(kernels::spin(length)));
                    }
                });
                done += batch;
            }
        }
        (System::Pool(_), Some(pool)) => pool.for_range_grain(0..jobs, 1, |_| {
            std::hint::black_box(kernels::spin(length));
        }),
        (System::Pool(_), None) => {
            // A pool without a pool cannot be measured; the plan never asks for it.
        }
    }
    let span = before.elapsed();
    let mut sample = Sample::from_span(&span);
    if matches!(system, System::ThreadPerJob(_)) {
        sample.run_queue_wait = Some(Err(
            "threads exit before the span ends; the kernel drops an exited thread's schedstat"
                .into(),
        ));
    }
    let wall = span.wall.max(Duration::from_nanos(1)).as_secs_f64();
    sample = sample.metric("jobs_per_sec", jobs as f64 / wall);
    if let Some(ratio) = user_per_system(span.user, span.system) {
        sample = sample.metric("user_per_system", ratio);
    }
    sample
}

/// The user:system ratio of a batch, when its times can give one. The kernel splits CPU time
/// between user and system by whole timer ticks, so a batch under
/// [`CPU_SPLIT_RESOLUTION`](crate::results::CPU_SPLIT_RESOLUTION) of CPU (a pool's 600 trivial
/// jobs take ~1 ms) has a split drawn from one or two ticks, and a 0 on one side would read as
/// "no user work at all": both give no ratio rather than a number.
fn user_per_system(user: Duration, system: Duration) -> Option<f64> {
    let cpu = (user + system).as_secs_f64();
    (user > Duration::ZERO
        && system > Duration::ZERO
        && cpu >= crate::results::CPU_SPLIT_RESOLUTION)
        .then(|| user.as_secs_f64() / system.as_secs_f64())
}

/// The seed's points A and B, and what the trivial jobs say.
fn findings(
    trivial: &Section,
    lengths: &Section,
    systems: &[System],
    cores: usize,
    points: &mut Points,
) -> Vec<String> {
    let mut out = Vec::new();
    let rate = |r: &Row| r.metrics.get("jobs_per_sec").copied().unwrap_or(0.0);
    let best_of = |series: &str| {
        trivial
            .rows
            .iter()
            .filter(|r| r.series == series)
            .max_by(|a, b| rate(a).total_cmp(&rate(b)))
    };
    if let (Some(t), Some(p)) = (best_of("thread per job"), best_of("pool")) {
        out.push(format!(
            "Trivial jobs: a thread per job peaks at {} jobs/s with {} thread{}; the pool runs {} \
             jobs/s at best ({} thread{}), {:.0}× more.",
            units::count(rate(t)),
            t.label,
            if t.level == 1 { "" } else { "s" },
            units::count(rate(p)),
            p.label,
            if p.level == 1 { "" } else { "s" },
            rate(p) / rate(t).max(1e-9)
        ));
    }
    let series = |s: System| s.series(cores);
    let seq = series(System::Sequential);
    let at_cores = series(System::ThreadPerJob(cores));
    let many = series(System::ThreadPerJob(32 * cores));
    let mut levels: Vec<u64> = lengths.rows.iter().map(|r| r.level).collect();
    levels.dedup();
    // Time per job of every repetition, the samples the one rule (`crate::verdict`) compares.
    let per_job = |r: &Row| -> Vec<f64> {
        r.samples
            .iter()
            .filter_map(|s| s.metrics.get("jobs_per_sec").copied())
            .filter(|&x| x > 0.0)
            .map(|x| 1.0 / x)
            .collect()
    };
    let verdict_at = |a: &str, b: &str, level: u64| -> Option<crate::verdict::Verdict> {
        let (ra, rb) = (lengths.row(a, level)?, lengths.row(b, level)?);
        Some(crate::verdict::compare(&per_job(ra), &per_job(rb)).verdict)
    };
    use crate::verdict::Verdict::{Faster, Slower};
    // Point A: the shortest length from which threads at `cores` are faster than the loop by
    // the test, and never slower by it at a longer length.
    let point_a = levels
        .iter()
        .position(|&l| verdict_at(&at_cores, &seq, l) == Some(Faster))
        .filter(|&i| {
            levels[i..]
                .iter()
                .all(|&l| verdict_at(&at_cores, &seq, l) != Some(Slower))
        })
        .map(|i| levels[i]);
    points.a = point_a;
    match point_a {
        Some(l) => {
            let ratio = lengths
                .row(&at_cores, l)
                .and_then(|r| r.metrics.get("user_per_system").copied());
            out.push(format!(
                "Point A: from {} iterations per job (about {} of work), a thread per job on {cores} \
                 threads is faster than the sequential loop by the test (Mann–Whitney p ≤ 0.10 \
                 over at least 3 runs of each){}.",
                units::count(l as f64),
                units::secs(lengths.row(&seq, l).map_or(0.0, |r| r.wall.median / job_count(r))),
                ratio.map_or(String::new(), |r| format!("; its user:system ratio there is {r:.1}"))
            ));
        }
        None => out.push(format!(
            "Point A: within the measured lengths, a thread per job on {cores} threads is never \
             faster than the sequential loop by the test (Mann–Whitney p ≤ 0.10 over at least 3 \
             runs of each)."
        )),
    }
    if systems.contains(&System::ThreadPerJob(32 * cores)) && cores > 0 {
        let point_b = levels
            .iter()
            .position(|&l| {
                levels
                    .iter()
                    .skip_while(|&&m| m < l)
                    .all(|&m| verdict_at(&many, &at_cores, m) != Some(Faster))
            })
            .map(|i| levels[i]);
        points.b = point_b;
        if let Some(l) = point_b {
            let first = levels.first().copied().unwrap_or(0);
            out.push(if l == first {
                format!(
                    "Point B: {} threads are never faster than {cores} threads by the test here, at \
                     any job length.",
                    32 * cores
                )
            } else {
                format!(
                    "Point B: from {} iterations per job, {} threads are no longer faster than \
                     {cores} threads by the test.",
                    units::count(l as f64),
                    32 * cores
                )
            });
        }
    }
    out
}

/// The seed's points on the job-length axis: A, from which a thread per job beats the
/// sequential loop; B, from which 32 × cores threads stop paying over cores threads.
#[derive(Debug, Default, Clone, Copy)]
struct Points {
    a: Option<u64>,
    b: Option<u64>,
}

fn job_count(row: &Row) -> f64 {
    row.metrics.get("jobs").copied().unwrap_or(1.0).max(1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_split_finer_than_the_ticks_gives_no_ratio() {
        let ms = Duration::from_millis;
        let us = Duration::from_micros;
        // A pool's trivial batch: 122 µs user, 585 µs system is not a measured split.
        assert_eq!(user_per_system(us(122), us(585)), None);
        // 0 on one side, however long the batch, is no ratio either.
        assert_eq!(user_per_system(Duration::ZERO, ms(17)), None);
        assert_eq!(user_per_system(ms(40), Duration::ZERO), None);
        // From 10 ms of CPU on, the split counts.
        assert_eq!(user_per_system(ms(30), ms(10)), Some(3.0));
        assert_eq!(user_per_system(ms(5), ms(5)), Some(1.0));
    }
}
