//! `throttle report`: the main job. Every seed's experiment on this machine within a time
//! budget, one self-contained HTML page of figures and findings, and a recommendation whose
//! every sentence quotes a number shown on the page.
//!
//! The pipeline: check the outputs → run sweep (seed 000), overhead (001), frames (002, 003)
//! and procs (004), each sized to its share of the budget → derive the recommendation from
//! their results → print the summary → write the page (`--html`) and the JSON (`--json`).
//! Ctrl-C or SIGTERM stops after the current measurement; what was measured is still written,
//! marked partial.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use clap::Args;

use crate::error::Interrupted;
use crate::experiments::frames::{self, FramesArgs};
use crate::experiments::overhead::{self, OverheadArgs};
use crate::experiments::procs::{self, ProcsArgs};
use crate::experiments::sum::Mode;
use crate::experiments::sweep::{self, SweepArgs};
use crate::export::html::{self, SeedSection};
use crate::export::{check_output, svg, write_output};
use crate::interrupt;
use crate::load::LoadMark;
use crate::results::{Machine, Report, Row, Section};
use crate::view::units;

/// The default budget, seconds: about 3 minutes on 2 cores.
const DEFAULT_BUDGET: f64 = 180.0;
/// The budget of `--quick`, seconds.
const QUICK_BUDGET: f64 = 30.0;
/// Below this budget the overhead, frames and procs experiments run their `--quick` sizes
/// (their full sizes take 10–50 s each on 2 cores).
const FULL_SIZE_BUDGET: f64 = 150.0;
/// Seconds the sweep spends outside its measured batches (calibration, starting 64 threads),
/// as measured on 2 cores; the sweep runs last and gets what is left of the budget minus this.
const SWEEP_SETUP: f64 = 6.0;
/// The sweep's calibration aims at its target from a short timed run; on a busy machine it
/// overshoots by up to a third, so it aims at this fraction of what is left.
const SWEEP_AIM: f64 = 0.75;
/// The shortest sweep worth running, seconds: 11 levels × 2 modes × 3 repetitions need a few
/// batches of at least ~50 ms each.
const MIN_SWEEP: f64 = 5.0;

/// Version of the JSON layout of `throttle report --json` (docs/json.md).
pub const REPORT_SCHEMA_VERSION: u32 = 1;

/// Options of `throttle report`.
#[derive(Debug, Args)]
#[command(
    about = "The main job: every experiment on this machine, one HTML page and a recommendation",
    long_about = "The main job. Runs every experiment on this machine within a time budget \
(3 minutes of measuring by default, 30 s with --quick; a first build adds its own time): the concurrency sweep (seed 000), thread overhead \
(001), frame schedulers (002, 003) and concurrent processes (004). Prints a short summary and \
writes one self-contained HTML page (--html, default throttle-report.html): the recommendation \
on top (the concurrency to use, what oversubscription and a thread per job cost here, each \
with its number), the machine, then one section per seed with its figures, findings and the \
measured table. --json saves everything as JSON (`-` for standard output).\n\n\
Ctrl-C or SIGTERM stops after the current measurement and still writes what was measured, \
marked partial (exit status 130 or 143). The machine should be otherwise idle: other load is \
measured and reported."
)]
pub struct ReportArgs {
    /// A short report (about 30 s): smaller experiments, fewer repetitions.
    #[arg(long)]
    pub quick: bool,
    /// The time budget in seconds (default 180, 30 with --quick).
    #[arg(long, value_name = "SECONDS", allow_negative_numbers = true,
          value_parser = crate::numbers::seconds(crate::numbers::MAX_SECONDS))]
    pub budget: Option<f64>,
    /// Where to write the HTML page.
    #[arg(long, value_name = "FILE", default_value = "throttle-report.html")]
    pub html: PathBuf,
    /// Also write everything as JSON to FILE (`-` for standard output; the summary then goes to
    /// standard error). Layout: docs/json.md.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
}

