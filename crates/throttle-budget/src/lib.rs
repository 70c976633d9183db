//! One concurrency budget shared by many hosts, held in etcd.
//!
//! A budget named NAME has N slots. Every process, on any host, that names it takes slots from
//! the same N: a shared database that takes 3 heavy clients, a licence server, a remote cache.
//! The slots are etcd keys attached to the holder's *lease*, so a holder that dies (SIGKILL,
//! power loss, partition) loses them when its lease expires; the first N keys by creation
//! revision hold slots and the rest wait in arrival order, each watching one key, so nobody
//! polls and a release wakes one waiter. The protocol and why it is correct:
//! [`src/README.md`](https://example.invalid/throttle/crates/throttle-budget/src/README.md)
//! (beside this file).
//!
//! # Words
//! - **slot**: the right to run one job; one etcd key under `/throttle/budget/NAME/slots/`.
//! - **holder** / **waiter**: a key among the first N by creation revision / one behind them.
//! - **lease**: one per process; its TTL (default 5 s) is how long etcd keeps the keys of a
//!   process that stopped renewing it.
//! - **margin**: how long before the lease's computed end a holder stops trusting its slots:
//!   `max(1 s, TTL/4)` ([`queue::margin`]).
//!
//! # Features
//! - `etcd` (off by default): `EtcdBudget`, `ClusterSlot` and `status`, through the
//!   `etcd-client` crate (etcd's v3 gRPC API) and a small tokio runtime on one background
//!   thread. **Building it needs `protoc`** (the protobuf compiler: Debian's
//!   `protobuf-compiler`), because `etcd-client`'s build script compiles etcd's `.proto` files.
//!   Without the feature the crate holds the URL parser, the shared types and the pure queue
//!   rules, and builds in seconds.
//!
//! # Example
//! A blocking API for plain threads (needs a running etcd, so not run as a doctest):
//!
//! ```no_run
//! # #[cfg(feature = "etcd")]
//! # fn main() -> Result<(), throttle_budget::BudgetError> {
//! use throttle_budget::{BudgetUrl, EtcdBudget, Options};
//!
//! let url: BudgetUrl = "etcd://127.0.0.1:2379/db-clients".parse()?;
//! // 3 slots across every host; the first process to name the budget stores N = 3.
//! let budget = EtcdBudget::connect(&url, 3, Options::default())?;
//! let slot = budget.acquire()?; // waits in arrival order
//! while slot.is_valid() {
//!     // ... use the database; stop before valid_until() ...
//!     break;
//! }
//! drop(slot); // the key is deleted: the next waiter goes
//! println!("{:?}", budget.status()?);
//! # Ok(())
//! # }
//! # #[cfg(not(feature = "etcd"))]
//! # fn main() {}
//! ```

pub mod queue;
mod types;
mod url;

#[cfg(feature = "etcd")]
mod etcd;

pub use types::{
    default_host, BudgetError, Entry, ErrorKind, Options, SlotValue, Status,
    DEFAULT_CONNECT_TIMEOUT, DEFAULT_TTL, HOST_ENV, MIN_TTL,
};
pub use url::{BudgetUrl, UrlError, MAX_NAME_LEN};

#[cfg(feature = "etcd")]
pub use etcd::{status, Cancel, ClusterSlot, EtcdBudget, LeaseView};

/// True when this build of the crate can talk to etcd (its `etcd` feature is on).
pub const ETCD_SUPPORT: bool = cfg!(feature = "etcd");
