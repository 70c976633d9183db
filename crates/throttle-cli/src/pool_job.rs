//! `throttle __pool` (hidden): the child program of `throttle procs --budget`, "a program built
//! for all CPUs" as seed 004's processes are. It runs `--tasks` CPU-bound tasks of
//! `--iterations` spin iterations each on the global pool, which has one thread per usable CPU
//! (`THROTTLE_THREADS` overrides) and joins the jobserver named in `MAKEFLAGS` by default. With
//! `--jobserver required|absent` it fails (exit 1) unless the pool did or did not join one, so
//! an experiment cannot silently measure the wrong setting.

use clap::{Args, ValueEnum};

/// Whether the pool must have joined a jobserver.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Expect {
    /// No check.
    Any,
    /// The pool must have joined a jobserver.
    Required,
    /// The pool must not have joined one.
    Absent,
}

/// Options of the hidden `__pool` subcommand.
#[derive(Debug, Args)]
pub struct PoolJobArgs {
    /// Tasks to run (64: seed 000's slices).
    #[arg(long, default_value_t = 64)]
    pub tasks: usize,
    /// Iterations of `throttle_workloads::kernels::spin` per task.
    #[arg(long, value_name = "N")]
    pub iterations: u64,
    /// Fail unless the global pool did (`required`) or did not (`absent`) join a jobserver.
    #[arg(long, value_enum, default_value = "any")]
    pub jobserver: Expect,
}

/// Runs the tasks on the global pool.
pub fn run(args: &PoolJobArgs) -> anyhow::Result<()> {
    let pool = throttle::global_pool()?;
    let joined = pool.jobserver_tokens().is_some();
    match (args.jobserver, joined) {
        (Expect::Required, false) => anyhow::bail!("the pool joined no jobserver"),
        (Expect::Absent, true) => anyhow::bail!("the pool joined a jobserver"),
        _ => {}
    }
    let iterations = args.iterations;
    pool.for_range_grain(0..args.tasks, 1, |_| {
        std::hint::black_box(throttle_workloads::kernels::spin(iterations));
    });
    Ok(())
}
