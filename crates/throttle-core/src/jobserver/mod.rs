//! The machine-wide budget: every process on the machine draws on one GNU make jobserver.
//!
//! The protocol (the client that finds and verifies an inherited jobserver, and the crash-safe
//! server behind `throttle run`) is the `throttle-jobserver` crate, re-exported here
//! ([`Jobserver`], [`Token`], [`Server`], [`Style`], ...). This module adds the pool's side
//! (`budget.rs`): one thread per pool that asks for a token only when runnable work waits for a
//! thread and every slot is busy, and gives it back after a short grace period once work runs
//! out, so that the pool's effective limit is min(user limit, 1 + tokens held). The token
//! protocol, why no token is lost or duplicated and why the pool never hoards:
//! [README.md](README.md) beside this file.

pub use throttle_jobserver::*;

pub(crate) mod budget;
