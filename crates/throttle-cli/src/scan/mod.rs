//! `throttle scan`: a scalability profiler for any command.
//!
//! A pipeline like the CLI's: options → [`plan::Plan`] (checked, exit 2 on bad input) →
//! [`measure::measure`] (interleaved rounds of real child processes, accounted with `wait4` and
//! schedstat by the probe) → [`analysis::analyse`] (statistics, the USL and Amdahl fits of
//! [`crate::results::model::usl`], notes) → [`results::report`], the common [`crate::results::Report`] → the CLI's one
//! table and one exporter per format ([`crate::view::table`], [`crate::export`]), with scan's own
//! figures ([`figures`]) plugged into `--plot` and `--report`. Scan has no table, statistics
//! type or file writer of its own.

use std::path::PathBuf;

use clap::Args;

pub mod analysis;
mod figures;
mod measure;
mod overhead;
mod plan;
mod record;
mod results;
mod sampler;
mod stats;

const LONG_ABOUT: &str = "\
Profile how any command scales: run it at several thread counts (-P/-L) or as K concurrent \
copies (--procs), measure every run with the kernel's own accounting, and fit a model that \
says where it peaks and why it stops scaling.

Per run, from wait4(2) and /proc schedstat: wall time, user and system CPU time, peak RSS, \
voluntary and involuntary context switches, run-queue wait (time runnable but waiting for a \
CPU; exact for the main thread, sampled every 10 ms for worker threads, so a lower bound) and \
the exit code.

Per value: median, mean, stddev, min and max of the wall time; user, system, CPU/wall (how \
many CPUs the command kept busy), switches and run-queue wait; throughput (runs/s, or K/wall \
with --procs), speedup over the first value, efficiency and the Karp–Flatt serial fraction; a \
warning when a run is an outlier (modified z-score > 3.5, more than 5 % from the median, at \
least 5 runs) or, with fewer runs, when the runs spread more than 10 %.

The model: the Universal Scalability Law X(N) = λN / (1 + σ(N−1) + κN(N−1)) is fitted to the \
throughput of every run by Levenberg–Marquardt least squares on relative residuals (bounds \
0 ≤ σ, κ ≤ 1), with standard errors from the Jacobian and R². σ is contention (the serial \
part, as in Amdahl's law), κ the coherency cost that makes throughput fall past the peak \
N* = √((1−σ)/κ). The Amdahl fit (κ = 0) is shown beside it, followed by a plain-language \
reading, and notes when the range passes the physical or logical core count or when wall \
time is far above CPU time (the command waits rather than computes).

Runs are interleaved: each round runs every value once, in a freshly shuffled order, so drift \
of the machine does not bias one value. Without --runs, rounds continue past --min-runs until \
every median is known to ±2.5 % (95 % notch interval), at most --max-runs.

Commands are given as in hyperfine: each argument is one command line, run through a shell \
(`sh -c`, or -S SHELL); -N runs it without one (split into words, no shell start-up in the \
times). Several commands are compared, with hyperfine's summary ('a' ran 1.80 ± 0.05 times \
faster than 'b') followed by the test's verdict; with -P or -L every command runs at every \
value. One command alone is a plain benchmark. Throttle's own form puts the words of one command after `--`; they run \
directly, without a shell, unless -S is given. --setup and --cleanup run once per command or \
value, --prepare and --conclude around every run (warm-up included); none is timed. Output is \
discarded unless --show-output. A failing run stops the scan with its exit code unless \
--ignore-failure. Ctrl-C stops after the current run and still prints and exports what was \
measured, marked partial. A difference is called real only when a Mann–Whitney test on the \
runs says so (p ≤ 0.10, at least 3 runs of each).

Exit status: 0 success; 1 a run failed; 130 interrupted (results partial); 2 bad usage (MIN > MAX, step 0, \
missing {NAME} placeholder, a command that cannot be started, an unwritable output path).";

// The examples name their parameter `threads`, not `n`: clap's help renderer turns the text
// `{n}` into a line break, and there is no escape for it.
const AFTER_LONG_HELP: &str = "\
Examples:
  # xz's thread knob, 1 to 4 threads:
  head -c 64M /dev/urandom > data.bin
  throttle scan -P threads 1 4 -- xz -T{threads} -k -c -3 data.bin
  # a list of values, all exports:
  throttle scan -L threads 1,2,4,8 --export-json scan.json --export-csv scan.csv \\
      --export-markdown scan.md --plot scan.svg --report scan.html -- zstd -T{threads} -c data.bin
  # K concurrent copies of a single-threaded program (seed 004's experiment):
  throttle scan --procs 1,2,4,8 -- gzip -c data.bin
  # hyperfine's form: quoted command lines, through a shell (pipes, redirections):
  throttle scan -P j 1 4 'pigz -p {j} -c data.bin | wc -c'
  # two commands compared, named, with a cache-dropping step before every run:
  throttle scan -N -n gzip -n zstd --prepare 'sync' 'gzip -c data.bin' 'zstd -c data.bin'
  # the profiler's own cost per run against hyperfine's, on `true`:
  throttle scan --self-overhead --quick

JSON (--export-json) uses hyperfine's fields in results[] (command, mean, stddev, median, user, \
system, min, max, times, exit_codes, parameters) plus ours (throughput, speedup, efficiency, \
karp_flatt, cpu_per_wall, switches, run_queue_wait, max_rss_kib, runs[]), and top-level model, \
notes, machine and partial. Times are in seconds; missing data is null.";

/// `--time-unit`, hyperfine's names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum TimeUnit {
    /// Microseconds.
    Microsecond,
    /// Milliseconds.
    Millisecond,
    /// Seconds.
    Second,
}

