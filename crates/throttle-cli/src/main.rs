//! `throttle`: run CPU-bound work at the right concurrency, and measure what the wrong one costs.
//!
//! A thin pipeline: parse the command line, check the output paths, run the chosen experiment,
//! print its table and export its results. The experiments live under `experiments/` (the main
//! job, `throttle report`, is `experiments/report.rs`), `scan/` profiles any command, both fill
//! one [`results::Report`]; `view/` prints it as text and `export/` writes every file format.

mod budget;
mod calibrate;
mod chart;
mod error;
mod experiments;
mod export;
mod interrupt;
mod levels;
mod load;
mod numbers;
mod pool_job;
mod progress;
mod results;
mod run;
mod run_style;
mod scan;
mod spin;
mod tasks;
mod topology;
mod verdict;
mod view;

use experiments::report as report_job;
use experiments::{adapt, frames, overhead, procs, sum, sweep};
use view::table;

use clap::error::ErrorKind;
use clap::{Parser, Subcommand};
use std::process::ExitCode;

use crate::export::OutputArgs;
use crate::results::{Machine, Report};

/// Run CPU-bound parallel work at the right concurrency, and measure what the wrong one costs.
///
/// Start with `throttle report`. The other subcommands run one of its experiments in detail (sum,
/// sweep, overhead, frames, procs; numbered seed 000–004 after the five starting experiments the
/// project was built from), show what the probe knows about the CPUs (topology), profile any
/// command (scan), or run a command under one budget of CPUs (run). Tables go to standard output; --json, --csv and --plot save the results.
/// Ctrl-C (or SIGTERM) stops an experiment between measurements and still prints and saves what
/// was measured, marked partial (exit status 130, or 143 for SIGTERM).
#[derive(Debug, Parser)]
#[command(name = "throttle", version, about, long_about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    Report(report_job::ReportArgs),
    Sum(sum::SumArgs),
    Sweep(sweep::SweepArgs),
    Overhead(overhead::OverheadArgs),
    Frames(frames::FramesArgs),
    Procs(procs::ProcsArgs),
    Topology(topology::TopologyArgs),
    /// Profile how any command scales with its thread count or with concurrent copies.
    Scan(Box<scan::ScanArgs>),
    Adapt(adapt::AdaptArgs),
    #[command(name = "__spin", hide = true)]
    Spin(spin::SpinArgs),
    Run(run::RunArgs),
    Budget(budget::BudgetArgs),
    #[command(name = "__tasks", hide = true)]
    Tasks(tasks::TasksArgs),
    #[command(name = "__pool", hide = true)]
    PoolJob(pool_job::PoolJobArgs),
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(err) => return clap_error(err),
    };
    // `throttle run` forwards signals and exits with its command's status: its own path.
    let command = match cli.command {
        Command::Run(args) => return run::main(args),
        Command::Budget(args) => return budget::main(args),
        other => other,
    };
    // Helper children share the user's process group: they note a Ctrl-C silently, and the
    // parent prints the one message.
    if matches!(
        command,
        Command::Spin(_) | Command::Tasks(_) | Command::PoolJob(_)
    ) {
        interrupt::quiet();
    } else {
        interrupt::install();
    }
    let result = match command {
        Command::Scan(args) => scan::run(*args),
        Command::Report(args) => report_job::run(&args),
        Command::Sum(args) => experiment(
            &args.output,
            |m| sum::run(&args, m),
            |r| sum::render(r, args.verbose),
        ),
        Command::Sweep(args) => experiment(&args.output, |m| sweep::run(&args, m), table::render),
        Command::Overhead(args) => {
            experiment(&args.output, |m| overhead::run(&args, m), table::render)
        }
        Command::Frames(args) => experiment(&args.output, |m| frames::run(&args, m), table::render),
        Command::Procs(args) => experiment(&args.output, |m| procs::run(&args, m), table::render),
        Command::Topology(args) => experiment(
            &OutputArgs {
                json: args.json.clone(),
                ..OutputArgs::default()
            },
            |m| Ok(Report::new("topology", m)),
            topology::render,
        ),
        Command::Adapt(args) => adapt::run(&args),
        Command::Spin(args) => spin::run(&args),
        Command::Tasks(args) => tasks::run(&args),
        Command::PoolJob(args) => pool_job::run(&args),
        Command::Run(_) | Command::Budget(_) => unreachable!("handled above"),
    };
    // THROTTLE_TRACE=FILE.json: the global pool's timeline (experiments that use it, e.g. `sum`).
    match throttle::trace::write_global_trace() {
        Ok(Some(path)) => eprintln!("trace of the global pool: {}", path.display()),
        Ok(None) => {}
        Err(e) => eprintln!(
            "warning: could not write {}: {e}",
            throttle::trace::TRACE_ENV
        ),
    }
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) if error::is_usage(&err) => {
            eprintln!("error: {err}");
            ExitCode::from(2)
        }
        Err(err) if error::is_interrupted(&err) => {
            eprintln!("{err}");
            ExitCode::from(interrupt::exit_status())
        }
        Err(err) => {
            eprintln!("error: {err:#}");
            ExitCode::from(1)
        }
    }
}

