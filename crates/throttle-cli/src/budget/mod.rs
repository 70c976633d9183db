//! `throttle budget status URL [--json]` (this file) and the bridge that backs `throttle run
//! --budget`'s jobserver tokens with cluster slots (`bridge.rs`, feature `etcd`). The budget
//! itself is the `throttle-budget` crate; user guide: `docs/cluster-budget.md`.

#[cfg(feature = "etcd")]
pub mod bridge;
pub mod hold;
mod render;

use clap::{Args, Subcommand};
use std::process::ExitCode;

/// A cluster budget shared through etcd (needs a throttle built with --features etcd).
#[derive(Debug, Args)]
pub struct BudgetArgs {
    #[command(subcommand)]
    command: BudgetCommand,
}

#[derive(Debug, Subcommand)]
enum BudgetCommand {
    /// Holders (host, pid, slots, since), waiters and slots in use of the budget at URL.
    Status(StatusArgs),
}

#[derive(Debug, Args)]
struct StatusArgs {
    /// etcd://HOST:PORT[,HOST:PORT...]/NAME
    #[arg(value_name = "URL")]
    url: String,
    /// Print JSON (one entry per slot key) instead of the table.
    #[arg(long)]
    json: bool,
}

/// `main`'s entry: 0, or 2 for a bad URL, an unreachable cluster or a build without etcd, 1 for
/// another failure.
pub fn main(args: BudgetArgs) -> ExitCode {
    let BudgetCommand::Status(s) = args.command;
    match status(&s) {
        Ok(text) => {
            print!("{text}");
            ExitCode::SUCCESS
        }
        Err(err) if crate::error::is_usage(&err) => {
            eprintln!("error: {err}");
            ExitCode::from(2)
        }
        Err(err) => {
            eprintln!("error: {err:#}");
            ExitCode::from(1)
        }
    }
}

fn status(args: &StatusArgs) -> anyhow::Result<String> {
    let url = crate::run::parse_budget_url("URL", &args.url)?;
    let status = read(&url)?;
    Ok(if args.json {
        let mut s = serde_json::to_string_pretty(&status)?;
        s.push('\n');
        s
    } else {
        render::table(&status, unix_now())
    })
}

#[cfg(feature = "etcd")]
fn read(url: &throttle_budget::BudgetUrl) -> anyhow::Result<throttle_budget::Status> {
    throttle_budget::status(url).map_err(|e| {
        if e.is_usage() {
            anyhow::Error::new(crate::error::UsageError(e.to_string()))
        } else {
            anyhow::Error::new(e)
        }
    })
}

#[cfg(not(feature = "etcd"))]
fn read(_: &throttle_budget::BudgetUrl) -> anyhow::Result<throttle_budget::Status> {
    unreachable!("parse_budget_url refuses every URL without the etcd feature")
}

fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// The bridge of `throttle run --budget` ([`bridge::Bridge`]); without the etcd feature a type
/// that cannot exist (`--budget` is refused before one would be made).
#[cfg(feature = "etcd")]
pub use bridge::Bridge;

/// See the `etcd` build's `bridge::Bridge`; this one cannot be made.
#[cfg(not(feature = "etcd"))]
pub struct Bridge(std::convert::Infallible);

#[cfg(not(feature = "etcd"))]
impl Bridge {
    /// Never called: no value of this type exists.
    pub fn tick(&mut self, _: &throttle::Server) {
        match self.0 {}
    }

    /// Never called: no value of this type exists.
    pub fn status_line(&self) -> String {
        match self.0 {}
    }

    /// Never called: no value of this type exists.
    pub fn command_backed(&self) -> bool {
        match self.0 {}
    }

    /// Never called: no value of this type exists.
    pub fn trust_end(&self) -> Option<std::time::Instant> {
        match self.0 {}
    }

    /// Never called: no value of this type exists.
    pub fn backed_until(&self) -> Option<std::time::Instant> {
        match self.0 {}
    }

    /// Never called: no value of this type exists.
    pub fn finish(self) {
        match self.0 {}
    }
}

/// Joins the budget at `url` (N = `slots`) and takes the command's implicit slot, waiting in
/// the cluster's queue for it. Bad input, an unreachable cluster and an N mismatch are usage
/// errors (exit status 2).
#[cfg(feature = "etcd")]
pub fn start(
    url: &throttle_budget::BudgetUrl,
    slots: usize,
    ttl_secs: u64,
    linger: std::time::Duration,
) -> anyhow::Result<Bridge> {
    let usage = |e: throttle_budget::BudgetError| {
        if e.is_usage() {
            anyhow::Error::new(crate::error::UsageError(e.to_string()))
        } else {
            anyhow::Error::new(e)
        }
    };
    let opts =
        throttle_budget::Options::default().with_ttl(std::time::Duration::from_secs(ttl_secs));
    let budget = throttle_budget::EtcdBudget::connect(url, slots, opts).map_err(usage)?;
    // One line if the command has to wait for its slot (the budget is full), after 1 s.
    let granted = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let g2 = granted.clone();
    let line = format!(
        "throttle run: waiting for a slot of budget {} (N = {slots}; `throttle budget status {url}` shows the holders and the queue)",
        url.name()
    );
    let notice = std::thread::spawn(move || {
        let start = std::time::Instant::now();
        let wait = std::time::Duration::from_secs(1);
        while !g2.load(std::sync::atomic::Ordering::Acquire) && start.elapsed() < wait {
            std::thread::park_timeout(wait.saturating_sub(start.elapsed()));
        }
        if !g2.load(std::sync::atomic::Ordering::Acquire) {
            eprintln!("{line}");
        }
    });
    let implicit = budget.acquire();
    // Release: pairs with the Acquire loads in the notice thread.
    granted.store(true, std::sync::atomic::Ordering::Release);
    notice.thread().unpark();
    let _ = notice.join();
    Ok(Bridge::new(budget, implicit.map_err(usage)?, linger))
}

/// Without the etcd feature no URL gets this far.
#[cfg(not(feature = "etcd"))]
pub fn start(
    _: &throttle_budget::BudgetUrl,
    _: usize,
    _: u64,
    _: std::time::Duration,
) -> anyhow::Result<Bridge> {
    unreachable!("parse_budget_url refuses every URL without the etcd feature")
}

/// How long `throttle run --budget` sleeps between two looks at the pipe and the lease
/// ([`bridge::TICK`]).
pub fn bridge_tick() -> std::time::Duration {
    #[cfg(feature = "etcd")]
    return bridge::TICK;
    #[cfg(not(feature = "etcd"))]
    std::time::Duration::from_millis(10)
}
