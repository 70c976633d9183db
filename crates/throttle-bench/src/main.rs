//! `throttle-bench`: throttle against serial code, rayon, chili and simple
//! hand-made schedulers.
//!
//! Every bench runs its systems interleaved over several repetitions and
//! prints a table (median, min, max, ratio to a named baseline) and its
//! targets with ✓ or ✗. `--json FILE` writes every sample.

mod benches;
mod harness;
mod machine;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{Context, Result};
use clap::builder::PossibleValuesParser;
use clap::Parser;

use crate::benches::Settings;
use crate::machine::Machine;

/// Repetitions per case by default, and under `--quick`.
const REPS: usize = 7;
const QUICK_REPS: usize = 3;

/// Benchmarks of the throttle runtime against serial code, rayon, chili and
/// simple baselines. Systems run interleaved; tables show the
/// median, min and max over repetitions and the ratio to a baseline.
#[derive(Debug, Parser)]
#[command(name = "throttle-bench", version)]
struct Args {
    /// Small sizes and 3 repetitions (for CI; the whole suite in well under 2 minutes).
    #[arg(long)]
    quick: bool,

    /// Write every sample, the machine and the targets to FILE as JSON.
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,

    /// Run only these benches or groups (repeatable; default: all).
    #[arg(long = "bench", value_name = "NAME", num_args = 1.., value_parser = PossibleValuesParser::new(benches::selectable_names()))]
    benches: Vec<String>,

    /// Instead of timing: count the instructions of one fork (fib, tree_sum; every system on
    /// one thread) under valgrind's callgrind, which counts exactly. Needs valgrind on PATH.
    #[arg(long, conflicts_with_all = ["benches", "json", "reps"])]
    instructions: bool,

    /// Repetitions per case [default: 7, or 3 with --quick].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1000))]
    reps: Option<u32>,
}

fn main() -> ExitCode {
    // `jobserver_token` re-runs this binary as its second process.
    if let Some(code) = benches::jobserver::child_main() {
        return code;
    }
    // `--instructions` re-runs this binary under callgrind, once per system.
    if let Some(code) = benches::instructions::child_main() {
        return code;
    }
    let args = Args::parse();
    if args.instructions {
        return match benches::instructions::run(args.quick) {
            Ok(true) => ExitCode::SUCCESS,
            Ok(false) => ExitCode::FAILURE,
            Err(err) => {
                eprintln!("error: {err:#}");
                ExitCode::FAILURE
            }
        };
    }
    // Fail before a long run, not after it, when the JSON file cannot be written.
    if let Some(path) = &args.json {
        if let Err(err) = std::fs::File::create(path) {
            eprintln!(
                "error: invalid value '{}' for '--json': {err}",
                path.display()
            );
            return ExitCode::from(2);
        }
    }
    match run(&args) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(err) => {
            eprintln!("error: {err:#}");
            ExitCode::FAILURE
        }
    }
}

/// Runs the selected benches; `Ok(false)` when a bench failed to run
/// (missed targets are reported, not failures).
fn run(args: &Args) -> Result<bool> {
    let machine = Machine::detect();
    let reps = args
        .reps
        .map_or(if args.quick { QUICK_REPS } else { REPS }, |r| r as usize);
    let settings = Settings {
        quick: args.quick,
        reps,
        threads: machine.logical_cpus,
    };
    println!("{}", machine.describe());
    println!(
        "{} repetitions per case, interleaved{}\n",
        reps,
        if args.quick { ", --quick sizes" } else { "" }
    );
    let start = Instant::now();
    let mut reports = Vec::new();
    let mut all_ran = true;
    for bench in benches::select(&args.benches) {
        match (bench.run)(&settings) {
            Ok(report) => {
                println!("{}", report.render());
                reports.push(report);
            }
            Err(err) => {
                eprintln!("error: bench {} failed: {err:#}\n", bench.name);
                all_ran = false;
            }
        }
    }
    let (met, total) = reports
        .iter()
        .flat_map(|r| &r.targets)
        .fold((0, 0), |(m, t), x| (m + usize::from(x.met), t + 1));
    println!(
        "targets met: {met} of {total}; suite took {:.1} s",
        start.elapsed().as_secs_f64()
    );
    if let Some(path) = &args.json {
        let json = harness::to_json(&machine, args.quick, reps, &reports)?;
        std::fs::write(path, json + "\n")
            .with_context(|| format!("writing --json file {}", path.display()))?;
        println!("wrote {}", path.display());
    }
    Ok(all_ran)
}