/// `--sort`, hyperfine's names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum SortOrder {
    /// The table in the order given.
    Auto,
    /// The table in the order given.
    Command,
    /// The table fastest (mean wall time) first.
    MeanTime,
}

/// Options of `throttle scan`.
#[derive(Debug, Args)]
#[command(before_long_help = LONG_ABOUT, after_long_help = AFTER_LONG_HELP)]
pub struct ScanArgs {
    /// Scan the integers MIN..=MAX as {NAME} in the command (step -D).
    #[arg(
        short = 'P',
        long = "parameter-scan",
        num_args = 3,
        value_names = ["NAME", "MIN", "MAX"],
        allow_negative_numbers = true
    )]
    pub parameter_scan: Option<Vec<String>>,

    /// Step of -P (default 1).
    #[arg(
        short = 'D',
        long = "parameter-step-size",
        value_name = "STEP",
        allow_negative_numbers = true
    )]
    pub step: Option<String>,

    /// Scan the listed values as {NAME}: `-L n 1,2,4,8`. Non-numeric values are measured but
    /// not modelled.
    #[arg(short = 'L', long = "parameter-list", num_args = 2, value_names = ["NAME", "VALUES"])]
    pub parameter_list: Option<Vec<String>>,

    /// Run K copies of the command at once for each K in the list: throughput = K / wall.
    #[arg(long, value_name = "K,K,...", allow_hyphen_values = true)]
    pub procs: Option<String>,

    /// Measured runs per value, exactly (default: adaptive, see --min-runs/--max-runs).
    #[arg(short = 'r', long, value_name = "R", allow_negative_numbers = true, value_parser = crate::numbers::whole::<usize>(1, 100000))]
    pub runs: Option<usize>,

    /// Adaptive runs: at least this many per value [default: 3].
    #[arg(short = 'm', long, value_name = "R", allow_negative_numbers = true, value_parser = crate::numbers::whole::<usize>(1, 100000))]
    pub min_runs: Option<usize>,

    /// Adaptive runs: at most this many per value [default: 10].
    #[arg(short = 'M', long, value_name = "R", allow_negative_numbers = true, value_parser = crate::numbers::whole::<usize>(1, 100000))]
    pub max_runs: Option<usize>,

    /// Unmeasured warm-up runs per value (page cache, CPU frequency) before measuring.
    #[arg(short = 'w', long, value_name = "W", default_value_t = 1, allow_negative_numbers = true, value_parser = crate::numbers::whole::<usize>(0, 100000))]
    pub warmup: usize,

    /// The shell that runs each command line (`SHELL -c 'COMMAND'`) [default: sh for quoted
    /// command lines]. Words after `--` run directly unless this is given (bare `--shell`: sh).
    /// `--shell=none` is -N.
    #[arg(short = 'S', long, value_name = "SHELL", num_args = 0..=1, default_missing_value = "sh")]
    pub shell: Option<String>,

    /// Run quoted command lines without a shell: split into words and started directly (no
    /// shell start-up in the times, no pipes or redirections).
    #[arg(short = 'N')]
    pub no_shell: bool,

    /// Run CMD once before a command's (or value's) first run, warm-up included; not timed.
    #[arg(short = 's', long, value_name = "CMD")]
    pub setup: Option<String>,

    /// Run CMD before every run (warm-up included), e.g. to clear a cache; not timed.
    #[arg(short = 'p', long, value_name = "CMD")]
    pub prepare: Option<String>,

    /// Run CMD after every run; not timed.
    #[arg(long, value_name = "CMD")]
    pub conclude: Option<String>,

    /// Run CMD once after a command's (or value's) last run; not timed.
    #[arg(short = 'c', long, value_name = "CMD")]
    pub cleanup: Option<String>,

    /// Name a command in the table, the summary and the exports (once per command, in order).
    #[arg(short = 'n', long, value_name = "NAME")]
    pub command_name: Vec<String>,

    /// True when the command came after `--` (set from the command line, not a flag).
    #[arg(skip)]
    pub dashdash: bool,

    /// Go on when the command exits non-zero (the exit codes are reported).
    #[arg(short = 'i', long)]
    pub ignore_failure: bool,

    /// Let the command's stdout and stderr through (discarded by default).
    #[arg(long)]
    pub show_output: bool,

    /// Where the command's standard output and error go: `null` (the default), `pipe` (standard
    /// output into a pipe that the scan reads and discards, standard error discarded), `inherit`
    /// (the terminal, as --show-output) or a FILE (created afresh for every run), as hyperfine's
    /// --output.
    #[arg(long, value_name = "WHERE", conflicts_with = "show_output")]
    pub output: Option<String>,

    /// Print every time in this unit instead of the one that suits each value.
    #[arg(short = 'u', long, value_enum, value_name = "UNIT")]
    pub time_unit: Option<TimeUnit>,

    /// Order of the table (and the exports): `auto` and `command` keep the order given,
    /// `mean-time` puts the fastest (mean wall time) first. The summary always lists the other
    /// commands fastest first.
    #[arg(long, value_enum, value_name = "ORDER", default_value = "auto")]
    pub sort: SortOrder,

    /// Read the command's standard input from FILE (default: nothing, /dev/null).
    #[arg(long, value_name = "FILE")]
    pub input: Option<PathBuf>,

    /// Write results as JSON (hyperfine's fields plus ours, and the model); `-` for standard
    /// output (the table then goes to standard error), as with the experiments' --json.
    #[arg(long, value_name = "FILE")]
    pub export_json: Option<PathBuf>,

    /// Write one CSV line per value.
    #[arg(long, value_name = "FILE")]
    pub export_csv: Option<PathBuf>,

    /// Write the table, model and notes as Markdown.
    #[arg(long, value_name = "FILE")]
    pub export_markdown: Option<PathBuf>,

    /// Plot throughput with the USL and Amdahl fits, and wall vs CPU time, as SVG.
    #[arg(long, value_name = "FILE.svg")]
    pub plot: Option<PathBuf>,

    /// Write one self-contained HTML page (tables, fit, plots; no network needed).
    #[arg(long, value_name = "FILE.html")]
    pub report: Option<PathBuf>,

    /// Benchmark the profiler's own cost per run on `true` against hyperfine's (needs
    /// hyperfine on PATH) and print medians and the ratio; takes no command.
    #[arg(long)]
    pub self_overhead: bool,

    /// With --self-overhead: fewer rounds (a few seconds).
    #[arg(long, requires = "self_overhead")]
    pub quick: bool,

    /// The command: one quoted command line per argument (as in hyperfine; several are
    /// compared), or after `--` the words of one command. {NAME} marks where a scanned value goes.
    #[arg(value_name = "CMD", num_args = 0..)]
    pub command: Vec<String>,
}