/// What `report --json` writes.
#[derive(Debug, serde::Serialize)]
struct Document<'a> {
    schema_version: u32,
    tool: String,
    experiment: &'static str,
    command: Vec<String>,
    partial: bool,
    budget_seconds: f64,
    elapsed_seconds: f64,
    outside_load_cpus: Option<f64>,
    machine: &'a Machine,
    recommendation: &'a [String],
    experiments: &'a [Report],
}

/// One experiment of the report.
enum Step {
    Sweep,
    Overhead,
    Frames,
    Procs,
}

impl Step {
    fn name(&self) -> &'static str {
        match self {
            Step::Sweep => "seed 000: concurrency sweep",
            Step::Overhead => "seed 001: thread overhead",
            Step::Frames => "seeds 002/003: frame schedulers",
            Step::Procs => "seed 004: concurrent processes",
        }
    }

    /// Runs the step; the sweep gets `remaining` seconds of the budget, the others their full
    /// or quick size by the whole `budget`.
    fn run(&self, budget: f64, remaining: f64, machine: Machine) -> anyhow::Result<Report> {
        let full = budget >= FULL_SIZE_BUDGET;
        match self {
            Step::Sweep => sweep::run(
                &SweepArgs {
                    levels: None,
                    modes: vec![Mode::Threads, Mode::Pool],
                    reps: None,
                    quick: !full,
                    // The sweep's calibration and pool start-up take a few seconds of their own.
                    seconds: Some(((remaining - SWEEP_SETUP) * SWEEP_AIM).max(MIN_SWEEP)),
                    tasks: 64,
                    chunk: None,
                    repeat: None,
                    deadline: Some(
                        Instant::now() + Duration::from_secs_f64(remaining.max(MIN_SWEEP)),
                    ),
                    output: Default::default(),
                },
                machine,
            ),
            Step::Overhead => overhead::run(
                &OverheadArgs {
                    reps: None,
                    quick: !full,
                    output: Default::default(),
                },
                machine,
            ),
            Step::Frames => frames::run(
                &FramesArgs {
                    threads: None,
                    meshes: 2000,
                    vertices: 200,
                    frames: None,
                    reps: None,
                    quick: !full,
                    trace: None,
                    timeline: None,
                    trace_frames: None,
                    output: Default::default(),
                },
                machine,
            ),
            Step::Procs => procs::run(
                &ProcsArgs {
                    max: None,
                    ms: None,
                    reps: None,
                    quick: !full,
                    budget: false,
                    command: Vec::new(),
                    output: Default::default(),
                },
                machine,
            ),
        }
    }
}

