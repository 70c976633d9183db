//! `throttle`: run CPU-bound work at the right concurrency, and show what the wrong one costs.
//!
//! A thin pipeline: parse the command line, run the chosen experiment, export its results.
//! Each experiment lives in its own module; output formats live under `export/`.

mod error;
mod interrupt;
mod scan;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// Run CPU-bound parallel work at the right concurrency, and measure what the wrong one costs.
#[derive(Debug, Parser)]
#[command(name = "throttle", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Profile how any command scales with its thread count or with concurrent copies.
    Scan(scan::ScanArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    interrupt::install();
    let result = match cli.command {
        Command::Scan(args) => scan::run(args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) if error::is_usage(&err) => {
            eprintln!("error: {err}");
            ExitCode::from(2)
        }
        Err(err) => {
            eprintln!("error: {err:#}");
            ExitCode::from(1)
        }
    }
}