/// Runs `throttle scan`.
pub fn run(mut args: ScanArgs) -> anyhow::Result<()> {
    if args.self_overhead {
        if !args.command.is_empty() {
            return Err(crate::error::usage(
                "--self-overhead",
                &args.command.join(" "),
                "measures `true` itself; give no command",
            ));
        }
        return overhead::run(args.quick);
    }
    args.dashdash = std::env::args().any(|a| a == "--");
    let plan = plan::Plan::from_args(&args)?;
    if let Some(unit) = args.time_unit {
        crate::view::units::force_unit(match unit {
            TimeUnit::Microsecond => crate::view::units::Unit::Us,
            TimeUnit::Millisecond => crate::view::units::Unit::Ms,
            TimeUnit::Second => crate::view::units::Unit::S,
        });
    }
    let outputs = [
        ("--export-json", &args.export_json),
        ("--export-csv", &args.export_csv),
        ("--export-markdown", &args.export_markdown),
        ("--plot", &args.plot),
        ("--report", &args.report),
    ];
    let mut on_stdout = None;
    for (flag, path) in outputs {
        if let Some(path) = path {
            crate::export::check_output(flag, path)?;
            if crate::export::is_stdout(path) {
                if let Some(other) = on_stdout.replace(flag) {
                    return Err(crate::error::usage(
                        flag,
                        "-",
                        &format!("{other} already writes to standard output"),
                    ));
                }
            }
        }
    }
    let machine = crate::results::Machine::detect();
    let scan = measure::measure(&plan, machine)?;
    let analysis = analysis::analyse(&scan);
    let mut report = results::report(&scan, &analysis);
    if args.sort == SortOrder::MeanTime {
        for section in &mut report.sections {
            section
                .rows
                .sort_by(|a, b| a.wall.mean.total_cmp(&b.wall.mean));
        }
    }
    // With an export on standard output, the table goes to standard error.
    let text = crate::view::table::render(&report);
    if on_stdout.is_some() {
        eprint!("{text}");
    } else {
        print!("{text}");
    }
    write_outputs(&args, &report)?;
    if scan.partial {
        return Err(crate::error::Interrupted.into());
    }
    Ok(())
}

/// Writes every export `args` asks for, each a view of the one `report`.
fn write_outputs(args: &ScanArgs, report: &crate::results::Report) -> anyhow::Result<()> {
    use crate::export::{csv, html, json, markdown, write_output};
    if let Some(path) = &args.export_json {
        write_output(path, &json::to_string(&json::hyperfine(report))?)?;
    }
    if let Some(path) = &args.export_csv {
        write_output(path, &csv::hyperfine(report))?;
    }
    if let Some(path) = &args.export_markdown {
        write_output(path, &markdown::to_string(report))?;
    }
    if let Some(path) = &args.plot {
        write_output(path, &figures::to_string(report))?;
    }
    if let Some(path) = &args.report {
        let plots = figures::charts(report);
        write_output(path, &html::report_page(report, &plots, figures::CAPTION))?;
    }
    Ok(())
}