/// Runs `throttle report`.
pub fn run(args: &ReportArgs) -> anyhow::Result<()> {
    check_output("--html", &args.html)?;
    if crate::export::is_stdout(&args.html) {
        return Err(crate::error::usage(
            "--html",
            "-",
            "the page goes to a file; use --json - for standard output",
        ));
    }
    if let Some(p) = &args.json {
        check_output("--json", p)?;
    }
    let json_on_stdout = args.json.as_deref().is_some_and(crate::export::is_stdout);
    let say = |text: &str| {
        if json_on_stdout {
            eprintln!("{text}");
        } else {
            println!("{text}");
        }
    };
    let budget = args.budget.unwrap_or(if args.quick {
        QUICK_BUDGET
    } else {
        DEFAULT_BUDGET
    });
    let machine = Machine::detect();
    let started = Instant::now();
    let load = LoadMark::now();
    // The sweep runs last so that it can take whatever the others left of the budget.
    let steps = [Step::Overhead, Step::Frames, Step::Procs, Step::Sweep];
    let mut reports: Vec<Report> = Vec::new();
    let mut partial = false;
    let mut timelines: Vec<String> = Vec::new();
    for (i, step) in steps.iter().enumerate() {
        if interrupt::requested() {
            partial = true;
            break;
        }
        eprintln!(
            "[{}/{}] {} ({} elapsed of a {} budget)",
            i + 1,
            steps.len(),
            step.name(),
            units::secs(started.elapsed().as_secs_f64()),
            units::secs(budget)
        );
        let remaining = budget - started.elapsed().as_secs_f64();
        let report = step.run(budget, remaining, machine.clone())?;
        let stop = report.partial;
        if matches!(step, Step::Frames) && !stop {
            timelines = frames_timelines(&machine)?;
        }
        reports.push(report);
        if stop {
            partial = true;
            break;
        }
    }
    let elapsed = started.elapsed().as_secs_f64();
    let outside = load.outside_cpus();
    let find = |name: &str| reports.iter().find(|r| r.experiment == name);
    let recommendation = recommend(
        &machine,
        find("sweep"),
        find("overhead"),
        find("frames"),
        find("procs"),
        outside,
    );
    let header = format!(
        "Measured in {} (budget {}) on {} usable CPUs ({} physical cores, {} logical), Linux {}.",
        units::secs(elapsed),
        units::secs(budget),
        machine.usable_cpus(),
        machine.topology.physical_cores,
        machine.topology.logical_cpus,
        machine.kernel
    );
    let sections = seed_sections(&reports, timelines);
    let page = html::page(
        &machine,
        &recommendation,
        &sections,
        partial,
        &header,
        outside,
    );
    write_output(&args.html, &page)?;
    if let Some(path) = &args.json {
        let doc = Document {
            schema_version: REPORT_SCHEMA_VERSION,
            tool: format!("throttle {}", env!("CARGO_PKG_VERSION")),
            experiment: "report",
            command: std::env::args().collect(),
            partial,
            budget_seconds: budget,
            elapsed_seconds: elapsed,
            outside_load_cpus: outside,
            machine: &machine,
            recommendation: &recommendation,
            experiments: &reports,
        };
        write_output(path, &crate::export::json::to_string(&doc)?)?;
    }

    if partial {
        say("PARTIAL RESULTS: interrupted before every experiment finished.");
    }
    say(&format!("throttle report: {header}"));
    say("Recommendation:");
    for r in &recommendation {
        say(&format!("  - {r}"));
    }
    for s in &sections {
        let first = s.findings.iter().find(|f| !f.starts_with("Recommendation"));
        if let Some(first) = first {
            say(&format!("{}: {first}", s.title));
        }
    }
    say(&format!(
        "The page with every figure and table: {}{}",
        args.html.display(),
        match &args.json {
            Some(p) if !json_on_stdout => format!(" (JSON: {})", p.display()),
            _ => String::new(),
        }
    ));
    if partial {
        return Err(Interrupted.into());
    }
    Ok(())
}

/// `1 thread`, `4 threads`.
fn threads(label: &str) -> String {
    format!("{label} thread{}", if label == "1" { "" } else { "s" })
}

fn section<'a>(report: Option<&'a Report>, id: &str) -> Option<&'a Section> {
    report?
        .sections
        .iter()
        .find(|s| s.id == id && !s.rows.is_empty())
}

fn metric(r: &Row, key: &str) -> Option<f64> {
    r.metrics.get(key).copied().filter(|v| v.is_finite())
}

