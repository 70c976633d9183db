//! `throttle scan`: a scalability profiler for any command (placeholder until written).

use clap::Args;

/// Options of `throttle scan`.
#[derive(Debug, Args)]
pub struct ScanArgs {}

/// Runs `throttle scan`.
pub fn run(_args: ScanArgs) -> anyhow::Result<()> {
    anyhow::bail!("scan is not implemented yet")
}
