//! `throttle __spin` (hidden): the built-in CPU-bound kernel that `throttle procs` runs as its
//! child processes — a busy loop of a fixed number of iterations, so every copy does the same
//! work and only the wall time can grow with contention.

use clap::Args;

/// Options of the hidden `__spin` subcommand.
#[derive(Debug, Args)]
pub struct SpinArgs {
    /// Iterations of `throttle_workloads::kernels::spin` to run.
    #[arg(long, value_name = "N")]
    pub iterations: u64,
}

/// Runs the busy loop; prints nothing.
pub fn run(args: &SpinArgs) -> anyhow::Result<()> {
    std::hint::black_box(throttle_workloads::kernels::spin(args.iterations));
    Ok(())
}