/// The recommendation: what concurrency to use, and what oversubscription and a thread per job
/// cost here. Every number is one the page shows (a table cell or a finding).
fn recommend(
    machine: &Machine,
    sweep_report: Option<&Report>,
    overhead_report: Option<&Report>,
    frames_report: Option<&Report>,
    procs_report: Option<&Report>,
    outside: Option<f64>,
) -> Vec<String> {
    let cpus = machine.usable_cpus();
    let mut out = Vec::new();
    let sweep_section = section(sweep_report, "sweep");
    // The load measured during the sweep itself (its seed 000 warning shows the same number);
    // the whole run's load only if the sweep did not record one.
    let sweep_outside = sweep_report
        .and_then(|r| r.parameters.get("outside_load_cpus"))
        .and_then(serde_json::Value::as_f64)
        .or(outside);
    if let Some((rec, section)) =
        sweep_section.and_then(|s| Some((sweep::recommend_under(s, cpus, sweep_outside)?, s)))
    {
        // An interrupted sweep measured only some levels: the recommendation holds over those.
        let unmeasured: Vec<String> = sweep_report
            .and_then(|r| r.parameters.get("levels"))
            .and_then(serde_json::Value::as_array)
            .map(|levels| {
                levels
                    .iter()
                    .filter_map(serde_json::Value::as_u64)
                    .filter(|&l| section.row(&rec.series, l).is_none())
                    .map(|l| crate::experiments::sum::level_label(l as usize))
                    .collect()
            })
            .unwrap_or_default();
        if unmeasured.is_empty() {
            out.push(rec.sentence.clone());
        } else {
            out.push(format!(
                "{} (Over the levels measured only: the run stopped before {}.)",
                rec.sentence,
                unmeasured.join(", ")
            ));
        }
        // Oversubscription: all 64 tasks at once against the recommendation, same mode: the
        // clause the sweep's own findings print, so the summary and the section agree.
        if let Some(clause) = sweep::oversubscription(section, &rec.series, rec.level, 64) {
            out.push(format!("Oversubscription, concurrency sweep: {clause}."));
        }
    } else {
        out.push(format!(
            "Recommendation: run as many CPU-bound tasks at once as there are usable CPUs ({cpus}); the sweep did not finish, so this is the probe's count, not a measurement."
        ));
    }
    // Oversubscription in processes (seed 004): CPU time per process at the most copies
    // against one copy.
    if let Some(procs) = section(procs_report, "procs") {
        let one = procs.rows.iter().find(|r| r.level == 1);
        let most = procs.rows.iter().max_by_key(|r| r.level);
        if let (Some(one), Some(most)) = (one, most) {
            if most.level as usize > cpus {
                let (c1, cm) = (
                    metric(one, "cpu_per_process_s").unwrap_or(f64::NAN),
                    metric(most, "cpu_per_process_s").unwrap_or(f64::NAN),
                );
                // The same rule as every other verdict: more CPU time per process only when
                // the test on the repetitions says so.
                let cpu_runs = |r: &Row| -> Vec<f64> {
                    r.samples
                        .iter()
                        .filter_map(|s| s.metrics.get("cpu_per_process_s").copied())
                        .collect()
                };
                let c = crate::verdict::compare(&cpu_runs(most), &cpu_runs(one));
                let why = match c.verdict {
                    crate::verdict::Verdict::Slower => format!(
                        " and extra work: the CPU times differ by the test ({})",
                        c.reason()
                    ),
                    crate::verdict::Verdict::TooFewRuns => format!(
                        "; whether it is also extra work, the runs are too few to tell ({})",
                        c.reason()
                    ),
                    _ => format!(", not extra work: the CPU times are {}", c.clause()),
                };
                out.push(format!(
                    "Oversubscription, seed 004: {} processes on {cpus} CPUs took {} of wall time per batch against {} for one; the CPU time per process went from {} to {} ({:+.1} %), so the extra wall time is waiting for a CPU{why}.",
                    most.level,
                    units::secs(most.wall.median),
                    units::secs(one.wall.median),
                    units::secs(c1),
                    units::secs(cm),
                    (cm / c1 - 1.0) * 100.0,
                ));
            }
        }
    }
    // Thread per job (seeds 001 and 003).
    if let Some(trivial) = section(overhead_report, "trivial_jobs") {
        let best = |name: &str| {
            trivial
                .rows
                .iter()
                .filter(|r| r.series == name)
                .filter_map(|r| Some((r, metric(r, "jobs_per_sec")?)))
                .max_by(|a, b| a.1.total_cmp(&b.1))
        };
        if let (Some((t, tr)), Some((p, pr))) = (best("thread per job"), best("pool")) {
            out.push(format!(
                "Thread per job, seed 001: for trivial jobs a new thread per job peaks at {} jobs/s (at most {} alive) against {} jobs/s for a pool of {}: {:.0}× fewer jobs per second.",
                units::count(tr),
                t.label,
                units::count(pr),
                threads(&p.label),
                pr / tr
            ));
        }
    }
    if let Some(frames) = section(frames_report, "frames") {
        let rate = |name: &str| {
            frames
                .rows
                .iter()
                .find(|r| r.series == name)
                .and_then(|r| metric(r, "frames_per_sec"))
        };
        if let (Some(spawn), Some(pool)) = (rate("std_spawn"), rate("throttle")) {
            out.push(format!(
                "Thread per job, seed 003: creating threads every frame ran {} frames/s against {} frames/s with the persistent pool (its time per frame {:+.0} % against the pool's).",
                units::count(spawn),
                units::count(pool),
                (pool / spawn - 1.0) * 100.0
            ));
        }
    }
    if let Some(x) = outside.filter(|&x| crate::load::is_disturbing(x, cpus)) {
        out.push(format!(
            "Caution: other programs kept {x:.2} CPUs busy on average while this ran; small differences above may be theirs."
        ));
    }
    out
}