/// The experiment pipeline: check the outputs, measure, print, export, then judge the run.
fn experiment(
    output: &OutputArgs,
    measure: impl FnOnce(Machine) -> anyhow::Result<Report>,
    render: impl Fn(&Report) -> String,
) -> anyhow::Result<()> {
    let outputs = output.prepare()?;
    let report = measure(Machine::detect())?;
    let text = render(&report);
    if outputs.json_on_stdout() {
        eprint!("{text}");
    } else {
        print!("{text}");
    }
    outputs.write(&report)?;
    let failed = report
        .sections
        .iter()
        .flat_map(|s| s.rows.iter())
        .find_map(|r| Some((r, r.check.as_ref().filter(|c| !c.ok)?)));
    if let Some((row, check)) = failed {
        anyhow::bail!(
            "wrong result ({} at {}): got {}, expected {}",
            row.series,
            row.label,
            check.got,
            check.expected
        );
    }
    if report.partial {
        return Err(error::Interrupted.into());
    }
    Ok(())
}

/// Prints a command-line parsing error. A bad value gets one line naming the flag and the value;
/// help and version go to stdout with status 0; other usage errors keep clap's hint. Exit status 2
/// for every usage error.
fn clap_error(err: clap::Error) -> ExitCode {
    match err.kind() {
        ErrorKind::InvalidValue | ErrorKind::ValueValidation => {
            let text = err.render().to_string();
            let first = text.split("\n\n").next().unwrap_or(&text);
            let line: Vec<&str> = first.lines().map(str::trim).collect();
            eprintln!("{}", line.join(" "));
            ExitCode::from(2)
        }
        ErrorKind::UnknownArgument => {
            // One line, like every other bad input: the option, and clap's suggestion if any.
            use clap::error::{ContextKind, ContextValue};
            let text = |kind| match err.get(kind) {
                Some(ContextValue::String(s)) => Some(s.clone()),
                Some(ContextValue::Strings(v)) => v.first().cloned(),
                _ => None,
            };
            let arg = text(ContextKind::InvalidArg).unwrap_or_default();
            let tip = text(ContextKind::SuggestedArg)
                .map(|s| format!("; did you mean '{s}'?"))
                .unwrap_or_default();
            let runs_commands = matches!(
                std::env::args().nth(1).as_deref(),
                Some("scan" | "procs" | "run")
            );
            let dash = if runs_commands {
                "; a command whose words start with '-' goes after '--'"
            } else {
                ""
            };
            eprintln!("error: unknown option '{arg}'{tip} (see --help{dash})");
            ExitCode::from(2)
        }
        _ => {
            let code = err.exit_code();
            // Printing to a closed stream is not worth a panic; the exit status still tells.
            let _ = err.print();
            ExitCode::from(u8::try_from(code).unwrap_or(2))
        }
    }
}