/// Seed 002's pictures: the timelines of a short recorded run (10 frames of the default scene)
/// of the throttle pool and of seed 002's first scheduler, the locked queue.
fn frames_timelines(machine: &Machine) -> anyhow::Result<Vec<String>> {
    use throttle_workloads::frames::{FrameScheduler, LockedQueuePool, ThrottlePool};
    let threads = machine.usable_cpus();
    let (meshes, vertices, frames) = (2000, 200, 10);
    let mut schedulers: Vec<Box<dyn FrameScheduler>> = vec![
        Box::new(ThrottlePool::new(threads)?),
        Box::new(LockedQueuePool::new(threads)?),
    ];
    let traces: Vec<_> = schedulers
        .iter_mut()
        .filter_map(|sched| frames::traced_run(sched.as_mut(), meshes, vertices, frames))
        .collect();
    // One time scale for both pictures, so their widths compare.
    let axis = traces.iter().map(crate::chart::timeline::span_ns).max();
    Ok(traces
        .iter()
        .map(|t| frames::timeline_svg(t, frames, meshes, vertices, axis))
        .collect())
}

/// The page's sections, one per seed, from whatever experiments finished.
fn seed_sections(reports: &[Report], timelines: Vec<String>) -> Vec<SeedSection> {
    let find = |name: &str| reports.iter().find(|r| r.experiment == name);
    let charts = |r: Option<&Report>| r.map(svg::charts).unwrap_or_default();
    let missing = |r: Option<&Report>, what: &str| {
        r.is_none()
            .then(|| format!("Not measured: the run stopped before the {what} experiment."))
    };
    let sweep_r = find("sweep");
    let overhead_r = find("overhead");
    let frames_r = find("frames");
    let procs_r = find("procs");
    let frames_charts = charts(frames_r);
    let (seed3_figs, seed2_figs) = if frames_charts.is_empty() {
        (Vec::new(), Vec::new())
    } else {
        (frames_charts[..1].to_vec(), frames_charts[1..].to_vec())
    };
    let seed2_figs: Vec<String> = seed2_figs.into_iter().chain(timelines).collect();
    let frames_findings: Vec<String> = frames_r.map(|r| r.findings.clone()).unwrap_or_default();
    vec![
        SeedSection {
            id: "seed-000".into(),
            title: "Seed 000 — a semaphore throttle: time against the concurrency limit".into(),
            claim: "The seed: 64 CPU-bound tasks, at most N at once; best at N = cores, worse from M to 2M, flat beyond.".into(),
            figures: charts(sweep_r),
            findings: sweep_r.map(|r| r.findings.clone()).unwrap_or_default(),
            report: sweep_r.cloned(),
            missing: missing(sweep_r, "sweep"),
        },
        SeedSection {
            id: "seed-001".into(),
            title: "Seed 001 — thread overhead: throughput against threads and job length".into(),
            claim: "The seed: a thread per job costs; it pays only from some job length (point A), and a user:system ratio above ~2 says threading pays.".into(),
            figures: charts(overhead_r),
            findings: overhead_r.map(|r| r.findings.clone()).unwrap_or_default(),
            report: overhead_r.cloned(),
            missing: missing(overhead_r, "overhead"),
        },
        SeedSection {
            id: "seed-002".into(),
            title: "Seed 002 — task schedulers: concurrency level and wake-ups".into(),
            claim: "The seed: judge a scheduler by its average concurrency level and by its transitions (wake-ups) per second.".into(),
            figures: seed2_figs,
            findings: frames_findings.iter().skip(1).cloned().collect(),
            report: frames_r.cloned(),
            missing: missing(frames_r, "frames"),
        },
        SeedSection {
            id: "seed-003".into(),
            title: "Seed 003 — persistent threads vs a thread per job, against serial / cores".into(),
            claim: "The seed: a kept-alive worker beats creating threads per update; judge both against the theoretical minimum, serial time / cores.".into(),
            figures: seed3_figs,
            findings: frames_findings.into_iter().take(1).collect(),
            report: frames_r.cloned(),
            missing: missing(frames_r, "frames"),
        },
        SeedSection {
            id: "seed-004".into(),
            title: "Seed 004 — elapsed vs CPU time under load".into(),
            claim: "The seed: with more processes than cores, wall time grows linearly while CPU time per process stays flat (rising between the physical and logical core counts with SMT).".into(),
            figures: charts(procs_r),
            findings: procs_r.map(|r| r.findings.clone()).unwrap_or_default(),
            report: procs_r.cloned(),
            missing: missing(procs_r, "procs"),
        },
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::Sample;

    /// A sweep report of pool mode at `rows` (level, three wall times in ms), planned `levels`.
    fn sweep_report(levels: &[usize], rows: &[(u64, [u64; 3])]) -> Report {
        let mut r = Report::new("sweep", Machine::example(2, 2));
        r.param("levels", levels);
        let mut s = Section::new("sweep", "t", "mode", "concurrent tasks", true);
        for (level, walls) in rows {
            let samples: Vec<Sample> = walls
                .iter()
                .map(|&ms| Sample {
                    wall: Duration::from_millis(ms),
                    ..Sample::default()
                })
                .collect();
            s.rows.push(
                Row::from_samples("pool", *level, &level.to_string(), *level as f64, &samples)
                    .expect("row"),
            );
        }
        s.mark_best();
        r.sections.push(s);
        r
    }

    #[test]
    fn the_summary_of_an_interrupted_sweep_says_which_levels_it_covers() {
        let machine = Machine::example(2, 2);
        let partial = sweep_report(&[1, 2, 4, 0], &[(1, [200, 201, 202]), (2, [104, 105, 106])]);
        let rec = recommend(&machine, Some(&partial), None, None, None, None);
        assert!(
            rec[0]
                .contains("Over the levels measured only: the run stopped before 4, 0 (no limit)."),
            "{rec:?}"
        );
        // With no unlimited level measured there is no oversubscription to state.
        assert!(
            !rec.iter().any(|r| r.contains("Oversubscription")),
            "{rec:?}"
        );
        let whole = sweep_report(
            &[1, 2, 0],
            &[
                (1, [200, 201, 202]),
                (2, [104, 105, 106]),
                (0, [150, 151, 152]),
            ],
        );
        let rec = recommend(&machine, Some(&whole), None, None, None, None);
        assert!(!rec[0].contains("Over the levels measured only"), "{rec:?}");
        // The summary's oversubscription clause is the sweep's own, by the same rule.
        let clause = crate::experiments::sweep::oversubscription(&whole.sections[0], "pool", 2, 64)
            .expect("clause");
        assert!(rec.iter().any(|r| r.contains(&clause)), "{rec:?}");
        assert!(clause.contains("a real difference"), "{clause}");
    }
}
